// The API's shapes under the names the UI uses (props, state). Every record type is taken from
// api-types.ts, which scripts/generate-api-types.mjs generates from the server's OpenAPI document:
// a field renamed or retyped in a route schema is a type error here or where the UI uses it. The
// calls themselves need no names from here: the client (api.ts) types each answer by its route.
// Lists of values the UI offers (filters, selects) come from the server's import-free modules in
// src/core/ where they are defined there, and are written out here otherwise; either way they are
// checked against the API's enums (`everyValue`).
import { SCAN_ENGINE_SETTINGS, SCAN_PROFILES as PROFILES } from '../core/model.js';
import { RISK_LEVELS as LEVELS, SEVERITIES as SEVERITY_SCALE } from '../core/severity.js';
import type { paths } from './api-types';

type Method = 'get' | 'post' | 'put' | 'delete';

/** The JSON body of the successful (200, 201 or 202) answer to `method` on `path`. */
type Answer<P extends keyof paths, M extends Method = 'get'> = paths[P][M] extends { responses: infer R }
  ? {
      [S in keyof R]: S extends 200 | 201 | 202 ? (R[S] extends { content: { 'application/json': infer T } } ? T : never) : never;
    }[keyof R]
  : never;

/** The JSON body `method` on `path` takes. */
type Body<P extends keyof paths, M extends Method> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

/** The query parameters `GET path` accepts. */
type QueryOf<P extends keyof paths> = paths[P]['get'] extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

export type Me = Answer<'/api/auth/me'>;

export type DeviceSummary = Answer<'/api/devices'>[number];
export type DeviceDetail = Answer<'/api/devices/{device_id}'>;
export type Port = DeviceDetail['ports'][number];
export type Finding = DeviceDetail['risk_details']['findings'][number];
export type Cve = DeviceDetail['cves'][number];
export type RiskLevel = DeviceSummary['risk_level'];
export type DeviceSort = NonNullable<QueryOf<'/api/devices'>['sort']>;

export type Topology = Answer<'/api/visualization/topology'>;

export type Scan = Answer<'/api/scans/{scan_id}'>;
export type ScanStatus = Scan['status'];
export type ScanProgress = NonNullable<Scan['progress']>;
export type ScanState = Answer<'/api/scan/status'>;
export type ScanStarted = Answer<'/api/scan/trigger', 'post'>;
export type ScanProfile = ScanStarted['profile'];

export type Change = Answer<'/api/changes'>[number];
export type ChangeType = Change['change_type'];
export type Severity = Change['severity'];

/** One live event as GET /api/events describes it (`id`, `event`, `data` parsed): a union by `event`. */
export type StreamedEvent = paths['/api/events']['get']['responses'][200]['content']['text/event-stream'];

export type Stats = Answer<'/api/stats'>;
export type Trends = Answer<'/api/trends'>;

export type ApiKey = Answer<'/api/keys'>[number];
export type NewApiKey = Answer<'/api/keys', 'post'>;
export type AuditEntry = Answer<'/api/audit-logs'>[number];
export type AuditAction = NonNullable<QueryOf<'/api/audit-logs'>['action']>;
export type NetworkDetection = Answer<'/api/network/detect'>;
export type Zones = Answer<'/api/zones'>;

export type PriorityFinding = Answer<'/api/findings'>[number];
export type Acceptance = Answer<'/api/acceptances'>[number];

export type Config = Answer<'/api/config'>;
export type ScanEngine = Config['scanning']['engine'];

/**
 * A body for `PUT /api/config`: any part of the configuration (the API merges it section by
 * section). The OpenAPI document leaves the body open, so its shape is the configuration's.
 */
export type ConfigPatch = { [S in keyof Config]?: Config[S] extends unknown[] ? Config[S] : Partial<Config[S]> };

/**
 * Every value of the string union `T`, as a list for a select or a filter: a value missing from
 * the list, or one the API does not know, is a type error.
 * Use: `everyValue<ChangeType>()(['device_added', …])`.
 */
export function everyValue<T extends string>() {
  return <const L extends readonly T[]>(values: L & ([T] extends [L[number]] ? unknown : { missing: Exclude<T, L[number]> })): L => values;
}

/** Whether `text` (from the address bar, say) is one of `values`. */
export function isOneOf<T extends string>(values: readonly T[], text: string | undefined): text is T {
  return (values as readonly string[]).includes(text as string);
}

// The server's own lists (pure modules of src/core/, safe in the browser bundle), checked
// against the API's enums; and the lists that live only in server modules the UI cannot load.
export const RISK_LEVELS = everyValue<RiskLevel>()(LEVELS);
export const SEVERITIES = everyValue<Severity>()(SEVERITY_SCALE);
export const SCAN_PROFILES = everyValue<ScanProfile>()(PROFILES);
export const CHANGE_TYPES = everyValue<ChangeType>()(['device_added', 'device_removed', 'port_opened', 'port_closed', 'service_changed']);
export const SCAN_ENGINES = everyValue<ScanEngine>()(SCAN_ENGINE_SETTINGS);

// Schedules and notifications (CONTRACT §7, §9, §13).

export type Schedule = Answer<'/api/schedules'>[number];
/** The body of `POST /api/schedules` (and, each field optional, of `PUT`). */
export type ScheduleInput = Body<'/api/schedules', 'post'>;

export type Channel = Answer<'/api/notifications/channels'>[number];
export type ChannelType = Channel['type'];
export type ScanOutcome = Channel['filters']['scan_events'][number];
/** A device event a channel can send a message for (`filters.events`). */
export type DeviceMessageEvent = Channel['filters']['events'][number];
export type Delivery = Answer<'/api/notifications/deliveries'>[number];

export const CHANNEL_TYPES = everyValue<ChannelType>()(['webhook', 'ntfy', 'gotify', 'discord', 'slack', 'email', 'mqtt']);
export const DELIVERY_STATUSES = everyValue<Delivery['status']>()(['pending', 'sent', 'failed']);

// Agents (CONTRACT §12).

export type Agent = Answer<'/api/agents'>[number];
export type NewAgent = Body<'/api/agents', 'post'>;
export type CreatedAgent = Answer<'/api/agents', 'post'>;

export type Comparison = Answer<'/api/scans/{current_id}/compare/{previous_id}'>;
export type DeviceComparison = Comparison['devices'][number];
export type Timeline = Answer<'/api/devices/{device_id}/timeline'>;

export type SubnetCheck = Answer<'/api/network/check'>;
export type LockedSetting = Answer<'/api/config/locked'>[number];
export type User = Answer<'/api/users'>[number];
// Port matrix (CONTRACT §16, issue 22 §3).
export type PortMatrix = Answer<'/api/visualization/port-matrix'>;
export type MatrixPort = PortMatrix['ports'][number];
export type MatrixDevice = PortMatrix['devices'][number];
