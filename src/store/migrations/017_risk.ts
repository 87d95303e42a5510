/**
 * Accepted risk, zone policies and exploit intelligence (CONTRACT §17, §18):
 * - `risk_findings.finding_key` (stable: `rule:<id>:<port>`, `cve:<CVE>:<port>`, `policy:<zone>:<port>`),
 *   `kind` and, for CVE findings, `cvss_score`. Existing rows get them when their device is
 *   assessed again (the evaluation revision changed, so every device is, in the background).
 * - `risk_acceptances`: a finding of a device accepted by someone, why and until when; ended
 *   ones are kept (`ended_at`, `end_reason` removed or expired) as the memory of the decision.
 * - `zone_policies`: one row per zone, the policy as JSON.
 * - `intel_kev`, `intel_epss`: CISA KEV and FIRST EPSS by CVE id; `intel_sources`: when each was imported and its date.
 */
import type { Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, ctx: MigrationContext): Promise<void> {
  await db.schema.alterTable('risk_findings').addColumn('finding_key', 'text').execute();
  await db.schema.alterTable('risk_findings').addColumn('kind', 'text').execute();
  await db.schema.alterTable('risk_findings').addColumn('cvss_score', 'real').execute();
  await db.schema.createIndex('risk_findings_finding_key').on('risk_findings').columns(['device_id', 'finding_key']).execute();

  await db.schema
    .createTable('risk_acceptances')
    .addColumn('id', 'integer', ctx.idColumn)
    .addColumn('device_id', 'integer', (c) => c.notNull().references('devices.id').onDelete('cascade'))
    .addColumn('finding_key', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('ended_at', 'text')
    .addColumn('end_reason', 'text')
    .execute();
  await db.schema.createIndex('risk_acceptances_device').on('risk_acceptances').columns(['device_id', 'finding_key']).execute();

  await db.schema
    .createTable('zone_policies')
    .addColumn('zone', 'text', (c) => c.primaryKey())
    .addColumn('policy', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('intel_kev')
    .addColumn('cve_id', 'text', (c) => c.primaryKey())
    .addColumn('date_added', 'text')
    .addColumn('due_date', 'text')
    .addColumn('ransomware', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('intel_epss')
    .addColumn('cve_id', 'text', (c) => c.primaryKey())
    .addColumn('score', 'real', (c) => c.notNull())
    .addColumn('percentile', 'real', (c) => c.notNull())
    .addColumn('as_of', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('intel_sources')
    .addColumn('source', 'text', (c) => c.primaryKey())
    .addColumn('imported_at', 'text', (c) => c.notNull())
    .addColumn('as_of', 'text')
    .addColumn('entries', 'integer', (c) => c.notNull())
    .addColumn('detail', 'text')
    .execute();
}
