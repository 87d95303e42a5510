import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScannedHost } from '../../src/core/model.js';
import { ScanEvaluator } from '../../src/scan/evaluate.js';
import { InventoryWriter } from '../../src/store/inventory.js';
import { StatsStore } from '../../src/store/stats.js';
import { testDatabases } from '../helpers/databases.js';
import { readJson, type TestServer } from '../helpers/server.js';
import { DEVICE_KEYS, SCAN_KEYS, assessPorts, startSeededServer, type Seed } from '../helpers/seed.js';

const DAY_MS = 86_400_000;
const AT_RISK = ['critical', 'high', 'medium'];

/** GET /api/stats as computed by hand from the seed. */
function expectedStats(seed: Seed) {
  const devices = DEVICE_KEYS.map((k) => seed.devices[k]);
  const levels = DEVICE_KEYS.map((k) => seed.assessments[k].risk.level as string);
  const count = (level: string) => levels.filter((l) => l === level).length;
  const completed = SCAN_KEYS.map((k) => seed.scans[k]).filter((s) => s.status === 'completed');
  return {
    total_devices: devices.length,
    devices_at_risk: levels.filter((l) => AT_RISK.includes(l)).length,
    critical: count('critical'),
    high: count('high'),
    medium: count('medium'),
    low: count('low'),
    online_devices: devices.filter((d) => d.online === 1).length,
    open_ports: DEVICE_KEYS.reduce((n, k) => n + seed.ports[k].filter((p) => p.state === 'open').length, 0),
    total_scans: completed.length,
    last_scan: completed
      .map((s) => s.completed_at as string)
      .sort()
      .pop(),
  };
}

/** GET /api/trends points for a window of `days` ending now, computed by hand from the seed. */
function expectedPoints(seed: Seed, days: number) {
  const since = new Date(Date.now() - days * DAY_MS).toISOString();
  return SCAN_KEYS.map((k) => ({ k, scan: seed.scans[k] }))
    .filter(({ scan }) => scan.status === 'completed' && scan.scan_type === 'network' && (scan.completed_at as string) >= since)
    .sort((a, b) => (a.scan.completed_at as string).localeCompare(b.scan.completed_at as string))
    .map(({ k, scan }) => {
      const snaps = seed.snapshots[k];
      const avg = snaps.length ? snaps.reduce((n, s) => n + s.risk_score, 0) / snaps.length : 0;
      return {
        scan_id: scan.id,
        timestamp: scan.completed_at,
        devices: snaps.length,
        at_risk: snaps.filter((s) => AT_RISK.includes(s.risk_level)).length,
        critical: snaps.filter((s) => s.risk_level === 'critical').length,
        high: snaps.filter((s) => s.risk_level === 'high').length,
        open_ports: snaps.reduce((n, s) => n + s.ports.filter((p) => p.state === 'open').length, 0),
        avg_risk_score: Math.round(avg * 10) / 10,
        changes: seed.changes.filter((c) => c.scan_id === scan.id).length,
      };
    });
}

describe.each(testDatabases())('stats and trends API ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let seed: Seed;

  beforeAll(async () => {
    ({ server, key, seed } = await startSeededServer(database));
  });
  afterAll(() => server?.close());

  const get = async (path: string) => {
    const res = await server.request(path, { key });
    expect(res.status, path).toBe(200);
    return readJson(res);
  };

  it('computes every stats field from the inventory', async () => {
    const want = expectedStats(seed);
    expect(await get('/api/stats')).toEqual(want);
    // Sanity of the seed itself, so the assertions above are not trivially satisfied.
    expect(want.devices_at_risk).toBe(want.critical + want.high + want.medium);
    expect(want.devices_at_risk).toBeGreaterThan(0);
    expect(want.online_devices).toBeLessThan(want.total_devices);
    expect(want.total_scans).toBeLessThan(SCAN_KEYS.length); // the failed scan does not count
    // The latest completed scan is the device scan, not the latest network scan.
    expect(want.last_scan).toBe(seed.scans.device.completed_at);
  });

  it('reflects a scan written through the store on the very next request', async () => {
    const before = await get('/api/stats');
    const scan = await server.store.scans.create({
      status: 'running',
      profile: 'normal',
      subnet: '192.168.50.77/32',
      scan_type: 'device',
      target: '192.168.50.77',
      devices_found: 0,
    });
    expect(await get('/api/stats')).toEqual(before);
    // A new device with telnet open and SMTP closed, written as the scan manager writes it.
    const at = new Date().toISOString();
    const host: ScannedHost = {
      ip: '192.168.50.77',
      mac: null,
      vendor: null,
      hostname: null,
      os_name: null,
      device_type: null,
      ports: [
        { port: 23, protocol: 'tcp', state: 'open', service: 'telnet', product: null, version: null, extra_info: null, cpe: [] },
        { port: 25, protocol: 'tcp', state: 'closed', service: 'smtp', product: null, version: null, extra_info: null, cpe: [] },
      ],
    };
    const inventory = new InventoryWriter(server.store.db, () => server.store.touch());
    const { seen } = await inventory.recordDiscovery(scan.id, [host], at);
    await inventory.recordPorts([{ deviceId: seen[0].deviceId, host }], at);
    await new ScanEvaluator(server.store).evaluate({
      scan,
      seenDeviceIds: [seen[0].deviceId],
      portsScanned: true,
      portList: [{ low: 1, high: 1000 }],
    });
    const { level } = assessPorts(host.ports, null).risk;
    expect(AT_RISK).toContain(level);
    await server.store.scans.update(scan.id, { status: 'completed', completed_at: at, devices_found: 1 });
    expect(await get('/api/stats')).toEqual({
      ...before,
      total_devices: before.total_devices + 1,
      devices_at_risk: before.devices_at_risk + 1,
      [level]: before[level] + 1,
      online_devices: before.online_devices + 1,
      open_ports: before.open_ports + 1,
      total_scans: before.total_scans + 1,
      last_scan: at,
    });
  });

  it('answers the same bytes while nothing is written, and the counts as they are after a change through the API', async () => {
    // The counts computed afresh on every call: a data version that never repeats.
    let reads = 0;
    const fresh = new StatsStore(server.store.db, async () => ++reads);
    const first = await server.request('/api/stats', { key });
    const body = await first.text();
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(JSON.parse(body)).toEqual(await fresh.stats());
    const again = await server.request('/api/stats', { key });
    expect(await again.text()).toBe(body);
    // An online device with open ports, archived: it leaves every count it was in.
    const target = DEVICE_KEYS.find((k) => seed.devices[k].online === 1 && seed.ports[k].some((p) => p.state === 'open'));
    expect(target).toBeDefined();
    const put = await server.request(`/api/devices/${seed.devices[target!].id}`, { method: 'PUT', key, json: { status: 'archived' } });
    expect(put.status).toBe(200);
    const before = JSON.parse(body);
    const after = await get('/api/stats');
    expect(after).toEqual(await fresh.stats());
    expect(after.total_devices).toBe(before.total_devices - 1);
    expect(after.online_devices).toBe(before.online_devices - 1);
    expect(after.open_ports).toBe(before.open_ports - seed.ports[target!].filter((p) => p.state === 'open').length);
  });
});

describe.each(testDatabases())('trends API ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let seed: Seed;

  beforeAll(async () => {
    ({ server, key, seed } = await startSeededServer(database));
  });
  afterAll(() => server?.close());

  const trends = async (query: string) => {
    const res = await server.request(`/api/trends${query}`, { key });
    expect(res.status, query).toBe(200);
    return readJson(res);
  };

  it('gives one point per completed network scan of the last 30 days by default, oldest first', async () => {
    const body = await trends('');
    expect(body.days).toBe(30);
    const want = expectedPoints(seed, 30);
    expect(body.points).toEqual(want);
    // Failed, device and 45-day-old scans are not points.
    const ids = want.map((p) => p.scan_id);
    expect(ids).toEqual([seed.scans.first.id, seed.scans.second.id]);
    // Non-trivial values: every field differs between the two points or is non-zero.
    expect(body.points[1].devices).toBeGreaterThan(body.points[0].devices);
    expect(body.points[1].critical).toBeGreaterThan(0);
    expect(body.points[0].avg_risk_score).not.toBe(Math.trunc(body.points[0].avg_risk_score));
  });

  it('widens and narrows the window with days', async () => {
    for (const days of [1, 7, 44, 46, 60, 3650]) {
      const body = await trends(`?days=${days}`);
      expect(body.days).toBe(days);
      expect(body.points, String(days)).toEqual(expectedPoints(seed, days));
    }
    expect((await trends('?days=1')).points.map((p: { scan_id: number }) => p.scan_id)).toEqual([seed.scans.second.id]);
    expect((await trends('?days=60')).points.map((p: { scan_id: number }) => p.scan_id)).toEqual([
      seed.scans.old.id,
      seed.scans.first.id,
      seed.scans.second.id,
    ]);
  });

  it('counts a completed network scan that saw nothing as a zero point', async () => {
    const scan = await server.store.scans.create({
      status: 'completed',
      profile: 'quick',
      subnet: '10.99.0.0/24',
      scan_type: 'network',
      devices_found: 0,
      started_at: new Date().toISOString(),
      completed_at: new Date().toISOString(),
    });
    const points = (await trends('')).points;
    expect(points[points.length - 1]).toEqual({
      scan_id: scan.id,
      timestamp: scan.completed_at,
      devices: 0,
      at_risk: 0,
      critical: 0,
      high: 0,
      open_ports: 0,
      avg_risk_score: 0,
      changes: 0,
    });
  });

  it.each([['days=0'], ['days=3651'], ['days=abc'], ['days=-1'], ['days=1.5'], ['days='], ['weeks=2']])(
    'answers 400 naming the parameter for %s',
    async (query) => {
      const res = await server.request(`/api/trends?${query}`, { key });
      expect(res.status).toBe(400);
      expect((await readJson(res)).detail).toMatch(query.startsWith('weeks') ? /^weeks\b/ : /^days\b/);
    },
  );
});
