/**
 * The database going away under a running server: PostgreSQL refusing connections, the SQLite
 * file deleted or replaced, another process holding a lock on it. The API must answer 503 (with
 * Retry-After when waiting helps) instead of 500, keep serving other requests, and recover.
 */
import { copyFileSync, renameSync, unlinkSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dropPgSchema, ensurePgSchema } from '../../src/store/db.js';
import { openStore } from '../../src/store/index.js';
import { testDatabases, type TestDatabase } from '../helpers/databases.js';
import { adminWithKey, readJson, startTestServer, type TestServer } from '../helpers/server.js';
import { lockFromAnotherProcess, type ForeignLock } from '../helpers/sqlite-lock.js';

const pgUrl = process.env.TEST_DATABASE_URL;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function expectUnavailable(res: Response, pattern: RegExp, retryAfter: string | null = '5'): Promise<void> {
  const body = await readJson(res);
  expect({ status: res.status, body }).toMatchObject({
    status: 503,
    body: { detail: expect.stringMatching(pattern), code: 'NW_DATABASE_UNAVAILABLE' },
  });
  expect(res.headers.get('retry-after')).toBe(retryAfter);
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

type SwitchMode = { kind: 'forward' } | { kind: 'refuse'; sqlstate: string; message: string } | { kind: 'silent' };

/**
 * A TCP relay in front of the real PostgreSQL server (127.0.0.1 only) that can instead answer
 * new connections the way a server that refuses them does: an ErrorResponse with the given
 * SQLSTATE to the startup message, or silence. Switching drops every relayed connection, so the
 * pool has to connect anew.
 */
class PgSwitch {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private mode: SwitchMode = { kind: 'forward' };
  /** Connections answered with an error since the start. */
  refused = 0;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    this.server = createServer((socket) => this.accept(socket));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  async set(mode: SwitchMode): Promise<void> {
    this.mode = mode;
    const closed = [...this.sockets].map((s) => new Promise((resolve) => (s.destroyed ? resolve(null) : s.once('close', resolve))));
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(closed);
    // Let the pool see its connections end before the next request picks one.
    await sleep(100);
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => {});
  }

  private accept(client: Socket): void {
    this.track(client);
    const mode = this.mode;
    if (mode.kind === 'forward') {
      const upstream = connect(this.target.port, this.target.host);
      this.track(upstream);
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    } else if (mode.kind === 'refuse') {
      client.once('data', () => {
        this.refused++;
        client.end(errorResponse(mode.sqlstate, mode.message));
      });
    }
    // silent: accept and never answer
  }
}

/** A PostgreSQL ErrorResponse message ('E'), severity FATAL. */
function errorResponse(sqlstate: string, message: string): Buffer {
  const fields = Buffer.concat(
    [
      ['S', 'FATAL'],
      ['V', 'FATAL'],
      ['C', sqlstate],
      ['M', message],
    ].map(([type, value]) => Buffer.from(`${type}${value}\0`)),
  );
  const header = Buffer.alloc(5);
  header.write('E');
  header.writeInt32BE(4 + fields.length + 1, 1);
  return Buffer.concat([header, fields, Buffer.from([0])]);
}

/**
 * A device page not asked for before: a page already read is answered from the list's page cache
 * (kept per data version, src/api/routes/devices.ts) without the database, so each read that must
 * reach the database asks for a page of its own.
 */
let pageCounter = 0;
function uncachedDevicePage(): string {
  pageCounter += 1;
  return `/api/devices?offset=${pageCounter}`;
}

describe.runIf(pgUrl)('PostgreSQL refusing connections (postgres)', () => {
  const real = new URL(pgUrl ?? 'postgres://127.0.0.1/test');
  const relay = new PgSwitch({ host: real.hostname, port: Number(real.port || 5432) });
  let server: TestServer;
  let key: string;

  /** The test store, reached through the relay; a short connect timeout so the silent case is quick. */
  const throughRelay: TestDatabase = {
    kind: 'postgres',
    async open() {
      const schema = `nw_test_${process.pid}_${Date.now()}_relay`;
      await ensurePgSchema(pgUrl!, schema);
      const url = new URL(pgUrl!);
      url.hostname = '127.0.0.1';
      url.port = String(relay.port);
      const store = await openStore({ url: url.toString(), pgSchema: schema, poolSize: 3, connectTimeoutMs: 1000 });
      return {
        store,
        url: url.toString(),
        pgSchema: schema,
        async cleanup() {
          await relay.set({ kind: 'forward' });
          await store.close().catch(() => {});
          await dropPgSchema(pgUrl!, schema);
        },
      };
    },
  };

  beforeAll(async () => {
    await relay.start();
    server = await startTestServer(throughRelay);
    ({ key } = await adminWithKey(server));
  });
  afterAll(async () => {
    await server?.close();
    await relay.stop();
  });
  afterEach(async () => {
    await relay.set({ kind: 'forward' });
    // Back to normal once the server accepts connections again.
    expect((await server.request('/api/devices', { key })).status).toBe(200);
  });

  const refusals = [
    { sqlstate: '57P03', message: 'the database system is starting up' },
    { sqlstate: '53300', message: 'sorry, too many clients already' },
    { sqlstate: '08004', message: 'server rejected the connection' },
    { sqlstate: '55000', message: 'database "test" is not currently accepting connections' },
  ];

  it.each(refusals)('answers 503 with Retry-After when new connections are refused with $sqlstate', async ({ sqlstate, message }) => {
    await relay.set({ kind: 'refuse', sqlstate, message });
    const before = relay.refused;
    await expectUnavailable(await server.request(uncachedDevicePage(), { key }), /database is unavailable/);
    expect(relay.refused).toBeGreaterThan(before);
    // A scan of a valid target: it must be recorded, so it needs the database. (The key itself is
    // verified from memory for up to a second, so the request gets that far.)
    await expectUnavailable(
      await server.request('/api/scan/trigger?subnet=127.0.0.1/32', { method: 'POST', key, json: {} }),
      /database is unavailable/,
    );
    const health = await server.request('/health');
    expect(health.status).toBe(503);
    expect((await readJson(health)).status).toBe('unhealthy');
  });

  it('answers 503 with Retry-After when connecting times out', async () => {
    await relay.set({ kind: 'silent' });
    await expectUnavailable(await server.request(uncachedDevicePage(), { key }), /database is unavailable/);
  });
});

describe.runIf(pgUrl)('a PostgreSQL database that stops accepting connections (postgres)', () => {
  const name = `nw_closed_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  let server: TestServer;
  let key: string;

  /** A throw-away database of its own: only it is closed to connections, never the shared one. */
  const ownDatabase: TestDatabase = {
    kind: 'postgres',
    async open() {
      const url = new URL(pgUrl!);
      url.pathname = `/${name}`;
      const store = await openStore({ url: url.toString(), poolSize: 3 });
      return {
        store,
        url: url.toString(),
        async cleanup() {
          await store.close().catch(() => {});
        },
      };
    },
  };

  beforeAll(async () => {
    await admin.connect();
    // From template0, which nobody can be connected to (a session on template1 would make this fail).
    await admin.query(`CREATE DATABASE ${name} TEMPLATE template0`);
    server = await startTestServer(ownDatabase);
    ({ key } = await adminWithKey(server));
  });
  afterAll(async () => {
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`).catch(() => {});
    await server?.close();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });

  it('answers 503 with Retry-After (SQLSTATE 55000), then recovers when connections are allowed again', async () => {
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
    for (let i = 0; i < 100; i++) {
      const { rows } = await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
      if (rows[0].n === 0) break;
      await sleep(20);
    }
    // The pool notices its connections were ended; the next request has to connect anew.
    await sleep(100);
    await expectUnavailable(await server.request(uncachedDevicePage(), { key }), /database is unavailable/);
    await expectUnavailable(await server.request(uncachedDevicePage(), { key }), /database is unavailable/);
    expect((await server.request('/health')).status).toBe(503);

    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    expect((await server.request('/api/devices', { key })).status).toBe(200);
    expect((await server.request('/health')).status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------
// SQLite

const sqlite = testDatabases().find((d) => d.kind === 'sqlite') as TestDatabase;

/** startTestServer over SQLite, also giving the database file's path. */
async function startSqliteServer(): Promise<{ server: TestServer; file: string }> {
  let file = '';
  const server = await startTestServer({
    kind: 'sqlite',
    async open() {
      const opened = await sqlite.open();
      file = opened.url;
      return opened;
    },
  });
  return { server, file };
}

describe('the SQLite file deleted or replaced under the running server (sqlite)', () => {
  let server: TestServer;
  let file: string;
  let key: string;

  beforeEach(async () => {
    ({ server, file } = await startSqliteServer());
    ({ key } = await adminWithKey(server));
    expect((await server.request('/health')).status).toBe(200);
  });
  afterEach(() => server?.close());

  const changeSubnet = () => server.request('/api/config', { method: 'PUT', key, json: { network: { subnet: '10.66.0.0/24' } } });

  it('reports unhealthy with a detail once the file is deleted, and refuses writes rather than losing them', async () => {
    unlinkSync(file);
    // Writes check the file at most once a second.
    await sleep(1100);
    await expectUnavailable(await changeSubnet(), /deleted or replaced/, null);
    const health = await server.request('/health');
    expect(health.status).toBe(503);
    expect(await readJson(health)).toMatchObject({
      status: 'unhealthy',
      database: 'unreachable',
      detail: expect.stringMatching(/deleted or replaced/),
    });
  });

  it('notices a file replaced by another one (a restore while running)', async () => {
    copyFileSync(file, `${file}.copy`);
    renameSync(`${file}.copy`, file);
    const health = await server.request('/health');
    expect(health.status).toBe(503);
    expect((await readJson(health)).detail).toMatch(/deleted or replaced/);
    // The health check has just looked: the next write knows without waiting a second.
    await expectUnavailable(await changeSubnet(), /deleted or replaced/, null);
  });

  it('keeps accepting writes while the file is in place', async () => {
    await sleep(1100);
    expect((await changeSubnet()).status).toBe(200);
    expect((await server.request('/health')).status).toBe(200);
  });
});

/** The longest the event loop went without running a 10 ms timer, while `during` runs. */
async function longestStall<T>(during: () => Promise<T>): Promise<{ result: T; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 10);
  try {
    const result = await during();
    return { result, stallMs };
  } finally {
    clearInterval(timer);
  }
}

describe('another process holding a lock on the SQLite file (sqlite)', () => {
  let server: TestServer;
  let file: string;
  let key: string;
  let lock: ForeignLock | undefined;

  beforeAll(async () => {
    ({ server, file } = await startSqliteServer());
    ({ key } = await adminWithKey(server));
  });
  afterAll(async () => {
    if (lock && lock.child.exitCode === null) lock.child.kill();
    await server?.close();
  });

  it('keeps serving while a write waits, answers the write 503 with Retry-After, and writes again once the lock is gone', async () => {
    lock = await lockFromAnotherProcess(file);
    const { result, stallMs } = await longestStall(async () => {
      const order: string[] = [];
      const write = server
        .request('/api/config', { method: 'PUT', key, json: { network: { subnet: '10.66.0.0/24' } } })
        .then((res) => (order.push('write'), res));
      // Give the write its first attempt before the reads arrive.
      await sleep(50);
      const health = server.request('/health').then((res) => (order.push('health'), res));
      const read = server.request('/api/devices', { key }).then((res) => (order.push('read'), res));
      return { write: await write, health: await health, read: await read, order };
    });
    // A generous bound: before, SQLite's 5 s busy timeout blocked the whole process.
    expect(stallMs).toBeLessThan(1000);
    await expectUnavailable(result.write, /locked by another process/);
    expect(result.health.status).toBe(200);
    expect(result.read.status).toBe(200);
    // The reads did not wait for the write to give up.
    expect(result.order.indexOf('write')).toBe(2);

    await lock.release();
    const after = await server.request('/api/config', { method: 'PUT', key, json: { network: { subnet: '10.66.0.0/24' } } });
    expect(after.status).toBe(200);
    expect((await readJson(await server.request('/api/config', { key }))).network.subnet).toBe('10.66.0.0/24');
  });

  it('lets a write through when the lock is released while it waits', async () => {
    lock = await lockFromAnotherProcess(file);
    const write = server.request('/api/config', { method: 'PUT', key, json: { network: { subnet: '10.66.0.0/25' } } });
    await sleep(300);
    await lock.release();
    expect((await write).status).toBe(200);
    expect((await readJson(await server.request('/api/config', { key }))).network.subnet).toBe('10.66.0.0/25');
  });
});
