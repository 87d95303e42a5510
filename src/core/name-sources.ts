/**
 * Names and MACs from the network's own records (Pi-hole, AdGuard Home, UniFi, DHCP lease files):
 * what a source's answer is reduced to, and how it is applied to the hosts a scan discovered.
 * Pure: the clients that ask the sources live in src/names/.
 *
 * The rule: a source only fills what the scan did not see. A hostname is filled where the scan
 * found none; a MAC where the scan saw none (hosts on a routed subnet, an unprivileged scan). What
 * the scan saw is never overridden. When several sources know an address, the first in
 * NAME_SOURCE_ORDER that has the fact wins, fact by fact.
 */
import type { DiscoveredHost, NameSource } from './model.js';
import { normalizeMac } from './mac.js';
import { isIpv4Address } from './net.js';

/** What one source says about one address. */
export interface NameRecord {
  ip: string;
  mac?: string | null;
  hostname?: string | null;
  source: NameSource;
}

/** Which source wins when two know the same address (fact by fact). */
export const NAME_SOURCE_ORDER: readonly NameSource[] = ['unifi', 'pihole', 'adguard', 'dhcp_leases'];

/** Longest hostname kept (a DNS name is at most 253 characters). */
const HOSTNAME_MAX = 253;

/**
 * A hostname as a source reported it, or null when it is none: blank, `*` (dnsmasq's "no name"),
 * an address standing in for a name, control characters, or too long. A trailing dot
 * (a fully qualified name) is dropped.
 */
export function cleanHostname(text: unknown): string | null {
  if (typeof text !== 'string') return null;
  const name = text.trim().replace(/\.$/, '');
  if (name === '' || name === '*' || name.length > HOSTNAME_MAX) return null;
  // Names people gave (UniFi aliases, AdGuard Home clients) may have spaces; control characters are not names.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return null;
  if (isIpv4Address(name) || name.includes(':')) return null;
  return name;
}

/**
 * A source's records made uniform: IPv4 addresses only (MACs normalised, hostnames cleaned);
 * records that say nothing (no MAC, no name) are dropped; the first record of an address wins.
 */
export function normalizeRecords(records: readonly NameRecord[]): NameRecord[] {
  const out = new Map<string, NameRecord>();
  for (const r of records) {
    if (typeof r.ip !== 'string') continue;
    const ip = r.ip.trim();
    if (!isIpv4Address(ip)) continue;
    const mac = normalizeMac(r.mac ?? null);
    const hostname = cleanHostname(r.hostname);
    if (!mac && !hostname) continue;
    const known = out.get(ip);
    if (!known) {
      out.set(ip, { ip, mac, hostname, source: r.source });
    } else {
      // A later record of the same source fills only what the first lacked.
      out.set(ip, { ...known, mac: known.mac ?? mac, hostname: known.hostname ?? hostname });
    }
  }
  return [...out.values()];
}

/**
 * The hosts with the facts the sources add: `hostname` where the scan found none, `mac` where it
 * saw none, each with the source it came from (`hostname_source`, `mac_source`). Hosts are
 * returned in the same order; a host the sources add nothing to is returned as it was.
 */
export function applyNames(hosts: readonly DiscoveredHost[], records: readonly NameRecord[]): DiscoveredHost[] {
  if (records.length === 0) return [...hosts];
  const rank = (s: NameSource) => NAME_SOURCE_ORDER.indexOf(s);
  const byIp = new Map<string, NameRecord[]>();
  for (const r of [...records].sort((a, b) => rank(a.source) - rank(b.source))) {
    const list = byIp.get(r.ip) ?? [];
    list.push(r);
    byIp.set(r.ip, list);
  }
  return hosts.map((host) => {
    const known = byIp.get(host.ip);
    if (!known) return host;
    let out = host;
    if (!host.hostname) {
      const named = known.find((r) => r.hostname);
      if (named) out = { ...out, hostname: named.hostname!, hostname_source: named.source };
    }
    if (!host.mac) {
      const withMac = known.find((r) => r.mac);
      if (withMac) out = { ...out, mac: withMac.mac!, mac_source: withMac.source };
    }
    return out;
  });
}
