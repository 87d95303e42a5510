/**
 * Runs the real command-line program (`node bin/netwarden.js`, which imports the dist/ that
 * test/global-setup.ts builds) against a throw-away datastore, and starts `serve` on it.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { dropPgSchema, ensurePgSchema } from '../../src/store/db.js';
import { openStore, type Store } from '../../src/store/index.js';
import { ADMIN } from '../helpers/server.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The program under test (it imports dist/). */
export const BIN = join(root, 'bin', 'netwarden.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Written to standard input, which is then closed (it is always a pipe, never a terminal). */
  input?: string;
  /** Extra variables on top of the datastore's. */
  env?: Record<string, string>;
}

/** A datastore the CLI and the server are pointed at through NETWARDEN_* variables only. */
export interface CliDatastore {
  kind: 'sqlite' | 'postgres';
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

/**
 * The environment of the test process without any NETWARDEN_* setting that could leak in, except
 * the scan scope guard (every program a test starts may scan only loopback and the namespace lab)
 * and the outbound allowance (its notification receivers and fakes listen on loopback).
 */
export function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('NETWARDEN_')) env[name] = value;
  }
  env.NETWARDEN_SCAN_ALLOW = TEST_SCAN_ALLOW;
  env.NETWARDEN_OUTBOUND_ALLOW = TEST_OUTBOUND_ALLOW;
  return env;
}

export const TEST_SCAN_ALLOW = '127.0.0.0/8,10.66.0.0/24';
export const TEST_OUTBOUND_ALLOW = '127.0.0.0/8';

/** Runs `netwarden <args>` with the datastore's variables; never throws for a non-zero exit. */
export function runCli(datastore: CliDatastore, args: string[], options: CliOptions = {}): Promise<CliResult> {
  const env = { ...baseEnv(), ...datastore.env, ...options.env };
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [BIN, ...args], { cwd: root, env, timeout: 25_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
    child.stdin?.end(options.input ?? '');
  });
}

/** SQLite in a temporary data directory. */
export function sqliteDatastore(): CliDatastore {
  const dir = mkdtempSync(join(tmpdir(), 'netwarden-cli-'));
  return {
    kind: 'sqlite',
    env: { NETWARDEN_DATA_DIR: dir },
    async cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A fresh schema of the PostgreSQL database at `url`, selected through the connection string's
 * `options=-c search_path=<schema>` exactly as an operator could.
 */
export async function postgresDatastore(url: string): Promise<CliDatastore> {
  const schema = `nw_cli_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  await ensurePgSchema(url, schema);
  const dir = mkdtempSync(join(tmpdir(), 'netwarden-cli-'));
  const withPath = `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  return {
    kind: 'postgres',
    env: { NETWARDEN_DATA_DIR: dir, NETWARDEN_DATABASE_URL: withPath },
    async cleanup() {
      rmSync(dir, { recursive: true, force: true });
      await dropPgSchema(url, schema);
    },
  };
}

/** Opens the datastore the programs use, from the test process (to look at what they wrote). */
export function openDatastore(ds: CliDatastore): Promise<Store> {
  return openStore({ url: ds.env.NETWARDEN_DATABASE_URL ?? join(ds.env.NETWARDEN_DATA_DIR, 'netwarden.db'), poolSize: 2 });
}

/** SQLite always; PostgreSQL too when TEST_DATABASE_URL is set. */
export function cliDatastores(): Array<{ kind: 'sqlite' | 'postgres'; create: () => Promise<CliDatastore> }> {
  const pgUrl = process.env.TEST_DATABASE_URL;
  const list: Array<{ kind: 'sqlite' | 'postgres'; create: () => Promise<CliDatastore> }> = [
    { kind: 'sqlite', create: async () => sqliteDatastore() },
  ];
  if (pgUrl) list.push({ kind: 'postgres', create: () => postgresDatastore(pgUrl) });
  return list;
}

/**
 * One datastore, for CLI tests whose subject does not depend on the store: the command reaches
 * the store through the same code the API tests run on both (keys, schedules, exports, agents,
 * the event stream). Each such file names the store it prefers, so that between them the CLI
 * still runs against `serve` on PostgreSQL too; without TEST_DATABASE_URL it is SQLite. Running
 * every program twice cost CI several minutes (each start of the program is about 0.5–1 s of CPU).
 */
export function oneCliDatastore(prefer: 'sqlite' | 'postgres'): ReturnType<typeof cliDatastores> {
  const all = cliDatastores();
  return [all.find((d) => d.kind === prefer) ?? all[0]];
}

export interface ServeProcess {
  baseUrl: string;
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
  /** SIGKILL (a crash: nothing runs on the way out), then waits for the exit. */
  kill(): Promise<void>;
  /** SIGKILL of its whole process group (with `processGroup`: what systemd or a container stop does), then waits for the exit. */
  killGroup(): Promise<void>;
  /** Everything the process wrote to standard error so far. */
  stderr(): string;
}

export interface ServeOptions {
  /** Runs it as the leader of its own process group, as a service manager would. */
  processGroup?: boolean;
}

/**
 * Starts `netwarden serve` on a free loopback port (NETWARDEN_PORT=0; the bound address is read
 * from its "listening" log line) and waits until /health answers 200.
 */
export async function startServe(
  datastore: CliDatastore,
  extraEnv: Record<string, string> = {},
  args: string[] = ['serve'],
  options: ServeOptions = {},
): Promise<ServeProcess> {
  const env = {
    ...baseEnv(),
    ...datastore.env,
    ...extraEnv,
    NETWARDEN_PORT: '0',
    NETWARDEN_HOST: '127.0.0.1',
    NETWARDEN_LOG_LEVEL: 'info',
    // Nothing in these tests may reach outside this machine.
    NETWARDEN_UPDATE_FEED_URL: 'http://127.0.0.1:9/releases/latest',
  };
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.processGroup === true,
  });
  let stderr = '';
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    output += chunk.toString();
  });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not report its address in time\n${stderr}`)), 60_000);
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'netwarden listening' && entry.url) {
          clearTimeout(timer);
          resolve(entry.url);
        }
      } catch {
        // not a log line
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code} before listening\n${stderr}`));
    });
  });
  if (!baseUrl.startsWith('http://127.0.0.1:')) throw new Error(`unexpected listen address ${baseUrl}`);

  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${baseUrl}/health`).catch(() => null);
    if (res?.status === 200) break;
    if (attempt > 50) throw new Error(`serve at ${baseUrl} never became healthy`);
    await new Promise((r) => setTimeout(r, 100));
  }

  return {
    baseUrl,
    child,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async killGroup() {
      if (!options.processGroup) throw new Error('killGroup() needs a server started with processGroup: true');
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
      await exited;
    },
    stderr: () => stderr,
  };
}

export interface WorkerProcess {
  child: ChildProcess;
  /** Every log line it wrote so far, parsed. */
  log: Array<Record<string, unknown>>;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

/** Starts `netwarden worker <args>` on the datastore and waits for its "ready" log line. */
export async function startWorkerProcess(
  datastore: CliDatastore,
  args: string[] = [],
  extraEnv: Record<string, string> = {},
): Promise<WorkerProcess> {
  const env = { ...baseEnv(), ...datastore.env, ...extraEnv, NETWARDEN_LOG_LEVEL: 'info' };
  const child = spawn(process.execPath, [BIN, 'worker', ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const log: Array<Record<string, unknown>> = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not become ready in time\n${stderr}`)), 60_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        log.push(entry);
        if (entry.msg === 'netwarden worker ready') {
          clearTimeout(timer);
          resolve();
        }
      } catch {
        // not a log line
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code} before it was ready\n${stderr}`));
    });
  });
  return {
    child,
    log,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * `serve` on the datastore with the first administrator (ADMIN) set up through the API; their
 * session cookie. A refused setup stops the server again and throws.
 */
export async function startServeWithAdmin(
  datastore: CliDatastore,
): Promise<{ serve: ServeProcess; http: ReturnType<typeof client>; cookie: string }> {
  const serve = await startServe(datastore);
  const http = client(serve.baseUrl);
  const setup = await http('/api/auth/setup', { method: 'POST', json: ADMIN });
  if (setup.status !== 201) {
    await serve.stop();
    throw new Error(`POST /api/auth/setup answered ${setup.status}: ${await setup.text()}`);
  }
  return { serve, http, cookie: sessionCookieOf(setup) };
}

/** A tiny HTTP client for the server under test. */
export function client(baseUrl: string) {
  return async (path: string, init: { method?: string; key?: string; cookie?: string; json?: unknown } = {}) => {
    const headers: Record<string, string> = {};
    if (init.key) headers['X-API-Key'] = init.key;
    if (init.cookie) headers.Cookie = init.cookie;
    if (init.json !== undefined) headers['Content-Type'] = 'application/json';
    return fetch(baseUrl + path, {
      method: init.method ?? 'GET',
      headers,
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
    });
  };
}

/** The session cookie (`name=value`) a login response set. */
export function sessionCookieOf(res: Response): string {
  const header = res.headers.getSetCookie().find((c) => c.startsWith('netwarden_session='));
  if (!header) throw new Error('no session cookie in response');
  return header.split(';')[0];
}

/** True when a CLI failure message looks like a stack trace rather than a sentence. */
export function hasStackTrace(text: string): boolean {
  return /\n\s+at .+\(.+:\d+:\d+\)/.test(text) || /^\s+at /m.test(text);
}

/**
 * A refusal: the given exit status, `message` on stderr (with `oneLine`, as its only line), nothing
 * on stdout, no stack trace.
 */
export function expectRefused(result: CliResult, code: number, message: RegExp, { oneLine = false } = {}): void {
  expect(result.code, `stderr: ${result.stderr}`).toBe(code);
  expect(result.stderr).toMatch(message);
  if (oneLine) expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(result.stdout).toBe('');
  expect(hasStackTrace(result.stderr)).toBe(false);
}

/** A response body as JSON, loosely typed: the tests assert on its shape. */
export async function bodyOf(res: Response): Promise<any> {
  return res.json();
}
