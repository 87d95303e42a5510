import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeRow } from '../../src/store/schema.js';
import { testDatabases } from '../helpers/databases.js';
import { readJson, type TestServer } from '../helpers/server.js';
import { startSeededServer, type Seed } from '../helpers/seed.js';

const CHANGE_TYPES = ['device_added', 'device_removed', 'port_opened', 'port_closed', 'service_changed'];
const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'];

const CHANGE_KEYS = [
  'id',
  'scan_id',
  'change_type',
  'severity',
  'device_id',
  'device_ip',
  'device_mac',
  'port',
  'protocol',
  'old_value',
  'new_value',
  'description',
  'detected_at',
];

describe.each(testDatabases())('change API ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let seed: Seed;

  beforeAll(async () => {
    ({ server, key, seed } = await startSeededServer(database));
  });
  afterAll(() => server?.close());

  /** Changes the seeded scans detected, newest (last inserted) first, matching `keep`. */
  const expected = (keep: (c: ChangeRow) => boolean = () => true) => [...seed.changes].reverse().filter(keep);

  async function list(query: string): Promise<{ body: ChangeRow[]; total: string | null }> {
    const res = await server.request(`/api/changes${query}`, { key });
    expect(res.status, `${query}: ${await res.clone().text()}`).toBe(200);
    return { body: await readJson(res), total: res.headers.get('x-total-count') };
  }

  it('lists every change newest first with every field of the change record', async () => {
    const { body, total } = await list('');
    expect(total).toBe(String(seed.changes.length));
    for (const c of body) expect(Object.keys(c).sort()).toEqual([...CHANGE_KEYS].sort());
    expect(body).toEqual(expected());
    const ids = body.map((c) => c.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    // The seed covers every change type and severity.
    expect(new Set(body.map((c) => c.change_type))).toEqual(new Set(CHANGE_TYPES));
    expect(new Set(body.map((c) => c.severity))).toEqual(new Set(SEVERITIES));
  });

  it('filters by scan_id', async () => {
    for (const k of ['first', 'second', 'device', 'failed'] as const) {
      const scanId = seed.scans[k].id;
      const want = expected((c) => c.scan_id === scanId);
      const { body, total } = await list(`?scan_id=${scanId}`);
      expect(body, k).toEqual(want);
      expect(total).toBe(String(want.length));
    }
  });

  it('filters by change_type', async () => {
    for (const type of CHANGE_TYPES) {
      const want = expected((c) => c.change_type === type);
      expect(want.length, type).toBeGreaterThan(0);
      const { body, total } = await list(`?change_type=${type}`);
      expect(body, type).toEqual(want);
      expect(total).toBe(String(want.length));
    }
  });

  it('filters by severity', async () => {
    for (const severity of SEVERITIES) {
      const want = expected((c) => c.severity === severity);
      expect(want.length, severity).toBeGreaterThan(0);
      const { body, total } = await list(`?severity=${severity}`);
      expect(body, severity).toEqual(want);
      expect(total).toBe(String(want.length));
    }
  });

  it('filters by device_id', async () => {
    for (const k of ['nas', 'router', 'laptop', 'lab'] as const) {
      const deviceId = seed.devices[k].id;
      const want = expected((c) => c.device_id === deviceId);
      const { body, total } = await list(`?device_id=${deviceId}`);
      expect(body, k).toEqual(want);
      expect(total).toBe(String(want.length));
    }
    expect(await list('?device_id=999999')).toEqual({ body: [], total: '0' });
  });

  it('combines filters with AND', async () => {
    const second = seed.scans.second.id;
    const nas = seed.devices.nas.id;
    const cases: [string, (c: ChangeRow) => boolean][] = [
      [`scan_id=${second}&change_type=port_opened`, (c) => c.scan_id === second && c.change_type === 'port_opened'],
      [
        `scan_id=${second}&change_type=port_opened&severity=critical`,
        (c) => c.scan_id === second && c.change_type === 'port_opened' && c.severity === 'critical',
      ],
      [`device_id=${nas}&change_type=service_changed`, (c) => c.device_id === nas && c.change_type === 'service_changed'],
      [`device_id=${nas}&scan_id=${second}&severity=info`, (c) => c.device_id === nas && c.scan_id === second && c.severity === 'info'],
    ];
    const sizes: number[] = [];
    for (const [query, keep] of cases) {
      const want = expected(keep);
      sizes.push(want.length);
      const { body, total } = await list(`?${query}`);
      expect(body, query).toEqual(want);
      expect(total, query).toBe(String(want.length));
    }
    expect(sizes.some((n) => n > 1)).toBe(true);
    expect(sizes).toContain(0);
  });

  it('pages with limit and offset', async () => {
    const all = expected();
    expect((await list('?limit=3')).body).toEqual(all.slice(0, 3));
    const page = await list('?limit=3&offset=3');
    expect(page.body).toEqual(all.slice(3, 6));
    expect(page.total).toBe(String(all.length));
    const filtered = expected((c) => c.scan_id === seed.scans.second.id);
    const fpage = await list(`?scan_id=${seed.scans.second.id}&limit=2&offset=1`);
    expect(fpage.body).toEqual(filtered.slice(1, 3));
    expect(fpage.total).toBe(String(filtered.length));
  });

  it.each([
    ['change_type=port_changed', 'change_type'],
    ['change_type=DEVICE_ADDED', 'change_type'],
    ['severity=urgent', 'severity'],
    ['severity=none', 'severity'],
    ['scan_id=abc', 'scan_id'],
    ['scan_id=0', 'scan_id'],
    ['device_id=-1', 'device_id'],
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['offset=-1', 'offset'],
    ['since=yesterday', 'since'],
  ])('answers 400 naming the parameter for %s', async (query, name) => {
    const res = await server.request(`/api/changes?${query}`, { key });
    expect(res.status).toBe(400);
    expect((await readJson(res)).detail).toMatch(new RegExp(`^${name}\\b`));
  });
});
