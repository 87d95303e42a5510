/**
 * Edge cases of the HTTP layer that used to escape the error contract: NUL characters (which
 * PostgreSQL refuses), router failures answered by Fastify itself, login CSRF and non-UTF-8
 * charsets. Every test speaks HTTP to the real server on each store.
 */
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECURITY_HEADERS } from '../../src/api/security-headers.js';
import { STATUS_OF_CODE } from '../../src/api/errors.js';
import type { ErrorCode } from '../../src/util/errors.js';
import { testDatabases, type TestDatabase } from '../helpers/databases.js';
import { seedInventory, type Seed } from '../helpers/seed.js';
import { ADMIN, adminWithKey, readJson, startTestServer, type TestServer } from '../helpers/server.js';

const NUL = '\u0000';

/** Asserts a `{"detail","code"}` error body of the given status whose detail matches `pattern`. */
async function expectDetail(res: Response, status: number, pattern: RegExp): Promise<void> {
  const text = await res.text();
  expect({ status: res.status, body: text }).toMatchObject({ status });
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(typeof body.detail).toBe('string');
  expect(body.detail).toMatch(pattern);
  if (status !== 401) expect(STATUS_OF_CODE[body.code as ErrorCode], String(body.code)).toBe(status);
}

describe.each(testDatabases())('NUL characters in text input ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let cookie: string;
  let seed: Seed;

  beforeAll(async () => {
    server = await startTestServer(database);
    ({ key, cookie } = await adminWithKey(server));
    seed = await seedInventory(server.store);
  });
  afterAll(() => server?.close());

  const nulDetail = (field: string) => new RegExp(`^${field.replace(/\./g, '\\.')}: must not contain the NUL character`);

  it('refuses a device label or notes holding NUL with 400 naming the field, and changes nothing', async () => {
    const id = seed.devices.router.id;
    const label = await server.request(`/api/devices/${id}`, { method: 'PUT', key, json: { label: `a${NUL}b` } });
    await expectDetail(label, 400, nulDetail('label'));
    const notes = await server.request(`/api/devices/${id}`, { method: 'PUT', key, json: { notes: `line${NUL}` } });
    await expectDetail(notes, 400, nulDetail('notes'));
    const device = await readJson(await server.request(`/api/devices/${id}`, { key }));
    expect(device.label).toBe(seed.devices.router.label ?? null);
    expect(device.notes).toBe(seed.devices.router.notes ?? null);
  });

  it('refuses a key name holding NUL', async () => {
    const res = await server.request('/api/keys', { method: 'POST', cookie, json: { name: `key${NUL}` } });
    await expectDetail(res, 400, nulDetail('name'));
  });

  it('refuses a login username holding NUL (no 500, no audit entry that cannot be stored)', async () => {
    const res = await server.request('/api/auth/login', { method: 'POST', json: { username: `ad${NUL}min`, password: 'whatever-password' } });
    await expectDetail(res, 400, nulDetail('username'));
  });

  it('refuses NUL deep inside a body: nested objects and arrays name the path', async () => {
    const res = await server.request('/api/config', { method: 'PUT', key, json: { scanning: { port_range: `1-100${NUL}` } } });
    await expectDetail(res, 400, nulDetail('scanning.port_range'));
    const zones = await server.request('/api/config', { method: 'PUT', key, json: { zones: ['lan', `i${NUL}ot`] } });
    await expectDetail(zones, 400, nulDetail('zones.1'));
  });

  it('refuses NUL in a query parameter, declared or not', async () => {
    await expectDetail(await server.request('/api/audit-logs?actor=%00', { key }), 400, nulDetail('actor'));
    await expectDetail(await server.request('/api/devices?search=a%00b', { key }), 400, nulDetail('search'));
    await expectDetail(await server.request('/api/stats?anything=%00', { key }), 400, nulDetail('anything'));
  });

  it('refuses NUL in a path parameter', async () => {
    await expectDetail(await server.request('/api/keys/%00', { method: 'DELETE', key }), 400, nulDetail('key_id'));
    await expectDetail(await server.request('/api/scan/device/10.0.0.1%00', { method: 'POST', key }), 400, nulDetail('ip_address'));
  });

  it('still authenticates first: without credentials the answer is 401', async () => {
    const res = await server.request('/api/devices?search=%00');
    expect(res.status).toBe(401);
  });
});

interface LoggedServer extends TestServer {
  /** Request log lines written so far (parsed). */
  requests(): Array<Record<string, unknown>>;
}

/** The real server with its log captured, so tests can see the one line each request must leave. */
async function startLoggedServer(database: TestDatabase): Promise<LoggedServer> {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const server = await startTestServer(database, { logger: pino({ level: 'info' }, sink), admin: ADMIN });
  return {
    ...server,
    requests: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((e) => e.msg === 'request'),
  };
}

describe.each(testDatabases())('errors raised by the router get the same treatment as any other ($kind)', (database) => {
  let server: LoggedServer;
  let key: string;

  beforeAll(async () => {
    server = await startLoggedServer(database);
    const login = await fetch(`${server.baseUrl}/api/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    const cookie = login.headers.getSetCookie()[0].split(';')[0];
    const created = await fetch(`${server.baseUrl}/api/keys`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Cookie: cookie },
      body: JSON.stringify({ name: 'router-errors' }),
    });
    key = ((await created.json()) as { key: string }).key;
  });
  afterAll(() => server?.close());

  /** Sends the request and checks what every answer must carry: detail body, request id, security headers, one log line. */
  async function send(path: string, init: RequestInit = {}): Promise<Response> {
    const res = await fetch(server.baseUrl + path, init);
    const requestId = res.headers.get('x-request-id');
    expect(requestId, `${path}: X-Request-Id`).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('x-content-type-options'), `${path}: security headers`).toBe('nosniff');
    expect(res.headers.get('content-security-policy'), `${path}: security headers`).toContain("frame-ancestors 'none'");
    // The whole fixed set (docs/security.md), on errors as on answers.
    const fixed = Object.fromEntries(Object.keys(SECURITY_HEADERS).map((name) => [name, res.headers.get(name)]));
    expect(fixed, `${path}: security headers`).toEqual(SECURITY_HEADERS);
    // The log line is written when the response has been sent; give the logger its turn.
    await new Promise((resolve) => setImmediate(resolve));
    const line = server.requests().find((e) => e.reqId === requestId);
    expect(line, `${path}: request log line`).toMatchObject({ method: init.method ?? 'GET', status: res.status });
    expect(line?.url, `${path}: the logged path is the one requested`).toBe(path.split('?')[0]);
    return res;
  }

  it('answers a path with malformed percent-encoding with 400 and a detail, after authentication', async () => {
    await expectDetail(await send('/api/keys/%ff', { headers: { 'X-API-Key': key } }), 400, /^path: .*percent-encoding/);
    await expectDetail(await send('/api/keys/%ff', { method: 'DELETE', headers: { 'X-API-Key': key } }), 400, /^path: /);
  });

  it('answers an over-long path parameter with 400 and a detail, after authentication', async () => {
    const long = 'x'.repeat(300);
    await expectDetail(await send(`/api/scans/${long}`, { headers: { 'X-API-Key': key } }), 400, /^path: .*longer than 200 characters/);
  });

  it('answers both with 401 on /api paths without credentials', async () => {
    await expectDetail(await send('/api/keys/%ff'), 401, /^Not authenticated$/);
    await expectDetail(await send(`/api/scans/${'y'.repeat(300)}`), 401, /^Not authenticated$/);
    const body = await readJson(await send('/api/keys/%E0%A4%A'));
    expect(body).toEqual({ detail: 'Not authenticated' });
  });

  it('answers a malformed path outside /api with 400 (no credentials needed to learn it is malformed)', async () => {
    await expectDetail(await send('/docs/%ff'), 400, /^path: /);
  });

  it('gives ordinary errors the same headers and log line (404, 405, 401, 400)', async () => {
    await expectDetail(await send('/api/nothing-here', { headers: { 'X-API-Key': key } }), 404, /^Not found/);
    await expectDetail(await send('/api/stats', { method: 'DELETE', headers: { 'X-API-Key': key } }), 405, /not allowed/);
    await expectDetail(await send('/api/stats'), 401, /^Not authenticated$/);
    await expectDetail(await send('/api/scans?limit=0', { headers: { 'X-API-Key': key } }), 400, /^limit: /);
  });
});

describe.each(testDatabases())('login and set-up refuse cross-site requests ($kind)', (database) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(database);
  });
  afterAll(() => server?.close());

  const foreign = { Origin: 'http://evil.example' };

  it('refuses a cross-origin set-up with 403 and creates no user', async () => {
    const res = await server.request('/api/auth/setup', { method: 'POST', json: ADMIN, headers: foreign });
    await expectDetail(res, 403, /Origin/);
    expect(await readJson(await server.request('/api/auth/status'))).toEqual({ setup_required: true, setup_code_required: false });
    const crossSite = await server.request('/api/auth/setup', { method: 'POST', json: ADMIN, headers: { 'Sec-Fetch-Site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    expect(await readJson(await server.request('/api/auth/status'))).toEqual({ setup_required: true, setup_code_required: false });
  });

  it('accepts a same-origin set-up', async () => {
    const res = await server.request('/api/auth/setup', { method: 'POST', json: ADMIN, headers: { Origin: server.baseUrl } });
    expect(res.status).toBe(201);
  });

  it('refuses a cross-origin login (403, no session cookie), even with the right credentials', async () => {
    const res = await server.request('/api/auth/login', { method: 'POST', json: ADMIN, headers: foreign });
    expect(res.headers.getSetCookie()).toEqual([]);
    await expectDetail(res, 403, /Origin/);
    const nullOrigin = await server.request('/api/auth/login', { method: 'POST', json: ADMIN, headers: { Origin: 'null' } });
    expect(nullOrigin.status).toBe(403);
    const crossSite = await server.request('/api/auth/login', { method: 'POST', json: ADMIN, headers: { 'Sec-Fetch-Site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    expect(crossSite.headers.getSetCookie()).toEqual([]);
  });

  it('accepts a same-origin login and one without Origin (curl)', async () => {
    const same = await server.request('/api/auth/login', {
      method: 'POST',
      json: ADMIN,
      headers: { Origin: server.baseUrl, 'Sec-Fetch-Site': 'same-origin' },
    });
    expect(same.status).toBe(200);
    const curl = await server.request('/api/auth/login', { method: 'POST', json: ADMIN });
    expect(curl.status).toBe(200);
  });
});

describe.each(testDatabases())('request body charset ($kind)', (database) => {
  let server: TestServer;
  let cookie: string;

  beforeAll(async () => {
    server = await startTestServer(database);
    ({ cookie } = await adminWithKey(server));
  });
  afterAll(() => server?.close());

  const createKey = (contentType: string, body: string | Blob) =>
    server.request('/api/keys', { method: 'POST', cookie, headers: { 'Content-Type': contentType }, body });

  it('refuses a JSON body declared in another charset with 415 naming it, and creates nothing', async () => {
    const utf16 = new Blob([Buffer.from(JSON.stringify({ name: 'utf16-key' }), 'utf16le')]);
    await expectDetail(await createKey('application/json; charset=utf-16', utf16), 415, /charset.*utf-16.*UTF-8/i);
    await expectDetail(await createKey('application/json; charset="UTF-16LE"', utf16), 415, /charset/);
    await expectDetail(await createKey('application/json;charset=ISO-8859-1', JSON.stringify({ name: 'latin1-key' })), 415, /charset/);
    const keys = (await readJson(await server.request('/api/keys', { cookie }))) as Array<{ name: string }>;
    expect(keys.map((k) => k.name)).not.toContain('latin1-key');
  });

  it('ignores the charset of a request without a body', async () => {
    const res = await server.request('/api/keys', { cookie, headers: { 'Content-Type': 'application/json; charset=utf-16' } });
    expect(res.status).toBe(200);
  });

  it('accepts UTF-8 in any spelling, quoted or not, and no charset at all', async () => {
    for (const [i, contentType] of [
      'application/json; charset=utf-8',
      'application/json; charset="UTF-8"',
      'application/json;CHARSET=Utf-8',
      'application/json',
    ].entries()) {
      const res = await createKey(contentType, JSON.stringify({ name: `utf8-key-${i}` }));
      expect(res.status, contentType).toBe(201);
    }
  });
});

describe('requests the HTTP parser rejects', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(testDatabases()[0]);
  });
  afterAll(() => server?.close());

  /** Sends raw bytes and returns what came back before the server closed the connection. */
  function raw(request: string): Promise<string> {
    const port = Number(new URL(server.baseUrl).port);
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(request));
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString()));
      // A reset after the answer (the server closes on an unread request) still leaves the answer.
      socket.on('error', (err) => (answer ? resolve(answer) : reject(err)));
      socket.on('close', () => resolve(answer));
    });
  }

  function parse(answer: string): { status: number; headers: Map<string, string>; body: unknown } {
    const [head, body] = answer.split('\r\n\r\n');
    const [statusLine, ...headerLines] = head.split('\r\n');
    const headers = new Map(headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) };
  }

  it('answers a malformed request with 400 and a detail body', async () => {
    const answer = parse(await raw('GET /api/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nNot a header line\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ detail: 'Malformed HTTP request', code: 'NW_MALFORMED_REQUEST' });
    expect(answer.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('answers headers over the size limit with 431 and a detail body', async () => {
    const answer = parse(await raw(`GET /api/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`));
    expect(answer.status).toBe(431);
    expect(answer.body).toEqual({ detail: 'The request headers are too large', code: 'NW_HEADERS_TOO_LARGE' });
  });
});
