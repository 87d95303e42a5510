/**
 * kill -9 of the real server process, then a restart on the same data: during a scan (no scan
 * left running, no nmap outlives the server, the scan failed with its duration and an audit entry) and during
 * a burst of writes (the database is intact and every write that was answered is still there).
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { processAlive } from '../../src/util/process.js';
import { nmapVersion } from '../../src/engines/nmap.js';
import type { Store } from '../../src/store/index.js';
import { type CliDatastore, type ServeProcess, bodyOf, cliDatastores, client, openDatastore, sessionCookieOf, startServe } from '../cli/helpers.js';
import { waitFor } from '../helpers/wait.js';

const hasNmap = (await nmapVersion()) !== null;
const ADMIN = { username: 'admin', password: 'correct horse battery' };

/** Checks the database the way an operator would after a crash. */
async function assertIntact(store: Store): Promise<void> {
  if (store.dialect === 'sqlite') {
    const { rows } = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(store.db);
    expect(rows.map((r) => r.integrity_check)).toEqual(['ok']);
    const broken = await sql`pragma foreign_key_check`.execute(store.db);
    expect(broken.rows).toEqual([]);
  } else {
    // PostgreSQL's amcheck: every B-tree index of the service's schema is consistent with itself and its table.
    await sql`create extension if not exists amcheck`.execute(store.db).catch(() => {
      /* created by a concurrent test run a moment ago */
    });
    const { rows } = await sql<{ name: string }>`
      select c.relname as name, bt_index_check(c.oid, true) is null as checked
      from pg_index i join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace
      join pg_am am on am.oid = c.relam
      where n.nspname = current_schema() and am.amname = 'btree'`.execute(store.db);
    expect(rows.length).toBeGreaterThan(10);
  }
}

describe.each(cliDatastores())('kill -9 of the server ($kind)', ({ create }) => {
  let ds: CliDatastore | undefined;
  const processes: ServeProcess[] = [];
  const stores: Store[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const p of processes.splice(0)) await p.kill();
    await ds?.cleanup();
    ds = undefined;
  });

  async function serve(): Promise<ServeProcess> {
    const p = await startServe(ds!);
    processes.push(p);
    return p;
  }

  async function admin(p: ServeProcess): Promise<{ cookie: string; key: string }> {
    const setup = await client(p.baseUrl)('/api/auth/setup', { method: 'POST', json: ADMIN });
    const cookie = sessionCookieOf(setup);
    const created = await client(p.baseUrl)('/api/keys', { method: 'POST', cookie, json: { name: 'ops' } });
    return { cookie, key: (await bodyOf(created)).key };
  }

  it.skipIf(!hasNmap)('during a scan: nmap dies with the server and the restart records the scan as failed', async () => {
    ds = await create();
    const first = await serve();
    const { key } = await admin(first);
    await client(first.baseUrl)('/api/config', { method: 'PUT', key, json: { scanning: { engine: 'nmap', os_detection: false } } });
    const trigger = await client(first.baseUrl)('/api/scan/trigger?subnet=127.0.3.0/24&profile=intensive', { method: 'POST', key });
    expect(trigger.status).toBe(200);
    const scanId: number = (await bodyOf(trigger)).scan_id;
    const store = await openDatastore(ds);
    stores.push(store);
    const pgid = await waitFor('the port scan to run', async () => {
      const scan = await store.scans.get(scanId);
      const phase = scan?.progress ? (JSON.parse(scan.progress) as { phase: string }).phase : 'queued';
      return phase !== 'queued' && phase !== 'discovery' && scan?.engine_pgid;
    });

    await first.kill();
    // nmap runs in its own process group but dies with the server (engine-process.ts); where it could
    // not be tied to the server, the restart ends it (test/scan/orphaned-engines.test.ts).
    await waitFor('nmap to die with the server', async () => !processAlive(pgid), 2000);

    const second = await serve();
    const scan = await bodyOf(await client(second.baseUrl)(`/api/scans/${scanId}`, { key }));
    expect(scan.status).toBe('failed');
    expect(scan.error).toMatch(/^Interrupted: the server stopped while this scan was running/);
    expect(scan.duration_seconds).toBeGreaterThan(0);
    expect(scan.completed_at).not.toBeNull();
    expect(await store.scans.listActive()).toEqual([]);
    const audit = await bodyOf(await client(second.baseUrl)('/api/audit-logs?action=scan_failed', { key }));
    const entry = audit.find((e: { resource_id: string }) => e.resource_id === String(scanId));
    expect(entry).toMatchObject({ actor: 'system', success: false });
    // No nmap was left for the restart to end.
    expect(entry.details.ended_engine_process_groups).toBeUndefined();
    // And the service scans again.
    const next = await client(second.baseUrl)('/api/scan/trigger?subnet=127.0.4.1&profile=quick', { method: 'POST', key });
    expect(next.status).toBe(200);
  });

  it('during a burst of writes: the database is intact and every answered write is kept', async () => {
    ds = await create();
    const first = await serve();
    const { cookie, key } = await admin(first);
    const acknowledged: { id: number; name: string }[] = [];
    const stop = { now: false };
    const writer = async (lane: number) => {
      for (let i = 0; !stop.now; i++) {
        const res = await client(first.baseUrl)('/api/keys', { method: 'POST', cookie, json: { name: `burst-${lane}-${i}` } }).catch(() => null);
        if (!res) return;
        if (res.status === 201) acknowledged.push(await bodyOf(res));
        const label = await client(first.baseUrl)('/api/config', { method: 'PUT', key, json: { zones: ['Servers', `Lane${lane}-${i}`] } }).catch(
          () => null,
        );
        if (!label) return;
      }
    };
    const lanes = [0, 1, 2, 3].map(writer);
    await waitFor('writes to be under way', async () => acknowledged.length >= 20);
    await first.kill();
    stop.now = true;
    await Promise.all(lanes);

    const second = await serve();
    const store = await openDatastore(ds);
    stores.push(store);
    await assertIntact(store);
    const keys = await bodyOf(await client(second.baseUrl)('/api/keys', { key }));
    const names = new Set(keys.map((k: { name: string }) => k.name));
    const lost = acknowledged.filter((k) => !names.has(k.name));
    expect(lost).toEqual([]);
    expect(acknowledged.length).toBeGreaterThanOrEqual(20);
  });
});
