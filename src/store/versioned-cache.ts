/**
 * Values computed from the database, kept while the data they came from has not changed.
 *
 * A value is reused while this process's data version (bumped by every write through the store)
 * is the one it was computed at and it is younger than `maxAgeMs`: writes through this process
 * are seen at once, writes by another instance on the same database within `maxAgeMs`.
 * Bounded: past `maxEntries` the oldest entry goes.
 */
export class VersionedCache<V> {
  private readonly entries = new Map<string, { version: number; at: number; value: V }>();

  constructor(
    private readonly version: () => number,
    private readonly maxAgeMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The current value for `key`, computed (and kept) when there is none. */
  async get(key: string, compute: () => Promise<V>): Promise<V> {
    const cached = this.peek(key);
    if (cached !== undefined) return cached;
    const version = this.version();
    const value = await compute();
    this.set(key, version, value);
    return value;
  }

  /** The value for `key` if one is current. */
  peek(key: string): V | undefined {
    const entry = this.entries.get(key);
    return entry && entry.version === this.version() && this.now() - entry.at < this.maxAgeMs ? entry.value : undefined;
  }

  /** Keeps `value`, computed from the data at `version` (`this.version()` read before the query). */
  set(key: string, version: number, value: V): void {
    // A write while computing: the value may already be stale, so it is not kept.
    if (this.version() !== version) return;
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { version, at: this.now(), value });
  }

  /** The data version now, to pass to `set` after a query. */
  currentVersion(): number {
    return this.version();
  }
}
