/**
 * The identity resolver's folds and a person's merges, applied to a real store (both dialects):
 * a fold makes the device created by a scan the known device (address, MAC, identity, ports the
 * scan examined) and an undo restores every row of every table exactly (fast-check over random
 * devices with ports, addresses and keys); the database never lets two devices hold one strong key.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScannedHost } from '../../src/core/model.js';
import type { Store } from '../../src/store/index.js';
import { InventoryWriter } from '../../src/store/inventory.js';
import { testDatabases, type OpenedDatabase } from '../helpers/databases.js';
import { dumpTables, type TableDump } from '../helpers/tables.js';

const IPS = ['10.66.0.10', '10.66.0.11', '10.66.0.12', '10.66.0.13'];
const MACS = ['7A:00:00:00:00:01', '7A:00:00:00:00:02', '00:11:32:00:00:03', '00:11:32:00:00:04'];
const PORTS = [22, 80, 443];
const KEYS = [
  { kind: 'ssh_host_key', value: 'SHA256:aaaa' },
  { kind: 'mdns_name', value: 'alices-phone.local' },
  { kind: 'tls_certificate', value: 'cc'.repeat(32) },
];

/** device_merges gains the merge (undone); every other table must be exactly as before. */
function withoutMerges(dump: TableDump): TableDump {
  const { device_merges: _merges, ...rest } = dump;
  return rest;
}

/** A scanned host with these TCP ports open, and nothing else known. */
function tcpHost(ip: string, ports: number[]): ScannedHost {
  return {
    ip,
    mac: null,
    vendor: null,
    hostname: null,
    os_name: null,
    device_type: null,
    ports: ports.map((port) => ({
      port,
      protocol: 'tcp' as const,
      state: 'open',
      service: null,
      product: null,
      version: null,
      extra_info: null,
      cpe: [],
    })),
  };
}

describe.each(testDatabases())('resolver folds and merges with undo ($kind)', (database) => {
  let db: OpenedDatabase;
  let store: Store;
  let writer: InventoryWriter;
  let scanIds: number[];

  beforeAll(async () => {
    db = await database.open();
    store = db.store;
    writer = new InventoryWriter(store.db, () => {});
    scanIds = [];
    for (let i = 0; i < 2; i++)
      scanIds.push(
        (await store.scans.create({ status: 'running', profile: 'normal', subnet: '10.66.0.0/24', scan_type: 'network', devices_found: 0 })).id,
      );
  });
  afterAll(() => db?.cleanup());

  const clear = async () => {
    for (const t of ['device_merges', 'device_links', 'identity_decisions', 'device_identity_keys', 'ports', 'ip_history', 'devices'] as const)
      await store.db.deleteFrom(t).execute();
  };
  const at = (n: number) => new Date(Date.UTC(2026, 0, 1 + n)).toISOString();

  /** Two devices: the known one (first scan) and one the second scan created, with random ports and keys. */
  async function twoDevices(spec: { ports: [number[], number[]]; keys: [number[], number[]]; strong: boolean }) {
    const first = await writer.recordDiscovery(scanIds[0], [{ ip: IPS[0], mac: MACS[0], vendor: null, hostname: 'phone.lan' }], at(0));
    const known = first.seen[0].deviceId;
    const examined = { tcp: [{ low: 1, high: 1024 }], udp: [] };
    await writer.recordPorts([{ deviceId: known, host: tcpHost(IPS[0], spec.ports[0]) }], at(0), { id: scanIds[0], examined });
    const second = await writer.recordDiscovery(scanIds[1], [{ ip: IPS[1], mac: MACS[1], vendor: 'Apple', hostname: null }], at(1));
    const created = second.seen[0].deviceId;
    await writer.recordPorts([{ deviceId: created, host: tcpHost(IPS[1], spec.ports[1]) }], at(1), { id: scanIds[1], examined });
    for (const [i, deviceId] of [known, created].entries()) {
      for (const k of spec.keys[i]) {
        // A strong key on one device only (the partial unique index): the second copy is weak.
        const strength = spec.strong && !(i === 1 && spec.keys[0].includes(k)) ? 'strong' : 'medium';
        await store.db
          .insertInto('device_identity_keys')
          .values({ device_id: deviceId, ...KEYS[k], strength, source: 'test', first_seen: at(i), last_seen: at(i) })
          .execute();
      }
    }
    await store.db
      .insertInto('identity_decisions')
      .values({ device_id: known, scan_id: scanIds[0], rule: 'new_device', explanation: 'x', at: at(0) })
      .execute();
    return { known, created };
  }

  it('a same_device fold: the known device takes the new address, MAC and identity; the scan’s ports replace the examined ones', async () => {
    await clear();
    const { known, created } = await twoDevices({
      ports: [
        [22, 80],
        [22, 443],
      ],
      keys: [
        [0, 1],
        [0, 1],
      ],
      strong: true,
    });
    const merge = await store.deviceMerges.fold(known, created, scanIds[1], 'same_device');
    expect(merge).toMatchObject({ deviceId: known, mergedIds: [created] });
    const device = await store.db.selectFrom('devices').selectAll().where('id', '=', known).executeTakeFirstOrThrow();
    expect(device).toMatchObject({ ip_address: IPS[1], mac_address: MACS[1], identity: `mac:${MACS[1]}`, vendor: 'Apple', hostname: 'phone.lan' });
    expect(await store.db.selectFrom('devices').select('id').where('id', '=', created).executeTakeFirst()).toBeUndefined();
    const ports = await store.db.selectFrom('ports').select('port').where('device_id', '=', known).orderBy('port').execute();
    expect(ports.map((p) => p.port)).toEqual([22, 443]);
    const history = await store.db.selectFrom('ip_history').select('ip_address').where('device_id', '=', known).orderBy('ip_address').execute();
    expect(history.map((h) => h.ip_address)).toEqual([IPS[0], IPS[1]]);
    expect((await store.db.selectFrom('device_merges').select('created_by').executeTakeFirstOrThrow()).created_by).toBe('resolver');
    // A person undid it: the pair is separated for the resolver.
    await store.deviceMerges.undo(merge!.id);
    expect(await store.deviceMerges.separatedPairs([known])).toEqual([[known, created]]);
  });

  it('a port keeps the scan and time that verified it when a merge moves it to another device', async () => {
    await clear();
    const { known, created } = await twoDevices({ ports: [[22], [80]], keys: [[], []], strong: false });
    const verified = async () =>
      ((await store.devices.get(known))?.ports ?? []).map((p) => ({ port: p.port, by: p.verified_by_scan_id, at: p.last_verified_at }));
    const merge = await store.deviceMerges.merge(known, [created], 'admin');
    expect(await verified()).toEqual([
      { port: 22, by: scanIds[0], at: at(0) },
      { port: 80, by: scanIds[1], at: at(1) },
    ]);
    await store.deviceMerges.undo(merge.id);
    expect(((await store.devices.get(created))?.ports ?? []).map((p) => [p.port, p.verified_by_scan_id, p.last_verified_at])).toEqual([
      [80, scanIds[1], at(1)],
    ]);
  });
  /** Pairs of devices (a known one and one the second scan created) with addresses, MACs and keys of their own. */
  async function pairs(specs: { ports: [number[], number[]]; keys: [number[], number[]]; strong: boolean }[]) {
    const out: { known: number; created: number }[] = [];
    const examined = { tcp: [{ low: 1, high: 1024 }], udp: [] };
    for (const [n, spec] of specs.entries()) {
      const ips = [`10.66.0.${20 + 2 * n}`, `10.66.0.${21 + 2 * n}`];
      const macs = [`7A:00:00:00:01:${String(2 * n).padStart(2, '0')}`, `7A:00:00:00:01:${String(2 * n + 1).padStart(2, '0')}`];
      const ids: number[] = [];
      for (const i of [0, 1]) {
        const seen = await writer.recordDiscovery(scanIds[i], [{ ip: ips[i], mac: macs[i], vendor: null, hostname: null }], at(i));
        ids.push(seen.seen[0].deviceId);
        await writer.recordPorts([{ deviceId: ids[i], host: tcpHost(ips[i], spec.ports[i]) }], at(i), { id: scanIds[i], examined });
        for (const k of spec.keys[i]) {
          const strength = spec.strong && !(i === 1 && spec.keys[0].includes(k)) ? 'strong' : 'medium';
          await store.db
            .insertInto('device_identity_keys')
            .values({
              device_id: ids[i],
              kind: KEYS[k].kind,
              value: `${KEYS[k].value}-${n}`,
              strength,
              source: 'test',
              first_seen: at(i),
              last_seen: at(i),
            })
            .execute();
        }
      }
      out.push({ known: ids[0], created: ids[1] });
    }
    return out;
  }

  it('folds made together (foldAll) leave the rows and merge records folds one after the other leave, chains included (property)', async () => {
    const portsArb = fc.uniqueArray(fc.constantFrom(...PORTS), { maxLength: 3 });
    const keysArb = fc.uniqueArray(fc.integer({ min: 0, max: KEYS.length - 1 }), { maxLength: 3 });
    const specArb = fc.record({ ports: fc.tuple(portsArb, portsArb), keys: fc.tuple(keysArb, keysArb), strong: fc.boolean() });
    const kindArb = fc.constantFrom('same_device' as const, 'second_address' as const);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(specArb, kindArb), { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        kindArb,
        async (specs, chain, chainKind) => {
          await clear();
          const made = await pairs(specs.map(([spec]) => spec));
          // Switch links (migration 021): one between the two devices of a fold (it goes), one naming
          // a fold's new device as the parent of another pair's device (it names the kept one instead).
          for (const [i, p] of made.entries()) {
            const other = made[(i + 1) % made.length];
            const link = (device_id: number, parent_device_id: number, source: string) => ({
              device_id,
              parent_device_id,
              parent_kind: 'switch',
              via: 'l2',
              port: `${i}`,
              source,
              scan_id: scanIds[1],
              seen_at: at(1),
            });
            await store.db
              .insertInto('device_links')
              .values([link(p.created, p.known, 'lldp'), ...(other !== p ? [link(other.known, p.created, 'snmp')] : [])])
              .execute();
          }
          const folds = made.map((p, i) => ({ deviceId: p.created, into: p.known, kind: specs[i][1] }));
          // A fold into a device an earlier fold folded: it goes where that one went.
          if (chain && made.length >= 2) folds.push({ deviceId: made[1].known, into: made[0].created, kind: chainKind });
          const before = withoutMerges(await dumpTables(store));
          const together = await store.deviceMerges.foldAll(folds, scanIds[1]);
          const afterTogether = await dumpTables(store);
          for (const r of [...together].reverse()) if (r) await store.deviceMerges.undo(r.merge.id);
          expect(withoutMerges(await dumpTables(store))).toEqual(before);
          const undone = new Set(together.flatMap((r) => (r ? [r.merge.id] : [])));
          // One after the other, as the scan recorder made them before foldAll.
          const into = new Map<number, number>();
          const oneByOne: (number | null)[] = [];
          for (const f of folds) {
            const target = into.get(f.into) ?? f.into;
            const merge = await store.deviceMerges.fold(target, f.deviceId, scanIds[1], f.kind);
            oneByOne.push(merge ? target : null);
            if (merge) into.set(f.deviceId, target);
          }
          expect(together.map((r) => r?.target ?? null)).toEqual(oneByOne);
          const afterOneByOne = await dumpTables(store);
          expect(withoutMerges(afterTogether)).toEqual(withoutMerges(afterOneByOne));
          const merges = (dump: TableDump, keep: (id: number) => boolean) =>
            dump.device_merges.filter((m) => keep(Number(m.id))).map((m) => [m.device_id, m.merged_ids, m.snapshot, m.created_by]);
          expect(merges(afterTogether, (id) => undone.has(id))).toEqual(merges(afterOneByOne, (id) => !undone.has(id)));
        },
      ),
      { numRuns: 8 },
    );
  }, 120_000);

  it('fold or merge, then undo, restores every row exactly (property)', async () => {
    const portsArb = fc.uniqueArray(fc.constantFrom(...PORTS), { maxLength: 3 });
    const keysArb = fc.uniqueArray(fc.integer({ min: 0, max: KEYS.length - 1 }), { maxLength: 3 });
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          ports: fc.tuple(portsArb, portsArb),
          keys: fc.tuple(keysArb, keysArb),
          strong: fc.boolean(),
          how: fc.constantFrom('same_device', 'second_address', 'person'),
        }),
        async (spec) => {
          await clear();
          const { known, created } = await twoDevices(spec);
          const before = withoutMerges(await dumpTables(store));
          const merge =
            spec.how === 'person'
              ? await store.deviceMerges.merge(known, [created], 'admin')
              : await store.deviceMerges.fold(known, created, scanIds[1], spec.how);
          // No two devices hold one strong key, whatever moved.
          const strong = await store.db.selectFrom('device_identity_keys').select(['kind', 'value']).where('strength', '=', 'strong').execute();
          expect(new Set(strong.map((k) => `${k.kind} ${k.value}`)).size).toBe(strong.length);
          await store.deviceMerges.undo(merge!.id);
          expect(withoutMerges(await dumpTables(store))).toEqual(before);
        },
      ),
      { numRuns: 8 },
    );
  }, 120_000);
});
