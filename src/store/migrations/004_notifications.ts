/**
 * Notifications (CONTRACT §9, §13):
 * - `notification_channels`: where messages go, with the type's config (secrets included, masked
 *   only by the API), filters, an optional digest cron and quiet hours as JSON text.
 *   `digest_last_slot` is the last digest slot taken: an instance claims a slot by moving it
 *   forward with a conditional update, so each slot is sent once across instances.
 * - `notification_deliveries`: one row per message to one channel, the delivery log. The composed
 *   message is kept in `payload` so a pending delivery survives a restart and is retried as it
 *   was composed. `next_attempt_at` is when it is due (a retry's time, or the end of quiet hours);
 *   `claimed_by`/`claimed_until` hold it while one instance makes an attempt.
 * - `notification_held`: changes collected for a channel's next digest.
 */
import type { Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, ctx: MigrationContext): Promise<void> {
  await db.schema
    .createTable('notification_channels')
    .addColumn('id', 'integer', ctx.idColumn)
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('config', 'text', (c) => c.notNull())
    .addColumn('filters', 'text', (c) => c.notNull())
    .addColumn('digest', 'text')
    .addColumn('quiet_hours', 'text')
    .addColumn('digest_last_slot', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('notification_deliveries')
    .addColumn('id', 'integer', ctx.idColumn)
    .addColumn('channel_id', 'integer', (c) => c.notNull().references('notification_channels.id').onDelete('cascade'))
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('scan_id', 'integer', (c) => c.references('scans.id').onDelete('set null'))
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('first_attempt_at', 'text')
    .addColumn('next_attempt_at', 'text')
    .addColumn('sent_at', 'text')
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', 'text')
    .execute();
  await db.schema.createIndex('notification_deliveries_due').on('notification_deliveries').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('notification_deliveries_channel').on('notification_deliveries').columns(['channel_id', 'id']).execute();
  await db.schema.createIndex('notification_deliveries_created').on('notification_deliveries').column('created_at').execute();

  await db.schema
    .createTable('notification_held')
    .addColumn('id', 'integer', ctx.idColumn)
    .addColumn('channel_id', 'integer', (c) => c.notNull().references('notification_channels.id').onDelete('cascade'))
    .addColumn('scan_id', 'integer', (c) => c.references('scans.id').onDelete('set null'))
    .addColumn('change', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notification_held_channel').on('notification_held').columns(['channel_id', 'id']).execute();
}
