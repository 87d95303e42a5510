import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

const RELEASE = {
  tag_name: 'v1.2.3',
  name: 'Netwarden 1.2.3',
  html_url: 'https://github.com/netwarden/netwarden/releases/tag/v1.2.3',
  body: 'Faster scans and a new zone view.',
  published_at: '2026-10-01T12:00:00Z',
  draft: false,
  prerelease: false,
};

/** A local release feed that counts its hits per path and remembers the request headers. */
class FeedServer {
  readonly hits = new Map<string, number>();
  readonly headers: IncomingHttpHeaders[] = [];
  private server: Server | undefined;
  port = 0;
  /** Where `/releases/redirect` sends the client. */
  redirectTo = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const url = req.url ?? '/';
      this.hits.set(url, (this.hits.get(url) ?? 0) + 1);
      this.headers.push(req.headers);
      const path = url.split('?')[0];
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      switch (path) {
        case '/releases/latest':
        case '/releases/other':
          return json(200, RELEASE);
        case '/releases/same':
          return json(200, { ...RELEASE, tag_name: 'v0.0.0-test' });
        case '/releases/older':
          return json(200, { ...RELEASE, tag_name: 'v0.0.0-alpha' });
        case '/releases/list':
          return json(200, [
            { ...RELEASE, tag_name: 'v9.0.0-rc.1', prerelease: true },
            { ...RELEASE, tag_name: 'v2.0.0' },
          ]);
        case '/releases/error':
          return json(500, { message: 'Internal Server Error' });
        case '/releases/html':
          res.writeHead(200, { 'Content-Type': 'text/html' });
          return res.end('<html><body>Rate limited</body></html>');
        case '/releases/no-version':
          return json(200, { message: 'Not Found' });
        case '/releases/bad-link':
          return json(200, { ...RELEASE, html_url: 'javascript:alert(1)' });
        case '/releases/redirect':
          res.writeHead(302, { Location: this.redirectTo });
          return res.end();
        case '/releases/hang':
          // Never answers: the checker's own time limit must end the wait.
          return;
        default:
          return json(404, { message: 'Not Found' });
      }
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  count(path: string): number {
    return this.hits.get(path) ?? 0;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** A loopback port nothing listens on: bound, noted and released. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe.each(testDatabases())('update check ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  const feed = new FeedServer();

  beforeAll(async () => {
    await feed.start();
    ({ server, key } = await startServerWithAdmin(database));
  });
  afterAll(async () => {
    await server?.close();
    await feed.stop();
  });

  const setFeed = async (updates: Record<string, unknown>) => {
    const res = await server.request('/api/config', { method: 'PUT', key, json: { updates } });
    expect(res.status, await res.clone().text()).toBe(200);
  };
  const check = async (query = '') => {
    const res = await server.request(`/api/updates/check${query}`, { key });
    expect(res.status).toBe(200);
    return readJson(res);
  };

  it('reports a newer release from the configured feed', async () => {
    await setFeed({ feed_url: feed.url('/releases/latest') });
    const result = await check();
    expect(result).toEqual({
      current_version: '0.0.0-test',
      latest_version: '1.2.3',
      update_available: true,
      release_url: RELEASE.html_url,
      release_notes: RELEASE.body,
      published_at: RELEASE.published_at,
      checked_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      error: null,
    });
    expect(feed.count('/releases/latest')).toBe(1);
    expect(feed.headers.at(-1)?.['user-agent']).toBe('netwarden/0.0.0-test');
  });

  it('answers from the cache on the next call without asking the feed again', async () => {
    const first = await check();
    const second = await check('?force=false');
    expect(feed.count('/releases/latest')).toBe(1);
    expect(second).toEqual(first);
  });

  it('asks the feed again with force=true', async () => {
    const forced = await check('?force=true');
    expect(feed.count('/releases/latest')).toBe(2);
    expect(forced.latest_version).toBe('1.2.3');
    // …and the forced answer refreshes the cache.
    await check();
    expect(feed.count('/releases/latest')).toBe(2);
  });

  it('asks the new feed when the feed URL changes', async () => {
    await setFeed({ feed_url: feed.url('/releases/other') });
    expect((await check()).latest_version).toBe('1.2.3');
    expect(feed.count('/releases/other')).toBe(1);
  });

  it('asks the feed once for simultaneous checks', async () => {
    await setFeed({ feed_url: feed.url('/releases/latest?simultaneous') });
    const results = await Promise.all(Array.from({ length: 5 }, () => check()));
    expect(feed.count('/releases/latest?simultaneous')).toBe(1);
    for (const result of results) expect(result.latest_version).toBe('1.2.3');
  });

  it('reports no update when the feed names the running version or an older one', async () => {
    await setFeed({ feed_url: feed.url('/releases/same') });
    expect(await check()).toMatchObject({ latest_version: '0.0.0-test', update_available: false, error: null });
    await setFeed({ feed_url: feed.url('/releases/older') });
    expect(await check()).toMatchObject({ latest_version: '0.0.0-alpha', update_available: false, error: null });
  });

  it('takes the first full release from a list of releases, skipping pre-releases', async () => {
    await setFeed({ feed_url: feed.url('/releases/list') });
    expect(await check()).toMatchObject({ latest_version: '2.0.0', update_available: true, error: null });
  });

  it('does not pass on a release link that is not http(s)', async () => {
    await setFeed({ feed_url: feed.url('/releases/bad-link') });
    expect(await check()).toMatchObject({ latest_version: '1.2.3', release_url: null, error: null });
  });

  it('sends the configured token as a bearer token, also after the masked value was sent back', async () => {
    await setFeed({ feed_url: feed.url('/releases/latest'), token: 'feed-token-123' });
    await check('?force=true');
    expect(feed.headers.at(-1)?.authorization).toBe('Bearer feed-token-123');
    await setFeed({ token: '********', cache_minutes: 30 });
    await check('?force=true');
    expect(feed.headers.at(-1)?.authorization).toBe('Bearer feed-token-123');
    await setFeed({ token: '' });
    await check('?force=true');
    expect(feed.headers.at(-1)?.authorization).toBeUndefined();
  });

  it('never lets the token follow a new feed URL', async () => {
    const other = new FeedServer();
    await other.start();
    try {
      await setFeed({ feed_url: feed.url('/releases/latest'), token: 'feed-token-123' });
      // A key holder points the feed at their own server without giving the token again.
      await setFeed({ feed_url: other.url('/releases/latest') });
      expect((await readJson(await server.request('/api/config', { key }))).updates.token).toBe('');
      await check('?force=true');
      expect(other.headers.at(-1)?.authorization).toBeUndefined();
      // Sending the mask back with the new URL is not giving the secret again either.
      await setFeed({ feed_url: feed.url('/releases/latest'), token: 'feed-token-123' });
      await setFeed({ feed_url: other.url('/releases/other'), token: '********' });
      await check('?force=true');
      expect(other.headers.at(-1)?.authorization).toBeUndefined();
      // Given again in the same request, it goes with the new URL.
      await setFeed({ feed_url: other.url('/releases/latest'), token: 'for-the-other-feed' });
      await check('?force=true');
      expect(other.headers.at(-1)?.authorization).toBe('Bearer for-the-other-feed');
    } finally {
      await other.stop();
    }
  });

  it('does not send the token to another origin the feed redirects to', async () => {
    const other = new FeedServer();
    await other.start();
    try {
      feed.redirectTo = other.url('/releases/latest');
      await setFeed({ feed_url: feed.url('/releases/redirect'), token: 'feed-token-123' });
      const result = await check('?force=true');
      expect(result).toMatchObject({ latest_version: '1.2.3', error: null });
      expect(feed.headers.at(-1)?.authorization).toBe('Bearer feed-token-123');
      expect(other.headers).toHaveLength(1);
      expect(other.headers[0].authorization).toBeUndefined();
      await setFeed({ token: '' });
    } finally {
      await other.stop();
    }
  });

  it('answers 200 with error text when the feed is unreachable', async () => {
    await setFeed({ feed_url: `http://127.0.0.1:${await closedPort()}/releases/latest` });
    const result = await check('?force=true');
    expect(result).toMatchObject({ current_version: '0.0.0-test', latest_version: null, update_available: false, release_url: null });
    expect(result.error).toMatch(/Could not reach the release feed/);
    expect(result.error).toMatch(/ECONNREFUSED/);
  });

  it('answers 200 with error text when the feed answers 500', async () => {
    await setFeed({ feed_url: feed.url('/releases/error') });
    const result = await check('?force=true');
    expect(result).toMatchObject({ latest_version: null, update_available: false });
    expect(result.error).toMatch(/HTTP 500/);
  });

  it('answers 200 with error text when the feed answers something that is not JSON', async () => {
    await setFeed({ feed_url: feed.url('/releases/html') });
    const result = await check('?force=true');
    expect(result).toMatchObject({ latest_version: null, update_available: false });
    expect(result.error).toMatch(/not JSON/);
  });

  it('answers 200 with error text when the feed names no version', async () => {
    await setFeed({ feed_url: feed.url('/releases/no-version') });
    const result = await check('?force=true');
    expect(result).toMatchObject({ latest_version: null, update_available: false });
    expect(result.error).toMatch(/version/);
  });

  it('gives up on a feed that never answers and says it timed out', async () => {
    await setFeed({ feed_url: feed.url('/releases/hang') });
    const result = await check('?force=true');
    expect(result).toMatchObject({ latest_version: null, update_available: false });
    expect(result.error).toMatch(/timed out/);
  });

  it('does not contact the feed when update checks are disabled', async () => {
    await setFeed({ feed_url: feed.url('/releases/latest'), enabled: false });
    const before = feed.count('/releases/latest');
    const result = await check('?force=true');
    expect(result).toMatchObject({ update_available: false, latest_version: null });
    expect(result.error).toMatch(/disabled/);
    expect(feed.count('/releases/latest')).toBe(before);
    await setFeed({ enabled: true });
  });

  it('refuses a force value other than true or false with 400', async () => {
    for (const force of ['maybe', '1', 'yes', '']) {
      const res = await server.request(`/api/updates/check?force=${force}`, { key });
      expect(res.status, force).toBe(400);
      expect(await res.json()).toEqual({ detail: 'force: must be true or false', code: 'NW_VALIDATION' });
    }
  });

  it('refuses an unknown query parameter with 400', async () => {
    const res = await server.request('/api/updates/check?refresh=true', { key });
    expect(res.status).toBe(400);
    expect((await readJson(res)).detail).toMatch(/refresh/);
  });

  it('needs authentication', async () => {
    const res = await server.request('/api/updates/check');
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ detail: 'Not authenticated' });
  });
});
