/**
 * The one outbound HTTP request of the notification deliveries, the name sources and the update
 * check: node:http(s) with argument objects, a deadline over the whole exchange, the caller's
 * abort signal, no redirect followed, the destination checked by an OutboundGuard at connect time,
 * and a bounded read: an answer's body is read up to `maxBytes`, and an error answer's (status not
 * 2xx) only up to ERROR_BODY_BYTES, after which the connection is dropped, so a destination that
 * sends an endless or huge body costs neither memory nor time.
 */
import http from 'node:http';
import https from 'node:https';
import { OutboundRefusedError, type OutboundGuard } from './outbound.js';
import { NetwardenError } from './errors.js';

/** What is read of an error answer's body: enough for a reason, never the whole of it. */
export const ERROR_BODY_BYTES = 64 * 1024;

export interface HttpRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** The whole exchange, the body read included. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Check the server's TLS certificate (default true). */
  verifyTls?: boolean;
  guard: OutboundGuard;
  /** Most bytes read of a 2xx answer; more is an error ('too-large'). */
  maxBytes: number;
}

export interface HttpAnswer {
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  /** The body (of an error answer: its first ERROR_BODY_BYTES at most). */
  text: string;
}

export type HttpFailure = 'refused' | 'timeout' | 'aborted' | 'connection' | 'too-large' | 'bad-url';

/** A request that got no (usable) answer. The message is short and plain: no stack, no body. */
export class HttpRequestError extends NetwardenError {
  readonly code = 'NW_HTTP_REQUEST_FAILED';

  constructor(
    readonly kind: HttpFailure,
    message: string,
  ) {
    super(message);
  }
}

export function httpRequest(url: string, options: HttpRequest): Promise<HttpAnswer> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.reject(new HttpRequestError('bad-url', 'not a URL'));
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return Promise.reject(new HttpRequestError('bad-url', 'not an http:// or https:// URL'));
  }
  try {
    options.guard.checkUrl(target);
  } catch (err) {
    return Promise.reject(new HttpRequestError('refused', (err as Error).message));
  }
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(options.body));
  const lib = target.protocol === 'https:' ? https : http;
  return new Promise<HttpAnswer>((resolve, reject) => {
    let settled = false;
    const finish = (err: HttpRequestError | null, value?: HttpAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      // The answer is complete or abandoned: nothing more is read from this connection.
      req.destroy();
      if (err) reject(err);
      else resolve(value!);
    };
    const onAbort = () => finish(new HttpRequestError('aborted', 'stopped'));
    const timer = setTimeout(() => finish(new HttpRequestError('timeout', `no answer within ${options.timeoutMs / 1000} s`)), options.timeoutMs);
    const req = lib.request(
      target,
      {
        method: options.method ?? 'GET',
        headers,
        // No connection reuse: each request's socket is checked and closed.
        agent: false,
        lookup: options.guard.lookup,
        ...(target.protocol === 'https:' ? { rejectUnauthorized: options.verifyTls ?? true } : {}),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const isError = status < 200 || status >= 300;
        const limit = isError ? ERROR_BODY_BYTES : options.maxBytes;
        const chunks: Buffer[] = [];
        let size = 0;
        const answer = (): HttpAnswer => ({
          status,
          statusText: res.statusMessage ?? '',
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        });
        res.on('data', (chunk: Buffer) => {
          if (settled) return;
          const room = limit - size;
          if (chunk.length >= room) {
            if (!isError) return finish(new HttpRequestError('too-large', `answer larger than ${describeBytes(options.maxBytes)}`));
            chunks.push(chunk.subarray(0, room));
            size = limit;
            // Enough of an error answer for a reason: the rest is never read.
            return finish(null, answer());
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', () => finish(null, answer()));
        res.on('error', () => finish(isError ? null : new HttpRequestError('connection', 'answer broken off'), answer()));
        res.on('aborted', () => finish(isError ? null : new HttpRequestError('connection', 'answer broken off'), answer()));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err instanceof OutboundRefusedError) return finish(new HttpRequestError('refused', err.message));
      finish(new HttpRequestError('connection', `connection failed: ${err.code ?? 'error'}`));
    });
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    req.end(options.body);
  });
}

function describeBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / 1024 / 1024} MiB` : `${bytes / 1024} KiB`;
}
