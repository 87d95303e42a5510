import { describe, expect, it } from 'vitest';
import { isoTime } from '../../src/util/iso-time.js';

describe('isoTime', () => {
  it('writes what Date#toISOString writes, within a second and across seconds, minutes, days and years', () => {
    const moments = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, 59_999, 60_000, 86_399_999, 86_400_000, 951_782_399_999, 951_782_400_000];
    moments.push(Date.UTC(2026, 11, 31, 23, 59, 59, 999), Date.UTC(2027, 0, 1), 253_402_300_799_999);
    // Out of the four-digit years, and invalid: as Date writes them.
    moments.push(-1, 253_402_300_800_000);
    for (let ms = Date.UTC(2026, 10, 27, 13, 59, 58, 990); ms < Date.UTC(2026, 10, 27, 14, 0, 1, 10); ms += 7) moments.push(ms);
    for (const ms of moments) expect(isoTime(ms), String(ms)).toBe(new Date(ms).toISOString());
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
  });

  it('reads the clock when given no time', () => {
    const before = Date.now();
    const read = Date.parse(isoTime());
    expect(read).toBeGreaterThanOrEqual(before);
    expect(read).toBeLessThanOrEqual(Date.now());
  });
});
