import { describe, expect, it } from 'vitest';
import { cveSeverity } from '../../src/core/risk.js';
import {
  AT_RISK_LEVELS,
  RISK_LEVELS,
  RISK_SCORE_BANDS,
  SEVERITIES,
  asFindingSeverity,
  severityFromCvss,
  worse,
  worstFirst,
} from '../../src/core/severity.js';

describe('the severity scale', () => {
  it('maps CVSS scores to NVD ratings at the band edges, unscored as medium', () => {
    const cases: [number | null, string][] = [
      [10, 'critical'],
      [9.0, 'critical'],
      [8.9, 'high'],
      [7.0, 'high'],
      [6.9, 'medium'],
      [4.0, 'medium'],
      [3.9, 'low'],
      [0.1, 'low'],
      [0, 'info'],
      [null, 'medium'],
      [Number.NaN, 'medium'],
    ];
    for (const [score, expected] of cases) expect(severityFromCvss(score), String(score)).toBe(expected);
  });

  it('gives a CVE finding the same severity as the CVE, info raised to low, for every score', () => {
    for (let tenths = 0; tenths <= 100; tenths++) {
      const score = tenths / 10;
      expect(cveSeverity({ severity: '', cvss_score: score }), String(score)).toBe(asFindingSeverity(severityFromCvss(score)));
    }
  });

  it('orders levels worst first and picks the worse of two', () => {
    expect([...SEVERITIES].reverse().sort(worstFirst)).toEqual([...SEVERITIES]);
    expect([...RISK_LEVELS].reverse().sort(worstFirst)).toEqual([...RISK_LEVELS]);
    expect(worse('low', 'high')).toBe('high');
    expect(worse('critical', 'medium')).toBe('critical');
    expect(AT_RISK_LEVELS).toEqual(['critical', 'high', 'medium']);
  });

  it('has contiguous score bands from 0 to 100', () => {
    const bands = [...RISK_LEVELS].reverse().map((l) => RISK_SCORE_BANDS[l]);
    expect(bands[0].min).toBe(0);
    expect(bands.at(-1)?.max).toBe(100);
    for (let i = 1; i < bands.length; i++) expect(bands[i].min).toBe(bands[i - 1].max + 1);
  });
});
