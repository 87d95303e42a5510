/**
 * The SQLite database file: who may read it, what happens when another process locks it, and
 * when it disappears under the open store.
 */
import { mkdtempSync, rmSync, statSync, unlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../../src/store/db.js';
import { openStore, type Store } from '../../src/store/index.js';
import { lockFromAnotherProcess, type ForeignLock } from '../helpers/sqlite-lock.js';

const mode = (path: string) => statSync(path).mode & 0o777;

let root: string;
let store: Store | undefined;
let lock: ForeignLock | undefined;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'netwarden-sqlite-'));
});
afterEach(async () => {
  if (lock && lock.child.exitCode === null) lock.child.kill();
  lock = undefined;
  await store?.close().catch(() => {});
  store = undefined;
  rmSync(root, { recursive: true, force: true });
});

describe('file permissions', () => {
  it.each(['000', '022'])('creates the data directory 0700 and the database, -wal and -shm 0600 (umask %s)', async (umask) => {
    const previous = process.umask(Number.parseInt(umask, 8));
    try {
      const dataDir = join(root, 'new', 'data');
      const file = join(dataDir, 'netwarden.db');
      store = await openStore({ url: file });
      await store.users.createFirst('admin', 'not-a-real-hash');
      expect(mode(join(root, 'new')).toString(8)).toBe('700');
      expect(mode(dataDir).toString(8)).toBe('700');
      for (const suffix of ['', '-wal', '-shm']) expect(mode(file + suffix).toString(8), `netwarden.db${suffix}`).toBe('600');
    } finally {
      process.umask(previous);
    }
  });

  it('leaves an existing directory and database file as they are', async () => {
    const file = join(root, 'netwarden.db');
    chmodSync(root, 0o750);
    writeFileSync(file, '');
    chmodSync(file, 0o640);
    store = await openStore({ url: file });
    expect(mode(root).toString(8)).toBe('750');
    expect(mode(file).toString(8)).toBe('640');
  });
});

describe('another process holding a lock', () => {
  it('runs a transaction once the lock is released, while reads go on meanwhile', async () => {
    const file = join(root, 'netwarden.db');
    store = await openStore({ url: file });
    lock = await lockFromAnotherProcess(file);
    const created = store.users.createFirst('admin', 'not-a-real-hash');
    // Reads are not blocked by the other process's write lock (WAL), nor by the waiting transaction.
    expect(await store.users.count()).toBe(0);
    await lock.release();
    expect((await created)?.username).toBe('admin');
    expect(await store.users.count()).toBe(1);
  });

  it('gives up after the deadline with DatabaseUnavailableError, having written nothing', async () => {
    const file = join(root, 'netwarden.db');
    store = await openStore({ url: file, lockRetry: { deadlineMs: 300 } });
    lock = await lockFromAnotherProcess(file);
    const transaction = store.users.createFirst('admin', 'not-a-real-hash');
    await expect(transaction).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(transaction).rejects.toMatchObject({ retryAfterSeconds: 5, message: expect.stringMatching(/locked by another process/) });
    const single = store.settings.get().then(() => store!.db.deleteFrom('sessions').execute());
    await expect(single).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await lock.release();
    expect(await store.users.count()).toBe(0);
    expect((await store.users.createFirst('admin', 'not-a-real-hash'))?.username).toBe('admin');
  });
});

describe('the database file deleted under the open store', () => {
  it('fails the health ping and refuses writes, which would otherwise go to the deleted file', async () => {
    const file = join(root, 'netwarden.db');
    store = await openStore({ url: file });
    await store.ping();
    unlinkSync(file);
    await expect(store.ping()).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(store.users.createFirst('admin', 'not-a-real-hash')).rejects.toThrow(/was deleted/);
    await expect(store.db.deleteFrom('sessions').execute()).rejects.toThrow(/was deleted/);
    // Reading what is still open keeps working.
    expect(await store.users.count()).toBe(0);
  });
});
