/**
 * An index for the device list's free-text search (`GET /api/devices?q=`), so a term is found at
 * 100,000 devices without reading every row.
 *
 * The searched text is the searched columns joined by U+001F, as DeviceStore builds it
 * (src/store/devices.ts, SEARCHED_COLUMNS and SEARCH_SEPARATOR). The list is copied here on
 * purpose: a shipped migration must not change when the store does. Changing the searched columns
 * needs a new migration that rebuilds both indexes.
 *
 * - SQLite: `devices_search`, a contentless FTS5 table with the trigram tokenizer over that text
 *   (rowid = devices.id), kept in step by triggers on devices. It only narrows the candidates for
 *   terms of 3 or more characters; the store keeps its LIKE as the exact test (the tokenizer folds
 *   case for all of Unicode, SQLite's LIKE for ASCII only).
 * - PostgreSQL: a pg_trgm GIN index on the same lower(...) expression the store's LIKE uses. When
 *   the extension cannot be created (no rights to create it, or it is not installed on the
 *   server), the migration still succeeds without the index and search scans as before. The
 *   attempt runs under a savepoint: migrations run inside a transaction, which a failed statement
 *   would otherwise abort.
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

const SEARCHED_COLUMNS = ['ip_address', 'mac_address', 'hostname', 'vendor', 'label', 'notes', 'os_name', 'device_type', 'zone'];
const SEPARATOR = '\u001f';

/** `coalesce(a, '') || '\x1f' || coalesce(b, '') ...` over `row` (a table name, `new` or `old`), or bare column names. */
function joined(row?: string) {
  return sql.join(
    SEARCHED_COLUMNS.map((column) => sql`coalesce(${row ? sql.ref(`${row}.${column}`) : sql.ref(column)}, '')`),
    sql` || ${sql.lit(SEPARATOR)} || `,
  );
}

export async function up(db: Kysely<unknown>, ctx: MigrationContext): Promise<void> {
  if (ctx.dialect === 'postgres') await postgresIndex(db);
  else await sqliteIndex(db);
}

async function sqliteIndex(db: Kysely<unknown>): Promise<void> {
  // contentless_delete: rows can be deleted and replaced by rowid without keeping their text.
  await sql`create virtual table devices_search using fts5(searched, content='', contentless_delete=1, tokenize='trigram')`.execute(db);
  await sql`insert into devices_search (rowid, searched) select id, ${joined('devices')} from devices`.execute(db);
  await sql`create trigger devices_search_insert after insert on devices begin
    insert into devices_search (rowid, searched) values (new.id, ${joined('new')});
  end`.execute(db);
  const changed = sql.join(
    SEARCHED_COLUMNS.map((c) => sql`${sql.ref(c)}`),
    sql`, `,
  );
  // Scans rewrite a device's columns whether or not they changed: re-index only when the text did.
  const differs = sql.join(
    SEARCHED_COLUMNS.map((c) => sql`old.${sql.id(c)} is not new.${sql.id(c)}`),
    sql` or `,
  );
  await sql`create trigger devices_search_update after update of ${changed} on devices when ${differs} begin
    delete from devices_search where rowid = old.id;
    insert into devices_search (rowid, searched) values (new.id, ${joined('new')});
  end`.execute(db);
  await sql`create trigger devices_search_delete after delete on devices begin
    delete from devices_search where rowid = old.id;
  end`.execute(db);
}

async function postgresIndex(db: Kysely<unknown>): Promise<void> {
  await sql`savepoint netwarden_pg_trgm`.execute(db);
  try {
    // In public, not in the first schema of the search path: a deployment (or a test run) whose own
    // schema is dropped later must not take the extension, and every other schema's index, with it.
    await sql`create extension if not exists pg_trgm with schema public`.execute(db);
    await sql`release savepoint netwarden_pg_trgm`.execute(db);
  } catch (err) {
    await sql`rollback to savepoint netwarden_pg_trgm`.execute(db);
    process.emitWarning(
      `pg_trgm could not be created (${(err as Error).message}): device search works without its index, reading every device. ` +
        'docs/architecture.md ("Device search") gives the statements a superuser can run to add it.',
    );
    return;
  }
  // The operator class lives in whichever schema the extension was installed in (perhaps by an administrator, before).
  const { rows } = await sql<{ schema: string }>`
    select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) return;
  await sql`create index devices_search on devices using gin ((lower(${joined()})) ${sql.id(schema, 'gin_trgm_ops')})`.execute(db);
}
