import { describe, expect, it } from 'vitest';
import { TupleMemo } from '../../src/core/memo.js';

describe('TupleMemo', () => {
  it('tells keys apart by every part, with Map semantics (null, undefined and "" differ)', () => {
    const memo = new TupleMemo<string>(100);
    memo.set(['ssh', null, '8.9p1'], 'null product');
    memo.set(['ssh', '', '8.9p1'], 'empty product');
    memo.set(['ssh', undefined, '8.9p1'], 'no product');
    expect(memo.get(['ssh', null, '8.9p1'])).toBe('null product');
    expect(memo.get(['ssh', '', '8.9p1'])).toBe('empty product');
    expect(memo.get(['ssh', undefined, '8.9p1'])).toBe('no product');
    expect(memo.get(['ssh', null, '8.9p2'])).toBeUndefined();
    expect(memo.get([1, '1'])).toBeUndefined();
    expect(memo.size).toBe(3);
  });

  it('keeps a key that is a prefix of another apart from it', () => {
    const memo = new TupleMemo<string>(100);
    memo.set(['a', 'b'], 'two');
    memo.set(['a', 'b', 'c'], 'three');
    memo.set([], 'none');
    expect(memo.get(['a', 'b'])).toBe('two');
    expect(memo.get(['a', 'b', 'c'])).toBe('three');
    expect(memo.get(['a'])).toBeUndefined();
    expect(memo.get([])).toBe('none');
    memo.set(['a', 'b'], 'two again');
    expect(memo.get(['a', 'b'])).toBe('two again');
    expect(memo.size).toBe(3);
  });

  it('starts over when full', () => {
    const memo = new TupleMemo<number>(2);
    memo.set([1], 1);
    memo.set([2], 2);
    memo.set([3], 3);
    expect(memo.get([1])).toBeUndefined();
    expect(memo.get([3])).toBe(3);
    expect(memo.size).toBe(1);
  });
});
