// Lists typed into a text box (addresses, networks), and the server's 400 details about them.
import { ApiError } from './api';

/** One entry per line or comma, blanks dropped. */
export function parseList(text: string): string[] {
  return text
    .split(/[\n,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

export function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((entry, i) => entry === b[i]);
}

/**
 * "network.exclude.2: ..." names a position in a list; add the entry itself so it can be found
 * in a long list. `lists` maps each list's path to what was sent.
 */
export function withListEntry(error: unknown, lists: Record<string, string[] | undefined>): unknown {
  if (!(error instanceof ApiError)) return error;
  const position = error.detail.match(/^([a-z_.]+)\.(\d+):/);
  const entry = position ? lists[position[1]]?.[Number(position[2])] : undefined;
  return entry === undefined ? error : new ApiError(error.status, `${error.detail} (entry “${entry}”)`, error.body);
}

/** The server's words for an entry that is not an IPv4 network (core/net.ts parseIpv4Network). */
export const NOT_A_NETWORK = 'must be an IPv4 CIDR network such as 192.168.1.0/24, or a single IPv4 address';

const DOTTED_QUAD = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/**
 * Whether `text` is `a.b.c.d/n` or one address, by the server's rules: strict dotted quads (no
 * leading zeros), a prefix of 0–32. Host bits are allowed (the server clears them).
 */
export function isIpv4Network(text: string): boolean {
  const [address, prefix, ...rest] = text.trim().split('/');
  if (rest.length > 0) return false;
  const m = address.match(DOTTED_QUAD);
  if (!m || !m.slice(1).every((octet) => (octet === '0' || !octet.startsWith('0')) && Number(octet) <= 255)) return false;
  return prefix === undefined || (/^\d{1,2}$/.test(prefix) && Number(prefix) <= 32);
}

/** The first and last address of `a.b.c.d/n` (or one address) as numbers, or null when it is not one. */
export function networkRange(text: string): [number, number] | null {
  if (!isIpv4Network(text)) return null;
  const [address, prefix] = text.trim().split('/');
  const value = address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
  const size = 2 ** (32 - (prefix === undefined ? 32 : Number(prefix)));
  const first = Math.floor(value / size) * size;
  return [first, first + size - 1];
}

/** Whether two networks (or addresses) share an address; false when either is not one. */
export function networksOverlap(a: string, b: string): boolean {
  const x = networkRange(a);
  const y = networkRange(b);
  return x !== null && y !== null && x[0] <= y[1] && y[0] <= x[1];
}
