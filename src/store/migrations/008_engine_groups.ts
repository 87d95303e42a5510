/**
 * `scans.engine_pgids`: every process group the scan's engine runs at once (a JSON array of
 * integers), not only the newest (`engine_pgid`). A scan overlaps discovery with port runs
 * (src/engines/pipeline.ts), so after a crash more than one nmap may be left behind to end.
 */
import type { Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, _ctx: MigrationContext): Promise<void> {
  await db.schema.alterTable('scans').addColumn('engine_pgids', 'text').execute();
}
