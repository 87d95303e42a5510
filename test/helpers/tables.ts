/**
 * Every row of every table of a database, read through the database's own catalogue (not through
 * the code under test), to check that a restore gives back exactly what was backed up.
 */
import { sql, type Kysely } from 'kysely';
import type { Store } from '../../src/store/index.js';

export type TableDump = Record<string, Record<string, unknown>[]>;

/** Tables in the store's schema, except Kysely's migration bookkeeping (and SQLite's virtual tables, a derived search index). */
export async function tableNames(store: Store): Promise<string[]> {
  const db = store.db as unknown as Kysely<unknown>;
  const { rows } =
    store.dialect === 'postgres'
      ? await sql<{
          name: string;
        }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db)
      : await sql<{ name: string }>`select name from pragma_table_list where schema = 'main' and type = 'table' and name not like 'sqlite_%'`.execute(
          db,
        );
  return rows
    .map((r) => r.name)
    .filter((n) => !n.startsWith('kysely_'))
    .sort();
}

/** All rows of all tables, each table's rows sorted by its first column (every table's key). */
export async function dumpTables(store: Store): Promise<TableDump> {
  const db = store.db as unknown as Kysely<unknown>;
  const dump: TableDump = {};
  for (const name of await tableNames(store)) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.id(name)}`.execute(db);
    const first = rows[0] ? Object.keys(rows[0])[0] : undefined;
    dump[name] = first ? [...rows].sort((a, b) => compare(a[first], b[first])) : rows;
  }
  return dump;
}

/** Row counts per table. */
export function counts(dump: TableDump): Record<string, number> {
  return Object.fromEntries(Object.entries(dump).map(([name, rows]) => [name, rows.length]));
}

function compare(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

/** The last id each table's counter has handed out (null: none yet), read from the counter itself. */
export async function nextIds(store: Store, tables: string[]): Promise<Record<string, number | null>> {
  const db = store.db as unknown as Kysely<unknown>;
  const out: Record<string, number | null> = {};
  for (const table of tables) {
    if (store.dialect === 'postgres') {
      const { rows } = await sql<{ value: number | null }>`
        select pg_sequence_last_value(pg_get_serial_sequence(quote_ident(current_schema()) || '.' || quote_ident(${table}), 'id')::regclass) as value`.execute(
        db,
      );
      out[table] = rows[0]?.value ?? null;
    } else {
      const { rows } = await sql<{ seq: number }>`select seq from sqlite_sequence where name = ${table}`.execute(db);
      out[table] = rows[0]?.seq ?? null;
    }
  }
  return out;
}
