/**
 * Incremental evaluation (docs/scanning.md#evaluation):
 * - `devices.ports_hash` is a hash of the device's stored ports (store/port-rows.ts portsHash): a
 *   scan whose ports hash the same only refreshes their sighting, without reading them. Snapshots
 *   record it too (`device_snapshots.ports_hash`): a device whose ports hash as in the baseline
 *   snapshot has the snapshot's ports, and change detection need not read them either.
 * - `devices.assessed_input` is a hash of what a device's risk and CVEs were last computed from
 *   (its OS and ports) and `devices.assessed_with` the fingerprint of the rules and CVE dataset
 *   used; a scan re-assesses only devices whose hash or fingerprint differs. Both start null, so
 *   every device is assessed once more after this migration (in the background, see below).
 * - `cve_matches` keeps references to the dataset, not copies of it: the description and the
 *   references are read from the in-memory dataset when a device is shown. `remediation` stays,
 *   but holds only what differs from the dataset's record (a distribution's backport note): null
 *   means "the dataset's". Rows migrated from before keep their full remediation, which is still
 *   right, until the background re-evaluation rewrites them.
 * - `evaluation_state` (one row, id 1, written on the first re-evaluation) records the fingerprint every device was last evaluated with and
 *   the progress of the background re-evaluation that follows a rule or dataset change.
 */
import type { Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, _ctx: MigrationContext): Promise<void> {
  for (const column of ['ports_hash', 'assessed_input', 'assessed_with']) {
    await db.schema.alterTable('devices').addColumn(column, 'text').execute();
  }
  await db.schema.alterTable('device_snapshots').addColumn('ports_hash', 'text').execute();
  // One column per statement: SQLite's ALTER TABLE drops one at a time.
  for (const column of ['description', 'references']) {
    await db.schema.alterTable('cve_matches').dropColumn(column).execute();
  }
  await db.schema
    .createTable('evaluation_state')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    /** The rules and dataset every device was last evaluated with; null before the first full pass. */
    .addColumn('fingerprint', 'text')
    /** What a re-evaluation under way evaluates with; null when none runs. */
    .addColumn('target', 'text')
    .addColumn('devices_total', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('devices_done', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .execute();
}
