import { compareSemver, parseReleaseFeed } from '../core/release.js';
import type { Settings } from '../core/settings.js';
import { HttpRequestError, httpRequest, type HttpAnswer } from '../util/http-request.js';
import { OutboundGuard } from '../util/outbound.js';

export interface UpdateCheckResult {
  current_version: string;
  latest_version: string | null;
  update_available: boolean;
  release_url: string | null;
  release_notes: string | null;
  published_at: string | null;
  checked_at: string;
  error: string | null;
}

export interface UpdateCheckerOptions {
  version: string;
  /** Upper bound on one feed request, so the endpoint always answers within a few seconds. */
  timeoutMs?: number;
  /** Which addresses the feed may be on (default: no loopback, link-local or unspecified address, as without NETWARDEN_OUTBOUND_ALLOW; services.ts passes the configured one). */
  guard?: OutboundGuard;
}

/** A failed check is retried sooner than a successful one is refreshed. */
const ERROR_CACHE_MS = 60_000;
const MAX_FEED_BYTES = 2 * 1024 * 1024;

/** Fetches the release feed and caches the answer per feed URL. */
export class UpdateChecker {
  private cache: { key: string; expires: number; result: UpdateCheckResult } | undefined;
  private inflight: { key: string; promise: Promise<UpdateCheckResult> } | undefined;

  constructor(private readonly options: UpdateCheckerOptions) {}

  async check(settings: Settings['updates'], force: boolean): Promise<UpdateCheckResult> {
    if (!settings.enabled) {
      return this.result({ error: 'Update checks are disabled (config updates.enabled is false)' });
    }
    const key = `${settings.feed_url}\n${settings.token}`;
    if (!force && this.cache && this.cache.key === key && this.cache.expires > Date.now()) return this.cache.result;
    // Concurrent requests share one fetch.
    if (this.inflight && this.inflight.key === key) return this.inflight.promise;
    const promise = this.fetchLatest(settings).finally(() => {
      this.inflight = undefined;
    });
    this.inflight = { key, promise };
    const result = await promise;
    this.cache = { key, expires: Date.now() + (result.error ? ERROR_CACHE_MS : settings.cache_minutes * 60_000), result };
    return result;
  }

  private async fetchLatest(settings: Settings['updates']): Promise<UpdateCheckResult> {
    const headers: Record<string, string> = {
      Accept: 'application/vnd.github+json, application/json',
      'User-Agent': `netwarden/${this.options.version}`,
    };
    if (settings.token) headers.Authorization = `Bearer ${settings.token}`;
    let body: unknown;
    try {
      const guard = this.options.guard ?? new OutboundGuard();
      const response = await fetchKeepingSecret(settings.feed_url, headers, this.options.timeoutMs ?? 4000, guard);
      if (response.status < 200 || response.status >= 300) {
        return this.result({ error: `The release feed answered HTTP ${response.status} ${response.statusText}`.trim() });
      }
      body = JSON.parse(response.text);
    } catch (err) {
      return this.result({ error: `Could not reach the release feed: ${describeFetchError(err)}` });
    }
    const release = parseReleaseFeed(body);
    if ('error' in release) return this.result({ error: `Unexpected release feed answer: ${release.error}` });
    return this.result({
      latest_version: release.version,
      update_available: compareSemver(release.version, this.options.version) > 0,
      release_url: release.url,
      release_notes: release.notes,
      published_at: release.published_at,
    });
  }

  private result(fields: Partial<UpdateCheckResult>): UpdateCheckResult {
    return {
      current_version: this.options.version,
      latest_version: null,
      update_available: false,
      release_url: null,
      release_notes: null,
      published_at: null,
      checked_at: new Date().toISOString(),
      error: null,
      ...fields,
    };
  }
}

const MAX_REDIRECTS = 5;

/**
 * GET that follows redirects itself so that the Authorization header (the feed token) is sent
 * only to the origin of the URL it was saved with: a redirect elsewhere is followed without it.
 * Every hop is checked by the outbound guard; an answer is read up to MAX_FEED_BYTES (an error
 * answer up to 64 KiB), never whole.
 */
async function fetchKeepingSecret(url: string, headers: Record<string, string>, timeoutMs: number, guard: OutboundGuard): Promise<HttpAnswer> {
  const origin = new URL(url).origin;
  const deadline = Date.now() + timeoutMs;
  let current = url;
  for (let hop = 0; ; hop++) {
    const sent = new URL(current).origin === origin ? headers : withoutAuthorization(headers);
    const left = deadline - Date.now();
    if (left <= 0) throw new HttpRequestError('timeout', 'timed out');
    const response = await httpRequest(current, { headers: sent, timeoutMs: left, guard, maxBytes: MAX_FEED_BYTES });
    const location = response.headers.location;
    if (response.status < 300 || response.status >= 400 || !location || hop >= MAX_REDIRECTS) return response;
    current = new URL(location, current).toString();
  }
}

function withoutAuthorization(headers: Record<string, string>): Record<string, string> {
  const { Authorization: _, ...rest } = headers;
  return rest;
}

/** A short, plain reason: never a stack or the answer's text. */
function describeFetchError(err: unknown): string {
  if (err instanceof SyntaxError) return 'the answer is not JSON';
  if (err instanceof HttpRequestError) {
    if (err.kind === 'timeout') return 'timed out';
    if (err.kind === 'too-large') return 'the answer is too large';
    return err.message;
  }
  if (err instanceof TypeError) return 'the redirect is not a valid URL';
  return 'unknown error';
}
