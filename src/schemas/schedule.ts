/** A schedule as the API shows it (CONTRACT §7): the one definition for routes, store, CLI and OpenAPI. */
import { type Static, Type } from '@sinclair/typebox';
import { SCAN_PROFILES, SCAN_STATUSES } from '../core/model.js';
import { Nullable, StringEnum, Timestamp } from './common.js';

export const Schedule = Type.Object({
  id: Type.Integer(),
  name: Type.String({ description: 'Unique, 1–100 characters' }),
  cron: Type.String({ description: 'Five fields: minute hour day-of-month month day-of-week' }),
  timezone: Type.String({ description: 'IANA time zone the cron pattern is read in' }),
  profile: StringEnum(SCAN_PROFILES),
  subnet: Nullable(Type.String({ description: 'CIDR; null scans the configured network.subnet at run time' })),
  enabled: Type.Boolean(),
  next_run_at: Nullable(Timestamp),
  last_run_at: Nullable(Timestamp),
  last_scan_id: Nullable(Type.Integer()),
  last_status: Nullable(StringEnum(SCAN_STATUSES)),
  created_at: Timestamp,
  updated_at: Timestamp,
});

/** `POST /api/schedules/{id}/run`. */
export const ScheduleRunResult = Type.Object({
  status: StringEnum(['queued', 'started'] as const, {
    description: 'started: the scan is running; queued: it starts when the scan running now ends',
  }),
  scan_id: Type.Integer(),
});

/** `GET /api/schedules/preview`. */
export const SchedulePreview = Type.Object({
  cron: Type.String(),
  timezone: Type.String(),
  next_runs: Type.Array(Timestamp),
});

export type Schedule = Static<typeof Schedule>;
export type ScheduleRunResult = Static<typeof ScheduleRunResult>;
export type SchedulePreview = Static<typeof SchedulePreview>;
