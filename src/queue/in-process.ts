import type { Logger } from 'pino';
import { JOB_RETRY_SECONDS, type JobOutcome, type ScanJobQueue } from './types.js';

/**
 * The queue of the embedded default (SQLite, one process): jobs are scan ids in memory, handed
 * to the handler one at a time. Nothing is lost on a restart: the scan records are the truth, and
 * the manager enqueues every scan still `queued` when its worker starts.
 */
export class InProcessQueue implements ScanJobQueue {
  readonly kind = 'in-process';
  private readonly waiting: number[] = [];
  private readonly retries = new Set<NodeJS.Timeout>();
  private handler: ((scanId: number) => Promise<JobOutcome>) | null = null;
  private draining: Promise<void> | null = null;
  private stopped = false;
  private nextId = 1;

  constructor(private readonly log: Logger) {}

  async start(): Promise<void> {}

  async enqueue(scanId: number): Promise<string> {
    this.push(scanId);
    return `local-${this.nextId++}`;
  }

  async work(handler: (scanId: number) => Promise<JobOutcome>): Promise<void> {
    this.handler = handler;
    this.drain();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.retries) clearTimeout(timer);
    this.retries.clear();
    await this.draining;
  }

  private push(scanId: number): void {
    if (this.stopped || this.waiting.includes(scanId)) return;
    this.waiting.push(scanId);
    this.drain();
  }

  private drain(): void {
    if (this.draining || !this.handler) return;
    this.draining = (async () => {
      // Deferred: a job enqueued inside a transaction is handled after it commits.
      await new Promise((resolve) => setImmediate(resolve));
      while (!this.stopped && this.handler && this.waiting.length > 0) {
        const scanId = this.waiting.shift()!;
        let outcome: JobOutcome;
        try {
          outcome = await this.handler(scanId);
        } catch (err) {
          this.log.warn({ err, scan_id: scanId }, 'a scan job failed; it is retried');
          outcome = 'later';
        }
        if (outcome === 'later') this.retryLater(scanId);
      }
    })().finally(() => {
      this.draining = null;
      if (!this.stopped && this.waiting.length > 0) this.drain();
    });
  }

  private retryLater(scanId: number): void {
    const timer = setTimeout(() => {
      this.retries.delete(timer);
      this.push(scanId);
    }, JOB_RETRY_SECONDS * 1000);
    timer.unref();
    this.retries.add(timer);
  }
}
