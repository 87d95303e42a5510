import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { isPostgres } from '../../src/store/bulk.js';
import { FILLFACTOR } from '../../src/store/migrations/029_hot_updates.js';
import type { Store } from '../../src/store/index.js';
import { freshDatabaseEachTest, testDatabases } from '../helpers/databases.js';

describe.each(testDatabases())('migration 029: room for updated rows ($kind)', (database) => {
  let store: Store;
  freshDatabaseEachTest(database, (opened) => {
    store = opened.store;
  });

  it('leaves room on the pages of the tables an import updates (PostgreSQL)', async () => {
    if (!isPostgres(store.db)) return;
    const { rows } = await sql<{ name: string; options: string[] | null }>`
      select relname as name, reloptions as options from pg_class
      where oid in (${sql.join(Object.keys(FILLFACTOR).map((t) => sql`to_regclass(${t})`))})`.execute(store.db);
    expect(Object.fromEntries(rows.map((r) => [r.name, r.options]))).toEqual(
      Object.fromEntries(Object.entries(FILLFACTOR).map(([t, percent]) => [t, [`fillfactor=${percent}`]])),
    );
  });
});
