/**
 * DHCP lease files as the three common servers write them, reduced to address, MAC and hostname.
 * Pure: src/names/lease-file.ts reads the file.
 *
 * - dnsmasq (`dnsmasq.leases`): one lease a line, `<expiry> <mac> <ip> <hostname|*> <client-id|*>`;
 *   IPv6 leases (after a `duid` line) are skipped.
 * - ISC dhcpd (`dhcpd.leases`): `lease <ip> { … }` blocks, appended as leases change, so the last
 *   block of an address is its current state; only `binding state active` (or a block without a
 *   binding state) counts. `hardware ethernet` gives the MAC, `client-hostname` the name.
 * - Kea (`kea-leases4.csv`, the memfile back end): CSV with a header row naming the columns
 *   (`address,hwaddr,client_id,valid_lifetime,expire,subnet_id,fqdn_fwd,fqdn_rev,hostname,state,…`);
 *   rows are appended, the last row of an address wins; only state 0 (default) counts. Kea escapes
 *   a comma inside a value as `&#x2c`.
 */
import { normalizeMac } from './mac.js';
import { isIpv4Address } from './net.js';
import { cleanHostname } from './name-sources.js';

export const LEASE_FILE_FORMATS = ['auto', 'dnsmasq', 'isc', 'kea'] as const;
export type LeaseFileFormat = (typeof LEASE_FILE_FORMATS)[number];

export interface Lease {
  ip: string;
  mac: string | null;
  hostname: string | null;
}

export interface ParsedLeases {
  format: Exclude<LeaseFileFormat, 'auto'>;
  leases: Lease[];
  /** Lines (dnsmasq, Kea) or blocks (ISC) that could not be read as a lease. */
  skipped: number;
}

/** Which format a lease file is in, from its first lines. */
export function detectLeaseFormat(text: string): Exclude<LeaseFileFormat, 'auto'> {
  const first = text.split('\n').find((l) => l.trim() !== '' && !l.trim().startsWith('#')) ?? '';
  if (/^\s*address\s*,/.test(first)) return 'kea';
  if (/(^|\n)\s*lease\s+\S+\s*\{/.test(text) || /^\s*(authoring-byte-order|server-duid|failover)\b/.test(first)) return 'isc';
  return 'dnsmasq';
}

export function parseLeaseFile(text: string, format: LeaseFileFormat = 'auto'): ParsedLeases {
  const f = format === 'auto' ? detectLeaseFormat(text) : format;
  const parsed = f === 'kea' ? parseKeaLeases(text) : f === 'isc' ? parseIscLeases(text) : parseDnsmasqLeases(text);
  return { format: f, ...parsed };
}

function lease(ip: string, mac: string | null | undefined, hostname: string | null | undefined): Lease {
  return { ip, mac: normalizeMac(mac ?? null), hostname: cleanHostname(hostname) };
}

export function parseDnsmasqLeases(text: string): { leases: Lease[]; skipped: number } {
  const leases: Lease[] = [];
  let skipped = 0;
  let ipv6 = false;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const parts = line.split(/\s+/);
    if (parts[0] === 'duid') {
      // Everything after the duid line is an IPv6 lease.
      ipv6 = true;
      continue;
    }
    if (ipv6 || (parts[2] ?? '').includes(':')) continue;
    if (parts.length < 4 || !/^\d+$/.test(parts[0]) || !isIpv4Address(parts[2])) {
      skipped++;
      continue;
    }
    leases.push(lease(parts[2], parts[1], parts[3]));
  }
  return { leases, skipped };
}

type Token = { kind: 'word' | 'string' | '{' | '}' | ';'; text: string };

/** dhcpd.leases' tokens: words, quoted strings (with backslash escapes), braces and semicolons; `#` comments dropped. */
function iscTokens(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (/\s/.test(c)) {
      i++;
    } else if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '{' || c === '}' || c === ';') {
      tokens.push({ kind: c, text: c });
      i++;
    } else if (c === '"') {
      let s = '';
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\' && i + 1 < text.length) {
          s += text[i + 1];
          i += 2;
        } else s += text[i++];
      }
      i++;
      tokens.push({ kind: 'string', text: s });
    } else {
      let w = '';
      while (i < text.length && !/[\s{};"#]/.test(text[i])) w += text[i++];
      tokens.push({ kind: 'word', text: w });
    }
  }
  return tokens;
}

export function parseIscLeases(text: string): { leases: Lease[]; skipped: number } {
  const tokens = iscTokens(text);
  const byIp = new Map<string, Lease | null>();
  let skipped = 0;
  let i = 0;
  /** Skips one statement or block from i (for what is not a lease). */
  const skipStatement = () => {
    let depth = 0;
    while (i < tokens.length) {
      const t = tokens[i++];
      if (t.kind === '{') depth++;
      else if (t.kind === '}') {
        depth--;
        if (depth <= 0) return;
      } else if (t.kind === ';' && depth === 0) return;
    }
  };
  while (i < tokens.length) {
    const t = tokens[i];
    if (!(t.kind === 'word' && t.text === 'lease' && tokens[i + 2]?.kind === '{')) {
      skipStatement();
      continue;
    }
    const ip = tokens[i + 1].text;
    i += 3;
    // The statements of the block, each a list of tokens up to its semicolon.
    const statements: Token[][] = [];
    let current: Token[] = [];
    let depth = 1;
    while (i < tokens.length && depth > 0) {
      const s = tokens[i++];
      if (s.kind === '{') depth++;
      else if (s.kind === '}') depth--;
      else if (s.kind === ';' && depth === 1) {
        statements.push(current);
        current = [];
      } else if (depth === 1) current.push(s);
    }
    if (!isIpv4Address(ip)) {
      skipped++;
      continue;
    }
    let state: string | null = null;
    let mac: string | null = null;
    let hostname: string | null = null;
    for (const st of statements) {
      const words = st.map((x) => x.text);
      if (words[0] === 'binding' && words[1] === 'state') state = words[2] ?? null;
      else if (words[0] === 'hardware' && words[1] === 'ethernet') mac = words[2] ?? null;
      else if (words[0] === 'client-hostname') hostname = words[1] ?? null;
    }
    // A later block of the same address supersedes the earlier one, whatever its state.
    byIp.delete(ip);
    byIp.set(ip, state === null || state === 'active' ? lease(ip, mac, hostname) : null);
  }
  return { leases: [...byIp.values()].filter((l): l is Lease => l !== null), skipped };
}

/** One CSV line of Kea's memfile: plain commas (Kea escapes commas inside values, never quotes). */
function keaFields(line: string): string[] {
  return line.split(',').map((f) => f.replace(/&#x2c/gi, ',').trim());
}

export function parseKeaLeases(text: string): { leases: Lease[]; skipped: number } {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const header = lines.length > 0 ? keaFields(lines[0]) : [];
  const col = (name: string) => header.indexOf(name);
  const [address, hwaddr, hostname, state] = [col('address'), col('hwaddr'), col('hostname'), col('state')];
  if (address < 0) return { leases: [], skipped: lines.length };
  const byIp = new Map<string, Lease | null>();
  let skipped = 0;
  for (const line of lines.slice(1)) {
    const f = keaFields(line);
    const ip = f[address] ?? '';
    if (!isIpv4Address(ip)) {
      skipped++;
      continue;
    }
    const current = state < 0 || (f[state] ?? '0') === '0' || f[state] === '';
    byIp.delete(ip);
    byIp.set(ip, current ? lease(ip, hwaddr >= 0 ? f[hwaddr] : null, hostname >= 0 ? f[hostname] : null) : null);
  }
  return { leases: [...byIp.values()].filter((l): l is Lease => l !== null), skipped };
}
