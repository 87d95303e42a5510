/**
 * Drops `ports (device_id, state, port)` (migration 007): every read that used it is served as well
 * by the unique `(device_id, port, protocol)` index (a device's ports) or by the partial
 * `(device_id, port, protocol, service) where state = 'open'` index (migration 020: a device's open
 * ports, whether it has any), as SQLite's query plans show. It was one more index to keep on every
 * port row written: the 10,000-host import writes 80,000.
 */
import type { Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, _ctx: MigrationContext): Promise<void> {
  await db.schema.dropIndex('ports_device_state_port').execute();
}
