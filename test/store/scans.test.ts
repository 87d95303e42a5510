import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import type { NewScan } from '../../src/store/schema.js';
import { testDatabases, type TestDatabase } from '../helpers/databases.js';

type Opened = Awaited<ReturnType<TestDatabase['open']>>;

const A = '192.168.50.0/24';
const B = '10.0.0.0/24';

describe.each(testDatabases())('scan store ($kind)', (database) => {
  let db: Opened;
  let store: Store;

  beforeEach(async () => {
    db = await database.open();
    store = db.store;
  });
  afterEach(() => db?.cleanup());

  const scan = (subnet: string, status: string, extra: Partial<NewScan> = {}) =>
    store.scans.create({ status, profile: 'normal', subnet, scan_type: 'network', devices_found: 0, ...extra });

  it('marks only queued and running scans as failed when interrupted', async () => {
    const completed = await scan(A, 'completed', { completed_at: '2026-01-01T00:00:00.000Z' });
    const failed = await scan(A, 'failed', { error: 'earlier failure', completed_at: '2026-01-01T01:00:00.000Z' });
    const cancelled = await scan(A, 'cancelled');
    const queued = await scan(B, 'queued');
    const running = await scan(A, 'running', { started_at: '2026-01-02T00:00:00.000Z', progress: '{"phase":"discovery"}' });

    expect((await store.scans.active())?.id).toBe(running.id);
    const ids = await store.scans.failInterrupted('Interrupted: the server stopped');
    expect([...ids].sort((a, b) => a - b)).toEqual([queued.id, running.id]);
    for (const id of ids) {
      const row = await store.scans.get(id);
      expect(row).toMatchObject({ status: 'failed', error: 'Interrupted: the server stopped' });
      expect(Date.parse(row?.completed_at ?? '')).not.toBeNaN();
    }
    expect(await store.scans.get(completed.id)).toEqual(completed);
    expect(await store.scans.get(failed.id)).toEqual(failed);
    expect(await store.scans.get(cancelled.id)).toEqual(cancelled);
    expect(await store.scans.active()).toBeUndefined();
    expect(await store.scans.failInterrupted('again')).toEqual([]);
    expect((await store.scans.get(running.id))?.error).toBe('Interrupted: the server stopped');
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
