/**
 * What each device is and what names it (CONTRACT §15, issue 21, src/store/identity.ts):
 * - `devices.model`, `devices.os_version`, `devices.type_confidence` (0–100): recognition's answer
 *   (core/recognition.ts) beside the existing `device_type`, `vendor` and `os_name`;
 * - `devices.discovered_name`: the best name the probes found (mDNS, NetBIOS, SNMP sysName, UPnP
 *   friendlyName), shown as `name` when the device has no label;
 * - `devices.user_fields`: JSON object of the fields a person set (`name`, `device_type`) and when: a scan
 *   never writes those;
 * - `device_identity_keys`: the keys a device was seen with (core/identity-keys.ts); a strong key
 *   belongs to one device only (partial unique index);
 * - `device_evidence`: what the latest recognition of the device read, one row per hit;
 * - `identity_decisions`: why a scan decided what it did about a device, with the rule.
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, { idColumn }: MigrationContext): Promise<void> {
  await db.schema.alterTable('devices').addColumn('model', 'text').execute();
  await db.schema.alterTable('devices').addColumn('os_version', 'text').execute();
  await db.schema
    .alterTable('devices')
    .addColumn('type_confidence', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('devices').addColumn('discovered_name', 'text').execute();
  await db.schema
    .alterTable('devices')
    .addColumn('user_fields', 'text', (c) => c.notNull().defaultTo('{}'))
    .execute();

  await db.schema
    .createTable('device_identity_keys')
    .addColumn('id', 'integer', idColumn)
    .addColumn('device_id', 'integer', (c) => c.notNull().references('devices.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('strength', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('first_seen', 'text', (c) => c.notNull())
    .addColumn('last_seen', 'text', (c) => c.notNull())
    .addUniqueConstraint('device_identity_keys_device_kind_value', ['device_id', 'kind', 'value'])
    .execute();
  // A strong key names one device: no two devices may hold it.
  await sql`create unique index device_identity_keys_strong on device_identity_keys (kind, value) where strength = 'strong'`.execute(db);
  await db.schema.createIndex('device_identity_keys_value').on('device_identity_keys').columns(['kind', 'value']).execute();

  await db.schema
    .createTable('device_evidence')
    .addColumn('id', 'integer', idColumn)
    .addColumn('device_id', 'integer', (c) => c.notNull().references('devices.id').onDelete('cascade'))
    .addColumn('field', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .addColumn('confidence', 'integer', (c) => c.notNull())
    .addColumn('observed_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('device_evidence_device').on('device_evidence').column('device_id').execute();

  await db.schema
    .createTable('identity_decisions')
    .addColumn('id', 'integer', idColumn)
    .addColumn('device_id', 'integer', (c) => c.notNull().references('devices.id').onDelete('cascade'))
    .addColumn('scan_id', 'integer', (c) => c.references('scans.id').onDelete('set null'))
    .addColumn('rule', 'text', (c) => c.notNull())
    .addColumn('explanation', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('identity_decisions_device').on('identity_decisions').columns(['device_id', 'id']).execute();
}
