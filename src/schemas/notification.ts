/**
 * Notification channels and their delivery log as the API shows them (CONTRACT §9, §13): the one
 * definition for routes, store and OpenAPI. A channel's `config` depends on its type; each type's
 * fields are described here and checked by its driver (`notify/channels/`).
 */
import { type Static, Type } from '@sinclair/typebox';
import { CHANGE_TYPES } from '../core/changes.js';
import { CHANNEL_TYPES, DELIVERY_STATUSES, DEVICE_MESSAGE_EVENTS, MESSAGE_EVENTS, SCAN_EVENTS } from '../core/notify-rules.js';
import { SEVERITIES } from '../core/severity.js';
import { SECRET_MASK, ZONE_NAME_MAX_LENGTH } from '../core/limits.js';
import { Nullable, StringEnum, Timestamp } from './common.js';

export const CHANNEL_NAME_MAX_LENGTH = 100;

const CONFIG_DESCRIPTION =
  `Depends on \`type\`: one of the channel types' config schemas. Secrets (fields marked \`x-secret\`, the Slack and Discord ` +
  `webhook URLs, an ntfy URL with \`?auth=\`) read back as \`${SECRET_MASK}\`; send the mask back to keep one. ` +
  'No URL may carry a user name or password (400). ' +
  'Changing the destination (url, host), or turning email TLS off, without giving the secret again clears it (reads back null).';

/**
 * Validated as an object here and by the type's driver schema in notify/channel-config.ts (400s
 * that name the key); in the OpenAPI document the union of the drivers' schemas
 * (api/openapi-channels.ts replaces the `x-channel-config` mark).
 */
export const ChannelConfig = Type.Record(Type.String(), Type.Unknown(), { description: CONFIG_DESCRIPTION, 'x-channel-config': true });

export const ChannelFilters = Type.Object(
  {
    change_types: Nullable(Type.Array(StringEnum(CHANGE_TYPES), { uniqueItems: true, description: 'null: every change type' })),
    min_severity: StringEnum(SEVERITIES, { description: 'Changes at least this severe (default low)' }),
    zones: Nullable(
      Type.Array(Type.String({ minLength: 1, maxLength: ZONE_NAME_MAX_LENGTH }), {
        uniqueItems: true,
        maxItems: 100,
        description: 'Only changes of devices currently in these zones; null: every device (default)',
      }),
    ),
    untrusted_only: Type.Boolean({ description: 'Only changes of devices not marked trusted (default false)' }),
    scan_events: Type.Array(StringEnum(SCAN_EVENTS), {
      uniqueItems: true,
      description: 'Also send a message when a scan completes without matching changes or fails (default ["failed"])',
    }),
    events: Type.Array(StringEnum(DEVICE_MESSAGE_EVENTS), {
      uniqueItems: true,
      description:
        'Device events to send besides the scan messages, one message each: `device.new` (a device seen for the first time), ' +
        '`device.offline` / `device.online` (a watched device went away or came back, with how long it was away), ' +
        "`risk.changed` (a device's risk level went up or down, with why: a scan, a re-assessment, an acceptance; a lower risk says so as good news). " +
        'zones and untrusted_only apply to them; archived devices never send any. Default []: the scan events only',
    }),
  },
  { additionalProperties: false },
);

export const QuietHours = Type.Object(
  {
    start: Type.String({ description: 'HH:MM local time, e.g. 22:00' }),
    end: Type.String({ description: 'HH:MM local time, e.g. 07:00 (may be earlier than start: the window crosses midnight)' }),
    timezone: Type.Optional(Type.String({ description: 'IANA time zone (default UTC)' })),
  },
  { additionalProperties: false, description: 'Messages due inside are held and sent when it ends; critical changes are never held' },
);

const DIGEST_DESCRIPTION =
  'A five-field cron (in quiet_hours.timezone, else UTC): matching changes are collected and sent as one "digest" message at ' +
  'those times instead of after each scan. null: a message after each scan.';

export const Channel = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  type: StringEnum(CHANNEL_TYPES),
  enabled: Type.Boolean(),
  config: ChannelConfig,
  filters: ChannelFilters,
  digest: Nullable(Type.String({ description: DIGEST_DESCRIPTION })),
  quiet_hours: Nullable(Type.Object({ start: Type.String(), end: Type.String(), timezone: Type.String() })),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const Name = Type.String({ minLength: 1, maxLength: CHANNEL_NAME_MAX_LENGTH, description: 'Unique, 1–100 characters' });

export const ChannelCreate = Type.Object(
  {
    name: Name,
    type: StringEnum(CHANNEL_TYPES),
    enabled: Type.Optional(Type.Boolean({ description: 'Default true' })),
    config: ChannelConfig,
    filters: Type.Optional(Type.Partial(ChannelFilters, { additionalProperties: false })),
    digest: Type.Optional(Nullable(Type.String({ maxLength: 200, description: DIGEST_DESCRIPTION }))),
    quiet_hours: Type.Optional(Nullable(QuietHours)),
  },
  { additionalProperties: false },
);

export const ChannelUpdate = Type.Object(
  {
    name: Type.Optional(Name),
    type: Type.Optional(StringEnum(CHANNEL_TYPES, { description: 'Cannot change; only the current type is accepted' })),
    enabled: Type.Optional(Type.Boolean()),
    config: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'Only the keys given change (deep merge; `null` resets a key to its default). ' + CONFIG_DESCRIPTION,
      }),
    ),
    filters: Type.Optional(Type.Partial(ChannelFilters, { additionalProperties: false })),
    digest: Type.Optional(Nullable(Type.String({ maxLength: 200, description: DIGEST_DESCRIPTION }))),
    quiet_hours: Type.Optional(
      Nullable(Type.Partial(QuietHours, { additionalProperties: false, description: 'Merged into the current quiet hours; null removes them' })),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const Delivery = Type.Object({
  id: Type.Integer({ description: 'Also sent as X-Netwarden-Delivery' }),
  channel_id: Type.Integer(),
  event: StringEnum(MESSAGE_EVENTS),
  status: StringEnum(DELIVERY_STATUSES, { description: 'pending (due, held by quiet hours, or waiting for a retry), sent, failed' }),
  attempts: Type.Integer(),
  last_error: Nullable(Type.String()),
  created_at: Timestamp,
  sent_at: Nullable(Timestamp),
  scan_id: Nullable(Type.Integer({ description: 'The scan the message is about; null for digests and tests' })),
  next_attempt_at: Nullable(Timestamp),
});

export type Channel = Static<typeof Channel>;
export type ChannelCreate = Static<typeof ChannelCreate>;
export type ChannelUpdate = Static<typeof ChannelUpdate>;
export type ChannelFiltersRecord = Static<typeof ChannelFilters>;
export type Delivery = Static<typeof Delivery>;
