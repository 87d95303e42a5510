import { sql } from 'kysely';
import type { Logger } from 'pino';
import { jobQueueSchema } from '../store/db.js';
import type { Store } from '../store/index.js';
import { InProcessQueue } from './in-process.js';
import type { ScanJobQueue } from './types.js';

export type { JobOutcome, ScanJobQueue } from './types.js';

/**
 * The scan job queue for this store: pg-boss on PostgreSQL, in memory on SQLite. Not started.
 * pg-boss's tables go beside Netwarden's: `pgboss` for the default `public` schema,
 * `<schema>_pgboss` for another (given to the store, or chosen by the connection string's
 * search_path), so deployments and tests sharing one database never share a queue.
 */
export async function scanJobQueue(store: Store, log: Logger): Promise<ScanJobQueue> {
  const pg = store.handle.postgres;
  if (!pg) return new InProcessQueue(log);
  let schema = pg.schema;
  if (!schema) {
    const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(store.db);
    schema = rows[0]?.schema && rows[0].schema !== 'public' ? rows[0].schema : null;
  }
  // Loaded only here: pg-boss and its dependencies are megabytes of heap a SQLite service never uses.
  const { PgBossQueue } = await import('./pg-boss.js');
  return new PgBossQueue({ url: pg.url, schema: jobQueueSchema(schema) }, log);
}
