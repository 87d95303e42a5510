import type { Kysely } from 'kysely';
import { InvalidScheduleError } from '../core/schedule.js';
import type { ScanProfile, ScanStatus } from '../core/model.js';
import type { Schedule } from '../schemas/schedule.js';
import type { Database, NewSchedule, ScanRow, ScheduleRow, ScheduleUpdate } from './schema.js';
import { insertQueued, isUniqueViolation, type QueuedScan } from './scans.js';

/** The latest scan of a schedule: what `last_scan_id` and `last_status` show. */
export interface LastScan {
  id: number;
  status: string;
}

export function toSchedule(row: ScheduleRow, last: LastScan | undefined): Schedule {
  return {
    id: row.id,
    name: row.name,
    cron: row.cron,
    timezone: row.timezone,
    profile: row.profile as ScanProfile,
    subnet: row.subnet,
    enabled: row.enabled === 1,
    next_run_at: row.next_run_at,
    last_run_at: row.last_run_at,
    last_scan_id: last?.id ?? null,
    last_status: (last?.status as ScanStatus | undefined) ?? null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** What recording a run of a schedule did. */
export type RecordedRun =
  /** A queued scan was recorded for it. */
  | { kind: 'queued'; scan: ScanRow }
  /** Its previous run is still queued: nothing was recorded (CONTRACT §7: at most one queued run per schedule). */
  | { kind: 'already_queued'; queuedScanId: number | null };

const duplicateName = (name: string) => new InvalidScheduleError(`name: a schedule named '${name}' already exists; choose another name`);

export class ScheduleStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly onWrite: () => void,
  ) {}

  list(): Promise<ScheduleRow[]> {
    return this.db.selectFrom('schedules').selectAll().orderBy('id').execute();
  }

  get(id: number): Promise<ScheduleRow | undefined> {
    return this.db.selectFrom('schedules').selectAll().where('id', '=', id).executeTakeFirst();
  }

  getByName(name: string): Promise<ScheduleRow | undefined> {
    return this.db.selectFrom('schedules').selectAll().where('name', '=', name).executeTakeFirst();
  }

  /** Throws InvalidScheduleError naming `name` when the name is taken (also when a concurrent create took it first). */
  async create(values: NewSchedule): Promise<ScheduleRow> {
    try {
      return await this.db.insertInto('schedules').values(values).returningAll().executeTakeFirstOrThrow();
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName(values.name);
      throw err;
    }
  }

  /** The updated row, or undefined when there is no such schedule. */
  async update(id: number, patch: ScheduleUpdate): Promise<ScheduleRow | undefined> {
    try {
      return await this.db.updateTable('schedules').set(patch).where('id', '=', id).returningAll().executeTakeFirst();
    } catch (err) {
      if (isUniqueViolation(err) && patch.name !== undefined) throw duplicateName(String(patch.name));
      throw err;
    }
  }

  /** True when a schedule was deleted. Its scans stay, with schedule_id cleared (foreign key ON DELETE SET NULL). */
  async delete(id: number): Promise<boolean> {
    const result = await this.db.deleteFrom('schedules').where('id', '=', id).executeTakeFirst();
    if (Number(result.numDeletedRows) > 0) this.onWrite();
    return Number(result.numDeletedRows) > 0;
  }

  /** Enabled schedules whose next slot is at or before `now`. */
  due(now: string): Promise<ScheduleRow[]> {
    return this.db
      .selectFrom('schedules')
      .selectAll()
      .where('enabled', '=', 1)
      .where('next_run_at', 'is not', null)
      .where('next_run_at', '<=', now)
      .orderBy('next_run_at')
      .orderBy('id')
      .execute();
  }

  /** The latest scan of each of these schedules (all schedules when omitted). */
  async lastScans(ids?: number[]): Promise<Map<number, LastScan>> {
    if (ids && ids.length === 0) return new Map();
    let latest = this.db
      .selectFrom('scans')
      .select((eb) => eb.fn.max('id').as('id'))
      .where('schedule_id', 'is not', null)
      .groupBy('schedule_id');
    if (ids) latest = latest.where('schedule_id', 'in', ids);
    const rows = await this.db.selectFrom('scans').select(['id', 'status', 'schedule_id']).where('id', 'in', latest).execute();
    return new Map(rows.map((r) => [r.schedule_id as number, { id: r.id, status: r.status }]));
  }

  /**
   * Claims the slot `slot` of a schedule and records its run, in one transaction: moves
   * next_run_at from `slot` to `following` (only if it still reads `slot`, the schedule is
   * enabled and exists), then records the queued scan. Of several instances claiming the same
   * slot at once, exactly one gets a result; the others get null and record nothing.
   */
  async claimSlot(claim: {
    scheduleId: number;
    slot: string;
    following: string | null;
    firedAt: string;
    scan: QueuedScan;
  }): Promise<RecordedRun | null> {
    const result = await this.db.transaction().execute(async (trx) => {
      const claimed = await trx
        .updateTable('schedules')
        .set({ next_run_at: claim.following })
        .where('id', '=', claim.scheduleId)
        .where('enabled', '=', 1)
        .where('next_run_at', '=', claim.slot)
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) !== 1) return null;
      return recordRun(trx, claim.scheduleId, claim.scan, claim.firedAt);
    });
    this.onWrite();
    return result;
  }

  /** Records a run asked for now ("run now"): a queued scan, unless the schedule already has one. */
  async recordRun(scheduleId: number, scan: QueuedScan, at: string): Promise<RecordedRun> {
    const result = await this.db.transaction().execute((trx) => recordRun(trx, scheduleId, scan, at));
    this.onWrite();
    return result;
  }

  /** Moves a schedule past a slot it cannot run (its pattern no longer reads), if it still reads `slot`. */
  async skipSlot(scheduleId: number, slot: string, following: string | null): Promise<boolean> {
    const result = await this.db
      .updateTable('schedules')
      .set({ next_run_at: following })
      .where('id', '=', scheduleId)
      .where('next_run_at', '=', slot)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}

async function recordRun(trx: Kysely<Database>, scheduleId: number, scan: QueuedScan, at: string): Promise<RecordedRun> {
  const row = await insertQueued(trx, { ...scan, schedule_id: scheduleId });
  if (!row) {
    const queued = await trx.selectFrom('scans').select('id').where('schedule_id', '=', scheduleId).where('status', '=', 'queued').executeTakeFirst();
    return { kind: 'already_queued', queuedScanId: queued?.id ?? null };
  }
  await trx.updateTable('schedules').set({ last_run_at: at }).where('id', '=', scheduleId).execute();
  return { kind: 'queued', scan: row };
}
