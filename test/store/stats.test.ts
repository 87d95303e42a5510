import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { InventoryWriter } from '../../src/store/inventory.js';
import { freshDatabaseEachTest, testDatabases } from '../helpers/databases.js';
import { DEVICE_KEYS, SCAN_KEYS, seedInventory } from '../helpers/seed.js';

describe.each(testDatabases())('stats store ($kind)', (database) => {
  let store: Store;
  freshDatabaseEachTest(database, (opened) => {
    store = opened.store;
  });

  it('reports zeros and a null last scan on an empty inventory', async () => {
    expect(await store.stats.stats()).toEqual({
      total_devices: 0,
      devices_at_risk: 0,
      critical: 0,
      high: 0,
      medium: 0,
      low: 0,
      online_devices: 0,
      open_ports: 0,
      total_scans: 0,
      last_scan: null,
    });
    expect(await store.stats.trends(30)).toEqual([]);
  });

  it('returns every count as a number on every database', async () => {
    const seed = await seedInventory(store);
    const stats = await store.stats.stats();
    for (const [name, value] of Object.entries(stats)) {
      if (name === 'last_scan') expect(typeof value).toBe('string');
      else expect(Number.isInteger(value), name).toBe(true);
    }
    expect(stats.total_devices).toBe(DEVICE_KEYS.length);
    const points = await store.stats.trends(3650);
    expect(points.length).toBeGreaterThan(0);
    for (const point of points) {
      for (const [name, value] of Object.entries(point)) {
        if (name === 'timestamp') expect(typeof value).toBe('string');
        else expect(typeof value, name).toBe('number');
      }
    }
    expect(points.map((p) => p.scan_id)).toEqual([seed.scans.old.id, seed.scans.first.id, seed.scans.second.id]);
  });

  it('measures the trend window from the given moment', async () => {
    const seed = await seedInventory(store);
    const completed = (k: (typeof SCAN_KEYS)[number]) => Date.parse(seed.scans[k].completed_at as string);
    // One day after the second scan finished, a one-day window holds exactly that scan.
    const at = new Date(completed('second') + 86_400_000);
    expect((await store.stats.trends(1, at)).map((p) => p.scan_id)).toEqual([seed.scans.second.id]);
    // One millisecond later it has left the window.
    expect(await store.stats.trends(1, new Date(at.getTime() + 1))).toEqual([]);
    // The window is bounded below only: from just after the first scan, two days back holds both.
    expect((await store.stats.trends(2, new Date(completed('first') + 1))).map((p) => p.scan_id)).toEqual([
      seed.scans.first.id,
      seed.scans.second.id,
    ]);
  });

  it('sees a write through the store at once, despite the cache', async () => {
    await seedInventory(store);
    const before = await store.stats.stats();
    expect(await store.stats.stats()).toEqual(before);

    const device = (await store.devices.list({ riskLevel: 'critical', limit: 1, offset: 0 })).rows[0];
    await store.devices.update(device.id, { risk_level: 'low', online: 0 });
    const afterUpdate = await store.stats.stats();
    expect(afterUpdate).toMatchObject({
      critical: before.critical - 1,
      low: before.low + 1,
      devices_at_risk: before.devices_at_risk - 1,
      online_devices: before.online_devices - (device.online ? 1 : 0),
    });

    const detail = (await store.devices.get(device.id))!;
    const openRows = detail.ports.filter((p) => p.state === 'open').length;
    expect(openRows).toBeGreaterThan(0);
    // A scan finds all its ports closed, written as the scan manager writes it.
    const inventory = new InventoryWriter(store.db, () => store.touch());
    await inventory.recordPorts(
      [
        {
          deviceId: device.id,
          host: { ip: detail.ip_address, mac: null, vendor: null, hostname: null, os_name: null, device_type: null, ports: [] },
        },
      ],
      new Date().toISOString(),
    );
    expect((await store.stats.stats()).open_ports).toBe(afterUpdate.open_ports - openRows);

    const scan = await store.scans.create({ status: 'running', profile: 'quick', subnet: '10.1.0.0/24', scan_type: 'network', devices_found: 0 });
    expect((await store.stats.stats()).total_scans).toBe(before.total_scans);
    const finished = '2099-01-01T00:00:00.000Z';
    await store.scans.update(scan.id, { status: 'completed', completed_at: finished });
    expect(await store.stats.stats()).toMatchObject({ total_scans: before.total_scans + 1, last_scan: finished });
  });
});
