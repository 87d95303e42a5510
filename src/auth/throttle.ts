/**
 * Sliding-window failure counter kept in memory: how many failures a key (a client address or a
 * username) had recently, and how long it must wait once over the limit.
 */
export class FailureThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly maxKeys = 10_000,
  ) {}

  /** Seconds to wait before the next attempt, or 0 when allowed. */
  retryAfter(key: string, now = Date.now()): number {
    const recent = this.recent(key, now);
    if (recent.length < this.limit) return 0;
    const oldestThatCounts = recent[recent.length - this.limit];
    return Math.max(1, Math.ceil((oldestThatCounts + this.windowMs - now) / 1000));
  }

  fail(key: string, now = Date.now()): void {
    const recent = this.recent(key, now);
    recent.push(now);
    this.failures.set(key, recent);
    if (this.failures.size > this.maxKeys) this.evict(now);
  }

  reset(key: string): void {
    this.failures.delete(key);
  }

  private recent(key: string, now: number): number[] {
    const list = this.failures.get(key);
    if (!list) return [];
    const cutoff = now - this.windowMs;
    const kept = list.filter((t) => t > cutoff);
    if (kept.length === 0) this.failures.delete(key);
    else if (kept.length !== list.length) this.failures.set(key, kept);
    return kept;
  }

  private evict(now: number): void {
    for (const key of [...this.failures.keys()]) this.recent(key, now);
    // Still too many keys (a flood of distinct ones): drop the oldest entries.
    const excess = this.failures.size - this.maxKeys;
    if (excess > 0) [...this.failures.keys()].slice(0, excess).forEach((k) => this.failures.delete(k));
  }
}

/** At most one event per key per interval: used to keep failed-key floods out of the audit log. */
export class RateGate {
  private readonly last = new Map<string, number>();

  constructor(
    private readonly intervalMs: number,
    private readonly maxKeys = 10_000,
  ) {}

  allow(key: string, now = Date.now()): boolean {
    const previous = this.last.get(key);
    if (previous !== undefined && now - previous < this.intervalMs) return false;
    this.last.delete(key);
    this.last.set(key, now);
    if (this.last.size > this.maxKeys) {
      const oldest = this.last.keys().next().value;
      if (oldest !== undefined) this.last.delete(oldest);
    }
    return true;
  }
}
