/** IPv4 address, CIDR and port-list parsing. Pure functions: no I/O. */
import ipaddr from 'ipaddr.js';
import { PORTS } from './limits.js';

export interface Ipv4Network {
  /** Network address in dotted form, host bits cleared. */
  network: string;
  prefix: number;
  /** Number of addresses in the block (2^(32-prefix)). */
  size: number;
  /** Canonical CIDR string, e.g. `192.168.1.0/24`. */
  cidr: string;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

const DOTTED_QUAD = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** Strict dotted-quad IPv4 check: no octal, hex, short or padded forms. */
export function isIpv4Address(text: string): boolean {
  const m = text.match(DOTTED_QUAD);
  if (!m) return false;
  return m.slice(1).every((octet) => (octet === '0' || !octet.startsWith('0')) && Number(octet) <= 255);
}

export function ipv4ToInt(address: string): number {
  return ipaddr.IPv4.parse(address)
    .toByteArray()
    .reduce((acc, byte) => acc * 256 + byte, 0);
}

export function intToIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

/**
 * Parses `a.b.c.d/n` or a single address (taken as /32). Host bits are cleared, so
 * `192.168.1.7/24` becomes `192.168.1.0/24`.
 */
export function parseIpv4Network(text: string): Parsed<Ipv4Network> {
  const error = 'must be an IPv4 CIDR network such as 192.168.1.0/24, or a single IPv4 address';
  if (typeof text !== 'string') return { ok: false, error };
  const [address, prefixText, ...rest] = text.trim().split('/');
  if (rest.length > 0 || !isIpv4Address(address)) return { ok: false, error };
  let prefix = 32;
  if (prefixText !== undefined) {
    if (!/^\d{1,2}$/.test(prefixText) || Number(prefixText) > 32) return { ok: false, error };
    prefix = Number(prefixText);
  }
  const size = 2 ** (32 - prefix);
  const base = Math.floor(ipv4ToInt(address) / size) * size;
  const network = intToIpv4(base);
  return { ok: true, value: { network, prefix, size, cidr: `${network}/${prefix}` } };
}

/** True when every address of `inner` lies inside `outer`. */
export function networkWithin(inner: Ipv4Network, outer: Ipv4Network): boolean {
  return inner.prefix >= outer.prefix && networkContains(outer, inner.network);
}

export function networkContains(net: Ipv4Network, address: string): boolean {
  const base = ipv4ToInt(net.network);
  const value = ipv4ToInt(address);
  return value >= base && value < base + net.size;
}

export interface PortRange {
  low: number;
  high: number;
}

/**
 * Parses a port specification: `1-1000`, `22,80,443` or a mix such as `1-1024,8080,9000-9100`.
 * Overlapping parts are merged; the result is sorted.
 */
export function parsePortRanges(text: string): Parsed<PortRange[]> {
  const error = `must be <low>-<high> with ${PORTS.min} ≤ low ≤ high ≤ ${PORTS.max} (for example 1-1000), or a comma list of ports and ranges such as 22,80,8000-8100`;
  if (typeof text !== 'string' || text.trim() === '') return { ok: false, error };
  const ranges: PortRange[] = [];
  for (const part of text.split(',')) {
    const m = part.match(/^\s*(\d{1,5})\s*(?:-\s*(\d{1,5})\s*)?$/);
    if (!m) return { ok: false, error };
    const low = Number(m[1]);
    const high = m[2] === undefined ? low : Number(m[2]);
    if (low < PORTS.min || high > PORTS.max || low > high) return { ok: false, error };
    ranges.push({ low, high });
  }
  ranges.sort((a, b) => a.low - b.low);
  const merged: PortRange[] = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last && r.low <= last.high + 1) last.high = Math.max(last.high, r.high);
    else merged.push({ ...r });
  }
  return { ok: true, value: merged };
}

export function countPorts(ranges: PortRange[]): number {
  return ranges.reduce((n, r) => n + r.high - r.low + 1, 0);
}

/** Canonical text form of parsed port ranges, as nmap's `-p` accepts it. */
export function formatPortRanges(ranges: PortRange[]): string {
  return ranges.map((r) => (r.low === r.high ? String(r.low) : `${r.low}-${r.high}`)).join(',');
}

/** A comma-separated list of IPv4 CIDR blocks (or addresses), in canonical form. */
export function parseCidrList(text: string): Parsed<string[]> {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) return { ok: false, error: 'must list at least one IPv4 CIDR block, such as 192.168.1.0/24' };
  const out: string[] = [];
  for (const entry of entries) {
    const parsed = parseIpv4Network(entry);
    if (!parsed.ok) return { ok: false, error: `'${entry}' ${parsed.error}` };
    out.push(parsed.value.cidr);
  }
  return { ok: true, value: out };
}
