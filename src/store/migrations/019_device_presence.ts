/**
 * Per-device presence (CONTRACT §17 "can sleep"; docs/devices.md): `devices.offline_after_scans`,
 * null to follow `presence.offline_after_scans`, else how many consecutive completed network scans
 * must miss this device before it counts as offline (a phone that sleeps: 3 or more).
 */
import type { Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, _ctx: MigrationContext): Promise<void> {
  await db.schema.alterTable('devices').addColumn('offline_after_scans', 'integer').execute();
}
