/**
 * VersionedCache (store/versioned-cache.ts): values kept while the data version is unchanged,
 * bounded in number and, when a weight is given, in total weight (the map's kept answers, in bytes).
 */
import { describe, expect, it } from 'vitest';
import { VersionedCache } from '../../src/store/versioned-cache.js';

describe('VersionedCache', () => {
  it('keeps a value while the version is unchanged and drops it when the version moves or a write raced the read', async () => {
    let version = 1;
    const cache = new VersionedCache<string>(async () => version, 60_000, 4);
    await cache.set('a', 1, 'one');
    expect(cache.peek('a', 1)).toBe('one');
    version = 2;
    expect(cache.peek('a', 2)).toBeUndefined();
    // Read at version 2, but the data moved on before it was kept: not kept.
    version = 3;
    await cache.set('b', 2, 'stale');
    expect(cache.peek('b', 2)).toBeUndefined();
    expect(cache.peek('b', 3)).toBeUndefined();
  });

  it('keeps at most the given total weight, the oldest going first, and never a value heavier than that', async () => {
    const cache = new VersionedCache<{ bytes: number }>(async () => 7, 60_000, 100, Date.now, { of: (v) => v.bytes, max: 100 });
    await cache.set('a', 7, { bytes: 40 });
    await cache.set('b', 7, { bytes: 40 });
    expect(cache.peek('a', 7)).toEqual({ bytes: 40 });
    // 40 + 40 + 30 > 100: the oldest (a) goes.
    await cache.set('c', 7, { bytes: 30 });
    expect(cache.peek('a', 7)).toBeUndefined();
    expect(cache.peek('b', 7)).toEqual({ bytes: 40 });
    expect(cache.peek('c', 7)).toEqual({ bytes: 30 });
    // Replacing a key counts only its new weight.
    await cache.set('b', 7, { bytes: 60 });
    expect(cache.peek('b', 7)).toEqual({ bytes: 60 });
    expect(cache.peek('c', 7)).toEqual({ bytes: 30 });
    // Too heavy to keep at all: nothing else is dropped for it.
    await cache.set('huge', 7, { bytes: 101 });
    expect(cache.peek('huge', 7)).toBeUndefined();
    expect(cache.peek('b', 7)).toEqual({ bytes: 60 });
    expect(cache.peek('c', 7)).toEqual({ bytes: 30 });
  });

  it('keeps at most the given number of values', async () => {
    const cache = new VersionedCache<number>(async () => 1, 60_000, 2);
    for (const key of ['a', 'b', 'c']) await cache.set(key, 1, key.charCodeAt(0));
    expect(cache.peek('a', 1)).toBeUndefined();
    expect(cache.peek('b', 1)).toBe(98);
    expect(cache.peek('c', 1)).toBe(99);
  });
});
