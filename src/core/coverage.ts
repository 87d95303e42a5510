/**
 * What a scan examined and what the inventory knows because of it (CONTRACT §14). Pure.
 *
 * A port list is written nmap-style: `1-1000,1883,8080` for TCP; UDP ports follow a `udp:` prefix,
 * which (as nmap's `U:`) applies to the items after it until another prefix: `1-1000,udp:53,161`
 * is TCP 1–1000 and UDP 53 and 161, `udp:53,161` UDP only. `tcp:` may be written but never has to.
 *
 * A device's coverage is a list of segments, one per scan whose examination of some of its ports
 * still stands: each holds the ports that scan was the last to examine on the device, and when.
 * A later scan takes the ports it examines out of the older segments (a segment left empty goes),
 * so every port is in at most one segment, and the union of the segments is every port whose
 * state is known (open: a port row; closed: no row).
 */
import { countPorts, formatPortRanges, parsePortRanges, type Parsed, type PortRange } from './net.js';

export const PORT_PROTOCOLS = ['tcp', 'udp'] as const;
export type PortProtocol = (typeof PORT_PROTOCOLS)[number];

/** Ports by protocol, each a sorted list of merged ranges. */
export type PortCoverage = Record<PortProtocol, PortRange[]>;

/**
 * A port the last STALE_AFTER_SCANS port scans that reached its device did not examine is shown as
 * stale: still listed with its last known state, and when and by which scan that was verified.
 */
export const STALE_AFTER_SCANS = 1;

export function emptyCoverage(): PortCoverage {
  return { tcp: [], udp: [] };
}

export function isEmptyCoverage(c: PortCoverage): boolean {
  return c.tcp.length === 0 && c.udp.length === 0;
}

/** TCP ranges only (what a scan of this version examines), as a coverage. */
export function tcpCoverage(ranges: readonly PortRange[]): PortCoverage {
  return { tcp: ranges.map((r) => ({ ...r })), udp: [] };
}

/** `1-1000,8080,udp:53,161`: TCP first without a prefix, then `udp:` and the UDP ports; '' when empty. */
export function formatCoverage(c: PortCoverage): string {
  const parts: string[] = [];
  if (c.tcp.length > 0) parts.push(formatPortRanges(c.tcp));
  if (c.udp.length > 0) parts.push(`udp:${formatPortRanges(c.udp)}`);
  return parts.join(',');
}

/**
 * Reads a port list (see the top of this file); nmap's own `T:`/`U:` prefixes are read as
 * `tcp:`/`udp:`. An empty text is an empty coverage.
 */
export function parseCoverage(text: string): Parsed<PortCoverage> {
  const lists: Record<PortProtocol, string[]> = { tcp: [], udp: [] };
  let protocol: PortProtocol = 'tcp';
  for (const raw of text.split(',')) {
    let item = raw.trim();
    if (item === '') continue;
    const prefix = /^(tcp|udp|t|u)\s*:\s*/i.exec(item);
    if (prefix) {
      protocol = prefix[1].toLowerCase().startsWith('u') ? 'udp' : 'tcp';
      item = item.slice(prefix[0].length);
      if (item === '') continue;
    }
    lists[protocol].push(item);
  }
  const out = emptyCoverage();
  for (const p of PORT_PROTOCOLS) {
    if (lists[p].length === 0) continue;
    const parsed = parsePortRanges(lists[p].join(','));
    if (!parsed.ok) return { ok: false, error: `${p === 'udp' ? 'UDP ports ' : ''}${parsed.error}; UDP ports follow "udp:" (1-1000,udp:53,161)` };
    out[p] = parsed.value;
  }
  return { ok: true, value: out };
}

/** A stored port list read back; null for none (NULL, or text that does not read as one). */
export function storedCoverage(text: string | null | undefined): PortCoverage | null {
  if (text === null || text === undefined) return null;
  const parsed = parseCoverage(text);
  return parsed.ok ? parsed.value : null;
}

function protocolOf(protocol: string): PortProtocol | null {
  const p = protocol.trim().toLowerCase();
  return p === 'tcp' || p === 'udp' ? p : null;
}

/** Whether `port`/`protocol` lies in the coverage (an unknown protocol never does). */
export function covers(c: PortCoverage, port: number, protocol: string): boolean {
  const p = protocolOf(protocol);
  if (!p) return false;
  // Binary search: a top_ports list is hundreds of ranges.
  const ranges = c[p];
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const r = ranges[mid];
    if (port < r.low) hi = mid - 1;
    else if (port > r.high) lo = mid + 1;
    else return true;
  }
  return false;
}

function mergeRanges(parts: PortRange[]): PortRange[] {
  parts.sort((a, b) => a.low - b.low || a.high - b.high);
  const merged: PortRange[] = [];
  for (const r of parts) {
    const last = merged[merged.length - 1];
    if (last && r.low <= last.high + 1) last.high = Math.max(last.high, r.high);
    else merged.push({ ...r });
  }
  return merged;
}

/** Ranges of `a` not in `b` (both sorted and merged). */
function subtractRanges(a: readonly PortRange[], b: readonly PortRange[]): PortRange[] {
  const out: PortRange[] = [];
  let j = 0;
  for (const r of a) {
    let low = r.low;
    while (j < b.length && b[j].high < low) j++;
    let k = j;
    while (k < b.length && b[k].low <= r.high) {
      if (b[k].low > low) out.push({ low, high: b[k].low - 1 });
      low = Math.max(low, b[k].high + 1);
      k++;
    }
    if (low <= r.high) out.push({ low, high: r.high });
  }
  return out;
}

export function unionCoverage(...all: PortCoverage[]): PortCoverage {
  const out = emptyCoverage();
  for (const p of PORT_PROTOCOLS) out[p] = mergeRanges(all.flatMap((c) => c[p].map((r) => ({ ...r }))));
  return out;
}

export function subtractCoverage(a: PortCoverage, b: PortCoverage): PortCoverage {
  return { tcp: subtractRanges(a.tcp, b.tcp), udp: subtractRanges(a.udp, b.udp) };
}

/** Whether every port of `inner` lies in `outer`. */
export function coverageWithin(inner: PortCoverage, outer: PortCoverage): boolean {
  return isEmptyCoverage(subtractCoverage(inner, outer));
}

export function countCoverage(c: PortCoverage): number {
  return countPorts(c.tcp) + countPorts(c.udp);
}

/** One scan's standing examination of a device's ports (as stored in devices.port_coverage). */
export interface CoverageSegment {
  scan_id: number;
  /** When the scan examined them (its results were recorded). */
  at: string;
  /** The ports, as formatCoverage writes them. */
  ports: string;
}

/** A device's stored coverage read back (an unreadable value reads as none: nothing is known). */
export function parseSegments(text: string | null | undefined): CoverageSegment[] {
  if (!text) return [];
  try {
    const value = JSON.parse(text) as unknown;
    if (!Array.isArray(value)) return [];
    return value.filter((s: unknown): s is CoverageSegment => {
      if (typeof s !== 'object' || s === null) return false;
      const seg = s as Partial<Record<keyof CoverageSegment, unknown>>;
      return Number.isInteger(seg.scan_id) && typeof seg.at === 'string' && typeof seg.ports === 'string';
    });
  } catch {
    return [];
  }
}

/** Every port the segments hold: the ports whose state the device's record knows. */
export function segmentsCoverage(segments: readonly CoverageSegment[]): PortCoverage {
  return unionCoverage(...segments.map((s) => storedCoverage(s.ports) ?? emptyCoverage()));
}

/**
 * The segments after scan `scanId` examined `examined` at `at`: the older segments lose those
 * ports (a segment left empty goes), the scan's own segment is added (replacing one it already had,
 * as when an agent's upload is retried). Newest first.
 */
export function examineSegments(segments: readonly CoverageSegment[], scanId: number, at: string, examined: PortCoverage): CoverageSegment[] {
  const out: CoverageSegment[] = [];
  for (const s of segments) {
    if (s.scan_id === scanId) continue;
    const rest = subtractCoverage(storedCoverage(s.ports) ?? emptyCoverage(), examined);
    if (!isEmptyCoverage(rest)) out.push({ ...s, ports: formatCoverage(rest) });
  }
  if (!isEmptyCoverage(examined)) out.push({ scan_id: scanId, at, ports: formatCoverage(examined) });
  return out.sort((a, b) => b.at.localeCompare(a.at) || b.scan_id - a.scan_id);
}

/** Ranges shown in full in a sentence; a longer list is summarised ("… and 5 more"). */
const ENTRIES_SHOWN = 4;

/** "TCP ports 1–1000, 8080", "TCP port 22 and UDP ports 53, 161", "all TCP ports"; "no port" when empty. */
export function describeCoverage(c: PortCoverage): string {
  const parts: string[] = [];
  for (const p of PORT_PROTOCOLS) {
    const ranges = c[p];
    if (ranges.length === 0) continue;
    const name = p.toUpperCase();
    if (ranges.length === 1 && ranges[0].low === 1 && ranges[0].high === 65535) {
      parts.push(`all ${name} ports`);
      continue;
    }
    const shown = ranges.slice(0, ENTRIES_SHOWN).map((r) => (r.low === r.high ? String(r.low) : `${r.low}–${r.high}`));
    const more = ranges.length - shown.length;
    const single = ranges.length === 1 && ranges[0].low === ranges[0].high;
    parts.push(`${name} ${single ? 'port' : 'ports'} ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`);
  }
  return parts.length > 0 ? parts.join(' and ') : 'no port';
}

/** `2026-11-26 14:30 UTC` from an ISO time (as given when it does not read as one). */
export function describeTime(iso: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : `${new Date(t).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** "TCP ports 1–1000 (scan #3, 2026-11-26 14:30 UTC)" for each segment, newest first, joined with "; ". */
export function describeSegments(segments: readonly CoverageSegment[]): string {
  return segments
    .map((s) => `${describeCoverage(storedCoverage(s.ports) ?? emptyCoverage())} (scan #${s.scan_id}, ${describeTime(s.at)})`)
    .join('; ');
}

/**
 * What "no finding" covers, in words, from the scans that examined the device (never from today's
 * settings): "No risky services or known vulnerabilities found in TCP ports 1–1000 (scan #3,
 * 2026-11-26 14:30 UTC)".
 */
export function noFindingStatement(segments: readonly CoverageSegment[]): string {
  if (segments.length === 0) return 'No risky services or known vulnerabilities found; no port of this device has been examined yet (discovery only)';
  return `No risky services or known vulnerabilities found in ${describeSegments(segments)}`;
}
