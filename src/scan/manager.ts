import type { Logger } from 'pino';
import { EventBus } from '../events/bus.js';
import type { DiscoveredHost, ScannedHost, ScanProfile } from '../core/model.js';
import { formatPortRanges, ipv4ToInt, networkContains, networkWithin, parseIpv4Network, type Ipv4Network, type PortRange } from '../core/net.js';
import type { Settings } from '../core/settings.js';
import type { ActorType } from '../store/audit.js';
import { nowIso } from '../store/clock.js';
import type { Store } from '../store/index.js';
import { InventoryWriter, type SeenDevice } from '../store/inventory.js';
import { onlineAddressesBetween } from '../store/online.js';
import type { ScanProgress } from '../schemas/scan.js';
import type { ScanRow } from '../store/schema.js';
import { toScanRecord, type ScanLease } from '../store/scans.js';
import { EngineSelector } from './engines.js';
import { ScanEvaluator } from './evaluate.js';
import { NetwardenError } from '../util/errors.js';
import { publishScanOutcome } from './events.js';
import { InvalidTargetError, ScanBusyError, ScanNotFoundError, ScanNotRunningError, TargetNotAllowedError } from './errors.js';
import { LEASE_RENEW_MS, ORPHAN_CHECK_MS, SCAN_LEASE_MS, endOrphanedEngines, newOwner, ownerGone, type ScanOwner } from './owner.js';
import { runPipeline } from './pipeline.js';
import { scanPortList } from '../core/top-ports.js';
import { frequentTcpPorts } from './top-ports.js';
import { hasRawSocketPrivilege } from './privileges.js';
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
}

/** How often progress is written to the scan record while it runs. */
const PERSIST_EVERY_MS = 2000;
/** Live progress events are published at most this often (CONTRACT §10: at most twice a second). */
const PROGRESS_EVENT_EVERY_MS = 500;
/** How long a cancel asked of this instance waits for the instance that runs the scan to stop it. */
const REMOTE_CANCEL_WAIT_MS = 20_000;
/**
 * How often every instance looks for a queued scan it can start. A queued scan normally starts
 * the moment the running scan ends (on the instance that ran it); this catches the wake-ups that
 * get lost: the scan ended on an instance that then died, or was queued by one that could not
 * start it.
 */
const QUEUE_CHECK_MS = 2_000;
/** Attempts of one startQueued call when the scan it picked was cancelled or failed under it. */
const QUEUE_START_ATTEMPTS = 5;

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
   * Whether this manager starts queued scans (default true). `netwarden scan` says false: a
   * one-off command must not pick up a schedule's queued run and then exit under it.
   */
  runsQueue?: boolean;
}

/**
 * Runs scans one at a time across every instance sharing the database: validates the request,
 * takes the single active-scan slot in the database (so concurrent starts, here or elsewhere,
 * let exactly one through), picks the engine, runs discovery and the port scan, writes results
 * to the inventory, and keeps progress for /api/scan/status. While a scan runs its lease is
 * renewed; scans whose owner is gone are ended by whichever instance notices first.
 */
export class ScanManager {
  private running: RunningScan | null = null;
  private readonly store: Store;
  private readonly log: Logger;
  private readonly inventory: InventoryWriter;
  readonly engines: EngineSelector;
  private readonly evaluator: ScanEvaluator;
  private readonly scanAllow: string[] | null;
  readonly owner: ScanOwner;
  readonly events: EventBus;
  private orphanTimer: NodeJS.Timeout | null = null;
  private queueTimer: NodeJS.Timeout | null = null;
  /** Attempts to start a queued scan run one after another in this process (the database arbitrates between processes). */
  private queueAttempt: Promise<unknown> = Promise.resolve();
  /** Set by shutdown: no queued scan starts here any more. */
  private stopping = false;
  private readonly runsQueue: boolean;

  constructor(options: ScanManagerOptions) {
    this.store = options.store;
    this.log = options.log;
    this.inventory = new InventoryWriter(this.store.db, () => this.store.touch());
    this.engines = options.engines ?? new EngineSelector();
    this.evaluator = new ScanEvaluator(this.store, options.dataDir ?? null);
    this.scanAllow = options.scanAllow ?? null;
    this.owner = options.owner ?? newOwner();
    this.events = options.events ?? new EventBus();
    this.runsQueue = options.runsQueue ?? true;
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
   * Validates and starts a scan; resolves once it is recorded as running. While another scan runs
   * or is queued (queued scans go first), throws ScanBusyError naming it (CONTRACT §7).
   */
  async trigger(request: ScanRequest): Promise<ScanRow> {
    const settings = await this.store.settings.get();
    const target = resolveTarget(request, settings, this.allowedTargets(settings));
    if (this.running) throw new ScanBusyError(this.running.id);
    await this.refuseWhileActive();

    const engine = await this.engines.select(settings.scanning.engine);
    const now = nowIso();
    const scan = await this.store.scans.start(
      {
        profile: request.profile,
        subnet: target.network.cidr,
        scan_type: request.device ? 'device' : 'network',
        target: request.device ?? null,
        started_at: now,
        triggered_by: request.triggeredBy === undefined ? request.actor.name : request.triggeredBy,
      },
      this.lease(),
    );
    if (!scan) {
      const active = await this.store.scans.active();
      throw new ScanBusyError(active?.id ?? null);
    }
    await this.launch(scan, engine, settings, target, request.actor);
    return scan;
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
   * Announces a scan just recorded as queued (by the scheduler or "run now": scan_queued) and
   * starts it if nothing else runs or waits before it. Returns whether it is running now.
   */
  async queued(scan: ScanRow): Promise<'started' | 'queued'> {
    this.events.publish('scan_queued', toScanRecord(scan));
    await this.startQueued();
    const now = await this.store.scans.get(scan.id);
    return now && now.status !== 'queued' ? 'started' : 'queued';
  }

  /**
   * Starts the oldest queued scan if no scan runs, on this instance or another; resolves to it,
   * or null when nothing was started. Safe to call any time from anywhere: the database lets at
   * most one scan hold the active slot, and a queued scan starts at most once.
   */
  startQueued(): Promise<ScanRow | null> {
    const attempt = this.queueAttempt.then(() => this.tryStartQueued());
    this.queueAttempt = attempt.catch(() => undefined);
    return attempt;
  }

  private async tryStartQueued(): Promise<ScanRow | null> {
    for (let i = 0; i < QUEUE_START_ATTEMPTS; i++) {
      if (this.running || this.stopping || !this.runsQueue) return null;
      const next = await this.store.scans.nextQueued();
      if (!next) return null;
      const settings = await this.store.settings.get();
      let target: { network: Ipv4Network; hosts: number };
      let engine: ScanEngine;
      try {
        // Checked again at start: the settings (allowed targets, engine) may have changed while it waited.
        target = resolveTarget(
          next.scan_type === 'device' && next.target ? { device: next.target } : { subnet: next.subnet },
          settings,
          this.allowedTargets(settings),
        );
        engine = await this.engines.select(settings.scanning.engine);
      } catch (err) {
        if (!(err instanceof NetwardenError)) throw err;
        await this.failQueued(next, `Could not start: ${err.message}`);
        continue;
      }
      const scan = await this.store.scans.takeQueued(next.id, this.lease(), nowIso());
      if (scan) {
        await this.launch(scan, engine, settings, target, actorOf(scan.triggered_by));
        return scan;
      }
      // A scan runs (here or elsewhere): the queued one waits for its end. Otherwise the one
      // picked was cancelled, or started elsewhere and already ended: look again.
      if (await this.store.scans.running()) return null;
    }
    return null;
  }

  private async failQueued(scan: ScanRow, error: string): Promise<void> {
    if (!(await this.store.scans.failQueued(scan.id, error, nowIso()))) return;
    this.log.warn({ scan_id: scan.id, error }, 'a queued scan could not start');
    await this.publishFinished(scan.id);
    await this.audit('scan_failed', scan, actorOf(scan.triggered_by), false, { error }).catch((err) =>
      this.log.warn({ err, scan_id: scan.id }, 'could not audit a queued scan that could not start'),
    );
  }

  /** Throws ScanBusyError while a scan is queued or runs elsewhere; a queued scan with nothing running is started. */
  private async refuseWhileActive(): Promise<void> {
    const active = await this.store.scans.active();
    if (!active) return;
    // Queued with nothing running happens only between a scan's end and the next start: help it along.
    if (active.status === 'queued') this.wakeQueue();
    throw new ScanBusyError(active.id);
  }

  /** Starts a queued scan in the background, if there is one and nothing runs. */
  private wakeQueue(): void {
    if (this.stopping) return;
    this.startQueued().catch((err) => this.log.warn({ err }, 'could not start a queued scan'));
  }

  /** Records the start of a scan that now holds the active slot, then runs it in the background. */
  private async launch(
    scan: ScanRow,
    engine: ScanEngine,
    settings: Settings,
    target: { network: Ipv4Network; hosts: number },
    actor: ScanRequest['actor'],
  ): Promise<void> {
    const profile = scan.profile as ScanProfile;
    const running: RunningScan = {
      id: scan.id,
      profile,
      subnet: scan.subnet,
      abort: new AbortController(),
      reason: null,
      progress: new ProgressTracker(profile, target.hosts),
      done: Promise.resolve(),
    };
    this.running = running;
    this.events.publish('scan_started', toScanRecord(scan));
    const details = { engine: engine.name, profile, subnet: scan.subnet, ...(scan.schedule_id !== null ? { schedule_id: scan.schedule_id } : {}) };
    // The scan holds the slot now: it must run (and end) even if the audit entry cannot be written.
    await this.audit('scan_started', scan, actor, true, details).catch((err) =>
      this.log.warn({ err, scan_id: scan.id }, 'could not audit the start of a scan'),
    );
    const request: ScanRequest = { profile, ...(scan.scan_type === 'device' && scan.target ? { device: scan.target } : {}), actor };
    running.done = this.execute(running, scan, engine, settings, target.network, request).finally(() => {
      if (this.running === running) this.running = null;
      // The next queued scan starts as this one ends, here, whichever instance queued it.
      if (this.runsQueue) this.wakeQueue();
    });
  }

  private lease(): ScanLease {
    return { ownerId: this.owner.id, host: this.owner.host, pid: this.owner.pid, leaseExpiresAt: this.leaseUntil() };
  }

  /**
   * Cancels a scan. One this process runs is stopped here; one another live instance runs is
   * asked to stop (it sees the request within a lease renewal) and awaited; one whose owner is
   * gone is ended here.
   */
  async cancel(scanId: number): Promise<void> {
    let scan = await this.store.scans.get(scanId);
    if (!scan) throw new ScanNotFoundError();
    if (scan.status === 'queued' && this.running?.id !== scanId) {
      // A queued scan has no owner: whoever is asked ends it, unless it starts in the meantime.
      if (await this.store.scans.finish(scanId, null, { ...this.ending(scan), status: 'cancelled', error: 'Cancelled' })) {
        await this.publishFinished(scanId);
        await this.audit('scan_cancelled', scan, actorOf(scan.triggered_by), true, { was: 'queued' });
        return;
      }
      scan = (await this.store.scans.get(scanId)) ?? scan;
    }
    if (this.running?.id === scanId) {
      this.running.reason = 'cancelled';
      this.running.abort.abort();
      await this.running.done;
      return;
    }
    if (scan.status !== 'running') {
      throw new ScanNotRunningError(scanId, scan.status);
    }
    const gone = ownerGone(scan, this.owner, Date.now());
    if (gone) {
      endOrphanedEngines(scan, this.owner);
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

  /** Progress of the scan this process runs, if any. */
  current(): { id: number; profile: ScanProfile; subnet: string; progress: ScanProgress } | null {
    const r = this.running;
    return r ? { id: r.id, profile: r.profile, subnet: r.subnet, progress: r.progress.current } : null;
  }

  /** Waits for the running scan (if any) to end. */
  async idle(): Promise<void> {
    await this.running?.done;
  }

  /**
   * Ends scans whose owner is gone (a process that died, on this host or one whose lease ran
   * out): stops the engine it left behind on this host, records the scan as failed with its
   * duration, and audits it. Run at start-up and then periodically by every instance; of two
   * instances doing it at once, one writes. Returns the ids ended here.
   */
  async recoverAbandoned(): Promise<number[]> {
    const ended: number[] = [];
    // Running scans only: a queued scan has no owner yet and waits its turn; it is never abandoned.
    for (const scan of await this.store.scans.listRunning()) {
      const why = ownerGone(scan, this.owner, Date.now());
      if (!why || this.running?.id === scan.id) continue;
      const killed = endOrphanedEngines(scan, this.owner);
      const error = `Interrupted: the server stopped while this scan was running (${why})`;
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
   * Looks for abandoned scans every ORPHAN_CHECK_MS, and for queued scans to start every
   * QUEUE_CHECK_MS, until shutdown. Starts a queued scan left waiting right away.
   */
  startRecovery(): void {
    if (this.orphanTimer) return;
    this.orphanTimer = setInterval(() => {
      this.recoverAbandoned().catch((err) => this.log.warn({ err }, 'could not check for abandoned scans'));
    }, ORPHAN_CHECK_MS);
    this.orphanTimer.unref();
    this.queueTimer = setInterval(() => {
      if (!this.running) this.wakeQueue();
    }, QUEUE_CHECK_MS);
    this.queueTimer.unref();
    this.wakeQueue();
  }

  /**
   * Stops a running scan because the server is going down; it is recorded as failed. Queued
   * scans stay queued: another instance, or this one's next start, runs them.
   */
  async shutdown(): Promise<void> {
    this.stopping = true;
    if (this.orphanTimer) clearInterval(this.orphanTimer);
    if (this.queueTimer) clearInterval(this.queueTimer);
    this.orphanTimer = null;
    this.queueTimer = null;
    await this.queueAttempt;
    const r = this.running;
    if (!r) return;
    r.reason = 'shutdown';
    r.abort.abort();
    await r.done;
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
    const portList = portListOf(settings, request.profile);
    if (request.profile === 'quick' || live.length === 0) return portList;
    const results = await engine.scanPorts({
      hosts: live.map((h) => h.ip),
      profile: request.profile,
      ports: formatPortRanges(portList),
      osDetection: settings.scanning.os_detection,
      ...engineOptions,
    });
    engineOptions.onProgress({ phase: 'saving', percent: 0, hostsDone: live.length });
    await this.recordPorts(results, live, seen);
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
    const portList = portListOf(settings, profile);
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
      recordPorts: (results) => this.recordPorts(results, found.live, found.seen),
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

  private async recordDiscovery({ scan }: ScanRun, live: DiscoveredHost[]): Promise<SeenDevice[]> {
    const { seen, notes } = await this.inventory.recordDiscovery(scan.id, live, nowIso());
    for (const n of notes) this.log.warn({ scan_id: scan.id, ip: n.ip, mac: n.mac, device_id: n.deviceId }, `identity: ${n.reason}`);
    return seen;
  }

  /** Records port results of hosts discovery recorded; the MAC discovery saw stands in for one the port scan did not. */
  private async recordPorts(results: ScannedHost[], live: DiscoveredHost[], seen: SeenDevice[]): Promise<void> {
    const deviceByIp = new Map(seen.map((d) => [d.ip, d.deviceId]));
    const discoveredByIp = new Map(live.map((h) => [h.ip, h]));
    await this.inventory.recordPorts(
      results
        .filter((h) => deviceByIp.has(h.ip))
        .map((h) => ({ deviceId: deviceByIp.get(h.ip)!, host: { ...h, mac: h.mac ?? discoveredByIp.get(h.ip)?.mac ?? null } })),
      nowIso(),
    );
  }

  /**
   * Risk, CVEs, presence and changes against the baseline, then the snapshots of this scan; then
   * the live events for what changed (before scan_finished, which closes the scan's events).
   */
  private async evaluationPhase({ scan, settings, request, engineOptions }: ScanRun, seen: SeenDevice[], portList: PortRange[]): Promise<void> {
    engineOptions.onProgress({ phase: 'saving', percent: 50 });
    const seenDeviceIds = seen.map((d) => d.deviceId);
    const outcome = await this.evaluator.evaluate({
      scan,
      seenDeviceIds,
      portsScanned: request.profile !== 'quick',
      portList,
      exclude: request.device ? [] : settings.network.exclude,
    });
    await this.inventory.recordSnapshots(scan.id, seenDeviceIds);
    await publishScanOutcome(this.events, this.store, outcome).catch((err) =>
      this.log.warn({ err, scan_id: scan.id }, 'could not publish the changes of a scan'),
    );
  }

  private async recordCompleted(
    { running, scan, engine, request, started }: ScanRun,
    devicesFound: number,
    timing: { scan_ms: number; evaluation_ms: number },
  ): Promise<void> {
    const progress = running.progress.update({ phase: 'done', percent: 100 });
    const recorded = await this.store.scans.finish(scan.id, this.owner.id, {
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
function portListOf(settings: Settings, profile: ScanProfile): PortRange[] {
  return scanPortList(settings.scanning, profile, frequentTcpPorts().ports);
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
