/** A device's timeline (CONTRACT §16, §18), as the API shows it: the one definition. */
import { type Static, Type } from '@sinclair/typebox';
import { Change } from './change.js';
import { Nullable, StringEnum, Timestamp } from './common.js';

export const PresenceInterval = Type.Object({
  state: StringEnum(['online', 'offline'] as const),
  from: Timestamp,
  to: Nullable(Timestamp),
  duration_seconds: Type.Number({ minimum: 0, description: 'From `from` to `to`, or to now for the current interval' }),
});

export const TimelineScan = Type.Object({
  scan_id: Type.Integer(),
  at: Timestamp,
  seen: Type.Boolean({ description: 'Whether the scan saw the device' }),
});

export const Timeline = Type.Object({
  device_id: Type.Integer(),
  days: Type.Integer(),
  from: Timestamp,
  to: Timestamp,
  presence: Type.Array(PresenceInterval, {
    description:
      'Oldest first. Boundaries are the times of the scans that saw the change (a device goes offline at the scan that makes presence.offline_after_scans misses); the current interval has `to: null`',
  }),
  changes: Type.Array(Change, { description: "The device's changes in the window, oldest first" }),
  scans: Type.Array(TimelineScan, {
    description: "The completed network scans in the window whose target held the device's address, and any that saw it, oldest first",
  }),
});

export type Timeline = Static<typeof Timeline>;
export type PresenceIntervalRecord = Static<typeof PresenceInterval>;
