/**
 * Comparing any two completed scans (CONTRACT §16, §18). Pure: the store loads each scan's
 * snapshots (how every device it saw looked after it) and what each scan itself examined on each
 * device; this matches the devices and says what differs.
 *
 * - Devices are matched by identity (the device id: its MAC when one was ever seen, else its
 *   address), never by IP: a device seen in both at different addresses is `moved`, not added
 *   plus removed.
 * - A port counts as opened or closed only where both scans examined it on that device: a
 *   snapshot also carries the last known state of ports its scan did not examine, and those say
 *   nothing about either scan. Services changed likewise: open in both, examined by both.
 * - A device only one scan saw is `added` (or `removed`) only when the other scan's target
 *   holds its address; one outside the other scan's target was never looked for there and is left
 *   out. The ports of an added or removed device do not count in the totals.
 */
import { describeService, type PortState } from './changes.js';
import { covers, describeTime, type PortCoverage } from './coverage.js';
import { ipv4ToInt, isIpv4Address } from './net.js';
import { isOpenPort } from './model.js';

export const COMPARE_STATUSES = ['added', 'removed', 'moved', 'changed', 'unchanged'] as const;
export type CompareStatus = (typeof COMPARE_STATUSES)[number];

/** One scan as the comparison needs it. */
export interface ComparedScan {
  id: number;
  status: string;
  subnet: string;
  profile: string;
  completedAt: string | null;
  /** The scanned IPv4 range as unsigned integers. */
  low: number;
  high: number;
  /** The record's ports_examined (null: discovery only, or unknown). */
  portsExamined: string | null;
}

/** A device as one scan saw it (its snapshot). */
export interface ComparedDevice {
  deviceId: number;
  ip: string;
  mac: string | null;
  hostname: string | null;
  /** The device's label now (a person's name for it). */
  label: string | null;
  /** Its ports after the scan: those the scan examined, and the last known state of the others. */
  ports: PortState[];
  riskLevel: string;
  riskScore: number;
  /** The ports this scan itself examined on the device; null when unknown (then every port counts as examined). */
  examined: PortCoverage | null;
}

export interface PortRef {
  port: number;
  protocol: string;
}

export interface ServiceChange extends PortRef {
  before: string;
  after: string;
}

export interface Risk {
  level: string;
  score: number;
}

export interface DeviceComparison {
  device_id: number;
  name: string | null;
  status: CompareStatus;
  ip_before: string | null;
  ip_after: string | null;
  mac_address: string | null;
  ports_opened: PortRef[];
  ports_closed: PortRef[];
  services_changed: ServiceChange[];
  risk_before: Risk | null;
  risk_after: Risk | null;
}

export interface CompareSummary {
  devices_added: number;
  devices_removed: number;
  devices_moved: number;
  devices_changed: number;
  ports_opened: number;
  ports_closed: number;
  services_changed: number;
  risk_changed: number;
}

export interface Comparison {
  summary: CompareSummary;
  /** Every matched device, `unchanged` ones included, in status order then by address. */
  devices: DeviceComparison[];
}

/**
 * Why two scans cannot be compared, or null when they can: the kind decides the answer (400, 409)
 * and the message says what to do.
 */
export function comparabilityProblem(current: ComparedScan, previous: ComparedScan): { kind: 'invalid' | 'conflict'; message: string } | null {
  if (current.id === previous.id) {
    return { kind: 'invalid', message: `previous_id: a scan cannot be compared with itself (scan ${current.id}); name two different scans` };
  }
  for (const [name, scan] of [
    ['current_id', current],
    ['previous_id', previous],
  ] as const) {
    if (scan.status !== 'completed') {
      return {
        kind: 'conflict',
        message: `${name}: scan ${scan.id} is ${scan.status}; only completed scans can be compared${scan.status === 'running' || scan.status === 'queued' ? ' (wait for it to end)' : ''}`,
      };
    }
  }
  if (current.high < previous.low || previous.high < current.low) {
    return {
      kind: 'invalid',
      message: `previous_id: scan ${previous.id} (${previous.subnet}) and scan ${current.id} (${current.subnet}) examined disjoint targets; compare scans of overlapping networks`,
    };
  }
  return null;
}

function within(scan: Pick<ComparedScan, 'low' | 'high'>, ip: string): boolean {
  if (!isIpv4Address(ip)) return false;
  const n = ipv4ToInt(ip);
  return n >= scan.low && n <= scan.high;
}

function portKey(p: PortRef): string {
  return `${p.protocol}/${p.port}`;
}

function byPort(a: PortRef, b: PortRef): number {
  return a.protocol.localeCompare(b.protocol) || a.port - b.port;
}

function examinedBy(device: ComparedDevice, p: PortRef): boolean {
  return device.examined === null || covers(device.examined, p.port, p.protocol);
}

function openPorts(device: ComparedDevice): Map<string, PortState> {
  return new Map(device.ports.filter(isOpenPort).map((p) => [portKey(p), p]));
}

function nameOf(before: ComparedDevice | undefined, after: ComparedDevice | undefined): string | null {
  return after?.label || before?.label || after?.hostname || before?.hostname || null;
}

function riskOf(device: ComparedDevice | undefined): Risk | null {
  return device ? { level: device.riskLevel, score: device.riskScore } : null;
}

function ipSort(ip: string | null): number {
  return ip && isIpv4Address(ip) ? ipv4ToInt(ip) : Number.MAX_SAFE_INTEGER;
}

/** Compares the devices scan `current` saw with those scan `previous` saw (see the top of this file). */
export function compareScans(
  current: { scan: ComparedScan; devices: readonly ComparedDevice[] },
  previous: { scan: ComparedScan; devices: readonly ComparedDevice[] },
): Comparison {
  const before = new Map(previous.devices.map((d) => [d.deviceId, d]));
  const after = new Map(current.devices.map((d) => [d.deviceId, d]));
  const out: DeviceComparison[] = [];
  const summary: CompareSummary = {
    devices_added: 0,
    devices_removed: 0,
    devices_moved: 0,
    devices_changed: 0,
    ports_opened: 0,
    ports_closed: 0,
    services_changed: 0,
    risk_changed: 0,
  };

  for (const now of current.devices) {
    const was = before.get(now.deviceId);
    if (!was) {
      if (!within(previous.scan, now.ip)) continue;
      summary.devices_added++;
      out.push(entry('added', undefined, now));
      continue;
    }
    const item = entry('unchanged', was, now);
    const opened = openPorts(now);
    const closedNow = openPorts(was);
    const both = (p: PortRef) => examinedBy(was, p) && examinedBy(now, p);
    for (const [k, p] of opened) {
      const old = closedNow.get(k);
      if (!both(p)) continue;
      if (!old) item.ports_opened.push({ port: p.port, protocol: p.protocol });
      else {
        const a = describeService(old);
        const b = describeService(p);
        if (a !== b) item.services_changed.push({ port: p.port, protocol: p.protocol, before: a, after: b });
      }
    }
    for (const [k, p] of closedNow) {
      if (!opened.has(k) && both(p)) item.ports_closed.push({ port: p.port, protocol: p.protocol });
    }
    item.ports_opened.sort(byPort);
    item.ports_closed.sort(byPort);
    item.services_changed.sort(byPort);
    const riskChanged = was.riskLevel !== now.riskLevel || was.riskScore !== now.riskScore;
    if (riskChanged) summary.risk_changed++;
    summary.ports_opened += item.ports_opened.length;
    summary.ports_closed += item.ports_closed.length;
    summary.services_changed += item.services_changed.length;
    if (was.ip !== now.ip) {
      item.status = 'moved';
      summary.devices_moved++;
    } else if (riskChanged || item.ports_opened.length > 0 || item.ports_closed.length > 0 || item.services_changed.length > 0) {
      item.status = 'changed';
      summary.devices_changed++;
    }
    out.push(item);
  }
  for (const was of previous.devices) {
    if (after.has(was.deviceId) || !within(current.scan, was.ip)) continue;
    summary.devices_removed++;
    out.push(entry('removed', was, undefined));
  }

  const order = new Map(COMPARE_STATUSES.map((s, i) => [s, i]));
  out.sort(
    (a, b) =>
      order.get(a.status)! - order.get(b.status)! ||
      ipSort(a.ip_after ?? a.ip_before) - ipSort(b.ip_after ?? b.ip_before) ||
      a.device_id - b.device_id,
  );
  return { summary, devices: out };
}

function entry(status: CompareStatus, was: ComparedDevice | undefined, now: ComparedDevice | undefined): DeviceComparison {
  return {
    device_id: (now ?? was)!.deviceId,
    name: nameOf(was, now),
    status,
    ip_before: was?.ip ?? null,
    ip_after: now?.ip ?? null,
    mac_address: now?.mac ?? was?.mac ?? null,
    ports_opened: [],
    ports_closed: [],
    services_changed: [],
    risk_before: riskOf(was),
    risk_after: riskOf(now),
  };
}

/** The scan records' fields the text export names. */
export interface TextScan {
  scan_id: number;
  subnet: string;
  profile: string;
  completed_at: string | null;
  ports_examined: string | null;
}

/** `12 added, 3 removed, …`: the summary in one line. */
export function describeSummary(s: CompareSummary): string {
  return (
    `${s.devices_added} added, ${s.devices_removed} removed, ${s.devices_moved} moved, ${s.devices_changed} changed; ` +
    `${s.ports_opened} port(s) opened, ${s.ports_closed} closed, ${s.services_changed} service(s) changed; risk changed on ${s.risk_changed} device(s)`
  );
}

function scanLine(scan: TextScan): string {
  const when = scan.completed_at ? `completed ${describeTime(scan.completed_at)}` : 'not completed';
  return `Scan #${scan.scan_id} of ${scan.subnet} (${scan.profile}), ${when}; ports examined: ${scan.ports_examined ?? 'none (discovery only)'}`;
}

function hostLine(ip: string | null, d: DeviceComparison): string {
  const extra = [d.name, d.mac_address].filter(Boolean).join(', ');
  return `${ip ?? '?'}${extra ? ` (${extra})` : ''}:`;
}

function riskText(r: Risk | null): string {
  return r ? `${r.level} (${r.score})` : 'none';
}

/**
 * The comparison as text in the manner of nmap's `ndiff`: lines starting `-` are the previous
 * scan's, `+` the current one's, a space both. One block per device that differs (or every device
 * when `unchanged` ones are given), then the summary.
 */
export function formatCompareText(comparison: {
  current: TextScan;
  previous: TextScan;
  summary: CompareSummary;
  devices: readonly DeviceComparison[];
}): string {
  const lines: string[] = [`-${scanLine(comparison.previous)}`, `+${scanLine(comparison.current)}`, ''];
  for (const d of comparison.devices) {
    switch (d.status) {
      case 'added':
        lines.push(`+${hostLine(d.ip_after, d)}`, '+Host is up.');
        break;
      case 'removed':
        lines.push(`-${hostLine(d.ip_before, d)}`, '-Host is up.');
        break;
      case 'moved':
        lines.push(`-${hostLine(d.ip_before, d)}`, `+${hostLine(d.ip_after, d)}`);
        break;
      default:
        lines.push(` ${hostLine(d.ip_after, d)}`);
    }
    if (d.risk_before && d.risk_after && (d.risk_before.level !== d.risk_after.level || d.risk_before.score !== d.risk_after.score)) {
      lines.push(`-Risk: ${riskText(d.risk_before)}`, `+Risk: ${riskText(d.risk_after)}`);
    }
    const ports = [
      ...d.ports_closed.map((p) => ({ p, text: `-${p.port}/${p.protocol} open` })),
      ...d.services_changed.flatMap((s) => [
        { p: s, text: `-${s.port}/${s.protocol} open  ${s.before}` },
        { p: s, text: `+${s.port}/${s.protocol} open  ${s.after}` },
      ]),
      ...d.ports_opened.map((p) => ({ p, text: `+${p.port}/${p.protocol} open` })),
    ];
    if (ports.length > 0) {
      lines.push(' PORT STATE SERVICE');
      ports.sort((a, b) => byPort(a.p, b.p));
      for (const { text } of ports) lines.push(text);
    }
    lines.push('');
  }
  if (comparison.devices.length === 0) lines.push(' No differences.', '');
  lines.push(`Summary: ${describeSummary(comparison.summary)}`);
  return `${lines.join('\n')}\n`;
}
