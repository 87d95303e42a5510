import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { EventBus } from '../events/bus.js';
import type { DiscoveredHost, ScannedHost, ScanProfile } from '../core/model.js';
import { formatPortRanges, ipv4ToInt, networkContains, networkWithin, parseIpv4Network, type Ipv4Network, type PortRange } from '../core/net.js';
import { storedCoverage, tcpCoverage, type PortCoverage } from '../core/coverage.js';
import type { Settings } from '../core/settings.js';
import type { ActorType } from '../store/audit.js';
import { nowIso } from '../store/clock.js';
import type { Store } from '../store/index.js';
import { InventoryWriter, type SeenDevice } from '../store/inventory.js';
import { onlineAddressesBetween } from '../store/online.js';
import type { ScanProgress } from '../schemas/scan.js';
import type { Database, ScanRow } from '../store/schema.js';
import { insertImported, insertQueued, targetRange, toScanRecord, type ScanLease } from '../store/scans.js';
import { rangesOverlap, startableScans, triggerConflict } from '../core/scan-queue.js';
import type { ImportPlan } from '../core/nmap-import.js';
import { InProcessQueue } from '../queue/in-process.js';
import type { JobOutcome, ScanJobQueue } from '../queue/types.js';
import { EngineSelector } from './engines.js';
import { ScanEvaluator } from './evaluate.js';
import { NetwardenError } from '../util/errors.js';
import { publishScanOutcome } from './events.js';
import { InvalidTargetError, ScanBusyError, ScanNotFoundError, ScanNotRunningError, TargetNotAllowedError, UploadInProgressError } from './errors.js';
import { LEASE_RENEW_MS, ORPHAN_CHECK_MS, SCAN_LEASE_MS, endOrphanedEngines, newOwner, ownerGone, type ScanOwner } from './owner.js';
import { runPipeline } from './pipeline.js';
import { scanPortList } from '../core/top-ports.js';
import { hasRawSocketPrivilege } from './privileges.js';
import { NameLookup } from '../names/lookup.js';
import { ProgressTracker } from './progress.js';
import { ScanAbortedError, type DiscoveryRequest, type EngineProgress, type ScanEngine } from './types.js';

export interface ScanRequest {
  profile: ScanProfile;
  /** CIDR or single address; defaults to network.subnet. */
  subnet?: string;
  /** A single-device scan of this address. */
  device?: string;
  actor: { name: string | null; type: ActorType; ip?: string | null; userAgent?: string | null };
  /** The scan record's triggered_by (CONTRACT §7: `<username>`, `key:<name>`, `cli`, …); default: actor.name. */
  triggeredBy?: string | null;
}

interface RunningScan {
  id: number;
  profile: ScanProfile;
  subnet: string;
  abort: AbortController;
  /** Why the abort happened: a user's cancel, the time limit, shutdown, or the scan ended elsewhere. */
  reason: 'cancelled' | 'timeout' | 'shutdown' | 'lost' | null;
  progress: ProgressTracker;
  done: Promise<void>;
}

/** One scan as it runs: what was asked, how, and what every phase needs. */
interface ScanRun {
  running: RunningScan;
  scan: ScanRow;
  engine: ScanEngine;
  settings: Settings;
  network: Ipv4Network;
  request: ScanRequest;
  started: number;
  engineOptions: Omit<DiscoveryRequest, 'cidr' | 'exclude'>;
  /** Records every engine process group running at once (overlapping runs), newest last. */
  recordProcessGroups: (live: readonly number[]) => void;
  /**
   * Name sources (issue 14): looked up from the scan's start, applied where discovery's hosts are
   * recorded. A run without one (results recorded from elsewhere) looks them up when it records.
   */
  names?: NameLookup;
  /** CIDR blocks the scan did not probe, when not network.exclude (an imported report's `--exclude`). */
  exclude?: string[];
  /** Who holds the scan's lease when it is not this process (an agent whose results are recorded here). */
  ownerId?: string;
}

/** How often progress is written to the scan record while it runs (what other instances show). */
const PERSIST_EVERY_MS = 1000;
/** Live progress events are published at most this often (CONTRACT §10: at most twice a second). */
const PROGRESS_EVENT_EVERY_MS = 500;
/** How long a cancel asked of this instance waits for the instance that runs the scan to stop it. */
const REMOTE_CANCEL_WAIT_MS = 20_000;
/**
 * How often a worker looks for queued scans that have no job (queued by a process that stopped
 * between recording the scan and enqueueing its job, or before the job queue existed)...
 */
const ADOPT_EVERY_MS = 30_000;
/** ...and how old such a scan must be (younger ones are still being enqueued). */
const ADOPT_AFTER_MS = 10_000;
/** How often waitFor() reads the record of a scan another process runs. */
const WAIT_POLL_MS = 500;
/** An agent's upload whose recording began this long ago without finishing is taken over (the instance recording it stopped). */
const UPLOAD_STALE_MS = 120_000;

export interface ScanManagerOptions {
  store: Store;
  log: Logger;
  engines?: EngineSelector;
  /** Data directory holding imported CVE data; null uses only the shipped dataset. */
  dataDir?: string | null;
  /**
   * Replaces scanning.allowed_targets (from NETWARDEN_SCAN_ALLOW); null uses the stored setting.
   * Checked by the caller: CIDRs in canonical form.
   */
  scanAllow?: string[] | null;
  /** This process as the owner of the scans it runs (tests give two managers distinct owners). */
  owner?: ScanOwner;
  /** Where scan_queued, scan_started, scan_progress and scan_finished go; a private bus when not given. */
  events?: EventBus;
  /**
   * Whether this manager takes scans from the job queue (default true): it is a worker.
   * `netwarden scan` says false (a one-off command must not pick up a schedule's queued run and
   * then exit under it), and so does `netwarden serve --no-worker`.
   */
  runsQueue?: boolean;
  /**
   * Whether this manager runs scans at all (default true). False for `serve --no-worker`: a
   * trigger only records the scan and its job, for a worker to run.
   */
  runsScans?: boolean;
  /** Where queued scans wait for a worker; default: in this process only (the embedded default, and tests). */
  queue?: ScanJobQueue;
  /**
   * What kind of process runs this manager, the first word of its name on the scans it runs:
   * `server` (`netwarden serve`, the default) or `worker` (`netwarden worker`).
   */
  role?: 'server' | 'worker';
  /** This process's name on the scans it runs (`<role> <name>`); default: host name and pid. */
  workerName?: string;
  /** Most scans this process runs at once (default: as many as scanning.max_parallel_scans lets run). */
  concurrency?: number;
}

/** Who imports a report (POST /api/scans/import, `netwarden import`), and its size for the audit entry. */
export interface ImportRequest {
  actor: ScanRequest['actor'];
  bytes: number;
}

/** What an agent is handed with a scan it took: the scan and how to run it (CONTRACT §12). */
export interface AgentJob {
  scan_id: number;
  profile: ScanProfile;
  /** The CIDR to discover in (a single-device scan: the address as /32). */
  subnet: string;
  /** A single-device scan's address, else null. */
  device: string | null;
  exclude: string[];
  /** The ports to examine (nmap's -p syntax); null for a quick scan. */
  ports: string | null;
  os_detection: boolean;
  resolve_hostnames: boolean;
  host_timeout_seconds: number;
  engine: Settings['scanning']['engine'];
  /** The scan's time limit; the agent stops it after this. */
  timeout_seconds: number;
  /** Addresses online after the previous scan (port-scanned from the start, as the server does). */
  expected: string[];
}

/** What an agent sends back when its scan has run. */
export interface AgentResult {
  engine: string;
  hosts: DiscoveredHost[];
  ports: ScannedHost[];
  warnings?: string[];
}

/**
 * Runs scans one at a time across every instance sharing the database: validates the request,
 * takes the single active-scan slot in the database (so concurrent starts, here or elsewhere,
 * let exactly one through), picks the engine, runs discovery and the port scan, writes results
 * to the inventory, and keeps progress for /api/scan/status. While a scan runs its lease is
 * renewed; scans whose owner is gone are ended by whichever instance notices first.
 */
export class ScanManager {
  /** Scans this process runs, by id. */
  private readonly running = new Map<number, RunningScan>();
  private readonly store: Store;
  private readonly log: Logger;
  private readonly inventory: InventoryWriter;
  readonly engines: EngineSelector;
  private readonly evaluator: ScanEvaluator;
  private readonly scanAllow: string[] | null;
  readonly owner: ScanOwner;
  readonly events: EventBus;
  private orphanTimer: NodeJS.Timeout | null = null;
  private adoptTimer: NodeJS.Timeout | null = null;
  /** Attempts to start a queued scan run one after another in this process (the database arbitrates between processes). */
  private queueAttempt: Promise<unknown> = Promise.resolve();
  /** Set by shutdown: no queued scan starts here any more. */
  private stopping = false;
  private readonly runsQueue: boolean;
  private readonly runsScans: boolean;
  readonly queue: ScanJobQueue;
  /** `worker <name>`, written on the scans this process runs. */
  readonly runnerName: string;
  private readonly concurrency: number;
  /** Agents' uploads being recorded here, by scan id: a retry on this instance waits for the first. */
  private readonly uploads = new Map<number, Promise<ScanRow>>();

  constructor(options: ScanManagerOptions) {
    this.store = options.store;
    this.log = options.log;
    this.inventory = new InventoryWriter(this.store.db, () => this.store.touch());
    this.engines = options.engines ?? new EngineSelector();
    this.evaluator = new ScanEvaluator(this.store, options.dataDir ?? null);
    this.scanAllow = options.scanAllow ?? null;
    this.owner = options.owner ?? newOwner();
    this.events = options.events ?? new EventBus();
    this.runsScans = options.runsScans ?? true;
    this.runsQueue = this.runsScans && (options.runsQueue ?? true);
    this.queue = options.queue ?? new InProcessQueue(this.log);
    this.runnerName = `${options.role ?? 'server'} ${options.workerName ?? `${this.owner.host.split('/')[0]}:${this.owner.pid}`}`;
    this.concurrency = options.concurrency ?? Number.POSITIVE_INFINITY;
  }

  /** NETWARDEN_SCAN_ALLOW's list when it replaces scanning.allowed_targets, else null. */
  get scanAllowOverride(): string[] | null {
    return this.scanAllow;
  }

  /** The CIDR blocks scans may target, and the setting that says so (for error messages). */
  allowedTargets(settings: Settings): { cidrs: string[]; source: string } {
    return this.scanAllow
      ? { cidrs: this.scanAllow, source: 'NETWARDEN_SCAN_ALLOW' }
      : { cidrs: settings.scanning.allowed_targets, source: 'scanning.allowed_targets' };
  }

  /**
   * Validates a scan request and records it as a job (CONTRACT §7): queued, with its job in the
   * queue, or routed to the agent whose networks hold its target. A process that runs scans
   * starts it at once when it can (the job then finds it taken). While a scan with an
   * overlapping target is queued or running, or every slot (scanning.max_parallel_scans) is
   * taken, throws ScanBusyError naming it (CONTRACT §3, §12).
   */
  async trigger(request: ScanRequest): Promise<ScanRow> {
    const settings = await this.store.settings.get();
    const target = resolveTarget(request, settings, this.allowedTargets(settings));
    if (this.runsScans) await this.engines.select(settings.scanning.engine);
    const range = targetRange(target.network.cidr)!;
    const recorded = await this.store.scans.underQueueLock(async (db) => {
      const conflict = triggerConflict(await this.store.scans.activeForQueue(db), settings.scanning.max_parallel_scans, range);
      if (conflict) return { conflict: conflict.id, scan: null };
      const scan = await insertQueued(db, {
        profile: request.profile,
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
    if (this.runsScans && scan.agent_id === null) {
      // Started here, by the process that was asked (its actor goes on the audit entry).
      const started = await this.take(scan.id, request.actor);
      if (started && started !== 'busy') return started;
    }
    this.events.publish('scan_queued', toScanRecord(scan));
    return scan;
  }

  /** Enqueues the job of a queued scan the server's workers run (in `db`, the caller's transaction). */
  private async withJob(db: Kysely<Database>, scan: ScanRow): Promise<ScanRow> {
    if (scan.agent_id !== null) return scan;
    const jobId = await this.queue.enqueue(scan.id, db);
    await this.store.scans.setJob(db, scan.id, jobId);
    return { ...scan, job_id: jobId };
  }

  /**
   * The subnet a schedule's run scans, checked as a scan request is (CONTRACT §7: null is the
   * configured network.subnet at the time the run is recorded). Throws an error naming `subnet`.
   */
  async scheduleTarget(subnet: string | null): Promise<string> {
    const settings = await this.store.settings.get();
    return resolveTarget({ subnet: subnet ?? undefined }, settings, this.allowedTargets(settings)).network.cidr;
  }

  /**
   * Announces a scan just recorded as queued (by the scheduler or "run now": scan_queued),
   * enqueues its job, and starts it here if this process is a worker and it may start now.
   * Returns whether it is running now.
   */
  async queued(scan: ScanRow): Promise<'started' | 'queued'> {
    this.events.publish('scan_queued', toScanRecord(scan));
    if (scan.agent_id === null && scan.job_id === null) {
      const jobId = await this.queue.enqueue(scan.id);
      await this.store.scans.setJob(this.store.db, scan.id, jobId);
    }
    if (this.runsQueue && scan.agent_id === null) await this.startQueued();
    const now = await this.store.scans.get(scan.id);
    return now && now.status !== 'queued' ? 'started' : 'queued';
  }

  /**
   * Starts the oldest queued scan of the server's workers that may start now (a slot is free and
   * its target is not busy); resolves to it, or null when nothing was started. Safe to call any
   * time from anywhere: the queue lock lets one decision through at a time, across processes.
   */
  startQueued(): Promise<ScanRow | null> {
    return this.oneAtATime(async () => {
      if (this.stopping || !this.runsQueue || this.running.size >= this.concurrency) return null;
      const started = await this.take(null, null);
      return started && started !== 'busy' ? started : null;
    });
  }

  /** A job from the queue: start its scan if it may start now, else hand it back for later. */
  private async handleJob(scanId: number): Promise<JobOutcome> {
    const taken = await this.oneAtATime(async () => {
      if (this.stopping || this.running.size >= this.concurrency) return 'busy';
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
    const settings = await this.store.settings.get();
    const claimed = await this.store.scans.underQueueLock(async (db) => {
      const active = await this.store.scans.activeForQueue(db);
      if (id !== null && !active.some((s) => s.id === id && s.status === 'queued' && s.agentId === null)) return null;
      const startable = startableScans(active, settings.scanning.max_parallel_scans, null);
      const pick = id === null ? startable[0] : startable.find((s) => s.id === id);
      if (!pick) return id === null ? null : 'busy';
      return (await this.store.scans.claim(db, pick.id, pick.slot, this.lease(), this.runnerName, nowIso())) ?? null;
    });
    if (claimed === null || claimed === 'busy') return claimed;
    let target: { network: Ipv4Network; hosts: number };
    let engine: ScanEngine;
    try {
      // Checked again at start: the settings (allowed targets, engine) may have changed while it waited.
      target = resolveTarget(
        claimed.scan_type === 'device' && claimed.target ? { device: claimed.target } : { subnet: claimed.subnet },
        settings,
        this.allowedTargets(settings),
      );
      engine = await this.engines.select(settings.scanning.engine);
    } catch (err) {
      if (!(err instanceof NetwardenError)) throw err;
      await this.failStarted(claimed, `Could not start: ${err.message}`);
      return null;
    }
    await this.launch(claimed, engine, settings, target, actor ?? actorOf(claimed.triggered_by));
    return claimed;
  }

  /** Ends a scan this process just took but cannot run (its target is no longer allowed, no engine): failed, with why. */
  private async failStarted(scan: ScanRow, error: string): Promise<void> {
    if (!(await this.store.scans.finish(scan.id, this.owner.id, { ...this.ending(scan), status: 'failed', error }))) return;
    this.log.warn({ scan_id: scan.id, error }, 'a queued scan could not start');
    await this.publishFinished(scan.id);
    await this.audit('scan_failed', scan, actorOf(scan.triggered_by), false, { error }).catch((err) =>
      this.log.warn({ err, scan_id: scan.id }, 'could not audit a queued scan that could not start'),
    );
  }

  /** Starts queued scans in the background while any may start here. */
  private wakeQueue(): void {
    if (this.stopping || !this.runsQueue) return;
    this.startQueued()
      .then((started) => {
        if (started) this.wakeQueue();
      })
      .catch((err) => this.log.warn({ err }, 'could not start a queued scan'));
  }

  /** Records the start of a scan that now holds an active slot, then runs it in the background. */
  private async launch(
    scan: ScanRow,
    engine: ScanEngine,
    settings: Settings,
    target: { network: Ipv4Network; hosts: number },
    actor: ScanRequest['actor'],
  ): Promise<void> {
    const profile = scan.profile as ScanProfile;
    const running = runningScan(scan, profile, target.hosts);
    this.running.set(scan.id, running);
    this.events.publish('scan_started', toScanRecord(scan));
    const details = {
      engine: engine.name,
      profile,
      subnet: scan.subnet,
      runner: this.runnerName,
      ...(scan.schedule_id !== null ? { schedule_id: scan.schedule_id } : {}),
    };
    // The scan holds the slot now: it must run (and end) even if the audit entry cannot be written.
    const audited = this.audit('scan_started', scan, actor, true, details).catch((err) =>
      this.log.warn({ err, scan_id: scan.id }, 'could not audit the start of a scan'),
    );
    const request: ScanRequest = { profile, ...(scan.scan_type === 'device' && scan.target ? { device: scan.target } : {}), actor };
    // `done` is the scan's end from the moment it is listed in `running`: whoever waits for it
    // (idle(), cancel()) meanwhile waits for the real end, never for a promise already settled.
    running.done = audited
      .then(() => this.execute(running, scan, engine, settings, target.network, request))
      .finally(() => {
        this.running.delete(scan.id);
        // The next queued scan starts as this one ends, here, whichever instance queued it.
        this.wakeQueue();
      });
    await audited;
  }

  private lease(): ScanLease {
    return { ownerId: this.owner.id, host: this.owner.host, pid: this.owner.pid, leaseExpiresAt: this.leaseUntil() };
  }

  /**
   * Cancels a scan. One this process runs is stopped here; one another live instance (a worker)
   * runs is asked to stop (it sees the request within a lease renewal) and awaited; one run by an
   * agent, or whose owner is gone, is ended here at once; a queued one is withdrawn.
   */
  async cancel(scanId: number): Promise<void> {
    let scan = await this.store.scans.get(scanId);
    if (!scan) throw new ScanNotFoundError();
    if (scan.status === 'queued' && !this.running.has(scanId)) {
      // A queued scan has no owner: whoever is asked ends it, unless it starts in the meantime (its job then finds it ended).
      if (await this.store.scans.finish(scanId, null, { ...this.ending(scan), status: 'cancelled', error: 'Cancelled' })) {
        await this.publishFinished(scanId);
        await this.audit('scan_cancelled', scan, actorOf(scan.triggered_by), true, { was: 'queued' });
        return;
      }
      scan = (await this.store.scans.get(scanId)) ?? scan;
    }
    const mine = this.running.get(scanId);
    if (mine) {
      mine.reason = 'cancelled';
      mine.abort.abort();
      await mine.done;
      return;
    }
    if (scan.status !== 'running') {
      throw new ScanNotRunningError(scanId, scan.status);
    }
    const gone = ownerGone(scan, this.owner, Date.now());
    // An agent's scan ends at once (issue 19): the agent learns it at its next report (409) and stops its engine.
    if (gone || scan.agent_id !== null) {
      if (gone) endOrphanedEngines(scan, this.owner);
      if (await this.store.scans.finish(scanId, scan.owner_id, { ...this.ending(scan), status: 'cancelled', error: 'Cancelled' })) {
        await this.publishFinished(scanId);
        await this.audit('scan_cancelled', scan, actorOf(scan.triggered_by), true, {});
        this.wakeQueue();
      }
      return;
    }
    await this.store.scans.requestCancel(scanId, nowIso());
    const deadline = Date.now() + REMOTE_CANCEL_WAIT_MS;
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, LEASE_RENEW_MS / 4));
      const now = await this.store.scans.get(scanId);
      if (!now || (now.status !== 'running' && now.status !== 'queued')) return;
    }
  }

  /** Progress of the oldest scan this process runs, if any. */
  current(): { id: number; profile: ScanProfile; subnet: string; progress: ScanProgress } | null {
    const r = [...this.running.values()].sort((a, b) => a.id - b.id)[0];
    return r ? { id: r.id, profile: r.profile, subnet: r.subnet, progress: r.progress.current } : null;
  }

  /** Waits for the scans this process runs (if any) to end. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running.values()].map((r) => r.done));
  }

  /** Waits until scan `scanId` has ended, wherever it runs; resolves to its final record. */
  async waitFor(scanId: number): Promise<ScanRow | undefined> {
    for (;;) {
      const local = this.running.get(scanId);
      if (local) await local.done;
      const row = await this.store.scans.get(scanId);
      if (!row || (row.status !== 'queued' && row.status !== 'running')) return row;
      await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
    }
  }

  /**
   * Ends scans whose owner is gone (a process that died, on this host or one whose lease ran
   * out: a worker killed, an agent that stopped reporting): stops the engine it left behind on
   * this host, records the scan as failed with its duration, and audits it. Run at start-up and
   * then periodically by every instance; of two instances doing it at once, one writes. Returns
   * the ids ended here.
   */
  async recoverAbandoned(): Promise<number[]> {
    const ended: number[] = [];
    // Running scans only: a queued scan has no owner yet and waits its turn; it is never abandoned.
    for (const scan of await this.store.scans.listRunning()) {
      const why = ownerGone(scan, this.owner, Date.now());
      if (!why || this.running.has(scan.id)) continue;
      const killed = endOrphanedEngines(scan, this.owner);
      // A dedicated worker or an agent is named; a `netwarden serve` process (a scan or an import) is "the server".
      const who = scan.runner && /^(worker|agent) /.test(scan.runner) ? scan.runner : 'the server';
      const error = `Interrupted: ${who} stopped while this scan was running (${why})`;
      if (!(await this.store.scans.finish(scan.id, scan.owner_id, { ...this.ending(scan), status: 'failed', error }))) continue;
      ended.push(scan.id);
      await this.publishFinished(scan.id);
      await this.audit('scan_failed', scan, { name: scan.triggered_by, type: 'system' }, false, {
        error,
        ...(killed.length > 0 ? { ended_engine_process_groups: killed } : {}),
      });
      this.log.warn({ scan_id: scan.id, reason: why, ended_engine_process_groups: killed }, 'ended a scan whose owner is gone');
    }
    if (ended.length > 0) this.wakeQueue();
    return ended;
  }

  /**
   * Looks for abandoned scans every ORPHAN_CHECK_MS until shutdown and, in a worker, takes jobs
   * from the queue: the scans already queued first (an in-memory queue starts empty; jobs lost
   * on PostgreSQL are enqueued again every ADOPT_EVERY_MS).
   */
  startRecovery(): void {
    if (this.orphanTimer) return;
    this.orphanTimer = setInterval(() => {
      this.recoverAbandoned().catch((err) => this.log.warn({ err }, 'could not check for abandoned scans'));
    }, ORPHAN_CHECK_MS);
    this.orphanTimer.unref();
    if (!this.runsQueue) return;
    const adopt = () => this.adoptQueued().catch((err) => this.log.warn({ err }, 'could not enqueue the jobs of queued scans'));
    this.adoptTimer = setInterval(() => void adopt(), ADOPT_EVERY_MS);
    this.adoptTimer.unref();
    void adopt().then(() =>
      this.queue.work((scanId) => this.handleJob(scanId)).catch((err) => this.log.error({ err }, 'could not take jobs from the queue')),
    );
    this.wakeQueue();
  }

  /** Enqueues jobs for queued scans that have none (or, for an in-memory queue, for every queued scan: it started empty). */
  private async adoptQueued(): Promise<void> {
    const inMemory = this.queue.kind === 'in-process';
    const orphans = inMemory
      ? await this.store.scans.queuedForWorkers()
      : await this.store.scans.queuedWithoutJob(new Date(Date.now() - ADOPT_AFTER_MS).toISOString());
    for (const scan of orphans) {
      const jobId = await this.queue.enqueue(scan.id);
      if (!inMemory) await this.store.scans.setJob(this.store.db, scan.id, jobId);
    }
  }

  /**
   * Stops the scans this process runs because it is going down; they are recorded as failed.
   * Queued scans stay queued: another worker, or this one's next start, runs them.
   */
  async shutdown(): Promise<void> {
    this.stopping = true;
    if (this.orphanTimer) clearInterval(this.orphanTimer);
    if (this.adoptTimer) clearInterval(this.adoptTimer);
    this.orphanTimer = null;
    this.adoptTimer = null;
    await this.queueAttempt;
    for (const r of this.running.values()) {
      r.reason = 'shutdown';
      r.abort.abort();
    }
    await this.idle();
    await Promise.allSettled(this.uploads.values());
    await this.queue.stop();
  }

  // Agents (CONTRACT §12) ----------------------------------------------------------------------

  /**
   * Takes the oldest queued scan routed to `agent` that may start now, for the agent run `ownerId`
   * (its lease, renewed by its progress reports). Null when there is none. A scan whose target is
   * no longer allowed is failed instead.
   */
  async claimForAgent(agent: { id: number; name: string }, ownerId: string): Promise<AgentJob | null> {
    const settings = await this.store.settings.get();
    const lease: ScanLease = { ownerId, host: `agent:${agent.id}`, pid: 0, leaseExpiresAt: this.leaseUntil() };
    for (;;) {
      const claimed = await this.store.scans.underQueueLock(async (db) => {
        const pick = startableScans(await this.store.scans.activeForQueue(db), settings.scanning.max_parallel_scans, agent.id)[0];
        return pick ? ((await this.store.scans.claim(db, pick.id, pick.slot, lease, `agent ${agent.name}`, nowIso())) ?? null) : null;
      });
      if (!claimed) return null;
      const profile = claimed.profile as ScanProfile;
      const device = claimed.scan_type === 'device' ? claimed.target : null;
      let network: Ipv4Network;
      try {
        network = resolveTarget(device ? { device } : { subnet: claimed.subnet }, settings, this.allowedTargets(settings)).network;
      } catch (err) {
        if (!(err instanceof NetwardenError)) throw err;
        await this.finishForAgent(claimed, ownerId, 'failed', `Could not start: ${err.message}`);
        continue;
      }
      this.events.publish('scan_started', toScanRecord(claimed));
      await this.audit('scan_started', claimed, actorOf(claimed.triggered_by), true, {
        engine: 'agent',
        profile,
        subnet: claimed.subnet,
        runner: claimed.runner,
      }).catch((err) => this.log.warn({ err, scan_id: claimed.id }, 'could not audit the start of a scan'));
      const exclude = device ? [] : settings.network.exclude;
      const ports = profile === 'quick' ? null : formatPortRanges(portListOf(settings, profile, this.engines));
      // The list the agent examines, on the record now: its upload is recorded with it, whatever the settings are then.
      if (ports !== null) await this.store.scans.update(claimed.id, { port_list: ports });
      return {
        scan_id: claimed.id,
        profile,
        subnet: network.cidr,
        device,
        exclude,
        ports,
        os_detection: settings.scanning.os_detection,
        resolve_hostnames: settings.network.resolve_hostnames,
        host_timeout_seconds: settings.scanning.host_timeout_seconds,
        engine: settings.scanning.engine,
        timeout_seconds: settings.scanning.scan_timeout_minutes * 60,
        expected: await this.onlineWithin(network, exclude),
      };
    }
  }

  /**
   * Ends the scans of an agent just revoked (CONTRACT §12): its queued scans can no longer run
   * and its running ones can no longer report, so both end as failed, saying why.
   */
  async agentRevoked(agent: { id: number; name: string }): Promise<number[]> {
    const ended: number[] = [];
    for (const scan of await this.store.scans.listActive()) {
      if (scan.agent_id !== agent.id) continue;
      const error = `Agent ${agent.name} was revoked ${scan.status === 'queued' ? 'before it ran this scan' : 'while it ran this scan'}`;
      if (!(await this.store.scans.finish(scan.id, scan.owner_id, { ...this.ending(scan), status: 'failed', error }))) continue;
      ended.push(scan.id);
      await this.publishFinished(scan.id);
      await this.audit('scan_failed', scan, actorOf(scan.triggered_by), false, { error }).catch((err) =>
        this.log.warn({ err, scan_id: scan.id }, 'could not audit the end of a scan'),
      );
    }
    return ended;
  }

  /**
   * An agent's progress report on its scan: renews the lease, keeps the progress for the API and
   * publishes it. Returns `cancel` when the scan was cancelled (the agent stops and reports it),
   * `lost` when it is no longer the agent's to run (ended elsewhere: the agent drops it).
   */
  async agentProgress(scanId: number, ownerId: string, progress: ScanProgress): Promise<'ok' | 'cancel' | 'lost'> {
    const state = await this.store.scans.renewLease(scanId, ownerId, this.leaseUntil());
    if (state === 'lost') return 'lost';
    await this.store.scans.update(scanId, { progress: JSON.stringify(progress) });
    this.events.publish('scan_progress', { scan_id: scanId, progress });
    return state === 'cancel_requested' ? 'cancel' : 'ok';
  }

  /**
   * Records how an agent's scan ended without results: `cancelled` (it was asked to stop) or
   * `failed` (its engine failed). Idempotent: a scan already ended is left as it is.
   */
  async agentEnded(scanId: number, ownerId: string, status: 'failed' | 'cancelled', error: string): Promise<ScanRow | undefined> {
    const scan = await this.store.scans.get(scanId);
    if (scan && scan.status === 'running' && scan.owner_id === ownerId) await this.finishForAgent(scan, ownerId, status, error);
    return this.store.scans.get(scanId);
  }

  private async finishForAgent(scan: ScanRow, ownerId: string, status: 'failed' | 'cancelled', error: string): Promise<void> {
    if (!(await this.store.scans.finish(scan.id, ownerId, { ...this.ending(scan), status, error }))) return;
    await this.publishFinished(scan.id);
    await this.audit(status === 'cancelled' ? 'scan_cancelled' : 'scan_failed', scan, actorOf(scan.triggered_by), status === 'cancelled', {
      error,
      runner: scan.runner,
    }).catch((err) => this.log.warn({ err, scan_id: scan.id }, 'could not audit the end of a scan'));
  }

  /**
   * Records the results an agent uploaded for its scan, exactly as for a scan run here: the
   * inventory, risk, CVEs, presence, changes and snapshots, then the completed record. A retried
   * upload (the connection dropped) is recorded once: a retry of a scan already recorded gets its
   * record; one arriving while the first is being recorded waits for it (same instance) or is
   * refused with UploadInProgressError (another instance), to be retried.
   */
  async recordAgentResults(scanId: number, ownerId: string, result: AgentResult): Promise<ScanRow> {
    const pending = this.uploads.get(scanId);
    if (pending) return pending;
    const recording = this.recordUpload(scanId, ownerId, result).finally(() => this.uploads.delete(scanId));
    this.uploads.set(scanId, recording);
    return recording;
  }

  private async recordUpload(scanId: number, ownerId: string, result: AgentResult): Promise<ScanRow> {
    const scan = await this.store.scans.get(scanId);
    if (!scan) throw new ScanNotFoundError();
    if (scan.status !== 'running' || scan.owner_id !== ownerId) {
      if (scan.status === 'completed') return scan;
      throw new ScanNotRunningError(scanId, scan.status);
    }
    const now = Date.now();
    if (!(await this.store.scans.beginUpload(scanId, ownerId, nowIso(), new Date(now - UPLOAD_STALE_MS).toISOString()))) {
      const current = await this.store.scans.get(scanId);
      if (current?.status === 'completed') return current;
      throw new UploadInProgressError(scanId);
    }
    const settings = await this.store.settings.get();
    const profile = scan.profile as ScanProfile;
    const running = runningScan(scan, profile, result.hosts.length);
    const actor = actorOf(scan.triggered_by);
    const run = recordingRun({
      running,
      scan,
      engine: { name: result.engine } as ScanEngine,
      settings,
      network: networkOf(scan.subnet),
      request: { profile, ...(scan.scan_type === 'device' && scan.target ? { device: scan.target } : {}), actor },
      started: scan.started_at ? Date.parse(scan.started_at) : now,
      ownerId,
    });
    // The agent's lease holds while its results are recorded (the agent waits for the answer).
    const lease = setInterval(() => {
      this.store.scans.renewLease(scanId, ownerId, this.leaseUntil()).catch(() => undefined);
    }, LEASE_RENEW_MS);
    lease.unref();
    try {
      await this.store.scans.addWarnings(scanId, result.warnings ?? []);
      const seen = await this.recordDiscovery(run, result.hosts);
      // The ports the agent was handed when it took the scan (claimForAgent); a quick scan examines none.
      const examined = storedCoverage(scan.port_list) ?? tcpCoverage(portListOf(settings, profile, this.engines));
      if (profile !== 'quick') await this.recordPorts(scan, examined, result.ports, result.hosts, seen);
      await this.evaluationPhase(run, seen, examined);
      await this.recordCompleted(run, result.hosts.length, { scan_ms: now - run.started, evaluation_ms: Date.now() - now });
    } catch (err) {
      // A retry may record the results at once (beginUpload removes what this attempt wrote).
      await this.store.scans.update(scanId, { upload_started_at: null }).catch(() => undefined);
      throw err;
    } finally {
      clearInterval(lease);
    }
    return (await this.store.scans.get(scanId))!;
  }

  /** Publishes the final record of a scan that just ended (scan_finished); never throws. */
  private async publishFinished(scanId: number): Promise<void> {
    try {
      const row = await this.store.scans.get(scanId);
      if (row) this.events.publish('scan_finished', toScanRecord(row));
    } catch (err) {
      this.log.warn({ err, scan_id: scanId }, 'could not publish the end of a scan');
    }
  }

  private leaseUntil(): string {
    return new Date(Date.now() + SCAN_LEASE_MS).toISOString();
  }

  /** completed_at and duration of a scan ended now. */
  private ending(scan: ScanRow): { completed_at: string; duration_seconds: number | null } {
    const completedAt = nowIso();
    const started = scan.started_at ? Date.parse(scan.started_at) : NaN;
    return { completed_at: completedAt, duration_seconds: Number.isNaN(started) ? null : Math.max(0, (Date.parse(completedAt) - started) / 1000) };
  }

  /** Renews the running scan's lease and reacts to a cancel asked elsewhere or the scan ending elsewhere. */
  private keepLease(running: RunningScan): NodeJS.Timeout {
    const timer = setInterval(() => {
      this.store.scans
        .renewLease(running.id, this.owner.id, this.leaseUntil())
        .then((state) => {
          if (state === 'ok' || running.abort.signal.aborted) return;
          running.reason = state === 'cancel_requested' ? 'cancelled' : 'lost';
          running.abort.abort();
        })
        .catch((err) => this.log.warn({ err, scan_id: running.id }, 'could not renew the scan lease'));
    }, LEASE_RENEW_MS);
    timer.unref();
    return timer;
  }

  /**
   * Runs a recorded scan to its end, phase by phase: discovery, the port scan, evaluation, and
   * the final record. Whatever happens, the scan record ends in a final state (unless another
   * instance ended it first) and the timers are cleared.
   */
  private async execute(
    running: RunningScan,
    scan: ScanRow,
    engine: ScanEngine,
    settings: Settings,
    network: Ipv4Network,
    request: ScanRequest,
  ): Promise<void> {
    const run: ScanRun = {
      running,
      scan,
      engine,
      settings,
      network,
      request,
      started: Date.now(),
      ...this.engineOptions(running, scan, settings),
      // Name sources (issue 14): asked now, in parallel with discovery.
      names: NameLookup.start(settings.name_sources, { signal: running.abort.signal }),
    };
    const timer = setTimeout(() => {
      running.reason = 'timeout';
      running.abort.abort();
    }, settings.scanning.scan_timeout_minutes * 60_000);
    timer.unref();
    const lease = this.keepLease(running);
    try {
      const { live, seen, portList } =
        engine.concurrent && request.profile !== 'quick' ? await this.pipelinedPhases(run, request.profile) : await this.phases(run);
      if (running.abort.signal.aborted) throw new ScanAbortedError();
      // Where the time went, for the log line of the completed scan.
      const scanned = Date.now();
      await this.evaluationPhase(run, seen, portList);
      await this.recordCompleted(run, live.length, { scan_ms: scanned - run.started, evaluation_ms: Date.now() - scanned });
    } catch (err) {
      await this.recordEnded(run, err);
    } finally {
      clearTimeout(timer);
      clearInterval(lease);
    }
  }

  /** What every engine call of this scan shares: privileges, timeouts, the abort signal, and where progress goes. */
  private engineOptions(running: RunningScan, scan: ScanRow, settings: Settings): Pick<ScanRun, 'engineOptions' | 'recordProcessGroups'> {
    let lastPersist = 0;
    let lastEvent = 0;
    const onProgress = (event: EngineProgress) => {
      const progress = running.progress.update(event);
      if (Date.now() - lastEvent >= PROGRESS_EVENT_EVERY_MS) {
        lastEvent = Date.now();
        this.events.publish('scan_progress', { scan_id: scan.id, progress });
      }
      if (Date.now() - lastPersist >= PERSIST_EVERY_MS) {
        lastPersist = Date.now();
        this.store.scans
          .update(scan.id, { progress: JSON.stringify(progress) })
          .catch((err) => this.log.warn({ err, scan_id: scan.id }, 'could not record scan progress'));
      }
    };
    // The engine's process groups go on the record, so a restart after a crash can end them.
    // One write after another: with overlapping runs a later value must not be overtaken.
    let recording = Promise.resolve();
    const record = (patch: { engine_pgid: number | null; engine_pgids: string | null }) => {
      recording = recording.then(() =>
        this.store.scans
          .update(scan.id, patch)
          .then(() => undefined)
          .catch((err) => this.log.warn({ err, scan_id: scan.id }, 'could not record the engine process')),
      );
    };
    return {
      engineOptions: {
        privileged: hasRawSocketPrivilege(),
        resolveHostnames: settings.network.resolve_hostnames,
        hostTimeoutSeconds: settings.scanning.host_timeout_seconds,
        signal: running.abort.signal,
        onProgress,
        onProcess: (pgid) => record({ engine_pgid: pgid, engine_pgids: null }),
      },
      recordProcessGroups: (live) => record({ engine_pgid: live.at(-1) ?? null, engine_pgids: live.length > 0 ? JSON.stringify(live) : null }),
    };
  }

  /** Discovery, then the port scan of the hosts it found (not for quick scans): one after the other. */
  private async phases(run: ScanRun): Promise<{ live: DiscoveredHost[]; seen: SeenDevice[]; portList: PortRange[] }> {
    const { live, seen } = await this.discoveryPhase(run);
    const portList = await this.portPhase(run, live, seen);
    return { live, seen, portList };
  }

  /** Finds the live hosts and records them in the inventory (presence is decided once the scan completes). */
  private async discoveryPhase(run: ScanRun): Promise<{ live: DiscoveredHost[]; seen: SeenDevice[] }> {
    const { engine, settings, network, request, engineOptions } = run;
    const { onProgress } = engineOptions;
    onProgress({ phase: 'discovery', percent: 0 });
    const exclude = request.device ? [] : settings.network.exclude;
    const live = await engine.discover({ cidr: network.cidr, exclude, ...engineOptions });
    // Recording what discovery found is still discovery: 'saving' is the last stretch of the bar.
    onProgress({ phase: 'discovery', percent: -1, hostsFound: live.length });
    const seen = await this.recordDiscovery(run, live);
    onProgress({ phase: 'discovery', percent: 100, hostsFound: live.length, hostsDone: request.profile === 'quick' ? live.length : 0 });
    return { live, seen };
  }

  /** Scans the live hosts' ports (not for quick scans) and records them; returns the port list examined. */
  private async portPhase(run: ScanRun, live: DiscoveredHost[], seen: SeenDevice[]): Promise<PortRange[]> {
    const { engine, settings, request, engineOptions } = run;
    const portList = portListOf(settings, request.profile, this.engines);
    if (request.profile === 'quick' || live.length === 0) return portList;
    const results = await engine.scanPorts({
      hosts: live.map((h) => h.ip),
      profile: request.profile,
      ports: formatPortRanges(portList),
      osDetection: settings.scanning.os_detection,
      ...engineOptions,
    });
    engineOptions.onProgress({ phase: 'saving', percent: 0, hostsDone: live.length });
    await this.recordPorts(run.scan, tcpCoverage(portList), results, live, seen);
    return portList;
  }

  /**
   * Discovery and the port scan overlapped (src/scan/pipeline.ts): the hosts online after the
   * previous scan are port-scanned from the start, the others as discovery reports them, and
   * results are written while the engine still runs. Records exactly what phases() records.
   */
  private async pipelinedPhases(
    run: ScanRun,
    profile: Exclude<ScanProfile, 'quick'>,
  ): Promise<{ live: DiscoveredHost[]; seen: SeenDevice[]; portList: PortRange[] }> {
    const { engine, settings, network, request, engineOptions } = run;
    const portList = portListOf(settings, profile, this.engines);
    const exclude = request.device ? [] : settings.network.exclude;
    engineOptions.onProgress({ phase: 'discovery', percent: 0 });
    let found: { live: DiscoveredHost[]; seen: SeenDevice[] } = { live: [], seen: [] };
    const { privileged, resolveHostnames, hostTimeoutSeconds } = engineOptions;
    const live = await runPipeline({
      engine,
      discovery: { cidr: network.cidr, exclude, ...engineOptions },
      ports: {
        profile,
        ports: formatPortRanges(portList),
        osDetection: settings.scanning.os_detection,
        privileged,
        resolveHostnames,
        hostTimeoutSeconds,
      },
      expected: await this.onlineWithin(network, exclude),
      recordDiscovery: async (hosts) => {
        found = { live: hosts, seen: await this.recordDiscovery(run, hosts) };
      },
      recordPorts: (results) => this.recordPorts(run.scan, tcpCoverage(portList), results, found.live, found.seen),
      onProcessGroups: run.recordProcessGroups,
    });
    engineOptions.onProgress({ phase: 'saving', percent: 0, hostsDone: live.length });
    return { ...found, portList };
  }

  /** The addresses of the devices online after the previous scan that lie in `network` and outside `exclude`. */
  private async onlineWithin(network: Ipv4Network, exclude: string[]): Promise<string[]> {
    const low = ipv4ToInt(network.network);
    const online = await onlineAddressesBetween(this.store.db, low, low + network.size - 1);
    const excluded = exclude.map((cidr) => parseIpv4Network(cidr)).flatMap((p) => (p.ok ? [p.value] : []));
    return online.filter((ip) => networkContains(network, ip) && !excluded.some((net) => networkContains(net, ip)));
  }

  private async recordDiscovery({ scan, names, settings, engineOptions }: ScanRun, discovered: DiscoveredHost[]): Promise<SeenDevice[]> {
    // Hostnames and MACs the scan did not see, from the network's own records (name sources).
    const lookup = names ?? NameLookup.start(settings.name_sources, { signal: engineOptions.signal });
    const { hosts: live, warnings } = await lookup.apply(discovered);
    for (const warning of warnings) this.log.warn({ scan_id: scan.id }, warning);
    await this.store.scans.addWarnings(scan.id, warnings);
    const { seen, notes } = await this.inventory.recordDiscovery(scan.id, live, nowIso());
    for (const n of notes) this.log.warn({ scan_id: scan.id, ip: n.ip, mac: n.mac, device_id: n.deviceId }, `identity: ${n.reason}`);
    return seen;
  }

  /**
   * Records port results of hosts discovery recorded, as examined by `scan` (only the `examined`
   * ports of the hosts in `results` change); the MAC discovery saw stands in for one the port scan did not.
   */
  private async recordPorts(
    scan: Pick<ScanRow, 'id'>,
    examined: PortCoverage,
    results: ScannedHost[],
    live: DiscoveredHost[],
    seen: SeenDevice[],
  ): Promise<void> {
    const deviceByIp = new Map(seen.map((d) => [d.ip, d.deviceId]));
    const discoveredByIp = new Map(live.map((h) => [h.ip, h]));
    await this.inventory.recordPorts(
      results
        .filter((h) => deviceByIp.has(h.ip))
        .map((h) => ({ deviceId: deviceByIp.get(h.ip)!, host: { ...h, mac: h.mac ?? discoveredByIp.get(h.ip)?.mac ?? null } })),
      nowIso(),
      { id: scan.id, examined },
    );
  }

  /**
   * Risk, CVEs, presence and changes against the baseline, then the snapshots of this scan; then
   * the live events for what changed (before scan_finished, which closes the scan's events).
   */
  private async evaluationPhase(
    { scan, settings, request, engineOptions, exclude }: ScanRun,
    seen: SeenDevice[],
    portList: PortCoverage | readonly PortRange[],
  ): Promise<void> {
    engineOptions.onProgress({ phase: 'saving', percent: 50 });
    const seenDeviceIds = seen.map((d) => d.deviceId);
    const outcome = await this.evaluator.evaluate({
      scan,
      seenDeviceIds,
      portsScanned: request.profile !== 'quick',
      portList,
      exclude: exclude ?? (request.device ? [] : settings.network.exclude),
    });
    await this.inventory.recordSnapshots(scan.id, seenDeviceIds);
    await publishScanOutcome(this.events, this.store, outcome).catch((err) =>
      this.log.warn({ err, scan_id: scan.id }, 'could not publish the changes of a scan'),
    );
  }

  private async recordCompleted(
    { running, scan, engine, request, started, ownerId }: ScanRun,
    devicesFound: number,
    timing: { scan_ms: number; evaluation_ms: number },
  ): Promise<void> {
    const progress = running.progress.update({ phase: 'done', percent: 100 });
    const recorded = await this.store.scans.finish(scan.id, ownerId ?? this.owner.id, {
      status: 'completed',
      completed_at: nowIso(),
      duration_seconds: (Date.now() - started) / 1000,
      devices_found: devicesFound,
      progress: JSON.stringify(progress),
    });
    if (!recorded) {
      this.log.warn({ scan_id: scan.id }, 'scan finished, but another instance had already ended its record');
      return;
    }
    await this.publishFinished(scan.id);
    await this.audit('scan_completed', scan, request.actor, true, {
      devices_found: devicesFound,
      duration_seconds: Math.round((Date.now() - started) / 100) / 10,
      engine: engine.name,
    });
    this.log.info({ scan_id: scan.id, devices: devicesFound, ms: Date.now() - started, ...timing, engine: engine.name }, 'scan completed');
  }

  /** Records how a scan that did not complete ended: cancelled, timed out, interrupted or failed. */
  private async recordEnded({ running, scan, engine, settings, request, started }: ScanRun, err: unknown): Promise<void> {
    const aborted = err instanceof ScanAbortedError || running.abort.signal.aborted;
    const reason = running.reason;
    if (aborted && reason === 'lost') {
      // Another instance ended the record (it took this process for dead): nothing left to write.
      this.log.warn({ scan_id: scan.id }, 'scan stopped: another instance ended its record');
      return;
    }
    const status = aborted && reason === 'cancelled' ? 'cancelled' : 'failed';
    const message = !aborted
      ? `Scan engine ${engine.name} failed: ${(err as Error).message}`
      : reason === 'timeout'
        ? `Scan exceeded its time limit of ${settings.scanning.scan_timeout_minutes} minutes (scanning.scan_timeout_minutes)`
        : reason === 'shutdown'
          ? 'Interrupted: the server stopped while this scan was running'
          : 'Cancelled';
    if (!aborted) this.log.error({ err, scan_id: scan.id }, 'scan failed');
    const recorded = await this.store.scans
      .finish(scan.id, this.owner.id, {
        status,
        error: message,
        completed_at: nowIso(),
        duration_seconds: (Date.now() - started) / 1000,
        progress: JSON.stringify(running.progress.current),
      })
      .catch((e) => {
        this.log.error({ err: e, scan_id: scan.id }, 'could not record the end of a scan');
        return false;
      });
    if (!recorded) return;
    await this.publishFinished(scan.id);
    await this.audit(status === 'cancelled' ? 'scan_cancelled' : 'scan_failed', scan, request.actor, status === 'cancelled', {
      error: message,
    }).catch((e) => this.log.warn({ err: e, scan_id: scan.id }, 'could not audit the end of a scan'));
  }

  private async audit(
    action: 'scan_started' | 'scan_completed' | 'scan_failed' | 'scan_cancelled',
    scan: ScanRow,
    actor: ScanRequest['actor'],
    success: boolean,
    details: Record<string, unknown>,
  ): Promise<void> {
    const own = action === 'scan_started';
    await this.store.audit.write({
      action,
      actor: own ? actor.name : 'system',
      actorType: own ? actor.type : 'system',
      resourceType: 'scan',
      resourceId: scan.id,
      details: { subnet: scan.subnet, profile: scan.profile, scan_type: scan.scan_type, ...(own ? {} : { triggered_by: actor.name }), ...details },
      ipAddress: own ? (actor.ip ?? null) : null,
      userAgent: own ? (actor.userAgent ?? null) : null,
      success,
    });
  }

  // Imports (CONTRACT §11, §13) -----------------------------------------------------------------

  /**
   * Records an nmap report (checked and read by core/nmap-import.ts) as a completed scan, exactly
   * as a scan run here is recorded: the inventory (hosts, MACs, vendors, ports, services, OS),
   * risk, CVEs, presence and changes against the previous completed scan of its subnet, then the
   * snapshots. Nothing is scanned, so the allowed scan targets do not apply; the subnet must stay
   * within scanning.max_hosts. While it is recorded the scan is running, owned by this process
   * (a crash leaves it to recovery), so no scan of an overlapping target starts meanwhile; a scan
   * of an overlapping target already running refuses it (ScanBusyError).
   */
  async importReport(plan: ImportPlan, request: ImportRequest): Promise<ScanRow> {
    const settings = await this.store.settings.get();
    const network = networkOf(plan.subnet);
    const max = settings.scanning.max_hosts;
    if (network.size > max) {
      throw new InvalidTargetError(
        `body: the report covers ${network.cidr} (${plan.subnetFrom === 'args' ? 'its target' : 'the smallest block holding its hosts'}), ` +
          `${network.size} addresses, more than the limit of ${max} (scanning.max_hosts); raise the limit or import a report of a smaller network`,
      );
    }
    const range = targetRange(network.cidr)!;
    const at = nowIso();
    const recorded = await this.store.scans.underQueueLock(async (db) => {
      const busy = (await this.store.scans.activeForQueue(db)).find((s) => s.status === 'running' && rangesOverlap(s, range));
      if (busy) return { conflict: busy.id, scan: null };
      const scan = await insertImported(
        db,
        { profile: plan.profile, subnet: network.cidr, triggered_by: 'import', runner: 'import', at },
        this.lease(),
      );
      return { conflict: null, scan };
    });
    if (recorded.scan === null) throw new ScanBusyError(recorded.conflict);
    const { scan } = recorded;
    const profile = plan.profile;
    const running = runningScan(scan, profile, plan.hosts.length);
    const started = Date.now();
    const run = recordingRun({
      running,
      scan,
      // What the audit entry and the log name as the engine (nothing is run).
      engine: { name: 'nmap-import' as string } as ScanEngine,
      settings,
      network,
      request: { profile, actor: request.actor },
      started,
      exclude: plan.exclude,
    });
    this.events.publish('scan_started', toScanRecord(scan));
    const lease = this.keepLease(running);
    try {
      await this.store.scans.addWarnings(scan.id, plan.warnings);
      const seen = await this.recordDiscovery(run, plan.hosts);
      if (profile !== 'quick') await this.recordPorts(scan, plan.portList, plan.hosts, plan.hosts, seen);
      const recordedAt = Date.now();
      await this.evaluationPhase(run, seen, plan.portList);
      await this.recordCompleted(run, plan.hosts.length, { scan_ms: recordedAt - started, evaluation_ms: Date.now() - recordedAt });
    } catch (err) {
      await this.recordEnded(run, err);
      throw err;
    } finally {
      clearInterval(lease);
      // Scans that waited for this target start now.
      this.wakeQueue();
    }
    const final = (await this.store.scans.get(scan.id))!;
    await this.store.audit
      .write({
        action: 'scan_imported',
        actor: request.actor.name,
        actorType: request.actor.type,
        resourceType: 'scan',
        resourceId: scan.id,
        details: {
          subnet: scan.subnet,
          subnet_from: plan.subnetFrom,
          profile,
          devices_found: plan.hosts.length,
          hosts_down: plan.hostsDown,
          warnings: plan.warnings.length,
          bytes: request.bytes,
          nmap_version: plan.report.nmapVersion,
          nmap_args: plan.report.args?.slice(0, 500) ?? null,
          report_started_at: plan.report.startedAt,
        },
        ipAddress: request.actor.ip ?? null,
        userAgent: request.actor.userAgent ?? null,
        success: final.status === 'completed',
      })
      .catch((err) => this.log.warn({ err, scan_id: scan.id }, 'could not audit an import'));
    return final;
  }
}

/**
 * Who a scan recorded earlier (a queued one) was for, from its triggered_by (CONTRACT §7):
 * `schedule:<name>`, `cli` and `import` are the system, `key:<name>` an API key, else a user.
 */
export function actorOf(triggeredBy: string | null): ScanRequest['actor'] {
  if (triggeredBy === null || triggeredBy === 'cli' || triggeredBy === 'import' || triggeredBy.startsWith('schedule:')) {
    return { name: triggeredBy, type: 'system' };
  }
  if (triggeredBy.startsWith('key:')) return { name: triggeredBy.slice(4), type: 'api_key' };
  return { name: triggeredBy, type: 'user' };
}

/** The ports a scan examines: scanning.port_range with scanning.top_ports, or every port for intensive scans (core/top-ports.ts). */
function portListOf(settings: Settings, profile: ScanProfile, engines: EngineSelector): PortRange[] {
  return scanPortList(settings.scanning, profile, engines.frequentTcpPorts().ports);
}

/** A recorded scan's subnet as a network (it was validated when the scan was recorded). */
function networkOf(subnet: string): Ipv4Network {
  const parsed = parseIpv4Network(subnet);
  if (!parsed.ok) throw new InvalidTargetError(`subnet: ${parsed.error}`);
  return parsed.value;
}

/** The validated target of a request, and how many addresses it covers. */
export function resolveTarget(
  request: Pick<ScanRequest, 'subnet' | 'device'>,
  settings: Settings,
  allowed: { cidrs: string[]; source: string },
): { network: Ipv4Network; hosts: number } {
  const target = parseTarget(request, settings);
  if (!allowed.cidrs.some((cidr) => insideCidr(target.network, cidr))) {
    const field = request.device !== undefined ? 'ip_address' : 'subnet';
    throw new TargetNotAllowedError(
      `${field}: ${request.device ?? target.network.cidr} is outside the allowed scan targets (${allowed.source}: ${allowed.cidrs.join(', ')})`,
    );
  }
  return target;
}

function insideCidr(network: Ipv4Network, cidr: string): boolean {
  const outer = parseIpv4Network(cidr);
  return outer.ok && networkWithin(network, outer.value);
}

function parseTarget(request: Pick<ScanRequest, 'subnet' | 'device'>, settings: Settings): { network: Ipv4Network; hosts: number } {
  if (request.device !== undefined) {
    const parsed = parseIpv4Network(request.device);
    if (!parsed.ok || request.device.includes('/')) {
      throw new InvalidTargetError('ip_address: must be a single IPv4 address such as 192.168.1.10');
    }
    return { network: parsed.value, hosts: 1 };
  }
  const text = request.subnet ?? settings.network.subnet;
  const parsed = parseIpv4Network(text);
  if (!parsed.ok) throw new InvalidTargetError(`subnet: ${parsed.error}`);
  const max = settings.scanning.max_hosts;
  if (parsed.value.size > max) {
    throw new InvalidTargetError(
      `subnet: ${parsed.value.cidr} has ${parsed.value.size} addresses, more than the limit of ${max} (scanning.max_hosts); scan a smaller block`,
    );
  }
  return { network: parsed.value, hosts: parsed.value.size };
}

/** A scan's in-process state as it starts here: its abort switch and progress over `hosts` hosts. */
function runningScan(scan: ScanRow, profile: ScanProfile, hosts: number): RunningScan {
  return {
    id: scan.id,
    profile,
    subnet: scan.subnet,
    abort: new AbortController(),
    reason: null,
    progress: new ProgressTracker(profile, hosts),
    done: Promise.resolve(),
  };
}

/**
 * The run of results gathered elsewhere (an agent's upload, an imported nmap report) and recorded
 * here: no engine runs and no process is started, so its engine options are inert.
 */
function recordingRun(run: Omit<ScanRun, 'engineOptions' | 'recordProcessGroups'>): ScanRun {
  return {
    ...run,
    engineOptions: { privileged: false, resolveHostnames: false, hostTimeoutSeconds: 0, signal: run.running.abort.signal, onProgress: () => {} },
    recordProcessGroups: () => {},
  };
}
