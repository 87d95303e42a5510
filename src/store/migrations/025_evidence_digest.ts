/**
 * `devices.evidence_digest` (issue 21): a digest of the device's stored recognition evidence
 * (device_evidence), written with it by IdentityStore.recordRecognition (src/store/identity.ts), so
 * that a rescan compares what it recognised with what is stored without reading the evidence rows
 * (reading them packed cost about 0.45 s of CPU per rescan of 10,000 devices, profiled). Null: not
 * known (every device before this migration): the next recognition writes the evidence again.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('devices').addColumn('evidence_digest', 'text').execute();
}
