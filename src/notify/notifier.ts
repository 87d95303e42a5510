/**
 * The notifier (CONTRACT §9): listens for `scan_finished` on this process's event bus (only the
 * scans of this process: events another process published, relayed here, are its to notify) and, after
 * the scan is recorded, queues at most one message per enabled channel carrying all of that
 * scan's changes the channel's filters select (or a scan completed/failed message when the
 * channel asked for one). Nothing here runs inside the scan: the listener only starts background
 * work, and every send has its own timeout in the delivery loop.
 *
 * Digests: a channel with a `digest` cron collects its matching changes (in the database) and
 * sends them as one "digest" message at each slot; each slot is claimed in the database, so one
 * instance sends it. Quiet hours: a message due inside them is queued for when they end, unless
 * it carries a critical change.
 */
import type { Logger } from 'pino';
import { ipv4ToInt, parseIpv4Network } from '../core/net.js';
import {
  DEVICE_MESSAGE_OF,
  changeMatches,
  dueSlot,
  parseCron,
  quietUntil,
  type DeviceMessageEvent,
  type MessageEvent,
} from '../core/notify-rules.js';
import type { DeviceMessage, RiskChange } from './types.js';
import type { EventBus, NetwardenEvent } from '../events/bus.js';
import type { Delivery } from '../schemas/notification.js';
import type { ScanRecord } from '../schemas/scan.js';
import type { Store } from '../store/index.js';
import type { StoredChannel } from '../store/notifications.js';
import { DRIVERS, type DriverRegistry } from './channels/index.js';
import { composeMessage, packMessage, type ComposedMessage } from './compose.js';
import { DEFAULT_RETRY_POLICY, DeliveryWorker, type RetryPolicy } from './delivery.js';
import type { NetworkState } from './types.js';
import { OutboundGuard } from '../util/outbound.js';

export interface NotifierOptions {
  /** Retry timing; tests shorten it, production keeps the contract's defaults. */
  policy?: Partial<RetryPolicy>;
  /** The clock for digests, quiet hours and due times (tests move it). */
  now?: () => Date;
  /** How often digest slots are checked (default 30 s). */
  digestCheckMs?: number;
  /** The drivers by type (default: all of notify/channels). */
  drivers?: DriverRegistry;
  /** Where deliveries may go (default: no loopback, link-local or unspecified address, as without NETWARDEN_OUTBOUND_ALLOW; services.ts passes the configured one). */
  guard?: OutboundGuard;
}

export interface NotifierDeps extends NotifierOptions {
  store: Store;
  events: EventBus;
  log: Logger;
  /** `/health`'s version, for the User-Agent. */
  version: string;
  /** This process, as the holder of delivery claims. */
  ownerId: string;
}

const DIGEST_CHECK_MS = 30_000;

export class Notifier {
  private readonly store: Store;
  private readonly log: Logger;
  private readonly drivers: DriverRegistry;
  private readonly now: () => Date;
  private readonly policy: RetryPolicy;
  private readonly guard: OutboundGuard;
  readonly worker: DeliveryWorker;
  private unsubscribe: (() => void) | null = null;
  private digestTimer: NodeJS.Timeout | null = null;
  private readonly tasks = new Set<Promise<unknown>>();
  /** The state publications, one after the other (see `inOrder`). */
  private stateChain: Promise<unknown> = Promise.resolve();
  private stopped = true;

  constructor(private readonly deps: NotifierDeps) {
    this.store = deps.store;
    this.log = deps.log;
    this.drivers = deps.drivers ?? DRIVERS;
    this.now = deps.now ?? (() => new Date());
    this.policy = { ...DEFAULT_RETRY_POLICY, ...deps.policy };
    this.guard = deps.guard ?? new OutboundGuard();
    this.worker = new DeliveryWorker({
      store: deps.store,
      drivers: this.drivers,
      log: deps.log,
      version: deps.version,
      ownerId: deps.ownerId,
      now: this.now,
      policy: this.policy,
      guard: this.guard,
      onFailed: (delivery, channelName) => this.auditFailure(delivery, channelName),
    });
  }

  /** Listens for scans, resumes pending deliveries and starts checking digest slots. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = this.deps.events.subscribe((event) => this.onEvent(event));
    this.worker.start();
    this.digestTimer = setInterval(() => this.background(() => this.tickDigests()), this.deps.digestCheckMs ?? DIGEST_CHECK_MS);
    this.digestTimer.unref();
  }

  /** Stops listening and sending; waits for work in progress (attempts in flight are abandoned, left pending). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (this.digestTimer) clearInterval(this.digestTimer);
    this.digestTimer = null;
    await Promise.allSettled([...this.tasks]);
    await this.worker.stop();
    await Promise.allSettled(Object.values(this.drivers).map((d) => (d.close ? d.close() : Promise.resolve())));
  }

  /** Resolves when the work started so far (queuing messages for finished scans) is done. */
  async idle(): Promise<void> {
    while (this.tasks.size) await Promise.allSettled([...this.tasks]);
  }

  private onEvent(event: NetwardenEvent): void {
    // Another process's scan (brought by the event relay): that process notifies, once.
    if (this.stopped || event.remote) return;
    if (event.name === 'scan_finished') {
      const scan = event.data;
      this.background(() => this.scanFinished(scan));
      this.background(() => this.inOrder(() => this.publishState(scan, false)));
    } else if (event.name === 'scan_started') {
      const scan = event.data;
      this.background(() => this.inOrder(() => this.publishState(scan, true)));
    } else if (event.name === 'device_new') {
      const device = event.data;
      this.background(() => this.deviceEvent('device.new', { device, last_seen: null, away_seconds: null }));
    } else if (event.name === 'device_offline' || event.name === 'device_online') {
      const data = event.data;
      this.background(() => this.deviceEvent(DEVICE_MESSAGE_OF[event.name], data));
    } else if (event.name === 'risk_changed') {
      const { device_id, before, after, reason } = event.data;
      this.background(() => this.riskChanged(device_id, { before, after, reason }));
    }
  }

  /**
   * Runs state publications one at a time, in the order of the scan events. Run side by side, a
   * short scan's "finished" state could overtake its "started" one (each reads the database
   * first; on PostgreSQL the pool answers in any order), and the retained state would keep
   * saying the scan is running until the next scan. Each publication is bounded by its timeout.
   */
  private inOrder(work: () => Promise<void>): Promise<void> {
    const run = this.stateChain.then(work);
    this.stateChain = run.catch(() => {});
    return run;
  }

  /** Runs `work` after the current call stack (never inside the publisher's), tracked for stop(). */
  private background(work: () => Promise<unknown>): void {
    const task = new Promise<void>((resolve) => setImmediate(resolve))
      .then(work)
      .catch((err) => this.log.warn({ err }, 'notification work failed'))
      .finally(() => this.tasks.delete(task));
    this.tasks.add(task);
  }

  /** Queues each enabled channel's message about a scan that ended (digest channels collect its changes). */
  async scanFinished(scan: ScanRecord): Promise<void> {
    if (scan.status !== 'completed' && scan.status !== 'failed') return;
    const channels = (await this.store.notifications.listChannels()).filter((c) => c.enabled);
    if (channels.length === 0) return;
    const changes = scan.status === 'completed' ? await this.store.notifications.changesOfScan(scan.scan_id) : [];
    const devices = await this.store.notifications.deviceFacts(changes.flatMap((c) => (c.device_id === null ? [] : [c.device_id])));
    const publicUrl = (await this.store.settings.get()).server.public_url;
    const now = this.now();
    // Channels whose filters select the same changes share one composed message.
    const composed = new Map<string, { message: ComposedMessage; packed: string }>();
    for (const channel of channels) {
      try {
        const matching = changes.filter((c) => changeMatches(c, channel.filters, c.device_id === null ? undefined : devices.get(c.device_id)));
        let carried = matching;
        if (channel.digest && matching.length) {
          await this.store.notifications.hold(channel.id, matching, now.toISOString());
          carried = [];
        }
        const asked = channel.filters.scan_events;
        let event: MessageEvent | null = null;
        if (scan.status === 'failed') event = asked.includes('failed') ? 'scan.failed' : null;
        else if (carried.length) event = 'scan.changes';
        else if (asked.includes('completed')) event = 'scan.completed';
        if (!event) continue;
        const key = `${event}:${carried.map((c) => c.id).join(',')}`;
        let message = composed.get(key);
        if (!message) {
          const m = composeMessage({ event, scan, changes: carried, devices, publicUrl });
          message = { message: m, packed: packMessage(m) };
          composed.set(key, message);
        }
        await this.queue(channel, event, scan.scan_id, message.message, message.packed, now);
        // Sending starts while the other channels' messages are being queued.
        this.worker.wake();
      } catch (err) {
        this.log.warn({ err, channel_id: channel.id, scan_id: scan.scan_id }, 'could not queue a notification');
      }
    }
  }

  /**
   * Queues a device event's message (`device.new`, `device.offline`, `device.online`) for each
   * enabled channel whose `filters.events` names it and whose zone and trust filters the device
   * passes; never for an archived device. Sent at once (digests collect changes only), held by quiet hours.
   */
  async deviceEvent(event: DeviceMessageEvent, message: DeviceMessage): Promise<void> {
    if (message.device.status === 'archived') return;
    const channels = (await this.store.notifications.listChannels()).filter(
      (c) =>
        c.enabled &&
        c.filters.events.includes(event) &&
        (!c.filters.zones || (message.device.zone !== null && c.filters.zones.includes(message.device.zone))) &&
        !(c.filters.untrusted_only && message.device.is_trusted),
    );
    if (channels.length === 0) return;
    const publicUrl = (await this.store.settings.get()).server.public_url;
    const composed = composeMessage({ event, scan: null, changes: [], devices: new Map(), publicUrl, device: message });
    const packed = packMessage(composed);
    const now = this.now();
    for (const channel of channels) {
      try {
        await this.queue(channel, event, null, composed, packed, now);
        this.worker.wake();
      } catch (err) {
        this.log.warn({ err, channel_id: channel.id, device_id: message.device.id }, 'could not queue a notification');
      }
    }
  }

  /** `risk.changed` for the channels that asked for it: the device as it is now, with its risk before and after. */
  private async riskChanged(deviceId: number, risk: RiskChange): Promise<void> {
    const [device] = await this.store.devices.summariesOf([deviceId]);
    // Deleted since: nothing to tell.
    if (device) await this.deviceEvent('risk.changed', { device, last_seen: null, away_seconds: null, risk });
  }

  /** A delivery due now, or when the channel's quiet hours end (never later for a critical change). */
  private async queue(
    channel: StoredChannel,
    event: MessageEvent,
    scanId: number | null,
    message: ComposedMessage,
    packed: string,
    now: Date,
  ): Promise<Delivery> {
    const held = message.severity === 'critical' ? null : quietUntil(channel.quiet_hours, now);
    return this.store.notifications.createDelivery({
      channel_id: channel.id,
      event,
      scan_id: scanId,
      payload: packed,
      created_at: now.toISOString(),
      next_attempt_at: (held ?? now).toISOString(),
    });
  }

  /** Sends the digests whose slot has come (each slot once across instances); returns how many were queued. */
  async tickDigests(): Promise<number> {
    const now = this.now();
    let queued = 0;
    for (const channel of await this.store.notifications.listChannels()) {
      if (!channel.enabled || !channel.digest) continue;
      try {
        const cron = parseCron(channel.digest, channel.quiet_hours?.timezone ?? 'UTC');
        if (!cron.ok) continue;
        const slot = dueSlot(cron.value, new Date(channel.digest_last_slot ?? channel.updated_at), now);
        if (!slot) continue;
        if (!(await this.store.notifications.claimDigestSlot(channel.id, channel.digest_last_slot, slot.toISOString()))) continue;
        const held = await this.store.notifications.heldFor(channel.id);
        if (held.length === 0) continue;
        const changes = held.map((h) => h.change);
        const devices = await this.store.notifications.deviceFacts(changes.flatMap((c) => (c.device_id === null ? [] : [c.device_id])));
        const publicUrl = (await this.store.settings.get()).server.public_url;
        const message = composeMessage({ event: 'digest', scan: null, changes, devices, publicUrl });
        const quiet = message.severity === 'critical' ? null : quietUntil(channel.quiet_hours, now);
        await this.store.notifications.createDigestDelivery(
          {
            channel_id: channel.id,
            event: 'digest',
            scan_id: null,
            payload: packMessage(message),
            created_at: now.toISOString(),
            next_attempt_at: (quiet ?? now).toISOString(),
          },
          held.map((h) => h.id),
        );
        queued++;
      } catch (err) {
        this.log.warn({ err, channel_id: channel.id }, 'could not send a digest');
      }
    }
    if (queued) this.worker.wake();
    return queued;
  }

  /** Sends a test message now (one attempt, no retries, quiet hours ignored); returns its delivery record. */
  async sendTest(channel: StoredChannel): Promise<Delivery | undefined> {
    const publicUrl = (await this.store.settings.get()).server.public_url;
    const message = composeMessage({ event: 'test', scan: null, changes: [], devices: new Map(), publicUrl, channelName: channel.name });
    const delivery = await this.store.notifications.createDelivery({
      channel_id: channel.id,
      event: 'test',
      scan_id: null,
      payload: packMessage(message),
      created_at: this.now().toISOString(),
      next_attempt_at: null,
    });
    return this.worker.sendOnce(delivery.id);
  }

  /** Publishes the state of the scan's network to channels that keep one (MQTT / Home Assistant). Best effort. */
  private async publishState(scan: ScanRecord, running: boolean): Promise<void> {
    const stateful = (await this.store.notifications.listChannels()).filter((c) => c.enabled && this.drivers[c.type].publishState !== undefined);
    if (stateful.length === 0 || scan.scan_type !== 'network') return;
    const net = parseIpv4Network(scan.subnet);
    if (!net.ok) return;
    const low = ipv4ToInt(net.value.network);
    const counts = await this.store.notifications.networkCounts(low, low + net.value.size - 1);
    const state: NetworkState = {
      subnet: net.value.cidr,
      devices_online: counts.online,
      devices_at_risk: counts.atRisk,
      scan_running: running,
      last_scan: scan,
    };
    await Promise.all(
      stateful.map(async (channel) => {
        const signal = AbortSignal.timeout(this.policy.timeoutMs);
        try {
          await this.drivers[channel.type].publishState!(channel.config, [state], {
            signal,
            version: this.deps.version,
            timeoutMs: this.policy.timeoutMs,
            guard: this.guard,
          });
        } catch (err) {
          this.log.warn({ err, channel_id: channel.id }, 'could not publish network state');
        }
      }),
    );
  }

  private async auditFailure(delivery: Delivery, channelName: string | null): Promise<void> {
    await this.store.audit.write({
      action: 'notification_failed',
      actor: 'system',
      actorType: 'system',
      resourceType: 'notification_channel',
      resourceId: delivery.channel_id,
      details: { channel: channelName, delivery_id: delivery.id, event: delivery.event, attempts: delivery.attempts, error: delivery.last_error },
      success: false,
    });
  }
}
