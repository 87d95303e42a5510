import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropPgSchema, ensurePgSchema } from '../../src/store/db.js';
import { afterEach, beforeEach } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';

export interface TestDatabase {
  /** `sqlite` or `postgres`: use in describe titles. */
  kind: 'sqlite' | 'postgres';
  /** Opens a fresh, migrated, empty store; `cleanup` removes every trace of it. */
  open(): Promise<{ store: Store; url: string; pgSchema?: string; cleanup(): Promise<void> }>;
}

const sqlite: TestDatabase = {
  kind: 'sqlite',
  async open() {
    const dir = mkdtempSync(join(tmpdir(), 'netwarden-test-'));
    const url = join(dir, 'netwarden.db');
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

function postgres(url: string): TestDatabase {
  return {
    kind: 'postgres',
    async open() {
      const schema = `nw_test_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
      await ensurePgSchema(url, schema);
      const store = await openStore({ url, pgSchema: schema, poolSize: 5 });
      return {
        store,
        url,
        pgSchema: schema,
        async cleanup() {
          await store.close().catch(() => {});
          await dropPgSchema(url, schema);
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
