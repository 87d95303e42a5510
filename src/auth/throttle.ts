import { nowIso } from '../store/clock.js';
import type { LoginFailureStore } from '../store/login-failures.js';

export interface ThrottleLimit {
  /** Attempts allowed per window. */
  limit: number;
  windowMs: number;
}

/** Failed logins allowed per client address and per username, in 15 minutes. */
export const LOGIN_LIMITS = {
  client: { limit: 20, windowMs: 15 * 60_000 },
  user: { limit: 5, windowMs: 15 * 60_000 },
} as const satisfies Record<string, ThrottleLimit>;

/** The attempts an admission counted, to be taken back when they turn out not to be failures. */
export interface Admission {
  keys: string[];
}

export type AdmissionResult = { ok: true; admission: Admission } | { ok: false; retryAfterSeconds: number };

/**
 * Limits password attempts per client and per username, across every instance sharing the
 * database. An attempt is counted *before* its password is checked, atomically in the database:
 * however many requests arrive at once, no more than the limit get their password verified.
 * A successful attempt is taken back afterwards (and clears the username's count).
 */
export class LoginThrottle {
  constructor(
    private readonly store: LoginFailureStore,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Counts an attempt for each key; refuses with the wait when any key is over its limit. */
  async admit(keys: { key: string; limit: ThrottleLimit }[]): Promise<AdmissionResult> {
    const now = this.clock();
    let wait = 0;
    for (const { key, limit } of keys) {
      const { count, windowStart } = await this.store.count(key, nowIso(new Date(now)), nowIso(new Date(now - limit.windowMs)));
      if (count > limit.limit) wait = Math.max(wait, Math.ceil((Date.parse(windowStart) + limit.windowMs - now) / 1000), 1);
    }
    return wait > 0 ? { ok: false, retryAfterSeconds: wait } : { ok: true, admission: { keys: keys.map((k) => k.key) } };
  }

  /** The attempt succeeded: it was not a failure, and `clear` keys start afresh. */
  async succeeded(admission: Admission, clear: string[] = []): Promise<void> {
    for (const key of admission.keys) {
      if (clear.includes(key)) await this.store.reset(key);
      else await this.store.uncount(key);
    }
  }

  /** Forgets counters whose window has ended. */
  async purge(): Promise<number> {
    const longest = Math.max(...Object.values(LOGIN_LIMITS).map((l) => l.windowMs));
    return this.store.purge(nowIso(new Date(this.clock() - longest)));
  }
}

export const clientKey = (ip: string) => `ip:${ip}`;
export const userKey = (username: string) => `user:${username.toLowerCase()}`;

/**
 * At most one event per key per interval, counting the ones held back: used to keep floods of
 * failed keys and throttled logins out of the audit log while still saying how many there were.
 */
export class RateGate {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly intervalMs: number,
    private readonly maxKeys = 10_000,
  ) {}

  allow(key: string, now = Date.now()): boolean {
    return this.pass(key, now) !== null;
  }

  /** Null when held back; otherwise how many events were held back since the last one let through. */
  pass(key: string, now = Date.now()): number | null {
    const previous = this.last.get(key);
    if (previous !== undefined && now - previous.at < this.intervalMs) {
      previous.suppressed++;
      return null;
    }
    this.last.delete(key);
    this.last.set(key, { at: now, suppressed: 0 });
    if (this.last.size > this.maxKeys) {
      const oldest = this.last.keys().next().value;
      if (oldest !== undefined) this.last.delete(oldest);
    }
    return previous?.suppressed ?? 0;
  }
}
