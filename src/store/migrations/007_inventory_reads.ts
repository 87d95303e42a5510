/**
 * Indexes for reading the device inventory at 100,000 devices (GET /api/devices):
 * - `ports (device_id, state, port)`: the open ports of a page of devices are read from the index
 *   alone, without visiting the port rows;
 * - `ports (port, state, device_id)`: a numeric search (`q=22`) finds the devices with that port
 *   open without scanning every port;
 * - `devices (risk_score desc, ip_sort, id)`: the list sorted by risk, riskiest first (the web
 *   UI's Risk column and the dashboard), reads the first page from the index instead of sorting
 *   every device.
 *
 * And `data_version`, one row (created by the first write) counting writes to the inventory by any process on this database:
 * an instance re-reads it at most once a second, and keeps its cached counts (GET /api/stats, the
 * device list's total) until it changes, instead of recounting every few seconds just in case.
 */
import type { Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, _ctx: MigrationContext): Promise<void> {
  await db.schema
    .createTable('data_version')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ports_device_state_port').on('ports').columns(['device_id', 'state', 'port']).execute();
  await db.schema.createIndex('devices_risk_first').on('devices').columns(['risk_score desc', 'ip_sort', 'id']).execute();
  await db.schema.createIndex('ports_port_state_device').on('ports').columns(['port', 'state', 'device_id']).execute();
}
