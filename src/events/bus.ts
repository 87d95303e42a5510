/**
 * Live events (CONTRACT §10): what happened, in order, for the SSE stream, the notifier and
 * anything else in this process that reacts to scans. Every event gets an increasing id; the last
 * EVENT_REPLAY_LIMIT are kept so a client that reconnects with `Last-Event-ID` gets what it missed.
 *
 * The bus is per process: events are published by the process that runs the scan or takes the
 * request. On PostgreSQL the event relay (relay.ts) carries them to every other process on the
 * database, which publishes them on its own bus marked `remote` (numbered there, in its order).
 * Listeners are called synchronously and must not throw (a throwing listener is logged and kept);
 * slow work belongs in the listener's own queue.
 */
import { EVENT_NAMES, type EventName } from '../core/event-names.js';
import type { Change } from '../schemas/change.js';
import type { DeviceSummary } from '../schemas/device.js';
import type { ScanProgress, ScanRecord } from '../schemas/scan.js';

/** How many past events a reconnecting client can be given. */
export const EVENT_REPLAY_LIMIT = 1000;

interface Payloads {
  scan_queued: ScanRecord;
  scan_started: ScanRecord;
  scan_progress: { scan_id: number; progress: ScanProgress };
  scan_finished: ScanRecord;
  change: Change;
  device_updated: DeviceSummary;
}

/** Each event's name (core/event-names.ts) and the shape of its data; a name without a payload does not compile. */
export type EventPayloads = { [K in EventName]: Payloads[K] };
export { EVENT_NAMES, type EventName };

/**
 * One event: its number in this process, name, data and when it happened. `remote` marks one
 * another process published (and the relay brought here): work that must happen once per event,
 * such as notifications, is left to the process that published it.
 */
export type NetwardenEvent = {
  [K in EventName]: { id: number; name: K; data: EventPayloads[K]; at: string; remote?: true };
}[EventName];

export interface PublishOptions {
  /** Published by another process (see NetwardenEvent.remote). */
  remote?: boolean;
  /** When it happened (default: now). */
  at?: string;
}

export type EventListener = (event: NetwardenEvent) => void;

export class EventBus {
  private nextId = 1;
  private readonly recent: NetwardenEvent[] = [];
  private readonly listeners = new Set<EventListener>();

  constructor(private readonly onListenerError: (err: unknown, event: NetwardenEvent) => void = () => {}) {}

  publish<K extends EventName>(name: K, data: EventPayloads[K], options: PublishOptions = {}): NetwardenEvent {
    const event = {
      id: this.nextId++,
      name,
      data,
      at: options.at ?? new Date().toISOString(),
      ...(options.remote ? { remote: true } : {}),
    } as NetwardenEvent;
    this.recent.push(event);
    if (this.recent.length > EVENT_REPLAY_LIMIT) this.recent.shift();
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.onListenerError(err, event);
      }
    }
    return event;
  }

  /** Calls `listener` for every event from now on; returns the function that stops it. */
  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The kept events after `lastId`, oldest first. An id older than what is kept gives all that is
   * kept; an id from the future (another process's, or before a restart) gives nothing.
   */
  since(lastId: number): NetwardenEvent[] {
    if (lastId >= this.nextId) return [];
    return this.recent.filter((e) => e.id > lastId);
  }

  /** How many listeners are subscribed (open event streams among them). */
  get subscribers(): number {
    return this.listeners.size;
  }

  /** The id of the latest event published (0 before the first). */
  get lastId(): number {
    return this.nextId - 1;
  }
}
