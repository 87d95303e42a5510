/**
 * fast-check generators for identity resolution: small pools of addresses and MACs, so that random
 * reports collide often (one MAC at two addresses, one address twice, hosts trading addresses, a
 * MAC seen at an address that had none), plus the odd malformed MAC an engine could pass on.
 */
import fc from 'fast-check';
import type { KnownDevice } from '../../src/core/identity.js';
import type { DiscoveredHost } from '../../src/core/model.js';

export const IPS = ['10.66.0.10', '10.66.0.11', '10.66.0.12', '10.66.0.13', '10.66.0.14', '10.66.0.15'];
export const MACS = ['B8:27:EB:66:00:01', '00:1C:42:66:00:02', '02:66:00:66:00:03', '00:16:3E:66:00:04', 'DC:A6:32:66:00:05'];
const TIMES = ['2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z', '2026-01-03T00:00:00.000Z'];

export const ipArb = fc.constantFrom(...IPS);
export const macArb = fc.constantFrom(...MACS);

/** What an engine may put in `mac`: none, a normalised MAC, the same in another spelling, or junk. */
export const reportedMacArb: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(null) },
  { weight: 6, arbitrary: macArb },
  { weight: 1, arbitrary: macArb.map((m) => m.toLowerCase().replace(/:/g, '-')) },
  { weight: 1, arbitrary: fc.constantFrom('00:00:00:00:00:00', 'not a mac', '') },
);

export const hostArb: fc.Arbitrary<DiscoveredHost> = fc.record({
  ip: ipArb,
  mac: reportedMacArb,
  vendor: fc.option(fc.constantFrom('Raspberry Pi Foundation', 'Parallels, Inc.'), { nil: null }),
  hostname: fc.option(fc.constantFrom('nas.lan', 'printer.lan'), { nil: null }),
});

/** A scan's report: up to 8 hosts, in address order as engines report them, or shuffled. */
export const reportArb: fc.Arbitrary<DiscoveredHost[]> = fc
  .tuple(fc.array(hostArb, { maxLength: 8 }), fc.boolean())
  .map(([hosts, sorted]) => (sorted ? [...hosts].sort((a, b) => a.ip.localeCompare(b.ip)) : hosts));

/**
 * Known devices with unique identities, as adversarial as the table allows: identities by MAC or by
 * address, current addresses anywhere in the pool (shared by several devices too), a MAC on an
 * address-identity device now and then (data written by older versions), equal last_seen times.
 */
export const knownArb: fc.Arbitrary<KnownDevice[]> = fc
  .uniqueArray(
    fc
      .record({
        byMac: fc.boolean(),
        mac: macArb,
        identityIp: ipArb,
        ip: ipArb,
        legacyMac: fc.option(macArb, { freq: 4, nil: null }),
        at: fc.constantFrom(...TIMES),
        atOwnAddress: fc.boolean(),
      })
      .map((r) =>
        r.byMac
          ? { identity: `mac:${r.mac}`, ip_address: r.ip, mac_address: r.mac, last_seen: r.at }
          : { identity: `ip:${r.identityIp}`, ip_address: r.atOwnAddress ? r.identityIp : r.ip, mac_address: r.legacyMac, last_seen: r.at },
      ),
    { selector: (d) => d.identity, maxLength: 8 },
  )
  .map((devices) => devices.map((d, i) => ({ id: i + 1, ...d })));
