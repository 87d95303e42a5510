/**
 * Switches and access points with their clients (CONTRACT §16, issue 22 §2; core/device-links.ts):
 * `device_links`, one row per device and source (`unifi`, `snmp`, `lldp`) naming the device it
 * hangs off (`parent_device_id`: a switch or access point, `parent_kind`), how (`via` `l2` or
 * `wifi`), on which port when known, and the scan that last saw it. Each source's rows are
 * replaced when that source is read again (store/device-links.ts); deleting a device deletes the
 * rows on either side; a merge moves them (store/device-merge.ts).
 */
import type { Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, { idColumn }: MigrationContext): Promise<void> {
  await db.schema
    .createTable('device_links')
    .addColumn('id', 'integer', idColumn)
    .addColumn('device_id', 'integer', (c) => c.notNull().references('devices.id').onDelete('cascade'))
    .addColumn('parent_device_id', 'integer', (c) => c.notNull().references('devices.id').onDelete('cascade'))
    .addColumn('parent_kind', 'text', (c) => c.notNull())
    .addColumn('via', 'text', (c) => c.notNull())
    .addColumn('port', 'text')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('scan_id', 'integer', (c) => c.references('scans.id').onDelete('set null'))
    .addColumn('seen_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('device_links_device_source', ['device_id', 'source'])
    .execute();
  await db.schema.createIndex('device_links_parent').on('device_links').columns(['parent_device_id', 'source']).execute();
}
