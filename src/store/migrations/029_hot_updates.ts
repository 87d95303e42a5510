/**
 * Room on PostgreSQL's table pages for updated rows (issue 24). An import updates every device it
 * saw several times (ports verified, last seen, online, risk), its identity keys' and evidence's
 * `last_seen`/`observed_at`, and its ports' verification: columns no index covers, so PostgreSQL
 * can write the new row version beside the old one on the same page without touching any index
 * (a HOT update), but only if the page has room. Packed full (the default fillfactor of 100), each
 * such update instead wrote an entry into every index of the table, for devices nine of them
 * including the trigram search index: three such updates of 10,000 devices, batch by batch as an
 * import writes them, cost 2.1-2.7 s of the server's CPU packed full and 0.7-1.0 s at 50
 * (measured on a copy of an imported devices table). Pages freed by earlier imports' row versions
 * are reused once vacuum or page pruning has cleared them, so the tables do not keep growing.
 * Existing pages keep their packing until rewritten; new ones are filled to these limits.
 * SQLite updates rows in place: nothing to do there.
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

/** Percent of each page filled by inserts; the rest is left for updated row versions. */
export const FILLFACTOR: Readonly<Record<string, number>> = {
  devices: 50,
  ports: 70,
  device_identity_keys: 70,
  device_evidence: 70,
};

export async function up(db: Kysely<unknown>, { dialect }: MigrationContext): Promise<void> {
  if (dialect !== 'postgres') return;
  for (const [table, percent] of Object.entries(FILLFACTOR)) {
    await sql`alter table ${sql.table(table)} set (fillfactor = ${sql.lit(percent)})`.execute(db);
  }
}
