/**
 * Values computed from the database, kept while the data they came from has not changed.
 *
 * A value is reused while the store's data version (Store.currentDataVersion: writes through this
 * process at once, writes by other processes on the database within a second) is the one it was
 * computed at. `maxAgeMs` bounds its age regardless. Bounded: past `maxEntries` the oldest goes, and
 * with `weight` (what a value weighs, e.g. its bytes) the oldest go until the kept ones weigh at
 * most `weight.max`; a value heavier than that alone is not kept.
 */
export class VersionedCache<V> {
  private readonly entries = new Map<string, { version: number; at: number; value: V; weight: number }>();
  private totalWeight = 0;
  private readonly pending = new Map<string, Promise<V>>();

  constructor(
    private readonly version: () => Promise<number>,
    private readonly maxAgeMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
    private readonly weight?: { of: (value: V) => number; max: number },
  ) {}

  /** The data version now: read it before a query, pass it to `set` after. */
  currentVersion(): Promise<number> {
    return this.version();
  }

  /**
   * The current value for `key`, computed (and kept) when there is none. Requests arriving while
   * it is computed share that computation rather than each running the same query.
   */
  async get(key: string, compute: () => Promise<V>, version?: number): Promise<V> {
    const at = version ?? (await this.version());
    const cached = this.peek(key, at);
    if (cached !== undefined) return cached;
    const pendingKey = `${at}\u0000${key}`;
    let pending = this.pending.get(pendingKey);
    if (!pending) {
      pending = (async () => {
        const value = await compute();
        await this.set(key, at, value);
        return value;
      })().finally(() => this.pending.delete(pendingKey));
      this.pending.set(pendingKey, pending);
    }
    return pending;
  }

  /** The value for `key` if one was computed at `version` (from `currentVersion()`). */
  peek(key: string, version: number): V | undefined {
    const entry = this.entries.get(key);
    return entry && entry.version === version && this.now() - entry.at < this.maxAgeMs ? entry.value : undefined;
  }

  /** Keeps `value`, computed from the data at `version` (read before the query). */
  async set(key: string, version: number, value: V): Promise<void> {
    // A write while computing: the value may already be stale, so it is not kept.
    if ((await this.version()) !== version) return;
    this.drop(key);
    const weight = this.weight ? this.weight.of(value) : 0;
    if (this.weight && weight > this.weight.max) return;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size < this.maxEntries && (!this.weight || this.totalWeight + weight <= this.weight.max)) break;
      this.drop(oldest);
    }
    this.entries.set(key, { version, at: this.now(), value, weight });
    this.totalWeight += weight;
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.totalWeight -= entry.weight;
  }
}
