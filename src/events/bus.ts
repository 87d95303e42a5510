/**
 * Live events (CONTRACT §10): what happened, in order, for the SSE stream, the notifier and
 * anything else in this process that reacts to scans. Every event gets an increasing id; the last
 * EVENT_REPLAY_LIMIT are kept so a client that reconnects with `Last-Event-ID` gets what it missed.
 *
 * The bus is per process: events are published by the process that runs the scan or takes the
 * request. Listeners are called synchronously and must not throw (a throwing listener is logged
 * and kept); slow work belongs in the listener's own queue.
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

export type NetwardenEvent = { [K in EventName]: { id: number; name: K; data: EventPayloads[K]; at: string } }[EventName];

export type EventListener = (event: NetwardenEvent) => void;

export class EventBus {
  private nextId = 1;
  private readonly recent: NetwardenEvent[] = [];
  private readonly listeners = new Set<EventListener>();

  constructor(private readonly onListenerError: (err: unknown, event: NetwardenEvent) => void = () => {}) {}

  publish<K extends EventName>(name: K, data: EventPayloads[K]): NetwardenEvent {
    const event = { id: this.nextId++, name, data, at: new Date().toISOString() } as NetwardenEvent;
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
