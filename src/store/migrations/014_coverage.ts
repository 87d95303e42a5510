/**
 * Coverage-aware inventory (CONTRACT §14, docs/scanning.md#coverage): a scan changes only the ports
 * it examined on the hosts it reached, so what the inventory knows about each port, and since when,
 * is recorded.
 * - `ports.last_verified_at` / `verified_by_scan_id`: when, and by which scan, the port was last
 *   examined; `ports.unverified_scans`: port scans of its device since then that did not examine it
 *   (core/coverage.ts STALE_AFTER_SCANS decides when that shows as stale).
 * - `devices.port_coverage`: JSON segments `[{"scan_id","at","ports"}]`, for each scan whose
 *   examination of some of the device's ports still stands, those ports (core/coverage.ts).
 * - `device_snapshots.port_coverage`: the device's coverage when the snapshot was taken: the ports
 *   whose state the snapshot knows, which change detection compares against.
 * - `scans.hosts_examined`: how many hosts' ports the scan examined.
 * Existing rows get what they most likely had: before this, a port scan replaced a device's ports,
 * so a port row was verified by the latest completed port scan that saw its device, and the
 * device's coverage is that scan's port list.
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, _ctx: MigrationContext): Promise<void> {
  await db.schema.alterTable('ports').addColumn('last_verified_at', 'text').execute();
  await db.schema.alterTable('ports').addColumn('verified_by_scan_id', 'integer').execute();
  await db.schema
    .alterTable('ports')
    .addColumn('unverified_scans', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('devices').addColumn('port_coverage', 'text').execute();
  await db.schema.alterTable('device_snapshots').addColumn('port_coverage', 'text').execute();
  await db.schema.alterTable('scans').addColumn('hosts_examined', 'integer').execute();

  // The latest completed port scan (a port list) with a snapshot of the device.
  const latestPortScan = (device: string) => sql`
    from device_snapshots s join scans sc on sc.id = s.scan_id
    where s.device_id = ${sql.ref(device)} and sc.status = 'completed' and sc.port_list is not null
    order by sc.id desc limit 1`;
  await sql`update devices set port_coverage = (
      select '[{"scan_id":' || cast(sc.id as text) || ',"at":"' || coalesce(sc.completed_at, sc.created_at) || '","ports":"' || sc.port_list || '"}]'
      ${latestPortScan('devices.id')})`.execute(db);
  await sql`update ports set last_verified_at = last_seen, verified_by_scan_id = (select sc.id ${latestPortScan('ports.device_id')})`.execute(db);
  await sql`update scans set hosts_examined = devices_found where status = 'completed' and port_list is not null`.execute(db);
}
