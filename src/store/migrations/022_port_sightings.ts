/**
 * Port sightings per device (issue 24): a scan that finds a device's ports as they are stored no
 * longer rewrites every port row to say so.
 * - `devices.ports_verified_at` / `ports_verified_by`: when the device's ports were last recorded
 *   from a port scan, and by which scan (null: not since this migration).
 * - `ports.verified_with_device`: 1 when the port was verified by that same recording, so its
 *   `last_verified_at` and `verified_by_scan_id` are the device's two columns (the row's own are
 *   not kept up to date); 0 when the row's own columns say it (a port the last recording did not
 *   examine, and every row from before this migration, which keep their values).
 * `ports.last_seen` is no longer refreshed by a scan that changes nothing about the port: nothing
 * reads it (the port's verification is what says when a scan last saw it).
 */
import type { Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, _ctx: MigrationContext): Promise<void> {
  await db.schema.alterTable('devices').addColumn('ports_verified_at', 'text').execute();
  await db.schema.alterTable('devices').addColumn('ports_verified_by', 'integer').execute();
  await db.schema
    .alterTable('ports')
    .addColumn('verified_with_device', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
