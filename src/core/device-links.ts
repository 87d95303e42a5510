/**
 * Which device hangs off which switch or access point (CONTRACT §16, issue 22 §2), as the network's
 * own tables say: a UniFi controller's client and device lists, a switch's bridge forwarding table
 * (BRIDGE-MIB / Q-BRIDGE-MIB) and its LLDP neighbours (LLDP-MIB). Pure: the UniFi client
 * (src/names/unifi.ts) and the SNMP probe (src/probes/snmp.ts) read the tables, the store keeps the
 * links (store/device-links.ts, migration 021), the map draws them (core/topology.ts). A link is
 * only ever what a table states; nothing is guessed from a device's type or address.
 */
import { gradeMac, normalizeMac } from './mac.js';

export const LINK_SOURCES = ['unifi', 'lldp', 'snmp'] as const;
/** Where a link comes from; also the order in which a device's links win (a controller knows Wi-Fi, LLDP names the neighbour, a bridge table only the port behind which a MAC was learned). */
export type LinkSource = (typeof LINK_SOURCES)[number];
export type LinkParentKind = 'switch' | 'access_point';
/** `l2` wired, `wifi` associated to an access point. */
export type LinkVia = 'l2' | 'wifi';

/** A link as a source states it, in its own terms (MACs and addresses), before devices are looked up. */
export interface ObservedLink {
  /** The device below: its MAC (normalised) and, when the source knows it, its address. */
  mac: string | null;
  ip: string | null;
  /** The switch or access point above. */
  parentMac: string | null;
  parentIp: string | null;
  parentKind: LinkParentKind;
  via: LinkVia;
  /** The parent's port (a switch port number or name), when known. */
  port: string | null;
  source: LinkSource;
}

/** A link between two devices of the inventory, as the store keeps it. */
export interface DeviceLink {
  deviceId: number;
  parentDeviceId: number;
  parentKind: LinkParentKind;
  via: LinkVia;
  port: string | null;
  source: LinkSource;
}

/** A device as the bridge rules need it: its id and recognised type. */
export interface LinkedDevice {
  id: number;
  deviceType: string | null;
}

/** Device types on whose side of a switch port the rest of the network (the way out) lies. */
const UPLINK_TYPES = new Set(['router', 'firewall']);

/** One switch's tables as the SNMP probe read them, with its device. */
export interface SwitchTables {
  device: LinkedDevice;
  /** MACs that are this switch's own (its inventory MAC, its bridge address). */
  ownMacs: string[];
  /** Forwarding entries: a MAC learned behind a bridge port. */
  bridge: { mac: string; port: number }[];
  /** LLDP neighbours: the local port and the neighbour's chassis MAC (when its chassis id is one). */
  lldp: { localPort: number; chassisMac: string | null }[];
}

/** A MAC that can be one device's own: not multicast, broadcast or a virtual router address. */
export function linkableMac(text: string | null | undefined): string | null {
  const mac = normalizeMac(text);
  return mac && gradeMac(mac).grade !== 'excluded' ? mac : null;
}

/**
 * The links that switches' bridge and LLDP tables state, given the inventory device each MAC
 * belongs to (`deviceOfMac`).
 *
 * - A port on which another switch of `switches` or a router/firewall is learned is an uplink or a
 *   trunk to another switch: what is learned there is not a client of this switch, so the port is
 *   left out. Every other learned device is a client of the switch on that port (`snmp`).
 * - Two switches that see each other: the one whose port towards the other also holds a router or
 *   firewall hangs below the other (the way out lies through it). Undecided pairs give no link.
 * - An LLDP neighbour is adjacent on a port (`lldp`); it hangs below the reporting switch unless it is
 *   a router or firewall, or lies on the reporting switch's uplink port, or the pair's direction is
 *   decided otherwise as above.
 * - A device several switches claim goes to the one whose port holds the fewest devices (the
 *   nearest); a tie goes to the lowest device id. Self-links are dropped.
 */
export function switchLinks(switches: readonly SwitchTables[], deviceOfMac: ReadonlyMap<string, LinkedDevice>): DeviceLink[] {
  const switchIds = new Set(switches.map((s) => s.device.id));
  const kindOf = (s: SwitchTables): LinkParentKind => (s.device.deviceType === 'access_point' ? 'access_point' : 'switch');
  /** Per switch: port → devices learned there (own MACs left out). */
  const ports = new Map<number, Map<number, LinkedDevice[]>>();
  for (const s of switches) {
    const own = new Set(s.ownMacs.map((m) => normalizeMac(m)).filter((m): m is string => m !== null));
    const byPort = new Map<number, LinkedDevice[]>();
    for (const entry of s.bridge) {
      const mac = linkableMac(entry.mac);
      if (!mac || own.has(mac)) continue;
      const device = deviceOfMac.get(mac);
      if (!device || device.id === s.device.id) continue;
      const list = byPort.get(entry.port) ?? [];
      if (!list.some((d) => d.id === device.id)) list.push(device);
      byPort.set(entry.port, list);
    }
    ports.set(s.device.id, byPort);
  }
  const isUplinkPort = (devices: readonly LinkedDevice[], self: number) =>
    devices.some((d) => (switchIds.has(d.id) && d.id !== self) || UPLINK_TYPES.has(d.deviceType ?? ''));
  const holdsRouter = (devices: readonly LinkedDevice[] | undefined) => (devices ?? []).some((d) => UPLINK_TYPES.has(d.deviceType ?? ''));
  /** The port of switch `a` on which device `b` is learned, with what is learned there. */
  const portOf = (a: number, b: number): { port: number; devices: LinkedDevice[] } | null => {
    for (const [port, devices] of ports.get(a) ?? []) if (devices.some((d) => d.id === b)) return { port, devices };
    return null;
  };
  /** Which of two switches that see each other is below: the one whose port towards the other holds a router. */
  const below = (a: number, b: number): number | null => {
    const aTowardsB = portOf(a, b);
    const bTowardsA = portOf(b, a);
    const aUp = holdsRouter(aTowardsB?.devices);
    const bUp = holdsRouter(bTowardsA?.devices);
    if (aUp && !bUp) return a;
    if (bUp && !aUp) return b;
    return null;
  };

  // Candidate links per device: the best (fewest devices on the port) wins.
  const best = new Map<number, { link: DeviceLink; weight: number }>();
  const offer = (link: DeviceLink, weight: number) => {
    if (link.deviceId === link.parentDeviceId) return;
    const known = best.get(link.deviceId);
    const rank = LINK_SOURCES.indexOf(link.source);
    if (known) {
      const knownRank = LINK_SOURCES.indexOf(known.link.source);
      if (knownRank < rank) return;
      if (knownRank === rank && (known.weight < weight || (known.weight === weight && known.link.parentDeviceId < link.parentDeviceId))) return;
    }
    best.set(link.deviceId, { link, weight });
  };

  for (const s of switches) {
    const self = s.device.id;
    for (const [port, devices] of ports.get(self) ?? []) {
      if (isUplinkPort(devices, self)) continue;
      for (const d of devices)
        offer({ deviceId: d.id, parentDeviceId: self, parentKind: kindOf(s), via: 'l2', port: String(port), source: 'snmp' }, devices.length);
    }
    // Switches that see each other: the direction the routers' side gives.
    for (const other of switches) {
      if (other.device.id <= self) continue;
      if (!portOf(self, other.device.id) || !portOf(other.device.id, self)) continue;
      const lower = below(self, other.device.id);
      if (lower === null) continue;
      const upper = lower === self ? other : s;
      const port = portOf(upper.device.id, lower);
      offer(
        {
          deviceId: lower,
          parentDeviceId: upper.device.id,
          parentKind: kindOf(upper),
          via: 'l2',
          port: port ? String(port.port) : null,
          source: 'snmp',
        },
        1,
      );
    }
  }

  // LLDP: adjacency on a port; the direction from the routers' side.
  for (const s of switches) {
    const self = s.device.id;
    for (const n of s.lldp) {
      const mac = linkableMac(n.chassisMac);
      const neighbour = mac ? deviceOfMac.get(mac) : undefined;
      if (!neighbour || neighbour.id === self || UPLINK_TYPES.has(neighbour.deviceType ?? '')) continue;
      const learned = portOf(self, neighbour.id);
      if (learned && holdsRouter(learned.devices)) continue;
      // A neighbour whose own tables we read too: only a decided direction counts.
      if (switchIds.has(neighbour.id) && below(self, neighbour.id) !== neighbour.id) continue;
      offer({ deviceId: neighbour.id, parentDeviceId: self, parentKind: kindOf(s), via: 'l2', port: String(n.localPort), source: 'lldp' }, 0);
    }
  }
  return [...best.values()].map((b) => b.link).sort((a, b) => a.deviceId - b.deviceId);
}

/**
 * One link per device from links of several sources: the first source in LINK_SOURCES wins, then
 * the lowest parent id. Links whose chain would loop are the map's to drop (core/topology.ts).
 */
export function chooseLinks(links: readonly DeviceLink[]): DeviceLink[] {
  const out = new Map<number, DeviceLink>();
  for (const link of links) {
    if (link.deviceId === link.parentDeviceId) continue;
    const known = out.get(link.deviceId);
    if (
      !known ||
      LINK_SOURCES.indexOf(link.source) < LINK_SOURCES.indexOf(known.source) ||
      (link.source === known.source && link.parentDeviceId < known.parentDeviceId)
    )
      out.set(link.deviceId, link);
  }
  return [...out.values()];
}
