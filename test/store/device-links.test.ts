/**
 * The switch and access-point links (migration 021, store/device-links.ts) on both stores: a
 * source's refresh replaces only its own rows in its scope; a merge moves the rows on both sides
 * (a link that would join the kept device to itself is removed) and an undo restores every row
 * exactly; a resolver fold does the same; deleting a device deletes the links naming it on either
 * side.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { InventoryWriter } from '../../src/store/inventory.js';
import { testDatabases, type OpenedDatabase } from '../helpers/databases.js';
import { dumpTables, type TableDump } from '../helpers/tables.js';

function withoutMerges(dump: TableDump): TableDump {
  const { device_merges: _merges, ...rest } = dump;
  return rest;
}

describe.each(testDatabases())('device links ($kind)', (database) => {
  let db: OpenedDatabase;
  let store: Store;
  let writer: InventoryWriter;
  let scanId: number;
  /** Devices: two switches, two clients, an access point. */
  let ids: { a: number; b: number; c: number; d: number; ap: number };

  beforeAll(async () => {
    db = await database.open();
    store = db.store;
    writer = new InventoryWriter(store.db, () => {});
    scanId = (await store.scans.create({ status: 'running', profile: 'normal', subnet: '10.66.0.0/24', scan_type: 'network', devices_found: 0 })).id;
  });
  afterAll(() => db?.cleanup());

  beforeEach(async () => {
    for (const t of ['device_merges', 'device_links', 'identity_decisions', 'ip_history', 'devices'] as const) await store.db.deleteFrom(t).execute();
    const { seen } = await writer.recordDiscovery(
      scanId,
      [1, 2, 3, 4, 5].map((n) => ({ ip: `10.66.0.${n}`, mac: `00:11:32:00:00:0${n}`, vendor: null, hostname: null })),
      '2026-01-01T00:00:00.000Z',
    );
    const [a, b, c, d, ap] = seen.map((s) => s.deviceId);
    ids = { a, b, c, d, ap };
    const at = '2026-01-01T00:00:00.000Z';
    await store.deviceLinks.replace(
      'snmp',
      { parents: [a] },
      [{ deviceId: c, parentDeviceId: a, parentKind: 'switch', via: 'l2', port: '4' }],
      scanId,
      at,
    );
    await store.deviceLinks.replace(
      'unifi',
      { all: true },
      [
        { deviceId: d, parentDeviceId: b, parentKind: 'switch', via: 'l2', port: '7' },
        { deviceId: c, parentDeviceId: ap, parentKind: 'access_point', via: 'wifi', port: null },
      ],
      scanId,
      at,
    );
    await store.deviceLinks.replace(
      'lldp',
      { parents: [a] },
      [{ deviceId: b, parentDeviceId: a, parentKind: 'switch', via: 'l2', port: '24' }],
      scanId,
      at,
    );
  });

  const pairs = async () => (await store.deviceLinks.list()).map((l) => [l.deviceId, l.parentDeviceId, l.source]);

  it('keeps one link per device on the map, the controller first', async () => {
    expect(await pairs()).toEqual([
      [ids.b, ids.a, 'lldp'],
      [ids.c, ids.a, 'snmp'],
      [ids.c, ids.ap, 'unifi'],
      [ids.d, ids.b, 'unifi'],
    ]);
    expect((await store.deviceLinks.chosen()).map((l) => [l.deviceId, l.parentDeviceId, l.source]).sort()).toEqual(
      [
        [ids.b, ids.a, 'lldp'],
        [ids.c, ids.ap, 'unifi'],
        [ids.d, ids.b, 'unifi'],
      ].sort(),
    );
  });

  it("a refresh replaces only that source's rows in its scope", async () => {
    // Switch b answered with an empty table: a's rows stay.
    await store.deviceLinks.replace('snmp', { parents: [ids.b] }, [], scanId, '2026-01-02T00:00:00.000Z');
    expect(await pairs()).toContainEqual([ids.c, ids.a, 'snmp']);
    // Switch b now claims d: the snmp row of d is b's; a's row of c is unchanged.
    await store.deviceLinks.replace(
      'snmp',
      { parents: [ids.b] },
      [{ deviceId: ids.d, parentDeviceId: ids.b, parentKind: 'switch', via: 'l2', port: '1' }],
      null,
      'x',
    );
    expect(await pairs()).toContainEqual([ids.d, ids.b, 'snmp']);
    // The controller's refresh replaces all of its rows.
    await store.deviceLinks.replace('unifi', { all: true }, [], scanId, '2026-01-02T00:00:00.000Z');
    expect((await pairs()).filter((p) => p[2] === 'unifi')).toEqual([]);
    expect(await pairs()).toHaveLength(3);
  });

  it('a merge repoints the links on both sides and drops the one joining the merged devices; undo restores every row', async () => {
    const before = withoutMerges(await dumpTables(store));
    const merge = await store.deviceMerges.merge(ids.a, [ids.b], 'admin');
    expect(await pairs()).toEqual([
      [ids.c, ids.a, 'snmp'],
      [ids.c, ids.ap, 'unifi'],
      [ids.d, ids.a, 'unifi'],
    ]);
    await store.deviceMerges.undo(merge.id);
    expect(withoutMerges(await dumpTables(store))).toEqual(before);
  });

  it("a resolver fold moves the folded device's links to the kept device; undo restores them", async () => {
    const before = withoutMerges(await dumpTables(store));
    const fold = await store.deviceMerges.fold(ids.ap, ids.b, scanId, 'same_device');
    expect(fold).not.toBeNull();
    expect(await pairs()).toEqual(
      [
        [ids.c, ids.a, 'snmp'],
        [ids.c, ids.ap, 'unifi'],
        [ids.d, ids.ap, 'unifi'],
        [ids.ap, ids.a, 'lldp'],
      ].sort((x, y) => Number(x[0]) - Number(y[0]) || String(x[2]).localeCompare(String(y[2]))),
    );
    await store.deviceMerges.undo(fold!.id);
    expect(withoutMerges(await dumpTables(store))).toEqual(before);
  });

  it('deleting a device deletes the links naming it on either side', async () => {
    expect(await store.deviceMerges.deleteDevice(ids.a)).toBe(true);
    expect(await pairs()).toEqual([
      [ids.c, ids.ap, 'unifi'],
      [ids.d, ids.b, 'unifi'],
    ]);
    expect(await store.deviceMerges.deleteDevice(ids.ap)).toBe(true);
    expect(await pairs()).toEqual([[ids.d, ids.b, 'unifi']]);
  });
});
