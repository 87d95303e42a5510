/**
 * One HTTP(S) port's front page: `GET /` (a redirect followed at most twice, and only to the same
 * scheme, host and port: another port has its own probe, another host is not ours to ask), the
 * page's `<title>` from its first 64 KiB, the `Server` header, and the favicon's hash as Shodan
 * computes it: `GET /favicon.ico`, base64 with a newline every 76 characters (Python's
 * `base64.encodebytes`), MurmurHash3 x86 32-bit, signed. Certificates are not checked: we read.
 */
import type { HttpResult } from '../core/probe-results.js';
import { murmur3 } from '../util/murmur3.js';
import { deadlineSignal, isUnicastHost, quietly, type ProbeOptions } from './common.js';
import { fetchBounded, type Fetched } from './fetch.js';
import { cleanText, decodeEntities } from './text.js';

/** The page's start holds its title; reading further only costs time. */
const MAX_PAGE_BYTES = 64 * 1024;
/** Favicons are a few KiB; a larger one is hashed by nobody, and a cut one would hash wrong. */
const MAX_FAVICON_BYTES = 256 * 1024;
const MAX_REDIRECTS = 2;

export interface HttpProbeOptions extends ProbeOptions {
  /** Speak TLS (https). */
  tls?: boolean;
}

/** Shodan's favicon hash of these bytes. */
export function faviconHash(bytes: Buffer): number {
  const base64 = bytes.toString('base64');
  const lines = base64.match(/.{1,76}/g) ?? [];
  return murmur3(Buffer.from(lines.map((l) => `${l}\n`).join(''), 'latin1'));
}

/** The `<title>` of a page's start, entities decoded, whitespace collapsed, at most 200 characters. */
export function titleOf(body: Buffer, contentType: string | undefined): string | null {
  const charset = /charset=["']?([\w-]+)/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  const latin = charset === 'iso-8859-1' || charset === 'windows-1252' || charset === 'latin1';
  const text = body.toString(latin ? 'latin1' : 'utf8');
  const match = /<title[^>]*>([\s\S]{0,4096}?)<\/title\s*>/i.exec(text);
  return match ? cleanText(decodeEntities(match[1]), 200) : null;
}

function headerText(value: string | string[] | undefined): string | null {
  return cleanText(Array.isArray(value) ? value[0] : value);
}

export async function probeHttp(host: string, port: number, options: HttpProbeOptions = {}): Promise<HttpResult | null> {
  if (!isUnicastHost(host) || !Number.isInteger(port) || port < 1 || port > 65535) return null;
  return quietly(() => run(host, port, options));
}

async function run(host: string, port: number, options: HttpProbeOptions): Promise<HttpResult | null> {
  const tls = options.tls ?? false;
  const signal = deadlineSignal(options);
  const origin = new URL(`${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}/`);
  let url = origin;
  let page: Fetched | null = null;
  let first: Fetched | null = null;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    page = await fetchBounded(url, { signal, maxBytes: MAX_PAGE_BYTES });
    if (!page) break;
    first ??= page;
    const location = headerText(page.headers.location);
    if (page.status < 300 || page.status >= 400 || !location) break;
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      break;
    }
    if (next.origin !== origin.origin || next.href === url.href) break;
    url = next;
  }
  if (!first) return null;
  const shown = page ?? first;
  let hash: number | null = null;
  if (!signal.aborted) {
    const icon = await fetchBounded(new URL('/favicon.ico', origin), { signal, maxBytes: MAX_FAVICON_BYTES });
    if (icon && icon.status === 200 && !icon.truncated && icon.body.length > 0) hash = faviconHash(icon.body);
  }
  return {
    port,
    tls,
    status: shown.status,
    title: titleOf(shown.body, headerText(shown.headers['content-type']) ?? undefined),
    // The first answer's Server: a redirect's server is the same host and port.
    server: headerText(shown.headers.server) ?? headerText(first.headers.server),
    faviconHash: hash,
  };
}
