/**
 * A Server-Sent Events client for tests, over plain node:http (independent of the CLI's parser):
 * connects, records every event and comment as it arrives, and can be disconnected at will.
 */
import { request, type IncomingMessage } from 'node:http';

export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
}

export class SseStream {
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  /** Resolves when the server ends the stream (or the connection breaks). */
  readonly ended: Promise<void>;
  private buffer = '';
  private waiters: Array<() => void> = [];

  constructor(
    readonly response: IncomingMessage,
    private readonly destroy: () => void,
  ) {
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => this.feed(chunk));
    this.ended = new Promise((resolve) => {
      response.once('close', () => {
        resolve();
        this.notify();
      });
    });
  }

  get status(): number {
    return this.response.statusCode ?? 0;
  }

  /** Events parsed as JSON data, with their name and numeric id. */
  parsed(): Array<{ id: number; event: string; data: any }> {
    return this.events.map((e) => ({ id: Number(e.id), event: e.event, data: JSON.parse(e.data) }));
  }

  /** Waits until `predicate` holds over what has arrived; fails after `timeoutMs` or when the stream ends first. */
  async until(predicate: (s: SseStream) => boolean, what: string, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let closed = false;
    void this.ended.then(() => (closed = true));
    while (!predicate(this)) {
      if (closed) throw new Error(`stream ended before ${what}; got ${this.events.map((e) => e.event).join(', ')}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${this.events.map((e) => e.event).join(', ')}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.destroy();
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  private feed(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) !== -1) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const event: SseEvent = { id: null, event: 'message', data: '' };
      let hasData = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments.push(line.slice(1).trim());
          continue;
        }
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') event.id = value;
        else if (field === 'event') event.event = value;
        else if (field === 'data') {
          event.data = hasData ? `${event.data}\n${value}` : value;
          hasData = true;
        }
      }
      if (hasData) this.events.push(event);
    }
    this.notify();
  }
}

/** Opens `GET url` with the given headers; resolves once the response headers arrived (any status). */
export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { Accept: 'text/event-stream', ...headers } }, (res) => resolve(new SseStream(res, () => req.destroy())));
    req.once('error', reject);
    req.end();
  });
}
