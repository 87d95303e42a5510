import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { migrationProvider, type Dialect } from './migrations/index.js';
import type { Database } from './schema.js';

// PostgreSQL returns bigint (count(*), ip_sort) as strings; every value we store fits a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number.parseFloat(v));

export interface DatabaseOptions {
  /** `postgres://…` / `postgresql://…` for PostgreSQL, otherwise a SQLite file path (or `:memory:`). */
  url: string;
  /** PostgreSQL only: schema to use (created when missing). Tests use one schema per run. */
  pgSchema?: string;
  /** PostgreSQL only: pool size. */
  poolSize?: number;
}

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: Dialect;
  /** A human-readable description without credentials, for logs. */
  description: string;
  close(): Promise<void>;
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

export function openDatabase(options: DatabaseOptions): DatabaseHandle {
  if (isPostgresUrl(options.url)) return openPostgres(options);
  return openSqlite(options.url);
}

function openSqlite(file: string): DatabaseHandle {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: cachingStatements(sqlite) }) });
  return {
    db,
    dialect: 'sqlite',
    description: `sqlite:${file}`,
    close: () => db.destroy(),
  };
}

/**
 * Kysely prepares every query anew; preparing costs more than running a cached statement, so the
 * statements are kept by SQL text (bounded, least recently used first out). Safe because Kysely
 * runs one query at a time on the single SQLite connection and nothing here streams results.
 */
function cachingStatements(sqlite: SQLite.Database, max = 500) {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sqlText: string) {
      let statement = cache.get(sqlText);
      if (statement) {
        cache.delete(sqlText);
      } else {
        statement = sqlite.prepare(sqlText);
        if (cache.size >= max) cache.delete(cache.keys().next().value as string);
      }
      cache.set(sqlText, statement);
      return statement;
    },
  };
}

/**
 * The advisory lock every Netwarden connection holds shared on its schema while it is open, and
 * that `netwarden restore` takes exclusively: a class of our own, and the schema's hash (SQL).
 */
export const PG_SCHEMA_LOCK = { classId: 0x4e57, key: "hashtext(coalesce(current_schema(), ''))" } as const;

function openPostgres({ url, pgSchema, poolSize }: DatabaseOptions): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize ?? 10,
    // A running process keeps one connection, and with it the schema lock, even when idle.
    min: 1,
    connectionTimeoutMillis: 5000,
    application_name: 'netwarden',
    ...(pgSchema ? { options: `-c search_path=${quoteIdent(pgSchema)}` } : {}),
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // Queued before the client's first query; waits while a restore holds the lock exclusively.
  pool.on('connect', (client) => void client.query(`select pg_advisory_lock_shared(${PG_SCHEMA_LOCK.classId}, ${PG_SCHEMA_LOCK.key})`).catch(() => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const safe = new URL(url);
  safe.password = '';
  return {
    db,
    dialect: 'postgres',
    description: `postgres://${safe.host}${safe.pathname}${pgSchema ? ` (schema ${pgSchema})` : ''}`,
    close: () => db.destroy(),
  };
}

function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/i.test(name)) throw new Error(`invalid schema name: ${name}`);
  return name;
}

/** Creates the PostgreSQL schema named in the options when it does not exist yet. */
export async function ensurePgSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
  } finally {
    await client.end();
  }
}

export async function dropPgSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
  } finally {
    await client.end();
  }
}

export interface MigrationReport {
  applied: string[];
}

export async function migrateToLatest(handle: DatabaseHandle): Promise<MigrationReport> {
  // Kysely looks for its migration tables in every schema it can see unless told which one: a
  // kysely_migration table in another schema of the same database (another app, another test run)
  // would make it skip creating its own and fail. Pin them to the schema the tables go to.
  const migrationTableSchema = handle.dialect === 'postgres' ? await currentSchema(handle) : undefined;
  const migrator = new Migrator({
    db: handle.db,
    provider: migrationProvider(handle.dialect),
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}

async function currentSchema(handle: DatabaseHandle): Promise<string | undefined> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(handle.db);
  return rows[0]?.schema ?? undefined;
}

/** Cheap round trip used by the health probe. */
export async function ping(handle: DatabaseHandle): Promise<void> {
  await sql`select 1`.execute(handle.db);
}
