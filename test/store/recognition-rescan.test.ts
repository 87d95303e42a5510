/**
 * A rescan's recording of recognition (src/store/identity.ts) on both stores: evidence compared by
 * its digest (migration 025) is replaced exactly when it differs, also when rows were moved in
 * (as a merge moves them) or the digest is not known; and the stored keys the resolution read
 * (keysOfHolders), handed to recordRecognition, give the same rows as reading them again.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IdentityKey } from '../../src/core/identity-keys.js';
import { ipv4ToInt } from '../../src/core/net.js';
import type { DeviceRecognitionRecord } from '../../src/store/identity.js';
import type { Store } from '../../src/store/index.js';
import { testDatabases, type TestDatabase } from '../helpers/databases.js';

type Opened = Awaited<ReturnType<TestDatabase['open']>>;

const T = (n: number) => new Date(Date.UTC(2026, 0, n)).toISOString();
const ssh = (v: string): IdentityKey => ({ kind: 'ssh_host_key', value: `SHA256:${v}`, source: 'ssh', strength: 'strong', reason: 'host key' });
const ipKey = (ip: string): IdentityKey => ({ kind: 'ip', value: ip, source: 'scan', strength: 'weak', reason: 'address' });
const E1 = [
  { field: 'vendor', value: 'HP', source: 'oui', detail: 'MAC vendor "Hewlett Packard"', confidence: 50 },
  { field: 'device_type', value: 'workstation', source: 'port_product', detail: 'RDP open', confidence: 60 },
];
const E2 = [E1[0], { ...E1[1], detail: 'RDP and SMB open' }];

function record(deviceId: number, evidence: DeviceRecognitionRecord['evidence'], keys: IdentityKey[] = []): DeviceRecognitionRecord {
  return {
    deviceId,
    keys,
    fields: { device_type: 'workstation', type_confidence: 60, vendor: 'HP', model: null, os_name: null, os_version: null, discovered_name: null },
    evidence,
    reason: 'HP workstation',
    decisions: [],
  };
}

describe.each(testDatabases())('recognition on a rescan ($kind)', (database) => {
  let db: Opened;
  let store: Store;

  beforeEach(async () => {
    db = await database.open();
    store = db.store;
  });
  afterEach(() => db?.cleanup());

  const add = (ip: string) =>
    store.devices.insert({ identity: `ip:${ip}`, ip_address: ip, ip_sort: ipv4ToInt(ip), first_seen: T(1), last_seen: T(1) });
  const evidence = async (id: number) => (await store.identity.get(id))!.evidence.map(({ observed_at, ...e }) => ({ ...e, observed_at }));
  const rowIds = async (id: number) =>
    (await store.db.selectFrom('device_evidence').select('id').where('device_id', '=', id).orderBy('id').execute()).map((r) => r.id);

  it('evidence is replaced exactly when it differs, rows moved in or digest unknown included', async () => {
    const d = await add('10.9.0.1');
    // Two devices in one call: the batched path.
    const other = await add('10.9.0.2');
    const both = (ev: DeviceRecognitionRecord['evidence'], at: string) =>
      store.identity.recordRecognition(null, [record(d.id, ev), record(other.id, E1)], at);
    await both(E1, T(1));
    expect(await evidence(d.id)).toEqual(E1.map((e) => ({ ...e, observed_at: T(1) })));
    // Same count, one detail differs: replaced.
    await both(E2, T(2));
    expect(await evidence(d.id)).toEqual(E2.map((e) => ({ ...e, observed_at: T(2) })));
    const ids = await rowIds(d.id);
    // The same again: the rows stay, only their time moves.
    await both(E2, T(3));
    expect(await rowIds(d.id)).toEqual(ids);
    expect(await evidence(d.id)).toEqual(E2.map((e) => ({ ...e, observed_at: T(3) })));
    // A row moved in (as a merge moves the merged device's evidence): replaced by what was read.
    await store.db
      .insertInto('device_evidence')
      .values({ device_id: d.id, evidence: JSON.stringify([['name', 'old', 'mdns', 'moved', 70]]), observed_at: T(1) })
      .execute();
    // Shown after the device's own, with its own time.
    expect(await evidence(d.id)).toEqual([
      ...E2.map((e) => ({ ...e, observed_at: T(3) })),
      { field: 'name', value: 'old', source: 'mdns', detail: 'moved', confidence: 70, observed_at: T(1) },
    ]);
    await both(E2, T(4));
    expect(await evidence(d.id)).toEqual(E2.map((e) => ({ ...e, observed_at: T(4) })));
    // A digest not known (a device recognised before migration 025), rows as stored: written again, the same.
    await store.db.updateTable('devices').set({ evidence_digest: null }).execute();
    await both(E2, T(5));
    expect(await evidence(d.id)).toEqual(E2.map((e) => ({ ...e, observed_at: T(5) })));
    expect(await evidence(other.id)).toEqual(E1.map((e) => ({ ...e, observed_at: T(5) })));
    // No evidence now: none stored.
    await both([], T(6));
    expect(await evidence(d.id)).toEqual([]);
    // A record listed twice (one by one): the same outcome.
    await store.identity.recordRecognition(null, [record(d.id, E1), record(d.id, E2)], T(7));
    expect(await evidence(d.id)).toEqual(E2.map((e) => ({ ...e, observed_at: T(7) })));
    await both(E2, T(8));
    // One row per recognition (migration 032).
    expect(await rowIds(d.id)).toHaveLength(1);
  });

  it('keysOfHolders gives the same keys, in the same order, whether it looks them up or reads every key', async () => {
    // More devices than one statement's chunk, each with keys written in two rounds (their ids interleave).
    const devices: number[] = [];
    for (let i = 0; i < 620; i++) devices.push((await add(`10.9.${10 + (i >> 8)}.${i & 255}`)).id);
    const mdns = (v: string): IdentityKey => ({ kind: 'mdns_name', value: v, source: 'mdns', strength: 'medium', reason: 'name' });
    await store.identity.recordRecognition(
      null,
      devices.map((id, i) => record(id, [], [ssh(`d${i}`)])),
      T(1),
    );
    await store.identity.recordRecognition(
      null,
      devices.map((id, i) => record(id, [], [ssh(`d${i}`), mdns(i % 5 ? 'shared.local' : `n${i}.local`)])),
      T(2),
    );
    // A few devices' keys: looked up one by one.
    const some = devices.flatMap((_id, i) => (i % 10 === 0 ? [ssh(`d${i}`)] : i === 1 ? [mdns('shared.local')] : []));
    const lookedUp = await store.identity.keysOfHolders(some);
    expect(new Set(lookedUp.map((k) => k.deviceId)).size).toBeGreaterThan(500);
    // The same with as many keys again that nobody holds: every key read once.
    const absent = Array.from({ length: 2 * devices.length }, (_v, i) => ssh(`absent${i}`));
    expect(await store.identity.keysOfHolders([...some, ...absent])).toEqual(lookedUp);
  });

  it('the keys the resolution read, handed over, record the same rows as reading them again', async () => {
    const outcome = async (handOver: boolean) => {
      const net = handOver ? '10.9.2' : '10.9.1';
      const a = await add(`${net}.1`);
      const b = await add(`${net}.2`);
      const c = await add(`${net}.3`);
      await store.identity.recordRecognition(null, [record(a.id, E1, [ssh('a'), ipKey('10.9.9.1')]), record(b.id, E1, [ssh('b')])], T(1));
      // The rescan: a keeps its key and gains one, b's key is offered by c too (it stays b's), c is new.
      const records = [
        record(a.id, E1, [ssh('a'), ssh('a2'), ipKey('10.9.9.1')]),
        record(b.id, E1, [ssh('b')]),
        record(c.id, E1, [ssh('b'), ipKey('10.9.9.3')]),
      ];
      const held = await store.identity.keysOfHolders(records.flatMap((r) => r.keys.filter((k) => k.kind !== 'ip')));
      await store.identity.recordRecognition(null, records, T(2), handOver ? { keys: held, changed: [] } : undefined);
      const keys = async (id: number) => (await store.identity.get(id))!.keys;
      const decisions = async (id: number) => (await store.identity.get(id))!.decisions.map((d) => d.rule);
      const out = [await keys(a.id), await keys(b.id), await keys(c.id), await decisions(c.id)];
      await store.db.deleteFrom('device_identity_keys').execute();
      await store.db.deleteFrom('identity_decisions').execute();
      return out;
    };
    const read = await outcome(false);
    expect(read[3]).toContain('strong_key_held');
    expect(await outcome(true)).toEqual(read);
  });
});
