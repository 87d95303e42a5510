import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { readJson, startServerWithAdmin, startTestServer, type TestServer } from '../helpers/server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The /api paths this service implements today (as documented in /openapi.json and README.md). */
const API_PATHS = [
  '/api/auth/status',
  '/api/auth/setup',
  '/api/auth/login',
  '/api/auth/logout',
  '/api/auth/me',
  '/api/auth/password',
  '/api/keys',
  '/api/keys/{key_id}',
  '/api/config',
  '/api/audit-logs',
  '/api/audit-logs/actions',
  '/api/zones',
  '/api/network/detect',
  '/api/updates/check',
  '/api/devices',
  '/api/devices/{device_id}',
  '/api/scan/status',
  '/api/scans',
  '/api/scans/{scan_id}',
  '/api/scans/{scan_id}/devices',
  '/api/changes',
  '/api/stats',
  '/api/trends',
  '/api/events',
];

function isIpv4(text: string): boolean {
  const parts = text.split('.');
  return parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255);
}

function ipToInt(ip: string): number {
  return ip.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

function cidrContains(cidr: string, ip: string): boolean {
  const [network, prefixText] = cidr.split('/');
  const prefix = Number(prefixText);
  const size = 2 ** (32 - prefix);
  return Math.floor(ipToInt(ip) / size) === Math.floor(ipToInt(network) / size);
}

describe.each(testDatabases())('health, API description and HTTP behaviour ($kind)', (database) => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    ({ server, key } = await startServerWithAdmin(database));
  });
  afterAll(() => server?.close());

  describe('health', () => {
    it('answers 200 healthy without authentication', async () => {
      const res = await server.request('/health');
      expect(res.status).toBe(200);
      const body = await readJson(res);
      expect(body).toMatchObject({ status: 'healthy', timestamp: expect.any(String), version: '0.0.0-test', database: 'ok' });
      expect(body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    });

    it('ignores credentials, even bad ones: a monitor with a stale key still gets an answer', async () => {
      const res = await server.request('/health', { headers: { 'X-API-Key': 'svc_revoked-or-garbage' } });
      expect(res.status).toBe(200);
    });

    it('answers HEAD for simple probes', async () => {
      const res = await server.request('/health', { method: 'HEAD' });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('');
    });
  });

  describe('/docs', () => {
    it('serves the Swagger UI page without authentication', async () => {
      const res = await server.request('/docs');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const html = await res.text();
      expect(html).toContain('<div id="swagger-ui">');
      expect(html).toContain('swagger-ui-bundle.js');
    });

    it('loads every script and stylesheet from this server, so it works with no internet', async () => {
      const html = await (await server.request('/docs')).text();
      const references = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
      expect(references.length).toBeGreaterThanOrEqual(4);
      for (const reference of references) {
        expect(reference, 'no external asset').not.toMatch(/^(https?:)?\/\//);
        const url = new URL(reference, `${server.baseUrl}/docs/`);
        const asset = await fetch(url);
        expect(asset.status, url.pathname).toBe(200);
        expect((await asset.arrayBuffer()).byteLength, url.pathname).toBeGreaterThan(0);
      }
      const scripts = references.filter((r) => r.endsWith('.js'));
      expect(scripts.length).toBeGreaterThanOrEqual(2);
      const bundle = await server.request(scripts.find((s) => s.includes('swagger-ui-bundle'))!);
      expect(bundle.headers.get('content-type')).toMatch(/javascript/);
      expect(await bundle.text()).toContain('SwaggerUIBundle');
      const css = await server.request(references.find((r) => r.endsWith('swagger-ui.css'))!);
      expect(css.headers.get('content-type')).toMatch(/^text\/css/);
      await css.arrayBuffer();
    });

    it('points the UI at the local API description and disables the online validator', async () => {
      const res = await server.request('/docs/static/swagger-initializer.js');
      expect(res.status).toBe(200);
      const script = await res.text();
      expect(script).toContain('validatorUrl: null');
      expect(script).not.toMatch(/url:\s*["']https?:/);
    });

    it('does not tell browsers to upgrade its assets to HTTPS (the service is served over plain HTTP)', async () => {
      for (const path of ['/docs', '/docs/static/swagger-ui-bundle.js']) {
        const res = await server.request(path);
        // Read to the end, so the connection is idle again.
        await res.arrayBuffer();
        const csp = res.headers.get('content-security-policy');
        expect(csp, path).toBeTruthy();
        expect(csp, path).not.toContain('upgrade-insecure-requests');
      }
    });
  });

  describe('/openapi.json', () => {
    let doc: any;

    beforeAll(async () => {
      const res = await server.request('/openapi.json');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      doc = await res.json();
    });

    it('is an OpenAPI 3 document of this service, public', () => {
      expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/);
      expect(doc.info).toMatchObject({ title: expect.any(String), version: '0.0.0-test' });
    });

    it('lists every /api path and /health', () => {
      const paths = Object.keys(doc.paths);
      for (const path of [...API_PATHS, '/health']) expect(paths).toContain(path);
    });

    it('only lists operations the server really has', () => {
      for (const [path, item] of Object.entries<Record<string, unknown>>(doc.paths)) {
        const url = path.replace(/\{(\w+)\}/g, ':$1');
        for (const method of Object.keys(item).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))) {
          expect(server.app.hasRoute({ method: method.toUpperCase(), url }), `${method} ${path}`).toBe(true);
        }
      }
    });

    it("declares the three authentication schemes (and the agents' token) and requires one of the three by default", () => {
      expect(doc.components.securitySchemes).toEqual({
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'netwarden_session' },
        // Accepted by the agent endpoints alone, which say so in their own `security`.
        agentToken: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      });
      expect(doc.security).toEqual([{ apiKeyHeader: [] }, { bearer: [] }, { sessionCookie: [] }]);
    });

    it('marks the public operations as needing no authentication', () => {
      for (const [path, method] of [
        ['/health', 'get'],
        ['/api/auth/status', 'get'],
        ['/api/auth/setup', 'post'],
        ['/api/auth/login', 'post'],
      ]) {
        expect(doc.paths[path][method].security, `${method} ${path}`).toEqual([]);
      }
      expect(doc.paths['/api/keys'].get.security).toBeUndefined();
    });

    it('describes the 401 of every protected operation and the parameters of the key revocation', () => {
      for (const path of API_PATHS) {
        for (const [method, operation] of Object.entries<{ security?: unknown[]; responses: Record<string, unknown> }>(doc.paths[path])) {
          if (Array.isArray(operation.security) && operation.security.length === 0) continue;
          expect(Object.keys(operation.responses), `${method} ${path}`).toContain('401');
        }
      }
      const revoke = doc.paths['/api/keys/{key_id}'].delete;
      expect(revoke.parameters).toEqual([expect.objectContaining({ name: 'key_id', in: 'path', required: true })]);
      const audit = doc.paths['/api/audit-logs'].get;
      expect(audit.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['action', 'actor', 'limit', 'offset']);
    });
  });

  describe('headers on every response', () => {
    const probes: Array<[string, () => Promise<Response>]> = [
      ['200 public', () => server.request('/health')],
      ['200 authenticated', () => server.request('/api/zones', { key })],
      ['400', () => server.request('/api/audit-logs?limit=0', { key })],
      ['401', () => server.request('/api/zones')],
      ['404', () => server.request('/no/such/page')],
      ['405', () => server.request('/health', { method: 'DELETE' })],
      ['415', () => server.request('/api/config', { method: 'PUT', key, body: 'x', headers: { 'Content-Type': 'text/plain' } })],
    ];

    it.each(probes)('sets the security headers (%s)', async (_label, probe) => {
      const res = await probe();
      await res.arrayBuffer();
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toMatch(/^(DENY|SAMEORIGIN)$/);
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('upgrade-insecure-requests');
      expect(res.headers.get('x-powered-by')).toBeNull();
    });

    it.each(probes)('carries a unique X-Request-Id (%s)', async (_label, probe) => {
      const [a, b] = [await probe(), await probe()];
      await Promise.all([a.arrayBuffer(), b.arrayBuffer()]);
      const first = a.headers.get('x-request-id');
      const second = b.headers.get('x-request-id');
      expect(first).toMatch(UUID);
      expect(second).toMatch(UUID);
      expect(first).not.toBe(second);
    });

    it('answers JSON errors with JSON content type and no stack trace', async () => {
      const res = await server.request('/api/config', { method: 'PUT', key, json: '{"scanning": ' });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = await readJson(res);
      expect(Object.keys(body)).toEqual(['detail', 'code']);
      expect(body.detail).not.toMatch(/\bat .*\.(js|ts):\d+/);
    });
  });

  describe('unknown routes and methods', () => {
    it('answers 404 with a detail for an unknown path', async () => {
      for (const path of ['/no/such/page', '/api/nope', '/api/keys/1/extra', '/apix']) {
        const res = await server.request(path, { key });
        expect(res.status, path).toBe(404);
        expect(await res.json()).toEqual({ detail: `Not found: GET ${path}`, code: 'NW_ROUTE_NOT_FOUND' });
      }
    });

    it('answers 401, not 404, for an unknown /api path without credentials (no route probing)', async () => {
      const res = await server.request('/api/nope');
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ detail: 'Not authenticated' });
    });

    it('answers 405 with Allow for a known path and a wrong method', async () => {
      const cases: Array<[string, string, string]> = [
        ['DELETE', '/api/config', 'GET, HEAD, PUT'],
        ['POST', '/api/stats', 'GET, HEAD'],
        ['GET', '/api/auth/login', 'POST'],
        ['PUT', '/api/keys/3', 'DELETE'],
        ['PATCH', '/api/devices/5', 'DELETE, GET, HEAD, PUT'],
      ];
      for (const [method, path, allow] of cases) {
        const res = await server.request(path, { method, key });
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.headers.get('allow'), `${method} ${path}`).toBe(allow);
        expect((await readJson(res)).detail).toContain(allow);
      }
      const health = await server.request('/health', { method: 'POST' });
      expect(health.status).toBe(405);
      expect(health.headers.get('allow')).toBe('GET, HEAD');
    });

    it('answers 401, not 405, for a wrong method on an /api path without credentials', async () => {
      const res = await server.request('/api/config', { method: 'DELETE' });
      expect(res.status).toBe(401);
      expect(res.headers.get('allow')).toBeNull();
      expect(await res.json()).toEqual({ detail: 'Not authenticated' });
    });

    it('ignores a trailing slash', async () => {
      expect((await server.request('/health/')).status).toBe(200);
      expect((await server.request('/api/zones/', { key })).status).toBe(200);
    });
  });

  describe('network detection', () => {
    it("describes the host's network and suggests a subnet to scan", async () => {
      const res = await server.request('/api/network/detect', { key });
      expect(res.status).toBe(200);
      const body = await readJson(res);
      expect(Object.keys(body).sort()).toEqual(['hostname', 'interfaces', 'local_ip', 'suggested_subnet']);
      expect(body.hostname).toBe(hostname());
      expect(isIpv4(body.local_ip)).toBe(true);
      const [network, prefix] = body.suggested_subnet.split('/');
      expect(isIpv4(network)).toBe(true);
      expect(Number(prefix)).toBeGreaterThanOrEqual(16);
      expect(Number(prefix)).toBeLessThanOrEqual(32);
      expect(cidrContains(body.suggested_subnet, body.local_ip)).toBe(true);
      expect(Array.isArray(body.interfaces)).toBe(true);
      for (const entry of body.interfaces) {
        expect(Object.keys(entry).sort()).toEqual(['address', 'mac', 'name', 'prefix_length', 'subnet']);
        expect(isIpv4(entry.address)).toBe(true);
        expect(entry.address.startsWith('127.')).toBe(false);
        expect(cidrContains(entry.subnet, entry.address)).toBe(true);
        expect(entry.subnet.endsWith(`/${entry.prefix_length}`)).toBe(true);
      }
      if (body.interfaces.length > 0) {
        expect(body.interfaces.map((i: { address: string }) => i.address)).toContain(body.local_ip);
      }
    });

    it('suggests a subnet that PUT /api/config accepts as network.subnet', async () => {
      const { suggested_subnet } = await readJson(await server.request('/api/network/detect', { key }));
      const res = await server.request('/api/config', { method: 'PUT', key, json: { network: { subnet: suggested_subnet } } });
      expect(res.status).toBe(200);
      expect((await readJson(res)).network.subnet).toBe(suggested_subnet);
    });

    it('needs authentication', async () => {
      const res = await server.request('/api/network/detect');
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ detail: 'Not authenticated' });
    });
  });
});

describe.each(testDatabases())('health when the database is gone ($kind)', (database) => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    ({ server, key } = await startServerWithAdmin(database));
    expect((await server.request('/health')).status).toBe(200);
    await server.store.close();
  });
  afterAll(() => server?.close());

  it('answers 503 unhealthy', async () => {
    const res = await server.request('/health');
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      status: 'unhealthy',
      timestamp: expect.stringMatching(/Z$/),
      version: '0.0.0-test',
      database: 'unreachable',
    });
  });

  it('answers other requests with a server error that leaks nothing, and keeps serving', async () => {
    const res = await server.request('/api/stats', { key });
    expect([500, 503]).toContain(res.status);
    const body = await readJson(res);
    expect(Object.keys(body)).toEqual(['detail', 'code']);
    expect(body.detail).not.toMatch(/sqlite|postgres|kysely|driver|\.ts:\d+|\.js:\d+/i);
    // The process is still up and still reports the fault.
    expect((await server.request('/health')).status).toBe(503);
  });
});

describe.each(testDatabases())('two instances side by side ($kind)', (database) => {
  it('starts a second server on its own database while the first is running', async () => {
    // On PostgreSQL both live in one database (separate schemas): the migrations of the second
    // must not be confused by the first one's migration tables.
    const first = await startTestServer(database);
    try {
      const second = await startTestServer(database);
      try {
        for (const server of [first, second]) {
          expect((await server.request('/health')).status).toBe(200);
          expect(await (await server.request('/api/auth/status')).json()).toEqual({ setup_required: true, setup_code_required: false });
        }
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
    }
  });
});
