import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { insertManyWith, insertTuples, isPostgres, updateManyById } from '../../src/store/bulk.js';
import type { Store } from '../../src/store/index.js';
import { rowsPerInsert } from '../../src/util/batches.js';
import { freshDatabaseEachTest, testDatabases } from '../helpers/databases.js';

const FINDING = {
  device_id: 'integer',
  port: 'integer',
  severity: 'text',
  score: 'integer',
  title: 'text',
  description: 'text',
  recommendation: 'text',
} as const;

/** Devices 10.9.x.y, one per index, returning their ids in order. */
async function addDevices(store: Store, count: number): Promise<number[]> {
  const at = '2026-01-01T00:00:00.000Z';
  const rows = await insertManyWith<{ id: number }>(
    store.db,
    'devices',
    { identity: 'text', ip_address: 'text', ip_sort: 'bigint', first_seen: 'text', last_seen: 'text' },
    Array.from({ length: count }, (_, i) => ({
      identity: `ip:10.9.${i >> 8}.${i & 255}`,
      ip_address: `10.9.${i >> 8}.${i & 255}`,
      ip_sort: 0x0a090000 + i,
      first_seen: at,
      last_seen: at,
    })),
    'returning id',
  );
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

describe.each(testDatabases())('bulk writes ($kind)', (database) => {
  let store: Store;
  freshDatabaseEachTest(database, (opened) => {
    store = opened.store;
  });

  // Around a statement's row limit and its power-of-two remainders (store/bulk.ts sqliteBatches).
  const per = rowsPerInsert(Object.keys(FINDING).length);
  it.each([1, 3, per - 1, per, per + 1, 2 * per + 93])('inserts %i rows given as tuples, every value in its column', async (count) => {
    const [deviceId] = await addDevices(store, 1);
    const tuples = Array.from({ length: count }, (_, i) => [
      deviceId,
      i,
      i % 2 ? 'high' : 'low',
      i * 3,
      `t${i}`,
      `d${i}`,
      i % 5 ? `r${i}` : `r'${i}"`,
    ]);
    await insertTuples(store.db, 'risk_findings', FINDING, tuples);
    const rows = await store.db
      .selectFrom('risk_findings')
      .select(['device_id', 'port', 'severity', 'score', 'title', 'description', 'recommendation'])
      .orderBy('port')
      .execute();
    expect(rows.map((r) => [r.device_id, r.port, r.severity, r.score, r.title, r.description, r.recommendation])).toEqual(tuples);
  });

  it('updates each row by id, whatever the number of rows', async () => {
    const ids = await addDevices(store, rowsPerInsert(3) + 37);
    await updateManyById(
      store.db,
      'devices',
      { risk_level: 'text', risk_score: 'integer' },
      ids.map((id, i) => ({ id, risk_level: i % 3 ? 'low' : 'high', risk_score: i })),
    );
    const rows = await store.db.selectFrom('devices').select(['id', 'risk_level', 'risk_score']).orderBy('id').execute();
    expect(rows).toEqual(ids.map((id, i) => ({ id, risk_level: i % 3 ? 'low' : 'high', risk_score: i })));
  });

  // PostgreSQL plans from statistics only ANALYZE gathers (store/bulk.ts keepStatistics).
  it('gathers statistics of a table written in bulk, within the writing transaction', async () => {
    if (!isPostgres(store.db)) return;
    const [deviceId] = await addDevices(store, 1);
    const analysed = sql<{ rows: number }>`select reltuples as "rows" from pg_class where oid = to_regclass('risk_findings')`;
    const tuples = (from: number, count: number) => Array.from({ length: count }, (_, i) => [deviceId, from + i, 'low', 1, 't', 'd', 'r']);
    await insertTuples(store.db, 'risk_findings', FINDING, tuples(0, 100));
    // A few rows: not yet analysed (PostgreSQL's -1: never).
    expect((await analysed.execute(store.db)).rows[0].rows).toBe(-1);
    await store.db.transaction().execute(async (trx) => {
      await insertTuples(trx, 'risk_findings', FINDING, tuples(100, 6000));
      // Analysed in the transaction, its own rows counted.
      expect((await analysed.execute(trx)).rows[0].rows).toBe(6100);
    });
    // Next analysed once as many rows again are written.
    await insertTuples(store.db, 'risk_findings', FINDING, tuples(6100, 3000));
    expect((await analysed.execute(store.db)).rows[0].rows).toBe(6100);
    await insertTuples(store.db, 'risk_findings', FINDING, tuples(9100, 3100));
    expect((await analysed.execute(store.db)).rows[0].rows).toBe(12200);
  });
});
