/**
 * Reads of the map (issue 22) after a write, at 100,000 devices:
 * - `devices (zone, id)`: one zone's map reads its devices in id order a keyset page at a time
 *   (`zone = ? and id > ? order by id`). Without it SQLite took the zone's rows from
 *   `devices_zone_ip_sort` and sorted the whole zone for every page (seven sorts of 12,500 rows for
 *   the bench's zone), and PostgreSQL walked the primary key through every device, keeping one in
 *   eight. `devices_zone_ip_sort` stays: the port matrix reads a zone in address order.
 * - `devices (ip_sort, id) where device_type in ('router', 'firewall')`: the devices that may be a
 *   gateway (TopologyStore.gatewayCandidates; the types of core/topology.ts GATEWAY_DEVICE_TYPES
 *   when this was written), read again after every write, were a pass over every device; now a
 *   read of this small index, in the order the map wants them.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('devices_zone_id').on('devices').columns(['zone', 'id']).execute();
  await sql`create index devices_gateway_types on devices (ip_sort, id) where device_type in ('router', 'firewall')`.execute(db);
}
