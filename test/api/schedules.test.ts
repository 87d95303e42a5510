/**
 * /api/schedules over HTTP against the real server (CONTRACT §7, §13): CRUD, every bad input
 * named by field, the preview, and "run now" with the scan queue. The scan engine is a gated
 * stand-in (test/helpers/gated-engine.ts), so the test decides when a running scan ends.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NetwardenEvent } from '../../src/events/bus.js';
import { FixedEngineSelector } from '../fuzz/inert-services.js';
import { itRejectsBadBodies } from '../helpers/bad-input.js';
import { testDatabases } from '../helpers/databases.js';
import { GatedEngine } from '../helpers/gated-engine.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const SCHEDULE_KEYS = [
  'id',
  'name',
  'cron',
  'timezone',
  'profile',
  'subnet',
  'enabled',
  'next_run_at',
  'last_run_at',
  'last_scan_id',
  'last_status',
  'created_at',
  'updated_at',
];

describe.each(testDatabases())('schedules API ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let cookie: string;
  let engine: GatedEngine;
  let events: NetwardenEvent[];

  beforeEach(async () => {
    engine = new GatedEngine();
    ({ server, key, cookie } = await startServerWithAdmin(database, { engines: new FixedEngineSelector(engine), keyName: 'ops' }));
    events = [];
    server.app.services.events.subscribe((e) => events.push(e));
  });
  afterEach(async () => {
    await server?.close();
  });

  const call = async (method: string, path: string, json?: unknown) => {
    const res = await server.request(path, { method, key, ...(json === undefined ? {} : { json }) });
    return { status: res.status, body: await readJson(res) };
  };
  const create = (json: Record<string, unknown>) => call('POST', '/api/schedules', json);
  const auditOf = async (action: string) => (await call('GET', `/api/audit-logs?action=${action}`)).body;

  it('creates, reads, changes and deletes a schedule, auditing each step', async () => {
    const before = Date.now();
    const created = await create({ name: 'nightly', cron: '0 3 * * *', subnet: '127.0.6.0/30' });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual([...SCHEDULE_KEYS].sort());
    expect(created.body).toMatchObject({
      name: 'nightly',
      cron: '0 3 * * *',
      timezone: 'UTC',
      profile: 'normal',
      subnet: '127.0.6.0/30',
      enabled: true,
      last_run_at: null,
      last_scan_id: null,
      last_status: null,
    });
    const next = Date.parse(created.body.next_run_at);
    expect(next).toBeGreaterThan(before);
    expect(next - before).toBeLessThanOrEqual(86_400_000);
    expect(created.body.next_run_at).toMatch(/T03:00:00\.000Z$/);
    const id = created.body.id;

    // Defaults: subnet null (network.subnet at run time), and the time zone is honoured.
    const other = await create({ name: 'office hours', cron: '*/30 8-18 * * mon-fri', timezone: 'Europe/Berlin', profile: 'quick', enabled: false });
    expect(other.status).toBe(201);
    expect(other.body).toMatchObject({ subnet: null, profile: 'quick', enabled: false, next_run_at: null, timezone: 'Europe/Berlin' });

    const list = await call('GET', '/api/schedules');
    expect(list.status).toBe(200);
    expect(list.body.map((s: { name: string }) => s.name)).toEqual(['nightly', 'office hours']);
    expect((await call('GET', `/api/schedules/${id}`)).body).toEqual(created.body);

    // PUT is partial: only the given fields change.
    const renamed = await call('PUT', `/api/schedules/${id}`, { name: 'nightly full', profile: 'intensive' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'nightly full', profile: 'intensive', cron: '0 3 * * *', next_run_at: created.body.next_run_at });
    const disabled = await call('PUT', `/api/schedules/${id}`, { enabled: false });
    expect(disabled.body).toMatchObject({ enabled: false, next_run_at: null });
    const retimed = await call('PUT', `/api/schedules/${id}`, { enabled: true, cron: '15 4 * * sun', timezone: 'America/New_York', subnet: null });
    expect(retimed.body).toMatchObject({ enabled: true, cron: '15 4 * * sun', timezone: 'America/New_York', subnet: null });
    expect(new Date(retimed.body.next_run_at).getUTCDay()).toBe(0);

    const updates = await auditOf('schedule_updated');
    expect(updates[updates.length - 1]).toMatchObject({
      actor: 'ops',
      actor_type: 'api_key',
      resource_type: 'schedule',
      resource_id: String(id),
      details: { old: { name: 'nightly', profile: 'normal' }, new: { name: 'nightly full', profile: 'intensive' } },
    });
    expect(await auditOf('schedule_created')).toHaveLength(2);

    const deleted = await call('DELETE', `/api/schedules/${id}`);
    expect(deleted).toEqual({ status: 200, body: { status: 'deleted', id } });
    expect((await call('GET', `/api/schedules/${id}`)).status).toBe(404);
    expect((await auditOf('schedule_deleted'))[0]).toMatchObject({ resource_id: String(id), details: { name: 'nightly full' } });
    expect((await call('GET', '/api/schedules')).body).toHaveLength(1);
  });

  it('answers 400 naming the field for every bad value', async () => {
    expect((await create({ name: 'taken', cron: '0 3 * * *' })).status).toBe(201);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'a', cron: 'every day' }, 'cron'],
      [{ name: 'a', cron: '0 3 * * * *' }, 'cron'],
      [{ name: 'a', cron: '0 0 3 * * * *' }, 'cron'],
      [{ name: 'a', cron: '0 3 * *' }, 'cron'],
      [{ name: 'a', cron: '61 3 * * *' }, 'cron'],
      [{ name: 'a', cron: '0 0 L * *' }, 'cron'],
      [{ name: 'a', cron: '@daily' }, 'cron'],
      [{ name: 'a', cron: '' }, 'cron'],
      [{ name: 'a', cron: '0 0 30 2 *' }, 'cron'],
      [{ name: 'a', cron: '0 3 * * *', timezone: 'Mars/Olympus' }, 'timezone'],
      [{ name: 'a', cron: '0 3 * * *', timezone: '' }, 'timezone'],
      [{ name: 'a', cron: '0 3 * * *', timezone: null }, 'timezone'],
      [{ name: 'taken', cron: '0 3 * * *' }, 'name'],
      [{ name: '  taken ', cron: '0 3 * * *' }, 'name'],
      [{ name: '', cron: '0 3 * * *' }, 'name'],
      [{ name: '   ', cron: '0 3 * * *' }, 'name'],
      [{ name: 'x'.repeat(101), cron: '0 3 * * *' }, 'name'],
      [{ cron: '0 3 * * *' }, 'name'],
      [{ name: 'a' }, 'cron'],
      [{ name: 'a', cron: '0 3 * * *', subnet: '192.168.1.0/33' }, 'subnet'],
      [{ name: 'a', cron: '0 3 * * *', subnet: 'lan' }, 'subnet'],
      [{ name: 'a', cron: '0 3 * * *', subnet: '' }, 'subnet'],
      [{ name: 'a', cron: '0 3 * * *', subnet: '192.168.1.0/24' }, 'subnet'],
      [{ name: 'a', cron: '0 3 * * *', subnet: '127.0.0.0/8' }, 'subnet'],
      [{ name: 'a', cron: '0 3 * * *', profile: 'deep' }, 'profile'],
      [{ name: 'a', cron: '0 3 * * *', enabled: 'yes' }, 'enabled'],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.detail, JSON.stringify(body)).toMatch(new RegExp(`^${field}: `));
    }
    // Outside the scope guard is refused with the setting that says so.
    expect((await create({ name: 'a', cron: '0 3 * * *', subnet: '192.168.1.0/24' })).body.detail).toContain('NETWARDEN_SCAN_ALLOW');
    expect((await call('GET', '/api/schedules')).body).toHaveLength(1);

    const { body: taken } = await call('GET', '/api/schedules');
    const id = taken[0].id;
    expect((await create({ name: 'second', cron: '0 4 * * *' })).status).toBe(201);
    for (const [body, field] of [
      [{ cron: '* * * * * *' }, 'cron'],
      [{ timezone: 'Nowhere/Special' }, 'timezone'],
      [{ name: 'second' }, 'name'],
      [{ subnet: '8.8.8.0/24' }, 'subnet'],
      [{ name: null }, 'name'],
      [{}, 'body'],
    ] as Array<[Record<string, unknown>, string]>) {
      const res = await call('PUT', `/api/schedules/${id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.detail, JSON.stringify(body)).toMatch(new RegExp(`^${field}: `));
    }
    // Nothing changed, and renaming to its own name is fine.
    expect((await call('PUT', `/api/schedules/${id}`, { name: 'taken' })).status).toBe(200);

    for (const path of ['/api/schedules/999', '/api/schedules/999/run']) {
      const res = await call(path.endsWith('/run') ? 'POST' : 'GET', path);
      expect(res).toEqual({ status: 404, body: { detail: 'Schedule not found', code: 'NW_SCHEDULE_NOT_FOUND' } });
    }
    expect((await call('PUT', '/api/schedules/999', { name: 'x' })).status).toBe(404);
    expect((await call('DELETE', '/api/schedules/999')).status).toBe(404);
    expect((await call('GET', '/api/schedules/abc')).status).toBe(400);
  });

  describe('malformed bodies', () => {
    itRejectsBadBodies({
      context: () => ({ server, auth: { key } }),
      method: 'POST',
      path: '/api/schedules',
      valid: { name: 'n', cron: '0 3 * * *' },
      wrongTypes: [
        { body: { name: 1, cron: '0 3 * * *' }, field: 'name' },
        { body: { name: 'n', cron: 5 }, field: 'cron' },
        { body: { name: 'n', cron: '0 3 * * *', subnet: 10 }, field: 'subnet' },
        { body: { name: 'n', cron: '0 3 * * *', enabled: 1 }, field: 'enabled' },
      ],
    });
  });

  it('previews the next run times of a pattern as the UI asks, with 400 naming cron, timezone or count', async () => {
    const preview = await call('GET', `/api/schedules/preview?cron=${encodeURIComponent('0 3 * * *')}&timezone=Europe/Berlin`);
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ cron: '0 3 * * *', timezone: 'Europe/Berlin' });
    expect(preview.body.next_runs).toHaveLength(5);
    const times = preview.body.next_runs.map((t: string) => Date.parse(t));
    expect(times.every((t: number, i: number) => i === 0 || t > times[i - 1])).toBe(true);
    for (const t of preview.body.next_runs) {
      expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' }).format(new Date(t))).toBe('03:00');
    }
    const three = await call('GET', `/api/schedules/preview?cron=${encodeURIComponent('*/10 * * * *')}&count=3`);
    expect(three.body.timezone).toBe('UTC');
    expect(three.body.next_runs).toHaveLength(3);
    expect(Date.parse(three.body.next_runs[1]) - Date.parse(three.body.next_runs[0])).toBe(600_000);
    for (const [query, field] of [
      ['cron=' + encodeURIComponent('* * * * * *'), 'cron'],
      ['cron=nonsense', 'cron'],
      ['', 'cron'],
      ['cron=' + encodeURIComponent('0 3 * * *') + '&timezone=', 'timezone'],
      ['cron=' + encodeURIComponent('0 3 * * *') + '&timezone=Atlantis/Capital', 'timezone'],
      ['cron=' + encodeURIComponent('0 3 * * *') + '&count=0', 'count'],
      ['cron=' + encodeURIComponent('0 3 * * *') + '&count=21', 'count'],
      ['cron=' + encodeURIComponent('0 3 * * *') + '&count=two', 'count'],
    ]) {
      const res = await call('GET', `/api/schedules/preview?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.detail, query).toMatch(new RegExp(`^${field}: `));
    }
    expect((await server.request('/api/schedules/preview?cron=x')).status).toBe(401);
  });

  it('runs a schedule now: started when idle, queued behind a running scan, one queued run per schedule, 409 for user triggers meanwhile', async () => {
    const { body: schedule } = await create({ name: 'watch', cron: '0 3 * * *', subnet: '127.0.6.0/30', profile: 'quick' });

    // Idle: the run starts at once, and says who asked for it.
    const first = await call('POST', `/api/schedules/${schedule.id}/run`);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ status: 'started', scan_id: expect.any(Number) });
    const done = await waitForScan(server, key, first.body.scan_id);
    expect(done).toMatchObject({ status: 'completed', subnet: '127.0.6.0/30', profile: 'quick', triggered_by: 'key:ops' });
    expect((await call('GET', `/api/schedules/${schedule.id}`)).body).toMatchObject({ last_scan_id: first.body.scan_id, last_status: 'completed' });

    // A user's scan runs; the schedule's run waits for it.
    engine.hold('127.0.5.0/30');
    const running = await triggerScan(server, key, { subnet: '127.0.5.0/30', profile: 'quick' });
    events.length = 0;
    const queued = await call('POST', `/api/schedules/${schedule.id}/run`);
    expect(queued.body).toEqual({ status: 'queued', scan_id: expect.any(Number) });
    const q = queued.body.scan_id;
    expect((await call('GET', `/api/scans/${q}`)).body).toMatchObject({ status: 'queued', started_at: null, subnet: '127.0.6.0/30' });
    expect(events.filter((e) => e.name === 'scan_queued').map((e) => (e.data as { scan_id: number }).scan_id)).toEqual([q]);
    expect((await call('GET', `/api/schedules/${schedule.id}`)).body).toMatchObject({ last_scan_id: q, last_status: 'queued' });

    // At most one queued run per schedule: asking again answers with the same queued scan.
    expect((await call('POST', `/api/schedules/${schedule.id}/run`)).body).toEqual({ status: 'queued', scan_id: q });
    expect((await call('GET', '/api/scans')).body.filter((s: { status: string }) => s.status === 'queued')).toHaveLength(1);

    // User triggers keep §3: 409 naming the running scan.
    for (const path of ['/api/scan/trigger?subnet=127.0.7.0/30', '/api/scan/device/127.0.7.1']) {
      const res = await call('POST', path);
      expect(res, path).toEqual({ status: 409, body: { detail: 'A scan is already running', code: 'NW_SCAN_BUSY', scan_id: running.scan_id } });
    }
    const status = (await call('GET', '/api/scan/status')).body;
    expect(status).toMatchObject({ scanning: true, scan_id: running.scan_id });

    // The running scan ends; the queued one starts and completes as an ordinary scan.
    engine.release('127.0.5.0/30');
    expect((await waitForScan(server, key, running.scan_id)).status).toBe('completed');
    const ran = await waitForScan(server, key, q);
    expect(ran).toMatchObject({ status: 'completed', triggered_by: 'key:ops' });
    expect(ran.started_at).not.toBeNull();
    expect(events.filter((e) => e.name === 'scan_started').map((e) => (e.data as { scan_id: number }).scan_id)).toContain(q);
    const started = await auditOf('scan_started');
    expect(started.find((e: { resource_id: string }) => e.resource_id === String(q))).toMatchObject({
      actor: 'ops',
      actor_type: 'api_key',
      details: { schedule_id: schedule.id },
    });
    expect(await auditOf('schedule_run')).toHaveLength(3);
  });

  it('cancels a queued scan, and deleting a schedule withdraws its queued run', async () => {
    const { body: a } = await create({ name: 'a', cron: '0 3 * * *', subnet: '127.0.6.0/30', profile: 'quick' });
    const { body: b } = await create({ name: 'b', cron: '0 4 * * *', subnet: '127.0.6.4/30', profile: 'quick' });
    engine.hold('127.0.5.0/30');
    const running = await triggerScan(server, key, { subnet: '127.0.5.0/30', profile: 'quick' });
    const qa = (await call('POST', `/api/schedules/${a.id}/run`)).body.scan_id;
    const qb = (await call('POST', `/api/schedules/${b.id}/run`)).body.scan_id;

    const cancelled = await call('POST', `/api/scans/${qa}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ scan_id: qa, status: 'cancelled', error: 'Cancelled', started_at: null });
    expect((await call('POST', `/api/scans/${qa}/cancel`)).status).toBe(409);
    expect((await auditOf('scan_cancelled'))[0]).toMatchObject({ resource_id: String(qa) });
    // With its queued run gone, the schedule can queue again.
    const again = (await call('POST', `/api/schedules/${a.id}/run`)).body;
    expect(again.status).toBe('queued');
    expect(again.scan_id).not.toBe(qa);

    expect((await call('DELETE', `/api/schedules/${b.id}`)).status).toBe(200);
    expect((await call('GET', `/api/scans/${qb}`)).body).toMatchObject({ status: 'cancelled' });

    engine.release('127.0.5.0/30');
    expect((await waitForScan(server, key, running.scan_id)).status).toBe('completed');
    expect((await waitForScan(server, key, again.scan_id)).status).toBe('completed');
    // Nothing else ran: the cancelled and withdrawn runs never reached the engine.
    expect(engine.discovered).toEqual(['127.0.5.0/30', '127.0.6.0/30']);
  });

  it('records a session user as triggered_by and refuses schedules to anonymous callers', async () => {
    const { body: s } = await create({ name: 'by-user', cron: '0 3 * * *', subnet: '127.0.6.0/30', profile: 'quick' });
    const res = await server.request(`/api/schedules/${s.id}/run`, { method: 'POST', cookie });
    const run = await readJson(res);
    expect((await waitForScan(server, key, run.scan_id)).triggered_by).toBe('admin');
    for (const [method, path] of [
      ['GET', '/api/schedules'],
      ['POST', '/api/schedules'],
      ['GET', `/api/schedules/${s.id}`],
      ['PUT', `/api/schedules/${s.id}`],
      ['DELETE', `/api/schedules/${s.id}`],
      ['POST', `/api/schedules/${s.id}/run`],
    ]) {
      const anon = await server.request(path, { method, json: method === 'POST' || method === 'PUT' ? { name: 'x' } : undefined });
      expect(anon.status, `${method} ${path}`).toBe(401);
    }
    await waitFor('the scan to be recorded', async () => (await call('GET', `/api/scans/${run.scan_id}`)).body.status === 'completed');
  });
});
