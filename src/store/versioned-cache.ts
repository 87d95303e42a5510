/**
 * Values computed from the database, kept while the data they came from has not changed.
 *
 * A value is reused while the store's data version (Store.currentDataVersion: writes through this
 * process at once, writes by other processes on the database within a second) is the one it was
 * computed at. `maxAgeMs` bounds its age regardless. Bounded: past `maxEntries` the oldest goes, and
 * with `weight` given, past its `max` total (e.g. bytes) the oldest go; a value heavier than that is not kept.
 */
export class VersionedCache<V> {
  private readonly entries = new Map<string, { version: number; at: number; value: V }>();
  private readonly pending = new Map<string, Promise<V>>();
  private total = 0;

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
    this.remove(key);
    const weight = this.weight?.of(value) ?? 0;
    if (this.weight && weight > this.weight.max) return;
    while (this.entries.size > 0 && (this.entries.size >= this.maxEntries || (this.weight && this.total + weight > this.weight.max))) {
      this.remove(this.entries.keys().next().value as string);
    }
    this.entries.set(key, { version, at: this.now(), value });
    this.total += weight;
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    if (this.weight) this.total -= this.weight.of(entry.value);
  }
}
