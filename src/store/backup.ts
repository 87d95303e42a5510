/**
 * Backup of the whole database (format: backup-format.ts; restore: restore.ts). No HTTP or CLI
 * here: GET /api/backup and `netwarden backup` are thin layers over this.
 *
 * A backup is a consistent snapshot taken while the service keeps writing: on SQLite through the
 * online backup API into a scratch copy that is then read at leisure, on PostgreSQL inside one
 * read-only REPEATABLE READ transaction. Rows are streamed out as the file is read.
 */
import { createHash, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { createGzip, type Gzip } from 'node:zlib';
import SQLite from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  LineWriter,
  backupFileName,
  encodeValue,
  type BackupHeader,
  type TableHeader,
  type Trailer,
} from './backup-format.js';
import { knownMigrations, migrationTables, pgTableName, type TableModel } from './backup-tables.js';
import { nowIso } from './clock.js';
import type { DatabaseHandle } from './db.js';
import type { Dialect } from './migrations/index.js';

export { backupFileName, type BackupHeader } from './backup-format.js';

/** Rows read per query or cursor fetch. */
const BATCH = 500;

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
  if (unknown.length)
    throw new Error(
      `the database has migrations this Netwarden does not know (${unknown.join(', ')}); back it up with the version that applied them`,
    );
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

  const writer = new LineWriter(out, createHash('sha256'));
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
  const trailer: Trailer = { end: true, rows, sha256: writer.digest() };
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
            select pg_sequence_last_value(pg_get_serial_sequence(${pgTableName(table.name)}, ${table.identity})::regclass) as value`.execute(db);
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

function quoteName(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function orderBy(table: TableModel): string {
  return table.primaryKey.length ? ` order by ${table.primaryKey.map(quoteName).join(', ')}` : '';
}
