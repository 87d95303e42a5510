/**
 * WAL checkpoints off the writing thread (store/sqlite-checkpoint.ts): a large write reaches the
 * database file through the checkpointing thread, not through the COMMIT, and closing the store
 * leaves no log behind.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/store/db.js';
import { backgroundCheckpoints } from '../../src/store/sqlite-checkpoint.js';

let root: string;
let handle: DatabaseHandle | undefined;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'netwarden-checkpoint-'));
});
afterEach(async () => {
  await handle?.close().catch(() => {});
  handle = undefined;
  rmSync(root, { recursive: true, force: true });
});

/** Writes about `mib` MiB in one transaction. */
async function writeMib(db: DatabaseHandle['db'], mib: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < mib * 16; i++) {
      await sql`insert into blobs (data) values (randomblob(65536))`.execute(trx);
    }
  });
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('background checkpoints', () => {
  it('copies a large commit into the database file after the COMMIT, and checkpoints nothing in it', async () => {
    const file = join(root, 'netwarden.db');
    handle = openDatabase({ url: file });
    await sql`create table blobs (id integer primary key, data blob)`.execute(handle.db);
    const before = statSync(file).size;
    await writeMib(handle.db, 8);
    // Right after the COMMIT the pages are in the log only (8 MiB is past SQLite's own threshold,
    // at which its automatic checkpoint would have copied them during the COMMIT).
    expect(statSync(file).size).toBe(before);
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(8 * 1024 * 1024);
    await until(() => statSync(file).size > 8 * 1024 * 1024);
    // Another connection reads everything committed.
    const reader = new SQLite(file, { readonly: true });
    try {
      expect(reader.prepare('select count(*) as n from blobs').get()).toEqual({ n: 128 });
    } finally {
      reader.close();
    }
  });

  it('keeps the log bounded over repeated large writes: each is copied back before the next, so the log starts over', async () => {
    const file = join(root, 'netwarden.db');
    const sqlite = new SQLite(file);
    sqlite.pragma('journal_mode = WAL');
    const checkpoints = backgroundCheckpoints(sqlite, file);
    try {
      sqlite.exec('create table blobs (id integer primary key, data blob)');
      const insert = sqlite.prepare('insert into blobs (data) values (randomblob(65536))');
      for (let round = 0; round < 6; round++) {
        sqlite.transaction(() => {
          for (let i = 0; i < 96; i++) insert.run();
        })();
        checkpoints.afterCommit();
        await checkpoints.idle();
      }
      expect(statSync(`${file}-wal`).size).toBeLessThan(8 * 1024 * 1024);
      expect(statSync(file).size).toBeGreaterThan(36 * 1024 * 1024);
    } finally {
      await checkpoints.close();
      sqlite.close();
    }
    expect(existsSync(`${file}-wal`)).toBe(false);
  });

  it('closing the store removes the log', async () => {
    const file = join(root, 'netwarden.db');
    handle = openDatabase({ url: file });
    await sql`create table blobs (id integer primary key, data blob)`.execute(handle.db);
    await writeMib(handle.db, 6);
    await handle.close();
    handle = undefined;
    expect(existsSync(`${file}-wal`)).toBe(false);
    const reader = new SQLite(file, { readonly: true });
    try {
      expect(reader.prepare('select count(*) as n from blobs').get()).toEqual({ n: 96 });
    } finally {
      reader.close();
    }
  });
});
