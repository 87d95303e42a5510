/**
 * One HTTP POST of a message to a destination, with the outcome sorted the way CONTRACT §13
 * retries: 2xx delivered; connection errors, timeouts, 408, 429 and 5xx retryable (429's
 * Retry-After honoured); any other answer final. Through util/http-request.ts: the destination
 * checked by the outbound guard, an error answer read only up to 64 KiB, never a shell.
 */
import { ERROR_BODY_BYTES, HttpRequestError, httpRequest } from '../util/http-request.js';
import { OutboundRefusedError } from '../util/outbound.js';
import { DeliveryError, type SendContext } from './types.js';

export interface PostOptions {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** Text of an error answer shown in the delivery log: short, one line (of the first ERROR_BODY_BYTES read). */
const ERROR_BODY_CHARS = 200;
/** A 2xx answer's body is not used; what is read of it is bounded all the same. */
const ANSWER_BYTES = ERROR_BODY_BYTES;

export async function post({ url, headers, body }: PostOptions, context: SendContext): Promise<void> {
  let res;
  try {
    res = await httpRequest(url, {
      method: 'POST',
      headers: { 'User-Agent': `Netwarden/${context.version}`, ...headers },
      body,
      signal: context.signal,
      timeoutMs: context.timeoutMs,
      guard: context.guard,
      // A 2xx answer's body is ignored; reading a little of it is enough to see the answer end.
      maxBytes: ANSWER_BYTES,
    });
  } catch (err) {
    // A long 2xx answer was still an acceptance.
    if (err instanceof HttpRequestError && err.kind === 'too-large') return;
    throw requestError(err, context);
  }
  if (res.status >= 200 && res.status < 300) return;
  // Redirects are not followed: tokens and signatures are bound to the configured URL.
  const text = reasonText(res.text, res.headers['content-type']);
  const what = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}${text ? `: ${text}` : ''}`;
  if (res.status >= 300 && res.status < 400) {
    throw new DeliveryError(`${what} (redirected to ${locationOf(res.headers.location)}; configure the final URL)`, false);
  }
  const retryable = res.status === 408 || res.status === 429 || res.status >= 500;
  const retryAfter = res.headers['retry-after'];
  throw new DeliveryError(what, retryable, retryable ? retryAfterMs(typeof retryAfter === 'string' ? retryAfter : null) : null);
}

/**
 * What of an error answer is worth showing: the start of a plain-text or JSON message (Slack's
 * `invalid_token`, a receiver's `{"error":"…"}`), on one line without control characters. Other
 * bodies (an HTML error page, binary data) are not shown: a reason, not a copy of the page.
 */
function reasonText(body: string, contentType: string | undefined): string {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (type !== '' && type !== 'text/plain' && type !== 'application/json' && !type.endsWith('+json')) return '';
  return body
    .replace(/\p{Cc}+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, ERROR_BODY_CHARS);
}

/** A redirect's target as the log shows it: without any user name, password or query (which may hold a token). */
function locationOf(location: string | undefined): string {
  if (!location) return 'nowhere';
  try {
    const url = new URL(location);
    return `${url.protocol}//${url.host}${url.pathname}`.slice(0, 200);
  } catch {
    return 'an unreadable location';
  }
}

/** What went wrong before any answer: a timeout or a connection problem, both worth another try; a refused destination is not. */
export function requestError(err: unknown, context: SendContext): DeliveryError {
  if (err instanceof DeliveryError) return err;
  if (err instanceof HttpRequestError) {
    if (err.kind === 'refused') return new DeliveryError(`refused: ${err.message}`, false);
    if (err.kind === 'bad-url') return new DeliveryError(`config.url: ${err.message}`, false);
    if (err.kind === 'timeout' || err.kind === 'aborted') return new DeliveryError(`timed out after ${context.timeoutMs / 1000} s`, true);
    return new DeliveryError(err.message, true);
  }
  if (context.signal.aborted) return new DeliveryError(`timed out after ${context.timeoutMs / 1000} s`, true);
  const cause = (err as { cause?: { code?: string } }).cause;
  return new DeliveryError(`connection failed: ${cause?.code ?? 'error'}`, true);
}

/**
 * The address of a host a channel may reach (the outbound guard), for clients that connect to an
 * address they are given (SMTP, MQTT); or a DeliveryError saying why not.
 */
export async function resolveDestination(host: string, context: SendContext): Promise<string> {
  try {
    return await context.guard.resolve(host);
  } catch (err) {
    if (err instanceof OutboundRefusedError) throw new DeliveryError(`refused: ${err.message}`, false);
    const code = (err as NodeJS.ErrnoException).code;
    throw new DeliveryError(`could not resolve ${host}${code ? ` (${code})` : ''}`, true);
  }
}

/** Retry-After as milliseconds: delay-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (!header) return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Whether `text` is an http:// or https:// URL. */
export function isHttpUrl(text: unknown): boolean {
  if (typeof text !== 'string') return false;
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
