import { describe, expect, it } from 'vitest';
import { overallPercent, timeLeft } from '../../src/core/scan-progress.js';

describe('overallPercent', () => {
  it('moves on through each nmap host group of a port run instead of stopping at the highest phase seen', () => {
    const at = (phase: 'ports' | 'services' | 'os', percent: number, hostsDone: number) =>
      overallPercent('full', { phase, percent, hostsDone, hostsTotal: 8 });
    // First group of 4: port scan, service detection, scripts; then its hosts are written.
    const first = [at('ports', 50, 0), at('ports', 100, 0), at('services', 50, 0), at('services', 100, 0), at('os', 100, 0)];
    // Second group: nmap's percentages start again at 0, the 4 written hosts carry the bar.
    const second = [at('ports', 0, 4), at('ports', 100, 4), at('services', 50, 4), at('os', 100, 4), at('os', 100, 8)];
    const all = [...first, ...second].map((p) => Math.round(p! * 10) / 10);
    expect(all).toEqual([35, 50, 68.8, 87.5, 95, 57.5, 72.5, 81.9, 95, 95]);
    for (const p of second) expect(p).toBeGreaterThanOrEqual(first[0]!);
    // The second group's progress rises from its start to its end.
    expect(second.slice(0, 4)).toEqual([...second.slice(0, 4)].sort((a, b) => a! - b!));
  });

  it('counts the current group only over its own hosts when the engine names it', () => {
    const at = (percent: number, hostsDone: number) =>
      overallPercent('full', { phase: 'services', percent, hostsDone, hostsTotal: 8, hostsInGroup: 4 });
    // The first of two groups of 4 ends its service detection half way along the port runs' stretch.
    expect(at(100, 0)).toBe(20 + 75 * ((4 * 0.9) / 8));
    expect(at(100, 4)).toBe(20 + 75 * ((4 + 4 * 0.9) / 8));
    expect(at(0, 4)!).toBeGreaterThan(at(100, 0)!);
  });

  it('maps discovery and saving onto their spans; says nothing for an event without a figure outside the port runs', () => {
    expect(overallPercent('full', { phase: 'discovery', percent: 50 })).toBe(10);
    expect(overallPercent('quick', { phase: 'discovery', percent: 50 })).toBe(47.5);
    expect(overallPercent('full', { phase: 'saving', percent: -1 })).toBe(95);
    expect(overallPercent('full', { phase: 'services', percent: -1, hostsDone: 2, hostsTotal: 4 })).toBe(20 + 75 * ((2 + 2 * 0.4) / 4));
    expect(overallPercent('full', { phase: 'services', percent: 10, hostsDone: 0, hostsTotal: 0 })).toBeNull();
  });
});

describe('timeLeft', () => {
  it("adds nmap's estimate of its current task to the work after it at the pace so far", () => {
    // 40% in 40 s (1 s per percent); the task ends at 60% in nmap's 15 s: 15 + 40 s after it.
    expect(timeLeft({ percent: 40, percentAtTaskEnd: 60, elapsedSeconds: 40, taskRemaining: 15 })).toBe(55);
    // nmap's estimate grows while a service answers slowly: so does the time left.
    expect(timeLeft({ percent: 40, percentAtTaskEnd: 60, elapsedSeconds: 45, taskRemaining: 30 })).toBe(75);
  });

  it('uses the pace alone without an nmap estimate, nmap alone before there is a pace, and 0 when done', () => {
    expect(timeLeft({ percent: 50, percentAtTaskEnd: 50, elapsedSeconds: 10, taskRemaining: null })).toBe(10);
    expect(timeLeft({ percent: 0.5, percentAtTaskEnd: 95, elapsedSeconds: 0.5, taskRemaining: 99 })).toBe(99);
    expect(timeLeft({ percent: 0, percentAtTaskEnd: 0, elapsedSeconds: 0, taskRemaining: null })).toBeNull();
    expect(timeLeft({ percent: 100, percentAtTaskEnd: 100, elapsedSeconds: 9, taskRemaining: 3 })).toBe(0);
  });
});
