import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEB_ROOT } from '../../src/api/web.js';
import { testDatabases } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const html = { headers: { Accept: 'text/html,application/xhtml+xml' } };

describe.each(testDatabases())('web UI serving ($kind)', (database) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(database);
  });
  afterAll(() => server?.close());

  it('serves the built app at / without authentication, under the Content-Security-Policy', async () => {
    const res = await server.request('/', html);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const body = await res.text();
    expect(body).toBe(readFileSync(join(WEB_ROOT, 'index.html'), 'utf8'));
    // Everything the page loads comes from this server: no CDN, no inline script.
    const sources = [...body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) expect(source, source).toMatch(/^\/[^/]/);
    expect(body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });

  it('serves hashed assets with a long cache lifetime and every asset the page names', async () => {
    const body = await (await server.request('/', html)).text();
    const assets = [...body.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const asset of assets) {
      const res = await server.request(asset);
      expect(res.status, asset).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      // Read to the end: an unread bundle larger than the socket's buffers keeps its response open
      // and the server's close waiting for it.
      await res.arrayBuffer();
    }
    const js = readdirSync(join(WEB_ROOT, 'assets')).find((f) => f.endsWith('.js'))!;
    const script = await server.request(`/assets/${js}`);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    await script.arrayBuffer();
  });

  it("answers a browser's request for a client-side route with the app", async () => {
    for (const path of ['/devices', '/devices/42', '/settings', '/scans?offset=25']) {
      const res = await server.request(path, html);
      expect(res.status, path).toBe(200);
      expect(await res.text(), path).toContain('<div id="app">');
    }
  });

  it('keeps API, probe and missing-file answers as JSON', async () => {
    const api = await server.request('/api/nothing-here', html);
    expect(api.status).toBe(401);
    expect(await api.json()).toEqual({ detail: 'Not authenticated' });
    const file = await server.request('/missing.png', html);
    expect(file.status).toBe(404);
    expect(await file.json()).toEqual({ detail: 'Not found: GET /missing.png', code: 'NW_ROUTE_NOT_FOUND' });
    // A script asking for JSON gets the JSON 404, not the app.
    const route = await server.request('/devices/42', { headers: { Accept: 'application/json' } });
    expect(route.status).toBe(404);
    const post = await server.request('/devices', { method: 'POST', ...html });
    expect(post.status).toBe(404);
  });
});

describe('web UI not built', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(testDatabases()[0], { webRoot: `${mkdtempSync(join(tmpdir(), 'netwarden-web-'))}/` });
  });
  afterAll(() => server?.close());

  it('says how to build it, while the API keeps working', async () => {
    const res = await server.request('/', html);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('npm run build');
    expect((await server.request('/devices/3', html)).status).toBe(503);
    expect((await server.request('/health')).status).toBe(200);
  });
});
