/**
 * A Server-Sent Events parser (the `text/event-stream` format of the HTML standard), small enough
 * to read in one sitting: feed it decoded text as it arrives, get back each complete event. The
 * `eventsource` package would do this too, but its current version needs Node 22.
 *
 * Handled as the standard says: lines end in CRLF, LF or CR; a line starting with `:` is a comment;
 * `data` lines of one event are joined with LF; `event` names it (default `message`); `id` sets the
 * last event id (kept across events, ignored when it contains NUL); `retry` (digits only) sets the
 * reconnection delay; a blank line dispatches the event, unless it had no `data` line.
 */

export interface SseMessage {
  /** The last event id as of this event (null until the stream sent one). */
  id: string | null;
  event: string;
  data: string;
}

export class SseParser {
  /** The last event id the stream set; what a reconnect sends as `Last-Event-ID`. */
  lastEventId: string | null = null;
  /** Reconnection delay the stream asked for (`retry:`), in milliseconds; null when it did not. */
  retryMs: number | null = null;
  /** Comments seen since the last call to `push` (keep-alives, mostly). */
  comments = 0;
  private pending = '';
  /** A CR ended the previous chunk: a LF starting the next one belongs to it. */
  private afterCr = false;
  private data: string[] = [];
  private eventName = '';

  /** Parses more of the stream; returns the events it completed, in order. */
  push(text: string): SseMessage[] {
    let input = text;
    if (this.afterCr && input.startsWith('\n')) input = input.slice(1);
    this.afterCr = false;
    const out: SseMessage[] = [];
    this.pending += input;
    let start = 0;
    for (let i = 0; i < this.pending.length; i++) {
      const c = this.pending[i];
      if (c !== '\n' && c !== '\r') continue;
      const line = this.pending.slice(start, i);
      if (c === '\r') {
        if (i + 1 < this.pending.length) {
          if (this.pending[i + 1] === '\n') i++;
        } else {
          this.afterCr = true;
        }
      }
      start = i + 1;
      const message = this.line(line);
      if (message) out.push(message);
    }
    this.pending = this.pending.slice(start);
    return out;
  }

  private line(line: string): SseMessage | null {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) {
      this.comments++;
      return null;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        break;
      case 'event':
        this.eventName = value;
        break;
      case 'id':
        if (!value.includes('\u0000')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
      // Unknown fields are ignored.
    }
    return null;
  }

  private dispatch(): SseMessage | null {
    const data = this.data;
    const event = this.eventName || 'message';
    this.data = [];
    this.eventName = '';
    if (data.length === 0) return null;
    return { id: this.lastEventId, event, data: data.join('\n') };
  }
}
