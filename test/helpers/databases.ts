import { copyFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { knownMigrations, migrateThrough } from '../../src/store/backup-tables.js';
import { dropPgSchema, ensurePgSchema, openDatabase, type DatabaseHandle } from '../../src/store/db.js';
import { afterEach, beforeEach } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { TEST_RUN, TEST_SCHEMA_POOL, testSchemaPrefix, testTemplateDir } from './test-run.js';

export interface TestDatabase {
  /** `sqlite` or `postgres`: use in describe titles. */
  kind: 'sqlite' | 'postgres';
  /** Opens a fresh, migrated, empty store; `cleanup` removes every trace of it. */
  open(): Promise<{ store: Store; url: string; pgSchema?: string; cleanup(): Promise<void> }>;
}

/*
 * Migrating an empty database costs more than most tests (PostgreSQL: about 0.7 s for the schema
 * and 0.1 s to drop it; SQLite: about 0.1 s), and the suite opens thousands. So a test run
 * migrates once and hands out copies: SQLite opens a copy of one migrated file, PostgreSQL leases
 * a migrated schema from the run's pool and empties it when the test is done. Every test still
 * starts on a migrated, empty database of its own; test/global-setup.ts names the run and removes
 * what it made at the end.
 */

let sqliteTemplate: Promise<string> | undefined;

/** The run's migrated, empty SQLite file, made by the first process that needs it. */
function migratedSqliteFile(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const dir = testTemplateDir(TEST_RUN);
    const file = join(dir, 'netwarden.db');
    try {
      if (statSync(file).size > 0) return file;
    } catch {
      // Not made yet.
    }
    mkdirSync(dir, { recursive: true });
    const scratch = mkdtempSync(join(dir, 'making-'));
    const store = await openStore({ url: join(scratch, 'netwarden.db') });
    // Closing checkpoints the write-ahead log into the file: the copy is complete on its own.
    await store.close();
    // Another process may have made it meanwhile; either file is the same migrated database.
    renameSync(join(scratch, 'netwarden.db'), file);
    rmSync(scratch, { recursive: true, force: true });
    return file;
  })();
  return sqliteTemplate;
}

const sqlite: TestDatabase = {
  kind: 'sqlite',
  async open() {
    const dir = mkdtempSync(join(tmpdir(), 'netwarden-test-'));
    const url = join(dir, 'netwarden.db');
    copyFileSync(await migratedSqliteFile(), url);
    const store = await openStore({ url });
    return {
      store,
      url,
      async cleanup() {
        await store.close().catch(() => {});
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

/** The tables, sequences and columns of a schema, as one hash: changes when a test altered it. */
const SHAPE_OF_SCHEMA = `
  select md5(coalesce(string_agg(c.relname || ':' || c.relkind::text || ':' || coalesce(a.attname::text, '') || ':' ||
             coalesce(a.atttypid::text, ''), ',' order by c.relname, a.attnum), '')) as shape
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
   where n.nspname = $1`;

/** One small pool per process for the leases; it lets the process exit when idle. */
let admin: pg.Pool | undefined;
let poolTable: Promise<void> | undefined;

function adminPool(url: string): pg.Pool {
  admin ??= new pg.Pool({ connectionString: url, max: 2, idleTimeoutMillis: 1000, allowExitOnIdle: true });
  return admin;
}

function ensurePoolTable(db: pg.Pool): Promise<void> {
  poolTable ??= (async () => {
    const client = await db.connect();
    try {
      await client.query('begin');
      // Concurrent runs (and processes) may create it at once: one at a time.
      await client.query('select pg_advisory_xact_lock(20066, 1)');
      await client.query(
        `create table if not exists ${TEST_SCHEMA_POOL} (name text primary key, run text not null, shape text, leased boolean not null)`,
      );
      await client.query('commit');
    } catch (err) {
      await client.query('rollback').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  })();
  return poolTable;
}

/** A schema of the run's pool nobody holds, or a new one; marked as held. */
async function leaseSchema(url: string): Promise<{ schema: string; shape: string | null }> {
  const db = adminPool(url);
  await ensurePoolTable(db);
  const { rows } = await db.query<{ name: string; shape: string | null }>(
    `update ${TEST_SCHEMA_POOL} set leased = true
      where name = (select name from ${TEST_SCHEMA_POOL} where run = $1 and not leased limit 1 for update skip locked)
      returning name, shape`,
    [TEST_RUN],
  );
  if (rows[0]) return { schema: rows[0].name, shape: rows[0].shape };
  const schema = `${testSchemaPrefix(TEST_RUN)}${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  await db.query(`insert into ${TEST_SCHEMA_POOL} (name, run, shape, leased) values ($1, $2, null, true)`, [schema, TEST_RUN]);
  await ensurePgSchema(url, schema);
  return { schema, shape: null };
}

/**
 * Gives a schema back to the pool, emptied (rows deleted, sequences restarted, the job queue's
 * schema dropped); a schema a test changed the shape of is dropped instead.
 */
async function releaseSchema(url: string, schema: string, shape: string): Promise<void> {
  const db = adminPool(url);
  const now = (await db.query<{ shape: string }>(SHAPE_OF_SCHEMA, [schema])).rows[0].shape;
  if (now !== shape) {
    await dropPgSchema(url, schema);
    await db.query(`delete from ${TEST_SCHEMA_POOL} where name = $1`, [schema]);
    return;
  }
  const { rows } = await db.query<{ tables: string[] | null; sequences: string[] | null }>(
    `select (select array_agg(format('%I.%I', schemaname, tablename)) from pg_tables
              where schemaname = $1 and tablename not in ('kysely_migration', 'kysely_migration_lock')) as tables,
            (select array_agg(format('%I.%I', schemaname, sequencename)) from pg_sequences where schemaname = $1) as sequences`,
    [schema],
  );
  const client = await db.connect();
  try {
    // Deleting the rows of a few small tables is far quicker than TRUNCATE, which makes new files
    // for every table and index; with triggers (foreign keys) off, the order does not matter.
    await client.query(
      [
        'begin',
        "set local session_replication_role = 'replica'",
        ...(rows[0].tables ?? []).map((table) => `delete from ${table}`),
        ...(rows[0].sequences ?? []).map((sequence) => `alter sequence ${sequence} restart`),
        'commit',
      ].join(';\n'),
    );
  } catch {
    await client.query('rollback').catch(() => {});
    // Without the right to turn triggers off: the slow way, which no foreign key can stop.
    if (rows[0].tables?.length) await client.query(`truncate ${rows[0].tables.join(', ')} restart identity cascade`);
  } finally {
    client.release();
  }
  await db.query(`drop schema if exists ${schema}_pgboss cascade`);
  await db.query(`update ${TEST_SCHEMA_POOL} set leased = false where name = $1`, [schema]);
}

function postgres(url: string): TestDatabase {
  return {
    kind: 'postgres',
    async open() {
      const lease = await leaseSchema(url);
      const schema = lease.schema;
      let store: Store;
      try {
        store = await openStore({ url, pgSchema: schema, poolSize: 5 });
      } catch (err) {
        await dropPgSchema(url, schema).catch(() => {});
        await adminPool(url).query(`delete from ${TEST_SCHEMA_POOL} where name = $1`, [schema]);
        throw err;
      }
      let shape = lease.shape;
      if (shape === null) {
        shape = (await adminPool(url).query<{ shape: string }>(SHAPE_OF_SCHEMA, [schema])).rows[0].shape;
        await adminPool(url).query(`update ${TEST_SCHEMA_POOL} set shape = $2 where name = $1`, [schema, shape]);
      }
      return {
        store,
        url,
        pgSchema: schema,
        async cleanup() {
          await store.close().catch(() => {});
          await releaseSchema(url, schema, shape);
        },
      };
    },
  };
}

/** SQLite always; PostgreSQL too when TEST_DATABASE_URL is set (`.ci/run` sets it). */
export function testDatabases(): TestDatabase[] {
  const pgUrl = process.env.TEST_DATABASE_URL;
  return pgUrl ? [sqlite, postgres(pgUrl)] : [sqlite];
}

export type OpenedDatabase = Awaited<ReturnType<TestDatabase['open']>>;

/**
 * Gives every test of the calling describe block a fresh, empty database: `use` receives it
 * before each test, and it is removed after each.
 */
export function freshDatabaseEachTest(database: TestDatabase, use: (opened: OpenedDatabase) => void): void {
  let opened: OpenedDatabase | undefined;
  beforeEach(async () => {
    opened = await database.open();
    use(opened);
  });
  afterEach(async () => {
    await opened?.cleanup();
    opened = undefined;
  });
}

/**
 * For a test of one migration over data written before it: a database of `database`'s kind (a SQLite file in a
 * directory of its own, or a PostgreSQL schema of its own) migrated through every migration before `migration`.
 * `use` gets it open as `old` (write the old rows, then close it) and the `url` and `pgSchema` to open the store
 * with, which applies the rest. Removed afterwards.
 */
export async function withDatabaseBefore(
  database: TestDatabase,
  migration: string,
  use: (old: DatabaseHandle, at: { url: string; pgSchema?: string }) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `netwarden-m${migration}-`));
  const pgSchema = database.kind === 'postgres' ? `nw_m${migration}_${process.pid}_${Date.now()}` : undefined;
  const url = pgSchema ? process.env.TEST_DATABASE_URL! : join(dir, 'netwarden.db');
  if (pgSchema) await ensurePgSchema(url, pgSchema);
  try {
    const old = openDatabase({ url, pgSchema });
    const before = (await knownMigrations()).filter((m) => m < migration);
    // In a transaction on one connection, as restore runs them (migration 009 takes a savepoint on PostgreSQL).
    await old.db.connection().execute(async (conn) => {
      await sql`begin`.execute(conn);
      await migrateThrough(conn as unknown as Kysely<unknown>, old.dialect, before, pgSchema);
      await sql`commit`.execute(conn);
    });
    await use(old, { url, pgSchema });
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (pgSchema) await dropPgSchema(url, pgSchema);
  }
}
