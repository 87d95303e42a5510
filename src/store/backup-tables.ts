/**
 * Which tables a backup holds, learned from the migrations themselves rather than from a list
 * kept by hand: a new migration's tables are backed up and restored without touching this code.
 */
import { withSchemaIntrospection } from './schema-introspection.js';
import { Migrator, NO_MIGRATIONS, sql, type Kysely } from 'kysely';
import { inspect } from 'node:util';
import { openDatabase } from './db.js';
import { migrationProvider, type Dialect } from './migrations/index.js';

/** A table the migrations create, as backup and restore need to know it. */
export interface TableModel {
  name: string;
  /** Stored columns in declaration order (generated columns are left out). */
  columns: string[];
  /** Each column's declared type (`INTEGER`, `TEXT`, `REAL`, `bigint`, …), in `columns` order. */
  types: string[];
  /** Whether each column is NOT NULL, in `columns` order. */
  notNull: boolean[];
  /** Primary key columns: rows are written in this order, so a backup is reproducible. */
  primaryKey: string[];
  /** The auto-generated integer id column, whose counter the backup carries; null if none. */
  identity: string | null;
}

/** Kysely's bookkeeping: recreated by the migrator, never copied. */
export const MIGRATION_TABLES = ['kysely_migration', 'kysely_migration_lock'] as const;

/** Every migration name this code knows, in the order they apply. */
export async function knownMigrations(): Promise<string[]> {
  return Object.keys(await migrationProvider('sqlite').getMigrations()).sort();
}

/** Applies the named migrations (a prefix of the known ones, in order) to `db`. */
export async function migrateThrough(db: Kysely<unknown>, dialect: Dialect, migrations: readonly string[], schema?: string): Promise<void> {
  const migrator = new Migrator({
    db: schema ? withSchemaIntrospection(db, schema) : db,
    provider: migrationProvider(dialect),
    // The caller may hold a transaction open on this connection (restore does).
    disableTransactions: true,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error } = await migrator.migrateTo(migrations.at(-1) ?? NO_MIGRATIONS);
  if (error) throw error instanceof Error ? error : new Error(inspect(error));
}

interface Model {
  tables: TableModel[];
  /**
   * SQLite's virtual tables (the FTS5 search index of migration 009): derived from other tables'
   * rows, so never backed up; the migration that creates one fills it, and triggers keep it in step
   * as a restore inserts rows.
   */
  virtual: string[];
}

const models = new Map<string, Promise<Model>>();

/**
 * The tables the given migrations create, parents before the tables that reference them (the
 * order a restore inserts in). Found by applying those migrations to a scratch in-memory SQLite
 * database and reading its catalogue: the migrations are the same code for both dialects, so the
 * tables are the same, and a PostgreSQL schema shared with other applications never has their
 * tables copied or dropped.
 */
export async function migrationTables(migrations: readonly string[]): Promise<TableModel[]> {
  return (await model(migrations)).tables;
}

/** The SQLite virtual tables the given migrations create (see Model.virtual); their own storage tables are dropped with them. */
export async function migrationVirtualTables(migrations: readonly string[]): Promise<string[]> {
  return (await model(migrations)).virtual;
}

function model(migrations: readonly string[]): Promise<Model> {
  const key = migrations.join('\n');
  let found = models.get(key);
  if (!found) {
    found = readModel(migrations);
    models.set(key, found);
    found.catch(() => models.delete(key));
  }
  return found;
}

async function readModel(migrations: readonly string[]): Promise<Model> {
  const scratch = openDatabase({ url: ':memory:' });
  try {
    const db = scratch.db as unknown as Kysely<unknown>;
    await migrateThrough(db, 'sqlite', migrations);
    const { rows: tables } = await sql<{ name: string; sql: string }>`
      select name, sql from sqlite_master
      where type = 'table' and name not like 'sqlite\\_%' escape '\\' and name not in (${sql.join([...MIGRATION_TABLES])})
        and name in (select name from pragma_table_list where schema = 'main' and type = 'table')
      order by name`.execute(db);
    const { rows: virtual } = await sql<{ name: string }>`
      select name from pragma_table_list where schema = 'main' and type = 'virtual' order by name`.execute(db);
    const found: Array<TableModel & { parents: string[] }> = [];
    for (const table of tables) {
      const { rows: columns } = await sql<{ name: string; type: string; pk: number; notnull: number }>`
        select name, type, pk, "notnull" from pragma_table_info(${table.name}) order by cid`.execute(db);
      const { rows: keys } = await sql<{ table: string }>`select "table" from pragma_foreign_key_list(${table.name})`.execute(db);
      const primaryKey = columns
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => c.name);
      const single = primaryKey.length === 1 ? columns.find((c) => c.name === primaryKey[0]) : undefined;
      found.push({
        name: table.name,
        columns: columns.map((c) => c.name),
        types: columns.map((c) => c.type),
        notNull: columns.map((c) => c.notnull === 1),
        primaryKey,
        // The migrations' id column: INTEGER PRIMARY KEY AUTOINCREMENT on SQLite, an identity on PostgreSQL.
        identity: single && /^integer$/i.test(single.type) && /\bautoincrement\b/i.test(table.sql) ? single.name : null,
        parents: keys.map((k) => k.table).filter((t) => t !== table.name),
      });
    }
    return { tables: parentsFirst(found), virtual: virtual.map((v) => v.name) };
  } finally {
    await scratch.close();
  }
}

/** Orders tables so each comes after every table it references (ties by name). */
function parentsFirst(tables: Array<TableModel & { parents: string[] }>): TableModel[] {
  const ordered: TableModel[] = [];
  const placed = new Set<string>();
  let pending = tables;
  while (pending.length) {
    const ready = pending.filter((t) => t.parents.every((p) => placed.has(p) || !tables.some((x) => x.name === p)));
    if (!ready.length) throw new Error(`tables ${pending.map((t) => t.name).join(', ')} reference each other; a backup cannot order them`);
    for (const { parents: _parents, ...table } of ready) {
      ordered.push(table);
      placed.add(table.name);
    }
    pending = pending.filter((t) => !placed.has(t.name));
  }
  return ordered;
}

/** `schema.table` of a table in the current PostgreSQL schema, as text for catalogue functions. */
export function pgTableName(table: string) {
  return sql<string>`quote_ident(current_schema()) || '.' || quote_ident(${table})`;
}
