import { buildApp, type App } from '../../src/api/app.js';
import { nmapLocation, outboundAllowChecked, readEnvironment, scanAllowFromEnvironment } from '../../src/config/environment.js';
import { createLogger } from '../../src/logger.js';
import { InProcessQueue } from '../../src/queue/in-process.js';
import type { EngineSelector } from '../../src/engines/engines.js';
import { openServerServices } from '../../src/services.js';
import type { Store } from '../../src/store/index.js';
import type { UpdateChecker } from '../../src/updates/checker.js';
import type { NotifierOptions } from '../../src/notify/notifier.js';
import type { TestDatabase } from './databases.js';
import type { Logger } from 'pino';

export interface TestServer {
  app: App;
  store: Store;
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  /** fetch against the server: `request('/api/stats', { key })`. */
  request(path: string, init?: RequestOptions): Promise<Response>;
  close(): Promise<void>;
}

export interface RequestOptions extends Omit<RequestInit, 'body'> {
  /** Sent as X-API-Key. */
  key?: string;
  /** Sent as the session cookie. */
  cookie?: string;
  /** Serialised as JSON with Content-Type application/json (a string is sent as is). */
  json?: unknown;
  body?: RequestInit['body'];
}

export interface StartOptions {
  /** Seed for the stored configuration, as the config file's `settings` section would give. */
  settings?: Record<string, unknown>;
  admin?: { username: string; password: string };
  /** Folder of the built web UI (default: dist/web/). */
  webRoot?: string;
  /** NETWARDEN_SCAN_ALLOW's list; null lets the stored scanning.allowed_targets apply (default: the environment's). */
  scanAllow?: string[] | null;
  /**
   * NETWARDEN_OUTBOUND_ALLOW's list (default: the environment's, loopback in the test runs); null
   * allows no loopback, link-local or unspecified destination, as a server without the variable.
   */
  outboundAllow?: string[] | null;
  /** Chooses the scan engine (default: the real one: nmap or the native engine). */
  engines?: EngineSelector;
  /** Answers /api/updates/check (default: the real checker). */
  updateChecker?: UpdateChecker;
  /** Notification retry timing and clock (default: the contract's). */
  notifier?: NotifierOptions;
  /** Keep-alive comment interval of /api/events (default: the server's 15 s). */
  eventKeepAliveMs?: number;
  /** Longest an agent's long poll waits (default: the server's 25 s). */
  agentPollMaxWaitMs?: number;
  /** The server's logger (default: silent, or TEST_LOG_LEVEL), for tests that read what it logs. */
  logger?: Logger;
}

/**
 * Starts the real server on a free loopback port over a fresh database: the services of
 * src/services.ts (as `netwarden serve` builds them) with the HTTP API on them. Each test server is
 * an instance of its own: no event relay, recovery, maintenance or scheduler (tests that need
 * those start them), and its queue is in this process on either database. The update feed is
 * pointed at a closed loopback port so no test ever reaches outside this machine.
 */
export async function startTestServer(database: TestDatabase, options: StartOptions = {}): Promise<TestServer> {
  const db = await database.open();
  const logger = options.logger ?? createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const settings = {
    ...options.settings,
    // Tests scan the exact port_range they set: scanning.top_ports (default 1000) and scanning.udp_ports
    // (default 53,67,…) only when a test asks for them.
    scanning: { top_ports: 0, udp_ports: '', ...(options.settings?.scanning as object | undefined) },
    updates: { feed_url: 'http://127.0.0.1:9/releases/latest', ...(options.settings?.updates as object | undefined) },
  };
  const environment = readEnvironment(process.env);
  const services = await openServerServices({
    config: {
      databaseUrl: db.url,
      dataDir: null,
      scanAllow: options.scanAllow === undefined ? scanAllowFromEnvironment(environment) : options.scanAllow,
      outboundAllow: options.outboundAllow === undefined ? outboundAllowChecked(environment) : options.outboundAllow,
      nmap: nmapLocation(environment),
      settingsSeed: settings,
      admin: options.admin ?? null,
    },
    logger,
    background: false,
    store: db.store,
    queue: new InProcessQueue(logger),
    version: '0.0.0-test',
    ...(options.engines ? { engines: options.engines } : {}),
    ...(options.updateChecker ? { updateChecker: options.updateChecker } : {}),
    ...(options.notifier ? { notifier: options.notifier } : {}),
  });
  let app: App;
  try {
    app = await buildApp({
      services,
      logger,
      webRoot: options.webRoot,
      eventKeepAliveMs: options.eventKeepAliveMs,
      agentPollMaxWaitMs: options.agentPollMaxWaitMs,
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
  } catch (err) {
    await services.close();
    await db.cleanup();
    throw err;
  }
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('server did not bind a TCP port');
  const baseUrl = `http://127.0.0.1:${address.port}`;
  return {
    app,
    store: db.store,
    baseUrl,
    request: (path, init = {}) => {
      const { key, cookie, json, headers, ...rest } = init;
      const h = new Headers(headers);
      if (key) h.set('X-API-Key', key);
      if (cookie) h.set('Cookie', cookie);
      let body = rest.body;
      if (json !== undefined) {
        body = typeof json === 'string' ? json : JSON.stringify(json);
        if (!h.has('Content-Type')) h.set('Content-Type', 'application/json');
      }
      return fetch(baseUrl + path, { ...rest, headers: h, body });
    },
    async close() {
      await app.close();
      await services.close();
      await db.cleanup();
    },
  };
}

export const ADMIN = { username: 'admin', password: 'correct horse battery' };

/** Creates the admin through the set-up endpoint and returns its session cookie. */
export async function setupAdmin(server: TestServer, credentials = ADMIN): Promise<string> {
  const res = await server.request('/api/auth/setup', { method: 'POST', json: credentials });
  if (res.status !== 201) throw new Error(`setup failed: ${res.status} ${await res.text()}`);
  return sessionCookie(res);
}

export function sessionCookie(res: Response): string {
  const header = res.headers.getSetCookie().find((c) => c.startsWith('netwarden_session='));
  if (!header) throw new Error('no session cookie in response');
  return header.split(';')[0];
}

/** Logs in, creates an API key through the API and returns it with the session cookie. */
export async function adminWithKey(server: TestServer, name = 'test-key'): Promise<{ cookie: string; key: string; keyId: number }> {
  const cookie = await setupAdmin(server);
  const res = await server.request('/api/keys', { method: 'POST', cookie, json: { name } });
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { key: string; id: number };
  return { cookie, key: body.key, keyId: body.id };
}

/**
 * The usual start of a test: the real server over a fresh database, its administrator set up, and
 * an API key created through the API.
 */
export async function startServerWithAdmin(
  database: TestDatabase,
  options: StartOptions & { keyName?: string } = {},
): Promise<{ server: TestServer; cookie: string; key: string; keyId: number }> {
  const { keyName, ...start } = options;
  const server = await startTestServer(database, start);
  try {
    return { server, ...(await adminWithKey(server, keyName)) };
  } catch (err) {
    await server.close();
    throw err;
  }
}

/** The response body parsed as JSON (typed loosely: tests assert on its shape). */
export async function readJson(res: Response): Promise<any> {
  return res.json();
}
