import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matchHosts, type IdentityResolution, type KnownDevice } from '../../src/core/identity.js';
import { normalizeMac } from '../../src/core/mac.js';
import type { DiscoveredHost } from '../../src/core/model.js';
import { knownArb, reportArb } from '../helpers/identity-arbitraries.js';

const host = (ip: string, mac: string | null = null): DiscoveredHost => ({ ip, mac, vendor: null, hostname: null });
const device = (id: number, identity: string, ip: string, mac: string | null, last_seen = '2026-01-01T00:00:00.000Z'): KnownDevice => ({
  id,
  identity,
  ip_address: ip,
  mac_address: mac,
  last_seen,
});

const M1 = 'B8:27:EB:66:00:01';
const M2 = '00:1C:42:66:00:02';
const M4 = '00:16:3E:66:00:04';

/** The guarantees of src/core/identity.ts, checked on one resolution; throws on the first broken one. */
function checkGuarantees(hosts: DiscoveredHost[], known: KnownDevice[], result: IdentityResolution): void {
  const { decisions, dropped } = result;
  const byId = new Map(known.map((d) => [d.id, d]));

  // Every host is accounted for, once.
  expect(decisions.length + dropped.length).toBe(hosts.length);
  for (const d of dropped) expect(d.reason.length).toBeGreaterThan(0);

  // Identities unique among the decisions, and never another known device's.
  const identities = decisions.map((d) => d.identity);
  expect(new Set(identities).size).toBe(identities.length);
  for (const d of decisions) {
    const holder = known.find((k) => k.identity === d.identity);
    if (holder) expect(d.deviceId, `${d.identity} belongs to device #${holder.id}`).toBe(holder.id);
  }

  // Each known device at most once, and only devices that exist.
  const ids = decisions.flatMap((d) => (d.deviceId === null ? [] : [d.deviceId]));
  expect(new Set(ids).size).toBe(ids.length);
  for (const id of ids) expect(byId.has(id)).toBe(true);

  for (const d of decisions) {
    // A recorded MAC is normalised, and a host with a MAC is the device of that MAC.
    if (d.host.mac) {
      expect(normalizeMac(d.host.mac)).toBe(d.host.mac);
      expect(d.identity).toBe(`mac:${d.host.mac}`);
    } else if (d.deviceId === null) {
      expect(d.identity).toBe(`ip:${d.host.ip}`);
    }
    // A known device keeps its identity, or trades an address identity for its first MAC.
    if (d.deviceId !== null) {
      const before = byId.get(d.deviceId)!;
      if (d.identity !== before.identity) {
        expect(before.identity).toBe(`ip:${d.host.ip}`);
        expect(before.mac_address).toBeNull();
        expect(d.identity).toBe(`mac:${d.host.mac}`);
      }
    }
  }

  // No address that answered is lost: each valid address reported is recorded at least once.
  const reported = new Set(hosts.map((h) => h.ip));
  expect(new Set(decisions.map((d) => d.host.ip))).toEqual(reported);
}

describe('matchHosts (properties)', () => {
  it('never gives an identity twice or another device’s, never uses a device twice, loses no address', () => {
    fc.assert(
      fc.property(knownArb, reportArb, (known, hosts) => {
        checkGuarantees(hosts, known, matchHosts(hosts, known));
      }),
      { numRuns: 3000 },
    );
  });

  it('a MAC reported once is the device with that MAC, whatever its address now', () => {
    fc.assert(
      fc.property(knownArb, reportArb, (known, hosts) => {
        const { decisions } = matchHosts(hosts, known);
        const macs = hosts.map((h) => normalizeMac(h.mac)).filter((m): m is string => m !== null);
        for (const d of decisions) {
          if (!d.host.mac || macs.filter((m) => m === d.host.mac).length !== 1) continue;
          const owner = known.find((k) => k.identity === `mac:${d.host.mac}`);
          if (owner) expect(d.deviceId).toBe(owner.id);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('gives the same answer for the same input (no hidden state, no dependence on Map order)', () => {
    fc.assert(
      fc.property(knownArb, reportArb, (known, hosts) => {
        expect(matchHosts(hosts, known)).toEqual(matchHosts(hosts, known));
      }),
      { numRuns: 500 },
    );
  });
});

describe('matchHosts (the rules)', () => {
  it('same MAC at a new address: the same device, its identity kept', () => {
    const { decisions, dropped } = matchHosts([host('10.0.0.10', M4)], [device(4, `mac:${M4}`, '10.0.0.14', M4)]);
    expect(dropped).toEqual([]);
    expect(decisions).toEqual([{ host: host('10.0.0.10', M4), deviceId: 4, identity: `mac:${M4}`, reason: null }]);
  });

  it('the same MAC at the old and the new address (a stale neighbour entry): one device, the other address by its address only', () => {
    const known = [device(4, `mac:${M4}`, '10.0.0.14', M4), device(1, `mac:${M1}`, '10.0.0.11', M1)];
    const { decisions, dropped } = matchHosts([host('10.0.0.10', M4), host('10.0.0.11', M1), host('10.0.0.14', M4)], known);
    expect(dropped).toEqual([]);
    expect(decisions.map((d) => [d.host.ip, d.host.mac, d.deviceId, d.identity])).toEqual([
      ['10.0.0.10', null, null, 'ip:10.0.0.10'],
      ['10.0.0.11', M1, 1, `mac:${M1}`],
      // The address where the device was last seen keeps the MAC.
      ['10.0.0.14', M4, 4, `mac:${M4}`],
    ]);
    expect(decisions[0].reason).toBe(
      `MAC ${M4} answered at 10.0.0.10, 10.0.0.14; it stays with 10.0.0.14 (where device #4 was last seen), 10.0.0.10 is recorded by its address only`,
    );
  });

  it('the same MAC at two addresses of a new device: the first reported keeps it', () => {
    const { decisions } = matchHosts([host('10.0.0.20', M2), host('10.0.0.21', M2)], []);
    expect(decisions.map((d) => [d.host.ip, d.identity, d.reason !== null])).toEqual([
      ['10.0.0.20', `mac:${M2}`, false],
      ['10.0.0.21', 'ip:10.0.0.21', true],
    ]);
  });

  it('a MAC seen late: the device seen at that address without a MAC gains it', () => {
    const { decisions } = matchHosts([host('10.0.0.5', M1)], [device(7, 'ip:10.0.0.5', '10.0.0.5', null)]);
    expect(decisions).toEqual([{ host: host('10.0.0.5', M1), deviceId: 7, identity: `mac:${M1}`, reason: null }]);
  });

  it('a MAC not seen this time: the device last seen at that address, its MAC identity kept', () => {
    const known = [
      device(1, 'ip:10.0.0.5', '10.0.0.5', null, '2026-01-01T00:00:00.000Z'),
      device(2, `mac:${M2}`, '10.0.0.5', M2, '2026-01-02T00:00:00.000Z'),
    ];
    const { decisions } = matchHosts([host('10.0.0.5')], known);
    expect(decisions).toEqual([{ host: host('10.0.0.5'), deviceId: 2, identity: `mac:${M2}`, reason: null }]);
  });

  it('a device found elsewhere by its MAC is not also the host without a MAC at its old address', () => {
    const known = [device(2, `mac:${M2}`, '10.0.0.5', M2)];
    const { decisions, dropped } = matchHosts([host('10.0.0.5'), host('10.0.0.6', M2)], known);
    expect(dropped).toEqual([]);
    expect(decisions.map((d) => [d.host.ip, d.deviceId, d.identity])).toEqual([
      ['10.0.0.5', null, 'ip:10.0.0.5'],
      ['10.0.0.6', 2, `mac:${M2}`],
    ]);
    expect(decisions[0].reason).toBe('device #2, last seen at 10.0.0.5, was found at 10.0.0.6 by its MAC');
  });

  it('two hosts swapping addresses stay themselves', () => {
    const known = [device(1, `mac:${M1}`, '10.0.0.1', M1), device(2, `mac:${M2}`, '10.0.0.2', M2)];
    const { decisions } = matchHosts([host('10.0.0.1', M2), host('10.0.0.2', M1)], known);
    expect(decisions.map((d) => [d.host.ip, d.deviceId])).toEqual([
      ['10.0.0.1', 2],
      ['10.0.0.2', 1],
    ]);
  });

  it('one address reported twice: once with and once without a MAC, or twice alike, is one host', () => {
    const withAndWithout = matchHosts([host('10.0.0.5'), host('10.0.0.5', M1)], []);
    expect(withAndWithout.decisions.map((d) => d.identity)).toEqual([`mac:${M1}`]);
    expect(withAndWithout.dropped.map((d) => d.reason)).toEqual([
      `10.0.0.5 was reported with MAC ${M1} and without one; the report with the MAC was kept`,
    ]);

    const twice = matchHosts([host('10.0.0.5', M1.toLowerCase()), host('10.0.0.5', M1)], []);
    expect(twice.decisions.map((d) => [d.host.mac, d.identity])).toEqual([[M1, `mac:${M1}`]]);
    expect(twice.dropped).toHaveLength(1);

    // Two MACs at one address are two devices (an address conflict).
    const conflict = matchHosts([host('10.0.0.5', M1), host('10.0.0.5', M2)], []);
    expect(conflict.decisions.map((d) => d.identity)).toEqual([`mac:${M1}`, `mac:${M2}`]);
  });

  it('an identity held by a device given to another host is not created again: that host is dropped with a reason', () => {
    // 10.0.0.5 answers with M1 (the address device gains it) and with M2, whose own device is at
    // 10.0.0.6 with M2 too: 10.0.0.5's M2 report becomes address-only and ip:10.0.0.5 is taken.
    const known = [device(7, 'ip:10.0.0.5', '10.0.0.5', null), device(2, `mac:${M2}`, '10.0.0.6', M2)];
    const { decisions, dropped } = matchHosts([host('10.0.0.5', M1), host('10.0.0.5', M2), host('10.0.0.6', M2)], known);
    expect(decisions.map((d) => [d.host.ip, d.deviceId, d.identity])).toEqual([
      ['10.0.0.5', 7, `mac:${M1}`],
      ['10.0.0.6', 2, `mac:${M2}`],
    ]);
    expect(dropped.map((d) => d.reason)).toEqual([
      `10.0.0.5 not recorded: device #7 holds identity ip:10.0.0.5 and this scan gave it to 10.0.0.5 (${M1})`,
    ]);
  });

  it('normalises MACs and treats junk as no MAC', () => {
    const { decisions } = matchHosts(
      [
        { ip: '10.0.0.1', mac: 'b8-27-eb-66-00-01', vendor: 'Raspberry Pi Foundation', hostname: null },
        { ip: '10.0.0.2', mac: '00:00:00:00:00:00', vendor: 'bogus', hostname: null },
      ],
      [device(1, `mac:${M1}`, '10.0.0.9', M1)],
    );
    expect(decisions.map((d) => [d.host.mac, d.host.vendor, d.deviceId, d.identity])).toEqual([
      [M1, 'Raspberry Pi Foundation', 1, `mac:${M1}`],
      [null, null, null, 'ip:10.0.0.2'],
    ]);
    expect(matchHosts([host('not-an-ip', M1)], []).dropped.map((d) => d.reason)).toEqual(['host "not-an-ip" not recorded: not an IPv4 address']);
  });
});
