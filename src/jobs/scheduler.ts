/**
 * Fires schedule slots (CONTRACT §7). Every instance runs a Scheduler; each slot runs exactly
 * once across all of them because a slot is claimed in the database before anything happens:
 * `next_run_at` moves from the slot to the following one in a conditional UPDATE, in the same
 * transaction as the queued scan it records, so the instance whose UPDATE matched records the
 * run and every other one finds the slot gone.
 *
 * A fired slot always records a `queued` scan (triggered_by `schedule:<name>`), which the scan
 * manager starts at once when nothing runs, or when the running scan ends: schedules never get a
 * 409. At most one queued run per schedule: a slot that finds its previous run still queued is
 * skipped and audited `schedule_skipped`.
 *
 * After a pause (the service was down, or the process stalled), the latest slot that passed runs
 * once and the earlier ones are audited `schedule_missed`, once per schedule (core/schedule.ts,
 * `dueSlot`).
 *
 * The clock is injected: production passes the wall clock and ticks every second; tests drive
 * `tick()` with a clock of their own instead of waiting for minutes to pass.
 */
import type { Logger } from 'pino';
import { CronTiming, dueSlot } from '../core/schedule.js';
import type { ScanManager } from '../scan/manager.js';
import { nowIso } from '../store/clock.js';
import type { Store } from '../store/index.js';
import type { ScheduleRow } from '../store/schema.js';
import { RefusedError } from '../util/errors.js';

/** How often production checks for due slots: the seconds of a per-minute schedule's delay. */
export const SCHEDULER_TICK_MS = 1_000;

/** What one tick did to one schedule (for tests and the log). */
export type FireOutcome =
  | { schedule_id: number; outcome: 'queued' | 'started'; scan_id: number; slot: string }
  | { schedule_id: number; outcome: 'skipped'; queued_scan_id: number | null; slot: string }
  | { schedule_id: number; outcome: 'claimed_elsewhere' | 'unreadable'; slot: string };

export interface SchedulerOptions {
  store: Store;
  scans: ScanManager;
  log: Logger;
  /** The clock slots are judged by (default: the wall clock). */
  now?: () => Date;
  /** How often `start()` ticks (default SCHEDULER_TICK_MS). */
  tickMs?: number;
  /**
   * Tests only: reads six-field patterns with a leading seconds field, for the end-to-end test
   * with a per-second schedule. Such patterns can only be stored by writing the table directly;
   * the API and the CLI accept five fields.
   */
  secondsField?: boolean;
}

export class Scheduler {
  private readonly store: Store;
  private readonly scans: ScanManager;
  private readonly log: Logger;
  private readonly now: () => Date;
  private readonly tickMs: number;
  private readonly secondsField: boolean;
  private timer: NodeJS.Timeout | null = null;
  /** The tick under way: ticks never overlap, and stopping waits for it. */
  private current: Promise<FireOutcome[]> | null = null;

  constructor(options: SchedulerOptions) {
    this.store = options.store;
    this.scans = options.scans;
    this.log = options.log;
    this.now = options.now ?? (() => new Date());
    this.tickMs = options.tickMs ?? SCHEDULER_TICK_MS;
    this.secondsField = options.secondsField ?? false;
  }

  /** Ticks now and every tickMs until `stop`. A tick still under way when the next is due is not doubled. */
  start(): void {
    if (this.timer) return;
    const run = () => {
      if (this.current) return;
      this.tick().catch((err) => this.log.warn({ err }, 'scheduler tick failed'));
    };
    this.timer = setInterval(run, this.tickMs);
    this.timer.unref();
    run();
  }

  /** No new tick starts; resolves when the one under way (if any) has ended. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.current?.catch(() => undefined);
  }

  /** Fires every slot due at the clock's now; returns what happened, schedule by schedule. */
  tick(): Promise<FireOutcome[]> {
    const run = (this.current ?? Promise.resolve([])).catch(() => []).then(() => this.tickOnce());
    const tracked = run.finally(() => {
      if (this.current === tracked) this.current = null;
    });
    this.current = tracked;
    return tracked;
  }

  private async tickOnce(): Promise<FireOutcome[]> {
    const now = this.now();
    const outcomes: FireOutcome[] = [];
    for (const schedule of await this.store.schedules.due(nowIso(now))) {
      try {
        const outcome = await this.fire(schedule, now);
        if (outcome) outcomes.push(outcome);
      } catch (err) {
        // One schedule's trouble (a database hiccup) must not hold up the others; its slot stays due.
        this.log.warn({ err, schedule_id: schedule.id }, 'could not fire a schedule slot');
      }
    }
    return outcomes;
  }

  private async fire(schedule: ScheduleRow, now: Date): Promise<FireOutcome | null> {
    const stored = schedule.next_run_at!;
    let timing: CronTiming;
    try {
      timing = new CronTiming(schedule.cron, schedule.timezone, { seconds: this.secondsField });
    } catch (err) {
      // Stored before a rule changed, or a time zone this runtime no longer knows: park it (next_run_at null) and say why.
      if (!(await this.store.schedules.skipSlot(schedule.id, stored, null)))
        return { schedule_id: schedule.id, outcome: 'claimed_elsewhere', slot: stored };
      await this.audit('schedule_skipped', schedule, { slot: stored, reason: (err as Error).message });
      this.log.error({ schedule_id: schedule.id, err }, 'schedule pattern cannot be read; it will not run until edited');
      return { schedule_id: schedule.id, outcome: 'unreadable', slot: stored };
    }
    const due = dueSlot(timing, new Date(stored), now);
    if (!due) return null;
    const slot = due.slot.toISOString();
    const subnet = await this.target(schedule);
    const run = await this.store.schedules.claimSlot({
      scheduleId: schedule.id,
      slot: stored,
      following: due.following?.toISOString() ?? null,
      firedAt: nowIso(now),
      scan: {
        profile: schedule.profile,
        subnet,
        scan_type: 'network',
        target: null,
        triggered_by: `schedule:${schedule.name}`,
        created_at: nowIso(),
      },
    });
    if (!run) return { schedule_id: schedule.id, outcome: 'claimed_elsewhere', slot };
    // Only the instance that claimed the slot gets here: these entries are written once.
    if (due.missed) {
      await this.audit('schedule_missed', schedule, {
        name: schedule.name,
        first_missed: due.missed.first.toISOString(),
        last_missed: due.missed.last.toISOString(),
        missed_slots: due.missed.count,
        ran_instead: slot,
      });
    }
    if (run.kind === 'already_queued') {
      await this.audit('schedule_skipped', schedule, {
        name: schedule.name,
        slot,
        reason: 'the previous run of this schedule is still queued',
        queued_scan_id: run.queuedScanId,
      });
      this.log.info({ schedule_id: schedule.id, slot }, 'schedule slot skipped: its previous run is still queued');
      return { schedule_id: schedule.id, outcome: 'skipped', queued_scan_id: run.queuedScanId, slot };
    }
    await this.audit('schedule_run', schedule, { name: schedule.name, slot, scan_id: run.scan.id, subnet });
    const status = await this.scans.queued(run.scan);
    this.log.info({ schedule_id: schedule.id, slot, scan_id: run.scan.id, status }, 'schedule slot fired');
    return { schedule_id: schedule.id, outcome: status, scan_id: run.scan.id, slot };
  }

  /**
   * The subnet this run scans: the schedule's, or network.subnet now. A target no longer allowed
   * (the settings changed since the schedule was saved) is recorded as given: the scan manager
   * checks it again at start and records the scan as failed, saying why, where the user looks.
   */
  private async target(schedule: ScheduleRow): Promise<string> {
    try {
      return await this.scans.scheduleTarget(schedule.subnet);
    } catch (err) {
      if (!(err instanceof RefusedError)) throw err;
      return schedule.subnet ?? (await this.store.settings.get()).network.subnet;
    }
  }

  private async audit(
    action: 'schedule_run' | 'schedule_skipped' | 'schedule_missed',
    schedule: ScheduleRow,
    details: Record<string, unknown>,
  ): Promise<void> {
    await this.store.audit
      // success false for a slot that did not run (skipped or missed), so it stands out in the audit log.
      .write({
        action,
        actor: 'system',
        actorType: 'system',
        resourceType: 'schedule',
        resourceId: schedule.id,
        details,
        success: action === 'schedule_run',
      })
      .catch((err) => this.log.warn({ err, schedule_id: schedule.id, action }, 'could not audit a schedule event'));
  }
}
