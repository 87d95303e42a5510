/**
 * The one HTTP GET the probes make (the HTTP probe's page and favicon, SSDP's device description):
 * to the probed host only, no redirect followed, the certificate not checked (we only read what
 * the host shows; nothing is sent that a certificate would protect), the body read up to a cap and
 * the rest left unread, the caller's signal ending it. Any failure is null.
 */
import http from 'node:http';
import https from 'node:https';

export interface Fetched {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** At most the cap's bytes. */
  body: Buffer;
  /** True when the body went on beyond the cap (and was cut there). */
  truncated: boolean;
}

export function fetchBounded(url: URL, options: { signal: AbortSignal; maxBytes: number }): Promise<Fetched | null> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.resolve(null);
  if (options.signal.aborted) return Promise.resolve(null);
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (value: Fetched | null) => {
      if (settled) return;
      settled = true;
      options.signal.removeEventListener('abort', onAbort);
      req.destroy();
      resolve(value);
    };
    const onAbort = () => finish(null);
    const req = lib.request(
      url,
      {
        method: 'GET',
        agent: false,
        headers: { 'User-Agent': 'Netwarden', Accept: '*/*', Connection: 'close' },
        maxHeaderSize: 16 * 1024,
        // Old devices' TLS 1.0 and weak keys too: the page is what we want, not a secure channel.
        ...(url.protocol === 'https:' ? { rejectUnauthorized: false, minVersion: 'TLSv1' as const, ciphers: 'DEFAULT:@SECLEVEL=0' } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const result = (truncated: boolean): Fetched => ({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks),
          truncated,
        });
        res.on('data', (chunk: Buffer) => {
          if (settled) return;
          const room = options.maxBytes - size;
          if (chunk.length >= room) {
            if (room > 0) chunks.push(chunk.subarray(0, room));
            size = options.maxBytes;
            // Exactly at the cap counts as cut: the end was not seen.
            finish(result(true));
            return;
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', () => finish(result(false)));
        res.on('error', () => finish(null));
        res.on('aborted', () => finish(null));
      },
    );
    req.on('error', () => finish(null));
    options.signal.addEventListener('abort', onAbort, { once: true });
    req.end();
  });
}
