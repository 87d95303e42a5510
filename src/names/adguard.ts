/**
 * AdGuard Home (its /control API, HTTP basic authentication): the clients (`GET /control/clients`:
 * `clients[] {name, ids[]}` the user named, whose ids are addresses, CIDRs, MACs or ClientIDs, and
 * `auto_clients[] {ip, name, source}` found by rDNS, DHCP, ARP or /etc/hosts) and the DHCP server's
 * leases (`GET /control/dhcp/status`: `leases[]` and `static_leases[]`, each `{mac, ip, hostname}`).
 * A client named by its MAC alone gets the address its lease gives that MAC.
 */
import { normalizeMac } from '../core/mac.js';
import { isIpv4Address } from '../core/net.js';
import type { Settings } from '../core/settings.js';
import { isObject } from '../util/is-object.js';
import { jsonOf, NameSourceError, request, under } from './http.js';
import type { NameRecord, SourceContext } from './types.js';

type Config = Pick<Settings['name_sources']['adguard'], 'url' | 'username' | 'password'>;

export async function fetchAdGuard(config: Config, ctx: SourceContext): Promise<NameRecord[]> {
  const headers: Record<string, string> =
    config.username || config.password ? { Authorization: `Basic ${Buffer.from(`${config.username}:${config.password}`).toString('base64')}` } : {};
  const [clients, dhcp] = await Promise.all([
    request(under(config.url, '/control/clients'), { ...ctx, headers }).then((r) => jsonOf(r, 'clients (GET /control/clients)')),
    request(under(config.url, '/control/dhcp/status'), { ...ctx, headers }).then((r) => jsonOf(r, 'DHCP status (GET /control/dhcp/status)')),
  ]);
  if (!isObject(clients) || !('clients' in clients || 'auto_clients' in clients)) {
    throw new NameSourceError('clients: the answer has no "clients" or "auto_clients" (is this AdGuard Home?)');
  }
  if (!isObject(dhcp)) throw new NameSourceError('DHCP status: the answer is not an object (is this AdGuard Home?)');
  const leases = [...list(dhcp.static_leases), ...list(dhcp.leases)].filter(isObject);
  const ipOfMac = new Map<string, string>();
  for (const l of leases) {
    const mac = normalizeMac(typeof l.mac === 'string' ? l.mac : null);
    if (mac && typeof l.ip === 'string' && !ipOfMac.has(mac)) ipOfMac.set(mac, l.ip);
  }
  const records: NameRecord[] = [];
  // The names a person gave come first.
  for (const c of list(clients.clients)) {
    if (!isObject(c) || typeof c.name !== 'string') continue;
    const ids = list(c.ids).filter((id): id is string => typeof id === 'string');
    const macs = ids.map((id) => normalizeMac(id)).filter((m): m is string => m !== null);
    const mac = macs.length === 1 ? macs[0] : null;
    const ips = ids.filter((id) => isIpv4Address(id));
    if (ips.length === 0 && mac && ipOfMac.has(mac)) ips.push(ipOfMac.get(mac)!);
    for (const ip of ips) records.push({ ip, mac, hostname: c.name, source: 'adguard' });
  }
  for (const l of leases) {
    if (typeof l.ip === 'string') records.push({ ip: l.ip, mac: str(l.mac), hostname: str(l.hostname), source: 'adguard' });
  }
  for (const a of list(clients.auto_clients)) {
    if (isObject(a) && typeof a.ip === 'string') records.push({ ip: a.ip, hostname: str(a.name), source: 'adguard' });
  }
  return records;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
