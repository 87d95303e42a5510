import { describe, expect, it } from 'vitest';
import { ProgressTracker } from '../../src/scan/progress.js';

describe('ProgressTracker', () => {
  it('maps each phase of a normal scan onto its stretch of one bar that never goes back', () => {
    const t0 = 1_000_000;
    const tracker = new ProgressTracker('normal', 256, t0);
    const seen = [
      tracker.update({ phase: 'discovery', percent: 0 }, t0),
      tracker.update({ phase: 'discovery', percent: 50, hostsFound: 3 }, t0 + 1000),
      tracker.update({ phase: 'discovery', percent: -1, hostsFound: 4 }, t0 + 2000),
      tracker.update({ phase: 'discovery', percent: 100, hostsFound: 4, hostsDone: 0 }, t0 + 2000),
      tracker.update({ phase: 'ports', percent: 50, hostsTotal: 4 }, t0 + 4000),
      // nmap starts each task's percentage at 0 again: the bar holds.
      tracker.update({ phase: 'ports', percent: 10, hostsTotal: 4 }, t0 + 5000),
      tracker.update({ phase: 'services', percent: 100, hostsDone: 4 }, t0 + 8000),
      tracker.update({ phase: 'saving', percent: 0 }, t0 + 9000),
      tracker.update({ phase: 'done', percent: 100 }, t0 + 10_000),
    ];
    expect(seen.map((p) => p.percent)).toEqual([0, 10, 10, 20, 35, 35, 95, 95, 100]);
    expect(seen.map((p) => p.phase)).toEqual(['discovery', 'discovery', 'discovery', 'discovery', 'ports', 'ports', 'services', 'saving', 'done']);
    expect(seen[3]).toMatchObject({ hosts_found: 4, hosts_done: 0, hosts_total: 256 });
    expect(seen.at(-1)).toMatchObject({ hosts_done: 4, elapsed_seconds: 10, eta_seconds: 0 });
  });

  it('estimates the time left from the pace so far once there is some progress', () => {
    const t0 = 0;
    const tracker = new ProgressTracker('quick', 16, t0);
    // nmap's 99 s for discovery, and saving's 5% at the pace so far (1% in 1 s).
    expect(tracker.update({ phase: 'discovery', percent: 1, etaSeconds: 99 }, t0 + 1000).eta_seconds).toBe(104);
    const halfway = tracker.update({ phase: 'discovery', percent: 50 }, t0 + 10_000);
    expect(halfway.percent).toBe(47.5);
    expect(halfway.eta_seconds).toBeGreaterThan(9);
    expect(halfway.eta_seconds).toBeLessThan(13);
  });
});
