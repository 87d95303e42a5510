/**
 * Two real `netwarden serve` processes on one database (SQLite file, and PostgreSQL when
 * TEST_DATABASE_URL is set), driven alternately: the login limit holds across both under
 * concurrency, exactly one of many concurrent scan starts wins, restarting one instance leaves the
 * other's running scan alone, and a cancel reaches the instance that runs the scan.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processAlive } from '../../src/util/process.js';
import { nmapVersion } from '../../src/engines/nmap.js';
import type { Store } from '../../src/store/index.js';
import { type CliDatastore, type ServeProcess, bodyOf, cliDatastores, client, openDatastore, sessionCookieOf, startServe } from '../cli/helpers.js';
import { waitFor } from '../helpers/wait.js';

const hasNmap = (await nmapVersion()) !== null;
const ADMIN = { username: 'admin', password: 'correct horse battery' };

describe.each(cliDatastores())('two server processes on one database ($kind)', ({ create }) => {
  let ds: CliDatastore;
  let a: ServeProcess;
  let b: ServeProcess;
  let key: string;
  let store: Store;
  const processes: ServeProcess[] = [];

  beforeAll(async () => {
    ds = await create();
    a = await startServe(ds);
    processes.push(a);
    const setup = await client(a.baseUrl)('/api/auth/setup', { method: 'POST', json: ADMIN });
    expect(setup.status).toBe(201);
    const created = await client(a.baseUrl)('/api/keys', { method: 'POST', cookie: sessionCookieOf(setup), json: { name: 'ops' } });
    key = (await bodyOf(created)).key;
    b = await startServe(ds);
    processes.push(b);
    store = await openDatastore(ds);
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    for (const p of processes) await p.kill();
    await ds?.cleanup();
  });

  it('holds the login limit across both instances when 60 attempts arrive at once', async () => {
    const attempts = Array.from({ length: 60 }, (_, i) => {
      const target = i % 2 === 0 ? a : b;
      const password = i === 44 ? ADMIN.password : `wrong password ${i}`;
      return client(target.baseUrl)('/api/auth/login', { method: 'POST', json: { username: 'admin', password } });
    });
    const statuses = (await Promise.all(attempts)).map((r) => r.status);
    const checked = statuses.filter((s) => s !== 429);
    // At most five passwords were verified (the per-user limit), whichever instance took them.
    expect(checked.length).toBeLessThanOrEqual(5);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(55);
    const failures = await bodyOf(await client(b.baseUrl)('/api/audit-logs?action=login_failed&limit=100', { key }));
    expect(failures.length).toBeLessThanOrEqual(5);
    // Throttled attempts are aggregated: one audit entry per instance and client a minute, not 55.
    const throttled = await bodyOf(await client(a.baseUrl)('/api/audit-logs?action=login_throttled&limit=100', { key }));
    expect(throttled.length).toBeGreaterThanOrEqual(1);
    expect(throttled.length).toBeLessThanOrEqual(2);
    const refused = throttled.reduce(
      (n: number, e: { details: { refused_since_last_entry: number } }) => n + 1 + e.details.refused_since_last_entry,
      0,
    );
    expect(refused).toBeLessThanOrEqual(55);
    // Still throttled on both, even for the right password.
    for (const target of [a, b]) {
      const res = await client(target.baseUrl)('/api/auth/login', { method: 'POST', json: ADMIN });
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });

  it.skipIf(!hasNmap)(
    'starts exactly one of 8 concurrent scans, survives a restart of the other instance, and cancels across instances',
    async () => {
      const config = await client(a.baseUrl)('/api/config', {
        method: 'PUT',
        key,
        json: { scanning: { engine: 'nmap', os_detection: false } },
      });
      expect(config.status).toBe(200);
      const triggers = Array.from({ length: 8 }, (_, i) =>
        client((i % 2 === 0 ? a : b).baseUrl)('/api/scan/trigger?subnet=127.0.3.0/24&profile=intensive', { method: 'POST', key }),
      );
      const responses = await Promise.all(triggers);
      const bodies = await Promise.all(responses.map(bodyOf));
      const started = responses.flatMap((r, i) => (r.status === 200 ? [{ index: i, body: bodies[i] }] : []));
      expect(started).toHaveLength(1);
      const scanId: number = started[0].body.scan_id;
      const refused = responses.filter((r) => r.status === 409);
      expect(refused).toHaveLength(7);
      for (const [i, r] of responses.entries())
        if (r.status === 409) expect(bodies[i]).toEqual({ detail: 'A scan is already running', code: 'NW_SCAN_BUSY', scan_id: scanId });
      expect(await store.scans.listActive()).toHaveLength(1);

      // The instance that did not start the scan restarts: the other's scan keeps running.
      const runner = started[0].index % 2 === 0 ? a : b;
      const other = runner === a ? b : a;
      await other.stop();
      const restarted = await startServe(ds);
      processes.push(restarted);
      const row = await bodyOf(await client(restarted.baseUrl)(`/api/scans/${scanId}`, { key }));
      expect(row).toMatchObject({ status: 'running', error: null });
      const again = await client(restarted.baseUrl)('/api/scan/trigger?subnet=127.0.4.0/30&profile=quick', { method: 'POST', key });
      expect(again.status).toBe(409);
      expect(await bodyOf(again)).toMatchObject({ scan_id: scanId });
      const status = await bodyOf(await client(restarted.baseUrl)('/api/scan/status', { key }));
      expect(status).toMatchObject({ scanning: true, scan_id: scanId });

      // A cancel asked of the restarted instance reaches the runner, which stops nmap.
      const pgid = await waitFor('the port scan to run, with its process group on the scan record', async () => {
        const scan = await store.scans.get(scanId);
        const phase = scan?.progress ? (JSON.parse(scan.progress) as { phase: string }).phase : 'queued';
        return phase !== 'queued' && phase !== 'discovery' && scan?.engine_pgid;
      });
      expect(processAlive(pgid)).toBe(true);
      const cancel = await client(restarted.baseUrl)(`/api/scans/${scanId}/cancel`, { method: 'POST', key });
      expect(cancel.status).toBe(200);
      expect(await bodyOf(cancel)).toMatchObject({ scan_id: scanId, status: 'cancelled', error: 'Cancelled' });
      await waitFor('nmap to exit', async () => !processAlive(pgid), 10_000);
      const audit = await bodyOf(await client(runner.baseUrl)('/api/audit-logs?action=scan_cancelled', { key }));
      expect(audit.filter((e: { resource_id: string }) => e.resource_id === String(scanId))).toHaveLength(1);
      const final = await store.scans.get(scanId);
      expect(final).toMatchObject({ status: 'cancelled', active_slot: null, engine_pgid: null });
      expect(final?.duration_seconds).toBeGreaterThan(0);
    },
  );
});
