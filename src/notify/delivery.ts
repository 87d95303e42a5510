/**
 * The delivery loop: sends pending deliveries when they are due, one attempt at a time per
 * delivery, and retries per CONTRACT §13: connection errors, timeouts, 408, 429 (Retry-After
 * honoured up to a minute) and 5xx are retried, at least 3 attempts in all, each delay longer than
 * the one before, the last attempt within 90 s of the first; anything else fails at once.
 *
 * Everything lives in the database: a delivery is a row, an attempt claims it (so of several
 * instances exactly one sends it), and between attempts it waits as `pending` with its
 * `next_attempt_at`. A restart therefore resumes where the last process stopped.
 */
import type { Logger } from 'pino';
import type { Delivery } from '../schemas/notification.js';
import type { Store } from '../store/index.js';
import type { StoredDelivery } from '../store/notifications.js';
import type { OutboundGuard } from '../util/outbound.js';
import { secretsOf } from './channel-config.js';
import { unpackMessage } from './compose.js';
import type { DriverRegistry } from './channels/index.js';
import { DeliveryError } from './types.js';

export interface RetryPolicy {
  /** How long one attempt may take (CONTRACT: 10 s). */
  timeoutMs: number;
  /** Delays before the 2nd, 3rd, … attempt, growing; their count + 1 is the most attempts. */
  retryDelaysMs: number[];
  /** The last attempt starts at most this long after the first (CONTRACT: 90 s). */
  retryWindowMs: number;
  /** A longer Retry-After is cut to this (CONTRACT: 60 s). */
  maxRetryAfterMs: number;
}

/**
 * Production defaults. Worst case, every attempt timing out: attempts start at 0, 15, 40 and
 * 80 s, the last within the 90 s window.
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  timeoutMs: 10_000,
  retryDelaysMs: [5_000, 15_000, 30_000],
  retryWindowMs: 90_000,
  maxRetryAfterMs: 60_000,
};

/** Deliveries sent at once by one instance. */
const CONCURRENCY = 32;
/** Even with nothing due, look again this often: other instances may have queued work. */
const IDLE_POLL_MS = 30_000;
/** A claim outlives its attempt's timeout by this much, in case the process stalls. */
const CLAIM_MARGIN_MS = 15_000;
/** The shortest the timer waits, so a delivery due but taken by another instance cannot spin the loop. */
const MIN_WAIT_MS = 20;

export interface DeliveryWorkerOptions {
  store: Store;
  drivers: DriverRegistry;
  log: Logger;
  version: string;
  /** This process as the holder of claims. */
  ownerId: string;
  now: () => Date;
  policy: RetryPolicy;
  /** Where deliveries may go. */
  guard: OutboundGuard;
  /** Called once when a delivery fails for good (after its last attempt). */
  onFailed: (delivery: Delivery, channelName: string | null) => Promise<void>;
}

/**
 * When the attempt after `attempts` failed ones may start, or null when there is none: no delay
 * left in the policy, or no time left in the window. The delay is the policy's, raised to the
 * destination's Retry-After (capped), and cut to the end of the window.
 */
export function nextAttemptAt(policy: RetryPolicy, attempts: number, firstAttempt: Date, failedAt: Date, retryAfterMs: number | null): Date | null {
  const base = policy.retryDelaysMs[attempts - 1];
  if (base === undefined) return null;
  const delay = Math.max(base, Math.min(retryAfterMs ?? 0, policy.maxRetryAfterMs));
  const deadline = firstAttempt.getTime() + policy.retryWindowMs;
  const at = Math.min(failedAt.getTime() + delay, deadline);
  if (at <= failedAt.getTime()) return null;
  return new Date(at);
}

export class DeliveryWorker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private readonly inFlight = new Map<number, { abort: AbortController; done: Promise<unknown> }>();

  constructor(private readonly options: DeliveryWorkerOptions) {}

  /** Starts working: deliveries pending from before (a restart) are sent as they fall due. */
  start(): void {
    this.stopped = false;
    const now = this.options.now();
    this.options.store.notifications
      .failAbandonedTests(now.toISOString(), new Date(now.getTime() - 60_000).toISOString())
      .catch((err) => this.options.log.warn({ err }, 'could not close abandoned test messages'));
    this.wake();
  }

  /** Looks for due deliveries now (after new ones were queued). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .catch((err) => this.options.log.warn({ err }, 'notification delivery pass failed'))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wake();
        } else {
          void this.schedule();
        }
      });
  }

  /** Stops: no new attempts; attempts in flight are abandoned and their deliveries left pending. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const { abort } of this.inFlight.values()) abort.abort(new Error('shutting down'));
    await Promise.allSettled([...this.inFlight.values()].map((f) => f.done));
    await this.running?.catch(() => {});
  }

  /**
   * One attempt now, whatever its due time, without retries: the test button. Returns the
   * delivery record after the attempt.
   */
  async sendOnce(deliveryId: number): Promise<Delivery | undefined> {
    const { store, ownerId, policy } = this.options;
    const now = this.options.now();
    const claimed = await store.notifications.claimDelivery(
      deliveryId,
      ownerId,
      now.toISOString(),
      new Date(now.getTime() + policy.timeoutMs + CLAIM_MARGIN_MS).toISOString(),
      {
        ignoreDue: true,
      },
    );
    if (!claimed) return store.notifications.getDelivery(deliveryId);
    return this.attempt(claimed, { retries: false, audit: false });
  }

  private async pass(): Promise<void> {
    const { store, ownerId, policy } = this.options;
    for (;;) {
      if (this.stopped) return;
      if (this.inFlight.size >= CONCURRENCY) {
        await Promise.race([...this.inFlight.values()].map((f) => f.done));
        continue;
      }
      const now = this.options.now();
      const ids = (await store.notifications.dueDeliveries(now.toISOString(), CONCURRENCY * 2)).filter((id) => !this.inFlight.has(id));
      let took = 0;
      for (const id of ids) {
        if (this.inFlight.size >= CONCURRENCY || this.stopped) break;
        const until = new Date(now.getTime() + policy.timeoutMs + CLAIM_MARGIN_MS).toISOString();
        const claimed = await store.notifications.claimDelivery(id, ownerId, now.toISOString(), until);
        if (claimed) {
          this.track(claimed);
          took++;
        }
      }
      // Nothing (more) this instance can take now: the timer picks up what falls due later.
      if (took === 0) return;
    }
  }

  private track(delivery: StoredDelivery): void {
    const abort = new AbortController();
    const entry = { abort, done: Promise.resolve() as Promise<unknown> };
    entry.done = this.attempt(delivery, { retries: true, audit: true, shutdown: abort.signal })
      .catch((err) => this.options.log.warn({ err, delivery_id: delivery.id }, 'notification attempt failed unexpectedly'))
      .finally(() => {
        this.inFlight.delete(delivery.id);
        if (!this.stopped) void this.schedule();
      });
    this.inFlight.set(delivery.id, entry);
  }

  /** Arms the timer for the next due delivery (or the idle poll). */
  private async schedule(): Promise<void> {
    if (this.stopped || this.running) return;
    let wait = IDLE_POLL_MS;
    try {
      const now = this.options.now();
      const next = await this.options.store.notifications.nextDueAt(now.toISOString());
      if (next) wait = Math.min(wait, Math.max(MIN_WAIT_MS, Date.parse(next) - now.getTime()));
    } catch (err) {
      this.options.log.warn({ err }, 'could not read when the next notification is due');
    }
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.wake();
    }, wait);
    this.timer.unref();
  }

  private async attempt(delivery: StoredDelivery, mode: { retries: boolean; audit: boolean; shutdown?: AbortSignal }): Promise<Delivery | undefined> {
    const { store, drivers, ownerId, policy, log, version, guard } = this.options;
    const channel = await store.notifications.getChannel(delivery.channel_id);
    const started = this.options.now();
    const attempts = delivery.attempts + 1;
    const first = delivery.first_attempt_at ?? started.toISOString();
    const record = (outcome: { status: 'sent' | 'failed' | 'pending'; error: string | null; next: Date | null }) =>
      store.notifications.recordAttempt(delivery.id, ownerId, {
        status: outcome.status,
        attempts,
        last_error: outcome.error,
        first_attempt_at: first,
        next_attempt_at: outcome.next ? outcome.next.toISOString() : null,
        sent_at: outcome.status === 'sent' ? this.options.now().toISOString() : null,
      });
    if (!channel) return record({ status: 'failed', error: 'the channel was deleted', next: null });

    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new Error('timeout')), policy.timeoutMs);
    const signal = mode.shutdown ? AbortSignal.any([timeout.signal, mode.shutdown]) : timeout.signal;
    const message = { ...unpackMessage(delivery.payload), deliveryId: delivery.id, sentAt: started.toISOString() };
    let error: DeliveryError | null = null;
    try {
      await drivers[channel.type].send(channel.config, message, { signal, version, timeoutMs: policy.timeoutMs, guard });
    } catch (err) {
      if (mode.shutdown?.aborted) {
        // Not the destination's fault: the next process tries again, and this one does not count.
        await store.notifications.releaseClaim(delivery.id, ownerId);
        return undefined;
      }
      error =
        err instanceof DeliveryError
          ? err
          : timeout.signal.aborted
            ? new DeliveryError(`timed out after ${policy.timeoutMs / 1000} s`, true)
            : new DeliveryError((err as Error).message || String(err), false);
    } finally {
      clearTimeout(timer);
    }
    if (!error) {
      log.debug({ delivery_id: delivery.id, channel_id: channel.id, attempts }, 'notification sent');
      return record({ status: 'sent', error: null, next: null });
    }
    const failedAt = this.options.now();
    const next = mode.retries && error.retryable ? nextAttemptAt(policy, attempts, new Date(first), failedAt, error.retryAfterMs) : null;
    // A destination may echo what it was sent (a token in a header, its own secret URL): the
    // channel's secrets never reach the delivery log, the audit log or the server log.
    const text = redactSecrets(error.message, secretsOf(drivers[channel.type], channel.config)).slice(0, 1000);
    if (next) {
      log.info(
        { delivery_id: delivery.id, channel_id: channel.id, attempts, error: text, next_attempt_at: next.toISOString() },
        'notification attempt failed; will retry',
      );
      return record({ status: 'pending', error: text, next });
    }
    log.warn({ delivery_id: delivery.id, channel_id: channel.id, attempts, error: text }, 'notification failed');
    const final = await record({ status: 'failed', error: text, next: null });
    if (final && mode.audit)
      await this.options.onFailed(final, channel.name).catch((err) => log.warn({ err }, 'could not audit a failed notification'));
    return final;
  }
}

/** `text` with every occurrence of a secret (and its URL-encoded form) replaced by `[redacted]`. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    // Short values (a 1-character "secret") would redact ordinary words; they protect nothing anyway.
    if (secret.length < 4) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) out = out.split(form).join('[redacted]');
  }
  return out;
}
