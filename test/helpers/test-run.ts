/**
 * A test run's name and what carries it: test/global-setup.ts names the run (NETWARDEN_TEST_RUN,
 * inherited by the test processes) and removes at its end what test/helpers/databases.ts made
 * under that name (the PostgreSQL schemas of its pool, the migrated SQLite file).
 */
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** The run's name (test/global-setup.ts): part of every schema and file it makes. */
export const TEST_RUN = process.env.NETWARDEN_TEST_RUN ?? `p${process.pid.toString(36)}`;

/** The prefix of the PostgreSQL schemas a run leases (`<prefix><n>`), and the table that lists them. */
export const testSchemaPrefix = (run: string): string => `nw_test_${run}_`;
export const TEST_SCHEMA_POOL = 'public.netwarden_test_schemas';

/** The folder where a run keeps its migrated SQLite file. */
export const testTemplateDir = (run: string): string => join(tmpdir(), `netwarden-test-template-${run}`);

/**
 * Removes what a run made (test/global-setup.ts, at its end): its PostgreSQL schemas (with their
 * job queue schemas) and its SQLite template.
 */
export async function removeTestRun(run: string, pgUrl: string | undefined): Promise<void> {
  rmSync(testTemplateDir(run), { recursive: true, force: true });
  if (!pgUrl) return;
  const client = new pg.Client({ connectionString: pgUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>(`select nspname from pg_namespace where starts_with(nspname, $1)`, [
      testSchemaPrefix(run),
    ]);
    for (const { nspname } of rows) await client.query(`drop schema if exists ${nspname} cascade`);
    await client.query(`delete from ${TEST_SCHEMA_POOL} where run = $1`, [run]).catch(() => {});
  } finally {
    await client.end();
  }
}
