/**
 * Live events (CONTRACT §10): what happened, in order, for the SSE stream, the notifier and
 * anything else in this process that reacts to scans. Every event gets an increasing id; the last
 * EVENT_REPLAY_LIMIT are kept so a client that reconnects with `Last-Event-ID` gets what it missed,
 * as long as they hold at most EVENT_REPLAY_MAX_BYTES of data (the oldest go first). One event's
 * data is at most EVENT_DATA_MAX_BYTES: larger data is trimmed as it is published (payload.ts),
 * so every listener (event streams, the notifier, the relay) gets the same bounded data.
 *
 * The bus is per process: events are published by the process that runs the scan or takes the
 * request. On PostgreSQL the event relay (relay.ts) carries them to every other process on the
 * database, which publishes them on its own bus marked `remote` (numbered there, in its order).
 * Listeners are called synchronously and must not throw (a throwing listener is logged and kept);
 * slow work belongs in the listener's own queue.
 */
import { EVENT_NAMES, type EventName } from '../core/event-names.js';
import type { EventPayloads } from '../schemas/event.js';
import { boundEventData, EVENT_DATA_MAX_BYTES } from './payload.js';

/** How many past events a reconnecting client can be given. */
export const EVENT_REPLAY_LIMIT = 1000;
/**
 * How much data (JSON bytes) the kept events may hold: 1,000 ordinary events are a fraction of
 * it, and it holds at least 16 of the largest (EVENT_DATA_MAX_BYTES).
 */
export const EVENT_REPLAY_MAX_BYTES = 16 * EVENT_DATA_MAX_BYTES;
export { EVENT_DATA_MAX_BYTES };

/** Each event's name (core/event-names.ts) and the shape of its data (schemas/event.ts, also the API's description of it). */
export { EVENT_NAMES, type EventName, type EventPayloads };

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
  /** The kept events, oldest first, with the size of their data. */
  private readonly recent: Array<{ event: NetwardenEvent; bytes: number }> = [];
  private recentBytes = 0;
  private readonly listeners = new Set<EventListener>();

  constructor(private readonly onListenerError: (err: unknown, event: NetwardenEvent) => void = () => {}) {}

  publish<K extends EventName>(name: K, data: EventPayloads[K], options: PublishOptions = {}): NetwardenEvent {
    const bounded = boundEventData(data);
    const event = {
      id: this.nextId++,
      name,
      data: bounded.data,
      at: options.at ?? new Date().toISOString(),
      ...(options.remote ? { remote: true } : {}),
    } as NetwardenEvent;
    this.keep(event, bounded.bytes);
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.onListenerError(err, event);
      }
    }
    return event;
  }

  /** Keeps `event` for replay, letting the oldest go while there are too many or they hold too much. */
  private keep(event: NetwardenEvent, bytes: number): void {
    this.recent.push({ event, bytes });
    this.recentBytes += bytes;
    while (this.recent.length > EVENT_REPLAY_LIMIT || this.recentBytes > EVENT_REPLAY_MAX_BYTES) {
      this.recentBytes -= this.recent.shift()?.bytes ?? 0;
    }
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
    return this.recent.filter((kept) => kept.event.id > lastId).map((kept) => kept.event);
  }

  /** How many events are kept for replay, and the size of their data (JSON bytes). */
  get kept(): { events: number; bytes: number } {
    return { events: this.recent.length, bytes: this.recentBytes };
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
