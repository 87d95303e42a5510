/**
 * The kernel's IPv4 neighbour (ARP) table, /proc/net/arp: which addresses on the local segments
 * answered ARP, and with which MAC. Readable without privileges; absent outside Linux.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { normalizeMac } from '../../core/mac.js';

export const PROC_NET_ARP = '/proc/net/arp';

/** ATF_COM: the entry is complete (the address resolved to a MAC). */
const ATF_COM = 0x2;

export interface NeighbourEntry {
  ip: string;
  mac: string;
  device: string;
}

/**
 * Parses /proc/net/arp:
 * ```
 * IP address       HW type     Flags       HW address            Mask     Device
 * 192.168.1.1      0x1         0x2         aa:bb:cc:dd:ee:ff     *        eth0
 * ```
 * Only complete entries (flag 0x2) with a usable MAC are kept; incomplete ones (an address that
 * is being resolved or failed to resolve) are not.
 */
export function parseProcNetArp(text: string): Map<string, NeighbourEntry> {
  const table = new Map<string, NeighbourEntry>();
  for (const line of text.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 6) continue;
    const [ip, , flagsText, hw, , device] = fields;
    const flags = Number.parseInt(flagsText, 16);
    if (!Number.isFinite(flags) || (flags & ATF_COM) === 0) continue;
    const mac = normalizeMac(hw);
    if (!mac || !/^\d{1,3}(?:\.\d{1,3}){3}$/.test(ip)) continue;
    table.set(ip, { ip, mac, device });
  }
  return table;
}

/** The complete entries of the neighbour table; empty when it cannot be read. */
export async function readNeighbourTable(path: string = PROC_NET_ARP): Promise<Map<string, NeighbourEntry>> {
  try {
    return parseProcNetArp(await readFile(path, 'utf8'));
  } catch {
    return new Map();
  }
}

/**
 * What /proc/net/arp does not show: the kernel's state of each entry and when it last confirmed it
 * (an ARP reply, or forward progress of a connection). Read through iproute2 (`ip -j -s -4 neigh
 * show`) when it is installed; without it discovery falls back to a time-based rule (discovery.ts).
 */
export interface NeighbourStatus {
  ip: string;
  /** NUD states as iproute2 names them: REACHABLE, STALE, DELAY, PROBE, FAILED, INCOMPLETE, PERMANENT, NOARP. */
  states: string[];
  /** Whole seconds since the kernel last confirmed the entry; null when not reported. */
  confirmedSecondsAgo: number | null;
}

export type NeighbourStatusReader = () => Promise<Map<string, NeighbourStatus> | null>;

/** Parses `ip -j -s -4 neigh show`: `[{"dst":"10.0.0.5","dev":"eth0","lladdr":"…","used":3,"confirmed":1,"updated":1,"state":["REACHABLE"]}]`. */
export function parseIpNeighJson(text: string): Map<string, NeighbourStatus> {
  const table = new Map<string, NeighbourStatus>();
  let rows: unknown;
  try {
    rows = JSON.parse(text);
  } catch {
    return table;
  }
  if (!Array.isArray(rows)) return table;
  for (const row of rows as Record<string, unknown>[]) {
    const ip = row?.dst;
    if (typeof ip !== 'string' || !/^\d{1,3}(?:\.\d{1,3}){3}$/.test(ip) || table.has(ip)) continue;
    const states = Array.isArray(row.state) ? row.state.filter((s): s is string => typeof s === 'string') : [];
    const confirmed = typeof row.confirmed === 'number' && Number.isFinite(row.confirmed) && row.confirmed >= 0 ? row.confirmed : null;
    table.set(ip, { ip, states, confirmedSecondsAgo: confirmed });
  }
  return table;
}

/** The kernel's neighbour states through iproute2; null when `ip` is missing or fails. */
export function readNeighbourStatus(binary = 'ip'): Promise<Map<string, NeighbourStatus> | null> {
  return new Promise((resolve) => {
    execFile(binary, ['-j', '-s', '-4', 'neigh', 'show'], { timeout: 2000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => {
      resolve(err ? null : parseIpNeighJson(String(stdout)));
    });
  });
}
