/**
 * Dispatch: which scan starts where and when. A triggered scan is recorded as queued with its job
 * (or routed to an agent); a process that runs scans takes queued scans while a slot
 * (scanning.max_parallel_scans) and its own `concurrency` allow and their targets are not busy,
 * from its trigger, from the job queue, and as each scan ends. The queue lock in the database
 * lets one decision through at a time across processes; `oneAtATime` does so within this one.
 */
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { startableScans, triggerConflict } from '../core/scan-queue.js';
import { actorOf, recordedTarget, resolveTarget, type AllowedTargets } from '../core/scan-target.js';
import type { Settings } from '../core/settings.js';
import type { EventBus } from '../events/bus.js';
import type { ScanJobQueue, JobOutcome } from '../queue/types.js';
import { nowIso } from '../store/clock.js';
import type { Store } from '../store/index.js';
import type { Database, ScanRow } from '../store/schema.js';
import { insertQueued, targetRange, toScanRecord } from '../store/scans.js';
import { RefusedError } from '../util/errors.js';
import type { EngineSelector } from '../engines/engines.js';
import type { ScanEngine } from '../engines/types.js';
import { ScanBusyError } from './errors.js';
import type { ScanLifecycle } from './lifecycle.js';
import type { ScanRecorder } from './recording.js';
import type { ScanRunner } from './run.js';
import type { ScanRequest, ScanTrigger } from './scan-run.js';

/**
 * How often a worker looks for queued scans that have no job (queued by a process that stopped
 * between recording the scan and enqueueing its job, or before the job queue existed)...
 */
const ADOPT_EVERY_MS = 30_000;
/** ...and how old such a scan must be (younger ones are still being enqueued). */
const ADOPT_AFTER_MS = 10_000;

export interface ScanDispatchDeps {
  store: Store;
  log: Logger;
  events: EventBus;
  queue: ScanJobQueue;
  engines: EngineSelector;
  lifecycle: ScanLifecycle;
  runner: ScanRunner;
  recorder: ScanRecorder;
  allowedTargets: (settings: Settings) => AllowedTargets;
  /** This process runs scans (else a trigger only records the scan and its job). */
  runsScans: boolean;
  /** This process takes scans from the job queue (it is a worker). */
  runsQueue: boolean;
  /** Most scans this process runs at once. */
  concurrency: number;
  /** `worker <name>`, written on the scans this process runs. */
  runnerName: string;
}

export class ScanDispatch {
  /** Attempts to start a queued scan run one after another in this process (the database arbitrates between processes). */
  private queueAttempt: Promise<unknown> = Promise.resolve();
  /** Set by stop(): no queued scan starts here any more. */
  private stopping = false;
  private adoptTimer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: ScanDispatchDeps) {}

  /** See ScanManager.trigger. */
  async trigger(request: ScanTrigger): Promise<ScanRow> {
    const { store, events, engines, runsScans } = this.deps;
    const settings = await store.settings.get();
    const target = resolveTarget(request, settings, this.deps.allowedTargets(settings));
    if (runsScans) await engines.select(settings.scanning.engine);
    const range = targetRange(target.network.cidr)!;
    const recorded = await store.scans.underQueueLock(async (db) => {
      const conflict = triggerConflict(await store.scans.activeForQueue(db), settings.scanning.max_parallel_scans, range);
      if (conflict) return { conflict: conflict.id, scan: null };
      const scan = await insertQueued(db, {
        profile: request.profile ?? settings.scanning.default_profile,
        subnet: target.network.cidr,
        scan_type: request.device ? 'device' : 'network',
        target: request.device ?? null,
        created_at: nowIso(),
        triggered_by: request.triggeredBy === undefined ? request.actor.name : request.triggeredBy,
      });
      if (!scan) throw new Error('could not record the scan');
      return { conflict: null, scan: await this.withJob(db, scan) };
    });
    if (recorded.scan === null) throw new ScanBusyError(recorded.conflict);
    const { scan } = recorded;
    if (runsScans && scan.agent_id === null) {
      // Started here, by the process that was asked (its actor goes on the audit entry).
      const started = await this.take(scan.id, request.actor);
      if (started && started !== 'busy') return started;
    }
    events.publish('scan_queued', toScanRecord(scan));
    return scan;
  }

  /** Enqueues the job of a queued scan the server's workers run (in `db`, the caller's transaction). */
  private async withJob(db: Kysely<Database>, scan: ScanRow): Promise<ScanRow> {
    if (scan.agent_id !== null) return scan;
    const jobId = await this.deps.queue.enqueue(scan.id, db);
    await this.deps.store.scans.setJob(db, scan.id, jobId);
    return { ...scan, job_id: jobId };
  }

  /** See ScanManager.queued. */
  async queued(scan: ScanRow): Promise<'started' | 'queued'> {
    const { store, events, queue } = this.deps;
    events.publish('scan_queued', toScanRecord(scan));
    if (scan.agent_id === null && scan.job_id === null) {
      const jobId = await queue.enqueue(scan.id);
      await store.scans.setJob(store.db, scan.id, jobId);
    }
    if (this.deps.runsQueue && scan.agent_id === null) await this.startQueued();
    const now = await store.scans.get(scan.id);
    return now && now.status !== 'queued' ? 'started' : 'queued';
  }

  /** See ScanManager.startQueued. */
  startQueued(): Promise<ScanRow | null> {
    return this.oneAtATime(async () => {
      if (this.stopping || !this.deps.runsQueue || this.deps.lifecycle.running.size >= this.deps.concurrency) return null;
      const started = await this.take(null, null);
      return started && started !== 'busy' ? started : null;
    });
  }

  /** A job from the queue: start its scan if it may start now, else hand it back for later. */
  private async handleJob(scanId: number): Promise<JobOutcome> {
    const taken = await this.oneAtATime(async () => {
      if (this.stopping || this.deps.lifecycle.running.size >= this.deps.concurrency) return 'busy';
      return this.take(scanId, null);
    });
    return taken === 'busy' ? 'later' : 'done';
  }

  /**
   * Runs the decisions to take a queued scan here one after another, so that a job from the
   * queue and the start of the next scan as one ends never both see a free place in this
   * process (`concurrency`) and take two.
   */
  private oneAtATime<T>(decide: () => Promise<T>): Promise<T> {
    const attempt = this.queueAttempt.then(decide);
    this.queueAttempt = attempt.catch(() => undefined);
    return attempt;
  }

  /**
   * Takes a queued scan of the server's workers and launches it here: scan `id`, or (null) the
   * oldest that may start. Returns the scan running here, `busy` when it may not start yet, or
   * null when there is nothing to start (no longer queued, an agent's, or it could not start and
   * was failed).
   */
  private async take(id: number | null, actor: ScanRequest['actor'] | null): Promise<ScanRow | 'busy' | null> {
    const { store, log, engines, lifecycle, recorder, runner } = this.deps;
    const settings = await store.settings.get();
    const claimed = await store.scans.underQueueLock(async (db) => {
      const active = await store.scans.activeForQueue(db);
      if (id !== null && !active.some((s) => s.id === id && s.status === 'queued' && s.agentId === null)) return null;
      const startable = startableScans(active, settings.scanning.max_parallel_scans, null);
      const pick = id === null ? startable[0] : startable.find((s) => s.id === id);
      if (!pick) return id === null ? null : 'busy';
      return (await store.scans.claim(db, pick.id, pick.slot, lifecycle.lease(), this.deps.runnerName, nowIso())) ?? null;
    });
    if (claimed === null || claimed === 'busy') return claimed;
    let target: ReturnType<typeof resolveTarget>;
    let engine: ScanEngine;
    try {
      // Checked again at start: the settings (allowed targets, engine) may have changed while it waited.
      target = resolveTarget(recordedTarget(claimed), settings, this.deps.allowedTargets(settings));
      engine = await engines.select(settings.scanning.engine);
    } catch (err) {
      if (!(err instanceof RefusedError)) throw err;
      // Ends a scan this process just took but cannot run (its target is no longer allowed, no engine): failed, with why.
      const error = `Could not start: ${err.message}`;
      if (await recorder.endElsewhere(claimed, lifecycle.owner.id, 'failed', error)) {
        log.warn({ scan_id: claimed.id, error }, 'a queued scan could not start');
      }
      return null;
    }
    await runner.launch(claimed, engine, settings, target, actor ?? actorOf(claimed.triggered_by));
    return claimed;
  }

  /** Starts queued scans in the background while any may start here. */
  wakeQueue(): void {
    if (this.stopping || !this.deps.runsQueue) return;
    this.startQueued()
      .then((started) => {
        if (started) this.wakeQueue();
      })
      .catch((err) => this.deps.log.warn({ err }, 'could not start a queued scan'));
  }

  /**
   * In a worker, takes jobs from the queue: the scans already queued first (an in-memory queue
   * starts empty; jobs lost on PostgreSQL are enqueued again every ADOPT_EVERY_MS).
   */
  startWorking(): void {
    if (!this.deps.runsQueue) return;
    const { log, queue } = this.deps;
    const adopt = () => this.adoptQueued().catch((err) => log.warn({ err }, 'could not enqueue the jobs of queued scans'));
    this.adoptTimer = setInterval(() => void adopt(), ADOPT_EVERY_MS);
    this.adoptTimer.unref();
    void adopt().then(() => queue.work((scanId) => this.handleJob(scanId)).catch((err) => log.error({ err }, 'could not take jobs from the queue')));
    this.wakeQueue();
  }

  /** Enqueues jobs for queued scans that have none (or, for an in-memory queue, for every queued scan: it started empty). */
  private async adoptQueued(): Promise<void> {
    const { store, queue } = this.deps;
    const inMemory = queue.kind === 'in-process';
    const orphans = inMemory
      ? await store.scans.queuedForWorkers()
      : await store.scans.queuedWithoutJob(new Date(Date.now() - ADOPT_AFTER_MS).toISOString());
    for (const scan of orphans) {
      const jobId = await queue.enqueue(scan.id);
      if (!inMemory) await store.scans.setJob(store.db, scan.id, jobId);
    }
  }

  /** Starts no more scans here, and waits for a decision under way. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.adoptTimer) clearInterval(this.adoptTimer);
    this.adoptTimer = null;
    await this.queueAttempt;
  }
}
