/**
 * Kysely driver for better-sqlite3 that keeps the event loop free when another process holds a
 * lock on the database file.
 *
 * better-sqlite3 is synchronous: with SQLite's busy timeout doing the waiting, one write blocked
 * by an outside lock (a backup tool, the sqlite3 shell in a transaction) freezes every request
 * for the whole timeout. Here SQLite waits only briefly (see SQLITE_BUSY_TIMEOUT_MS in db.ts);
 * the rest of the waiting is done between attempts on timers, so other requests are served
 * meanwhile, and when the lock outlasts the deadline the query fails with
 * DatabaseUnavailableError (503 with Retry-After at the API).
 *
 * There is one SQLite connection, used by one query or one transaction at a time; a query
 * waiting out another process's lock lets others use it in the meantime. Transactions start with
 * BEGIN IMMEDIATE: the write lock is taken up front, so within a transaction only the BEGIN can
 * meet another process's lock, and it is safe to retry (a deferred transaction could instead fail
 * half-way, unable to upgrade a read snapshot that went stale while it waited).
 */
import type SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';
import { DatabaseUnavailableError } from './errors.js';

export interface LockRetry {
  /** Give up after this long (ms) and report the database as unavailable. */
  deadlineMs: number;
  /** First pause between attempts (ms); doubled after each attempt up to `maxDelayMs`. */
  firstDelayMs: number;
  maxDelayMs: number;
}

export interface ResilientSqliteOptions {
  sqlite: SQLite.Database;
  retry: LockRetry;
  /** Called before anything writes; throws when writing would be lost (the file was deleted). */
  beforeWrite(): void;
  /** Called after a write was committed (a transaction's COMMIT, or a write outside a transaction). */
  afterWrite?(): void;
  /** Prepared statements kept, by SQL text. */
  statementCacheSize?: number;
}

export function resilientSqliteDialect(options: ResilientSqliteOptions): Dialect {
  return {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new ResilientSqliteDriver(options),
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's Dialect interface declares this parameter as Kysely<any>
    createIntrospector: (db: Kysely<any>) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function isBusy(err: unknown): boolean {
  return typeof (err as { code?: unknown }).code === 'string' && (err as { code: string }).code.startsWith('SQLITE_BUSY');
}

/** Who may use the SQLite connection: one query, or one transaction from BEGIN until its connection is released. */
class ConnectionLock {
  #held: Promise<void> | null = null;
  #release: (() => void) | null = null;

  async acquire(): Promise<void> {
    // The check and the taking happen in one synchronous step, so two waiters cannot both win.
    while (this.#held) await this.#held;
    this.#held = new Promise((resolve) => (this.#release = resolve));
  }

  release(): void {
    const release = this.#release;
    this.#held = null;
    this.#release = null;
    release?.();
  }

  /** Resolves once nobody holds the lock. */
  async idle(): Promise<void> {
    while (this.#held) await this.#held;
  }
}

class ResilientSqliteDriver implements Driver {
  readonly lock = new ConnectionLock();
  readonly #statements = new Map<string, SQLite.Statement>();

  constructor(readonly options: ResilientSqliteOptions) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new Lease(this);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as Lease).begin();
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
    this.options.afterWrite?.();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as Lease).end();
  }

  async destroy(): Promise<void> {
    await this.lock.idle();
    this.options.sqlite.close();
  }

  /**
   * Kysely prepares every query anew; preparing costs more than running a cached statement, so
   * the statements are kept by SQL text (bounded, least recently used first out). Safe because
   * statements run one at a time, synchronously, and nothing here streams results.
   */
  prepare(sqlText: string): SQLite.Statement {
    let statement = this.#statements.get(sqlText);
    if (statement) {
      this.#statements.delete(sqlText);
    } else {
      statement = this.options.sqlite.prepare(sqlText);
      if (this.#statements.size >= (this.options.statementCacheSize ?? 500)) {
        this.#statements.delete(this.#statements.keys().next().value as string);
      }
    }
    this.#statements.set(sqlText, statement);
    return statement;
  }

  /**
   * Runs `attempt` until it does not fail with SQLITE_BUSY, pausing between attempts, and gives
   * up at the deadline. `between` runs after a failed attempt and `resume` before the next: a
   * caller outside a transaction lets go of the connection there, so others can use it meanwhile.
   */
  async retryWhileBusy<T>(attempt: () => T, between?: () => void, resume?: () => Promise<void>): Promise<T> {
    const { deadlineMs, firstDelayMs, maxDelayMs } = this.options.retry;
    const deadline = Date.now() + deadlineMs;
    for (let delay = firstDelayMs; ; delay = Math.min(delay * 2, maxDelayMs)) {
      try {
        return attempt();
      } catch (err) {
        if (!isBusy(err)) throw err;
        between?.();
        if (Date.now() + delay > deadline) {
          throw new DatabaseUnavailableError(`the database file is locked by another process (waited ${deadlineMs} ms)`, {
            detail: 'The database is locked by another process; try again shortly',
            retryAfterSeconds: 5,
            cause: err,
          });
        }
        await sleep(delay);
        await resume?.();
      }
    }
  }
}

/**
 * What Kysely calls a connection: a turn on the one SQLite connection, for a query or for a
 * transaction. While it waits out another process's lock it lets go of the connection, except
 * inside a transaction (nothing else may run in the middle of one).
 */
class Lease implements DatabaseConnection {
  #holding = false;
  #inTransaction = false;

  constructor(private readonly driver: ResilientSqliteDriver) {}

  async begin(): Promise<void> {
    await this.hold();
    try {
      this.driver.options.beforeWrite();
      await this.driver.retryWhileBusy(
        () => this.driver.prepare('begin immediate').run(),
        () => this.letGo(),
        () => this.hold(),
      );
      this.#inTransaction = true;
    } catch (err) {
      this.letGo();
      throw err;
    }
  }

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const parameters = compiledQuery.parameters as unknown[];
    if (this.#inTransaction) {
      const statement = this.driver.prepare(compiledQuery.sql);
      return this.driver.retryWhileBusy(() => run<R>(statement, parameters));
    }
    await this.hold();
    try {
      const statement = this.driver.prepare(compiledQuery.sql);
      if (statement.readonly) {
        return await this.driver.retryWhileBusy(
          () => run<R>(statement, parameters),
          () => this.letGo(),
          () => this.hold(),
        );
      }
      this.driver.options.beforeWrite();
      const result = await this.driver.retryWhileBusy(
        () => run<R>(statement, parameters),
        () => this.letGo(),
        () => this.hold(),
      );
      this.driver.options.afterWrite?.();
      return result;
    } finally {
      this.letGo();
    }
  }

  // eslint-disable-next-line require-yield -- Kysely's Driver interface wants an async generator; this one only refuses
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries is not supported by this SQLite driver');
  }

  /** Called when Kysely releases the connection: ends anything left open and frees the connection. */
  end(): void {
    if (this.#inTransaction && this.driver.options.sqlite.inTransaction) {
      // Kysely commits or rolls back before releasing; this is only a safety net so a failed
      // rollback cannot leave the one connection inside a transaction.
      try {
        this.driver.options.sqlite.exec('rollback');
      } catch {
        // the connection is freed either way
      }
    }
    this.#inTransaction = false;
    this.letGo();
  }

  private async hold(): Promise<void> {
    await this.driver.lock.acquire();
    this.#holding = true;
  }

  private letGo(): void {
    if (!this.#holding) return;
    this.#holding = false;
    this.driver.lock.release();
  }
}

function run<R>(statement: SQLite.Statement, parameters: unknown[]): QueryResult<R> {
  if (statement.reader) return { rows: statement.all(parameters) as R[] };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}
