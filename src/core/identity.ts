/**
 * Which known device each discovered host is. A device is one identity over time: its MAC when a
 * scan saw one, else its IP. Pure: the store loads the known devices and applies the decisions.
 */
import type { DiscoveredHost } from './model.js';

export interface KnownDevice {
  id: number;
  identity: string;
  ip_address: string;
  mac_address: string | null;
  last_seen: string;
}

export interface IdentityDecision {
  host: DiscoveredHost;
  /** The existing device this host is, or null for a new device. */
  deviceId: number | null;
  /** The identity the device has after this scan. */
  identity: string;
}

export function identityOf(host: Pick<DiscoveredHost, 'ip' | 'mac'>): string {
  return host.mac ? `mac:${host.mac}` : `ip:${host.ip}`;
}

export function matchHosts(hosts: DiscoveredHost[], known: KnownDevice[]): IdentityDecision[] {
  const byIdentity = new Map(known.map((d) => [d.identity, d]));
  // Most recently seen device at each IP wins when several have held it.
  const byIp = new Map<string, KnownDevice>();
  for (const d of [...known].sort((a, b) => a.last_seen.localeCompare(b.last_seen))) byIp.set(d.ip_address, d);
  const claimed = new Set<number>();

  return hosts.map((host) => {
    const identity = identityOf(host);
    let device = byIdentity.get(identity);
    if (!device && host.mac) {
      // Seen before without a MAC (e.g. from an unprivileged scan): that device gains its MAC.
      const previous = byIdentity.get(`ip:${host.ip}`);
      if (previous && !previous.mac_address) device = previous;
    }
    if (!device && !host.mac) {
      // No MAC this time (unprivileged, or not on the local segment): the device last seen at this IP.
      device = byIp.get(host.ip);
    }
    if (device && claimed.has(device.id)) device = undefined;
    if (device) claimed.add(device.id);
    return { host, deviceId: device?.id ?? null, identity: device && !host.mac ? device.identity : identity };
  });
}
