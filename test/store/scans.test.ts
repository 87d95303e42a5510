import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import type { NewScan } from '../../src/store/schema.js';
import { freshDatabaseEachTest, testDatabases } from '../helpers/databases.js';
import { startScan, testLease as lease } from '../helpers/queue.js';

const A = '192.168.50.0/24';
const B = '10.0.0.0/24';

describe.each(testDatabases())('scan store ($kind)', (database) => {
  let store: Store;
  freshDatabaseEachTest(database, (opened) => {
    store = opened.store;
  });

  const scan = (subnet: string, status: string, extra: Partial<NewScan> = {}) =>
    store.scans.create({ status, profile: 'normal', subnet, scan_type: 'network', devices_found: 0, ...extra });

  const fields = (subnet: string) => ({ profile: 'normal', subnet, scan_type: 'network', started_at: new Date().toISOString() });

  it('lets exactly one of many concurrent starts take the active slot', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => startScan(store, fields(A), lease(`owner-${i}`))));
    const started = results.filter((r) => r !== undefined);
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({ status: 'running', active_slot: 1 });
    expect((await store.scans.list(50, 0)).total).toBe(1);
    expect((await store.scans.active())?.id).toBe(started[0]?.id);
  });

  it('frees the slot when the owner finishes, clearing an earlier error, and ignores other owners', async () => {
    const first = await startScan(store, fields(A), lease('me'));
    if (!first) throw new Error('not started');
    await store.scans.update(first.id, { error: 'transient', engine_pgid: 4242 });
    expect(await store.scans.finish(first.id, 'someone-else', { status: 'failed', error: 'x' })).toBe(false);
    expect(await store.scans.finish(first.id, 'me', { status: 'completed', completed_at: new Date().toISOString() })).toBe(true);
    const row = await store.scans.get(first.id);
    expect(row).toMatchObject({ status: 'completed', error: null, active_slot: null, engine_pgid: null, lease_expires_at: null });
    // Finishing twice changes nothing; the slot is free for the next scan.
    expect(await store.scans.finish(first.id, 'me', { status: 'failed', error: 'late' })).toBe(false);
    expect((await store.scans.get(first.id))?.status).toBe('completed');
    expect(await startScan(store, fields(B), lease('me'))).toBeDefined();
  });

  it('renews only its own running scan and reports a cancel asked elsewhere', async () => {
    const scan = await startScan(store, fields(A), lease('me'));
    if (!scan) throw new Error('not started');
    const later = new Date(Date.now() + 90_000).toISOString();
    expect(await store.scans.renewLease(scan.id, 'me', later)).toBe('ok');
    expect((await store.scans.get(scan.id))?.lease_expires_at).toBe(later);
    expect(await store.scans.renewLease(scan.id, 'intruder', later)).toBe('lost');
    await store.scans.requestCancel(scan.id, new Date().toISOString());
    expect(await store.scans.renewLease(scan.id, 'me', later)).toBe('cancel_requested');
    await store.scans.finish(scan.id, 'me', { status: 'cancelled', error: 'Cancelled' });
    expect(await store.scans.renewLease(scan.id, 'me', later)).toBe('lost');
    expect((await store.scans.get(scan.id))?.cancel_requested_at).toBeNull();
  });

  it('lists queued and running scans as active, oldest first', async () => {
    await scan(A, 'completed', { completed_at: '2026-01-01T00:00:00.000Z' });
    const queued = await scan(B, 'queued');
    const running = await scan(A, 'running', { started_at: '2026-01-02T00:00:00.000Z' });
    await scan(A, 'cancelled');
    expect((await store.scans.listActive()).map((r) => r.id)).toEqual([queued.id, running.id]);
    // An ownerless scan (from before leases existed) is finished with owner null.
    expect(await store.scans.finish(running.id, null, { status: 'failed', error: 'Interrupted' })).toBe(true);
    expect((await store.scans.listActive()).map((r) => r.id)).toEqual([queued.id]);
  });

  it('picks as baseline the latest earlier completed scan of the same subnet', async () => {
    const a1 = await scan(A, 'completed');
    const a2 = await scan(A, 'completed');
    const aFailed = await scan(A, 'failed');
    const bDone = await scan(B, 'completed');
    const aCancelled = await scan(A, 'cancelled');
    const a3 = await scan(A, 'running');
    const a4 = await scan(A, 'completed');

    expect((await store.scans.previousCompleted(A, a3.id))?.id).toBe(a2.id);
    expect((await store.scans.previousCompleted(A, a2.id))?.id).toBe(a1.id);
    expect(await store.scans.previousCompleted(A, a1.id)).toBeUndefined();
    // Neither the failed or cancelled scans of A nor the later completed scan of B is a baseline.
    expect((await store.scans.previousCompleted(A, aCancelled.id))?.id).toBe(a2.id);
    expect((await store.scans.previousCompleted(A, aFailed.id))?.id).toBe(a2.id);
    expect(await store.scans.previousCompleted(B, bDone.id)).toBeUndefined();
    expect((await store.scans.previousCompleted(B, a4.id))?.id).toBe(bDone.id);
    // A later completed scan is never the baseline of an earlier one.
    expect((await store.scans.previousCompleted(A, a4.id))?.id).toBe(a2.id);
  });

  it('lists newest first with a numeric total', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await scan(A, 'completed')).id);
    const page = await store.scans.list(2, 1);
    expect(page.total).toBe(5);
    expect(typeof page.total).toBe('number');
    expect(page.rows.map((r) => r.id)).toEqual([ids[3], ids[2]]);
  });
});
