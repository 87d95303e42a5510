/**
 * Which device hangs off which switch or access point (issue 22 §2, core/device-links.ts), recorded
 * as a scan learns it: the UniFi controller's lists when the name sources are read (every scan,
 * upload and import that records discovery), the bridge and LLDP tables the SNMP probe read from
 * the scan's hosts after recognition. Each source's stored links are replaced by what it says now
 * (store/device-links.ts): the controller's all at once, a switch's own when that switch answered
 * SNMP. Only links between devices of the inventory are kept; a source that failed leaves its links
 * as they were.
 */
import { switchLinks, type DeviceLink, type ObservedLink, type SwitchTables } from '../core/device-links.js';
import type { ProbeResults } from '../core/probe-results.js';
import { nowIso } from '../store/clock.js';
import type { Store } from '../store/index.js';

/** Replaces the UniFi controller's links by `observed` (its clients and devices, by MAC, else address). */
export async function recordControllerLinks(store: Store, observed: readonly ObservedLink[], scanId: number | null): Promise<number> {
  const links = observed.filter((l) => l.source === 'unifi');
  const byMac = await store.deviceLinks.devicesByMac(links.flatMap((l) => [l.mac, l.parentMac]).filter((m): m is string => m !== null));
  const byIp = await store.deviceLinks.devicesByIp(links.flatMap((l) => [l.ip, l.parentIp]).filter((ip): ip is string => ip !== null));
  const resolved: Omit<DeviceLink, 'source'>[] = [];
  for (const l of links) {
    const device = (l.mac ? byMac.get(l.mac) : undefined) ?? (l.ip ? byIp.get(l.ip) : undefined);
    const parent = (l.parentMac ? byMac.get(l.parentMac) : undefined) ?? (l.parentIp ? byIp.get(l.parentIp) : undefined);
    if (!device || !parent || device.id === parent.id) continue;
    resolved.push({ deviceId: device.id, parentDeviceId: parent.id, parentKind: l.parentKind, via: l.via, port: l.port });
  }
  await store.deviceLinks.replace('unifi', { all: true }, resolved, scanId, nowIso());
  return resolved.length;
}

/** A host the scan recorded with what its probes answered. */
export interface ProbedDevice {
  deviceId: number;
  mac: string | null;
  probes: ProbeResults;
}

/**
 * From the hosts that answered SNMP: their bridge and LLDP tables become `snmp` and `lldp` links
 * (core/device-links.ts switchLinks), replacing those switches' stored ones.
 */
export async function recordSwitchLinks(store: Store, hosts: readonly ProbedDevice[], scanId: number | null): Promise<number> {
  const answered = hosts.filter((h) => h.probes.snmp);
  if (answered.length === 0) return 0;
  const macs = answered.flatMap((h) => [
    ...(h.mac ? [h.mac] : []),
    ...(h.probes.snmp?.bridge ?? []).map((e) => e.mac),
    ...(h.probes.snmp?.lldp ?? []).flatMap((n) => (n.chassisMac ? [n.chassisMac] : [])),
  ]);
  const deviceOfMac = await store.deviceLinks.devicesByMac(macs);
  const types = await store.deviceLinks.devicesById(answered.map((h) => h.deviceId));
  const switches: SwitchTables[] = answered.map((h) => ({
    device: { id: h.deviceId, deviceType: types.get(h.deviceId)?.deviceType ?? null },
    ownMacs: h.mac ? [h.mac] : [],
    bridge: h.probes.snmp?.bridge ?? [],
    lldp: h.probes.snmp?.lldp ?? [],
  }));
  const links = switchLinks(switches, deviceOfMac);
  const parents = { parents: switches.map((s) => s.device.id) };
  const at = nowIso();
  await store.deviceLinks.replace(
    'snmp',
    parents,
    links.filter((l) => l.source === 'snmp'),
    scanId,
    at,
  );
  await store.deviceLinks.replace(
    'lldp',
    parents,
    links.filter((l) => l.source === 'lldp'),
    scanId,
    at,
  );
  return links.length;
}
