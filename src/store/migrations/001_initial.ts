import type { Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, { idColumn }: MigrationContext): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'integer', idColumn)
    .addColumn('username', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('password_changed_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addColumn('ip_address', 'text')
    .addColumn('user_agent', 'text')
    .execute();
  await db.schema.createIndex('sessions_user_id').on('sessions').column('user_id').execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'integer', idColumn)
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('created_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('api_keys_prefix').on('api_keys').column('prefix').execute();

  await db.schema
    .createTable('audit_logs')
    .addColumn('id', 'integer', idColumn)
    .addColumn('timestamp', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('actor', 'text')
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('resource_type', 'text')
    .addColumn('resource_id', 'text')
    .addColumn('details', 'text')
    .addColumn('ip_address', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('success', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_logs_action').on('audit_logs').columns(['action', 'id']).execute();

  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('scans')
    .addColumn('id', 'integer', idColumn)
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('profile', 'text', (c) => c.notNull())
    .addColumn('subnet', 'text', (c) => c.notNull())
    .addColumn('scan_type', 'text', (c) => c.notNull())
    .addColumn('target', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('completed_at', 'text')
    .addColumn('duration_seconds', 'real')
    .addColumn('devices_found', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('triggered_by', 'text')
    .addColumn('progress', 'text')
    .execute();
  await db.schema.createIndex('scans_status').on('scans').column('status').execute();
  await db.schema.createIndex('scans_subnet_completed').on('scans').columns(['subnet', 'completed_at']).execute();

  await db.schema
    .createTable('devices')
    .addColumn('id', 'integer', idColumn)
    .addColumn('identity', 'text', (c) => c.notNull().unique())
    .addColumn('ip_address', 'text', (c) => c.notNull())
    .addColumn('ip_sort', 'bigint', (c) => c.notNull())
    .addColumn('mac_address', 'text')
    .addColumn('mac_randomized', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('hostname', 'text')
    .addColumn('vendor', 'text')
    .addColumn('device_type', 'text')
    .addColumn('os_name', 'text')
    .addColumn('label', 'text')
    .addColumn('zone', 'text')
    .addColumn('is_trusted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('notes', 'text')
    .addColumn('risk_level', 'text', (c) => c.notNull().defaultTo('none'))
    .addColumn('risk_score', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('risk_summary', 'text')
    .addColumn('first_seen', 'text', (c) => c.notNull())
    .addColumn('last_seen', 'text', (c) => c.notNull())
    .addColumn('last_scan_id', 'integer', (c) => c.references('scans.id').onDelete('set null'))
    .addColumn('online', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('devices_ip_sort').on('devices').columns(['ip_sort', 'id']).execute();
  await db.schema.createIndex('devices_ip_address').on('devices').column('ip_address').execute();
  await db.schema.createIndex('devices_risk_level').on('devices').column('risk_level').execute();
  await db.schema.createIndex('devices_zone').on('devices').column('zone').execute();

  await db.schema
    .createTable('device_snapshots')
    .addColumn('id', 'integer', idColumn)
    .addColumn('scan_id', 'integer', (c) => c.notNull().references('scans.id').onDelete('cascade'))
    .addColumn('device_id', 'integer', (c) => c.notNull().references('devices.id').onDelete('cascade'))
    .addColumn('ip_address', 'text', (c) => c.notNull())
    .addColumn('ip_sort', 'bigint', (c) => c.notNull())
    .addColumn('mac_address', 'text')
    .addColumn('hostname', 'text')
    .addColumn('vendor', 'text')
    .addColumn('os_name', 'text')
    .addColumn('ports', 'text', (c) => c.notNull())
    .addColumn('open_port_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('risk_level', 'text', (c) => c.notNull())
    .addColumn('risk_score', 'integer', (c) => c.notNull())
    .addUniqueConstraint('device_snapshots_scan_device', ['scan_id', 'device_id'])
    .execute();
  await db.schema.createIndex('device_snapshots_device').on('device_snapshots').column('device_id').execute();

  await db.schema
    .createTable('ports')
    .addColumn('id', 'integer', idColumn)
    .addColumn('device_id', 'integer', (c) => c.notNull().references('devices.id').onDelete('cascade'))
    .addColumn('port', 'integer', (c) => c.notNull())
    .addColumn('protocol', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('service', 'text')
    .addColumn('product', 'text')
    .addColumn('version', 'text')
    .addColumn('extra_info', 'text')
    .addColumn('cpe', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('first_seen', 'text', (c) => c.notNull())
    .addColumn('last_seen', 'text', (c) => c.notNull())
    .addUniqueConstraint('ports_device_port', ['device_id', 'port', 'protocol'])
    .execute();

  await db.schema
    .createTable('risk_findings')
    .addColumn('id', 'integer', idColumn)
    .addColumn('device_id', 'integer', (c) => c.notNull().references('devices.id').onDelete('cascade'))
    .addColumn('scan_id', 'integer', (c) => c.references('scans.id').onDelete('set null'))
    .addColumn('port', 'integer')
    .addColumn('protocol', 'text')
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('score', 'integer', (c) => c.notNull())
    .addColumn('service', 'text')
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('recommendation', 'text', (c) => c.notNull())
    .addColumn('cve_ids', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  await db.schema.createIndex('risk_findings_device').on('risk_findings').column('device_id').execute();

  await db.schema
    .createTable('cve_matches')
    .addColumn('id', 'integer', idColumn)
    .addColumn('device_id', 'integer', (c) => c.notNull().references('devices.id').onDelete('cascade'))
    .addColumn('scan_id', 'integer', (c) => c.references('scans.id').onDelete('set null'))
    .addColumn('cve_id', 'text', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('cvss_score', 'real')
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('remediation', 'text')
    .addColumn('references', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('confidence', 'text', (c) => c.notNull())
    .addColumn('port', 'integer')
    .addColumn('matched_product', 'text')
    .addColumn('matched_version', 'text')
    .execute();
  await db.schema.createIndex('cve_matches_device').on('cve_matches').column('device_id').execute();

  await db.schema
    .createTable('ip_history')
    .addColumn('id', 'integer', idColumn)
    .addColumn('device_id', 'integer', (c) => c.notNull().references('devices.id').onDelete('cascade'))
    .addColumn('ip_address', 'text', (c) => c.notNull())
    .addColumn('first_seen', 'text', (c) => c.notNull())
    .addColumn('last_seen', 'text', (c) => c.notNull())
    .addUniqueConstraint('ip_history_device_ip', ['device_id', 'ip_address'])
    .execute();

  await db.schema
    .createTable('changes')
    .addColumn('id', 'integer', idColumn)
    .addColumn('scan_id', 'integer', (c) => c.notNull().references('scans.id').onDelete('cascade'))
    .addColumn('change_type', 'text', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('device_id', 'integer', (c) => c.references('devices.id').onDelete('set null'))
    .addColumn('device_ip', 'text')
    .addColumn('device_mac', 'text')
    .addColumn('port', 'integer')
    .addColumn('protocol', 'text')
    .addColumn('old_value', 'text')
    .addColumn('new_value', 'text')
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('detected_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('changes_scan').on('changes').column('scan_id').execute();
  await db.schema.createIndex('changes_device').on('changes').column('device_id').execute();
}
