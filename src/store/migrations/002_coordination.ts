/**
 * What several instances sharing one database need to agree on:
 * - login failure counters, so one throttle holds across instances and concurrent requests;
 * - named leases, for work that must happen once across instances (retention, later schedules);
 * - scan ownership: which process runs a scan, until when its lease holds, and the process group
 *   of its engine, so a restart can tell an orphaned scan from one another instance still runs,
 *   and a cancel asked of one instance reaches the instance that runs the scan;
 * - `active_slot`, set while a scan is queued or running and unique, so that of two scan starts
 *   racing each other (in one process or in two) the database lets exactly one through.
 */
import type { Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, _ctx: MigrationContext): Promise<void> {
  await db.schema
    .createTable('login_failures')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('window_start', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('leases')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();

  for (const [column, type] of [
    ['active_slot', 'integer'],
    ['owner_id', 'text'],
    ['owner_host', 'text'],
    ['owner_pid', 'integer'],
    ['lease_expires_at', 'text'],
    ['engine_pgid', 'integer'],
    ['cancel_requested_at', 'text'],
  ] as const) {
    await db.schema.alterTable('scans').addColumn(column, type).execute();
  }
  // NULLs never collide in a unique index (both dialects): finished scans keep active_slot NULL.
  await db.schema.createIndex('scans_active_slot').on('scans').column('active_slot').unique().execute();
  await db.schema.createIndex('audit_logs_timestamp').on('audit_logs').column('timestamp').execute();
  await db.schema.createIndex('scans_completed_at').on('scans').column('completed_at').execute();
}
