/**
 * WAL checkpoints of a SQLite database, off the thread that writes.
 *
 * SQLite's automatic checkpoint runs inside the COMMIT that pushes the write-ahead log past 1000
 * pages: that commit copies the whole log back into the database file and syncs both, on the
 * event loop. For the 10,000-host import that was about 40 % of the time spent in COMMIT (measured
 * with `wal_autocheckpoint = 0` against the default, same run). Here the connection that writes has
 * automatic checkpoints off, and a worker thread with a connection of its own runs PASSIVE
 * checkpoints after commits (never waiting for readers or writers; SQLite lets a checkpoint run
 * beside a write transaction). Durability is unchanged: the checkpointer uses the same
 * synchronous setting, and what was committed is in the log either way.
 *
 * The thread is started only once the log has grown past SQLite's own threshold (a server that
 * writes little never starts it). Bounds: when the log file reaches `maxWalBytes` (the thread is
 * not keeping up, or cannot start), the writing connection checkpoints itself, as SQLite would;
 * when the thread fails, automatic checkpoints are turned back on. `journal_size_limit` lets SQLite
 * shrink a log file that grew during a large transaction once it starts over.
 */
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

/** SQLite's default automatic checkpoint threshold (1000 pages of 4 KiB): below it no thread is started. */
const START_AT_BYTES = 4 * 1024 * 1024;
/** The log file size at which the writing connection checkpoints itself. */
const MAX_WAL_BYTES = 256 * 1024 * 1024;
/** What SQLite truncates the log file to when it starts over after a checkpoint. */
const JOURNAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
db.pragma('synchronous = NORMAL');
db.pragma('wal_autocheckpoint = 0');
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  let result;
  try {
    const [row] = db.pragma('wal_checkpoint(PASSIVE)');
    result = { log: row.log, checkpointed: row.checkpointed };
  } catch (err) {
    // Another checkpoint running (the other process's) or a lock held: the next commit asks again.
    result = { error: String(err && err.message) };
  }
  parentPort.postMessage(result);
});
`;

export interface Checkpointer {
  /** Called after a write was committed on the writing connection. */
  afterCommit(): void;
  /** Resolves once no checkpoint is running or asked for. */
  idle(): Promise<void>;
  /** Stops the thread (after the checkpoint it is running, if any); resolves once it has closed its connection. */
  close(): Promise<void>;
}

export function backgroundCheckpoints(sqlite: SQLite.Database, file: string): Checkpointer {
  sqlite.pragma('wal_autocheckpoint = 0');
  sqlite.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
  const walFile = `${file}-wal`;
  let worker: Worker | null = null;
  let failed = false;
  let running = false;
  let again = false;
  let closed: Promise<void> | null = null;
  let waiters: (() => void)[] = [];

  const walBytes = () => {
    try {
      return statSync(walFile).size;
    } catch {
      return 0;
    }
  };

  /** The thread is gone: SQLite's own automatic checkpoints take over again. */
  const fallBack = () => {
    failed = true;
    worker = null;
    settled();
    if (sqlite.open) sqlite.pragma('wal_autocheckpoint = 1000');
  };

  const settled = () => {
    running = false;
    again = false;
    const done = waiters;
    waiters = [];
    for (const resolve of done) resolve();
  };

  const request = () => {
    if (!worker) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    worker.postMessage('checkpoint');
  };

  const start = () => {
    const w = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { driver: createRequire(import.meta.url).resolve('better-sqlite3'), file },
    });
    // The thread must not keep the process alive; close() ends it properly.
    w.unref();
    w.on('message', () => {
      if (!again) return settled();
      running = false;
      again = false;
      request();
    });
    w.on('error', fallBack);
    w.on('exit', () => {
      if (!closed) fallBack();
    });
    worker = w;
  };

  return {
    afterCommit() {
      if (failed || closed) return;
      const size = walBytes();
      if (size >= MAX_WAL_BYTES) {
        // Not keeping up (or long readers hold the log): checkpoint here, as SQLite would have.
        sqlite.pragma('wal_checkpoint(PASSIVE)');
        return;
      }
      if (!worker) {
        if (size < START_AT_BYTES) return;
        start();
      }
      request();
    },
    idle() {
      return running ? new Promise<void>((resolve) => waiters.push(resolve)) : Promise.resolve();
    },
    close() {
      if (!closed) {
        const w = worker;
        worker = null;
        closed = w
          ? new Promise<void>((resolve) => {
              w.once('exit', () => resolve());
              // Held while it closes: an unreferenced thread could be cut off by the process ending first.
              w.ref();
              w.postMessage('close');
            })
          : Promise.resolve();
      }
      return closed;
    },
  };
}
