/**
 * The event relay: with several processes on one PostgreSQL database (API instances, workers),
 * every live event published on one process's bus is published on every other's too, so the SSE
 * stream of any instance shows every scan whichever process runs it. It also tells the other
 * processes at once when something they cache changed (an API key revoked, the configuration
 * saved), so they do not serve from a stale cache until their periodic re-check.
 *
 * - Carried over the database's notification channel (store/relay-channel.ts): one channel per
 *   schema, messages in commit order, long ones stored in a table and read back.
 * - Only this process's own events are sent (events marked `remote` never are, so nothing is sent
 *   around twice), and a process drops what it sent itself (no echo).
 * - Received events are published on the local bus marked `remote`, numbered there, in the order
 *   they were sent; the notifier ignores them (the process that ran the scan notifies, once).
 * - Events published in one turn of the event loop go out as one notification (as many as fit).
 * - A dropped listening connection is logged and opened again (with a growing delay); events sent
 *   meanwhile are not replayed (caches then fall back to their own re-check).
 * - Cache invalidations are acknowledged: the sender waits (at most ACK_WAIT_MS) until every other
 *   process it knows of has said it emptied its cache, so the revocation or configuration change is
 *   answered only when no instance can still serve the old value ("a revoked key gets 401 on its
 *   very next request", on any instance). Processes learn of each other from a greeting sent when
 *   they start listening (answered by everyone already there) and from every message they send; one
 *   that says goodbye, or does not acknowledge in time (it died), is forgotten until it speaks again.
 *
 * SQLite has no notification channel: there the relay does nothing (processes sharing a file
 * hear only their own events; caches fall back to their periodic re-checks).
 */
import type { Logger } from 'pino';
import type { Store } from '../store/index.js';
import type { RelayListener, RelayNotice } from '../store/relay-channel.js';
import { INLINE_LIMIT_BYTES } from '../store/relay-channel.js';
import { randomUUID } from 'node:crypto';
import { EVENT_NAMES, EVENT_REPLAY_MAX_BYTES, type EventBus, type EventName, type NetwardenEvent } from './bus.js';

export interface EventRelay {
  /** Stops relaying: sends what is queued (briefly), then closes the listening connection. */
  stop(): Promise<void>;
}

export interface EventRelayOptions {
  store: Store;
  bus: EventBus;
  log: Logger;
  /** Delays between attempts to listen again after the connection dropped (the last repeats). */
  reconnectDelaysMs?: readonly number[];
}

/** An event waiting to be sent, and the size of its JSON (plus a separator). */
interface Outgoing {
  item: { name: EventName; data: unknown; at: string };
  bytes: number;
}

/** A cache invalidation: `n` numbers it among its sender's, for the acknowledgements. */
type Invalidation = { t: 'api_keys_revoked'; n: number } | { t: 'settings_changed'; n: number };

/**
 * What travels between processes. Invalidations are handled on arrival, events in order.
 * `hello`: a process started listening (the others answer `here` to it); `bye`: it stops;
 * `ack`: the invalidation `n` of the process `to` took effect here.
 */
type Message =
  | { t: 'events'; events: Array<{ name: EventName; data: unknown; at: string }> }
  | Invalidation
  | { t: 'hello' }
  | { t: 'here'; to: string }
  | { t: 'bye' }
  | { t: 'ack'; to: string; n: number };

const DEFAULT_RECONNECT_DELAYS_MS = [500, 1000, 2000, 5000, 10_000];
/** Stored long messages are deleted this often. */
const PRUNE_EVERY_MS = 60_000;
/** Events held for sending at most (the database is unavailable), and their data: the oldest go first. */
const MAX_QUEUED_EVENTS = 10_000;
const MAX_QUEUED_BYTES = 2 * EVENT_REPLAY_MAX_BYTES;
/** How long stop() waits for queued events (and its goodbye) to be sent. */
const STOP_FLUSH_MS = 2000;
/**
 * How long an invalidation waits for the other processes' acknowledgements (a live one answers in
 * milliseconds). Longer than the caches' own re-check of the database (auth/api-key-cache.ts
 * RECHECK_MS, store/settings.ts CACHE_MS is 2 s but is also emptied by the message): a process that
 * does not answer in time re-reads on its own soon after.
 */
const ACK_WAIT_MS = 1500;

const KNOWN_EVENTS = new Set<string>(EVENT_NAMES);

export async function startEventRelay(options: EventRelayOptions): Promise<EventRelay> {
  const { store } = options;
  if (!store.relay.available) return { stop: async () => {} };
  const relay = new Relay(options);
  await relay.start();
  return relay;
}

class Relay implements EventRelay {
  /** This process, as the sender of its messages. */
  private readonly id = randomUUID();
  private readonly store: Store;
  private readonly bus: EventBus;
  private readonly log: Logger;
  private readonly reconnectDelays: readonly number[];
  private readonly cleanups: Array<() => void> = [];
  private listener: RelayListener | undefined;
  private stopped = false;
  /** The listening connection is lost (or was never opened), and how many attempts were made since. */
  private down = false;
  private retries = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  /** This process's events waiting to be sent (with their size as JSON), and the sending in progress. */
  private outgoing: Outgoing[] = [];
  private outgoingBytes = 0;
  private sending: Promise<void> | undefined;
  private sendFailing = false;
  /** Received events not yet published (a stored message being read holds those after it). */
  private incoming: Promise<void> | undefined;
  /** The other processes listening on this database, as far as this one knows (by their ids). */
  private readonly peers = new Set<string>();
  /** This process's invalidations awaiting acknowledgements: the peers that have not answered yet. */
  private readonly awaitingAcks = new Map<number, { waiting: Set<string>; done: () => void }>();
  private invalidations = 0;

  constructor(options: EventRelayOptions) {
    this.store = options.store;
    this.bus = options.bus;
    this.log = options.log;
    this.reconnectDelays = options.reconnectDelaysMs ?? DEFAULT_RECONNECT_DELAYS_MS;
  }

  async start(): Promise<void> {
    this.cleanups.push(this.bus.subscribe((event) => this.onLocalEvent(event)));
    this.cleanups.push(this.store.apiKeys.onRevoke((origin) => (origin === 'local' ? this.invalidate('api_keys_revoked') : undefined)));
    this.cleanups.push(this.store.settings.onChange(() => this.invalidate('settings_changed')));
    this.pruneTimer = setInterval(() => {
      this.store.relay.prune().catch((err: unknown) => this.log.debug({ err }, 'could not delete old relay messages'));
    }, PRUNE_EVERY_MS);
    this.pruneTimer.unref();
    // The first attempt is awaited, so a server is listening for other processes' events before it serves.
    await this.listen();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    for (const { done } of this.awaitingAcks.values()) done();
    clearTimeout(this.reconnectTimer);
    clearInterval(this.pruneTimer);
    // The queued events, then a goodbye so the others stop waiting for this process's
    // acknowledgements (best effort, briefly: it is leaving, maybe because the database is away).
    const leaving = (this.sending ?? Promise.resolve()).then(async () => {
      if (this.listener) await this.send({ t: 'bye' });
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([leaving, new Promise((resolve) => (timer = setTimeout(resolve, STOP_FLUSH_MS)))]);
    clearTimeout(timer);
    await this.listener?.close();
    this.listener = undefined;
  }

  // --- Receiving -------------------------------------------------------------------------------

  private async listen(): Promise<void> {
    try {
      const listener = await this.store.relay.listen({
        onNotice: (notice) => this.onNotice(notice),
        onLost: (err) => {
          this.listener = undefined;
          if (this.stopped) return;
          this.log.warn({ err }, 'the event relay lost its PostgreSQL connection; reconnecting (events of other instances are missed meanwhile)');
          this.down = true;
          this.retries = 0;
          this.scheduleListen();
        },
      });
      if (this.stopped) {
        await listener.close();
        return;
      }
      this.listener = listener;
      if (this.down) this.log.info('the event relay is listening again');
      this.down = false;
      // Heard by every process already listening, which answer with `here`: each then knows the other.
      await this.send({ t: 'hello' });
    } catch (err) {
      if (this.stopped) return;
      if (!this.down) this.log.warn({ err }, 'the event relay could not listen on PostgreSQL; retrying');
      this.down = true;
      this.scheduleListen();
    }
  }

  private scheduleListen(): void {
    const delay = this.reconnectDelays[Math.min(this.retries, this.reconnectDelays.length - 1)];
    this.retries++;
    this.reconnectTimer = setTimeout(() => void this.listen(), delay);
    this.reconnectTimer.unref();
  }

  private onNotice(notice: RelayNotice): void {
    if (this.stopped || notice.sender === this.id) return;
    this.peers.add(notice.sender);
    if ('body' in notice) {
      const message = parse(notice.body);
      if (!message) return;
      // Cache invalidations (and the peers' bookkeeping) take effect before anything else is read from the socket.
      if (message.t !== 'events') return this.control(notice.sender, message);
      if (!this.incoming) return this.apply(message);
    }
    const previous = this.incoming ?? Promise.resolve();
    const next = previous.then(async () => {
      const body = 'body' in notice ? notice.body : await this.store.relay.stored(notice.storedId).catch(() => undefined);
      if (body === undefined) {
        this.log.warn(
          { stored_id: 'storedId' in notice ? notice.storedId : undefined },
          'a relayed message could not be read; its events are missed',
        );
        return;
      }
      const message = parse(body);
      if (!message || this.stopped) return;
      if (message.t === 'events') this.apply(message);
      else this.control(notice.sender, message);
    });
    this.incoming = next;
    void next.finally(() => {
      if (this.incoming === next) this.incoming = undefined;
    });
  }

  /** A message other than events, from the process `sender`. */
  private control(sender: string, message: Exclude<Message, { t: 'events' }>): void {
    if (message.t === 'bye') {
      this.peers.delete(sender);
      this.acknowledged(sender);
      return;
    }
    this.peers.add(sender);
    switch (message.t) {
      case 'hello':
        void this.send({ t: 'here', to: sender });
        return;
      case 'here':
        return;
      case 'ack':
        if (message.to === this.id) this.acknowledged(sender, message.n);
        return;
      case 'api_keys_revoked':
      case 'settings_changed':
        this.apply(message);
        void this.send({ t: 'ack', to: sender, n: message.n });
    }
  }

  /** `peer` acknowledged this process's invalidation `n` (every one, when `n` is not given: it left). */
  private acknowledged(peer: string, n?: number): void {
    for (const [number, pending] of this.awaitingAcks) {
      if (n !== undefined && number !== n) continue;
      pending.waiting.delete(peer);
      if (pending.waiting.size === 0) pending.done();
    }
  }

  private apply(message: Exclude<Message, { t: 'hello' | 'here' | 'bye' | 'ack' }>): void {
    switch (message.t) {
      case 'api_keys_revoked':
        this.store.apiKeys.revokedElsewhere();
        return;
      case 'settings_changed':
        this.store.settings.changedElsewhere();
        return;
      case 'events':
        for (const event of message.events) {
          if (!KNOWN_EVENTS.has(event.name)) continue;
          // The data was checked where it was published; this process runs the same code.
          this.bus.publish(event.name, event.data as never, { remote: true, at: event.at });
        }
    }
  }

  // --- Sending ---------------------------------------------------------------------------------

  private onLocalEvent(event: NetwardenEvent): void {
    if (event.remote || this.stopped) return;
    // The bus bounded the data (payload.ts): what is sent is what this process's streams show.
    const item = { name: event.name, data: event.data, at: event.at };
    const bytes = Buffer.byteLength(JSON.stringify(item), 'utf8') + 1;
    this.outgoing.push({ item, bytes });
    this.outgoingBytes += bytes;
    while (this.outgoing.length > MAX_QUEUED_EVENTS || this.outgoingBytes > MAX_QUEUED_BYTES) {
      this.outgoingBytes -= this.outgoing.shift()?.bytes ?? 0;
    }
    // Events published in this turn of the event loop go out together.
    this.sending ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain());
  }

  /** Sends the queued events, as many per notification as fit, one notification at a time (their order is kept). */
  private async drain(): Promise<void> {
    try {
      while (this.outgoing.length) {
        const batch = takeBatch(this.outgoing);
        this.outgoingBytes -= batch.reduce((sum, queued) => sum + queued.bytes, 0);
        await this.send({ t: 'events', events: batch.map((queued) => queued.item) });
      }
    } finally {
      this.sending = undefined;
      if (this.outgoing.length && !this.stopped) this.sending = this.drain();
    }
  }

  /**
   * Tells the other processes to empty a cache; resolves when every one this process knows of has
   * acknowledged it, or after ACK_WAIT_MS (those that did not answer are forgotten until they speak
   * again), or at once when the message could not be sent or this process is not listening (its
   * acknowledgements could not reach it).
   */
  private async invalidate(kind: Invalidation['t']): Promise<void> {
    if (this.stopped) return;
    const n = ++this.invalidations;
    const waiting = this.listener ? new Set(this.peers) : new Set<string>();
    let timer: NodeJS.Timeout | undefined;
    const answered = new Promise<void>((resolve) => {
      this.awaitingAcks.set(n, { waiting, done: resolve });
    });
    try {
      const sent = await this.send({ t: kind, n });
      if (!sent || waiting.size === 0) return;
      await Promise.race([answered, new Promise<void>((resolve) => (timer = setTimeout(resolve, ACK_WAIT_MS)))]);
      for (const peer of waiting) {
        this.peers.delete(peer);
        this.log.debug({ peer }, 'a process on this database did not acknowledge a cache invalidation; forgotten until it speaks again');
      }
    } finally {
      clearTimeout(timer);
      this.awaitingAcks.delete(n);
    }
  }

  /** Sends one message; resolves true when it is committed, false when it failed (logged). */
  private async send(message: Message): Promise<boolean> {
    try {
      await this.store.relay.send(this.id, JSON.stringify(message));
      if (this.sendFailing) this.log.info('the event relay is sending again');
      this.sendFailing = false;
      return true;
    } catch (err) {
      // Once per failure streak: a database outage would otherwise log every event.
      if (!this.sendFailing) this.log.warn({ err, message: message.t }, 'the event relay could not send to other instances');
      this.sendFailing = true;
      return false;
    }
  }
}

/** Takes from the front of `queue` the events that fit in one notification (at least one: a longer one is stored). */
function takeBatch(queue: Outgoing[]): Outgoing[] {
  let bytes = 40;
  let count = 0;
  for (const { bytes: size } of queue) {
    if (count > 0 && bytes + size > INLINE_LIMIT_BYTES - 100) break;
    bytes += size;
    count++;
  }
  return queue.splice(0, count);
}

function parse(body: string): Message | undefined {
  try {
    const message = JSON.parse(body) as Message;
    if (message.t === 'events' && !Array.isArray(message.events)) return undefined;
    return message;
  } catch {
    return undefined;
  }
}
