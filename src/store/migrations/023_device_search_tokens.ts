/**
 * The SQLite device search index of migration 009, rebuilt so that re-indexing a device costs what
 * indexing it does (issue 21: recognition rewrites the type, vendor, model and OS of most devices
 * of a first scan; 10,000 such updates spent about 0.6 s of CPU in the index's update trigger,
 * profiled, where indexing the same 10,000 texts costs about 0.1 s).
 *
 * Migration 009's table is `contentless_delete=1`: a row is deleted by its rowid alone, and FTS5
 * then has to find that row's entries in the index itself, which is what cost the time. Here the
 * table is an ordinary contentless one (`content=''`), and the triggers delete a row with FTS5's
 * `'delete'` command and the text that was indexed for it: the old row's searched columns, joined
 * exactly as the insert joined them (the triggers are the only writers of the index, so the old
 * row's text is always the indexed one). Same text, same tokenizer, same rowids: searches give
 * the same candidates, and the store's LIKE stays the exact test (src/store/devices.ts).
 *
 * `columnsize=0`: no per-row token count is kept (only ranking reads it, and search does not rank).
 *
 * The update trigger still fires only when a searched column's value changes (`update of` those
 * columns, `when` one of them differs), as in 009: scans rewrite a device's other columns without
 * touching the index.
 *
 * PostgreSQL: nothing changes. Its pg_trgm GIN index (009) is an expression index on devices,
 * updated by the database itself, and recognition only updates the devices whose recognised
 * fields changed (src/store/identity.ts), which are the ones whose searched text changes.
 *
 * The searched columns and the separator are copied from 009 on purpose (a shipped migration must
 * not change when the store does).
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

const SEARCHED_COLUMNS = ['ip_address', 'mac_address', 'hostname', 'vendor', 'label', 'notes', 'os_name', 'device_type', 'zone'];
const SEPARATOR = '\u001f';

/** `coalesce(a, '') || '\x1f' || coalesce(b, '') ...` over `row` (a table name, `new` or `old`). */
function joined(row: string) {
  return sql.join(
    SEARCHED_COLUMNS.map((column) => sql`coalesce(${sql.ref(`${row}.${column}`)}, '')`),
    sql` || ${sql.lit(SEPARATOR)} || `,
  );
}

export async function up(db: Kysely<unknown>, ctx: MigrationContext): Promise<void> {
  if (ctx.dialect !== 'sqlite') return;
  await sql`drop trigger if exists devices_search_insert`.execute(db);
  await sql`drop trigger if exists devices_search_update`.execute(db);
  await sql`drop trigger if exists devices_search_delete`.execute(db);
  await sql`drop table if exists devices_search`.execute(db);
  await sql`create virtual table devices_search using fts5(searched, content='', columnsize=0, tokenize='trigram')`.execute(db);
  await sql`insert into devices_search (rowid, searched) select id, ${joined('devices')} from devices`.execute(db);
  await sql`create trigger devices_search_insert after insert on devices begin
    insert into devices_search (rowid, searched) values (new.id, ${joined('new')});
  end`.execute(db);
  const changed = sql.join(
    SEARCHED_COLUMNS.map((c) => sql`${sql.ref(c)}`),
    sql`, `,
  );
  const differs = sql.join(
    SEARCHED_COLUMNS.map((c) => sql`old.${sql.id(c)} is not new.${sql.id(c)}`),
    sql` or `,
  );
  await sql`create trigger devices_search_update after update of ${changed} on devices when ${differs} begin
    insert into devices_search (devices_search, rowid, searched) values ('delete', old.id, ${joined('old')});
    insert into devices_search (rowid, searched) values (new.id, ${joined('new')});
  end`.execute(db);
  await sql`create trigger devices_search_delete after delete on devices begin
    insert into devices_search (devices_search, rowid, searched) values ('delete', old.id, ${joined('old')});
  end`.execute(db);
}
