import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';

/** What a worker says of a job it was handed: run (or nothing left to do), or not yet. */
export type JobOutcome = 'done' | 'later';

/**
 * The queue of scans waiting for a worker (CONTRACT §7, §12). The scan record (status `queued`)
 * is what the API shows; the job is the work order that brings it to a worker. The worker's
 * handler takes the scan with a conditional update, so a job delivered twice (a worker died
 * holding it, a retry) never runs a scan twice.
 */
export interface ScanJobQueue {
  /** `pg-boss` on PostgreSQL, `in-process` on SQLite. */
  readonly kind: 'pg-boss' | 'in-process';
  start(): Promise<void>;
  /**
   * Adds the job of queued scan `scanId`, inside `db` when that is the caller's transaction (on
   * PostgreSQL the job and the scan record are committed together). Returns the job's id.
   */
  enqueue(scanId: number, db?: Kysely<Database>): Promise<string>;
  /**
   * Hands jobs to `handler` until stop(). A job the handler answers `later` (every slot taken, its
   * target busy) comes back after JOB_RETRY_SECONDS; one whose handler throws does too.
   */
  work(handler: (scanId: number) => Promise<JobOutcome>): Promise<void>;
  /** Stops handing out jobs (and, for pg-boss, closes its connections). */
  stop(): Promise<void>;
}

/** A job its worker could not start yet is handed out again after this long. */
export const JOB_RETRY_SECONDS = 1;
/** A job a worker took and never answered (it died) is handed out again after this long. */
export const JOB_EXPIRE_SECONDS = 60;
