/**
 * Writing many rows in few statements, the fastest way each database offers. SQLite: multi-row
 * VALUES (parsing is cheap in process). PostgreSQL: one array parameter per column expanded with
 * `unnest`, so a statement of thousands of rows carries a handful of parameters, where a VALUES
 * list of thousands of parameters costs more to parse and plan than to execute.
 */
import { CompiledQuery, PostgresAdapter, type Kysely } from 'kysely';
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

const quote = (name: string) => `"${name}"`;

/**
 * The statements of a bulk insert: `insert into table (columns) <rows> <tail>` per batch of rows.
 * Written as SQL text with their parameters, not through the query builder: compiling a builder
 * tree of thousands of values costs more than the database spends on them. `tail` is SQL text
 * from the code (an ON CONFLICT or RETURNING clause), never input.
 */
function insertStatements(db: Kysely<Database>, table: string, columns: BulkColumns, rows: readonly Row[], tail: string): CompiledQuery[] {
  const names = Object.keys(columns);
  const head = `insert into ${quote(table)} (${names.map(quote).join(', ')})`;
  if (isPostgres(db)) {
    const arrays = names.map((n, i) => `cast($${i + 1} as ${columns[n]}[])`).join(', ');
    return [...chunks(rows, PG_ROWS_PER_STATEMENT)].map((batch) =>
      CompiledQuery.raw(
        `${head} select * from unnest(${arrays}) ${tail}`,
        names.map((n) => batch.map((r) => r[n] ?? null)),
      ),
    );
  }
  const row = `(${names.map(() => '?').join(', ')})`;
  return [...chunks(rows, rowsPerInsert(names.length))].map((batch) => {
    const params: unknown[] = [];
    for (const r of batch) for (const n of names) params.push(r[n] ?? null);
    return CompiledQuery.raw(`${head} values ${Array(batch.length).fill(row).join(', ')} ${tail}`, params);
  });
}

/** Inserts `rows` (objects with at least the given columns). */
export async function insertMany(db: Kysely<Database>, table: string, columns: BulkColumns, rows: readonly Row[]): Promise<void> {
  for (const statement of insertStatements(db, table, columns, rows, '')) await db.executeQuery(statement);
}

/** Inserts `rows` with a trailing clause (`on conflict …`, `returning …`: SQL text from the code); returns what RETURNING gave. */
export async function insertManyWith<R>(db: Kysely<Database>, table: string, columns: BulkColumns, rows: readonly Row[], tail: string): Promise<R[]> {
  const out: R[] = [];
  for (const statement of insertStatements(db, table, columns, rows, tail)) out.push(...(await db.executeQuery<R>(statement)).rows);
  return out;
}

/**
 * Sets the given columns of each row of `table` whose `id` is the row's `id`: one UPDATE … FROM
 * per batch of rows, not one per row.
 */
export async function updateManyById(db: Kysely<Database>, table: string, columns: BulkColumns, rows: readonly Row[]): Promise<void> {
  const all: BulkColumns = { id: 'integer', ...columns };
  const names = Object.keys(all);
  const set = Object.keys(columns)
    .map((n) => `${quote(n)} = v.${quote(n)}`)
    .join(', ');
  const list = names.map(quote).join(', ');
  if (isPostgres(db)) {
    const arrays = names.map((n, i) => `cast($${i + 1} as ${all[n]}[])`).join(', ');
    for (const batch of chunks(rows, PG_ROWS_PER_STATEMENT)) {
      await db.executeQuery(
        CompiledQuery.raw(
          `update ${quote(table)} set ${set} from unnest(${arrays}) as v(${list}) where ${quote(table)}."id" = v."id"`,
          names.map((n) => batch.map((r) => r[n] ?? null)),
        ),
      );
    }
    return;
  }
  // SQLite (3.33 and later) updates from a common table expression; the casts give its columns their types.
  const row = `(${names.map((n) => `cast(? as ${all[n]})`).join(', ')})`;
  for (const batch of chunks(rows, rowsPerInsert(names.length))) {
    const params: unknown[] = [];
    for (const r of batch) for (const n of names) params.push(r[n] ?? null);
    await db.executeQuery(
      CompiledQuery.raw(
        `with v(${list}) as (values ${Array(batch.length).fill(row).join(', ')}) update ${quote(table)} set ${set} from v where ${quote(table)}."id" = v."id"`,
        params,
      ),
    );
  }
}
