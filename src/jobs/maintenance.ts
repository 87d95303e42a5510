/**
 * Housekeeping every instance runs hourly: drops expired sessions and login counters, and, once a
 * day across all instances sharing the database (a lease decides which), deletes history older
 * than retention.days. Every minute it ends the acceptances of risk whose expiry has come
 * (scan/risk-acceptance.ts: the finding counts again, audited, `risk_changed`).
 */
import type { Logger } from 'pino';
import type { LoginThrottle } from '../auth/throttle.js';
import { addSeconds, nowIso } from '../store/clock.js';
import type { Store } from '../store/index.js';
import type { RiskAcceptances } from '../scan/risk-acceptance.js';
import type { RetentionResult } from '../store/retention.js';

const EVERY_MS = 3_600_000;
/** How often acceptances are checked for expiry: an expired acceptance counts again within a minute. */
const EXPIRY_EVERY_MS = 60_000;
const RETENTION_LEASE = 'retention';
/** The retention lease lasts a little under a day, so the hourly check runs it once a day. */
const RETENTION_PERIOD_SECONDS = 23.5 * 3600;

export interface MaintenanceOptions {
  store: Store;
  log: Logger;
  throttle: LoginThrottle;
  /** Identifies this process as a lease holder. */
  ownerId: string;
  /** Ends expired acceptances of risk; none: not checked. */
  acceptances?: RiskAcceptances;
  /** The clock (tests inject one): what "now" is for expiry. */
  now?: () => Date;
}

export class Maintenance {
  private timer: NodeJS.Timeout | null = null;
  private expiryTimer: NodeJS.Timeout | null = null;
  /** The pass under way, so that stopping waits for it instead of closing the store under it. */
  private pass: Promise<void> = Promise.resolve();

  constructor(private readonly options: MaintenanceOptions) {}

  /**
   * Starts a pass now and one every hour until `stop`. The first pass runs in the background: a
   * large retention run must not hold up the start of the service.
   */
  start(): void {
    const run = () => {
      this.pass = this.pass.then(() => this.runOnce());
    };
    run();
    this.timer = setInterval(run, EVERY_MS);
    this.timer.unref();
    this.expiryTimer = setInterval(() => {
      this.pass = this.pass.then(() => this.expireAcceptances().then(() => undefined));
    }, EXPIRY_EVERY_MS);
    this.expiryTimer.unref();
  }

  /** No new pass starts; resolves when the one under way (if any) has ended. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.expiryTimer) clearInterval(this.expiryTimer);
    this.timer = null;
    this.expiryTimer = null;
    await this.pass;
  }

  /** One pass; every step reports its own failure, so a pass never rejects. */
  async runOnce(): Promise<void> {
    const { store, log, throttle } = this.options;
    await store.sessions.purgeExpired().catch((err) => log.warn({ err }, 'could not purge expired sessions'));
    await throttle.purge().catch((err) => log.warn({ err }, 'could not purge login counters'));
    await this.runRetention().catch((err) => log.warn({ err }, 'retention run failed'));
    await this.expireAcceptances();
  }

  /** Ends the acceptances whose expiry has come at `now` (default: the clock's); how many. Never rejects. */
  async expireAcceptances(now: Date = this.options.now?.() ?? new Date()): Promise<number> {
    const { acceptances, log } = this.options;
    if (!acceptances) return 0;
    try {
      return (await acceptances.expireDue(now)).length;
    } catch (err) {
      log.warn({ err }, 'could not end expired acceptances');
      return 0;
    }
  }

  /**
   * Deletes history older than retention.days when this instance takes the day's lease. Returns
   * what was deleted, or null when retention is off or another instance ran it within the day.
   */
  async runRetention(now = new Date()): Promise<RetentionResult | null> {
    const { store, log, ownerId } = this.options;
    const { days } = (await store.settings.get()).retention;
    if (days === 0) return null;
    const at = nowIso(now);
    if (!(await store.leases.acquire(RETENTION_LEASE, ownerId, at, addSeconds(at, RETENTION_PERIOD_SECONDS)))) return null;
    const cutoff = addSeconds(at, -days * 86_400);
    const result = await store.retention.purgeBefore(cutoff);
    await store.audit.write({
      action: 'retention_run',
      actor: 'system',
      actorType: 'system',
      details: { retention_days: days, cutoff, deleted: result },
      success: true,
    });
    log.info({ cutoff, deleted: result }, 'retention run');
    return result;
  }
}
