/**
 * The native engine asks a Redis that answered without a password for `INFO server`, so the port
 * gets Redis's version (and CVE matching a version to compare). Against a real redis-server on
 * loopback (network-safety rule: 127.0.0.1 only, a port the OS chose).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identifyService } from '../../../src/core/banners.js';
import { collectEvidence, respReplyComplete } from '../../../src/engines/native/banners.js';
import { SocketRegistry } from '../../../src/engines/native/connect-pool.js';

const REDIS = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
/** `Redis server v=7.0.15 sha=…` → `7.0.15`; null when redis-server is not installed. */
const INSTALLED_VERSION = REDIS.status === 0 ? (REDIS.stdout.match(/\bv=(\d+\.\d+\.\d+)/)?.[1] ?? null) : null;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server did not listen on 127.0.0.1:${port}`);
}

async function startRedis(extra: string[] = []): Promise<{ port: number; process: ChildProcess }> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', '/tmp', ...extra],
    { stdio: 'ignore' },
  );
  await waitForPort(port);
  return { port, process: child };
}

describe.runIf(INSTALLED_VERSION !== null)('Redis version over INFO (native engine)', () => {
  let open: { port: number; process: ChildProcess };
  let locked: { port: number; process: ChildProcess };

  beforeAll(async () => {
    open = await startRedis();
    locked = await startRedis(['--requirepass', 'not-for-scanners']);
  });

  afterAll(() => {
    open?.process.kill();
    locked?.process.kill();
  });

  it('reads the version of a Redis that asks for no password', async () => {
    const evidence = await collectEvidence('127.0.0.1', open.port, new SocketRegistry());
    expect(evidence.info?.length).toBeGreaterThan(0);
    const info = identifyService(evidence);
    expect(info).toMatchObject({
      service: 'redis',
      product: 'Redis key-value store',
      version: INSTALLED_VERSION,
      cpe: [`cpe:/a:redislabs:redis:${INSTALLED_VERSION}`],
    });
    expect(info.extra_info).toMatch(/mode standalone/);
  });

  it('leaves the version of a Redis that wants a password unknown, and says it wants one', async () => {
    const evidence = await collectEvidence('127.0.0.1', locked.port, new SocketRegistry());
    expect(identifyService(evidence)).toMatchObject({
      service: 'redis',
      product: 'Redis key-value store',
      version: null,
      extra_info: 'authentication required',
      cpe: ['cpe:/a:redislabs:redis'],
    });
  });
});

describe('respReplyComplete', () => {
  it('waits for a whole bulk string, or a line', () => {
    expect(respReplyComplete(Buffer.from('$10\r\n0123456789\r\n'))).toBe(true);
    expect(respReplyComplete(Buffer.from('$10\r\n01234'))).toBe(false);
    expect(respReplyComplete(Buffer.from('$-1\r\n'))).toBe(true);
    expect(respReplyComplete(Buffer.from('-NOAUTH Authentication required.\r\n'))).toBe(true);
    expect(respReplyComplete(Buffer.from('-NOAUTH Auth'))).toBe(false);
  });
});
