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
 * SQLite: batches of `per` rows, then the rest in batches of descending powers of two (300 rows:
 * 256, 32, 8, 4). The driver keeps prepared statements by SQL text, so a handful of row counts
 * recurs, where a remainder of any size would prepare a new statement of thousands of parameters
 * per call (about 0.1 s of a first scan of 10,000 devices, profiled).
 */
function* sqliteBatches<T>(items: readonly T[], per: number): Generator<T[]> {
  let i = 0;
  for (; i + per <= items.length; i += per) yield items.slice(i, i + per);
  for (let size = 2 ** Math.floor(Math.log2(per)); size >= 1 && i < items.length; size /= 2) {
    if (i + size <= items.length) {
      yield items.slice(i, i + size);
      i += size;
    }
  }
}

/** SQL text by prefix, row shape and row count: the same string each time, so neither built nor hashed anew per statement. */
const valuesText = new Map<string, string>();

/** `${prefix} ${count} × row ${suffix}`, comma-separated, remembered. */
function repeatedRows(prefix: string, row: string, count: number, suffix: string): string {
  const key = `${prefix}\u0000${row}\u0000${count}\u0000${suffix}`;
  let text = valuesText.get(key);
  if (text === undefined) {
    text = `${prefix} ${Array(count).fill(row).join(', ')} ${suffix}`;
    // Bounded: a few shapes and row counts per table are ever used; this only guards against growth.
    if (valuesText.size >= 1000) valuesText.clear();
    valuesText.set(key, text);
  }
  return text;
}

/**
 * A row as values in the order of its columns. Callers writing many rows build these directly:
 * reading each value by column name from objects of varied shapes costs more than SQLite spends
 * inserting it (profiled on a first scan's 360,000 finding and CVE rows).
 */
export type Tuple = readonly unknown[];

/** The rows as tuples in the order of `names` (a missing value is null). */
function toTuples(names: readonly string[], rows: readonly Row[]): Tuple[] {
  return rows.map((r) => names.map((n) => r[n] ?? null));
}

/**
 * The statements of a bulk insert: `insert into table (columns) <rows> <tail>` per batch of rows.
 * Written as SQL text with their parameters, not through the query builder: compiling a builder
 * tree of thousands of values costs more than the database spends on them. `tail` is SQL text
 * from the code (an ON CONFLICT or RETURNING clause), never input. (On SQLite a multi-row VALUES
 * statement is cheaper than one prepared single-row statement run per row: measured 470 against
 * 600 ms of CPU for 250,000 rows, as the driver caches the full-size statement.)
 */
function insertStatements(db: Kysely<Database>, table: string, columns: BulkColumns, tuples: readonly Tuple[], tail: string): CompiledQuery[] {
  const names = Object.keys(columns);
  const head = `insert into ${quote(table)} (${names.map(quote).join(', ')})`;
  if (isPostgres(db)) {
    const arrays = names.map((n, i) => `cast($${i + 1} as ${columns[n]}[])`).join(', ');
    return [...chunks(tuples, PG_ROWS_PER_STATEMENT)].map((batch) =>
      CompiledQuery.raw(
        `${head} select * from unnest(${arrays}) ${tail}`,
        names.map((_n, i) => batch.map((t) => t[i] ?? null)),
      ),
    );
  }
  const row = `(${names.map(() => '?').join(', ')})`;
  return [...sqliteBatches(tuples, rowsPerInsert(names.length))].map((batch) => {
    const params: unknown[] = [];
    for (const t of batch) for (let i = 0; i < names.length; i++) params.push(t[i] ?? null);
    return CompiledQuery.raw(repeatedRows(`${head} values`, row, batch.length, tail), params);
  });
}

/** Inserts `rows` (objects with at least the given columns). */
export async function insertMany(db: Kysely<Database>, table: string, columns: BulkColumns, rows: readonly Row[]): Promise<void> {
  await insertTuples(db, table, columns, toTuples(Object.keys(columns), rows));
}

/** Inserts rows given as tuples, their values in the order of `columns`. */
export async function insertTuples(db: Kysely<Database>, table: string, columns: BulkColumns, tuples: readonly Tuple[]): Promise<void> {
  for (const statement of insertStatements(db, table, columns, tuples, '')) await db.executeQuery(statement);
  await keepStatistics(db, table, tuples.length);
}

/** Inserts `rows` with a trailing clause (`on conflict …`, `returning …`: SQL text from the code); returns what RETURNING gave. */
export async function insertManyWith<R>(db: Kysely<Database>, table: string, columns: BulkColumns, rows: readonly Row[], tail: string): Promise<R[]> {
  const out: R[] = [];
  for (const statement of insertStatements(db, table, columns, toTuples(Object.keys(columns), rows), tail)) {
    out.push(...(await db.executeQuery<R>(statement)).rows);
  }
  await keepStatistics(db, table, rows.length);
  return out;
}

/**
 * PostgreSQL plans a statement from the table's statistics, which only ANALYZE (or autovacuum's,
 * a minute or more later, if it runs at all) gathers. A first import grows tables from nothing to
 * hundreds of thousands of rows in a few seconds, batch by batch; planned from no statistics (or
 * from those of a table a tenth its size), each batch's `where device_id in (…)` read and delete
 * scanned the whole table (risk_findings, cve_matches, ports: measured 0.6 s of the server's CPU
 * for each table's deletes of a first import of 10,000 hosts, which deleted nothing). So a table
 * written in bulk is analysed once the rows written to it since its last analysis reach its size
 * then (at least MIN_ROWS_TO_ANALYZE): a few times while it grows, rarely once it is large.
 *
 * In the writer's transaction, so its own new rows are sampled and its next statements are planned
 * with them; `skip_locked`, so it never waits (a writer holding row locks must not queue behind
 * another's analysis). Rows written are counted per database (the adapter of its Kysely instance)
 * in this process; a restarted process analyses a table once more, after MIN_ROWS_TO_ANALYZE rows.
 *
 * The largest of them are analysed only in the columns their indexes lead with (ANALYZED_COLUMNS):
 * those are what a plan's choice between an index and a scan turns on, and the size of the table
 * (which every analysis sets) is the rest. Their other columns are long texts (finding keys, CVE
 * lists, products, CPEs) whose statistics cost most of an analysis: the analyses of a first import
 * of 10,000 hosts (6 of risk_findings, 6 of cve_matches, 4 of ports) took 3-5× as long over every
 * column, about 1 s of PostgreSQL's CPU. Those columns keep the statistics autovacuum gives them.
 */
const MIN_ROWS_TO_ANALYZE = 5_000;

/** Tables analysed in these columns only (the leading columns of their indexes); any other table in all of its columns. */
const ANALYZED_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  risk_findings: ['device_id'],
  cve_matches: ['device_id'],
  ports: ['device_id', 'port', 'state'],
};

interface TableStatistics {
  /** Rows written since the last analysis, by this process. */
  written: number;
  /** The table's rows at its last analysis (PostgreSQL's estimate); 0 before the first. */
  analysedRows: number;
}

const statistics = new WeakMap<object, Map<string, TableStatistics>>();

async function keepStatistics(db: Kysely<Database>, table: string, rows: number): Promise<void> {
  if (rows === 0 || !isPostgres(db)) return;
  const adapter = db.getExecutor().adapter;
  let tables = statistics.get(adapter);
  if (!tables) statistics.set(adapter, (tables = new Map<string, TableStatistics>()));
  const state = tables.get(table) ?? { written: 0, analysedRows: 0 };
  tables.set(table, state);
  state.written += rows;
  if (state.written < Math.max(MIN_ROWS_TO_ANALYZE, state.analysedRows)) return;
  const columns = ANALYZED_COLUMNS[table];
  await db.executeQuery(CompiledQuery.raw(`analyze (skip_locked) ${quote(table)}${columns ? ` (${columns.map(quote).join(', ')})` : ''}`));
  const { rows: found } = await db.executeQuery<{ rows: number }>(
    CompiledQuery.raw(`select reltuples as "rows" from pg_class where oid = to_regclass($1)`, [quote(table)]),
  );
  state.written = 0;
  state.analysedRows = Math.max(0, Number(found[0]?.rows ?? 0));
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
  // The `in` makes SQLite look each row up by its id: without it the plan scans the whole table
  // and probes the list for every row (profiled: 16 ms a statement over 10,000 devices, 99 of
  // them in a first import of 10,000 hosts).
  const row = `(${names.map((n) => `cast(? as ${all[n]})`).join(', ')})`;
  for (const batch of sqliteBatches(rows, rowsPerInsert(names.length))) {
    const params: unknown[] = [];
    for (const r of batch) for (const n of names) params.push(r[n] ?? null);
    await db.executeQuery(
      CompiledQuery.raw(
        repeatedRows(
          `with v(${list}) as (values`,
          row,
          batch.length,
          `) update ${quote(table)} set ${set} from v where ${quote(table)}."id" = v."id" and ${quote(table)}."id" in (select "id" from v)`,
        ),
        params,
      ),
    );
  }
}
