/**
 * The access log is written asynchronously and in chunks, yet a stopped server has written every
 * line; and a server whose stdout is gone (closed, or no longer read) still stops on SIGTERM.
 * These start the real `netwarden serve` (dist/) on SQLite.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, baseEnv } from '../cli/helpers.js';

interface Serve {
  child: ChildProcess;
  baseUrl: string;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const dirs: string[] = [];
const children: ChildProcess[] = [];

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function serve(): Promise<Serve> {
  const dir = mkdtempSync(join(tmpdir(), 'netwarden-shutdown-'));
  dirs.push(dir);
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: {
      ...baseEnv(),
      NETWARDEN_DATA_DIR: dir,
      NETWARDEN_PORT: '0',
      NETWARDEN_HOST: '127.0.0.1',
      NETWARDEN_LOG_LEVEL: 'info',
      NETWARDEN_UPDATE_FEED_URL: 'http://127.0.0.1:9/releases/latest',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let output = '';
  const onData = (d: Buffer) => (output += d.toString());
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  for (let i = 0; i < 200 && !/"msg":"netwarden listening"/.test(output); i++) {
    if (child.exitCode !== null) throw new Error(`serve exited early:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const url = /"msg":"netwarden listening"/.test(output) ? /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(output)?.[1] : undefined;
  if (!url) throw new Error(`serve never reported its address:\n${output}`);
  return { child, baseUrl: url, output: () => output, exited };
}

/** Request ids of `count` requests (a mix of answered, refused and unknown paths). */
async function makeRequests(baseUrl: string, count: number): Promise<string[]> {
  const paths = ['/health', '/api/stats', '/api/nowhere', '/api/auth/status'];
  const ids: string[] = [];
  for (let i = 0; i < count; i += 10) {
    const batch = await Promise.all(
      paths
        .concat(paths, paths)
        .slice(0, Math.min(10, count - i))
        .map((p) => fetch(`${baseUrl}${p}`)),
    );
    for (const res of batch) {
      await res.arrayBuffer();
      ids.push(res.headers.get('x-request-id')!);
    }
  }
  return ids;
}

describe('the access log and shutdown', () => {
  it('has the line of every request in its output after SIGTERM', async () => {
    const s = await serve();
    const ids = await makeRequests(s.baseUrl, 300);
    s.child.kill('SIGTERM');
    expect(await s.exited).toEqual({ code: 0, signal: null });
    const logged = new Set(
      s
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { msg?: string; reqId?: string })
        .filter((e) => e.msg === 'request')
        .map((e) => e.reqId),
    );
    expect(ids.filter((id) => !logged.has(id))).toEqual([]);
    expect(s.output()).toContain('"msg":"stopped"');
  });

  it('stops on SIGTERM after its stdout was closed', async () => {
    const s = await serve();
    s.child.stdout!.destroy();
    // Log lines now go to a pipe nobody holds (EPIPE).
    await makeRequests(s.baseUrl, 50);
    s.child.kill('SIGTERM');
    expect(await s.exited).toEqual({ code: 0, signal: null });
  });

  it('stops on SIGTERM while nobody reads its stdout', async () => {
    const s = await serve();
    s.child.stdout!.pause();
    s.child.stdout!.removeAllListeners('data');
    // Far more than a pipe holds (64 KiB): writes to stdout would block.
    await makeRequests(s.baseUrl, 1500);
    s.child.kill('SIGTERM');
    expect(await s.exited).toEqual({ code: 0, signal: null });
  });
});
