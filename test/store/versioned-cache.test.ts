import { describe, expect, it } from 'vitest';
import { VersionedCache } from '../../src/store/versioned-cache.js';

describe('VersionedCache', () => {
  it('keeps values while the data version stands, and bounds what it keeps by weight', async () => {
    let version = 1;
    const cache = new VersionedCache<string>(async () => version, 60_000, 10, Date.now, { of: (v) => v.length, max: 10 });
    await cache.set('a', 1, 'aaaa');
    await cache.set('b', 1, 'bbbb');
    expect(cache.peek('a', 1)).toBe('aaaa');
    // 4 + 4 + 4 > 10: the oldest goes.
    await cache.set('c', 1, 'cccc');
    expect(cache.peek('a', 1)).toBeUndefined();
    expect(cache.peek('b', 1)).toBe('bbbb');
    expect(cache.peek('c', 1)).toBe('cccc');
    // Heavier than the whole budget: not kept, and nothing else is dropped for it.
    await cache.set('big', 1, 'x'.repeat(11));
    expect(cache.peek('big', 1)).toBeUndefined();
    expect(cache.peek('c', 1)).toBe('cccc');
    // Replacing a value frees its old weight.
    await cache.set('c', 1, 'cc');
    await cache.set('d', 1, 'dddd');
    expect([cache.peek('b', 1), cache.peek('c', 1), cache.peek('d', 1)]).toEqual(['bbbb', 'cc', 'dddd']);
    // A write: nothing computed before it is served, nor kept when computed across it.
    version = 2;
    expect(cache.peek('b', 2)).toBeUndefined();
    await cache.set('e', 1, 'eeee');
    expect(cache.peek('e', 1)).toBeUndefined();
  });
});
