/**
 * Presence (CONTRACT §8): `devices.missed_scans` counts the consecutive completed network scans of
 * a device's address that did not see it; the device goes offline when it reaches
 * presence.offline_after_scans. Devices already offline have missed at least one scan.
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, _ctx: MigrationContext): Promise<void> {
  await db.schema
    .alterTable('devices')
    .addColumn('missed_scans', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update devices set missed_scans = 1 where online = 0`.execute(db);
}
