/**
 * Which known device each discovered host is. A device is one identity over time: `mac:<MAC>` when a
 * scan saw its MAC, else `ip:<address>`. Pure: the store loads the known devices and applies the
 * decisions (src/store/inventory.ts).
 *
 * Engines report what the network showed them, and the network is not tidy: a MAC seen late, the
 * same MAC at two addresses (a stale neighbour entry, a host with two addresses, proxy ARP), the
 * same address twice, hosts swapping addresses. Whatever comes in, the decisions
 *   - use each known device at most once,
 *   - give identities unique among themselves, and never the identity of a known device other
 *     than the one decided (even one this scan moves to another identity),
 * so they can be applied in any order without violating devices.identity's UNIQUE constraint.
 * A host that cannot be placed under these rules is dropped with a reason, never an error.
 *
 * The rules, in order:
 *  1. Clean-up of the report.
 *     a. An invalid address, or a MAC that is not one (normalised as `AA:BB:CC:DD:EE:FF`, the
 *        all-zero and broadcast MACs are none): the host is dropped / counted as without a MAC.
 *     b. One address reported more than once: with a MAC and without one, the report with the MAC
 *        is kept; the same MAC twice, or twice without a MAC, is one host. Two different MACs at
 *        one address are two devices (an address conflict on the segment): both are kept.
 *     c. One MAC at several addresses: the address where the device with that MAC was last seen
 *        keeps the MAC, else the first address reported (engines report in address order). The
 *        other addresses did answer, so they are kept as address-only hosts: identity `ip:<address>`,
 *        recorded without the MAC (the MAC belongs to the first one's device).
 *        The native engine already drops an address whose only evidence is a neighbour entry that
 *        predates the scan when the same MAC answered a probe elsewhere (src/engines/native/discovery.ts).
 *  2. A host with a MAC, hosts with MACs first (a MAC is stronger evidence than an address):
 *     a. the device with identity `mac:<MAC>`, wherever it was (an IP change: same device);
 *     b. else the device with identity `ip:<address>` that has no MAC yet (seen there by a scan that
 *        could not see MACs) gains the MAC;
 *     c. else a new device `mac:<MAC>`.
 *  3. A host without a MAC (an unprivileged scan, or beyond the local segment):
 *     a. the device most recently seen at that address (it keeps its identity), unless that is a
 *        device named after another address, or rule 2 already gave it to a host elsewhere (it
 *        moved and its MAC was seen there);
 *     b. else the device with identity `ip:<address>` if still free;
 *     c. else a new device `ip:<address>`.
 *     An address-only host of rule 1c uses only b and c: its MAC is known not to be that of the
 *     device last seen there. After rule 1 there is at most one host without a MAC per address,
 *     so hosts of different addresses never compete for a device here.
 *  4. A new identity that a known device already holds (that device went to another host) cannot
 *     be created: the host is dropped with a reason.
 * Decisions other than the plain ones (same MAC, same or new address; a MAC gained; the device at
 * an address) carry a short reason, which the scan logs.
 */
import type { DiscoveredHost } from './model.js';
import { normalizeMac } from './mac.js';
import { isIpv4Address } from './net.js';

export interface KnownDevice {
  id: number;
  identity: string;
  ip_address: string;
  mac_address: string | null;
  last_seen: string;
}

export interface IdentityDecision {
  /** The host as it is recorded (MAC normalised; without its MAC when it is an address-only host). */
  host: DiscoveredHost;
  /** The existing device this host is, or null for a new device. */
  deviceId: number | null;
  /** The identity the device has after this scan. */
  identity: string;
  /** Why, when the decision is not the plain one. */
  reason: string | null;
}

export interface DroppedHost {
  host: DiscoveredHost;
  reason: string;
}

export interface IdentityResolution {
  /** One per host recorded, in the order the engine reported them. */
  decisions: IdentityDecision[];
  /** Hosts not recorded (duplicates, or no identity left for them), with the reason. */
  dropped: DroppedHost[];
}

export function identityOf(host: Pick<DiscoveredHost, 'ip' | 'mac'>): string {
  return host.mac ? `mac:${host.mac}` : `ip:${host.ip}`;
}

/** A host after the clean-up of rule 1. */
interface Candidate {
  host: DiscoveredHost;
  /** Position in the engine's report: decisions come out in that order. */
  order: number;
  /** Rule 1c: the host's MAC was given to another address; the host is known by its address only. */
  addressOnly: boolean;
  reason: string | null;
}

export function matchHosts(hosts: readonly DiscoveredHost[], known: readonly KnownDevice[]): IdentityResolution {
  const dropped: DroppedHost[] = [];
  const candidates = cleanUp(hosts, known, dropped);

  const byIdentity = new Map(known.map((d) => [d.identity, d]));
  // The device most recently seen at each address (ties: the one whose identity is that address).
  const lastAt = new Map<string, KnownDevice>();
  for (const d of known) {
    const current = lastAt.get(d.ip_address);
    const newer = !current || d.last_seen > current.last_seen || (d.last_seen === current.last_seen && d.identity === `ip:${d.ip_address}`);
    if (newer) lastAt.set(d.ip_address, d);
  }
  const claimedBy = new Map<number, DiscoveredHost>();
  const emitted = new Set<string>();
  const decided: { order: number; decision: IdentityDecision }[] = [];

  const decide = (c: Candidate, device: KnownDevice | undefined, identity: string, reason: string | null): void => {
    // The rules never get here with a used identity; this keeps the guarantee should one change.
    if (emitted.has(identity)) {
      dropped.push({ host: c.host, reason: `${describe(c.host)} not recorded: identity ${identity} was already given to another host of this scan` });
      return;
    }
    if (device) claimedBy.set(device.id, c.host);
    emitted.add(identity);
    decided.push({ order: c.order, decision: { host: c.host, deviceId: device?.id ?? null, identity, reason } });
  };
  const free = (d: KnownDevice | undefined): d is KnownDevice => d !== undefined && !claimedBy.has(d.id);

  /** Rules 3c and 4: a new device, unless its identity is held by a known device or already given. */
  const createOrDrop = (c: Candidate, identity: string, reason: string | null): void => {
    const holder = byIdentity.get(identity);
    if (holder || emitted.has(identity)) {
      const by = holder ? claimedBy.get(holder.id) : undefined;
      const why = holder
        ? `device #${holder.id} holds identity ${identity} and this scan gave it to ${by ? describe(by) : 'another host'}`
        : `identity ${identity} was already given to another host of this scan`;
      dropped.push({ host: c.host, reason: `${describe(c.host)} not recorded: ${why}` });
      return;
    }
    decide(c, undefined, identity, reason);
  };

  // Rule 2: hosts with a MAC.
  for (const c of candidates) {
    if (!c.host.mac) continue;
    const identity = `mac:${c.host.mac}`;
    const same = byIdentity.get(identity);
    if (free(same)) {
      decide(c, same, identity, c.reason);
      continue;
    }
    const unnamed = byIdentity.get(`ip:${c.host.ip}`);
    if (!same && free(unnamed) && !unnamed.mac_address) {
      decide(c, unnamed, identity, c.reason);
      continue;
    }
    createOrDrop(c, identity, c.reason);
  }

  // Rule 3: hosts without a MAC, and the address-only hosts of rule 1c.
  for (const c of candidates) {
    if (c.host.mac) continue;
    const last = lastAt.get(c.host.ip);
    // A device named after another address is that address's (rule 3 keeps hosts from competing).
    if (!c.addressOnly && free(last) && (last.identity.startsWith('mac:') || last.identity === `ip:${c.host.ip}`)) {
      decide(c, last, last.identity, c.reason);
      continue;
    }
    const named = byIdentity.get(`ip:${c.host.ip}`);
    let reason = c.reason;
    if (!c.addressOnly && last && claimedBy.has(last.id)) {
      const elsewhere = claimedBy.get(last.id);
      reason = join(reason, `device #${last.id}, last seen at ${c.host.ip}, was found at ${elsewhere?.ip ?? 'another address'} by its MAC`);
    }
    if (free(named)) {
      decide(c, named, named.identity, reason);
      continue;
    }
    createOrDrop(c, `ip:${c.host.ip}`, reason);
  }

  decided.sort((a, b) => a.order - b.order);
  return { decisions: decided.map((d) => d.decision), dropped };
}

/** Rule 1: one report per address and MAC, as described in the header. */
function cleanUp(hosts: readonly DiscoveredHost[], known: readonly KnownDevice[], dropped: DroppedHost[]): Candidate[] {
  // 1a and 1b: group by address, keeping the first report of each MAC (and of "no MAC").
  const byIp = new Map<string, Candidate[]>();
  hosts.forEach((raw, order) => {
    if (typeof raw.ip !== 'string' || !isIpv4Address(raw.ip)) {
      dropped.push({ host: raw, reason: `host ${JSON.stringify(raw.ip)} not recorded: not an IPv4 address` });
      return;
    }
    const host = { ...raw, mac: normalizeMac(raw.mac) };
    // A vendor looked up from something that is not a MAC is not one either.
    if (!host.mac && raw.mac) host.vendor = null;
    const group = byIp.get(host.ip) ?? byIp.set(host.ip, []).get(host.ip)!;
    const twin = group.find((c) => c.host.mac === host.mac);
    if (twin) {
      dropped.push({ host, reason: `${describe(host)} was reported twice; the second report was ignored` });
      return;
    }
    group.push({ host, order, addressOnly: false, reason: null });
  });
  const cleaned: Candidate[] = [];
  for (const group of byIp.values()) {
    const withMac = group.filter((c) => c.host.mac);
    for (const c of group) {
      if (!c.host.mac && withMac.length > 0) {
        dropped.push({
          host: c.host,
          reason: `${c.host.ip} was reported with MAC ${withMac[0].host.mac} and without one; the report with the MAC was kept`,
        });
      } else cleaned.push(c);
    }
  }
  cleaned.sort((a, b) => a.order - b.order);

  // 1c: one address per MAC.
  const lastIpOf = new Map(known.filter((d) => d.identity.startsWith('mac:')).map((d) => [d.identity.slice(4), d]));
  const byMac = new Map<string, Candidate[]>();
  for (const c of cleaned) if (c.host.mac) (byMac.get(c.host.mac) ?? byMac.set(c.host.mac, []).get(c.host.mac)!).push(c);
  for (const [mac, group] of byMac) {
    if (group.length < 2) continue;
    const device = lastIpOf.get(mac);
    const keeper = group.find((c) => device && c.host.ip === device.ip_address) ?? group[0];
    const why = device && keeper.host.ip === device.ip_address ? `where device #${device.id} was last seen` : 'the first address reported';
    const addresses = group.map((c) => c.host.ip).join(', ');
    for (const c of group) {
      if (c === keeper) continue;
      c.host = { ...c.host, mac: null, vendor: null };
      c.addressOnly = true;
      c.reason = `MAC ${mac} answered at ${addresses}; it stays with ${keeper.host.ip} (${why}), ${c.host.ip} is recorded by its address only`;
    }
  }
  return cleaned;
}

function describe(host: Pick<DiscoveredHost, 'ip' | 'mac'>): string {
  return host.mac ? `${host.ip} (${host.mac})` : host.ip;
}

function join(a: string | null, b: string): string {
  return a ? `${a}; ${b}` : b;
}
