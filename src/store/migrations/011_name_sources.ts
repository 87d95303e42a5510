/**
 * Where a device's hostname and MAC came from (`devices.hostname_source`, `devices.mac_source`):
 * `scan`, or the name source that filled it (`pihole`, `adguard`, `unifi`, `dhcp_leases`;
 * src/names/); null while the device has none. Devices recorded before this migration got their
 * hostname and MAC from scans, so those are marked `scan`.
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, _ctx: MigrationContext): Promise<void> {
  await db.schema.alterTable('devices').addColumn('hostname_source', 'text').execute();
  await db.schema.alterTable('devices').addColumn('mac_source', 'text').execute();
  await sql`update devices set hostname_source = 'scan' where hostname is not null`.execute(db);
  await sql`update devices set mac_source = 'scan' where mac_address is not null`.execute(db);
}
