/**
 * Presence (CONTRACT §8): when a device counts as gone and when as back, so that one missed
 * answer does not flap a device offline and online again. Pure: the shell reads each device's
 * state before a completed scan and writes back what this returns.
 *
 * Rules (documented in docs/scanning.md):
 * - Every device a completed scan saw is present: online, `missed_scans` 0. One that was not
 *   online before (new, or gone earlier) has arrived: that scan reports `device_added`.
 * - Every device inside a completed network scan's target (outside `network.exclude`) that it did
 *   not see has missed one more scan. The scan in which the count reaches
 *   `presence.offline_after_scans` while the device is online takes it offline and reports
 *   `device_removed`; further misses only count.
 * - A device may carry its own threshold (`presence.offline_after_scans` on the device, "can
 *   sleep": a phone that misses a scan while asleep is not down); it replaces the setting's for it.
 * - Failed and cancelled scans change nothing; device scans only count sightings.
 * So `device_added` and `device_removed` alternate for each device, never twice in a row.
 */

/** A device's presence as stored. */
export interface PresenceState {
  deviceId: number;
  online: boolean;
  /** Consecutive completed network scans of its address that did not see it. */
  missedScans: number;
  /** The device's own threshold ("can sleep"), replacing offline_after_scans for it; null/absent: the setting's. */
  offlineAfterScans?: number | null;
}

export interface PresenceInput {
  /** The devices this scan saw, with their state before it. */
  seen: readonly PresenceState[];
  /** The devices inside this network scan's target that it did not see (empty for a device scan). */
  missing: readonly PresenceState[];
  /** presence.offline_after_scans (≥ 1). */
  offlineAfterScans: number;
}

export interface PresenceOutcome {
  /** The new state of each device whose state changes (devices already online with 0 misses are left out). */
  updates: PresenceState[];
  /** Seen devices that were not online before: each one's arrival is a `device_added`. */
  arrived: number[];
  /** Devices this scan took offline: each one is a `device_removed`. */
  removed: number[];
}

export function decidePresence({ seen, missing, offlineAfterScans }: PresenceInput): PresenceOutcome {
  const threshold = (own: number | null | undefined) => Math.max(1, Math.floor(own ?? offlineAfterScans));
  const updates: PresenceState[] = [];
  const arrived: number[] = [];
  const removed: number[] = [];
  for (const d of seen) {
    if (!d.online) arrived.push(d.deviceId);
    if (!d.online || d.missedScans !== 0) updates.push({ deviceId: d.deviceId, online: true, missedScans: 0 });
  }
  for (const d of missing) {
    const missedScans = d.missedScans + 1;
    // `>=`: a threshold lowered since the last scan takes a device that already missed more offline now.
    const online = d.online && missedScans < threshold(d.offlineAfterScans);
    if (d.online && !online) removed.push(d.deviceId);
    updates.push({ deviceId: d.deviceId, online, missedScans });
  }
  return { updates, arrived, removed };
}
