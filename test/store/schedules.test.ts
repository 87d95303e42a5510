/**
 * The database rules schedules and the scan queue rest on (migration 003): a slot is claimed by
 * exactly one of any number of concurrent claims, a schedule has at most one queued scan, a queued
 * scan takes the active slot only when no scan holds it, and deleting a schedule keeps its scans.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import type { QueuedScan } from '../../src/store/scans.js';
import type { NewSchedule } from '../../src/store/schema.js';
import { freshDatabaseEachTest, testDatabases } from '../helpers/databases.js';
import { startScan, takeScan } from '../helpers/queue.js';

const T0 = '2026-05-01T10:00:00.000Z';
const T1 = '2026-05-01T11:00:00.000Z';
const lease = (ownerId: string) => ({ ownerId, host: 'test-host', pid: 1, leaseExpiresAt: '2999-01-01T00:00:00.000Z' });

function schedule(name: string, overrides: Partial<NewSchedule> = {}): NewSchedule {
  return {
    name,
    cron: '0 * * * *',
    timezone: 'UTC',
    profile: 'quick',
    subnet: '127.0.6.0/30',
    enabled: 1,
    next_run_at: T0,
    last_run_at: null,
    created_at: T0,
    updated_at: T0,
    ...overrides,
  };
}

const queuedScan = (name: string): QueuedScan => ({
  profile: 'quick',
  subnet: '127.0.6.0/30',
  scan_type: 'network',
  target: null,
  triggered_by: `schedule:${name}`,
  created_at: T0,
});

describe.each(testDatabases())('schedule and queue store ($kind)', (database) => {
  let store: Store;
  freshDatabaseEachTest(database, (opened) => {
    store = opened.store;
  });

  it('lets exactly one of many concurrent claims of a slot through, and records one queued scan', async () => {
    const s = await store.schedules.create(schedule('hourly'));
    const claims = await Promise.all(
      Array.from({ length: 8 }, () =>
        store.schedules.claimSlot({ scheduleId: s.id, slot: T0, following: T1, firedAt: T0, scan: queuedScan('hourly') }),
      ),
    );
    const won = claims.filter((c) => c !== null);
    expect(won).toHaveLength(1);
    expect(won[0]).toMatchObject({ kind: 'queued', scan: { status: 'queued', schedule_id: s.id, triggered_by: 'schedule:hourly' } });
    expect(await store.schedules.get(s.id)).toMatchObject({ next_run_at: T1, last_run_at: T0 });
    expect((await store.scans.listActive()).length).toBe(1);
    // A claim of a slot that is gone, or of a disabled schedule, records nothing.
    expect(await store.schedules.claimSlot({ scheduleId: s.id, slot: T0, following: T1, firedAt: T0, scan: queuedScan('hourly') })).toBeNull();
    await store.schedules.update(s.id, { enabled: 0 });
    expect(await store.schedules.claimSlot({ scheduleId: s.id, slot: T1, following: null, firedAt: T1, scan: queuedScan('hourly') })).toBeNull();
  });

  it('keeps one queued scan per schedule: the next slot is claimed but records nothing', async () => {
    const s = await store.schedules.create(schedule('hourly'));
    const other = await store.schedules.create(schedule('other'));
    const first = await store.schedules.claimSlot({ scheduleId: s.id, slot: T0, following: T1, firedAt: T0, scan: queuedScan('hourly') });
    expect(first?.kind).toBe('queued');
    const queuedId = first?.kind === 'queued' ? first.scan.id : -1;
    const second = await store.schedules.claimSlot({
      scheduleId: s.id,
      slot: T1,
      following: '2026-05-01T12:00:00.000Z',
      firedAt: T1,
      scan: queuedScan('hourly'),
    });
    expect(second).toEqual({ kind: 'already_queued', queuedScanId: queuedId });
    // The slot moved on, last_run_at did not: no run was recorded.
    expect(await store.schedules.get(s.id)).toMatchObject({ next_run_at: '2026-05-01T12:00:00.000Z', last_run_at: T0 });
    expect(await store.schedules.recordRun(s.id, queuedScan('hourly'), T1)).toEqual({ kind: 'already_queued', queuedScanId: queuedId });
    // Another schedule queues its own.
    expect((await store.schedules.recordRun(other.id, queuedScan('other'), T1)).kind).toBe('queued');
    expect(await store.scans.queuedFor(s.id)).toMatchObject({ id: queuedId });
    // Once it has started, the schedule may queue again.
    expect(await takeScan(store, queuedId, lease('a'), 1, T1)).toMatchObject({ id: queuedId, status: 'running', active_slot: 1, owner_id: 'a' });
    expect((await store.schedules.recordRun(s.id, queuedScan('hourly'), T1)).kind).toBe('queued');
  });

  it('starts a queued scan only while no scan holds the active slot, and only once', async () => {
    const running = await startScan(
      store,
      { profile: 'quick', subnet: '127.0.5.0/30', scan_type: 'network', started_at: T0, triggered_by: 'alice' },
      lease('a'),
    );
    const q1 = (await store.scans.enqueue(queuedScan('x')))!;
    const q2 = (await store.scans.enqueue({ ...queuedScan('y'), created_at: T1 }))!;
    expect(await store.scans.active()).toMatchObject({ id: running!.id });
    expect(await store.scans.nextQueued()).toMatchObject({ id: q1.id });
    expect(await takeScan(store, q1.id, lease('b'), 1, T1)).toBeUndefined();
    expect(await store.scans.finish(running!.id, 'a', { status: 'completed' })).toBe(true);
    // Queued, nothing running: a user's scan is told about the queued one.
    expect(await store.scans.active()).toMatchObject({ id: q1.id, status: 'queued' });

    const attempts = await Promise.all([q1.id, q1.id, q2.id, q2.id].map((id, i) => takeScan(store, id, lease(`owner-${i}`), 1, T1)));
    expect(attempts.filter((r) => r !== undefined)).toHaveLength(1);
    expect((await store.scans.listRunning()).length).toBe(1);
    // A user trigger meets the slot taken.
    expect(
      await startScan(store, { profile: 'quick', subnet: '127.0.5.0/30', scan_type: 'network', started_at: T1, triggered_by: 'bob' }, lease('c')),
    ).toBeUndefined();

    // A queued scan that cannot start is failed without an owner; a started one is not touched.
    const [started] = attempts.filter((r) => r !== undefined);
    const waiting = started.id === q1.id ? q2 : q1;
    expect(await store.scans.finish(started.id, null, { status: 'failed', error: 'nope', completed_at: T1 })).toBe(false);
    expect(await store.scans.finish(waiting.id, null, { status: 'failed', error: 'Could not start: subnet: …', completed_at: T1 })).toBe(true);
    expect(await store.scans.get(waiting.id)).toMatchObject({ status: 'failed', error: 'Could not start: subnet: …', active_slot: null });
  });

  it('lists the latest scan of each schedule, and keeps scans when their schedule is deleted', async () => {
    const a = await store.schedules.create(schedule('a'));
    const b = await store.schedules.create(schedule('b'));
    const run = async (id: number, name: string) => {
      const r = await store.schedules.recordRun(id, queuedScan(name), T0);
      if (r.kind !== 'queued') throw new Error('not queued');
      await store.scans.finish(r.scan.id, null, { status: 'completed', completed_at: T0 });
      return r.scan.id;
    };
    await run(a.id, 'a');
    const latestA = await run(a.id, 'a');
    expect(await store.schedules.lastScans()).toEqual(new Map([[a.id, { id: latestA, status: 'completed' }]]));
    expect(await store.schedules.lastScans([b.id])).toEqual(new Map());
    expect(await store.schedules.due(T0)).toHaveLength(2);
    expect(await store.schedules.due('2026-05-01T09:59:59.999Z')).toHaveLength(0);

    expect(await store.schedules.delete(a.id)).toBe(true);
    expect(await store.schedules.delete(a.id)).toBe(false);
    const kept = await store.scans.get(latestA);
    expect(kept).toMatchObject({ status: 'completed', schedule_id: null, triggered_by: 'schedule:a' });
  });

  it('refuses a duplicate name, naming the field', async () => {
    await store.schedules.create(schedule('dup'));
    await expect(store.schedules.create(schedule('dup'))).rejects.toThrow(/^name: a schedule named 'dup' already exists/);
    const other = await store.schedules.create(schedule('other'));
    await expect(store.schedules.update(other.id, { name: 'dup' })).rejects.toThrow(/^name: /);
  });
});
