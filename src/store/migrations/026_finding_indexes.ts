/**
 * One index fewer on `risk_findings` (issue 24): `risk_findings_device` (device_id, migration 001)
 * is a prefix of `risk_findings_finding_key` (device_id, finding_key, migration 017), which serves
 * every lookup by device as well (the deletes and reads by device id list, the cascade when a
 * device is deleted). A first import of 10,000 hosts writes 280,000 findings: each kept an entry
 * in both.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('risk_findings_device').execute();
}
