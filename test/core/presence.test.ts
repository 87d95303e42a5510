/**
 * Presence rules (core/presence.ts) over random histories: per device, a sequence of completed
 * network scans that saw it or missed it, with a random presence.offline_after_scans.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decidePresence, type PresenceState } from '../../src/core/presence.js';

describe('decidePresence', () => {
  it('takes a device offline exactly at the threshold, brings it back once, and never repeats an arrival or a removal', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        // Up to 5 devices, each with its own history of up to 30 scans (true: seen).
        fc.array(fc.array(fc.boolean(), { minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 5 }),
        (threshold, histories) => {
          // Every device starts as new: not online, nothing missed.
          const state = new Map<number, PresenceState>(histories.map((_, i) => [i + 1, { deviceId: i + 1, online: false, missedScans: 0 }]));
          const last = new Map<number, 'added' | 'removed'>();
          const run = new Map<number, number>(); // consecutive misses so far, counted here independently
          const everSeen = new Set<number>();
          const steps = Math.max(...histories.map((h) => h.length));
          for (let step = 0; step < steps; step++) {
            const seen: PresenceState[] = [];
            const missing: PresenceState[] = [];
            histories.forEach((h, i) => {
              const id = i + 1;
              // A device the scan covers only once it exists (its first sighting creates it).
              if (step >= h.length || (!h[step] && !everSeen.has(id))) return;
              (h[step] ? seen : missing).push(state.get(id)!);
            });
            const wasOnline = new Map([...state].map(([id, s]) => [id, s.online]));
            const outcome = decidePresence({ seen, missing, offlineAfterScans: threshold });
            for (const u of outcome.updates) state.set(u.deviceId, u);

            for (const s of seen) {
              everSeen.add(s.deviceId);
              run.set(s.deviceId, 0);
            }
            for (const m of missing) run.set(m.deviceId, (run.get(m.deviceId) ?? 0) + 1);

            for (const id of outcome.arrived) {
              expect(last.get(id), `device ${id} added twice in a row`).not.toBe('added');
              expect(wasOnline.get(id)).toBe(false);
              last.set(id, 'added');
            }
            for (const id of outcome.removed) {
              expect(last.get(id), `device ${id} removed twice in a row`).toBe('added');
              // Removed exactly in the scan whose miss reached the threshold.
              expect(run.get(id)).toBe(threshold);
              last.set(id, 'removed');
            }
            for (const m of missing) {
              if (run.get(m.deviceId) === threshold) expect(outcome.removed).toContain(m.deviceId);
              else expect(outcome.removed).not.toContain(m.deviceId);
            }
            // The stored state agrees with the history: the counter is the current run of misses,
            // and a device seen at least once is online exactly while that run is below the threshold.
            for (const id of everSeen) {
              const s = state.get(id)!;
              expect(s.missedScans).toBe(run.get(id));
              expect(s.online).toBe(s.missedScans < threshold);
            }
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('with a threshold of 1 a device goes offline in the first scan that misses it', () => {
    const outcome = decidePresence({
      seen: [{ deviceId: 1, online: true, missedScans: 0 }],
      missing: [{ deviceId: 2, online: true, missedScans: 0 }],
      offlineAfterScans: 1,
    });
    expect(outcome).toEqual({ updates: [{ deviceId: 2, online: false, missedScans: 1 }], arrived: [], removed: [2] });
  });

  it('counts further misses of a device already offline without removing it again', () => {
    const outcome = decidePresence({ seen: [], missing: [{ deviceId: 2, online: false, missedScans: 4 }], offlineAfterScans: 3 });
    expect(outcome).toEqual({ updates: [{ deviceId: 2, online: false, missedScans: 5 }], arrived: [], removed: [] });
  });

  it('removes at once a device that already missed more scans than a lowered threshold', () => {
    const outcome = decidePresence({ seen: [], missing: [{ deviceId: 2, online: true, missedScans: 4 }], offlineAfterScans: 2 });
    expect(outcome.removed).toEqual([2]);
  });

  it('writes nothing for a device seen again that was online with nothing missed', () => {
    const outcome = decidePresence({ seen: [{ deviceId: 1, online: true, missedScans: 0 }], missing: [], offlineAfterScans: 3 });
    expect(outcome).toEqual({ updates: [], arrived: [], removed: [] });
  });

  it('resets the count of a device seen again before the threshold, reporting nothing', () => {
    const outcome = decidePresence({ seen: [{ deviceId: 1, online: true, missedScans: 2 }], missing: [], offlineAfterScans: 3 });
    expect(outcome).toEqual({ updates: [{ deviceId: 1, online: true, missedScans: 0 }], arrived: [], removed: [] });
  });
});
