/**
 * What a notification channel type is (CONTRACT §9, §13): one driver per type under
 * `notify/channels/`, turning a composed message into a request to its destination. The shared
 * machinery (filters, batching per scan, digests, quiet hours, the delivery log, retries) lives
 * beside this file and does not change when a type is added.
 */
import type { TObject, TSchema } from '@sinclair/typebox';
import type { RiskLevel, Severity } from '../core/severity.js';
import type { Change } from '../schemas/change.js';
import type { ScanRecord } from '../schemas/scan.js';
import type { OutboundGuard } from '../util/outbound.js';

// Defined in core (the record schemas need them too, and schemas/ may not import notify/).
import type { ChannelType, MessageEvent } from '../core/notify-rules.js';
import { NetwardenError } from '../util/errors.js';
import type { DeviceSummary } from '../schemas/device.js';
export { CHANNEL_TYPES, MESSAGE_EVENTS, type ChannelType, type MessageEvent } from '../core/notify-rules.js';

/** The changes of one device, as a message lists them. */
export interface DeviceGroup {
  device_id: number;
  /** `10.0.0.5 "NAS"` with what is known. */
  name: string;
  /** The device page when `server.public_url` is configured, else null. */
  url: string | null;
  changes: Change[];
}

/** One message, composed once and rendered by each driver in its destination's own form. */
export interface OutgoingMessage {
  event: MessageEvent;
  /** The delivery record's id (`X-Netwarden-Delivery`). */
  deliveryId: number;
  sentAt: string;
  /** Short, e.g. "Netwarden: 3 changes on 192.168.1.0/24". */
  title: string;
  /** One line a person reads. */
  summary: string;
  /** The changes in plain words, grouped by device. */
  groups: DeviceGroup[];
  /** The worst severity among the changes (info when none). */
  severity: Severity;
  scan: ScanRecord | null;
  changes: Change[];
  /** Device events (`device.new`, `device.offline`, `device.online`, `risk.changed`): the device, how long it was away, its risk change. */
  device?: DeviceMessage;
}

/** What a device event's message carries (the webhook's `device` field). */
export interface DeviceMessage {
  device: DeviceSummary;
  /** Its last sighting before it went away (offline/online); null when unknown or for a new device. */
  last_seen: string | null;
  away_seconds: number | null;
  /** `risk.changed`: the device's risk before and after, and why it changed (the `risk_changed` event's). */
  risk?: RiskChange;
}

/** A device's risk level and score before and after a change, and why (`risk_changed`). */
export interface RiskChange {
  before: { level: RiskLevel; score: number };
  after: { level: RiskLevel; score: number };
  reason: 'scan' | 'reassessed' | 'accepted' | 'acceptance_removed' | 'acceptance_expired';
}

/** What a driver gets besides the message. */
export interface SendContext {
  /** Aborted at the per-attempt timeout. */
  signal: AbortSignal;
  /** `/health`'s version, for `User-Agent: Netwarden/<version>`. */
  version: string;
  /** Milliseconds one attempt may take (10 s by default). */
  timeoutMs: number;
  /** Which addresses may be reached (loopback, link-local and unspecified only when allowed). */
  guard: OutboundGuard;
}

/**
 * A failed attempt. `retryable` for connection errors, timeouts, 408, 429 and 5xx; `retryAfterMs`
 * when the destination said how long to wait (429's Retry-After).
 */
export class DeliveryError extends NetwardenError {
  readonly code = 'NW_DELIVERY_FAILED';

  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
  }
}

/** The state of one watched network, for drivers that publish state (MQTT / Home Assistant). */
export interface NetworkState {
  subnet: string;
  devices_online: number;
  devices_at_risk: number;
  scan_running: boolean;
  last_scan: ScanRecord | null;
}

/** The keys of a config schema whose fields (or a member of a nullable field) are marked `'x-secret': true` (masked on read, bound to the destination). */
export function secretKeysOf(schema: TObject): string[] {
  return Object.entries(schema.properties as Record<string, TSchema>)
    .filter(([, field]) => field['x-secret'] === true || (field.anyOf as TSchema[] | undefined)?.some((member) => member['x-secret'] === true))
    .map(([key]) => key);
}

export interface ChannelDriver<C extends object = Record<string, unknown>> {
  readonly type: ChannelType;
  /** The config's TypeBox schema, with its defaults (validation and the OpenAPI document). */
  readonly configSchema: TObject;
  /** Config keys holding secrets (`secretKeysOf(configSchema)`): masked on read, cleared when a destination key changes. */
  readonly secretKeys: readonly string[];
  /** Config keys naming the destination the secrets are bound to. */
  readonly destinationKeys: readonly string[];
  /**
   * Optional: whether a URL-valued key holds a secret in itself (a Slack webhook URL, an ntfy URL
   * with `?auth=`): masked on read like `secretKeys`, kept when the mask is sent back.
   */
  secretUrl?(key: string, value: string): boolean;
  /**
   * Optional: keys whose change from `true` to `false` turns TLS protection off (email `secure`,
   * `require_tls`): that counts as a new destination, so the secrets are cleared unless given again.
   */
  readonly tlsKeys?: readonly string[];
  /** Checks beyond the schema; returns `"config.<key>: <problem>"` or null. */
  check(config: C): string | null;
  /** Sends one message; throws DeliveryError on failure. */
  send(config: C, message: OutgoingMessage, context: SendContext): Promise<void>;
  /** Optional: publishes the state of the networks after a scan starts or ends (MQTT). */
  publishState?(config: C, networks: NetworkState[], context: SendContext): Promise<void>;
  /** Optional: releases long-lived connections at shutdown. */
  close?(): Promise<void>;
}
