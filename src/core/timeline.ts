/**
 * A device's presence over time (CONTRACT §16, §18), from the completed network scans that looked
 * for it. Pure: the store lists the scans (when each completed, whether it saw the device); this
 * turns them into online/offline intervals by the rule presence applies (core/presence.ts): seen is
 * online; a device goes offline at the scan that makes presence.offline_after_scans consecutive
 * misses. Each boundary is the time of the scan that saw the change; the last interval is open.
 */

export interface TimelineScanInput {
  scan_id: number;
  /** When the scan completed. */
  at: string;
  seen: boolean;
}

export interface PresenceInterval {
  state: 'online' | 'offline';
  from: string;
  to: string | null;
  duration_seconds: number;
}

export interface PresenceOptions {
  /** When the device was first seen: a miss before it says nothing (the device was not known). */
  firstSeen: string;
  /** presence.offline_after_scans (≥ 1). */
  offlineAfterScans: number;
  /** The end of the open interval's duration. */
  now: string;
}

/** Days a timeline covers: 1–3650, 30 by default (as /api/trends). */
export const TIMELINE_DAYS = { min: 1, max: 3650, default: 30 } as const;

/** Presence intervals, oldest first, from scans in any order. */
export function presenceIntervals(scans: readonly TimelineScanInput[], options: PresenceOptions): PresenceInterval[] {
  const ordered = [...scans].sort((a, b) => a.at.localeCompare(b.at) || a.scan_id - b.scan_id);
  const threshold = Math.max(1, Math.floor(options.offlineAfterScans));
  const out: { state: 'online' | 'offline'; from: string; to: string | null }[] = [];
  let missed = 0;
  const enter = (state: 'online' | 'offline', at: string) => {
    const last = out[out.length - 1];
    if (last?.state === state) return;
    if (last) last.to = at;
    out.push({ state, from: at, to: null });
  };
  for (const scan of ordered) {
    if (scan.seen) {
      missed = 0;
      enter('online', scan.at);
      continue;
    }
    if (out.length === 0 && scan.at < options.firstSeen) continue;
    missed++;
    // A first miss in the window of a device known before it: present until the threshold, as presence says.
    if (missed >= threshold) enter('offline', scan.at);
    else if (out.length === 0) enter('online', scan.at);
  }
  const now = Date.parse(options.now);
  return out.map((i) => ({
    ...i,
    duration_seconds: Math.max(0, Math.round(((i.to === null ? now : Date.parse(i.to)) - Date.parse(i.from)) / 1000)),
  }));
}
