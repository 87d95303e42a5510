/**
 * The one HTTP request the name-source clients make (util/http-request.ts): a deadline, the
 * caller's abort signal, a cap on the answer's size (an error answer read only up to 64 KiB), no
 * redirects followed (the credentials are bound to the configured address), the address checked
 * by the outbound guard, and TLS checking that a source may switch off (UniFi controllers ship a
 * self-signed certificate). Every failure is a NameSourceError saying
 * what went wrong in words a person can act on.
 */
import type http from 'node:http';
import { HttpRequestError, httpRequest } from '../util/http-request.js';
import { OutboundGuard } from '../util/outbound.js';
import { NetwardenError } from '../util/errors.js';

export class NameSourceError extends NetwardenError {
  readonly code = 'NW_NAME_SOURCE_FAILED';
}

export interface SourceRequest {
  method?: 'GET' | 'POST' | 'DELETE';
  headers?: Record<string, string>;
  /** Sent as JSON. */
  json?: unknown;
  /** Whole request, answer included. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Check the server's TLS certificate (default true). */
  verifyTls?: boolean;
  /** Which addresses may be reached (default: no loopback, link-local or unspecified address, as without NETWARDEN_OUTBOUND_ALLOW; services.ts passes the configured one). */
  guard?: OutboundGuard;
}

export interface SourceResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** Largest answer read: a home network's client list is far below this; more is not a real answer. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/** Without a guard given: nothing loopback, link-local or unspecified (as without NETWARDEN_OUTBOUND_ALLOW). */
const refuseAll = new OutboundGuard();

export async function request(url: string, options: SourceRequest): Promise<SourceResponse> {
  const body = options.json === undefined ? undefined : JSON.stringify(options.json);
  const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': 'Netwarden', ...options.headers };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  try {
    const res = await httpRequest(url, {
      method: options.method ?? 'GET',
      headers,
      body,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      verifyTls: options.verifyTls,
      guard: options.guard ?? refuseAll,
      maxBytes: MAX_ANSWER_BYTES,
    });
    return { status: res.status, headers: res.headers, text: res.text };
  } catch (err) {
    if (!(err instanceof HttpRequestError)) throw err;
    switch (err.kind) {
      case 'aborted':
        throw new NameSourceError('stopped: the scan ended');
      case 'refused':
        throw new NameSourceError(`refused: ${err.message}`);
      case 'bad-url':
        throw new NameSourceError('url: not an http:// or https:// URL');
      default:
        throw new NameSourceError(err.message);
    }
  }
}

/** The answer as JSON; a non-2xx status or a body that is not JSON is an error naming what was asked. */
export function jsonOf(res: SourceResponse, what: string): unknown {
  if (res.status === 401 || res.status === 403) throw new NameSourceError(`${what}: refused (HTTP ${res.status}); check the credentials`);
  if (res.status >= 300 && res.status < 400) {
    throw new NameSourceError(
      `${what}: redirected (HTTP ${res.status}) to ${String(res.headers.location ?? 'nowhere')}; configure the final address`,
    );
  }
  if (res.status < 200 || res.status >= 300) throw new NameSourceError(`${what}: HTTP ${res.status}`);
  try {
    return JSON.parse(res.text) as unknown;
  } catch {
    throw new NameSourceError(`${what}: the answer is not JSON`);
  }
}

/** A URL under the source's base address (which may carry a path prefix of its own). */
export function under(base: string, path: string): string {
  return base.replace(/\/+$/, '') + path;
}
