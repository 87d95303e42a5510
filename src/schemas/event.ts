/**
 * The live events (SSE `GET /api/events`, CONTRACT §10): what each event's `data:` holds, the one
 * definition for the event bus (events/bus.ts types what it publishes from it), the events route
 * (its OpenAPI description) and so the web UI (its types are generated from that description).
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { EVENT_NAMES, type EventName } from '../core/event-names.js';
import { Change } from './change.js';
import { DeviceSummary } from './device.js';
import { ScanProgress, ScanRecord } from './scan.js';
import { Nullable, StringEnum } from './common.js';
import { RISK_LEVELS } from '../core/severity.js';

/** `scan_progress`: the running scan's progress, by its id. */
export const ScanProgressEvent = Type.Object({ scan_id: Type.Integer(), progress: ScanProgress });

const RiskState = Type.Object({ level: StringEnum(RISK_LEVELS), score: Type.Integer({ minimum: 0, maximum: 100 }) });

/** `risk_changed`: a device's risk level changed (CONTRACT §17). */
export const RiskChangedEvent = Type.Object({
  device_id: Type.Integer(),
  ip_address: Type.String(),
  name: Nullable(Type.String({ description: 'Its label, else its hostname' })),
  before: RiskState,
  after: RiskState,
  reason: StringEnum(['scan', 'reassessed', 'accepted', 'acceptance_removed', 'acceptance_expired'] as const, {
    description:
      '`scan`: a scan or import changed its ports or services; `reassessed`: its findings changed (a zone policy, the rules or CVE data); `accepted`, `acceptance_removed`, `acceptance_expired`: an acceptance of one of its findings began or ended',
  }),
});

/** `device_offline` / `device_online`: a watched device's presence changed (CONTRACT §17, §18). */
export const DevicePresenceEvent = Type.Object({
  device: DeviceSummary,
  last_seen: Nullable(
    Type.String({
      format: 'date-time',
      description: 'When a scan last saw the device before it went away (for device_online: before this return); null when unknown',
    }),
  ),
  away_seconds: Nullable(
    Type.Integer({
      minimum: 0,
      description: 'How long it has been away: from `last_seen` to the scan that noticed the change; null when unknown',
    }),
  ),
});

/** Each event's data and what the event means; a name of core/event-names.ts without one does not compile. */
export const EVENT_DATA = {
  scan_queued: { schema: ScanRecord, description: 'A scan was queued (it starts when the running one ends)' },
  scan_started: { schema: ScanRecord, description: 'A scan started' },
  scan_progress: { schema: ScanProgressEvent, description: 'Progress of the running scan, at most twice a second' },
  scan_finished: {
    schema: ScanRecord,
    description: 'A scan ended: completed, failed or cancelled (`status`); it follows the scan’s change and device_updated events',
  },
  change: { schema: Change, description: 'A change a completed scan detected, as GET /api/changes shows it (with its id)' },
  device_updated: {
    schema: DeviceSummary,
    description: `A device's summary after it was edited (PUT /api/devices/{id}, bulk edits) or after a scan changed it (it has changes, or came online or went offline; at most 500 per scan)`,
  },
  risk_changed: {
    schema: RiskChangedEvent,
    description:
      "A device's risk level changed: a finding was accepted or its acceptance ended, or a re-assessment (zone policy, rules, CVE data) changed its findings",
  },
  device_new: {
    schema: DeviceSummary,
    description: 'A scan saw a device for the first time: it is `status: "new"` until acknowledged (at most 500 per scan, lowest ids first)',
  },
  device_offline: {
    schema: DevicePresenceEvent,
    description: 'A device watched for it (`watch.offline`) went offline after a scan (presence.offline_after_scans); never for archived devices',
  },
  device_online: {
    schema: DevicePresenceEvent,
    description: 'A device watched for it (`watch.online`) came back online after a scan, with how long it was away; never for archived devices',
  },
} satisfies Record<EventName, { schema: TSchema; description: string }>;

/** Each event's name and the shape of its data. */
export type EventPayloads = { [K in EventName]: Static<(typeof EVENT_DATA)[K]['schema']> };

/** One event as the OpenAPI document describes it: the three SSE fields, `data` parsed. */
export const LiveEvent = Type.Union(
  EVENT_NAMES.map((name) =>
    Type.Object(
      {
        id: Type.Integer({ description: 'The SSE `id:` field: increases by one per event in this process' }),
        event: Type.Literal(name, { description: 'The SSE `event:` field' }),
        data: EVENT_DATA[name].schema,
      },
      { title: name, description: EVENT_DATA[name].description },
    ),
  ),
  {
    description:
      'The stream is `text/event-stream`: each event is an `id: <n>` line, an `event: <name>` line and a `data: <JSON on one line>` line, ' +
      'then a blank line. Lines starting with `:` are comments (keep-alive). Shown here: one event with its `data` parsed.',
  },
);
