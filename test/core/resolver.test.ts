/**
 * The scored identity resolver (src/core/resolver.ts): one vector that fires each rule and one that
 * must not, then properties (fast-check): no two devices ever hold one strong key, and the result
 * does not depend on anything but the keys.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { identityKeysOf, type IdentityKey } from '../../src/core/identity-keys.js';
import { MATCH_SCORE, RESOLVER_RULES, SHARED_AT, resolveIdentities, type ResolverHost, type StoredKey } from '../../src/core/resolver.js';
import type { ProbeResults } from '../../src/core/probe-results.js';

const SSH = 'SHA256:phoneHostKeyAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const SSH2 = 'SHA256:otherHostKeyBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';
const TLS = 'ab'.repeat(32);

function tls(keyHash: string, selfSigned = true, subject = 'CN=nas-alice'): NonNullable<ProbeResults['tls']>[number] {
  return {
    port: 443,
    subject,
    issuer: selfSigned ? subject : 'CN=R3, O=Let’s Encrypt',
    sans: [],
    notBefore: null,
    notAfter: null,
    keyHash,
    selfSigned,
  };
}

function host(deviceId: number, ip: string, mac: string | null, probes: ProbeResults, isNew = true, hostname: string | null = null): ResolverHost {
  return { deviceId, isNew, ip, mac, keys: identityKeysOf({ ip, mac, hostname, probes }) };
}

/** A known device's stored keys, as a scan recorded them. */
function stored(deviceId: number, ip: string, mac: string | null, probes: ProbeResults, hostname: string | null = null): StoredKey[] {
  return identityKeysOf({ ip, mac, hostname, probes })
    .filter((k) => k.strength !== 'excluded')
    .map((k: IdentityKey) => ({ deviceId, kind: k.kind, value: k.value, strength: k.strength }));
}

const phoneProbes: ProbeResults = {
  ssh: [{ port: 22, banner: 'SSH-2.0-dropbear', fingerprint: SSH }],
  mdns: { names: ['alices-phone.local'] },
} as ProbeResults;

describe('resolveIdentities: the rules', () => {
  it('same_device: a phone back with a new random MAC, the same mDNS name and host key, is the known device', () => {
    const r = resolveIdentities({
      hosts: [host(9, '10.66.0.40', '7A:00:00:00:00:02', phoneProbes)],
      stored: stored(3, '10.66.0.20', '7A:00:00:00:00:01', phoneProbes),
    });
    expect(r.folds).toEqual([expect.objectContaining({ deviceId: 9, into: 3, kind: 'same_device', score: 160 })]);
    expect(r.devices).toHaveLength(1);
    expect(r.devices[0].deviceId).toBe(3);
    expect(r.devices[0].decisions[0]).toMatchObject({
      rule: RESOLVER_RULES.sameDevice,
      explanation: expect.stringMatching(/SSH host key.*mDNS name/),
    });
    expect(r.devices[0].keys.find((k) => k.kind === 'ssh_host_key')?.strength).toBe('strong');
  });

  it('same_device does not fire on a new random MAC alone, nor on a new device with other keys', () => {
    const r = resolveIdentities({
      hosts: [host(9, '10.66.0.40', '7A:00:00:00:00:02', { mdns: { names: ['bobs-laptop.local'] } } as ProbeResults)],
      stored: stored(3, '10.66.0.20', '7A:00:00:00:00:01', phoneProbes),
    });
    expect(r.folds).toEqual([]);
    expect(r.devices.map((d) => d.deviceId)).toEqual([9]);
  });

  it('second_address: two addresses of one scan with the same strong keys are one device (a NAS with two NICs)', () => {
    const nas = { ssh: [{ port: 22, banner: 'x', fingerprint: SSH }], tls: [tls(TLS)] } as ProbeResults;
    const r = resolveIdentities({
      hosts: [host(5, '10.66.0.30', '00:11:32:00:00:01', nas), host(6, '10.66.0.31', '00:11:32:00:00:02', nas)],
      stored: [],
    });
    expect(r.folds).toEqual([expect.objectContaining({ deviceId: 6, into: 5, kind: 'second_address', score: 200 })]);
    expect(r.devices.map((d) => d.deviceId)).toEqual([5]);
    // Both NICs' MACs are keys of the one device.
    expect(
      r.devices[0].keys
        .filter((k) => k.kind === 'mac')
        .map((k) => [k.value, k.strength])
        .sort(),
    ).toEqual([
      ['00:11:32:00:00:01', 'strong'],
      ['00:11:32:00:00:02', 'strong'],
    ]);
  });

  it('second_address into a known device seen in the same scan; never between two devices that already existed', () => {
    const nas = { ssh: [{ port: 22, banner: 'x', fingerprint: SSH }] } as ProbeResults;
    const known = stored(5, '10.66.0.30', '00:11:32:00:00:01', nas);
    const folded = resolveIdentities({
      hosts: [host(5, '10.66.0.30', '00:11:32:00:00:01', nas, false), host(6, '10.66.0.31', '00:11:32:00:00:02', nas)],
      stored: known,
    });
    expect(folded.folds).toEqual([expect.objectContaining({ deviceId: 6, into: 5, kind: 'second_address' })]);
    const both = resolveIdentities({
      hosts: [host(5, '10.66.0.30', '00:11:32:00:00:01', nas, false), host(6, '10.66.0.31', '00:11:32:00:00:02', nas, false)],
      stored: known,
    });
    expect(both.folds).toEqual([]);
    expect(both.devices.find((d) => d.deviceId === 6)?.keys.find((k) => k.kind === 'ssh_host_key')?.strength).toBe('weak');
  });

  it(`shared_key: a key offered by ${SHARED_AT} or more devices (a reverse proxy) identifies none of them`, () => {
    const proxied = { tls: [tls(TLS)] } as ProbeResults;
    const hosts = [1, 2, 3, 4].map((i) => host(i, `10.66.0.${50 + i}`, `00:16:3E:00:00:0${i}`, proxied));
    const r = resolveIdentities({ hosts, stored: [] });
    expect(r.folds).toEqual([]);
    expect(r.devices).toHaveLength(4);
    for (const d of r.devices) {
      expect(d.keys.find((k) => k.kind === 'tls_certificate')).toMatchObject({ strength: 'weak', reason: expect.stringMatching(/4 devices/) });
      expect(d.decisions).toContainEqual(expect.objectContaining({ rule: RESOLVER_RULES.sharedKey }));
    }
  });

  it('shared_key does not fire for a key two devices offer', () => {
    const proxied = { tls: [tls(TLS)] } as ProbeResults;
    const r = resolveIdentities({ hosts: [host(1, '10.66.0.51', '00:16:3E:00:00:01', proxied)], stored: stored(2, '10.66.0.52', null, proxied) });
    expect(r.devices[0].decisions.map((d) => d.rule)).not.toContain(RESOLVER_RULES.sharedKey);
    expect(r.folds).toHaveLength(1);
  });

  it('conflicting_key: the same certificate but different SSH host keys are two devices', () => {
    const a = { tls: [tls(TLS)], ssh: [{ port: 22, banner: 'x', fingerprint: SSH }] } as ProbeResults;
    const b = { tls: [tls(TLS)], ssh: [{ port: 22, banner: 'x', fingerprint: SSH2 }] } as ProbeResults;
    const r = resolveIdentities({ hosts: [host(9, '10.66.0.40', null, b)], stored: stored(3, '10.66.0.20', null, a) });
    expect(r.folds).toEqual([]);
    expect(r.devices[0].decisions).toContainEqual(
      expect.objectContaining({ rule: RESOLVER_RULES.conflict, explanation: expect.stringMatching(/SSH host keys differ/) }),
    );
    // No conflict where one side has no SSH key at all.
    const c = { tls: [tls(TLS)] } as ProbeResults;
    expect(resolveIdentities({ hosts: [host(9, '10.66.0.40', null, c)], stored: stored(3, '10.66.0.20', null, a) }).folds).toHaveLength(1);
  });

  it('below_threshold: one medium key (a name) is not enough; two agreeing ones are', () => {
    const one = resolveIdentities({
      hosts: [host(9, '10.66.0.40', '7A:00:00:00:00:02', { mdns: { names: ['alices-phone.local'] } } as ProbeResults)],
      stored: stored(3, '10.66.0.20', '7A:00:00:00:00:01', { mdns: { names: ['alices-phone.local'] } } as ProbeResults),
    });
    expect(one.folds).toEqual([]);
    expect(one.devices[0].decisions).toContainEqual(expect.objectContaining({ rule: RESOLVER_RULES.belowThreshold }));
    const two = { mdns: { names: ['alices-phone.local'] }, netbios: { name: 'ALICES-PHONE', mac: null } } as unknown as ProbeResults;
    const r = resolveIdentities({
      hosts: [host(9, '10.66.0.40', '7A:00:00:00:00:02', two)],
      stored: stored(3, '10.66.0.20', '7A:00:00:00:00:01', two),
    });
    expect(r.folds).toEqual([expect.objectContaining({ into: 3, score: 120 })]);
    expect(120).toBeGreaterThanOrEqual(MATCH_SCORE);
  });

  it('weak keys alone never decide (default names, host names)', () => {
    const probes = { mdns: { names: ['iphone.local'] } } as ProbeResults;
    const r = resolveIdentities({
      hosts: [host(9, '10.66.0.40', '7A:00:00:00:00:02', probes, true, 'iphone.lan')],
      stored: stored(3, '10.66.0.20', '7A:00:00:00:00:01', probes, 'iphone.lan'),
    });
    expect(r.folds).toEqual([]);
    expect(r.devices[0].decisions[0]?.explanation).toMatch(/weak keys only/);
  });

  it('excluded MACs (VRRP/CARP/HSRP) and addresses never match', () => {
    const r = resolveIdentities({
      hosts: [host(9, '10.66.0.1', '00:00:5E:00:01:01', {})],
      stored: stored(3, '10.66.0.1', '00:00:5E:00:01:01', {}),
    });
    expect(r.folds).toEqual([]);
    // A globally unique MAC does (a NIC of a device the resolver already knows by its keys).
    const g = resolveIdentities({ hosts: [host(9, '10.66.0.9', '00:11:32:00:00:02', {})], stored: stored(3, '10.66.0.1', '00:11:32:00:00:02', {}) });
    expect(g.folds).toEqual([expect.objectContaining({ into: 3 })]);
  });

  it('separated_by_person: devices a person separated are never folded together', () => {
    const r = resolveIdentities({
      hosts: [host(9, '10.66.0.40', '7A:00:00:00:00:02', phoneProbes)],
      stored: stored(3, '10.66.0.20', '7A:00:00:00:00:01', phoneProbes),
      separated: [[3, 9]],
    });
    expect(r.folds).toEqual([]);
    expect(r.devices[0].decisions).toContainEqual(expect.objectContaining({ rule: RESOLVER_RULES.separated }));
    expect(
      resolveIdentities({
        hosts: [host(9, '10.66.0.40', '7A:00:00:00:00:02', phoneProbes)],
        stored: stored(3, '10.66.0.20', '7A:00:00:00:00:01', phoneProbes),
        separated: [[3, 8]],
      }).folds,
    ).toHaveLength(1);
  });

  it('ambiguous_match: two candidates with the same best score leave the device new', () => {
    const probes = { ssh: [{ port: 22, banner: 'x', fingerprint: SSH }], ssdp: { udn: 'uuid:12345678-aaaa-bbbb-cccc-000000000001' } } as ProbeResults;
    const r = resolveIdentities({
      hosts: [host(9, '10.66.0.40', null, probes)],
      stored: [...stored(3, '10.66.0.20', null, { ssh: probes.ssh }), ...stored(4, '10.66.0.21', null, { ssdp: probes.ssdp })],
    });
    expect(r.folds).toEqual([]);
    expect(r.devices[0].decisions).toContainEqual(expect.objectContaining({ rule: RESOLVER_RULES.ambiguous }));
  });
});

describe('resolveIdentities: properties', () => {
  const KEYS = [
    { kind: 'ssh_host_key', value: 'k1' },
    { kind: 'ssh_host_key', value: 'k2' },
    { kind: 'upnp_udn', value: 'uuid:1' },
    { kind: 'mdns_name', value: 'a.local' },
    { kind: 'mac', value: '00:11:32:00:00:01' },
    { kind: 'mac', value: '7A:00:00:00:00:01' },
    { kind: 'tls_certificate', value: 'cc' },
  ] as const;
  const keyArb = fc.record({
    key: fc.constantFrom(...KEYS),
    strength: fc.constantFrom<IdentityKey['strength']>('strong', 'medium', 'weak', 'excluded'),
  });
  const hostsArb = fc.array(fc.record({ isNew: fc.boolean(), keys: fc.array(keyArb, { maxLength: 4 }) }), { maxLength: 6 });
  // Known devices 100.., with their stored keys (the property keeps each strong key on one of them, as the database's unique index does).
  const storedArb = fc.array(fc.array(keyArb, { maxLength: 3 }), { maxLength: 4 }).map((devices) =>
    devices.flatMap((keys, i) =>
      keys
        .filter((k) => k.strength !== 'excluded')
        .map((k) => ({ deviceId: 100 + i, kind: k.key.kind, value: k.key.value, strength: k.strength }))
        .filter((k, j, all) => all.findIndex((o) => o.kind === k.kind && o.value === k.value) === j),
    ),
  );

  it('no two devices ever hold one strong key', () => {
    fc.assert(
      fc.property(hostsArb, storedArb, (hosts, storedKeys) => {
        // A strong key the stored devices hold at most once (unique index).
        const seen = new Set<string>();
        const known = storedKeys.filter((k) => k.strength !== 'strong' || (!seen.has(`${k.kind} ${k.value}`) && seen.add(`${k.kind} ${k.value}`)));
        const input = {
          hosts: hosts.map((h, i) => ({
            deviceId: h.isNew ? 1 + i : 100 + i,
            isNew: h.isNew,
            ip: `10.66.0.${10 + i}`,
            mac: null,
            keys: h.keys.map((k) => ({ ...k.key, strength: k.strength, source: 'test', reason: '' })),
          })),
          stored: known,
        };
        const r = resolveIdentities(input);
        const holder = new Map<string, number>();
        for (const k of known) if (k.strength === 'strong') holder.set(`${k.kind} ${k.value}`, k.deviceId);
        for (const d of r.devices) {
          for (const k of d.keys) {
            if (k.strength !== 'strong') continue;
            const id = `${k.kind} ${k.value}`;
            const other = holder.get(id);
            expect(other === undefined || other === d.deviceId, `${id} on ${d.deviceId} and ${other}`).toBe(true);
            holder.set(id, d.deviceId);
          }
        }
        // Only devices created by this scan are folded, into a device that stays.
        const created = new Set(input.hosts.filter((h) => h.isNew).map((h) => h.deviceId));
        const kept = new Set(r.devices.map((d) => d.deviceId));
        for (const f of r.folds) {
          expect(created.has(f.deviceId)).toBe(true);
          expect(kept.has(f.deviceId)).toBe(false);
        }
        // Every host ends on exactly one device.
        const folded = new Set(r.folds.map((f) => f.deviceId));
        for (const h of input.hosts) expect(kept.has(h.deviceId) !== folded.has(h.deviceId)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
