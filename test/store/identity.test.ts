/**
 * Identity resolution applied to a real store: successive random scans written through
 * InventoryWriter.recordDiscovery (as the scan manager writes them) never throw, keep
 * devices.identity unique and consistent with the MACs, and apply exactly what the matcher decided.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { matchHosts } from '../../src/core/identity.js';
import type { DiscoveredHost } from '../../src/core/model.js';
import type { Store } from '../../src/store/index.js';
import { InventoryWriter } from '../../src/store/inventory.js';
import { testDatabases, type TestDatabase } from '../helpers/databases.js';
import { reportArb } from '../helpers/identity-arbitraries.js';

type Opened = Awaited<ReturnType<TestDatabase['open']>>;

const host = (ip: string, mac: string | null = null): DiscoveredHost => ({ ip, mac, vendor: null, hostname: null });
const M4 = '00:16:3E:66:00:04';
const M1 = 'B8:27:EB:66:00:01';

describe.each(testDatabases())('InventoryWriter.recordDiscovery and device identity ($kind)', (database) => {
  let db: Opened;
  let store: Store;
  let writer: InventoryWriter;
  let scanIds: number[];

  beforeAll(async () => {
    db = await database.open();
    store = db.store;
    writer = new InventoryWriter(store.db, () => {});
    scanIds = [];
    for (let i = 0; i < 4; i++) {
      scanIds.push(
        (await store.scans.create({ status: 'running', profile: 'quick', subnet: '10.66.0.0/24', scan_type: 'network', devices_found: 0 })).id,
      );
    }
  });
  afterAll(() => db?.cleanup());

  const clear = async (): Promise<void> => {
    await store.db.deleteFrom('ip_history').execute();
    await store.db.deleteFrom('devices').execute();
  };
  beforeEach(clear);

  const devices = () => store.db.selectFrom('devices').selectAll().orderBy('id').execute();
  const history = async (deviceId: number) =>
    (await store.db.selectFrom('ip_history').select('ip_address').where('device_id', '=', deviceId).execute()).map((r) => r.ip_address).sort();
  const at = (n: number) => new Date(Date.UTC(2026, 0, 1 + n)).toISOString();

  it('successive random scans never throw, keep identities unique and apply the matcher’s decisions', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(reportArb, { minLength: 1, maxLength: 4 }), async (scans) => {
        await clear();
        for (const [n, hosts] of scans.entries()) {
          const known = await store.db.selectFrom('devices').select(['id', 'identity', 'ip_address', 'mac_address', 'last_seen']).execute();
          const expected = matchHosts(hosts, known);
          const { seen, notes } = await writer.recordDiscovery(scanIds[n], hosts, at(n));

          // What the matcher decided, applied as decided.
          expect(seen.map((s) => s.ip)).toEqual(expected.decisions.map((d) => d.host.ip));
          expected.decisions.forEach((d, i) => {
            if (d.deviceId !== null) expect(seen[i]).toMatchObject({ deviceId: d.deviceId, isNew: false });
            else expect(seen[i].isNew).toBe(true);
          });
          expect(new Set(seen.map((s) => s.deviceId)).size).toBe(seen.length);
          expect(notes.filter((x) => x.deviceId === null)).toHaveLength(expected.dropped.length);

          const rows = await devices();
          expect(new Set(rows.map((r) => r.identity)).size).toBe(rows.length);
          for (const r of rows) {
            if (r.identity.startsWith('mac:')) expect(r.mac_address).toBe(r.identity.slice(4));
          }
          for (const s of seen) {
            const row = rows.find((r) => r.id === s.deviceId)!;
            // Presence (online) is decided when a scan completes, not by discovery.
            expect(row).toMatchObject({ ip_address: s.ip, last_scan_id: scanIds[n], last_seen: at(n) });
            expect(await history(s.deviceId)).toContain(s.ip);
          }
        }
      }),
      { numRuns: database.kind === 'sqlite' ? 150 : 60 },
    );
  }, 240_000);

  it('a host that moved keeps its device, label and history', async () => {
    const first = await writer.recordDiscovery(scanIds[0], [host('10.66.0.14', M4), host('10.66.0.11', M1)], at(0));
    const moved = first.seen[0];
    await store.db.updateTable('devices').set({ label: 'lab gateway', notes: 'moves around' }).where('id', '=', moved.deviceId).execute();

    const second = await writer.recordDiscovery(scanIds[1], [host('10.66.0.10', M4), host('10.66.0.11', M1)], at(1));
    expect(second.notes).toEqual([]);
    expect(second.seen[0]).toEqual({ deviceId: moved.deviceId, ip: '10.66.0.10', isNew: false, previousIp: '10.66.0.14' });
    const rows = await devices();
    expect(rows).toHaveLength(2);
    expect(rows.find((r) => r.id === moved.deviceId)).toMatchObject({
      ip_address: '10.66.0.10',
      label: 'lab gateway',
      notes: 'moves around',
      identity: `mac:${M4}`,
    });
    expect(await history(moved.deviceId)).toEqual(['10.66.0.10', '10.66.0.14']);
  });

  it('the same MAC at the old and the new address (the native engine’s failing case) is written, with a note', async () => {
    const first = await writer.recordDiscovery(scanIds[0], [host('10.66.0.14', M4)], at(0));
    const id = first.seen[0].deviceId;
    // Before the fix: "UNIQUE constraint failed: devices.identity".
    const second = await writer.recordDiscovery(scanIds[1], [host('10.66.0.10', M4), host('10.66.0.14', M4)], at(1));
    expect(second.seen.map((s) => [s.ip, s.deviceId === id, s.isNew])).toEqual([
      ['10.66.0.10', false, true],
      ['10.66.0.14', true, false],
    ]);
    expect(second.notes).toEqual([
      {
        ip: '10.66.0.10',
        mac: null,
        deviceId: second.seen[0].deviceId,
        reason: `MAC ${M4} answered at 10.66.0.10, 10.66.0.14; it stays with 10.66.0.14 (where device #${id} was last seen), 10.66.0.10 is recorded by its address only`,
      },
    ]);
    const rows = await devices();
    expect(rows.map((r) => [r.identity, r.ip_address, r.mac_address])).toEqual([
      [`mac:${M4}`, '10.66.0.14', M4],
      ['ip:10.66.0.10', '10.66.0.10', null],
    ]);
  });

  it('a MAC seen late joins the device first seen without one', async () => {
    const first = await writer.recordDiscovery(scanIds[0], [host('10.66.0.11')], at(0));
    const second = await writer.recordDiscovery(scanIds[1], [host('10.66.0.11', M1)], at(1));
    expect(second.seen[0]).toMatchObject({ deviceId: first.seen[0].deviceId, isNew: false });
    expect(await devices()).toEqual([expect.objectContaining({ identity: `mac:${M1}`, mac_address: M1, vendor: null })]);
    // And a later scan without MACs still finds it at its address.
    const third = await writer.recordDiscovery(scanIds[2], [host('10.66.0.11')], at(2));
    expect(third.seen[0]).toMatchObject({ deviceId: first.seen[0].deviceId, isNew: false });
    expect(await devices()).toEqual([expect.objectContaining({ identity: `mac:${M1}`, mac_address: M1 })]);
  });
});
