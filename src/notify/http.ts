/**
 * One HTTP POST of a message to a destination, with the outcome sorted the way CONTRACT §13
 * retries: 2xx delivered; connection errors, timeouts, 408, 429 and 5xx retryable (429's
 * Retry-After honoured); any other answer final. fetch (undici), never a shell.
 */
import { DeliveryError, type SendContext } from './types.js';

export interface PostOptions {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** Text of an error answer shown in the delivery log: short, one line. */
const ERROR_BODY_CHARS = 200;

export async function post({ url, headers, body }: PostOptions, context: SendContext): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'User-Agent': `Netwarden/${context.version}`, ...headers },
      body,
      signal: context.signal,
      // A redirect is not followed: tokens and signatures are bound to the configured URL.
      redirect: 'manual',
    });
  } catch (err) {
    throw requestError(err, context);
  }
  if (res.status >= 200 && res.status < 300) {
    await res.body?.cancel().catch(() => {});
    return;
  }
  const text = await readSome(res);
  const what = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}${text ? `: ${text}` : ''}`;
  if (res.status >= 300 && res.status < 400) {
    throw new DeliveryError(`${what} (redirected to ${res.headers.get('location') ?? 'nowhere'}; configure the final URL)`, false);
  }
  const retryable = res.status === 408 || res.status === 429 || res.status >= 500;
  throw new DeliveryError(what, retryable, retryable ? retryAfterMs(res.headers.get('retry-after')) : null);
}

/** What went wrong before any answer: a timeout or a connection problem, both worth another try. */
export function requestError(err: unknown, context: SendContext): DeliveryError {
  if (err instanceof DeliveryError) return err;
  if (context.signal.aborted) return new DeliveryError(`timed out after ${context.timeoutMs / 1000} s`, true);
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code
    ? `${cause.code}${cause.message ? ` (${cause.message})` : ''}`
    : (cause?.message ?? (err as Error).message) || 'unknown error';
  return new DeliveryError(`connection failed: ${detail}`, true);
}

async function readSome(res: Response): Promise<string> {
  try {
    const text = await res.text();
    return text.replace(/\s+/g, ' ').trim().slice(0, ERROR_BODY_CHARS);
  } catch {
    return '';
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
