/**
 * Change detection between a scan and its baseline. Pure: the shell loads the baseline
 * snapshots, the current state and the scan's presence decisions (core/presence.ts), and stores
 * what this returns. Ports are compared with the baseline; whether a device was added or removed
 * is presence's decision (a device is removed only after presence.offline_after_scans missed
 * scans, and added again only once it was removed), reported here in words.
 *
 * Severity rules (documented in docs/scanning.md):
 * - device_added: medium for a device not marked trusted; low when trusted. Raised to the worst
 *   risk severity of its open ports when that is higher.
 * - device_removed: low (info for a trusted device).
 * - port_opened: the severity of the risk rule the port matches (a risky port opening is as
 *   serious as the risk itself), else low.
 * - port_closed: info.
 * Ports are compared only where this scan examined them on the device (its port list, which
 * scanning.port_range, scanning.top_ports and the profile decide), against their last known state
 * (CONTRACT §14): the baseline snapshot holds every port the device was known to have then, also
 * those the baseline scan did not examine itself (a narrower scan keeps what it did not examine),
 * and its coverage says which ports' state was known at all. So a port outside this scan's list is
 * never reported, one found open is reported opened only if it was known closed (examined before),
 * and one known open that this scan found closed is reported closed, once.
 * - service_changed: medium when different software now answers (service or product changed),
 *   low when only the version changed.
 */

import { worse, type Severity } from './severity.js';
import { isOpenPort } from './model.js';
import { covers, type PortCoverage } from './coverage.js';
/** What a change can be: the five kinds a scan reports against its baseline. */
export const CHANGE_TYPES = ['device_added', 'device_removed', 'port_opened', 'port_closed', 'service_changed'] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

export interface PortState {
  port: number;
  protocol: string;
  state: string;
  service: string | null;
  product: string | null;
  version: string | null;
}

export interface DeviceState {
  deviceId: number;
  ip: string;
  mac: string | null;
  label?: string | null;
  vendor?: string | null;
  trusted: boolean;
  ports: PortState[];
  /**
   * For a baseline state: the ports whose state it knows (the device's coverage when the snapshot
   * was taken; for a snapshot older than that, its scan's port list). A port outside it had never
   * been examined, so finding it open now is no opening. Null or absent when unknown (a snapshot
   * recorded before port lists were kept): every port counts as known.
   */
  coverage?: PortCoverage | null;
}

export interface ChangeDraft {
  change_type: ChangeType;
  severity: Severity;
  device_id: number;
  device_ip: string;
  device_mac: string | null;
  port: number | null;
  protocol: string | null;
  old_value: string | null;
  new_value: string | null;
  description: string;
}

/** A device presence took offline in this scan, with how many consecutive scans it has now missed. */
export interface RemovedDevice extends DeviceState {
  missedScans: number;
}

export interface DetectOptions {
  /**
   * Devices as the baseline scan saw them; null when there is no baseline (first scan of the
   * target). The shell may add, for a device the baseline lacks but that was not gone (it missed
   * fewer scans than the threshold, or moved in from another target), its latest earlier snapshot:
   * its ports are then compared with that.
   */
  baseline: DeviceState[] | null;
  /** Devices this scan saw, with their ports after the scan. */
  current: DeviceState[];
  /** False for discovery-only (quick) scans: ports were not scanned, so no port changes are reported. */
  portsScanned: boolean;
  /**
   * The ports this scan examined on a device (its port list, and any port it found open outside
   * it); null when it examined none there. Only these are compared.
   */
  examinedOn: (deviceId: number) => PortCoverage | null;
  /** Severity of the risk rule an open port matches, or null when it matches none. */
  portRisk: (port: PortState) => Exclude<Severity, 'info'> | null;
  /**
   * What presence decided for this scan (core/presence.ts): the seen devices that arrived (new, or
   * back after being removed) and the devices it took offline, as they are now.
   */
  presence: { arrived: readonly number[]; removed: readonly RemovedDevice[] };
}

export function detectChanges(options: DetectOptions): ChangeDraft[] {
  const { baseline, current } = options;
  if (!baseline) return [];
  const before = new Map(baseline.map((d) => [d.deviceId, d]));
  const arrived = new Set(options.presence.arrived);
  const changes: ChangeDraft[] = [];

  for (const device of current) {
    if (arrived.has(device.deviceId)) {
      changes.push(deviceAdded(device, options));
      continue;
    }
    const previous = before.get(device.deviceId);
    // Most devices answer exactly as before: nothing to compare port by port (nor to allocate).
    if (previous && options.portsScanned && !samePorts(previous.ports, device.ports)) changes.push(...portChanges(previous, device, options));
  }
  for (const device of options.presence.removed) changes.push(deviceRemoved(device));
  return changes;
}

function deviceAdded(device: DeviceState, options: DetectOptions): ChangeDraft {
  const open = openPorts(device);
  let severity: Severity = device.trusted ? 'low' : 'medium';
  for (const p of open) {
    const risk = options.portRisk(p);
    if (risk) severity = worse(severity, risk);
  }
  const ports = open.length ? ` with open ports ${open.map((p) => `${p.port}/${p.protocol}`).join(', ')}` : '';
  return {
    ...who(device),
    change_type: 'device_added',
    severity,
    port: null,
    protocol: null,
    old_value: null,
    new_value: device.ip,
    description: `New device ${describeDevice(device)} appeared${ports}`,
  };
}

function deviceRemoved(device: RemovedDevice): ChangeDraft {
  const missed = device.missedScans > 1 ? `in the last ${device.missedScans} scans` : 'in this scan';
  return {
    ...who(device),
    change_type: 'device_removed',
    severity: device.trusted ? 'info' : 'low',
    port: null,
    protocol: null,
    old_value: device.ip,
    new_value: null,
    description: `Device ${describeDevice(device)} was not found ${missed}`,
  };
}

function portChanges(previous: DeviceState, device: DeviceState, options: DetectOptions): ChangeDraft[] {
  const out: ChangeDraft[] = [];
  const was = new Map(openPorts(previous).map((p) => [key(p), p]));
  const now = new Map(openPorts(device).map((p) => [key(p), p]));
  const name = describeDevice(device);
  // Only the ports this scan examined here, against their last known state (see the top of this file).
  const examined = options.examinedOn(device.deviceId);
  if (!examined) return out;
  const examinedNow = (p: PortState) => covers(examined, p.port, p.protocol);
  const knownBefore = (p: PortState) => !previous.coverage || covers(previous.coverage, p.port, p.protocol);

  for (const [k, port] of now) {
    if (!examinedNow(port)) continue;
    const old = was.get(k);
    if (!old) {
      // Found open on a port never examined before: not an opening anyone could have seen.
      if (!knownBefore(port)) continue;
      const risk = options.portRisk(port);
      out.push({
        ...who(device),
        change_type: 'port_opened',
        severity: risk ?? 'low',
        port: port.port,
        protocol: port.protocol,
        old_value: null,
        new_value: describeService(port),
        description: `Port ${port.port}/${port.protocol} (${describeService(port)}) opened on ${name}${risk ? `; it is a ${risk}-risk service` : ''}`,
      });
      continue;
    }
    // The same fields describe the same way: build the texts only when something differs.
    if (old.service === port.service && old.product === port.product && old.version === port.version) continue;
    const oldText = describeService(old);
    const newText = describeService(port);
    if (oldText !== newText) {
      const differentSoftware = (old.service ?? '') !== (port.service ?? '') || (old.product ?? '') !== (port.product ?? '');
      out.push({
        ...who(device),
        change_type: 'service_changed',
        severity: differentSoftware ? 'medium' : 'low',
        port: port.port,
        protocol: port.protocol,
        old_value: oldText,
        new_value: newText,
        description: `Service on port ${port.port}/${port.protocol} of ${name} changed from ${oldText} to ${newText}`,
      });
    }
  }
  for (const [k, port] of was) {
    if (now.has(k) || !examinedNow(port)) continue;
    out.push({
      ...who(device),
      change_type: 'port_closed',
      severity: 'info',
      port: port.port,
      protocol: port.protocol,
      old_value: describeService(port),
      new_value: null,
      description: `Port ${port.port}/${port.protocol} (${describeService(port)}) is no longer open on ${name}`,
    });
  }
  return out;
}

/**
 * Whether two port lists are the same, port by port in the same order, in every field portChanges
 * reads: then it would report nothing (the same open ports with the same descriptions).
 */
function samePorts(a: readonly PortState[], b: readonly PortState[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (
      x.port !== y.port ||
      x.protocol !== y.protocol ||
      x.state !== y.state ||
      x.service !== y.service ||
      x.product !== y.product ||
      x.version !== y.version
    ) {
      return false;
    }
  }
  return true;
}

function openPorts(device: DeviceState): PortState[] {
  return device.ports.filter(isOpenPort);
}

function key(p: PortState): string {
  return `${p.protocol}/${p.port}`;
}

function who(device: DeviceState) {
  return { device_id: device.deviceId, device_ip: device.ip, device_mac: device.mac };
}

/** `10.0.0.5 "NAS" (Synology, 00:11:32:AA:BB:CC)` with whatever is known. */
export function describeDevice(device: Pick<DeviceState, 'ip' | 'mac' | 'label' | 'vendor'>): string {
  const extra = [device.vendor, device.mac].filter(Boolean).join(', ');
  return `${device.ip}${device.label ? ` "${device.label}"` : ''}${extra ? ` (${extra})` : ''}`;
}

/** `ssh OpenSSH 8.9p1` with whatever is known; `unknown service` when nothing is. */
export function describeService(p: Pick<PortState, 'service' | 'product' | 'version'>): string {
  const text = [p.service, p.product, p.version].filter(Boolean).join(' ');
  return text || 'unknown service';
}
