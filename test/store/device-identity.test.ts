/**
 * The identity store (migration 015, src/store/identity.ts) on both stores: keys with first and
 * last sighting, a strong key that belongs to one device only (the database enforces it too),
 * evidence replaced by each recognition, the recognised fields written unless a person set them,
 * decisions, the hand-back of a person's type to discovery, and the device search over what runs
 * on a device (services, products, versions, CVE ids, model, type).
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IdentityKey } from '../../src/core/identity-keys.js';
import { ipv4ToInt } from '../../src/core/net.js';
import type { DeviceRecognitionRecord } from '../../src/store/identity.js';
import type { Store } from '../../src/store/index.js';
import { testDatabases, type TestDatabase } from '../helpers/databases.js';

type Opened = Awaited<ReturnType<TestDatabase['open']>>;

const T1 = '2026-01-05T10:00:00.000Z';
const T2 = '2026-01-06T10:00:00.000Z';

async function addDevice(store: Store, ip: string) {
  return store.devices.insert({ identity: `ip:${ip}`, ip_address: ip, ip_sort: ipv4ToInt(ip), first_seen: T1, last_seen: T1 });
}

const sshKey: IdentityKey = { kind: 'ssh_host_key', value: 'SHA256:abcdefghijklmnop', source: 'ssh', strength: 'strong', reason: 'host key' };
const ipKey = (ip: string): IdentityKey => ({ kind: 'ip', value: ip, source: 'scan', strength: 'weak', reason: 'address' });
const localhost: IdentityKey = { kind: 'hostname', value: 'localhost', source: 'dns', strength: 'excluded', reason: 'no device' };

function record(deviceId: number, overrides: Partial<DeviceRecognitionRecord> = {}): DeviceRecognitionRecord {
  return {
    deviceId,
    keys: [sshKey, ipKey('10.9.0.1'), localhost],
    fields: {
      device_type: 'nas',
      type_confidence: 88,
      vendor: 'Synology',
      model: 'DS920+',
      os_name: 'DSM',
      os_version: '7.2',
      discovered_name: 'diskstation',
    },
    evidence: [
      { field: 'name', value: 'diskstation', source: 'mdns', detail: 'mDNS name "diskstation.local"', confidence: 80 },
      { field: 'device_type', value: 'nas', source: 'http_title', detail: 'HTTP title "Synology DiskStation" matches DSM', confidence: 85 },
    ],
    reason: 'Synology NAS (HTTP)',
    decisions: [{ rule: 'new_device', explanation: 'First seen at 10.9.0.1 (no MAC seen)' }],
    ...overrides,
  };
}

describe.each(testDatabases())('identity store ($kind)', (database) => {
  let db: Opened;
  let store: Store;

  beforeEach(async () => {
    db = await database.open();
    store = db.store;
  });
  afterEach(() => db?.cleanup());

  it('records keys, evidence, recognised fields and decisions, and reads them back in the API shape', async () => {
    const device = await addDevice(store, '10.9.0.1');
    expect(await store.identity.get(device.id + 1000)).toBeUndefined();
    expect(await store.identity.get(device.id)).toEqual({ keys: [], evidence: [], decisions: [] });

    await store.identity.recordRecognition(null, [record(device.id)], T1);
    const one = await store.identity.get(device.id);
    // Excluded keys (localhost) are not kept; the strong key first.
    expect(one!.keys).toEqual([
      { kind: 'ssh_host_key', value: sshKey.value, source: 'ssh', first_seen: T1, last_seen: T1 },
      { kind: 'ip', value: '10.9.0.1', source: 'scan', first_seen: T1, last_seen: T1 },
    ]);
    expect(one!.evidence).toEqual(record(device.id).evidence.map((e) => ({ ...e, observed_at: T1 })));
    expect(one!.decisions).toEqual([
      { scan_id: null, rule: 'recognition', explanation: 'Synology NAS (HTTP)', at: T1 },
      { scan_id: null, rule: 'new_device', explanation: 'First seen at 10.9.0.1 (no MAC seen)', at: T1 },
    ]);
    const [summary] = await store.devices.summariesOf([device.id]);
    expect(summary).toMatchObject({
      name: 'diskstation',
      device_type: 'nas',
      type_confidence: 88,
      vendor: 'Synology',
      model: 'DS920+',
      os_name: 'DSM',
      os_version: '7.2',
    });

    // The same again a day later: the keys' last sighting moves, the evidence is replaced, and an unchanged result is no new decision.
    await store.identity.recordRecognition(null, [record(device.id, { evidence: [], decisions: [] })], T2);
    const two = await store.identity.get(device.id);
    expect(two!.keys.map((k) => [k.kind, k.first_seen, k.last_seen])).toEqual([
      ['ssh_host_key', T1, T2],
      ['ip', T1, T2],
    ]);
    expect(two!.evidence).toEqual([]);
    expect(two!.decisions).toHaveLength(2);
  });

  it('records a batch as it records one device after the other: keys and evidence seen again, changed or new (property)', async () => {
    const other = await database.open();
    try {
      const keyArb = fc.record({
        kind: fc.constantFrom('ssh_host_key', 'mdns_name'),
        value: fc.constantFrom('a', 'b', 'c'),
        source: fc.constantFrom('ssh', 'mdns'),
        strength: fc.constantFrom('strong' as const, 'medium' as const, 'weak' as const),
        reason: fc.constant('test'),
      });
      const evidenceArb = fc.record({
        field: fc.constantFrom('device_type', 'vendor'),
        value: fc.constantFrom('nas', 'Synology'),
        source: fc.constant('snmp'),
        detail: fc.constantFrom('x', 'y'),
        confidence: fc.constantFrom(40, 80.4),
      });
      const roundArb = fc.array(
        fc.record({
          keys: fc.uniqueArray(keyArb, { maxLength: 3, selector: (k) => `${k.kind} ${k.value}` }),
          evidence: fc.array(evidenceArb, { maxLength: 3 }),
          type: fc.constantFrom('nas', 'unknown'),
        }),
        { minLength: 3, maxLength: 3 },
      );
      await fc.assert(
        fc.asyncProperty(fc.array(roundArb, { minLength: 2, maxLength: 3 }), async (rounds) => {
          const ids: number[][] = [];
          for (const s of [store, other.store]) {
            for (const t of ['identity_decisions', 'device_evidence', 'device_identity_keys', 'devices'] as const) await s.db.deleteFrom(t).execute();
            const made: number[] = [];
            for (const ip of ['10.9.1.1', '10.9.1.2', '10.9.1.3']) made.push((await addDevice(s, ip)).id);
            ids.push(made);
          }
          for (const [n, round] of rounds.entries()) {
            const at = new Date(Date.UTC(2026, 1, 1 + n)).toISOString();
            const records = (devices: number[]) =>
              round.map((r, i) => record(devices[i], { keys: r.keys, evidence: r.evidence, fields: { ...record(0).fields, device_type: r.type } }));
            await store.identity.recordRecognition(null, records(ids[0]), at);
            // A device listed twice (one that does not exist) makes the store record one device after the other (recordOne).
            const ghost = record(999_999);
            await other.store.identity.recordRecognition(null, [...records(ids[1]), ghost, ghost], at);
          }
          for (let i = 0; i < 3; i++) {
            // The same rows, the holder of a strong key named by its position.
            const one = JSON.stringify(await store.identity.get(ids[0][i])).replaceAll(
              /device \d+/g,
              (m) => `device ${ids[0].indexOf(Number(m.slice(7)))}`,
            );
            const each = JSON.stringify(await other.store.identity.get(ids[1][i])).replaceAll(
              /device \d+/g,
              (m) => `device ${ids[1].indexOf(Number(m.slice(7)))}`,
            );
            expect(one).toEqual(each);
          }
        }),
        { numRuns: 30 },
      );
    } finally {
      await other.cleanup();
    }
  }, 120_000);

  it('never gives a strong key to a second device, and the database refuses it too', async () => {
    const a = await addDevice(store, '10.9.0.1');
    const b = await addDevice(store, '10.9.0.2');
    await store.identity.recordRecognition(null, [record(a.id)], T1);
    await store.identity.recordRecognition(null, [record(b.id, { keys: [sshKey, ipKey('10.9.0.2')], decisions: [] })], T2);
    const bKeys = (await store.identity.get(b.id))!.keys;
    expect(bKeys.map((k) => k.kind)).toEqual(['ip']);
    const decisions = (await store.identity.get(b.id))!.decisions;
    expect(decisions.find((d) => d.rule === 'strong_key_held')?.explanation).toContain(`device ${a.id}`);
    await expect(
      store.db
        .insertInto('device_identity_keys')
        .values({ device_id: b.id, kind: sshKey.kind, value: sshKey.value, strength: 'strong', source: 'ssh', first_seen: T2, last_seen: T2 })
        .execute(),
    ).rejects.toThrow();
    // A weak key may be shared (two devices behind one address over time).
    await store.identity.recordRecognition(null, [record(b.id, { keys: [ipKey('10.9.0.1')], decisions: [] })], T2);
    expect((await store.identity.get(b.id))!.keys.map((k) => k.value)).toContain('10.9.0.1');
  });

  it('never overwrites a name or type a person set; null hands the type back to discovery', async () => {
    const device = await addDevice(store, '10.9.0.1');
    await store.identity.recordRecognition(null, [record(device.id)], T1);
    await store.devices.updateUserFields(device.id, { name: 'Backup box', device_type: 'server' });
    await store.identity.recordRecognition(null, [record(device.id, { fields: { ...record(device.id).fields, discovered_name: 'ds-new' } })], T2);
    let [summary] = await store.devices.summariesOf([device.id]);
    expect(summary).toMatchObject({ name: 'Backup box', label: 'Backup box', device_type: 'server', type_confidence: 100 });
    const evidence = (await store.identity.get(device.id))!.evidence;
    expect(evidence.slice(0, 2).map((e) => [e.field, e.value, e.source, e.confidence])).toEqual([
      ['name', 'Backup box', 'user', 100],
      ['device_type', 'server', 'user', 100],
    ]);

    await store.devices.updateUserFields(device.id, { device_type: null, name: null });
    [summary] = await store.devices.summariesOf([device.id]);
    // The name falls back to the one discovered; the type to the strongest evidence for it.
    expect(summary).toMatchObject({ name: 'ds-new', label: null, device_type: 'nas', type_confidence: 85 });
    expect((await store.identity.get(device.id))!.evidence.some((e) => e.source === 'user')).toBe(false);
    // A recognition that finds nothing leaves known fields, and `unknown` stays a listed type.
    await store.identity.recordRecognition(
      null,
      [
        record(device.id, {
          fields: { device_type: 'unknown', type_confidence: 0, vendor: null, model: null, os_name: null, os_version: null, discovered_name: null },
        }),
      ],
      T2,
    );
    [summary] = await store.devices.summariesOf([device.id]);
    expect(summary).toMatchObject({ device_type: 'nas', vendor: 'Synology', model: 'DS920+', name: 'ds-new' });
  });

  it('removes keys, evidence and decisions with their device', async () => {
    const device = await addDevice(store, '10.9.0.1');
    await store.identity.recordRecognition(null, [record(device.id)], T1);
    await store.db.deleteFrom('devices').where('id', '=', device.id).execute();
    for (const table of ['device_identity_keys', 'device_evidence', 'identity_decisions'] as const) {
      const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(store.db);
      expect(Number(rows[0].n), table).toBe(0);
    }
  });

  it('searches services, products, versions, CVE ids, model and type', async () => {
    const nas = await addDevice(store, '10.9.0.1');
    const other = await addDevice(store, '10.9.0.2');
    await store.identity.recordRecognition(null, [record(nas.id, { keys: [] })], T1);
    await store.db
      .insertInto('ports')
      .values({
        device_id: other.id,
        port: 6379,
        protocol: 'tcp',
        state: 'open',
        service: 'redis',
        product: 'Redis key-value store',
        version: '6.0.9',
        extra_info: null,
        cpe: '[]',
        first_seen: T1,
        last_seen: T1,
      })
      .execute();
    await store.db
      .insertInto('cve_matches')
      .values({
        device_id: other.id,
        scan_id: null,
        cve_id: 'CVE-2021-32675',
        severity: 'high',
        cvss_score: 7.5,
        remediation: null,
        confidence: 'confirmed',
        port: 6379,
        matched_product: 'redis',
        matched_version: '6.0.9',
      })
      .execute();
    const ids = async (search: string) => (await store.devices.list({ search, limit: 100, offset: 0 })).rows.map((d) => d.id);
    expect(await ids('redis')).toEqual([other.id]);
    expect(await ids('KEY-VALUE')).toEqual([other.id]);
    expect(await ids('6.0.9')).toEqual([other.id]);
    expect(await ids('cve-2021-32675')).toEqual([other.id]);
    expect(await ids('ds920')).toEqual([nas.id]);
    expect(await ids('nas')).toEqual([nas.id]);
    expect(await ids('nothing like it')).toEqual([]);
  });

  it('finds a device by what it is recognised as now, not by what it was recognised as before', async () => {
    const device = await addDevice(store, '10.9.0.1');
    const other = await addDevice(store, '10.9.0.2');
    const ids = async (search: string) => (await store.devices.list({ search, limit: 100, offset: 0 })).rows.map((d) => d.id);
    await store.identity.recordRecognition(null, [record(device.id, { keys: [] })], T1);
    expect(await ids('synology')).toEqual([device.id]);
    expect(await ids('ds920')).toEqual([device.id]);
    expect(await ids('dsm')).toEqual([device.id]);

    // Recognised again as something else: the index follows (same terms, other device untouched).
    const fields = {
      device_type: 'router',
      type_confidence: 90,
      vendor: 'Ubiquiti',
      model: 'EdgeRouter X',
      os_name: 'EdgeOS',
      os_version: '2.0',
      discovered_name: 'erx',
    };
    await store.identity.recordRecognition(null, [record(device.id, { keys: [], fields })], T2);
    expect(await ids('synology')).toEqual([]);
    expect(await ids('ds920')).toEqual([]);
    expect(await ids('dsm')).toEqual([]);
    expect(await ids('ubiquiti')).toEqual([device.id]);
    expect(await ids('edgerouter')).toEqual([device.id]);
    expect(await ids('edgeos')).toEqual([device.id]);
    expect(await ids('router')).toEqual([device.id]);
    expect(await ids('10.9.0.2')).toEqual([other.id]);

    // Deleted: found by nothing, and the other device still by its own text.
    await store.db.deleteFrom('devices').where('id', '=', device.id).execute();
    expect(await ids('ubiquiti')).toEqual([]);
    expect(await ids('10.9.0.')).toEqual([other.id]);
  });
});
