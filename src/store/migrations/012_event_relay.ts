/**
 * The event relay's large messages (store/relay-channel.ts): a PostgreSQL notification carries
 * under 8000 bytes, so a longer message is stored here and its id is sent instead. Rows live for a
 * minute (the receivers read them at once); SQLite (no relay there) never writes one.
 */
import type { Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

export async function up(db: Kysely<unknown>, ctx: MigrationContext): Promise<void> {
  await db.schema
    .createTable('relay_messages')
    .addColumn('id', 'integer', ctx.idColumn)
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('relay_messages_created_at').on('relay_messages').column('created_at').execute();
}
