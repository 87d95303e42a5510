/**
 * Writing many rows in few statements, the fastest way each database offers. SQLite: multi-row
 * VALUES (parsing is cheap in process). PostgreSQL: one array parameter per column expanded with
 * `unnest`, so a statement of thousands of rows carries a handful of parameters, where a VALUES
 * list of thousands of parameters costs more to parse and plan than to execute.
 */
import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './schema.js';
import { chunks, rowsPerInsert } from '../util/batches.js';

/** SQL types of the columns written in bulk (the same names in both dialects). */
export type BulkType = 'integer' | 'bigint' | 'text' | 'real';

/** Columns of a bulk write, in order, with their types. */
export type BulkColumns = Readonly<Record<string, BulkType>>;

type Row = Readonly<Record<string, unknown>>;

/** Rows per statement on PostgreSQL: bounded so one statement's arrays stay a few megabytes. */
const PG_ROWS_PER_STATEMENT = 10_000;

export function isPostgres(db: Kysely<Database>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** `insert into table (columns) <rows>` plus `tail` (an ON CONFLICT or RETURNING clause), per batch of rows. */
function insertStatements(db: Kysely<Database>, table: string, columns: BulkColumns, rows: readonly Row[], tail: RawBuilder<unknown> = sql``) {
  const names = Object.keys(columns);
  const head = sql`insert into ${sql.table(table)} (${sql.join(names.map((n) => sql.ref(n)))})`;
  if (isPostgres(db)) {
    return [...chunks(rows, PG_ROWS_PER_STATEMENT)].map((batch) => {
      const arrays = names.map((n) => sql`cast(${batch.map((r) => r[n] ?? null)} as ${sql.raw(columns[n])}[])`);
      return sql`${head} select * from unnest(${sql.join(arrays)}) ${tail}`;
    });
  }
  return [...chunks(rows, rowsPerInsert(names.length))].map((batch) => {
    const values = batch.map((r) => sql`(${sql.join(names.map((n) => r[n] ?? null))})`);
    return sql`${head} values ${sql.join(values)} ${tail}`;
  });
}

/** Inserts `rows` (objects with at least the given columns). */
export async function insertMany(db: Kysely<Database>, table: string, columns: BulkColumns, rows: readonly Row[]): Promise<void> {
  for (const statement of insertStatements(db, table, columns, rows)) await statement.execute(db);
}

/** Inserts `rows` with a trailing clause (`on conflict …`, `returning …`); returns what RETURNING gave. */
export async function insertManyWith<R>(
  db: Kysely<Database>,
  table: string,
  columns: BulkColumns,
  rows: readonly Row[],
  tail: RawBuilder<unknown>,
): Promise<R[]> {
  const out: R[] = [];
  for (const statement of insertStatements(db, table, columns, rows, tail)) {
    const result = await (statement as RawBuilder<R>).execute(db);
    out.push(...result.rows);
  }
  return out;
}

/**
 * Sets the given columns of each row of `table` whose `id` is the row's `id`: one UPDATE … FROM
 * per batch of rows, not one per row.
 */
export async function updateManyById(db: Kysely<Database>, table: string, columns: BulkColumns, rows: readonly Row[]): Promise<void> {
  const names = Object.keys(columns);
  const all = { id: 'integer', ...columns } as BulkColumns;
  const assignments = sql.join(names.map((n) => sql`${sql.ref(n)} = ${sql.ref(`v.${n}`)}`));
  const list = sql.join(Object.keys(all).map((n) => sql.ref(n)));
  if (isPostgres(db)) {
    for (const batch of chunks(rows, PG_ROWS_PER_STATEMENT)) {
      const arrays = Object.keys(all).map((n) => sql`cast(${batch.map((r) => r[n] ?? null)} as ${sql.raw(all[n])}[])`);
      await sql`update ${sql.table(table)} set ${assignments} from unnest(${sql.join(arrays)}) as v(${list}) where ${sql.ref(`${table}.id`)} = v.id`.execute(
        db,
      );
    }
    return;
  }
  // SQLite (3.33 and later) updates from a common table expression; the casts give its columns their types.
  for (const batch of chunks(rows, rowsPerInsert(names.length + 1))) {
    const values = batch.map((r) => sql`(${sql.join(Object.keys(all).map((n) => sql`cast(${r[n] ?? null} as ${sql.raw(all[n])})`))})`);
    await sql`with v(${list}) as (values ${sql.join(values)}) update ${sql.table(table)} set ${assignments} from v where ${sql.ref(`${table}.id`)} = v.id`.execute(
      db,
    );
  }
}
