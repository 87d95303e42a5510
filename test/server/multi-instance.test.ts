/**
 * Several API instances on one database (issue 13, item 2; CONTRACT §12): three real
 * `netwarden serve` processes (the built dist/) on one PostgreSQL schema, each on its own port,
 * driven alternately. Sessions, API-key revocation, the login throttle, the configuration,
 * schedule slots and scan starts behave as with one instance, and the live events of a scan run
 * by one instance reach the event stream of another (the event relay, src/events/relay.ts).
 * Polled, never timed. PostgreSQL only: the relay of live events and cache invalidations between
 * processes runs on PostgreSQL (instances sharing a SQLite file hear only their own events).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nmapVersion } from '../../src/engines/nmap.js';
import { type CliDatastore, type ServeProcess, bodyOf, client, postgresDatastore, sessionCookieOf, startServe } from '../cli/helpers.js';
import { httpListener } from '../helpers/listeners.js';
import { startReceiver, type Receiver } from '../helpers/receivers.js';
import { openSse } from '../helpers/sse.js';
import { waitFor } from '../helpers/wait.js';

const pgUrl = process.env.TEST_DATABASE_URL;
const hasNmap = (await nmapVersion()) !== null;
const ADMIN = { username: 'admin', password: 'correct horse battery' };

interface Scan {
  scan_id: number;
  status: string;
  triggered_by: string;
}

describe.skipIf(!pgUrl)('three server processes on one PostgreSQL schema (skipped without TEST_DATABASE_URL: needs PostgreSQL)', () => {
  let ds: CliDatastore;
  let a: ServeProcess;
  let b: ServeProcess;
  let c: ServeProcess;
  let cookie: string;
  let key: string;
  let receiver: Receiver;
  const processes: ServeProcess[] = [];

  beforeAll(async () => {
    ds = await postgresDatastore(pgUrl!);
    a = await startServe(ds);
    processes.push(a);
    const setup = await client(a.baseUrl)('/api/auth/setup', { method: 'POST', json: ADMIN });
    expect(setup.status).toBe(201);
    cookie = sessionCookieOf(setup);
    const created = await client(a.baseUrl)('/api/keys', { method: 'POST', cookie, json: { name: 'ops' } });
    key = (await bodyOf(created)).key;
    [b, c] = await Promise.all([startServe(ds), startServe(ds)]);
    processes.push(b, c);
    // The native engine needs nothing installed; nmap when there is one (as in production).
    const config = await client(a.baseUrl)('/api/config', {
      method: 'PUT',
      key,
      json: { scanning: hasNmap ? { engine: 'nmap', os_detection: false } : { engine: 'native' } },
    });
    expect(config.status).toBe(200);
    // A channel told of every scan that ends: each must be told once, not once per instance.
    receiver = await startReceiver();
    const channel = await client(b.baseUrl)('/api/notifications/channels', {
      method: 'POST',
      key,
      json: { name: 'hook', type: 'webhook', config: { url: `${receiver.url}/hook` }, filters: { scan_events: ['completed', 'failed'] } },
    });
    expect(channel.status).toBe(201);
  }, 90_000);

  afterAll(async () => {
    for (const p of processes) await p.stop();
    await receiver?.close();
    await ds?.cleanup();
  });

  /** Waits until the scan has ended, as any instance reports it. */
  async function ended(scanId: number, on = a): Promise<Scan> {
    return waitFor(
      `scan ${scanId} to end`,
      async () => {
        const scan = (await bodyOf(await client(on.baseUrl)(`/api/scans/${scanId}`, { key }))) as Scan;
        return ['completed', 'failed', 'cancelled'].includes(scan.status) && scan;
      },
      60_000,
    );
  }

  it('a session opened on A works on B, and a logout on B ends it on A', async () => {
    const login = await client(a.baseUrl)('/api/auth/login', { method: 'POST', json: ADMIN });
    expect(login.status).toBe(200);
    const session = sessionCookieOf(login);
    expect((await client(b.baseUrl)('/api/auth/me', { cookie: session })).status).toBe(200);
    expect((await client(c.baseUrl)('/api/auth/me', { cookie: session })).status).toBe(200);
    expect((await client(b.baseUrl)('/api/auth/logout', { method: 'POST', cookie: session })).status).toBeLessThan(300);
    expect((await client(a.baseUrl)('/api/auth/me', { cookie: session })).status).toBe(401);
    expect((await client(c.baseUrl)('/api/auth/me', { cookie: session })).status).toBe(401);
  });

  it('a key created on A works on B; revoked on B, it is refused on A and C at their very next request', async () => {
    for (let round = 0; round < 3; round++) {
      const created = await client(a.baseUrl)('/api/keys', { method: 'POST', cookie, json: { name: `round-${round}` } });
      expect(created.status).toBe(201);
      const { id, key: roundKey } = await bodyOf(created);
      // Verified on every instance first, so each holds it in its key cache.
      for (const server of [b, a, c]) expect((await client(server.baseUrl)('/api/stats', { key: roundKey })).status).toBe(200);
      const revoked = await client(b.baseUrl)(`/api/keys/${id}`, { method: 'DELETE', cookie });
      expect(revoked.status).toBeLessThan(300);
      expect((await client(a.baseUrl)('/api/stats', { key: roundKey })).status).toBe(401);
      expect((await client(c.baseUrl)('/api/stats', { key: roundKey })).status).toBe(401);
      expect((await client(b.baseUrl)('/api/stats', { key: roundKey })).status).toBe(401);
    }
  });

  it('counts failed logins across instances: failures split between A and B reach the limit', async () => {
    // Another username than the administrator's, whose logins the other tests need.
    const attempt = (server: ServeProcess) =>
      client(server.baseUrl)('/api/auth/login', { method: 'POST', json: { username: 'mallory', password: 'not the password' } });
    // Five failures are allowed per username (auth/throttle.ts LOGIN_LIMITS.user): three on A, two on B.
    for (const server of [a, b, a, b, a]) expect((await attempt(server)).status).toBe(401);
    for (const server of [b, a, c]) {
      const refused = await attempt(server);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });

  it('a configuration change on A is seen on B and C at once', async () => {
    // Read first on B and C, so each holds the configuration in its cache.
    for (const server of [b, c]) expect((await bodyOf(await client(server.baseUrl)('/api/config', { key }))).retention.days).toBe(365);
    const put = await client(a.baseUrl)('/api/config', { method: 'PUT', key, json: { retention: { days: 123 } } });
    expect(put.status).toBe(200);
    for (const server of [b, c]) expect((await bodyOf(await client(server.baseUrl)('/api/config', { key }))).retention.days).toBe(123);
  });

  it('the event stream of A carries the scan started on B: scan_started, its changes, scan_finished', async () => {
    // A baseline with a listener's port open (scanned by A), then the port closed: B's scan records the change.
    const listener = await httpListener('127.0.0.1', 'multi-instance-test');
    const portRange = await client(a.baseUrl)('/api/config', {
      method: 'PUT',
      key,
      json: { scanning: { port_range: String(listener.port), top_ports: 0 } },
    });
    expect(portRange.status).toBe(200);
    const baseline = await client(a.baseUrl)('/api/scan/trigger?subnet=127.0.0.1/32&profile=normal', { method: 'POST', key });
    expect(baseline.status).toBe(200);
    expect((await ended((await bodyOf(baseline)).scan_id)).status).toBe('completed');
    await listener.close();
    const stream = await openSse(`${a.baseUrl}/api/events`, { 'X-API-Key': key });
    try {
      expect(stream.status).toBe(200);
      const trigger = await client(b.baseUrl)('/api/scan/trigger?subnet=127.0.0.1/32&profile=normal', { method: 'POST', key });
      expect(trigger.status).toBe(200);
      const scanId: number = (await bodyOf(trigger)).scan_id;
      const ofScan = (e: { event: string; data: any }) => (e.data.scan_id ?? e.data.id) === scanId;
      await stream.until((s) => s.parsed().some((e) => e.event === 'scan_finished' && ofScan(e)), 'scan_finished of the scan run by B');
      const events = stream.parsed();
      const finished = events.find((e) => e.event === 'scan_finished' && ofScan(e))!;
      expect(finished.data.status).toBe('completed');
      expect(events.some((e) => e.event === 'scan_started' && ofScan(e))).toBe(true);
      // Every change B recorded reached A's stream, before the scan_finished (ids are A's own, increasing).
      const changes = (await bodyOf(await client(b.baseUrl)(`/api/changes?scan_id=${scanId}`, { key }))) as Array<{
        id: number;
        change_type: string;
      }>;
      expect(changes.map((ch) => ch.change_type)).toEqual(['port_closed']);
      const streamed = events.filter((e) => e.event === 'change' && e.data.scan_id === scanId);
      expect(streamed.map((e) => e.data.id).sort()).toEqual(changes.map((ch) => ch.id).sort());
      expect(streamed.every((e) => e.id < finished.id)).toBe(true);
      expect(events.map((e) => e.id)).toEqual([...events.map((e) => e.id)].sort((x, y) => x - y));
    } finally {
      stream.close();
    }
  });

  it('of two scan triggers at once, on A and on B, exactly one starts and the other gets 409', async () => {
    const [onA, onB] = await Promise.all(
      [a, b].map((server) => client(server.baseUrl)('/api/scan/trigger?subnet=127.0.0.2/32&profile=quick', { method: 'POST', key })),
    );
    const statuses = [onA.status, onB.status].sort();
    expect(statuses).toEqual([200, 409]);
    const winner = await bodyOf(onA.status === 200 ? onA : onB);
    const loser = await bodyOf(onA.status === 200 ? onB : onA);
    expect(loser).toMatchObject({ scan_id: winner.scan_id });
    await ended(winner.scan_id);
  });

  it('fires a schedule slot exactly once across the instances', { timeout: 150_000 }, async () => {
    const name = 'every-minute';
    const created = await client(b.baseUrl)('/api/schedules', {
      method: 'POST',
      key,
      json: { name, cron: '* * * * *', profile: 'quick', subnet: '127.0.0.3/32' },
    });
    expect(created.status).toBe(201);
    const schedule = await bodyOf(created);
    const slot: string = schedule.next_run_at;
    // The next minute starts; every instance's scheduler ticks each second.
    const run = await waitFor(
      'the slot to fire',
      async () => {
        const scans = (await bodyOf(await client(c.baseUrl)('/api/scans?limit=100', { key }))) as Scan[];
        return scans.find((s) => s.triggered_by === `schedule:${name}`);
      },
      100_000,
    );
    await ended(run.scan_id, c);
    // Disabled now, so no later slot fires while the results are read.
    expect((await client(a.baseUrl)(`/api/schedules/${schedule.id}`, { method: 'PUT', key, json: { enabled: false } })).status).toBe(200);
    const scans = (await bodyOf(await client(a.baseUrl)('/api/scans?limit=100', { key }))) as Scan[];
    expect(scans.filter((s) => s.triggered_by === `schedule:${name}`).map((s) => s.scan_id)).toEqual([run.scan_id]);
    const runs = (await bodyOf(await client(b.baseUrl)('/api/audit-logs?action=schedule_run&limit=100', { key }))) as Array<{
      details: { scan_id: number; slot: string };
    }>;
    expect(runs).toHaveLength(1);
    expect(runs[0].details.scan_id).toBe(run.scan_id);
    expect(Date.parse(runs[0].details.slot)).toBe(Date.parse(slot));
    const started = (await bodyOf(await client(c.baseUrl)('/api/audit-logs?action=scan_started&limit=100', { key }))) as Array<{
      resource_id: string;
    }>;
    expect(started.filter((e) => e.resource_id === String(run.scan_id))).toHaveLength(1);
  });

  it('notified each scan once (by the instance that ran it), not once per instance', async () => {
    const scans = (await bodyOf(await client(a.baseUrl)('/api/scans?limit=100', { key }))) as Scan[];
    const notified = scans.filter((s) => s.status === 'completed' || s.status === 'failed').map((s) => s.scan_id);
    // The baseline and the streamed scan, the race's winner, the schedule's run.
    expect(notified.length).toBeGreaterThanOrEqual(4);
    await receiver.waitFor(notified.length);
    await waitFor(
      'no pending deliveries',
      async () => (await bodyOf(await client(c.baseUrl)('/api/notifications/deliveries?status=pending', { key }))).length === 0,
    );
    const deliveries = (await bodyOf(await client(c.baseUrl)('/api/notifications/deliveries?limit=100', { key }))) as Array<{
      scan_id: number | null;
      status: string;
    }>;
    expect(deliveries.map((d) => d.scan_id).sort()).toEqual([...notified].sort());
    expect(deliveries.every((d) => d.status === 'sent')).toBe(true);
    expect(receiver.requests.map((r) => r.json().scan.scan_id).sort()).toEqual([...notified].sort());
  });
});
