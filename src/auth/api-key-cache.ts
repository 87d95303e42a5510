/**
 * Verified API keys, kept in memory so an authenticated request does not query the database.
 *
 * Keyed by the SHA-256 of the presented key (never the key itself); bounded in size and age.
 * Revocation semantics are those of the contract (a revoked key gets 401 on its very next
 * request):
 * - a revocation through this process's store empties the cache at once, and a lookup that was
 *   already reading the database when it happened does not put its (stale) row back;
 * - a revocation by another instance on the same PostgreSQL database empties the cache at once:
 *   the revoking instance's event relay (events/relay.ts) tells every other before it answers,
 *   and the store passes that on as a `remote` revocation;
 * - any other revocation by another process (`netwarden keys revoke`, or an instance while the
 *   relay's connection is down) is noticed within RECHECK_MS: before serving from the cache, the
 *   store's revocation mark is read again when it is older than that (one small query a second
 *   at most, shared by the requests arriving meanwhile), and a changed mark empties the cache.
 * Expiry needs no invalidation: the caller checks the cached row's `expires_at` on every request.
 */
import type { ApiKeyStore } from '../store/api-keys.js';
import type { ApiKeyRow } from '../store/schema.js';
import { apiKeyLookupPrefix, digestsEqual } from './tokens.js';

/** How stale a revocation made by another process may be when this one answers. */
const RECHECK_MS = 1000;
/** Longest a verified key is trusted without reading it again, whatever the mark says. */
const TTL_MS = 30_000;
/** Keys held at most (a deployment has a handful); the oldest goes first. */
const MAX_ENTRIES = 1000;

interface Entry {
  row: ApiKeyRow;
  cachedAt: number;
}

export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped whenever the cache is emptied: a lookup started before keeps its answer to itself. */
  private generation = 0;
  private mark: string | undefined;
  private markReadAt = -Infinity;
  private markReading: Promise<void> | undefined;

  constructor(
    private readonly keys: ApiKeyStore,
    private readonly now: () => number = Date.now,
  ) {
    keys.onRevoke(() => this.clear());
  }

  /**
   * What `find` would answer right now without waiting for anything: the cached row when the
   * revocation mark needs no reading again and the entry is fresh, else undefined (then `find`
   * must be asked). Lets the common request, a key used a moment ago, be authenticated without
   * a promise.
   */
  findCached(digest: string): ApiKeyRow | undefined {
    const now = this.now();
    if (now - this.markReadAt >= RECHECK_MS) return undefined;
    const entry = this.entries.get(digest);
    return entry && now - entry.cachedAt < TTL_MS ? entry.row : undefined;
  }

  /** The stored key whose hash is `digest` (the presented key's SHA-256), or undefined. */
  async find(key: string, digest: string): Promise<ApiKeyRow | undefined> {
    await this.recheck();
    const entry = this.entries.get(digest);
    if (entry && this.now() - entry.cachedAt < TTL_MS) return entry.row;
    const generation = this.generation;
    const candidates = await this.keys.findByPrefix(apiKeyLookupPrefix(key));
    const row = candidates.find((c) => digestsEqual(c.key_hash, digest));
    if (row && generation === this.generation) this.remember(digest, row);
    else if (entry) this.entries.delete(digest);
    return row;
  }

  /** Records that a key was used at `at`, so `last_used_at` is written at most as often as intended. */
  noteUsed(digest: string, at: string): void {
    const entry = this.entries.get(digest);
    if (entry) entry.row = { ...entry.row, last_used_at: at };
  }

  clear(): void {
    this.entries.clear();
    this.generation++;
  }

  private remember(digest: string, row: ApiKeyRow): void {
    this.entries.delete(digest);
    if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(digest, { row, cachedAt: this.now() });
  }

  private recheck(): Promise<void> | undefined {
    if (this.now() - this.markReadAt < RECHECK_MS) return undefined;
    this.markReading ??= (async () => {
      try {
        const mark = await this.keys.revocationMark();
        if (mark !== this.mark) {
          if (this.mark !== undefined) this.clear();
          this.mark = mark;
        }
        this.markReadAt = this.now();
      } finally {
        this.markReading = undefined;
      }
    })();
    return this.markReading;
  }
}
