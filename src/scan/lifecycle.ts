/**
 * The lifecycle of scans once they hold a slot: the scans this process runs, their leases
 * (renewed while they run; a cancel asked elsewhere is seen at a renewal), cancel wherever the
 * scan runs, waiting for scans to end, and the recovery of scans whose owner is gone.
 */
import type { Logger } from 'pino';
import type { ScanProfile } from '../core/model.js';
import type { ScanProgress } from '../schemas/scan.js';
import { nowIso } from '../store/clock.js';
import type { Store } from '../store/index.js';
import type { ScanRow } from '../store/schema.js';
import type { ScanLease } from '../store/scans.js';
import { ScanNotFoundError, ScanNotRunningError } from './errors.js';
import { LEASE_RENEW_MS, ORPHAN_CHECK_MS, SCAN_LEASE_MS, endOrphanedEngines, ownerGone, type ScanOwner } from './owner.js';
import type { ScanRecorder } from './recording.js';
import type { RunningScan } from './scan-run.js';

/** How long a cancel asked of this instance waits for the instance that runs the scan to stop it. */
const REMOTE_CANCEL_WAIT_MS = 20_000;
/** How often waitFor() reads the record of a scan another process runs. */
const WAIT_POLL_MS = 500;

export interface ScanLifecycleDeps {
  store: Store;
  log: Logger;
  owner: ScanOwner;
  recorder: ScanRecorder;
  /** Called when a slot may have been freed (a scan ended here): queued scans may start now. */
  wake: () => void;
}

export class ScanLifecycle {
  /** Scans this process runs, by id. */
  readonly running = new Map<number, RunningScan>();
  private orphanTimer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: ScanLifecycleDeps) {}

  /** This process as the owner of the scans it runs. */
  get owner(): ScanOwner {
    return this.deps.owner;
  }

  /** This process's lease on a scan it takes now. */
  lease(): ScanLease {
    const { owner } = this.deps;
    return { ownerId: owner.id, host: owner.host, pid: owner.pid, leaseExpiresAt: this.leaseUntil() };
  }

  /** When a lease taken or renewed now runs out. */
  leaseUntil(): string {
    return new Date(Date.now() + SCAN_LEASE_MS).toISOString();
  }

  /** Renews the running scan's lease and reacts to a cancel asked elsewhere or the scan ending elsewhere. */
  keepLease(running: RunningScan): NodeJS.Timeout {
    const { store, log, owner } = this.deps;
    const timer = setInterval(() => {
      store.scans
        .renewLease(running.id, owner.id, this.leaseUntil())
        .then((state) => {
          if (state === 'ok' || running.abort.signal.aborted) return;
          running.reason = state === 'cancel_requested' ? 'cancelled' : 'lost';
          running.abort.abort();
        })
        .catch((err) => log.warn({ err, scan_id: running.id }, 'could not renew the scan lease'));
    }, LEASE_RENEW_MS);
    timer.unref();
    return timer;
  }

  /** Renews the lease `ownerId` (an agent) holds on a scan while this process records its results. */
  keepLeaseOf(scanId: number, ownerId: string): NodeJS.Timeout {
    const timer = setInterval(() => {
      this.deps.store.scans.renewLease(scanId, ownerId, this.leaseUntil()).catch(() => undefined);
    }, LEASE_RENEW_MS);
    timer.unref();
    return timer;
  }

  /**
   * Cancels a scan. One this process runs is stopped here; one another live instance (a worker)
   * runs is asked to stop (it sees the request within a lease renewal) and awaited; one run by an
   * agent, or whose owner is gone, is ended here at once; a queued one is withdrawn.
   */
  async cancel(scanId: number): Promise<void> {
    const { store, owner, recorder } = this.deps;
    let scan = await store.scans.get(scanId);
    if (!scan) throw new ScanNotFoundError();
    if (scan.status === 'queued' && !this.running.has(scanId)) {
      // A queued scan has no owner: whoever is asked ends it, unless it starts in the meantime (its job then finds it ended).
      if (await recorder.endElsewhere(scan, null, 'cancelled', 'Cancelled', { was: 'queued' })) return;
      scan = (await store.scans.get(scanId)) ?? scan;
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
    const gone = ownerGone(scan, owner, Date.now());
    // An agent's scan ends at once (issue 19): the agent learns it at its next report (409) and stops its engine.
    if (gone || scan.agent_id !== null) {
      if (gone) endOrphanedEngines(scan, owner);
      if (await recorder.endElsewhere(scan, scan.owner_id, 'cancelled', 'Cancelled', {})) this.deps.wake();
      return;
    }
    await store.scans.requestCancel(scanId, nowIso());
    const deadline = Date.now() + REMOTE_CANCEL_WAIT_MS;
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, LEASE_RENEW_MS / 4));
      const now = await store.scans.get(scanId);
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
      const row = await this.deps.store.scans.get(scanId);
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
    const { store, log, owner, recorder } = this.deps;
    const ended: number[] = [];
    // Running scans only: a queued scan has no owner yet and waits its turn; it is never abandoned.
    for (const scan of await store.scans.listRunning()) {
      const why = ownerGone(scan, owner, Date.now());
      if (!why || this.running.has(scan.id)) continue;
      const killed = endOrphanedEngines(scan, owner);
      // A dedicated worker or an agent is named; a `netwarden serve` process (a scan or an import) is "the server".
      const who = scan.runner && /^(worker|agent) /.test(scan.runner) ? scan.runner : 'the server';
      const error = `Interrupted: ${who} stopped while this scan was running (${why})`;
      const details = { error, ...(killed.length > 0 ? { ended_engine_process_groups: killed } : {}) };
      if (!(await recorder.endElsewhere(scan, scan.owner_id, 'failed', error, details))) continue;
      ended.push(scan.id);
      log.warn({ scan_id: scan.id, reason: why, ended_engine_process_groups: killed }, 'ended a scan whose owner is gone');
    }
    if (ended.length > 0) this.deps.wake();
    return ended;
  }

  /** Looks for abandoned scans every ORPHAN_CHECK_MS until stop(). */
  startRecovery(): void {
    if (this.orphanTimer) return;
    this.orphanTimer = setInterval(() => {
      this.recoverAbandoned().catch((err) => this.deps.log.warn({ err }, 'could not check for abandoned scans'));
    }, ORPHAN_CHECK_MS);
    this.orphanTimer.unref();
  }

  /** Whether startRecovery() has run (and stop() has not). */
  get recovering(): boolean {
    return this.orphanTimer !== null;
  }

  /** Stops looking for abandoned scans. */
  stopRecovery(): void {
    if (this.orphanTimer) clearInterval(this.orphanTimer);
    this.orphanTimer = null;
  }

  /** Stops the scans this process runs because it is going down (they are recorded as failed), and waits for them. */
  async stopAll(): Promise<void> {
    for (const r of this.running.values()) {
      r.reason = 'shutdown';
      r.abort.abort();
    }
    await this.idle();
  }
}
