/**
 * Reads of the views (issue 22, CONTRACT §16) at 100,000 devices:
 * - `devices (zone, ip_sort, id, status)` in place of `devices (zone)`: the port matrix (and any
 *   list) of one zone reads that zone's devices in address order a keyset page at a time straight
 *   from the index (`zone = ? and (ip_sort, id) > (?, ?) order by ip_sort, id`), leaving archived
 *   ones out there too, instead of walking every device's address to pick out the zone's (SQLite)
 *   or scanning the table for every page (PostgreSQL). Anything that filtered on the zone alone
 *   uses the new index's first column.
 * - `ports (device_id, port, protocol, service) where state = 'open'`: the open ports of a page of
 *   devices, and their counts per port and service, are read from this index alone.
 *
 * Comparing two scans needs no new index: both scans' snapshots are read and joined on the
 * unique `(scan_id, device_id)` index of `device_snapshots`.
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, _ctx: MigrationContext): Promise<void> {
  await db.schema.createIndex('devices_zone_ip_sort').on('devices').columns(['zone', 'ip_sort', 'id', 'status']).execute();
  await db.schema.dropIndex('devices_zone').execute();
  await sql`create index ports_open_device on ports (device_id, port, protocol, service) where state = 'open'`.execute(db);
}
