/**
 * Schedules as the API and the CLI manage them (CONTRACT §7, §13): validation of every field,
 * next_run_at, the audit entries, and "run now". One implementation for both front ends, so a
 * schedule added with `netwarden schedule add` obeys exactly the rules of POST /api/schedules.
 * The scheduler (scheduler.ts) fires the slots; this module never does.
 */
import { SCHEDULE_NAME_MAX_LENGTH } from '../core/limits.js';
import { SCAN_PROFILES, type ScanProfile } from '../core/model.js';
import { CronTiming, InvalidScheduleError, validateScheduleName } from '../core/schedule.js';
import type { Schedule, ScheduleRunResult } from '../schemas/schedule.js';
import type { ScanManager } from '../scan/manager.js';
import type { AuditEntry } from '../store/audit.js';
import { nowIso } from '../store/clock.js';
import type { Store } from '../store/index.js';
import type { ScheduleRow, ScheduleUpdate } from '../store/schema.js';
import { toSchedule } from '../store/schedules.js';
import { NotFoundError } from '../util/errors.js';

/** Who acts, for the audit log and the scans they start. */
export interface ScheduleActor {
  actor: string | null;
  actorType: AuditEntry['actorType'];
  ipAddress?: string | null;
  userAgent?: string | null;
  /** The triggered_by of a scan this actor starts with "run now": the username, `key:<name>` or `cli`. */
  triggeredBy: string;
}

/** A new schedule: every field as the API accepts it (types already checked by the route schema or the CLI). */
export interface ScheduleInput {
  name: string;
  cron: string;
  timezone?: string;
  profile?: string;
  subnet?: string | null;
  enabled?: boolean;
}

export class ScheduleNotFoundError extends NotFoundError {
  override readonly code = 'NW_SCHEDULE_NOT_FOUND';

  constructor() {
    super('Schedule not found');
  }
}

export interface ScheduleServiceOptions {
  store: Store;
  /** Checks subnets against the scope guard and starts queued scans. */
  scans: ScanManager;
  /** The clock next_run_at is computed from; the scheduler's tests inject theirs. */
  now?: () => Date;
}

export class ScheduleService {
  private readonly store: Store;
  private readonly scans: ScanManager;
  private readonly now: () => Date;

  constructor(options: ScheduleServiceOptions) {
    this.store = options.store;
    this.scans = options.scans;
    this.now = options.now ?? (() => new Date());
  }

  async list(): Promise<Schedule[]> {
    const rows = await this.store.schedules.list();
    const last = await this.store.schedules.lastScans();
    return rows.map((r) => toSchedule(r, last.get(r.id)));
  }

  async get(id: number): Promise<Schedule> {
    return this.record(await this.row(id));
  }

  /** A schedule by id, or by name when `ref` is not a number (the CLI's `remove <id|name>`). */
  async find(ref: string): Promise<ScheduleRow | undefined> {
    if (/^\d{1,10}$/.test(ref)) {
      const byId = await this.store.schedules.get(Number(ref));
      if (byId) return byId;
    }
    return this.store.schedules.getByName(ref.trim());
  }

  /** Validates and stores a new schedule; throws InvalidScheduleError (or the scan layer's target errors) naming the field. */
  async create(input: ScheduleInput, actor: ScheduleActor): Promise<Schedule> {
    const name = validateScheduleName(input.name, SCHEDULE_NAME_MAX_LENGTH);
    const timezone = input.timezone ?? 'UTC';
    const timing = new CronTiming(input.cron, timezone);
    const profile = input.profile === undefined ? (await this.store.settings.get()).scanning.default_profile : validateProfile(input.profile);
    const subnet = await this.subnet(input.subnet ?? null);
    await this.refuseTakenName(name);
    const enabled = input.enabled ?? true;
    const at = nowIso(this.now());
    const row = await this.store.schedules.create({
      name,
      cron: timing.pattern,
      timezone,
      profile,
      subnet,
      enabled: enabled ? 1 : 0,
      next_run_at: enabled ? iso(timing.next(this.now())) : null,
      last_run_at: null,
      created_at: at,
      updated_at: at,
    });
    await this.audit(actor, 'schedule_created', row, { name, cron: row.cron, timezone, profile, subnet, enabled });
    return this.record(row);
  }

  /**
   * Changes the given fields only (PUT is partial). A new cron, time zone or enabled flag
   * recomputes next_run_at from now: slots that passed while a schedule was disabled are not missed.
   */
  async update(id: number, patch: Partial<ScheduleInput>, actor: ScheduleActor): Promise<Schedule> {
    const old = await this.row(id);
    const set: ScheduleUpdate = {};
    if (patch.name !== undefined) {
      const name = validateScheduleName(patch.name, SCHEDULE_NAME_MAX_LENGTH);
      if (name !== old.name) await this.refuseTakenName(name);
      set.name = name;
    }
    const timezone = patch.timezone ?? old.timezone;
    const timing = new CronTiming(patch.cron ?? old.cron, timezone);
    if (patch.cron !== undefined) set.cron = timing.pattern;
    if (patch.timezone !== undefined) set.timezone = timezone;
    if (patch.profile !== undefined) set.profile = validateProfile(patch.profile);
    if (patch.subnet !== undefined) set.subnet = await this.subnet(patch.subnet);
    if (patch.enabled !== undefined) set.enabled = patch.enabled ? 1 : 0;
    const enabled = patch.enabled ?? old.enabled === 1;
    if (patch.cron !== undefined || patch.timezone !== undefined || patch.enabled !== undefined) {
      const retimed = enabled ? iso(timing.next(this.now())) : null;
      // Unchanged timing keeps its slot: re-sending the same cron must not skip or repeat one.
      if (!(enabled && old.enabled === 1 && timing.pattern === old.cron && timezone === old.timezone)) set.next_run_at = retimed;
    }
    set.updated_at = nowIso(this.now());
    const row = await this.store.schedules.update(id, set);
    if (!row) throw new ScheduleNotFoundError();
    const changed = Object.keys(set).filter((k) => k !== 'updated_at' && k !== 'next_run_at') as Array<keyof ScheduleRow>;
    await this.audit(actor, 'schedule_updated', row, {
      name: row.name,
      old: Object.fromEntries(changed.map((k) => [k, shown(k, old[k])])),
      new: Object.fromEntries(changed.map((k) => [k, shown(k, row[k])])),
    });
    return this.record(row);
  }

  /**
   * Deletes a schedule. Its queued run, if any, is cancelled (nobody asked for it any more); a
   * scan of it already running goes on. Its past scans stay in the history.
   */
  async remove(id: number, actor: ScheduleActor): Promise<ScheduleRow> {
    const row = await this.row(id);
    const queued = await this.store.scans.queuedFor(id);
    if (queued) {
      // Already started or ended elsewhere: then there is nothing to withdraw.
      await this.scans.cancel(queued.id).catch(() => undefined);
    }
    if (!(await this.store.schedules.delete(id))) throw new ScheduleNotFoundError();
    await this.audit(actor, 'schedule_deleted', row, {
      name: row.name,
      cron: row.cron,
      timezone: row.timezone,
      cancelled_queued_scan: queued?.id ?? null,
    });
    return row;
  }

  /**
   * Runs a schedule now, whether enabled or not, leaving its slots alone. Never a 409: while
   * another scan runs the run is queued; when this schedule's previous run is still queued, that
   * queued scan is the answer (at most one queued run per schedule).
   */
  async runNow(id: number, actor: ScheduleActor): Promise<ScheduleRunResult> {
    const row = await this.row(id);
    const subnet = await this.scans.scheduleTarget(row.subnet);
    const run = await this.store.schedules.recordRun(
      row.id,
      { profile: row.profile, subnet, scan_type: 'network', target: null, triggered_by: actor.triggeredBy, created_at: nowIso() },
      nowIso(this.now()),
    );
    if (run.kind === 'already_queued') {
      await this.audit(actor, 'schedule_run', row, { name: row.name, manual: true, scan_id: run.queuedScanId, already_queued: true });
      const started = await this.scans.startQueued();
      const scanId = run.queuedScanId ?? started?.id ?? 0;
      const scan = await this.store.scans.get(scanId);
      return { status: scan && scan.status !== 'queued' ? 'started' : 'queued', scan_id: scanId };
    }
    await this.audit(actor, 'schedule_run', row, { name: row.name, manual: true, scan_id: run.scan.id, subnet });
    return { status: await this.scans.queued(run.scan), scan_id: run.scan.id };
  }

  /** The next `count` run times of a pattern (the web UI's preview as the user types). */
  preview(cron: string, timezone: string, count: number): { cron: string; timezone: string; next_runs: string[] } {
    const timing = new CronTiming(cron, timezone);
    return { cron: timing.pattern, timezone, next_runs: timing.nextRuns(count, this.now()).map((d) => d.toISOString()) };
  }

  private async row(id: number): Promise<ScheduleRow> {
    const row = await this.store.schedules.get(id);
    if (!row) throw new ScheduleNotFoundError();
    return row;
  }

  private async record(row: ScheduleRow): Promise<Schedule> {
    const last = await this.store.schedules.lastScans([row.id]);
    return toSchedule(row, last.get(row.id));
  }

  private async refuseTakenName(name: string): Promise<void> {
    if (await this.store.schedules.getByName(name)) {
      throw new InvalidScheduleError(`name: a schedule named '${name}' already exists; choose another name`);
    }
  }

  /** A schedule's own subnet, canonical, inside the allowed scan targets; null stays null (network.subnet at run time). */
  private async subnet(value: string | null): Promise<string | null> {
    if (value === null) return null;
    if (value.trim() === '')
      throw new InvalidScheduleError('subnet: must be an IPv4 CIDR network such as 192.168.1.0/24, or null for network.subnet');
    return this.scans.scheduleTarget(value);
  }

  private async audit(actor: ScheduleActor, action: AuditEntry['action'], row: ScheduleRow, details: Record<string, unknown>): Promise<void> {
    await this.store.audit.write({
      action,
      actor: actor.actor,
      actorType: actor.actorType,
      ipAddress: actor.ipAddress ?? null,
      userAgent: actor.userAgent ?? null,
      resourceType: 'schedule',
      resourceId: row.id,
      details,
      success: true,
    });
  }
}

function validateProfile(value: string): ScanProfile {
  if (!(SCAN_PROFILES as readonly string[]).includes(value)) throw new InvalidScheduleError(`profile: must be one of ${SCAN_PROFILES.join(', ')}`);
  return value as ScanProfile;
}

function iso(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}

/** A column as the API shows it, for the audit entry's old and new values. */
function shown(key: keyof ScheduleRow, value: unknown): unknown {
  return key === 'enabled' ? value === 1 : value;
}
