/**
 * `netwarden watch` (the built program) against a real `netwarden serve`: readable lines and JSON
 * lines for the events of a real quick scan of loopback, reconnecting with Last-Event-ID through a
 * loopback TCP relay that the test cuts, and the exit statuses for bad usage and a refused key.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Socket, createServer, type Server } from 'node:net';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort } from '../helpers/listeners.js';
import {
  BIN,
  baseEnv,
  bodyOf,
  oneCliDatastore,
  client,
  hasStackTrace,
  runCli,
  startServeWithAdmin,
  type CliDatastore,
  type ServeProcess,
} from './helpers.js';

const TIME = '\\d\\d:\\d\\d:\\d\\d';

/** `netwarden watch …` running in the background, its output collected line by line. */
class Watcher {
  readonly stdout: string[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;

  constructor(args: string[], env: Record<string, string>) {
    this.child = spawn(process.execPath, [BIN, 'watch', ...args], {
      env: { ...baseEnv(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    createInterface({ input: this.child.stdout! }).on('line', (l) => this.stdout.push(l));
    createInterface({ input: this.child.stderr! }).on('line', (l) => this.stderr.push(l));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  async until(what: string, test: () => boolean, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!test()) {
      if (Date.now() > deadline || this.child.exitCode !== null) {
        throw new Error(`watch: ${what} did not happen\nstdout:\n${this.stdout.join('\n')}\nstderr:\n${this.stderr.join('\n')}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    await this.exited;
  }
}

/** A TCP relay on loopback to the server that can drop every connection and refuse new ones, then recover. */
class Relay {
  readonly requests: string[] = [];
  private down = false;
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;
  url = '';

  private constructor(target: URL) {
    this.server = createServer((socket) => this.accept(socket, target));
  }

  static async start(target: URL): Promise<Relay> {
    const relay = new Relay(target);
    await new Promise<void>((resolve) => relay.server.listen(0, '127.0.0.1', resolve));
    relay.url = `http://127.0.0.1:${(relay.server.address() as { port: number }).port}`;
    return relay;
  }

  private accept(socket: Socket, target: URL): void {
    socket.on('error', () => {});
    if (this.down) return void socket.destroy();
    const upstream = new Socket();
    upstream.on('error', () => socket.destroy());
    upstream.connect(Number(target.port), target.hostname);
    let first = true;
    socket.on('data', (chunk: Buffer) => {
      if (first) this.requests.push(chunk.toString('latin1'));
      first = false;
    });
    socket.pipe(upstream).pipe(socket);
    this.sockets.add(socket).add(upstream);
    const forget = () => {
      this.sockets.delete(socket);
      this.sockets.delete(upstream);
    };
    socket.on('close', forget);
    upstream.on('close', () => socket.destroy());
  }

  cut(): void {
    this.down = true;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  restore(): void {
    this.down = false;
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe.each(oneCliDatastore('postgres'))('netwarden watch ($kind)', ({ create }) => {
  let datastore: CliDatastore;
  let serve: ServeProcess;
  let key: string;
  let cookie: string;
  let api: ReturnType<typeof client>;
  const running: Watcher[] = [];
  const watch = (args: string[], env: Record<string, string> = {}) => {
    const w = new Watcher(args, env);
    running.push(w);
    return w;
  };

  beforeAll(async () => {
    datastore = await create();
    ({ serve, http: api, cookie } = await startServeWithAdmin(datastore));
    key = (await bodyOf(await api('/api/keys', { method: 'POST', cookie, json: { name: 'watch' } }))).key;
  }, 60_000);
  afterAll(async () => {
    for (const w of running) await w.stop();
    await serve?.stop();
    await datastore?.cleanup();
  });

  async function quickScan(): Promise<number> {
    const res = await api('/api/scan/trigger?subnet=127.0.0.1/32&profile=quick', { method: 'POST', key });
    expect(res.status).toBe(200);
    const { scan_id } = await bodyOf(res);
    for (;;) {
      const scan = await bodyOf(await api(`/api/scans/${scan_id}`, { key }));
      if (scan.status !== 'running' && scan.status !== 'queued') return scan_id;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('prints one readable line per event, reaching the configured port by default, with the key from NETWARDEN_API_KEY', async () => {
    const port = new URL(serve.baseUrl).port;
    const w = watch([], { NETWARDEN_API_KEY: key, NETWARDEN_PORT: port });
    await w.until('connecting', () => w.stderr.some((l) => l.startsWith(`watching http://127.0.0.1:${port}/api/events`)));
    const scanId = await quickScan();
    await w.until('the end of the scan', () => w.stdout.some((l) => l.includes(`scan ${scanId} completed`)));
    expect(w.stdout[0]).toMatch(new RegExp(`^${TIME} scan ${scanId} started 127\\.0\\.0\\.1/32 \\(quick\\)$`));
    expect(w.stdout.at(-1)).toMatch(new RegExp(`^${TIME} scan ${scanId} completed 127\\.0\\.0\\.1/32: 1 device\\(s\\) in \\d+\\.\\d s$`));
    // Progress lines, rate-limited: one per phase at most in a scan this short.
    const progress = w.stdout.filter((l) => l.includes(' discovery ') || l.includes(' saving ') || l.includes(' done '));
    expect(progress.length).toBeGreaterThan(0);
    const phases = progress.map((l) => l.split(' ')[3]);
    expect(new Set(phases).size).toBe(phases.length);
    await w.stop();
  }, 120_000);

  it('prints raw JSON lines with --json', async () => {
    const w = watch(['--server', serve.baseUrl, '--json'], { NETWARDEN_API_KEY: key });
    await w.until('connecting', () => w.stderr.some((l) => l.startsWith('watching')));
    const scanId = await quickScan();
    await w.until('scan_finished', () => w.stdout.some((l) => l.includes('"scan_finished"')));
    const events = w.stdout.map((l) => JSON.parse(l));
    expect(events[0]).toMatchObject({ id: expect.any(Number), event: 'scan_started', data: { scan_id: scanId, subnet: '127.0.0.1/32' } });
    expect(events.at(-1)).toMatchObject({ event: 'scan_finished', data: { scan_id: scanId, status: 'completed' } });
    // Every progress event, not rate-limited, with consecutive ids.
    for (let i = 1; i < events.length; i++) expect(events[i].id).toBe(events[i - 1].id + 1);
    await w.stop();
  }, 120_000);

  it('reconnects with Last-Event-ID when the connection drops and prints what it missed', async () => {
    const relay = await Relay.start(new URL(serve.baseUrl));
    try {
      const w = watch(['--server', relay.url, '--api-key', key]);
      await w.until('connecting', () => w.stderr.some((l) => l.startsWith('watching')));
      const scanId = await quickScan();
      await w.until('the scan', () => w.stdout.some((l) => l.includes(`scan ${scanId} completed`)));
      relay.cut();
      await w.until('noticing the drop', () => w.stderr.some((l) => l.startsWith('connection lost')));
      // While it is away: a device edit (a device_updated event) it must not miss.
      const [device] = await bodyOf(await api('/api/devices?q=127.0.0.1', { key }));
      expect((await api(`/api/devices/${device.id}`, { method: 'PUT', key, json: { label: 'while away' } })).status).toBe(200);
      relay.restore();

      await w.until('the missed event', () => w.stdout.some((l) => l.includes('"while away"')));
      expect(w.stdout.at(-1)).toMatch(
        new RegExp(`^${TIME} device ${device.id} 127\\.0\\.0\\.1 "while away" online, risk \\S+ \\(\\d+\\), open ports `),
      );
      const reconnect = relay.requests.at(-1)!;
      expect(reconnect).toMatch(/^GET \/api\/events HTTP\/1\.1\r\n/);
      const lastEventId = Number(/\r\nlast-event-id: (\d+)\r\n/i.exec(reconnect)?.[1]);
      expect(lastEventId).toBeGreaterThan(0);
      expect(relay.requests[0]).not.toMatch(/last-event-id/i);
      // Printed once: not again from the replay, not twice.
      expect(w.stdout.filter((l) => l.includes(`scan ${scanId} completed`))).toHaveLength(1);
      expect(w.stdout.filter((l) => l.includes('"while away"'))).toHaveLength(1);
      await w.stop();
    } finally {
      await relay.close();
    }
  }, 120_000);

  it('exits 1 with a clear message when the server refuses the key', async () => {
    const result = await runCli(datastore, ['watch', '--server', serve.baseUrl, '--api-key', 'svc_' + 'x'.repeat(43)]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^netwarden: the server refused the API key \(401 Not authenticated\)/);
    expect(hasStackTrace(result.stderr)).toBe(false);
  });

  it('exits 1 when nothing answers at the start', async () => {
    const port = await closedPort('127.0.0.1');
    const result = await runCli(datastore, ['watch', '--server', `http://127.0.0.1:${port}`, '--api-key', key]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`netwarden: cannot watch http://127.0.0.1:${port}/api/events: ECONNREFUSED\n`);
  });

  it('exits 2 on bad usage: no key, a malformed --server, a bad --last-event-id, an unknown option', async () => {
    const cases: Array<[string[], RegExp]> = [
      [
        ['watch', '--server', serve.baseUrl],
        /no API key: give --api-key KEY or set NETWARDEN_API_KEY \(create one with `netwarden keys create watch`\)/,
      ],
      [['watch', '--server', 'ftp://127.0.0.1', '--api-key', key], /--server must be an http:\/\/ or https:\/\/ URL/],
      [['watch', '--server', 'not a url', '--api-key', key], /--server must be an http:\/\/ or https:\/\/ URL/],
      [['watch', '--server', serve.baseUrl, '--api-key', key, '--last-event-id', 'x'], /--last-event-id must be an event id/],
      [['watch', '--bogus'], /unknown option '--bogus'/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(datastore, args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(hasStackTrace(result.stderr)).toBe(false);
    }
  });
});
