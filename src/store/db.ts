import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, relative, resolve, sep } from 'node:path';
import { inspect } from 'node:util';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import type { Client, ClientConfig } from 'pg';
import { DatabaseUnavailableError } from './errors.js';
import { withSchemaIntrospection } from './schema-introspection.js';
import { migrationProvider, type Dialect } from './migrations/index.js';
import type { Database } from './schema.js';
import { backgroundCheckpoints } from './sqlite-checkpoint.js';
import { resilientSqliteDialect, type LockRetry } from './sqlite-driver.js';
import { isPostgresUrl } from '../util/database-url.js';

export { DatabaseUnavailableError } from './errors.js';

let pgModule: typeof import('pg') | undefined;

/**
 * The PostgreSQL driver, loaded on first use: a service on SQLite never needs it (with pg-boss,
 * which a PostgreSQL store loads after this, about 4 MB of an idle server's heap).
 */
function postgresDriver(): typeof import('pg') {
  if (!pgModule) {
    const pg = createRequire(import.meta.url)('pg') as typeof import('pg');
    // PostgreSQL returns bigint (count(*), ip_sort) as strings; every value we store fits a double.
    pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));
    pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number.parseFloat(v));
    pgModule = pg;
  }
  return pgModule;
}

export interface DatabaseOptions {
  /** `postgres://…` / `postgresql://…` for PostgreSQL, otherwise a SQLite file path (or `:memory:`). */
  url: string;
  /** PostgreSQL only: schema to use (created when missing). Tests use one schema per run. */
  pgSchema?: string;
  /** PostgreSQL only: pool size. */
  poolSize?: number;
  /** PostgreSQL only: how long to wait for a new connection (ms, default 5000). */
  connectTimeoutMs?: number;
  /** SQLite only: how long to keep retrying while another process holds a lock on the file. */
  lockRetry?: Partial<LockRetry>;
  /** Told about failures no request sees (an idle PostgreSQL connection dropped); default: a process warning. */
  warn?: (context: Record<string, unknown>, message: string) => void;
}

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: Dialect;
  /** A human-readable description without credentials, for logs. */
  description: string;
  /** Throws DatabaseUnavailableError when the database can be seen to be unusable without a query (SQLite: its file is gone). */
  check(): void;
  /** PostgreSQL only: where it is, for what opens its own connections (the job queue, the event relay). */
  postgres: { url: string; schema: string | null } | null;
  /**
   * PostgreSQL only: a new connection of its own, outside the pool, with the pool's settings
   * (schema included), not yet connected. For LISTEN (store/relay-channel.ts), which needs a
   * connection held for as long as it listens.
   */
  dedicatedClient?: () => Client;
  close(): Promise<void>;
}

export function openDatabase(options: DatabaseOptions): DatabaseHandle {
  if (isPostgresUrl(options.url)) return openPostgres(options);
  return openSqlite(options.url, options.lockRetry);
}

/**
 * SQLite itself waits this long for a lock (synchronously, blocking the event loop); the driver
 * does the rest of the waiting between attempts (see sqlite-driver.ts).
 */
const SQLITE_BUSY_TIMEOUT_MS = 50;
const DEFAULT_LOCK_RETRY: LockRetry = { deadlineMs: 3000, firstDelayMs: 10, maxDelayMs: 250 };

function openSqlite(file: string, lockRetry: Partial<LockRetry> = {}): DatabaseHandle {
  const onDisk = file !== ':memory:';
  if (onDisk) createPrivately(file);
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  const watch = onDisk ? watchFile(file) : null;
  const checkpoints = onDisk ? backgroundCheckpoints(sqlite, file) : null;
  const dialect = resilientSqliteDialect({
    sqlite,
    retry: { ...DEFAULT_LOCK_RETRY, ...lockRetry },
    beforeWrite: () => watch?.check(1000),
    afterWrite: checkpoints ? () => checkpoints.afterCommit() : undefined,
  });
  const db = new Kysely<Database>({ dialect });
  return {
    db,
    dialect: 'sqlite',
    description: `sqlite:${file}`,
    check: () => watch?.check(0),
    postgres: null,
    // The checkpointing thread closes its connection first: the last connection to close checkpoints and removes the log.
    close: async () => {
      await checkpoints?.close();
      await db.destroy();
    },
  };
}

/**
 * The database holds password hashes and the whole inventory: a new data directory is created
 * 0700 and a new database file 0600, whatever the umask (SQLite gives its -wal and -shm files
 * the database file's mode). Existing files and directories keep the mode they have.
 */
function createPrivately(file: string): void {
  const dir = resolve(dirname(file));
  const firstCreated = mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (firstCreated) {
    // mkdir's mode is filtered by the umask; set it exactly on each directory created here.
    let path = resolve(firstCreated);
    chmodSync(path, 0o700);
    for (const part of relative(path, dir).split(sep).filter(Boolean)) {
      path = resolve(path, part);
      chmodSync(path, 0o700);
    }
  }
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw err;
  }
  try {
    chmodSync(file, 0o600);
  } finally {
    closeSync(fd);
  }
}

/**
 * SQLite keeps reading and writing an open database file after it is deleted or replaced: writes
 * go to the orphaned file and vanish at the next restart. This notices by comparing the file at
 * the path with the one opened.
 */
function watchFile(file: string) {
  const opened = statSync(file);
  let checkedAt = 0;
  let problem: string | null = null;
  const inspect = (): string | null => {
    try {
      const now = statSync(file);
      return now.ino === opened.ino && now.dev === opened.dev ? null : 'was replaced by another file';
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return code === 'ENOENT' || code === 'ENOTDIR' ? 'was deleted' : null;
    }
  };
  return {
    /** Throws when the file is gone; the answer is reused for `maxAgeMs`. */
    check(maxAgeMs: number): void {
      const now = Date.now();
      if (now - checkedAt >= maxAgeMs) {
        problem = inspect();
        checkedAt = now;
      }
      if (problem) {
        throw new DatabaseUnavailableError(`the database file ${file} ${problem} while the server was running`, {
          detail:
            'The database file was deleted or replaced while the server was running; changes are refused so that none is lost. ' +
            'Restart the server (after restoring the file from a backup, if it was deleted by mistake)',
        });
      }
    },
  };
}

/**
 * The advisory lock every Netwarden connection holds shared on its schema while it is open, and
 * that `netwarden restore` takes exclusively: a class of our own, and the schema's hash (SQL).
 */
export const PG_SCHEMA_LOCK = { classId: 0x4e57, key: "hashtext(coalesce(current_schema(), ''))" } as const;

function openPostgres({ url, pgSchema, poolSize, connectTimeoutMs, warn }: DatabaseOptions): DatabaseHandle {
  const safe = new URL(url);
  safe.password = '';
  const description = `postgres://${safe.host}${safe.pathname}${pgSchema ? ` (schema ${pgSchema})` : ''}`;
  const pg = postgresDriver();
  const connection: ClientConfig = {
    connectionString: url,
    connectionTimeoutMillis: connectTimeoutMs ?? 5000,
    application_name: 'netwarden',
    ...(pgSchema ? { options: `-c search_path=${quoteIdent(pgSchema)}` } : {}),
  };
  const pool = new pg.Pool({
    ...connection,
    max: poolSize ?? 10,
    // A running process keeps one connection, and with it the schema lock, even when idle.
    min: 1,
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', (err) => {
    const message = 'an idle PostgreSQL connection failed; the pool replaces it';
    if (warn) warn({ err }, message);
    else process.emitWarning(`${message}: ${err.message}`);
  });
  // Queued before the client's first query; waits while a restore holds the lock exclusively.
  pool.on('connect', (client) => {
    // A checked-out client (between the queries of a transaction) has no pool listener: without
    // one of its own, a connection dropped at that moment would be an uncaught 'error' and end the
    // process. Its next query fails instead, and that failure is reported where it happens (an idle
    // client's is logged by the pool's listener above), so this one says nothing itself.
    client.on('error', () => {});
    client.query(`select pg_advisory_lock_shared(${PG_SCHEMA_LOCK.classId}, ${PG_SCHEMA_LOCK.key})`).catch((err: Error) => {
      // The query that follows on this connection fails the same way and is reported there.
      if (warn) warn({ err }, 'could not take the schema lock on a new PostgreSQL connection');
    });
  });
  // Whatever stops a new connection (refused, not accepting connections, too many clients,
  // starting up or shutting down, timed out) means the database is unavailable, not that the
  // request was wrong: one place to say so, rather than a list of every SQLSTATE it can be.
  const connect = () =>
    pool.connect().catch((err: unknown) => {
      throw new DatabaseUnavailableError(`PostgreSQL connection failed: ${(err as Error).message}`, {
        detail: 'The database is unavailable; try again shortly',
        retryAfterSeconds: 5,
        cause: err,
      });
    });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: { connect, end: () => pool.end() } }) });
  return {
    db,
    dialect: 'postgres',
    description,
    check: () => {},
    postgres: { url, schema: pgSchema ?? null },
    // TCP keep-alive: a listening connection is idle for long stretches, and a dead one must be noticed.
    dedicatedClient: () => new pg.Client({ ...connection, keepAlive: true }),
    close: () => db.destroy(),
  };
}

function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/i.test(name)) throw new Error(`invalid schema name: ${name}`);
  return name;
}

/** Creates the PostgreSQL schema named in the options when it does not exist yet. */
/** The schema of pg-boss's tables: `pgboss`, or `<schema>_pgboss` beside a schema of Netwarden's own. */
export function jobQueueSchema(schema: string | null): string {
  return schema ? `${schema}_pgboss` : 'pgboss';
}

export async function ensurePgSchema(url: string, schema: string): Promise<void> {
  const client = new (postgresDriver().Client)({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
  } finally {
    await client.end();
  }
}

export async function dropPgSchema(url: string, schema: string): Promise<void> {
  const client = new (postgresDriver().Client)({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
    // The job queue's tables beside it (src/queue/pg-boss.ts).
    await client.query(`DROP SCHEMA IF EXISTS ${quoteIdent(jobQueueSchema(schema))} CASCADE`);
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
    db: migrationTableSchema ? (withSchemaIntrospection(handle.db as Kysely<unknown>, migrationTableSchema) as Kysely<Database>) : handle.db,
    provider: migrationProvider(handle.dialect),
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(typeof error === 'string' ? error : inspect(error));
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}

async function currentSchema(handle: DatabaseHandle): Promise<string | undefined> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(handle.db);
  return rows[0]?.schema ?? undefined;
}

/** Cheap round trip used by the health probe. */
export async function ping(handle: DatabaseHandle): Promise<void> {
  handle.check();
  await sql`select 1`.execute(handle.db);
}
