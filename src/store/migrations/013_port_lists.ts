/**
 * `scans.port_list`: the ports a scan examined (ranges such as `1-1000,1025,8080`; NULL for
 * discovery-only scans), so that change detection compares a port only when both scans examined
 * it (scanning.top_ports makes the list vary; docs/scanning.md#changes). Completed scans from
 * before get the list they most likely examined: every port for intensive scans, the configured
 * scanning.port_range for normal ones (top_ports did not exist then), so the first scan after the
 * upgrade does not report the ports top_ports adds as opened.
 * `ports.service_guessed`: 1 when the service name is only what the port number usually runs
 * (nmap's `method="table"`), nothing having answered as that service.
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

/** scanning.port_range's default before this migration. */
const FORMER_DEFAULT_RANGE = '1-1000';

export async function up(db: Kysely<unknown>, _ctx: MigrationContext): Promise<void> {
  await db.schema.alterTable('scans').addColumn('port_list', 'text').execute();
  await db.schema
    .alterTable('ports')
    .addColumn('service_guessed', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  const stored = await sql<{ value: string }>`select value from settings where key = 'config'`.execute(db);
  const range = portRangeOf(stored.rows[0]?.value);
  await sql`update scans set port_list = ${range} where status = 'completed' and profile = 'normal'`.execute(db);
  await sql`update scans set port_list = '1-65535' where status = 'completed' and profile = 'intensive'`.execute(db);
}

/** scanning.port_range of the stored configuration, when it reads as a port list; else the former default. */
function portRangeOf(value: string | undefined): string {
  try {
    const range = (JSON.parse(value ?? '{}') as { scanning?: { port_range?: unknown } }).scanning?.port_range;
    return typeof range === 'string' && /^\s*\d[\d\s,-]*$/.test(range) ? range.replace(/\s+/g, '') : FORMER_DEFAULT_RANGE;
  } catch {
    return FORMER_DEFAULT_RANGE;
  }
}
