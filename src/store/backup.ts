/**
 * Backup and restore of the whole database (format: backup-format.ts). No HTTP or CLI here:
 * GET /api/backup and `netwarden backup` / `netwarden restore` are thin layers over this.
 *
 * A backup is a consistent snapshot taken while the service keeps writing: on SQLite through the
 * online backup API into a scratch copy that is then read at leisure, on PostgreSQL inside one
 * REPEATABLE READ transaction. A restore replaces every Netwarden table in one transaction: it
 * drops them, recreates them with the migrations the backup was made with, inserts the rows,
 * sets the id counters, then applies any newer migrations, so a backup of an older version
 * restores into a newer one. A failure anywhere leaves the database as it was.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { createGzip, type Gzip } from 'node:zlib';
import SQLite from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { AuditStore, type AuditEntry } from './audit.js';
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  BackupFileError,
  LineWriter,
  TableHeader,
  Trailer,
  backupFileName,
  backupLines,
  decodeValue,
  encodeValue,
  parseHeader,
  problemWith,
  type BackupHeader,
} from './backup-format.js';
import { MIGRATION_TABLES, knownMigrations, migrateThrough, migrationTables, type TableModel } from './backup-tables.js';
import { nowIso } from './clock.js';
import { PG_SCHEMA_LOCK, type DatabaseHandle } from './db.js';
import type { Dialect } from './migrations/index.js';
import type { Database } from './schema.js';

export { BackupFileError, backupFileName, type BackupHeader } from './backup-format.js';

/** Restore refused because something else is using the database. */
export class RestoreRefusedError extends Error {}

/** Rows read per query or cursor fetch while writing a backup. */
const BATCH = 500;

// ---------------------------------------------------------------------------------------------
// Backup

export interface BackupSummary {
  /** Suggested file name, from the moment of the snapshot. */
  fileName: string;
  header: BackupHeader;
  /** Rows per table. */
  rows: Record<string, number>;
  totalRows: number;
}

export interface OpenedBackup {
  header: BackupHeader;
  fileName: string;
  /** The backup file's bytes (gzip). Read it exactly once. */
  stream: Readable;
  /** Resolves once the last byte has been handed to `stream`; rejects if the backup failed. */
  finished: Promise<BackupSummary>;
}

/** What a backup reads: one consistent state of the database. */
interface Snapshot {
  dialect: Dialect;
  migrations(): Promise<string[]>;
  /** Last id handed out for the table's identity column (null if none or never used). */
  sequence(table: TableModel): Promise<number | null>;
  /** The table's rows as arrays in `table.columns` order, in batches, by primary key. */
  rows(table: TableModel): AsyncIterable<unknown[][]>;
}

/**
 * Takes a snapshot of the database and starts writing the backup. Resolves once the snapshot is
 * taken (so a failure to take one can still be reported before any byte is sent); the rows are
 * then produced into `stream` as it is read.
 */
export async function openBackup(
  handle: DatabaseHandle,
  options: {
    version: string;
    /** Runs after the last row and before the stream ends (e.g. to audit a download before it is complete). */
    beforeEnd?: (summary: BackupSummary) => Promise<void>;
  },
): Promise<OpenedBackup> {
  const gzip = createGzip();
  // A failure is reported through `finished` (and to whoever reads the stream): destroying a stream
  // nobody reads yet must not raise an uncaught 'error' event.
  gzip.on('error', () => {});
  let announce!: (opened: { header: BackupHeader; fileName: string }) => void;
  const ready = new Promise<{ header: BackupHeader; fileName: string }>((resolve) => (announce = resolve));
  const finished = withSnapshot(handle, (snapshot) => writeBackup(snapshot, gzip, options.version, announce)).then(
    async (summary) => {
      await options.beforeEnd?.(summary);
      gzip.end();
      return summary;
    },
    (err: unknown) => {
      gzip.destroy(err instanceof Error ? err : new Error(String(err)));
      throw err;
    },
  );
  // Callers await it; this only keeps a failure before they do from counting as unhandled.
  finished.catch(() => {});
  const opened = await Promise.race([ready, finished]);
  return { header: opened.header, fileName: opened.fileName, stream: gzip, finished };
}

async function writeBackup(
  snapshot: Snapshot,
  out: Gzip,
  version: string,
  announce: (opened: { header: BackupHeader; fileName: string }) => void,
): Promise<BackupSummary> {
  const migrations = await snapshot.migrations();
  const known = await knownMigrations();
  const unknown = migrations.filter((m) => !known.includes(m));
  if (unknown.length) throw new Error(`the database has migrations this Netwarden does not know (${unknown.join(', ')}); back it up with the version that applied them`);
  const tables = await migrationTables(migrations);
  const header: BackupHeader = {
    format: BACKUP_FORMAT,
    format_version: BACKUP_FORMAT_VERSION,
    dialect: snapshot.dialect,
    migrations,
    created_at: nowIso(),
    version,
    tables: tables.map((t) => t.name),
  };
  const fileName = backupFileName(header.created_at);
  announce({ header, fileName });

  const writer = new LineWriter(out);
  await writer.line(header);
  const rows: Record<string, number> = {};
  for (const table of tables) {
    const line: TableHeader = { table: table.name, columns: table.columns, sequence: await snapshot.sequence(table) };
    await writer.line(line);
    let count = 0;
    for await (const batch of snapshot.rows(table)) {
      for (const row of batch) {
        await writer.line(row.map((value, i) => encodeValue(value, () => `${table.name}.${table.columns[i]}`)));
      }
      count += batch.length;
    }
    rows[table.name] = count;
  }
  const trailer: Trailer = { end: true, rows };
  await writer.line(trailer);
  await writer.flush();
  return { fileName, header, rows, totalRows: Object.values(rows).reduce((a, b) => a + b, 0) };
}

function withSnapshot<T>(handle: DatabaseHandle, fn: (snapshot: Snapshot) => Promise<T>): Promise<T> {
  return handle.dialect === 'postgres' ? withPgSnapshot(handle, fn) : withSqliteSnapshot(handle, fn);
}

/**
 * SQLite: copies the database with the online backup API into a scratch file beside it, then reads
 * the copy. The copy is consistent even while the service writes; reading it afterwards holds no
 * lock on the live database however slowly the backup is downloaded.
 */
async function withSqliteSnapshot<T>(handle: DatabaseHandle, fn: (snapshot: Snapshot) => Promise<T>): Promise<T> {
  const { rows } = await sql<{ name: string; file: string }>`select name, file from pragma_database_list where name = 'main'`.execute(handle.db);
  const file = rows[0]?.file;
  if (!file) throw new Error('an in-memory SQLite database cannot be backed up');
  const copyFile = join(dirname(file), `.${basename(file)}.backup-${process.pid}-${randomBytes(4).toString('hex')}`);
  const removeCopy = () => {
    for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(copyFile + suffix, { force: true });
  };
  try {
    const source = new SQLite(file, { fileMustExist: true });
    try {
      await copyDatabase(source, copyFile);
    } finally {
      source.close();
    }
    const copy = new SQLite(copyFile, { fileMustExist: true });
    try {
      return await fn(sqliteSnapshot(copy));
    } finally {
      copy.close();
    }
  } finally {
    removeCopy();
  }
}

/**
 * The backup API copies in steps and starts over when another connection writes between two
 * steps. Steps are large, and after one restart the rest is copied in a single step, so a busy
 * service cannot keep a backup from finishing.
 */
async function copyDatabase(source: SQLite.Database, target: string): Promise<void> {
  const STEP_PAGES = 4096;
  const ALL_PAGES = 0x7fffffff;
  let lastRemaining = Infinity;
  let restarted = false;
  await source.backup(target, {
    progress({ remainingPages }) {
      restarted ||= remainingPages > lastRemaining;
      lastRemaining = remainingPages;
      return restarted ? ALL_PAGES : STEP_PAGES;
    },
  });
}

function sqliteSnapshot(copy: SQLite.Database): Snapshot {
  return {
    dialect: 'sqlite',
    async migrations() {
      return copy.prepare('select name from kysely_migration order by name').pluck().all() as string[];
    },
    async sequence(table) {
      if (!table.identity) return null;
      const hasSequences = copy.prepare(`select 1 from sqlite_master where name = 'sqlite_sequence'`).get();
      if (!hasSequences) return null;
      const seq = copy.prepare('select seq from sqlite_sequence where name = ?').pluck().get(table.name) as number | undefined;
      return seq ?? null;
    },
    async *rows(table) {
      const statement = copy.prepare(`select ${table.columns.map(quoteName).join(', ')} from ${quoteName(table.name)}${orderBy(table)}`).raw(true);
      let batch: unknown[][] = [];
      for (const row of statement.iterate() as IterableIterator<unknown[]>) {
        batch.push(row);
        if (batch.length === BATCH) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length) yield batch;
    },
  };
}

/** PostgreSQL: one read-only REPEATABLE READ transaction sees one state of every table. */
async function withPgSnapshot<T>(handle: DatabaseHandle, fn: (snapshot: Snapshot) => Promise<T>): Promise<T> {
  return handle.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const db = trx as unknown as Kysely<unknown>;
      return fn({
        dialect: 'postgres',
        async migrations() {
          const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
          return rows.map((r) => r.name);
        },
        async sequence(table) {
          if (!table.identity) return null;
          const { rows } = await sql<{ value: number | null }>`
            select pg_sequence_last_value(pg_get_serial_sequence(${qualifiedName(table.name)}, ${table.identity})::regclass) as value`.execute(db);
          return rows[0]?.value ?? null;
        },
        async *rows(table) {
          // A cursor streams the table without holding it all in memory.
          const columns = sql.join(table.columns.map((c) => sql.id(c)));
          const order = table.primaryKey.length ? sql` order by ${sql.join(table.primaryKey.map((c) => sql.id(c)))}` : sql``;
          await sql`declare netwarden_backup no scroll cursor for select ${columns} from ${sql.id(table.name)}${order}`.execute(db);
          try {
            for (;;) {
              const { rows } = await sql<Record<string, unknown>>`fetch ${sql.lit(BATCH)} from netwarden_backup`.execute(db);
              if (!rows.length) break;
              yield rows.map((row) => table.columns.map((c) => row[c]));
            }
          } finally {
            await sql`close netwarden_backup`.execute(db);
          }
        },
      });
    });
}

/** `schema.table` as text, for catalogue functions that take a name. */
function qualifiedName(table: string) {
  return sql<string>`quote_ident(current_schema()) || '.' || quote_ident(${table})`;
}

function quoteName(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function orderBy(table: TableModel): string {
  return table.primaryKey.length ? ` order by ${table.primaryKey.map(quoteName).join(', ')}` : '';
}

// ---------------------------------------------------------------------------------------------
// Restore

export interface RestoreOptions {
  /**
   * Called inside the restore transaction once it holds the database's write lock: throws
   * (RestoreRefusedError) when another process is using the data. A process that starts using
   * the database after this point waits until the restore is over.
   */
  guard?: () => void | Promise<void>;
  /** The audit entry recorded in the restored data (action `restore_completed`). */
  audit: Omit<AuditEntry, 'action' | 'success' | 'details'> & { details?: Record<string, unknown> };
}

export interface RestoreSummary {
  header: BackupHeader;
  rows: Record<string, number>;
  totalRows: number;
  /** Migrations applied after the data was restored (the backup came from an older version). */
  upgradedWith: string[];
}

/** Reads just the header of a backup and checks it can be restored by this code. */
export async function inspectBackup(input: Readable): Promise<BackupHeader> {
  const lines = backupLines(input);
  try {
    const first = await lines.next();
    const header = parseHeader(first.done ? undefined : first.value.text);
    await checkRestorable(header);
    return header;
  } finally {
    await lines.return(undefined);
  }
}

async function checkRestorable(header: BackupHeader): Promise<TableModel[]> {
  const known = await knownMigrations();
  const unknown = header.migrations.filter((m) => !known.includes(m));
  if (unknown.length) {
    throw new BackupFileError(
      `was made by a newer Netwarden (${header.version}) whose database has migration${unknown.length === 1 ? '' : 's'} this version does not know (${unknown.join(', ')}): upgrade Netwarden to ${header.version} or later to restore it`,
    );
  }
  if (header.migrations.some((m, i) => known[i] !== m)) {
    throw new BackupFileError(`has a damaged header: its migrations (${header.migrations.join(', ')}) are not applied in order`);
  }
  const tables = await migrationTables(header.migrations);
  const expected = tables.map((t) => t.name).sort();
  const listed = [...header.tables].sort();
  if (expected.join() !== listed.join()) {
    throw new BackupFileError(`has a damaged header: it lists the tables ${listed.join(', ')} but its migrations create ${expected.join(', ')}`);
  }
  return tables;
}

/**
 * Replaces all data in the database with the backup read from `input`. Nothing changes unless the
 * whole file was read and restored: any error rolls everything back.
 */
export async function restoreBackup(handle: DatabaseHandle, input: Readable, options: RestoreOptions): Promise<RestoreSummary> {
  const lines = backupLines(input);
  try {
    const first = await lines.next();
    const header = parseHeader(first.done ? undefined : first.value.text);
    const tables = await checkRestorable(header);
    return await handle.db.connection().execute(async (conn) => {
      const db = conn as unknown as Kysely<unknown>;
      const transaction = handle.dialect === 'postgres' ? postgresTransaction : sqliteTransaction;
      return transaction(db, async (schema) => {
        await options.guard?.();
        await dropNetwardenTables(db, schema);
        await migrateThrough(db, handle.dialect, header.migrations, schema);
        const rows = await insertRows(db, handle.dialect, tables, lines);
        const before = await knownMigrations();
        await migrateThrough(db, handle.dialect, before, schema);
        const upgradedWith = before.slice(header.migrations.length);
        const totalRows = Object.values(rows).reduce((a, b) => a + b, 0);
        await new AuditStore(conn as Kysely<Database>).write({
          ...options.audit,
          action: 'restore_completed',
          success: true,
          details: {
            ...options.audit.details,
            backup_created_at: header.created_at,
            backup_version: header.version,
            backup_dialect: header.dialect,
            rows: totalRows,
            ...(upgradedWith.length ? { migrations_applied: upgradedWith } : {}),
          },
        });
        return { header, rows, totalRows, upgradedWith };
      });
    });
  } finally {
    await lines.return(undefined);
  }
}

type InTransaction<T> = (schema: string | undefined) => Promise<T>;

/**
 * SQLite: BEGIN IMMEDIATE takes the write lock at once. Foreign keys are checked once, at the
 * end, so tables can be dropped and filled in any order.
 */
async function sqliteTransaction<T>(db: Kysely<unknown>, fn: InTransaction<T>): Promise<T> {
  await sql`pragma foreign_keys = off`.execute(db);
  try {
    await sql`begin immediate`.execute(db);
    try {
      const result = await fn(undefined);
      const { rows } = await sql<{ table: string }>`select "table" from pragma_foreign_key_check`.execute(db);
      if (rows.length) throw new BackupFileError(`is inconsistent: rows of ${[...new Set(rows.map((r) => r.table))].join(', ')} refer to rows that are not in the backup`);
      await sql`commit`.execute(db);
      return result;
    } catch (err) {
      await sql`rollback`.execute(db).catch(() => {});
      throw err;
    }
  } finally {
    await sql`pragma foreign_keys = on`.execute(db);
  }
}

/**
 * PostgreSQL: DDL is transactional, so the whole restore is one transaction. The exclusive
 * schema lock fails at once if any other Netwarden connection to this schema is open (each holds
 * it shared, see db.ts) and makes new ones wait until the restore is over.
 */
async function postgresTransaction<T>(db: Kysely<unknown>, fn: InTransaction<T>): Promise<T> {
  await sql`begin`.execute(db);
  try {
    // Another application holding one of our tables must not make the restore hang.
    await sql`set local lock_timeout = '30s'`.execute(db);
    const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${sql.lit(PG_SCHEMA_LOCK.classId)}, ${sql.raw(PG_SCHEMA_LOCK.key)}) as ok`.execute(db);
    if (!rows[0]?.ok) throw new RestoreRefusedError(await describePgUsers(db));
    const { rows: schemaRows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
    const schema = schemaRows[0]?.schema;
    if (!schema) throw new Error('the database connection has no current schema to restore into (check search_path)');
    const result = await fn(schema);
    await sql`commit`.execute(db);
    return result;
  } catch (err) {
    await sql`rollback`.execute(db).catch(() => {});
    throw err;
  }
}

/**
 * Refuses (RestoreRefusedError) when another Netwarden process is connected to this PostgreSQL
 * schema. The restore checks again inside its transaction; this lets a caller refuse before doing
 * anything else. On SQLite there is no such thing to ask (see run-markers.ts).
 */
export async function assertNotInUse(handle: DatabaseHandle): Promise<void> {
  if (handle.dialect !== 'postgres') return;
  await handle.db.connection().execute(async (conn) => {
    const db = conn as unknown as Kysely<unknown>;
    const lock = sql`${sql.lit(PG_SCHEMA_LOCK.classId)}, ${sql.raw(PG_SCHEMA_LOCK.key)}`;
    const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${lock}) as ok`.execute(db);
    if (!rows[0]?.ok) throw new RestoreRefusedError(await describePgUsers(db));
    await sql`select pg_advisory_unlock(${lock})`.execute(db);
  });
}

/** Migrations applied to the database; empty for one Netwarden never used. */
export async function databaseMigrations(handle: DatabaseHandle): Promise<string[]> {
  const db = handle.db as unknown as Kysely<unknown>;
  if (handle.dialect !== 'postgres') return appliedMigrations(db, undefined);
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema ? appliedMigrations(db, rows[0].schema) : [];
}

/** Who else holds the schema lock, for the refusal message. */
async function describePgUsers(db: Kysely<unknown>): Promise<string> {
  const { rows } = await sql<{ client: string; application: string; since: string }>`
    select coalesce(host(a.client_addr), 'local socket') as client, a.application_name as application, a.backend_start::text as since
    from pg_locks l join pg_stat_activity a on a.pid = l.pid
    where l.locktype = 'advisory' and l.granted and l.pid <> pg_backend_pid()
      and l.classid = ${sql.lit(PG_SCHEMA_LOCK.classId)}::oid and l.objid = (${sql.raw(PG_SCHEMA_LOCK.key)})::oid and l.objsubid = 2
    order by a.backend_start`.execute(db);
  const who = rows.map((r) => `${r.client} (${r.application || 'no application name'}, connected ${r.since})`);
  return (
    `another Netwarden process is connected to this database schema (${who.length || 'at least one'} connection${who.length === 1 ? '' : 's'}${who.length ? `: ${[...new Set(who)].join('; ')}` : ''}); ` +
    'stop every `netwarden serve` and worker using it, then restore'
  );
}

/** Drops the tables the database's own migrations created, and the migrations' bookkeeping. */
async function dropNetwardenTables(db: Kysely<unknown>, schema: string | undefined): Promise<void> {
  const applied = await appliedMigrations(db, schema);
  const known = await knownMigrations();
  const unknown = applied.filter((m) => !known.includes(m));
  if (unknown.length) {
    throw new RestoreRefusedError(
      `the database was migrated by a newer Netwarden (migration${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')}): restore with that version`,
    );
  }
  const names = [...(await migrationTables(applied)).map((t) => t.name), ...MIGRATION_TABLES];
  // Children before the tables they reference.
  for (const name of names.reverse()) {
    await sql`drop table if exists ${schema ? sql.id(schema, name) : sql.id(name)}`.execute(db);
  }
}

async function appliedMigrations(db: Kysely<unknown>, schema: string | undefined): Promise<string[]> {
  const from = schema ? sql.id(schema, 'kysely_migration') : sql.id('kysely_migration');
  const exists = schema
    ? await sql`select 1 from information_schema.tables where table_schema = ${schema} and table_name = 'kysely_migration'`.execute(db)
    : await sql`select 1 from sqlite_master where type = 'table' and name = 'kysely_migration'`.execute(db);
  if (!exists.rows.length) return [];
  const { rows } = await sql<{ name: string }>`select name from ${from} order by name`.execute(db);
  return rows.map((r) => r.name);
}

/** Inserts each table's rows as they are read, checking the file's structure on the way. */
async function insertRows(
  db: Kysely<unknown>,
  dialect: Dialect,
  tables: TableModel[],
  lines: AsyncGenerator<{ text: string; number: number }>,
): Promise<Record<string, number>> {
  const byName = new Map(tables.map((t) => [t.name, t]));
  const counts: Record<string, number> = {};
  let current: { table: TableModel; header: TableHeader; batch: unknown[][] } | null = null;
  let lastLine = 1;
  const toSqlite = dialect === 'sqlite';

  const flush = async () => {
    if (!current?.batch.length) return;
    const { header, batch } = current;
    const columns = sql.join(header.columns.map((c) => sql.id(c)));
    const values = sql.join(batch.map((row) => sql`(${sql.join(row)})`));
    await sql`insert into ${sql.id(header.table)} (${columns}) values ${values}`.execute(db);
    current.batch = [];
  };
  const finishTable = async () => {
    if (!current) return;
    await flush();
    await setSequence(db, dialect, current.table, current.header.sequence);
  };

  for await (const { text, number } of lines) {
    lastLine = number;
    const where = `line ${number}`;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new BackupFileError(`is damaged: ${where} is not valid JSON`);
    }
    if (Array.isArray(value)) {
      if (!current) throw new BackupFileError(`is damaged: ${where} holds a row before any table`);
      if (value.length !== current.header.columns.length) {
        throw new BackupFileError(`is damaged: ${where} has ${value.length} values for the ${current.header.columns.length} columns of ${current.table.name}`);
      }
      try {
        current.batch.push(value.map((v) => decodeValue(v, toSqlite)));
      } catch (err) {
        throw new BackupFileError(`is damaged: ${where} ${(err as Error).message}`);
      }
      counts[current.table.name]++;
      // Bound the number of bind parameters per statement (SQLite allows 32766, PostgreSQL 65535).
      if (current.batch.length * current.header.columns.length >= 8000) await flush();
      continue;
    }
    if (typeof value === 'object' && value !== null && 'end' in value) {
      await finishTable();
      const problem = problemWith(Trailer, value);
      if (problem) throw new BackupFileError(`is damaged: ${where} (${problem})`);
      const expected = (value as Trailer).rows;
      for (const table of tables) {
        if ((counts[table.name] ?? -1) !== expected[table.name]) {
          throw new BackupFileError(`is incomplete: table ${table.name} should have ${expected[table.name] ?? 'no'} rows but ${counts[table.name] ?? 'none'} were found`);
        }
      }
      const after = await lines.next();
      if (!after.done && after.value.text.trim() !== '') throw new BackupFileError(`is damaged: there is data after its last line (${where})`);
      return counts;
    }
    const problem = problemWith(TableHeader, value);
    if (problem) throw new BackupFileError(`is damaged: ${where} is neither a row nor a table header (${problem})`);
    const header = value as TableHeader;
    const table = byName.get(header.table);
    if (!table) throw new BackupFileError(`is damaged: ${where} starts table ${header.table}, which its migrations do not create`);
    if (header.table in counts) throw new BackupFileError(`is damaged: table ${header.table} appears twice (${where})`);
    const extra = header.columns.filter((c) => !table.columns.includes(c));
    const missing = table.columns.filter((c) => !header.columns.includes(c));
    if (extra.length || missing.length) {
      throw new BackupFileError(
        `is damaged: the columns of ${header.table} (${where}) do not match its schema${extra.length ? `; unknown: ${extra.join(', ')}` : ''}${missing.length ? `; missing: ${missing.join(', ')}` : ''}`,
      );
    }
    await finishTable();
    current = { table, header, batch: [] };
    counts[table.name] = 0;
  }
  throw new BackupFileError(
    `is incomplete: it ends at line ${lastLine}${current ? `, in table ${current.table.name} after ${counts[current.table.name]} rows,` : ''} without its final line (the file was cut short)`,
  );
}

/** Sets the table's id counter to what it was, and never below the highest restored id. */
async function setSequence(db: Kysely<unknown>, dialect: Dialect, table: TableModel, recorded: number | null): Promise<void> {
  if (!table.identity) return;
  const { rows } = await sql<{ max: number | null }>`select max(${sql.id(table.identity)}) as max from ${sql.id(table.name)}`.execute(db);
  const last = Math.max(recorded ?? 0, rows[0]?.max ?? 0);
  if (dialect === 'postgres') {
    const sequence = sql`pg_get_serial_sequence(${qualifiedName(table.name)}, ${table.identity})`;
    // setval(…, 1, false): the next id is 1, as in a table that never had a row.
    await (last > 0 ? sql`select setval(${sequence}, ${last}, true)` : sql`select setval(${sequence}, 1, false)`).execute(db);
  } else {
    await sql`delete from sqlite_sequence where name = ${table.name}`.execute(db);
    if (last > 0) await sql`insert into sqlite_sequence (name, seq) values (${table.name}, ${last})`.execute(db);
  }
}
