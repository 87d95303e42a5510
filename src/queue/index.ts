import type { Logger } from 'pino';
import { jobQueueSchema } from '../store/db.js';
import type { Store } from '../store/index.js';
import { InProcessQueue } from './in-process.js';
import { PgBossQueue } from './pg-boss.js';
import type { ScanJobQueue } from './types.js';

export type { JobOutcome, ScanJobQueue } from './types.js';

/** The scan job queue for this store: pg-boss on PostgreSQL, in memory on SQLite. Not started. */
export function scanJobQueue(store: Store, log: Logger): ScanJobQueue {
  const pg = store.handle.postgres;
  return pg ? new PgBossQueue({ url: pg.url, schema: jobQueueSchema(pg.schema) }, log) : new InProcessQueue(log);
}
