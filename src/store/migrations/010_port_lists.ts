/**
 * `scans.port_list`: the ports a scan examined (canonical ranges such as `1-1000,1025,8080`; NULL
 * for discovery-only scans and scans before this migration), so that change detection compares
 * a port only when both scans examined it (scanning.top_ports makes the list vary).
 * `ports.service_guessed`: 1 when the service name is only what the port number usually runs
 * (nmap's `method="table"`), nothing having answered as that service.
 */
import type { Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, _ctx: MigrationContext): Promise<void> {
  await db.schema.alterTable('scans').addColumn('port_list', 'text').execute();
  await db.schema
    .alterTable('ports')
    .addColumn('service_guessed', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
