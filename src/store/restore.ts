/**
 * Restore of a backup (backup.ts, backup-format.ts). No CLI here: `netwarden restore` is a thin
 * layer over this.
 *
 * A restore replaces every Netwarden table in one transaction: it drops them, recreates them with
 * the migrations the backup was made with, inserts the rows as they are read, sets the id
 * counters, then applies any newer migrations, so a backup of an older version restores into a
 * newer one. A failure anywhere (a damaged or cut file included) leaves the database as it was.
 *
 * What is checked as the file is read: its structure (a header, table sections with the columns
 * of the backup's migrations, rows of the right width, the row counts of the last line), each
 * row's content (backup-content.ts: types, NOT NULL, JSON columns), and the checksum of the last
 * line (backup-format.ts; absent from format 1). The file is read once, in time linear in its size.
 */
import { createHash, type Hash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { sql, type Kysely } from 'kysely';
import { AuditStore, type AuditEntry } from './audit.js';
import { rowChecker } from './backup-content.js';
import {
  BackupFileError,
  CHECKSUM_FORMAT_VERSION,
  TableHeader,
  Trailer,
  backupLines,
  decodeValue,
  parseHeader,
  problemWith,
  type BackupHeader,
} from './backup-format.js';
import {
  MIGRATION_TABLES,
  knownMigrations,
  migrateThrough,
  migrationTables,
  migrationVirtualTables,
  pgTableName,
  type TableModel,
} from './backup-tables.js';
import { PG_SCHEMA_LOCK, type DatabaseHandle } from './db.js';
import type { Dialect } from './migrations/index.js';
import { NetwardenError } from '../util/errors.js';

export { BackupFileError, type BackupHeader } from './backup-format.js';

/** Restore refused because something else is using the database. */
export class RestoreRefusedError extends NetwardenError {
  readonly code = 'NW_RESTORE_REFUSED';
}

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
  /** `verified`: the file's checksum matched its content; `absent`: the file has none (format 1, older Netwarden). */
  checksum: 'verified' | 'absent';
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
    const hash = createHash('sha256').update(`${first.done ? '' : first.value.text}\n`, 'utf8');
    return await handle.db.connection().execute(async (conn) => {
      const db = conn as unknown as Kysely<unknown>;
      const transaction = handle.dialect === 'postgres' ? postgresTransaction : sqliteTransaction;
      return transaction(db, async (schema) => {
        await options.guard?.();
        await dropNetwardenTables(db, schema);
        await migrateThrough(db, handle.dialect, header.migrations, schema);
        const { counts: rows, checksum } = await insertRows(db, handle.dialect, header, tables, lines, hash);
        const latest = await knownMigrations();
        await migrateThrough(db, handle.dialect, latest, schema);
        const upgradedWith = latest.slice(header.migrations.length);
        const totalRows = Object.values(rows).reduce((a, b) => a + b, 0);
        await new AuditStore(conn).write({
          ...options.audit,
          action: 'restore_completed',
          success: true,
          details: {
            ...options.audit.details,
            backup_created_at: header.created_at,
            backup_version: header.version,
            backup_dialect: header.dialect,
            rows: totalRows,
            checksum,
            ...(upgradedWith.length ? { migrations_applied: upgradedWith } : {}),
          },
        });
        return { header, rows, totalRows, upgradedWith, checksum };
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
      if (rows.length)
        throw new BackupFileError(
          `is inconsistent: rows of ${[...new Set(rows.map((r) => r.table))].join(', ')} refer to rows that are not in the backup`,
        );
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
    const { rows } = await sql<{
      ok: boolean;
    }>`select pg_try_advisory_xact_lock(${sql.lit(PG_SCHEMA_LOCK.classId)}, ${sql.raw(PG_SCHEMA_LOCK.key)}) as ok`.execute(db);
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
  // SQLite's virtual tables (the search index) first: they reference no table, and none references them.
  const virtual = schema ? [] : await migrationVirtualTables(applied);
  const names = [...(await migrationTables(applied)).map((t) => t.name), ...MIGRATION_TABLES, ...virtual];
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

/**
 * Inserts each table's rows as they are read, checking the file's structure and each row's
 * content on the way, and the checksum at the end (`hash` holds the header line already).
 */
async function insertRows(
  db: Kysely<unknown>,
  dialect: Dialect,
  backup: BackupHeader,
  tables: TableModel[],
  lines: AsyncGenerator<{ text: string; number: number }>,
  hash: Hash,
): Promise<{ counts: Record<string, number>; checksum: RestoreSummary['checksum'] }> {
  const byName = new Map(tables.map((t) => [t.name, t]));
  const counts: Record<string, number> = {};
  let current: { table: TableModel; header: TableHeader; batch: unknown[][]; check: (row: readonly unknown[]) => string | null } | null = null;
  let lastLine = 1;
  const toSqlite = dialect === 'sqlite';

  const flush = async () => {
    if (!current?.batch.length) return;
    const { header, batch } = current;
    const columns = sql.join(header.columns.map((c) => sql.id(c)));
    const values = sql.join(batch.map((row) => sql`(${sql.join(row)})`));
    try {
      await sql`insert into ${sql.id(header.table)} (${columns}) values ${values}`.execute(db);
    } catch (err) {
      // Rows the database refuses (a key twice, a reference to nothing) are the file's fault.
      if (isConstraintViolation(err)) {
        throw new BackupFileError(`is damaged: rows of ${header.table} up to line ${lastLine} break its constraints (${(err as Error).message})`);
      }
      throw err;
    }
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
    const isTrailer = typeof value === 'object' && value !== null && 'end' in value;
    if (!isTrailer) hash.update(text, 'utf8').update('\n', 'utf8');
    if (Array.isArray(value)) {
      if (!current) throw new BackupFileError(`is damaged: ${where} holds a row before any table`);
      if (value.length !== current.header.columns.length) {
        throw new BackupFileError(
          `is damaged: ${where} has ${value.length} values for the ${current.header.columns.length} columns of ${current.table.name}`,
        );
      }
      const problem = current.check(value);
      if (problem) throw new BackupFileError(`is damaged: ${where}: ${problem}`);
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
    if (isTrailer) {
      await finishTable();
      const problem = problemWith(Trailer, value);
      if (problem) throw new BackupFileError(`is damaged: ${where} (${problem})`);
      const { rows: expected, sha256 } = value as Trailer;
      for (const table of tables) {
        if ((counts[table.name] ?? -1) !== expected[table.name]) {
          throw new BackupFileError(
            `is incomplete: table ${table.name} should have ${expected[table.name] ?? 'no'} rows but ${counts[table.name] ?? 'none'} were found`,
          );
        }
      }
      if (sha256 === undefined && backup.format_version >= CHECKSUM_FORMAT_VERSION) {
        throw new BackupFileError(`is damaged: its last line (${where}) has no checksum, which backup format ${backup.format_version} always has`);
      }
      if (sha256 !== undefined && hash.digest('hex') !== sha256) {
        throw new BackupFileError('is damaged or was modified: its content does not match the checksum on its last line');
      }
      const after = await lines.next();
      if (!after.done && after.value.text.trim() !== '') throw new BackupFileError(`is damaged: there is data after its last line (${where})`);
      return { counts, checksum: sha256 === undefined ? 'absent' : 'verified' };
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
    current = { table, header, batch: [], check: rowChecker(table, header.columns) };
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
    const sequence = sql`pg_get_serial_sequence(${pgTableName(table.name)}, ${table.identity})`;
    // setval(…, 1, false): the next id is 1, as in a table that never had a row.
    await (last > 0 ? sql`select setval(${sequence}, ${last}, true)` : sql`select setval(${sequence}, 1, false)`).execute(db);
  } else {
    await sql`delete from sqlite_sequence where name = ${table.name}`.execute(db);
    if (last > 0) await sql`insert into sqlite_sequence (name, seq) values (${table.name}, ${last})`.execute(db);
  }
}

/** A database's refusal of a value or row (SQLite SQLITE_CONSTRAINT_*, PostgreSQL classes 22 and 23), not a failure of the database. */
function isConstraintViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return code.startsWith('SQLITE_CONSTRAINT') || /^2[23][0-9A-Z]{3}$/.test(code);
}
