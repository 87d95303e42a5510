/**
 * Fake Pi-hole v6, AdGuard Home and UniFi Network servers on 127.0.0.1 for the name-source tests:
 * each speaks its API's shape (the fixtures in test/fixtures/name-sources/, written from the public
 * API documentation) with its authentication: Pi-hole's session id from POST /api/auth, AdGuard
 * Home's basic authentication, UniFi's login cookie (classic or UniFi OS). `mode` makes a fake
 * misbehave: `hang` never answers, `garbage` answers 200 with an HTML page.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'name-sources');

/** A fixture as parsed JSON (a fresh copy each time). */
export function fixture(name: string): any {
  return JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8'));
}

export interface FakeRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface Fake {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: FakeRequest[];
  mode: 'ok' | 'hang' | 'garbage';
  close(): Promise<void>;
}

type Reply = { status: number; json?: unknown; headers?: Record<string, string | string[]> };
type Handler = (req: FakeRequest) => Reply;

async function startFake(handle: Handler): Promise<Fake> {
  const hung: ServerResponse[] = [];
  const fake: Fake = {
    url: '',
    requests: [],
    mode: 'ok',
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hung) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: FakeRequest = {
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      fake.requests.push(request);
      if (fake.mode === 'hang') {
        hung.push(res);
        return;
      }
      if (fake.mode === 'garbage') {
        res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html><body>Welcome to nginx!</body></html>');
        return;
      }
      const reply = handle(request);
      res.writeHead(reply.status, { ...(reply.json !== undefined ? { 'Content-Type': 'application/json' } : {}), ...reply.headers });
      res.end(reply.json === undefined ? undefined : JSON.stringify(reply.json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

export interface FakePihole extends Fake {
  /** Session ids given out and not yet closed by DELETE /api/auth. */
  openSessions: Set<string>;
}

/**
 * Pi-hole v6: POST /api/auth with `{"password"}` answers a session (or 401); the lists need the
 * session id in X-FTL-SID (or `?sid=`). `leases` replaces the DHCP lease list of the fixture.
 */
export async function startFakePihole(options: { password: string; leases?: unknown[] }): Promise<FakePihole> {
  const openSessions = new Set<string>();
  let n = 0;
  const fake = await startFake((req) => {
    const url = new URL(req.path, 'http://pi.hole');
    if (url.pathname === '/api/auth' && req.method === 'POST') {
      const given = (JSON.parse(req.body || '{}') as { password?: string }).password;
      if (given !== options.password) return { status: 401, json: fixture('pihole-auth-refused') };
      const answer = fixture('pihole-auth-ok');
      answer.session.sid = `sid-${++n}-${answer.session.sid}`;
      openSessions.add(answer.session.sid);
      return { status: 200, json: answer };
    }
    const sid = (req.headers['x-ftl-sid'] as string | undefined) ?? url.searchParams.get('sid');
    if (!sid || !openSessions.has(sid)) return { status: 401, json: fixture('pihole-unauthorized') };
    if (url.pathname === '/api/auth' && req.method === 'DELETE') {
      openSessions.delete(sid);
      return { status: 204 };
    }
    if (url.pathname === '/api/dhcp/leases') {
      const body = fixture('pihole-dhcp-leases');
      if (options.leases) body.leases = options.leases;
      return { status: 200, json: body };
    }
    if (url.pathname === '/api/network/devices') return { status: 200, json: fixture('pihole-network-devices') };
    return { status: 404, json: { error: { key: 'not_found', message: 'Not found', hint: url.pathname }, took: 0 } };
  });
  return Object.assign(fake, { openSessions });
}

/** AdGuard Home: every /control/ request needs basic authentication with these credentials. */
export async function startFakeAdGuard(options: { username: string; password: string }): Promise<Fake> {
  const expected = `Basic ${Buffer.from(`${options.username}:${options.password}`).toString('base64')}`;
  return startFake((req) => {
    if (req.headers.authorization !== expected) return { status: 401, headers: { 'Content-Type': 'text/plain' } };
    if (req.path === '/control/clients') return { status: 200, json: fixture('adguard-clients') };
    if (req.path === '/control/dhcp/status') return { status: 200, json: fixture('adguard-dhcp-status') };
    return { status: 404 };
  });
}

/**
 * A UniFi Network controller, classic (POST /api/login → cookie `unifises`) or UniFi OS (POST
 * /api/auth/login → cookie `TOKEN` and an X-CSRF-Token header; the Network API under
 * /proxy/network). Only `site` exists; another answers `api.err.NoSiteContext`. Its clients
 * (`stat/sta`) and devices (`stat/device`, the access points and switches) carry where each hangs.
 */
export async function startFakeUnifi(options: {
  username: string;
  password: string;
  site: string;
  unifiOs: boolean;
  /** The site's clients and devices (default: the fixtures unifi-stat-sta and unifi-stat-device). */
  clients?: unknown[];
  devices?: unknown[];
}): Promise<Fake & { loggedOut: number }> {
  const sessions = new Set<string>();
  let n = 0;
  const state = { loggedOut: 0 };
  const prefix = options.unifiOs ? '/proxy/network' : '';
  const cookieName = options.unifiOs ? 'TOKEN' : 'unifises';
  const fake = await startFake((req) => {
    const loginPath = options.unifiOs ? '/api/auth/login' : '/api/login';
    if (req.method === 'POST' && req.path === loginPath) {
      const body = JSON.parse(req.body || '{}') as { username?: string; password?: string };
      if (body.username !== options.username || body.password !== options.password) {
        return { status: 400, json: { meta: { rc: 'error', msg: 'api.err.Invalid' }, data: [] } };
      }
      const token = `session-${++n}`;
      sessions.add(token);
      return {
        status: 200,
        json: options.unifiOs ? { unique_id: 'u1', username: options.username } : { meta: { rc: 'ok' }, data: [] },
        headers: {
          'Set-Cookie': [`${cookieName}=${token}; path=/; secure; HttpOnly`, ...(options.unifiOs ? [] : ['csrf_token=abc; path=/; secure'])],
          ...(options.unifiOs ? { 'X-CSRF-Token': 'csrf-1' } : {}),
        },
      };
    }
    const cookie = (req.headers.cookie ?? '').split(/;\s*/).find((c) => c.startsWith(`${cookieName}=`));
    const token = cookie?.slice(cookieName.length + 1);
    if (!token || !sessions.has(token)) return { status: 401, json: { meta: { rc: 'error', msg: 'api.err.LoginRequired' }, data: [] } };
    if (req.method === 'POST' && req.path === (options.unifiOs ? '/api/auth/logout' : '/api/logout')) {
      sessions.delete(token);
      state.loggedOut++;
      return { status: 200, json: { meta: { rc: 'ok' }, data: [] } };
    }
    const m = req.path.match(/^(.*)\/api\/s\/([^/]+)\/stat\/sta$/);
    if (m && m[1] === prefix) {
      if (decodeURIComponent(m[2]) !== options.site) return { status: 400, json: { meta: { rc: 'error', msg: 'api.err.NoSiteContext' }, data: [] } };
      return { status: 200, json: options.clients ? { meta: { rc: 'ok' }, data: options.clients } : fixture('unifi-stat-sta') };
    }
    const d = req.path.match(/^(.*)\/api\/s\/([^/]+)\/stat\/device$/);
    if (d && d[1] === prefix && decodeURIComponent(d[2]) === options.site)
      return { status: 200, json: options.devices ? { meta: { rc: 'ok' }, data: options.devices } : fixture('unifi-stat-device') };
    return { status: 404 };
  });
  return Object.defineProperty(fake, 'loggedOut', { get: () => state.loggedOut }) as Fake & { loggedOut: number };
}
