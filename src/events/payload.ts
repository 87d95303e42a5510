/**
 * The size of a live event's data. Every event is kept for replay (bus.ts), written to every open
 * event stream and, on PostgreSQL, sent to every other process (relay.ts); one event must not be
 * able to carry megabytes (a device whose hostname came from a hostile report, a restored
 * database, a name source), or a few edits of that device would fill the server's memory.
 *
 * So the data of an event is at most EVENT_DATA_MAX_BYTES of JSON. Data within the limit is never
 * touched: the largest legitimate events (a device summary with 10,000-character notes, or with
 * every one of 65,535 ports open) are far below it. Larger data is trimmed, the same way wherever
 * it is published, so the event stream and the relay carry the same thing:
 *   1. every text longer than a cap is cut to the cap and ends in "…" (U+2026); the cap starts at
 *      65,536 characters and is halved until the data fits (down to 64);
 *   2. if that is not enough, every list longer than a cap keeps its first items only, the cap
 *      halved from 1,024 until the data fits (down to 1).
 * Numbers, booleans, null and object keys are never changed, so the data keeps its schema. An
 * event only says that something happened: a client that needs a trimmed value whole reads it
 * from the resource (GET /api/devices/{id}, GET /api/scans/{id}).
 */

/** The most JSON (UTF-8 bytes) one event's data may be. */
export const EVENT_DATA_MAX_BYTES = 512 * 1024;

/** What ends a text that was cut. */
export const TRIMMED_MARK = '…';

const FIRST_TEXT_CAP = 65_536;
const LAST_TEXT_CAP = 64;
const FIRST_LIST_CAP = 1024;

export interface BoundedData<T> {
  data: T;
  /** Size of the data's JSON in UTF-8 bytes (after trimming). */
  bytes: number;
  trimmed: boolean;
}

/** `data` when its JSON is within `maxBytes`, else a trimmed copy (see above); `data` itself is never changed. */
export function boundEventData<T>(data: T, maxBytes = EVENT_DATA_MAX_BYTES): BoundedData<T> {
  const bytes = Buffer.byteLength(JSON.stringify(data) ?? '', 'utf8');
  if (bytes <= maxBytes) return { data, bytes, trimmed: false };
  let json = '';
  const fits = (cut: unknown) => {
    json = JSON.stringify(cut);
    return Buffer.byteLength(json, 'utf8') <= maxBytes;
  };
  let done = false;
  for (let textCap = FIRST_TEXT_CAP; !done; textCap = Math.max(LAST_TEXT_CAP, textCap / 2)) {
    done = fits(shorten(data, textCap, Infinity)) || textCap === LAST_TEXT_CAP;
  }
  for (let listCap = FIRST_LIST_CAP; listCap >= 1 && Buffer.byteLength(json, 'utf8') > maxBytes; listCap = Math.floor(listCap / 2)) {
    fits(shorten(data, LAST_TEXT_CAP, listCap));
  }
  // Objects of fixed shape with short texts and one-item lists: what remains is small. Parsed
  // back, so the copy holds fresh strings, not slices that would keep the long originals alive.
  return { data: JSON.parse(json) as T, bytes: Buffer.byteLength(json, 'utf8'), trimmed: true };
}

/** A copy with every text cut to `textCap` characters and every list to `listCap` items. */
function shorten(value: unknown, textCap: number, listCap: number): unknown {
  if (typeof value === 'string') return value.length > textCap ? cutText(value, textCap) : value;
  if (Array.isArray(value)) return value.slice(0, listCap).map((item) => shorten(item, textCap, listCap));
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = shorten(item, textCap, listCap);
    return copy;
  }
  return value;
}

/** The first `cap` characters (one less, and the mark), never splitting a surrogate pair. */
function cutText(text: string, cap: number): string {
  let end = cap - TRIMMED_MARK.length;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return text.slice(0, end) + TRIMMED_MARK;
}
