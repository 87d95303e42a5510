/**
 * The scheduler driven by an injected clock (no waiting for wall-clock minutes): a slot fires once
 * and next_run_at moves on; a slot that finds a scan running queues one scan, which starts when
 * the running scan ends; a further slot while that run is queued is skipped and audited; missed
 * slots after downtime follow CONTRACT §7; two instances on one database ticking the same slots
 * record exactly one scan per slot. One end-to-end test fires a per-second schedule on the wall
 * clock through the real scan engine against 127.0.0.1.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ScheduleService, type ScheduleActor } from '../../src/jobs/schedules.js';
import { Scheduler, type FireOutcome } from '../../src/jobs/scheduler.js';
import { ScanManager } from '../../src/scan/manager.js';
import { createLogger } from '../../src/logger.js';
import { initialise } from '../../src/services.js';
import { openStore, type Store } from '../../src/store/index.js';
import type { ScanRow } from '../../src/store/schema.js';
import { FixedEngineSelector } from '../fuzz/inert-services.js';
import { freshDatabaseEachTest, testDatabases, type OpenedDatabase } from '../helpers/databases.js';
import { GatedEngine } from '../helpers/gated-engine.js';
import { waitFor } from '../helpers/wait.js';

const log = createLogger('silent');
const ALLOW = ['127.0.0.0/8'];
const ACTOR: ScheduleActor = { actor: 'tester', actorType: 'user', triggeredBy: 'tester' };

/** A clock the test moves by hand. */
class TestClock {
  constructor(private at: Date) {}
  readonly now = () => new Date(this.at);
  set(iso: string): void {
    this.at = new Date(iso);
  }
}

/** One instance: a scan manager (its own owner identity) and a scheduler over a store. */
function instance(store: Store, clock: TestClock, engine: GatedEngine) {
  const scans = new ScanManager({ store, log, engines: new FixedEngineSelector(engine), scanAllow: ALLOW });
  return {
    scans,
    scheduler: new Scheduler({ store, scans, log, now: clock.now }),
    schedules: new ScheduleService({ store, scans, now: clock.now }),
  };
}

const finished = (s: ScanRow | undefined) => s !== undefined && s.status !== 'queued' && s.status !== 'running';

/** Waits until a scan's record has ended and every given manager is done with it (idle). */
async function waitForEnd(store: Store, scanId: number, ...managers: ScanManager[]): Promise<ScanRow> {
  const row = await waitFor(`scan ${scanId} to end`, async () => {
    const r = await store.scans.get(scanId);
    return finished(r) ? r : undefined;
  });
  for (const m of managers) await m.idle();
  return row;
}

async function auditOf(store: Store, action: string) {
  return (await store.audit.list({ action, limit: 100, offset: 0 })).rows;
}

describe.each(testDatabases())('scheduler ($kind)', (database) => {
  let opened: OpenedDatabase;
  let store: Store;
  const managers: ScanManager[] = [];
  const extraStores: Store[] = [];
  freshDatabaseEachTest(database, (o) => {
    opened = o;
    store = o.store;
  });
  // Registered after the database hook, so it runs first: scans end before their database goes.
  afterEach(async () => {
    for (const m of managers.splice(0)) await m.shutdown();
    for (const s of extraStores.splice(0)) await s.close();
  });

  async function setUp(startIso: string) {
    await initialise(store, { settingsSeed: {}, admin: null }, log);
    const clock = new TestClock(new Date(startIso));
    const engine = new GatedEngine();
    const one = instance(store, clock, engine);
    managers.push(one.scans);
    return { clock, engine, ...one };
  }

  it('fires a slot exactly once and moves next_run_at to the following slot', async () => {
    const { clock, scheduler, schedules } = await setUp('2026-05-01T02:59:00.000Z');
    const created = await schedules.create({ name: 'nightly', cron: '0 3 * * *', subnet: '127.0.6.0/30', profile: 'quick' }, ACTOR);
    expect(created.next_run_at).toBe('2026-05-01T03:00:00.000Z');

    clock.set('2026-05-01T02:59:59.999Z');
    expect(await scheduler.tick()).toEqual([]);

    clock.set('2026-05-01T03:00:00.300Z');
    const fired = await scheduler.tick();
    expect(fired).toEqual([{ schedule_id: created.id, outcome: 'started', scan_id: expect.any(Number), slot: '2026-05-01T03:00:00.000Z' }]);
    const scanId = (fired[0] as { scan_id: number }).scan_id;
    // The same slot never fires twice, however often the clock is read within it.
    expect(await scheduler.tick()).toEqual([]);
    clock.set('2026-05-01T03:00:59.000Z');
    expect(await scheduler.tick()).toEqual([]);

    const scan = await waitForEnd(store, scanId, ...managers);
    expect(scan).toMatchObject({
      status: 'completed',
      triggered_by: 'schedule:nightly',
      schedule_id: created.id,
      subnet: '127.0.6.0/30',
      profile: 'quick',
    });
    expect(await schedules.get(created.id)).toMatchObject({
      next_run_at: '2026-05-02T03:00:00.000Z',
      last_run_at: '2026-05-01T03:00:00.300Z',
      last_scan_id: scanId,
      last_status: 'completed',
    });
    const runs = await auditOf(store, 'schedule_run');
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      actor: 'system',
      actor_type: 'system',
      resource_id: String(created.id),
      details: { slot: '2026-05-01T03:00:00.000Z', scan_id: scanId },
    });
    expect((await auditOf(store, 'scan_started'))[0]).toMatchObject({ actor: 'schedule:nightly', actor_type: 'system', resource_id: String(scanId) });

    // The next day's slot fires too.
    clock.set('2026-05-02T03:00:00.000Z');
    expect((await scheduler.tick()).map((o) => o.outcome)).toEqual(['started']);
  });

  it('queues a slot that finds a scan running, skips a further slot while queued, and starts the queued scan when the running one ends', async () => {
    const { clock, engine, scans, scheduler, schedules } = await setUp('2026-05-01T09:30:00.000Z');
    const hourly = await schedules.create({ name: 'hourly', cron: '0 * * * *', subnet: '127.0.6.0/30', profile: 'quick' }, ACTOR);

    engine.hold('127.0.5.0/30');
    const running = await scans.trigger({ profile: 'quick', subnet: '127.0.5.0/30', actor: { name: 'alice', type: 'user' } });

    clock.set('2026-05-01T10:00:00.000Z');
    const [queued] = await scheduler.tick();
    expect(queued).toMatchObject({ outcome: 'queued', slot: '2026-05-01T10:00:00.000Z' });
    const queuedId = (queued as { scan_id: number }).scan_id;
    expect(await store.scans.get(queuedId)).toMatchObject({ status: 'queued', started_at: null, owner_id: null, active_slot: null });
    // A user trigger meanwhile gets 409 naming the running scan.
    await expect(scans.trigger({ profile: 'quick', subnet: '127.0.7.0/30', actor: { name: 'bob', type: 'user' } })).rejects.toMatchObject({
      scanId: running.id,
    });

    clock.set('2026-05-01T11:00:00.000Z');
    expect(await scheduler.tick()).toEqual([
      { schedule_id: hourly.id, outcome: 'skipped', queued_scan_id: queuedId, slot: '2026-05-01T11:00:00.000Z' },
    ]);
    const skipped = await auditOf(store, 'schedule_skipped');
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatchObject({ success: false, details: { slot: '2026-05-01T11:00:00.000Z', queued_scan_id: queuedId } });
    expect((await store.scans.listActive()).map((s) => [s.id, s.status])).toEqual([
      [running.id, 'running'],
      [queuedId, 'queued'],
    ]);
    expect((await schedules.get(hourly.id)).next_run_at).toBe('2026-05-01T12:00:00.000Z');

    // Crash recovery leaves a queued scan alone: it has no owner because it has not started.
    expect(await scans.recoverAbandoned()).toEqual([]);
    expect((await store.scans.get(queuedId))?.status).toBe('queued');

    engine.release('127.0.5.0/30');
    expect((await waitForEnd(store, running.id)).status).toBe('completed');
    const ran = await waitForEnd(store, queuedId);
    expect(ran).toMatchObject({ status: 'completed', triggered_by: 'schedule:hourly' });
    expect(Date.parse(ran.started_at!)).toBeGreaterThanOrEqual(Date.parse((await store.scans.get(running.id))!.completed_at!));
    expect(engine.discovered).toEqual(['127.0.5.0/30', '127.0.6.0/30']);
    expect(await schedules.get(hourly.id)).toMatchObject({ last_scan_id: queuedId, last_status: 'completed' });
  });

  it('after downtime runs the latest missed slot once and audits the older ones once per schedule', async () => {
    const { clock, engine, schedules, scheduler: first } = await setUp('2026-05-01T09:30:00.000Z');
    const hourly = await schedules.create({ name: 'hourly', cron: '0 * * * *', subnet: '127.0.6.0/30', profile: 'quick' }, ACTOR);
    const daily = await schedules.create({ name: 'daily', cron: '30 10 * * *', subnet: '127.0.6.4/30', profile: 'quick' }, ACTOR);
    const off = await schedules.create({ name: 'off', cron: '*/5 * * * *', subnet: '127.0.6.8/30', profile: 'quick', enabled: false }, ACTOR);
    expect(off.next_run_at).toBeNull();
    await first.stop();

    // The service was down from 09:30 to 13:20: hourly missed 10:00, 11:00, 12:00 and 13:00;
    // daily missed only its 10:30 slot, less than one period ago.
    clock.set('2026-05-01T13:20:00.000Z');
    // The hourly run is held in discovery, so the daily run finds it running (whatever the timing).
    engine.hold('127.0.6.0/30');
    const restarted = new Scheduler({ store, scans: managers[0], log, now: clock.now });
    const outcomes = await restarted.tick();
    expect(outcomes.map((o) => [o.schedule_id, o.outcome, o.slot])).toEqual([
      [hourly.id, 'started', '2026-05-01T13:00:00.000Z'],
      [daily.id, 'queued', '2026-05-01T10:30:00.000Z'],
    ]);
    const missed = await auditOf(store, 'schedule_missed');
    expect(missed).toHaveLength(1);
    expect(missed[0]).toMatchObject({
      resource_id: String(hourly.id),
      success: false,
      details: {
        first_missed: '2026-05-01T10:00:00.000Z',
        last_missed: '2026-05-01T12:00:00.000Z',
        missed_slots: 3,
        ran_instead: '2026-05-01T13:00:00.000Z',
      },
    });
    expect((await schedules.get(hourly.id)).next_run_at).toBe('2026-05-01T14:00:00.000Z');
    expect((await schedules.get(daily.id)).next_run_at).toBe('2026-05-02T10:30:00.000Z');
    expect(await restarted.tick()).toEqual([]);

    // Scans run one at a time: the daily run waited for the hourly one, then ran.
    engine.release('127.0.6.0/30');
    for (const o of outcomes) expect((await waitForEnd(store, (o as { scan_id: number }).scan_id, ...managers)).status).toBe('completed');

    // A disabled schedule never fires; enabling it counts from now (nothing it "missed" while disabled).
    expect((await store.scans.list(100, 0)).rows.filter((s) => s.schedule_id === off.id)).toEqual([]);
    const enabled = await schedules.update(off.id, { enabled: true }, ACTOR);
    expect(enabled.next_run_at).toBe('2026-05-01T13:25:00.000Z');
    clock.set('2026-05-01T13:25:00.000Z');
    expect((await restarted.tick()).map((o) => [o.schedule_id, o.outcome])).toEqual([[off.id, 'started']]);
    expect(await auditOf(store, 'schedule_missed')).toHaveLength(1);
  });

  it('two instances ticking the same slots at the same moment record exactly one scan per slot', async () => {
    const { clock, engine, scans: scansA, scheduler: a, schedules } = await setUp('2026-05-01T09:59:00.000Z');
    // A second instance: its own database connection(s), scan manager (owner) and scheduler.
    const storeB = await openStore({ url: opened.url, ...(opened.pgSchema ? { pgSchema: opened.pgSchema, poolSize: 5 } : {}) });
    extraStores.push(storeB);
    const b = instance(storeB, clock, engine);
    managers.push(b.scans);
    expect(b.scans.owner.id).not.toBe(scansA.owner.id);
    const every = await schedules.create({ name: 'every minute', cron: '* * * * *', subnet: '127.0.6.0/30', profile: 'quick' }, ACTOR);

    const slots = 12;
    const all: FireOutcome[] = [];
    for (let i = 0; i < slots; i++) {
      clock.set(new Date(Date.parse('2026-05-01T10:00:00.000Z') + i * 60_000).toISOString());
      const [fromA, fromB] = await Promise.all([a.tick(), b.scheduler.tick()]);
      const both = [...fromA, ...fromB];
      // Exactly one starts the slot. The other either lost the claim or, when the winner had
      // already moved the schedule on before it read the due list, found nothing due.
      expect(
        both.filter((o) => o.outcome === 'started'),
        `slot ${i}`,
      ).toHaveLength(1);
      expect(
        both.every((o) => o.outcome === 'started' || o.outcome === 'claimed_elsewhere'),
        `slot ${i}`,
      ).toBe(true);
      all.push(...both);
      const scanId = (both.find((o) => o.outcome === 'started') as { scan_id: number }).scan_id;
      await waitForEnd(store, scanId, ...managers);
    }
    const scans = (await store.scans.list(1000, 0)).rows.filter((s) => s.schedule_id === every.id);
    expect(scans).toHaveLength(slots);
    expect(scans.every((s) => s.status === 'completed')).toBe(true);
    expect(await auditOf(store, 'schedule_run')).toHaveLength(slots);
    // Both instances took part: each slot went to whichever claimed it first.
    const owners = new Set(scans.map((s) => s.owner_id));
    expect([...owners].every((o) => o === scansA.owner.id || o === b.scans.owner.id)).toBe(true);

    // A run queued by one instance starts when the scan running on the other ends, there.
    engine.hold('127.0.5.0/30');
    const running = await b.scans.trigger({ profile: 'quick', subnet: '127.0.5.0/30', actor: { name: 'alice', type: 'user' } });
    clock.set('2026-05-01T10:12:00.000Z');
    const [queued] = await a.tick();
    expect(queued.outcome).toBe('queued');
    const queuedId = (queued as { scan_id: number }).scan_id;
    // Instance A cannot start it while B's scan holds the slot, however often it tries.
    expect(await Promise.all([scansA.startQueued(), scansA.startQueued(), b.scans.startQueued()])).toEqual([null, null, null]);
    engine.release('127.0.5.0/30');
    await waitForEnd(store, running.id);
    const ran = await waitForEnd(store, queuedId);
    expect(ran.status).toBe('completed');
    expect(ran.owner_id).toBe(b.scans.owner.id);
  });

  it('a queued scan that two instances try to start at once runs exactly once', async () => {
    const { engine, scans: scansA } = await setUp('2026-05-01T09:59:00.000Z');
    const storeB = await openStore({ url: opened.url, ...(opened.pgSchema ? { pgSchema: opened.pgSchema, poolSize: 5 } : {}) });
    extraStores.push(storeB);
    const b = instance(storeB, new TestClock(new Date()), engine);
    managers.push(b.scans);
    for (let round = 0; round < 5; round++) {
      const queued = await store.scans.enqueue({
        profile: 'quick',
        subnet: '127.0.6.0/30',
        scan_type: 'network',
        target: null,
        triggered_by: 'schedule:race',
        created_at: new Date().toISOString(),
      });
      const started = await Promise.all([scansA.startQueued(), b.scans.startQueued(), scansA.startQueued(), b.scans.startQueued()]);
      // One of these calls started it (or a wake-up of the previous scan's end just beat them to it).
      expect(started.filter((s) => s !== null).length, `round ${round}`).toBeLessThanOrEqual(1);
      expect((await waitForEnd(store, queued!.id, ...managers)).status).toBe('completed');
      // It ran exactly once.
      expect(engine.discovered, `round ${round}`).toHaveLength(round + 1);
    }
  });
});

describe('a per-second schedule end to end (real engine, wall clock)', () => {
  let store: Store | undefined;
  let scans: ScanManager | undefined;
  let scheduler: Scheduler | undefined;
  freshDatabaseEachTest(testDatabases()[0], (o) => {
    store = o.store;
  });
  afterEach(async () => {
    await scheduler?.stop();
    await scans?.shutdown();
  });

  it('fires slots every second and runs a real quick scan of 127.0.0.1 through the scan manager', async () => {
    await initialise(store!, { settingsSeed: {}, admin: null }, log);
    scans = new ScanManager({ store: store!, log, scanAllow: ALLOW });
    // Six fields (seconds) only through the test hook: written to the table directly, read with secondsField.
    const now = new Date();
    await store!.schedules.create({
      name: 'every second',
      cron: '* * * * * *',
      timezone: 'UTC',
      profile: 'quick',
      subnet: '127.0.0.1/32',
      enabled: 1,
      next_run_at: new Date(Math.ceil((now.getTime() + 1) / 1000) * 1000).toISOString(),
      last_run_at: null,
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
    });
    scheduler = new Scheduler({ store: store!, scans, log, tickMs: 100, secondsField: true });
    scheduler.start();
    const first = await waitFor(
      'a scheduled scan to complete',
      async () => (await store!.scans.list(100, 0)).rows.find((s) => s.triggered_by === 'schedule:every second' && s.status === 'completed'),
      60_000,
    );
    await scheduler.stop();
    await scans.idle();
    expect(first).toMatchObject({ subnet: '127.0.0.1/32', profile: 'quick', devices_found: 1, scan_type: 'network' });
    const devices = await store!.devices.scanDevices(first.id);
    expect(devices.map((d) => d.ip_address)).toEqual(['127.0.0.1']);
    // Each slot was recorded once: distinct slots in the audit log, and never two queued runs.
    const slots = (await auditOf(store!, 'schedule_run')).map((e) => (e.details as { slot: string }).slot);
    expect(new Set(slots).size).toBe(slots.length);
    expect(slots.length).toBeGreaterThanOrEqual(1);
    expect((await store!.scans.listActive()).filter((s) => s.status === 'queued').length).toBeLessThanOrEqual(1);
  }, 90_000);
});
