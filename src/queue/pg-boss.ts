import { CompiledQuery, type Kysely } from 'kysely';
import PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { Database } from '../store/schema.js';
import { JOB_EXPIRE_SECONDS, JOB_RETRY_SECONDS, type JobOutcome, type ScanJobQueue } from './types.js';
import { NetwardenError } from '../util/errors.js';

/** The pg-boss queue scan jobs go to. */
export const SCAN_QUEUE = 'netwarden-scan';
/** How often an idle worker asks PostgreSQL for a job. */
const POLL_SECONDS = 0.5;
/** A job answered `later` this many times in a row has waited JOB_RETRY_SECONDS × this (about a month). */
const RETRY_LIMIT = 2_500_000;

class NotYet extends NetwardenError {
  readonly code = 'NW_JOB_NOT_STARTABLE';

  constructor() {
    super('not startable yet (every slot taken, or its target busy); retried');
  }
}

/**
 * Scan jobs in PostgreSQL with pg-boss 10: SKIP LOCKED hands each job to one worker, a job is
 * enqueued in the same transaction as its scan record, and a job whose worker died is handed out
 * again after JOB_EXPIRE_SECONDS (the handler only takes the scan, so it never runs one twice).
 * Its tables live in their own schema (`pgboss`, or `<schema>_pgboss` beside a custom schema).
 */
export class PgBossQueue implements ScanJobQueue {
  readonly kind = 'pg-boss';
  private readonly boss: PgBoss;
  private working = false;

  constructor(
    options: { url: string; schema: string; poolSize?: number },
    private readonly log: Logger,
  ) {
    this.boss = new PgBoss({
      connectionString: options.url,
      schema: options.schema,
      max: options.poolSize ?? 2,
      application_name: 'netwarden-queue',
      // pg-boss's own cron scheduler is not used: schedules are Netwarden's (src/jobs/scheduler.ts).
      schedule: false,
    });
    this.boss.on('error', (err) => this.log.warn({ err }, 'job queue (pg-boss) error'));
  }

  async start(): Promise<void> {
    await this.boss.start();
    if (!(await this.boss.getQueue(SCAN_QUEUE))) {
      await this.boss
        .createQueue(SCAN_QUEUE, {
          name: SCAN_QUEUE,
          policy: 'standard',
          retryLimit: RETRY_LIMIT,
          retryDelay: JOB_RETRY_SECONDS,
          retryBackoff: false,
          expireInSeconds: JOB_EXPIRE_SECONDS,
        })
        .catch(async (err) => {
          // Another process created it at the same moment.
          if (!(await this.boss.getQueue(SCAN_QUEUE))) throw err;
        });
    }
  }

  async enqueue(scanId: number, db?: Kysely<Database>): Promise<string> {
    const options: PgBoss.SendOptions = db
      ? { db: { executeSql: async (text, values) => ({ rows: [...(await db.executeQuery(CompiledQuery.raw(text, values))).rows] }) } }
      : {};
    const id = await this.boss.send(SCAN_QUEUE, { scan_id: scanId }, options);
    if (!id) throw new Error(`the job queue refused the job of scan ${scanId}`);
    return id;
  }

  async work(handler: (scanId: number) => Promise<JobOutcome>): Promise<void> {
    this.working = true;
    await this.boss.work<{ scan_id: number }>(SCAN_QUEUE, { batchSize: 1, pollingIntervalSeconds: POLL_SECONDS }, async ([job]) => {
      // Thrown: pg-boss marks the job for a retry after JOB_RETRY_SECONDS.
      if ((await handler(job.data.scan_id)) === 'later') throw new NotYet();
    });
  }

  async stop(): Promise<void> {
    if (this.working) await this.boss.offWork(SCAN_QUEUE).catch(() => undefined);
    await this.boss
      .stop({ graceful: true, wait: true, timeout: 5000 })
      .catch((err) => this.log.warn({ err }, 'could not stop the job queue cleanly'));
  }
}
