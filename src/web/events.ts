// Live events from GET /api/events (server-sent events, CONTRACT §10), with one EventSource per
// tab shared by every component that listens.
//
// The browser's EventSource sends the session cookie (same origin) and reconnects by itself,
// sending Last-Event-ID so the server replays what was missed. What it does not do is recover from
// an answer that is not a stream (a 404 from a server without the endpoint, a 401, a proxy's error
// page): then it closes for good. This module then says the stream is down, tries again every
// RETRY_MS, and the components fall back to polling meanwhile (`live` is false). Polling is the
// right answer behind proxies that break streaming too, so the fallback stays.
import { useEffect, useRef, useState } from 'preact/hooks';
import { EVENT_NAMES as NAMES, type EventName } from '../core/event-names.js';
import { everyValue, type StreamedEvent } from './types';

/** The names listened for (core/event-names.ts), checked against the events the API describes. */
const EVENT_NAMES = everyValue<StreamedEvent['event']>()(NAMES);

/** Each event's name and the shape of its data, as the API describes them (GET /api/events). */
export type EventPayloads = { [K in EventName]: Extract<StreamedEvent, { event: K }>['data'] };
export type { EventName };
export type LiveEvent = { [K in EventName]: { name: K; data: EventPayloads[K] } }[EventName];

const STREAM_PATH = '/api/events';
/** How long to wait before opening a new stream after the browser gave up on one. */
const RETRY_MS = 30_000;
/** How long the stream stays open with no listener: going from one page to the next keeps it. */
const LINGER_MS = 5000;

type Listener = (event: LiveEvent) => void;

/** The tab's one stream: opened with the first listener, closed with the last. */
class EventStream {
  private source: EventSource | null = null;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private closeTimer: ReturnType<typeof setTimeout> | null = null;
  /** The id of the last event received: a stream opened after a failed one asks for what came after it. */
  private lastId = '';
  private readonly listeners = new Set<Listener>();
  private readonly liveWatchers = new Set<(live: boolean) => void>();
  live = false;

  subscribe(listener: Listener, onLive: (live: boolean) => void): () => void {
    this.listeners.add(listener);
    this.liveWatchers.add(onLive);
    if (this.closeTimer) clearTimeout(this.closeTimer);
    this.closeTimer = null;
    if (!this.source && !this.retryTimer) this.open();
    return () => {
      this.listeners.delete(listener);
      this.liveWatchers.delete(onLive);
      if (this.listeners.size === 0 && !this.closeTimer) {
        this.closeTimer = setTimeout(() => {
          this.closeTimer = null;
          if (this.listeners.size === 0) this.close();
        }, LINGER_MS);
      }
    };
  }

  private open(): void {
    this.retryTimer = null;
    if (typeof EventSource === 'undefined') return;
    // A stream the browser reconnects itself sends Last-Event-ID; a new one carries it in the query.
    const source = new EventSource(this.lastId ? `${STREAM_PATH}?last_event_id=${encodeURIComponent(this.lastId)}` : STREAM_PATH);
    this.source = source;
    source.onopen = () => this.setLive(true);
    source.onerror = () => {
      // CONNECTING: the browser is reconnecting on its own (with Last-Event-ID). CLOSED: it gave up.
      this.setLive(false);
      if (source.readyState === EventSource.CLOSED) {
        source.close();
        this.source = null;
        if (this.listeners.size > 0) this.retryTimer = setTimeout(() => this.open(), RETRY_MS);
      }
    };
    for (const name of EVENT_NAMES) {
      source.addEventListener(name, (message) => {
        const event = message as MessageEvent<string>;
        if (event.lastEventId) this.lastId = event.lastEventId;
        this.dispatch(name, event.data);
      });
    }
  }

  /** Closed on purpose: whoever listens next starts afresh, without a replay of old events. */
  private close(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.source?.close();
    this.source = null;
    this.live = false;
    this.lastId = '';
  }

  private dispatch(name: EventName, text: string): void {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      return; // Not JSON: nothing a listener could use.
    }
    const event = { name, data } as LiveEvent;
    for (const listener of [...this.listeners]) listener(event);
  }

  private setLive(live: boolean): void {
    if (this.live === live) return;
    this.live = live;
    for (const watcher of [...this.liveWatchers]) watcher(live);
  }
}

const stream = new EventStream();

/**
 * Calls `handler` for each live event named in `names`. Returns whether the stream is up: while
 * it is not, the caller polls as it did before the stream existed. When it comes up (again), the
 * caller should load once, since anything before that moment was not streamed to it.
 */
export function useEvents(names: readonly EventName[], handler: (event: LiveEvent) => void): { live: boolean } {
  const [live, setLive] = useState(stream.live);
  const handlerRef = useRef(handler);
  handlerRef.current = handler;
  const key = names.join(',');
  useEffect(() => {
    const wanted = new Set(key.split(','));
    setLive(stream.live);
    return stream.subscribe((event) => {
      if (wanted.has(event.name)) handlerRef.current(event);
    }, setLive);
  }, [key]);
  return { live };
}
