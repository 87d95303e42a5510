/**
 * Schedules and the scan queue (CONTRACT §7):
 * - `schedules`: a cron pattern with its time zone, what to scan, and `next_run_at`, the next
 *   slot in UTC. Instances claim a slot by moving `next_run_at` from that slot to the following
 *   one in a conditional UPDATE: of several instances ticking the same slot, exactly one
 *   succeeds, so each slot runs once.
 * - `scans.schedule_id`: the schedule a scan was run for (NULL for other scans, and once the
 *   schedule is deleted), so a schedule's last scan and its status come from the scans table.
 * - a unique partial index on `scans(schedule_id)` for rows still `queued`: at most one queued run
 *   per schedule, decided by the database, whichever instance fires the slot.
 * Queued scans do not hold `active_slot` (002): they take it when they start, in a conditional
 * UPDATE, so the one-scan-at-a-time rule is unchanged.
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, { idColumn }: MigrationContext): Promise<void> {
  await db.schema
    .createTable('schedules')
    .addColumn('id', 'integer', idColumn)
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('cron', 'text', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('profile', 'text', (c) => c.notNull())
    .addColumn('subnet', 'text')
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('next_run_at', 'text')
    .addColumn('last_run_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('schedules_next_run_at').on('schedules').column('next_run_at').execute();

  await db.schema
    .alterTable('scans')
    .addColumn('schedule_id', 'integer', (c) => c.references('schedules.id').onDelete('set null'))
    .execute();
  await db.schema.createIndex('scans_schedule_id').on('scans').columns(['schedule_id', 'id']).execute();
  // Written out: a partial index's predicate must be a literal in both dialects, never a parameter.
  await sql`create unique index scans_one_queued_per_schedule on scans (schedule_id) where status = 'queued'`.execute(db);
}
