/**
 * The scan manager: the one object routes, jobs, the CLI and the agent endpoints talk to about
 * scans. It builds its collaborators, each with one job, and passes each the others it needs:
 * dispatch (dispatch.ts: queue, slots, parallel scans), lifecycle (lifecycle.ts: leases, cancel,
 * recovery), the run (run.ts: phases, pipeline), recording (recording.ts: the one path by which
 * results reach the inventory, for scans, uploads and imports), agents' jobs (agent-jobs.ts) and
 * imports (imports.ts). The target rules are core/scan-target.ts; the engines are engines/.
 */
import type { OutboundGuard } from '../util/outbound.js';
import type { Logger } from 'pino';
import type { ImportPlan } from '../core/nmap-import.js';
import type { ScanProfile } from '../core/model.js';
import { allowedTargets, resolveTarget, type AllowedTargets } from '../core/scan-target.js';
import type { Settings } from '../core/settings.js';
import { EngineSelector } from '../engines/engines.js';
import { EventBus } from '../events/bus.js';
import { InProcessQueue } from '../queue/in-process.js';
import type { ScanJobQueue } from '../queue/types.js';
import type { ScanProgress } from '../schemas/scan.js';
import type { Store } from '../store/index.js';
import { InventoryWriter } from '../store/inventory.js';
import type { ScanRow } from '../store/schema.js';
import { AgentJobs, type AgentJob, type AgentResult } from './agent-jobs.js';
import { ScanDispatch } from './dispatch.js';
import { ScanEvaluator } from './evaluate.js';
import { ScanImports, type ImportRequest } from './imports.js';
import { ScanLifecycle } from './lifecycle.js';
import { newOwner, type ScanOwner } from './owner.js';
import { ScanRecorder } from './recording.js';
import { ScanRunner } from './run.js';
import type { ScanRequest, ScanTrigger } from './scan-run.js';

export type { AgentJob, AgentResult, ImportRequest, ScanRequest, ScanTrigger };

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
  /** Which addresses the name sources may reach (default: no loopback, link-local or unspecified address, as without NETWARDEN_OUTBOUND_ALLOW; services.ts passes the configured one). */
  outboundGuard?: OutboundGuard;
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

/**
 * Runs scans across every instance sharing the database: validates the request, takes an active
 * slot in the database (so concurrent starts, here or elsewhere, let through only as many as
 * scanning.max_parallel_scans allows, never two on overlapping targets), picks the engine, runs
 * discovery and the port scan, writes results to the inventory, and keeps progress for
 * /api/scan/status. While a scan runs its lease is renewed; scans whose owner is gone are ended
 * by whichever instance notices first.
 */
export class ScanManager {
  readonly engines: EngineSelector;
  readonly owner: ScanOwner;
  readonly events: EventBus;
  readonly queue: ScanJobQueue;
  /** `worker <name>`, written on the scans this process runs. */
  readonly runnerName: string;
  private readonly store: Store;
  private readonly scanAllow: string[] | null;
  private readonly dispatch: ScanDispatch;
  private readonly lifecycle: ScanLifecycle;
  private readonly agents: AgentJobs;
  private readonly imports: ScanImports;

  constructor(options: ScanManagerOptions) {
    const { store, log } = options;
    this.store = store;
    this.engines = options.engines ?? new EngineSelector();
    this.scanAllow = options.scanAllow ?? null;
    this.owner = options.owner ?? newOwner();
    this.events = options.events ?? new EventBus();
    this.queue = options.queue ?? new InProcessQueue(log);
    this.runnerName = `${options.role ?? 'server'} ${options.workerName ?? `${this.owner.host.split('/')[0]}:${this.owner.pid}`}`;
    const runsScans = options.runsScans ?? true;
    const { events, owner, runnerName } = this;
    // A slot may be free (a scan ended, an import was recorded): queued scans may start here now.
    const wake = () => this.dispatch.wakeQueue();
    const allowed = (settings: Settings) => this.allowedTargets(settings);
    const recorder = new ScanRecorder({
      store,
      log,
      events,
      owner,
      inventory: new InventoryWriter(store.db, () => store.touch()),
      evaluator: new ScanEvaluator(store, options.dataDir ?? null),
      outboundGuard: options.outboundGuard,
    });
    const lifecycle = new ScanLifecycle({ store, log, owner, recorder, wake });
    const runner = new ScanRunner({
      store,
      log,
      events,
      recorder,
      lifecycle,
      engines: this.engines,
      runnerName,
      wake,
      outboundGuard: options.outboundGuard,
    });
    this.lifecycle = lifecycle;
    this.dispatch = new ScanDispatch({
      store,
      log,
      events,
      queue: this.queue,
      engines: this.engines,
      lifecycle,
      runner,
      recorder,
      allowedTargets: allowed,
      runsScans,
      runsQueue: runsScans && (options.runsQueue ?? true),
      concurrency: options.concurrency ?? Number.POSITIVE_INFINITY,
      runnerName,
    });
    this.agents = new AgentJobs({ store, log, events, lifecycle, recorder, engines: this.engines, allowedTargets: allowed });
    this.imports = new ScanImports({ store, log, events, lifecycle, recorder, wake });
  }

  /** NETWARDEN_SCAN_ALLOW's list when it replaces scanning.allowed_targets, else null. */
  get scanAllowOverride(): string[] | null {
    return this.scanAllow;
  }

  /** The CIDR blocks scans may target, and the setting that says so (for error messages). */
  allowedTargets(settings: Settings): AllowedTargets {
    return allowedTargets(this.scanAllow, settings);
  }

  /**
   * Validates a scan request (without a profile: scanning.default_profile) and records it as a job (CONTRACT §7): queued, with its job in the
   * queue, or routed to the agent whose networks hold its target. A process that runs scans
   * starts it at once when it can (the job then finds it taken). While a scan with an
   * overlapping target is queued or running, or every slot (scanning.max_parallel_scans) is
   * taken, throws ScanBusyError naming it (CONTRACT §3, §12).
   */
  trigger(request: ScanTrigger): Promise<ScanRow> {
    return this.dispatch.trigger(request);
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
  queued(scan: ScanRow): Promise<'started' | 'queued'> {
    return this.dispatch.queued(scan);
  }

  /**
   * Starts the oldest queued scan of the server's workers that may start now (a slot is free and
   * its target is not busy); resolves to it, or null when nothing was started. Safe to call any
   * time from anywhere: the queue lock lets one decision through at a time, across processes.
   */
  startQueued(): Promise<ScanRow | null> {
    return this.dispatch.startQueued();
  }

  /**
   * Cancels a scan. One this process runs is stopped here; one another live instance (a worker)
   * runs is asked to stop (it sees the request within a lease renewal) and awaited; one run by an
   * agent, or whose owner is gone, is ended here at once; a queued one is withdrawn.
   */
  cancel(scanId: number): Promise<void> {
    return this.lifecycle.cancel(scanId);
  }

  /** Progress of the oldest scan this process runs, if any. */
  current(): { id: number; profile: ScanProfile; subnet: string; progress: ScanProgress } | null {
    return this.lifecycle.current();
  }

  /** Waits for the scans this process runs (if any) to end. */
  idle(): Promise<void> {
    return this.lifecycle.idle();
  }

  /** Waits until scan `scanId` has ended, wherever it runs; resolves to its final record. */
  waitFor(scanId: number): Promise<ScanRow | undefined> {
    return this.lifecycle.waitFor(scanId);
  }

  /**
   * Ends scans whose owner is gone (a process that died, or whose lease ran out): stops the
   * engine it left behind on this host and records the scan as failed. Returns the ids ended here.
   */
  recoverAbandoned(): Promise<number[]> {
    return this.lifecycle.recoverAbandoned();
  }

  /**
   * Looks for abandoned scans every ORPHAN_CHECK_MS until shutdown and, in a worker, takes jobs
   * from the queue: the scans already queued first.
   */
  startRecovery(): void {
    if (this.lifecycle.recovering) return;
    this.lifecycle.startRecovery();
    this.dispatch.startWorking();
  }

  /**
   * Stops the scans this process runs because it is going down; they are recorded as failed.
   * Queued scans stay queued: another worker, or this one's next start, runs them.
   */
  async shutdown(): Promise<void> {
    this.lifecycle.stopRecovery();
    await this.dispatch.stop();
    await this.lifecycle.stopAll();
    await this.agents.settle();
    await this.queue.stop();
  }

  // Agents (CONTRACT §12) ----------------------------------------------------------------------

  /**
   * Takes the oldest queued scan routed to `agent` that may start now, for the agent run `ownerId`
   * (its lease, renewed by its progress reports). Null when there is none. A scan whose target is
   * no longer allowed is failed instead.
   */
  claimForAgent(agent: { id: number; name: string }, ownerId: string): Promise<AgentJob | null> {
    return this.agents.claimForAgent(agent, ownerId);
  }

  /**
   * Ends the scans of an agent just revoked (CONTRACT §12): its queued scans can no longer run
   * and its running ones can no longer report, so both end as failed, saying why.
   */
  agentRevoked(agent: { id: number; name: string }): Promise<number[]> {
    return this.agents.agentRevoked(agent);
  }

  /**
   * An agent's progress report on its scan: renews the lease, keeps the progress for the API and
   * publishes it. Returns `cancel` when the scan was cancelled (the agent stops and reports it),
   * `lost` when it is no longer the agent's to run (ended elsewhere: the agent drops it).
   */
  agentProgress(scanId: number, ownerId: string, progress: ScanProgress): Promise<'ok' | 'cancel' | 'lost'> {
    return this.agents.agentProgress(scanId, ownerId, progress);
  }

  /**
   * Records how an agent's scan ended without results: `cancelled` (it was asked to stop) or
   * `failed` (its engine failed). Idempotent: a scan already ended is left as it is.
   */
  agentEnded(scanId: number, ownerId: string, status: 'failed' | 'cancelled', error: string): Promise<ScanRow | undefined> {
    return this.agents.agentEnded(scanId, ownerId, status, error);
  }

  /**
   * Records the results an agent uploaded for its scan, exactly as for a scan run here. A retried
   * upload is recorded once: a retry of a scan already recorded gets its record; one arriving
   * while the first is being recorded waits for it (same instance) or is refused with
   * UploadInProgressError (another instance), to be retried.
   */
  recordAgentResults(scanId: number, ownerId: string, result: AgentResult): Promise<ScanRow> {
    return this.agents.recordAgentResults(scanId, ownerId, result);
  }

  // Imports (CONTRACT §11, §13) -----------------------------------------------------------------

  /**
   * Records an nmap report (checked and read by core/nmap-import.ts) as a completed scan, exactly
   * as a scan run here is recorded. Nothing is scanned, so the allowed scan targets do not apply;
   * the subnet must stay within scanning.max_hosts. A scan of an overlapping target already
   * running refuses it (ScanBusyError).
   */
  importReport(plan: ImportPlan, request: ImportRequest): Promise<ScanRow> {
    return this.imports.importReport(plan, request);
  }
}
