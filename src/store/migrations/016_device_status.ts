/**
 * New devices, watching, merge with undo (CONTRACT §15, §17, §18; docs/devices.md).
 * - `devices.status`: `new` (first seen by a scan, until acknowledged), `known` or `archived`.
 *   Every device existing before this migration is `known`; the column's default is `new`, so a
 *   device the inventory writer creates is new.
 * - `devices.watch_offline` / `watch_online`: 0 or 1, whether `device_offline` / `device_online`
 *   events are published for the device.
 * - `device_merges`: one row per merge, with a snapshot of every row it moved or removed (JSON),
 *   so that `POST /api/merges/{id}/undo` restores them as they were.
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, ctx: MigrationContext): Promise<void> {
  await db.schema
    .alterTable('devices')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('new'))
    .execute();
  await sql`update devices set status = 'known'`.execute(db);
  await db.schema.createIndex('devices_status').on('devices').column('status').execute();
  await db.schema
    .alterTable('devices')
    .addColumn('watch_offline', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('devices')
    .addColumn('watch_online', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('device_merges')
    .addColumn('id', 'integer', ctx.idColumn)
    .addColumn('device_id', 'integer', (c) => c.notNull())
    .addColumn('merged_ids', 'text', (c) => c.notNull())
    .addColumn('snapshot', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('undone_at', 'text')
    .execute();
}
