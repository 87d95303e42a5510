import { describe, expect, it } from 'vitest';
import { FailureThrottle, RateGate } from '../../src/auth/throttle.js';

describe('FailureThrottle', () => {
  it('allows up to the limit within the window, then asks to wait until the oldest failure expires', () => {
    const throttle = new FailureThrottle(3, 60_000);
    const t0 = 1_000_000;
    throttle.fail('a', t0);
    throttle.fail('a', t0 + 10_000);
    expect(throttle.retryAfter('a', t0 + 10_000)).toBe(0);
    throttle.fail('a', t0 + 20_000);
    expect(throttle.retryAfter('a', t0 + 20_000)).toBe(40);
    expect(throttle.retryAfter('b', t0 + 20_000)).toBe(0);
    expect(throttle.retryAfter('a', t0 + 60_001)).toBe(0);
  });

  it('forgets a key on reset', () => {
    const throttle = new FailureThrottle(1, 60_000);
    throttle.fail('a', 0);
    expect(throttle.retryAfter('a', 1)).toBeGreaterThan(0);
    throttle.reset('a');
    expect(throttle.retryAfter('a', 1)).toBe(0);
  });

  it('bounds its memory under a flood of distinct keys', () => {
    const throttle = new FailureThrottle(5, 60_000, 100);
    for (let i = 0; i < 1000; i++) throttle.fail(`k${i}`, i);
    expect(throttle.retryAfter('k999', 1000)).toBe(0);
    expect((throttle as unknown as { failures: Map<string, number[]> }).failures.size).toBeLessThanOrEqual(100);
  });
});

describe('RateGate', () => {
  it('lets one event per key per interval through', () => {
    const gate = new RateGate(60_000);
    expect(gate.allow('ip', 0)).toBe(true);
    expect(gate.allow('ip', 59_999)).toBe(false);
    expect(gate.allow('other', 59_999)).toBe(true);
    expect(gate.allow('ip', 60_000)).toBe(true);
  });
});
