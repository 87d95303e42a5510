/** Connect probing on loopback only (network-safety rule: 127.0.0.0/8). */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RttTracker,
  SocketRegistry,
  classifyConnectError,
  connectScan,
  probeTcp,
  runPool,
  withoutOwnConnections,
  DEFAULT_PORT_TIMEOUTS,
} from '../../../src/engines/native/connect-pool.js';
import { greetingServer, listeningPorts, unansweringPort, type Listener } from './listeners.js';

/** A port on `host` nobody listens on right now (listen on port 0, note it, close). */
async function freePort(host: string): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('probeTcp', () => {
  let listener: Listener;
  beforeAll(async () => {
    listener = await greetingServer('127.0.0.2', 'hello\r\n');
  });
  afterAll(async () => {
    await listener.close();
  });

  it('reports open with a round-trip time, and closed for a refused port', async () => {
    const open = await probeTcp('127.0.0.2', listener.port, { timeoutMs: 1000 });
    expect(open.state).toBe('open');
    expect(open.rttMs).toBeGreaterThanOrEqual(0);
    const closed = await probeTcp('127.0.0.2', await freePort('127.0.0.2'), { timeoutMs: 1000 });
    expect(closed.state).toBe('closed');
    expect(closed.rttMs).not.toBeNull();
  });

  it('treats a loopback self-connect (source port = destination port) as closed', async () => {
    // Binding the source port to the destination port makes TCP simultaneous open connect the
    // socket to itself deterministically: the false "open" port the guard exists for.
    const port = await freePort('127.0.0.1');
    const raw = await new Promise<string>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port, localAddress: '127.0.0.1', localPort: port });
      s.once('connect', () => {
        resolve(`${s.localPort}->${s.remotePort}`);
        s.destroy();
      });
      s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    });
    expect(raw).toBe(`${port}->${port}`); // the kernel did connect it to itself
    const result = await probeTcp('127.0.0.1', port, { timeoutMs: 1000, localAddress: '127.0.0.1', localPort: port });
    expect(result).toMatchObject({ state: 'closed', code: 'SELF_CONNECT' });
  });

  it('ends at once when its registry is cancelled', async () => {
    const hold = await unansweringPort('127.0.0.5');
    if (!hold) {
      console.warn('SKIPPED: python3 is not installed, no unanswering loopback port for the cancel test');
      return;
    }
    try {
      const registry = new SocketRegistry();
      const started = performance.now();
      const pending = probeTcp('127.0.0.5', hold.port, { timeoutMs: 30_000, registry });
      setTimeout(() => registry.cancel(), 50);
      const result = await pending;
      expect(result.state).toBe('aborted');
      // Well before the 30 s timeout: the cancel ended the wait.
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(registry.size).toBe(0);
      expect((await probeTcp('127.0.0.5', hold.port, { timeoutMs: 5000, registry })).state).toBe('aborted');
    } finally {
      await hold.close();
    }
  });

  it('classifies connect errors', () => {
    expect(classifyConnectError('ECONNREFUSED')).toBe('closed');
    expect(classifyConnectError('ETIMEDOUT')).toBe('timeout');
    expect(classifyConnectError('EHOSTUNREACH')).toBe('unreachable');
    expect(classifyConnectError('ENETUNREACH')).toBe('unreachable');
    expect(classifyConnectError('EMFILE')).toBe('error');
    expect(classifyConnectError('EADDRNOTAVAIL')).toBe('error');
  });
});

describe('withoutOwnConnections', () => {
  it('drops connections whose remote end is one of our own local ends', () => {
    const real = { port: 22, local: '127.0.0.1:40001', remote: '127.0.0.2:22' };
    const self = { port: 40002, local: '127.0.0.1:40002', remote: '127.0.0.1:40002' };
    const crossA = { port: 45000, local: '127.0.0.1:41000', remote: '127.0.0.1:45000' };
    const crossB = { port: 41000, local: '127.0.0.1:45000', remote: '127.0.0.1:41000' };
    const unknown: { port: number; local?: string; remote?: string } = { port: 80 };
    expect(withoutOwnConnections([real, self, crossA, crossB, unknown])).toEqual([real, unknown]);
    // The same port number on another address is a different end.
    expect(
      withoutOwnConnections([
        { local: '10.0.0.5:41000', remote: '10.0.0.6:22' },
        { local: '10.0.0.5:50000', remote: '10.0.0.7:41000' },
      ]),
    ).toHaveLength(2);
  });
});

describe('runPool', () => {
  it('never runs more than the limit at once and processes every item', async () => {
    let inFlight = 0;
    let peak = 0;
    const seen: number[] = [];
    function* items(): Generator<number> {
      for (let i = 0; i < 200; i++) yield i;
    }
    await runPool(items(), 7, async (i) => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, i % 3));
      seen.push(i);
      inFlight -= 1;
    });
    expect(peak).toBe(7);
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i));
  });

  it('stops taking items when told to', async () => {
    let count = 0;
    await runPool(
      Array.from({ length: 100 }, (_, i) => i),
      4,
      async () => {
        count += 1;
      },
      () => count >= 10,
    );
    expect(count).toBeLessThan(15);
  });
});

describe('RttTracker', () => {
  it('starts at the initial timeout and follows 4 × the largest RTT within bounds', () => {
    const t = new RttTracker(DEFAULT_PORT_TIMEOUTS);
    expect(t.timeoutMs()).toBe(1000);
    t.observe(0.2);
    expect(t.timeoutMs()).toBe(150);
    t.observe(100);
    expect(t.timeoutMs()).toBe(400);
    t.observe(50);
    expect(t.timeoutMs()).toBe(400);
    t.observe(2000);
    expect(t.timeoutMs()).toBe(1500);
    expect(new RttTracker(DEFAULT_PORT_TIMEOUTS, 10).timeoutMs()).toBe(150);
  });
});

describe('connectScan', () => {
  let a: Listener;
  let b: Listener;
  beforeAll(async () => {
    a = await greetingServer('127.0.0.2', 'a\r\n');
    b = await greetingServer('127.0.0.3', 'b\r\n');
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it('finds exactly the listening ports of several hosts scanned together', async () => {
    const registry = new SocketRegistry();
    const closedA = await freePort('127.0.0.2');
    const ports = [a.port, b.port, closedA].sort((x, y) => x - y);
    const progress: number[] = [];
    const results = await connectScan(['127.0.0.2', '127.0.0.3'], ports, {
      maxSockets: 64,
      timeouts: DEFAULT_PORT_TIMEOUTS,
      registry,
      onProgress: (done, total) => progress.push(done / total),
    });
    const byHost = new Map(results.map((r) => [r.host, r]));
    expect(byHost.get('127.0.0.2')?.open).toEqual(a.port === b.port ? [a.port] : [a.port]);
    expect(byHost.get('127.0.0.3')?.open).toEqual([b.port]);
    expect(byHost.get('127.0.0.2')?.filtered).toEqual([]);
    expect(byHost.get('127.0.0.2')?.closedCount).toBe(2);
    expect(byHost.get('127.0.0.2')?.maxRttMs).not.toBeNull();
    expect(progress[progress.length - 1]).toBe(1);
  });

  it('reports a port that never answers as filtered, after a retry', async () => {
    const hold = await unansweringPort('127.0.0.6');
    if (!hold) {
      console.warn('SKIPPED: python3 is not installed, no unanswering loopback port for the filtered-port test');
      return;
    }
    try {
      const closed = await freePort('127.0.0.6');
      const started = performance.now();
      const [result] = await connectScan(['127.0.0.6'], [closed, hold.port], {
        maxSockets: 16,
        timeouts: DEFAULT_PORT_TIMEOUTS,
        registry: new SocketRegistry(),
      });
      expect(result.open).toEqual([]);
      expect(result.filtered).toEqual([hold.port]);
      expect(result.closedCount).toBe(1);
      // First try at most the initial 1000 ms, the retry at most 1500 ms: not an open-ended wait
      // (a generous bound for a busy machine).
      expect(performance.now() - started).toBeLessThan(10_000);
    } finally {
      await hold.close();
    }
  });

  it('reports no false open ports over 2000 ports of an idle loopback address', async () => {
    // Below the ephemeral range (32768-60999), where other processes' port-0 listeners live.
    const low = 21001;
    const high = 23000;
    const ports = Array.from({ length: high - low + 1 }, (_, i) => low + i);
    const before = await listeningPorts('127.0.0.9');
    const started = performance.now();
    const [result] = await connectScan(['127.0.0.9'], ports, { maxSockets: 256, timeouts: DEFAULT_PORT_TIMEOUTS, registry: new SocketRegistry() });
    const elapsed = performance.now() - started;
    const after = await listeningPorts('127.0.0.9');
    // Anything reported open must be a real listener (another process's wildcard socket), never a ghost.
    for (const port of result.open) expect(before.has(port) || after.has(port)).toBe(true);
    const expected = [...before].filter((p) => p >= low && p <= high && after.has(p));
    for (const port of expected) expect(result.open).toContain(port);
    if (expected.length === 0) expect(result.open).toEqual([]);
    expect(result.filtered).toEqual([]);
    expect(result.closedCount + result.open.length).toBe(ports.length);
    console.info(`connectScan: ${ports.length} ports on 127.0.0.9 in ${elapsed.toFixed(0)} ms`);
  });

  // Opt-in: the sweep knocks on every port of 127.0.0.1's ephemeral range, where other test runs on
  // this machine keep their port-0 listeners; run it alone with NETWARDEN_SELF_CONNECT_SWEEP=1.
  const sweep = process.env.NETWARDEN_SELF_CONNECT_SWEEP === '1';
  it.skipIf(!sweep)(
    'reports no ghost open ports across the ephemeral range of 127.0.0.1, where self-connects happen (opt-in: NETWARDEN_SELF_CONNECT_SWEEP=1)',
    async () => {
      // Without the guards, a source port picked equal to the probed port connects to itself (about
      // once per sweep of the ~28k-port ephemeral range), and two concurrent probes whose source and
      // destination ports mirror each other can connect to each other.
      const low = 32768;
      const high = 60999;
      const seen = await listeningPorts('127.0.0.1');
      const ports = Array.from({ length: high - low + 1 }, (_, i) => low + i).filter((p) => !seen.has(p));
      // Listeners that come and go during the sweep are real, not ghosts: keep sampling them.
      const sampler = setInterval(() => void listeningPorts('127.0.0.1').then((now) => now.forEach((p) => seen.add(p))), 25);
      try {
        const [result] = await connectScan(['127.0.0.1'], ports, {
          maxSockets: 256,
          timeouts: DEFAULT_PORT_TIMEOUTS,
          registry: new SocketRegistry(),
        });
        (await listeningPorts('127.0.0.1')).forEach((p) => seen.add(p));
        expect(result.open.filter((p) => !seen.has(p))).toEqual([]);
      } finally {
        clearInterval(sampler);
      }
    },
    60_000,
  );

  it('stops promptly when the registry is cancelled', async () => {
    const controller = new AbortController();
    const registry = new SocketRegistry(controller.signal);
    const ports = Array.from({ length: 65535 }, (_, i) => i + 1);
    const started = performance.now();
    setTimeout(() => controller.abort(), 100);
    await connectScan(['127.0.0.9'], ports, { maxSockets: 256, timeouts: DEFAULT_PORT_TIMEOUTS, registry });
    expect(registry.cancelled).toBe(true);
    // Far less than probing all 65,535 ports would take on a busy machine.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(registry.size).toBe(0);
    registry.dispose();
  });
});
