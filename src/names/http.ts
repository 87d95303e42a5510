/**
 * The one HTTP request the name-source clients make: node:http(s) with argument objects, a
 * deadline, the caller's abort signal, a cap on the answer's size, no redirects followed (the
 * credentials are bound to the configured address), and TLS checking that a source may switch off
 * (UniFi controllers ship a self-signed certificate). Every failure is a NameSourceError saying
 * what went wrong in words a person can act on.
 */
import http from 'node:http';
import https from 'node:https';

export class NameSourceError extends Error {}

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
}

export interface SourceResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** Largest answer read: a home network's client list is far below this; more is not a real answer. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

export function request(url: string, options: SourceRequest): Promise<SourceResponse> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.reject(new NameSourceError(`not a URL: ${url}`));
  }
  const body = options.json === undefined ? undefined : JSON.stringify(options.json);
  const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': 'Netwarden', ...options.headers };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(body));
  }
  const lib = target.protocol === 'https:' ? https : http;
  return new Promise<SourceResponse>((resolve, reject) => {
    let settled = false;
    const finish = (err: Error | null, value?: SourceResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(value!);
    };
    const onAbort = () => finish(new NameSourceError('stopped: the scan ended'));
    const timer = setTimeout(() => finish(new NameSourceError(`no answer within ${options.timeoutMs / 1000} s`)), options.timeoutMs);
    const req = lib.request(
      target,
      {
        method: options.method ?? 'GET',
        headers,
        ...(target.protocol === 'https:' ? { rejectUnauthorized: options.verifyTls ?? true } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) finish(new NameSourceError(`answer larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB`));
          else chunks.push(chunk);
        });
        res.on('end', () => finish(null, { status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (err) => finish(new NameSourceError(`answer broken off: ${err.message}`)));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => finish(new NameSourceError(`connection failed: ${err.code ?? err.message}`)));
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    req.end(body);
  });
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
