/**
 * Pure rules of notifications (CONTRACT §9, §13): the channel types and message events, which
 * changes a channel's filters select, digest crons and quiet hours. No I/O: the notifier loads
 * channels, changes and device facts and asks these functions what to do with them.
 *
 * Cron parsing lives here (croner, five fields) until the schedules work unifies it with its own.
 */
import { Cron } from 'croner';
import type { ChangeType } from './changes.js';
import { SEVERITY_RANK, type Severity } from './severity.js';

export const CHANNEL_TYPES = ['webhook', 'ntfy', 'gotify', 'discord', 'slack', 'email', 'mqtt'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

/** The `event` of a message (the webhook's `event` field and `X-Netwarden-Event` header). */
/**
 * Device events a channel can subscribe to (`filters.events`, CONTRACT §17, §18), each the message
 * of one live event of the same meaning (DEVICE_MESSAGE_OF).
 */
export const DEVICE_MESSAGE_EVENTS = ['device.new', 'device.offline', 'device.online', 'risk.changed'] as const;
export type DeviceMessageEvent = (typeof DEVICE_MESSAGE_EVENTS)[number];
export const DEVICE_MESSAGE_OF = {
  device_new: 'device.new',
  device_offline: 'device.offline',
  device_online: 'device.online',
  risk_changed: 'risk.changed',
} as const;

export const MESSAGE_EVENTS = ['scan.changes', 'scan.completed', 'scan.failed', 'digest', 'test', ...DEVICE_MESSAGE_EVENTS] as const;
export type MessageEvent = (typeof MESSAGE_EVENTS)[number];

export const DELIVERY_STATUSES = ['pending', 'sent', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Scan outcomes a channel can ask to hear about besides changes. */
export const SCAN_EVENTS = ['completed', 'failed'] as const;
export type ScanEventName = (typeof SCAN_EVENTS)[number];

export interface ChannelFilters {
  /** null: every change type. */
  change_types: ChangeType[] | null;
  min_severity: Severity;
  /** null: every zone (and devices without one). */
  zones: string[] | null;
  untrusted_only: boolean;
  scan_events: ScanEventName[];
  /** Device events wanted besides the scan messages; [] (default): the scan events only. */
  events: DeviceMessageEvent[];
}

export function defaultFilters(): ChannelFilters {
  return { change_types: null, min_severity: 'low', zones: null, untrusted_only: false, scan_events: ['failed'], events: [] };
}

export interface QuietHours {
  /** `HH:MM`, local time in `timezone`. */
  start: string;
  end: string;
  timezone: string;
}

/** What a filter needs of a change's device, as the inventory holds it now. */
export interface DeviceFacts {
  zone: string | null;
  is_trusted: boolean;
}

/** What filtering needs of a change. */
export interface FilterableChange {
  change_type: string;
  severity: string;
  device_id: number | null;
}

/**
 * Whether a change passes a channel's filters. Zone and trust are the device's *current* ones
 * (a device moved to the "Guest" zone after it appeared is judged as a guest now); a change whose
 * device is unknown never matches a zone filter and counts as untrusted.
 */
export function changeMatches(change: FilterableChange, filters: ChannelFilters, device: DeviceFacts | undefined): boolean {
  if (filters.change_types && !filters.change_types.includes(change.change_type as ChangeType)) return false;
  const rank = SEVERITY_RANK[change.severity as Severity] ?? 0;
  if (rank < SEVERITY_RANK[filters.min_severity]) return false;
  if (filters.zones && (!device?.zone || !filters.zones.includes(device.zone))) return false;
  if (filters.untrusted_only && device?.is_trusted) return false;
  return true;
}

// Cron -----------------------------------------------------------------------------------------

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

const CRON_HELP = 'must be a cron expression with five fields (minute hour day-of-month month day-of-week), such as "0 8 * * *"';

/** A five-field cron in a time zone, or why it is not one. */
export function parseCron(pattern: string, timezone = 'UTC'): Checked<Cron> {
  if (typeof pattern !== 'string' || pattern.trim() === '') return { ok: false, error: CRON_HELP };
  const fields = pattern.trim().split(/\s+/);
  if (fields.length !== 5) return { ok: false, error: `${CRON_HELP}; "${pattern}" has ${fields.length}` };
  try {
    const cron = new Cron(pattern.trim(), { mode: '5-part', timezone, paused: true });
    // Some patterns parse but never fire (30 February).
    if (!cron.nextRun(new Date())) return { ok: false, error: `${CRON_HELP}; "${pattern}" never fires` };
    return { ok: true, value: cron };
  } catch (err) {
    const why = (err as Error).message.replace(/^CronPattern:\s*/, '');
    return { ok: false, error: `${CRON_HELP}: ${why}` };
  }
}

/** Whether `name` is an IANA time zone this runtime knows. */
export function isTimeZone(name: unknown): name is string {
  if (typeof name !== 'string' || name === '') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * The latest slot of `cron` after `since` and at or before `now`, or null when none is due. Slots
 * missed while nothing ran (the service was down) collapse into the latest one: a digest is one
 * message however many of its slots passed.
 */
export function dueSlot(cron: Cron, since: Date, now: Date): Date | null {
  let slot = cron.nextRun(since);
  if (!slot || slot > now) return null;
  // Bounded: a per-minute cron missed for a year is 525,600 steps; stop well before that and
  // take the slot reached (still due, still one message).
  for (let i = 0; i < 100_000; i++) {
    const next = cron.nextRun(slot);
    if (!next || next > now) break;
    slot = next;
  }
  return slot;
}

// Quiet hours ----------------------------------------------------------------------------------

const TIME = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** Checks a quiet_hours object; the problem names its key (`quiet_hours.start: …`). */
export function checkQuietHours(value: { start?: unknown; end?: unknown; timezone?: unknown }): Checked<QuietHours> {
  for (const key of ['start', 'end'] as const) {
    const v = value[key];
    if (v === undefined) return { ok: false, error: `quiet_hours.${key}: is required` };
    if (typeof v !== 'string' || !TIME.test(v))
      return { ok: false, error: `quiet_hours.${key}: must be a time of day HH:MM (00:00–23:59), such as 22:00` };
  }
  if (value.start === value.end) return { ok: false, error: 'quiet_hours.end: must differ from start' };
  const timezone = value.timezone ?? 'UTC';
  if (!isTimeZone(timezone)) return { ok: false, error: 'quiet_hours.timezone: must be an IANA time zone name such as Europe/Berlin or UTC' };
  return { ok: true, value: { start: value.start as string, end: value.end as string, timezone } };
}

function minutesOf(time: string): number {
  const m = TIME.exec(time)!;
  return Number(m[1]) * 60 + Number(m[2]);
}

/** Minutes since local midnight of `at` in `timezone`. */
function localMinutes(at: Date, timezone: string): number {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: timezone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(at);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return get('hour') * 60 + get('minute');
}

/**
 * When the quiet hours that `at` falls in end, or null when `at` is outside them. Windows may
 * cross midnight (22:00–07:00). The end is found by the cron `M H * * *` in the time zone, so
 * daylight-saving changes are croner's problem, not ours.
 */
export function quietUntil(quiet: QuietHours | null, at: Date): Date | null {
  if (!quiet) return null;
  const start = minutesOf(quiet.start);
  const end = minutesOf(quiet.end);
  const now = localMinutes(at, quiet.timezone);
  const inside = start < end ? now >= start && now < end : now >= start || now < end;
  if (!inside) return null;
  const cron = new Cron(`${end % 60} ${Math.floor(end / 60)} * * *`, { mode: '5-part', timezone: quiet.timezone, paused: true });
  return cron.nextRun(at);
}
