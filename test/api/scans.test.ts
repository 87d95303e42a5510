import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScanRow } from '../../src/store/schema.js';
import { testDatabases } from '../helpers/databases.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { SCAN_KEYS, compareIp, openPorts, startSeededServer, type Seed } from '../helpers/seed.js';

/** The API's scan record fields. */
const CONTRACT_SCAN_KEYS = [
  'scan_id',
  'status',
  'profile',
  'subnet',
  'scan_type',
  'started_at',
  'completed_at',
  'duration_seconds',
  'devices_found',
  'error',
  'triggered_by',
];

function expectedRecord(row: ScanRow) {
  return {
    scan_id: row.id,
    status: row.status,
    profile: row.profile,
    subnet: row.subnet,
    scan_type: row.scan_type,
    target: row.target,
    started_at: row.started_at,
    completed_at: row.completed_at,
    duration_seconds: row.duration_seconds,
    devices_found: row.devices_found,
    error: row.error,
    triggered_by: row.triggered_by,
    progress: null,
    runner: row.runner,
    agent_id: row.agent_id,
    warnings: [],
    ports_examined: row.port_list,
    hosts_examined: row.hosts_examined,
  };
}

describe.each(testDatabases())('scan API on seeded data ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let seed: Seed;

  beforeAll(async () => {
    ({ server, key, seed } = await startSeededServer(database));
  });
  afterAll(() => server?.close());

  const get = (path: string) => server.request(path, { key });
  const newestFirst = () => SCAN_KEYS.map((k) => seed.scans[k]).sort((a, b) => b.id - a.id);

  it('lists scans newest first with the total in X-Total-Count', async () => {
    const res = await get('/api/scans');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-total-count')).toBe(String(SCAN_KEYS.length));
    const body = await readJson(res);
    expect(body).toEqual(newestFirst().map(expectedRecord));
    // Newest first also in time: started_at never increases down the list.
    const started = body.map((s: { started_at: string }) => s.started_at);
    expect([...started].sort().reverse()).toEqual(started);
  });

  it('pages with limit and offset', async () => {
    const all = newestFirst().map((s) => s.id);
    const res = await get('/api/scans?limit=2&offset=1');
    expect(res.headers.get('x-total-count')).toBe(String(all.length));
    expect((await readJson(res)).map((s: { scan_id: number }) => s.scan_id)).toEqual(all.slice(1, 3));
    const beyond = await get(`/api/scans?offset=${all.length}`);
    expect(await readJson(beyond)).toEqual([]);
    expect(beyond.headers.get('x-total-count')).toBe(String(all.length));
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=abc', 'limit'],
    ['offset=-1', 'offset'],
    ['status=completed', 'status'],
  ])('answers 400 naming the parameter for %s', async (query, name) => {
    const res = await get(`/api/scans?${query}`);
    expect(res.status).toBe(400);
    expect((await readJson(res)).detail).toMatch(new RegExp(`^${name}\\b`));
  });

  it('returns one scan record with every field of the scan record', async () => {
    for (const k of SCAN_KEYS) {
      const row = seed.scans[k];
      const res = await get(`/api/scans/${row.id}`);
      expect(res.status, k).toBe(200);
      const body = await readJson(res);
      for (const field of CONTRACT_SCAN_KEYS) expect(Object.keys(body), k).toContain(field);
      expect(body).toEqual(expectedRecord(row));
    }
    const failed = await readJson(await get(`/api/scans/${seed.scans.failed.id}`));
    expect(failed.status).toBe('failed');
    expect(failed.error).toBe(seed.scans.failed.error);
    expect(failed.error).toBeTruthy();
    const device = await readJson(await get(`/api/scans/${seed.scans.device.id}`));
    expect(device).toMatchObject({ scan_type: 'device', subnet: '192.168.50.10/32', target: '192.168.50.10' });
  });

  it('answers 404 for an unknown scan and 400 for a bad id', async () => {
    for (const path of ['/api/scans/999999', '/api/scans/999999/devices']) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toEqual({ detail: 'Scan not found', code: 'NW_SCAN_NOT_FOUND' });
    }
    for (const path of ['/api/scans/abc', '/api/scans/0', '/api/scans/-1/devices']) {
      const res = await get(path);
      expect(res.status, path).toBe(400);
      expect((await readJson(res)).detail, path).toMatch(/^scan_id\b/);
    }
  });

  it('lists the devices as each scan saw them, ordered by the IP of that scan', async () => {
    for (const k of SCAN_KEYS) {
      const expected = [...seed.snapshots[k]]
        .sort((a, b) => compareIp(a.ip, b.ip))
        .map((snap) => {
          const d = seed.devices[snap.device];
          return {
            device_id: d.id,
            ip_address: snap.ip,
            mac_address: d.mac_address,
            hostname: d.hostname,
            vendor: d.vendor,
            os_name: d.os_name,
            open_ports: openPorts(snap.ports),
            risk_level: snap.risk_level,
            risk_score: snap.risk_score,
          };
        });
      const res = await get(`/api/scans/${seed.scans[k].id}/devices`);
      expect(res.status, k).toBe(200);
      expect(await readJson(res), k).toEqual(expected);
    }
    // The NAS was at .7 in the first scan (after .1, before .9) and has moved to .10 since; the
    // scan shows its risk then (fewer open ports), not its risk now.
    const first = await readJson(await get(`/api/scans/${seed.scans.first.id}/devices`));
    expect(first.map((d: { ip_address: string }) => d.ip_address)).toEqual(['192.168.50.1', '192.168.50.7', '192.168.50.9', '192.168.50.100']);
    const nasThen = seed.snapshots.first.find((s) => s.device === 'nas')!;
    expect(first[1]).toMatchObject({ device_id: seed.devices.nas.id, risk_score: nasThen.risk_score, open_ports: [22, 445, 5000] });
    // Then without the FTP server it has now (both scores may be capped at 100: one finding per CVE).
    const nasNow = await readJson(await get(`/api/devices/${seed.devices.nas.id}`));
    expect(nasNow.ports.filter((p: { state: string }) => p.state === 'open').map((p: { port: number }) => p.port)).toContain(21);
    expect(seed.devices.nas.ip_address).toBe('192.168.50.10');
  });

  it('reports an idle scanner when no scan is queued or running', async () => {
    const res = await get('/api/scan/status');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ scanning: false, scan_id: null, subnet: null, profile: null, progress: null });
  });
});

describe.each(testDatabases())('scan status and default paging ($kind)', (database) => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    ({ server, key } = await startServerWithAdmin(database));
  });
  afterAll(() => server?.close());

  const get = async (path: string) => {
    const res = await server.request(path, { key });
    expect(res.status, path).toBe(200);
    return { body: await readJson(res), total: res.headers.get('x-total-count') };
  };

  it('reports a running scan with its progress, a queued one without, and idle again afterwards', async () => {
    expect((await get('/api/scan/status')).body).toMatchObject({ scanning: false, scan_id: null });

    const queued = await server.store.scans.create({
      status: 'queued',
      profile: 'quick',
      subnet: '10.20.0.0/16',
      scan_type: 'network',
      devices_found: 0,
    });
    expect((await get('/api/scan/status')).body).toEqual({
      scanning: true,
      scan_id: queued.id,
      subnet: '10.20.0.0/16',
      profile: 'quick',
      progress: null,
    });

    const progress = {
      phase: 'port_scan',
      percent: 42.5,
      hosts_total: 256,
      hosts_found: 7,
      hosts_done: 109,
      current_host: '10.20.0.109',
      elapsed_seconds: 63.2,
      eta_seconds: 85,
    };
    await server.store.scans.update(queued.id, { status: 'running', started_at: new Date().toISOString(), progress: JSON.stringify(progress) });
    expect((await get('/api/scan/status')).body).toEqual({ scanning: true, scan_id: queued.id, subnet: '10.20.0.0/16', profile: 'quick', progress });
    const record = (await get(`/api/scans/${queued.id}`)).body;
    expect(record).toMatchObject({ scan_id: queued.id, status: 'running', completed_at: null, progress });

    await server.store.scans.update(queued.id, { status: 'completed', completed_at: new Date().toISOString(), progress: null });
    expect((await get('/api/scan/status')).body).toEqual({ scanning: false, scan_id: null, subnet: null, profile: null, progress: null });
  });

  it('returns 50 scans by default, up to 1000 when asked, newest first', async () => {
    const existing = Number((await get('/api/scans')).total);
    const created: number[] = [];
    for (let i = 0; i < 60 - existing; i++) {
      const row = await server.store.scans.create({
        status: i % 7 === 0 ? 'failed' : 'completed',
        profile: 'normal',
        subnet: `10.${i}.0.0/24`,
        scan_type: 'network',
        devices_found: i,
      });
      created.push(row.id);
    }
    const page = await get('/api/scans');
    expect(page.total).toBe('60');
    expect(page.body).toHaveLength(50);
    const ids = page.body.map((s: { scan_id: number }) => s.scan_id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => b - a));
    expect(ids[0]).toBe(Math.max(...created));
    const all = await get('/api/scans?limit=1000');
    expect(all.body).toHaveLength(60);
    expect(all.body.slice(0, 50)).toEqual(page.body);
  });
});
