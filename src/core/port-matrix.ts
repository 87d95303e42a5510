/**
 * The port matrix (CONTRACT §16, §18, issue 22 §3): which open ports the inventory has, on how
 * many devices, which of them a zone policy forbids and which are rare. Pure: the store hands in
 * per-zone counts and the policies; this decides what the API shows.
 */
import { policyBreaches, type ZonePolicies } from './policies.js';

/** A port is rare when at most this many devices of the matrix have it open… */
export const RARE_MAX_DEVICES = 2;
/** …or when fewer than this share of the matrix's devices (those with an open port) have it open. */
export const RARE_SHARE = 0.01;

/** The rule, as the API documents it. */
export const RARE_RULE =
  `open on at most ${RARE_MAX_DEVICES} devices, or on fewer than ${RARE_SHARE * 100} % of the devices in the matrix; ` +
  'never a port open on every device of the matrix';

/**
 * Whether a port open on `count` of the matrix's `total` devices is rare (RARE_RULE). A port every
 * device has open is never rare, so a matrix of one or two devices does not mark everything.
 */
export function isRarePort(count: number, total: number): boolean {
  if (count <= 0 || count >= total) return false;
  return count <= RARE_MAX_DEVICES || count < total * RARE_SHARE;
}

/** Open ports of the matrix's devices counted per zone, port, protocol and service (what the store's grouping returns). */
export interface PortGroup {
  zone: string | null;
  port: number;
  protocol: string;
  service: string | null;
  devices: number;
}

/** One column of the matrix. */
export interface MatrixPort {
  port: number;
  protocol: string;
  /** The service most of its devices report (ties: alphabetical); null when none names one. */
  service: string | null;
  /** Devices with the port open. */
  devices: number;
  /** Whether a zone policy forbids it on at least one of those devices. */
  forbidden: boolean;
  /** How many of those devices break their zone's policy with it. */
  forbidden_devices: number;
  rare: boolean;
}

/** Whether the policy of `zone` forbids this open port (by number, by service, or by its allow-list). */
export function forbiddenIn(policies: ZonePolicies, zone: string | null, port: number, protocol: string, service: string | null): boolean {
  if (zone === null) return false;
  const policy = policies[zone];
  if (!policy) return false;
  return policyBreaches(policy, [{ port, protocol, state: 'open', service }]).length > 0;
}

/** The key of a (zone, port, protocol, service) combination in forbiddenCombinations' set. */
export function combinationKey(zone: string | null, port: number, protocol: string, service: string | null): string {
  return `${zone ?? ''}\u0000${port}/${protocol.toLowerCase()}\u0000${service ?? ''}`;
}

/** The combinations of `groups` that their zone's policy forbids, so each device's ports are looked up, not re-checked. */
export function forbiddenCombinations(groups: readonly PortGroup[], policies: ZonePolicies): Set<string> {
  const out = new Set<string>();
  for (const g of groups) {
    if (forbiddenIn(policies, g.zone, g.port, g.protocol.toLowerCase(), g.service)) out.add(combinationKey(g.zone, g.port, g.protocol, g.service));
  }
  return out;
}

/** The matrix's ports from the grouped counts: by port, then protocol. `total` is the matrix's number of devices. */
export function matrixPorts(groups: readonly PortGroup[], policies: ZonePolicies, total: number): MatrixPort[] {
  const byPort = new Map<string, { port: number; protocol: string; devices: number; forbidden: number; services: Map<string, number> }>();
  for (const g of groups) {
    const protocol = g.protocol.toLowerCase();
    const key = `${g.port}/${protocol}`;
    let entry = byPort.get(key);
    if (!entry) {
      entry = { port: g.port, protocol, devices: 0, forbidden: 0, services: new Map() };
      byPort.set(key, entry);
    }
    entry.devices += g.devices;
    if (g.service) entry.services.set(g.service, (entry.services.get(g.service) ?? 0) + g.devices);
    if (forbiddenIn(policies, g.zone, g.port, protocol, g.service)) entry.forbidden += g.devices;
  }
  return [...byPort.values()]
    .sort((a, b) => a.port - b.port || a.protocol.localeCompare(b.protocol))
    .map((e) => {
      let service: string | null = null;
      let best = 0;
      for (const [name, n] of e.services) {
        if (n > best || (n === best && service !== null && name < service)) {
          service = name;
          best = n;
        }
      }
      return {
        port: e.port,
        protocol: e.protocol,
        service,
        devices: e.devices,
        forbidden: e.forbidden > 0,
        forbidden_devices: e.forbidden,
        rare: isRarePort(e.devices, total),
      };
    });
}
