/**
 * TCP connect probing for the native engine: one probe (connect, classify, close), a registry
 * that destroys in-flight sockets on abort, a bounded worker pool, and the port scan itself with
 * per-host adaptive timeouts.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';

/* ------------------------------------------------------------------------------------------------
 * Socket registry: abort destroys everything in flight
 * --------------------------------------------------------------------------------------------- */

/**
 * Tracks sockets in flight so that they can be destroyed at once: on abort of the scan (the root
 * registry) or when a host no longer needs its remaining probes (a child registry).
 */
export class SocketRegistry {
  private readonly sockets = new Set<net.Socket>();
  private readonly children = new Set<SocketRegistry>();
  private cancelledFlag = false;
  private readonly onAbort = (): void => this.cancel();

  constructor(
    private readonly signal?: AbortSignal,
    private readonly parent?: SocketRegistry,
  ) {
    if (signal?.aborted) this.cancelledFlag = true;
    else signal?.addEventListener('abort', this.onAbort, { once: true });
    parent?.children.add(this);
  }

  /** A registry whose sockets also belong to this one, cancelled with it or on its own. */
  child(): SocketRegistry {
    const c = new SocketRegistry(undefined, this);
    if (this.cancelledFlag) c.cancelledFlag = true;
    return c;
  }

  get cancelled(): boolean {
    return this.cancelledFlag || (this.parent?.cancelled ?? false);
  }

  get size(): number {
    return this.sockets.size;
  }

  add(socket: net.Socket): void {
    this.sockets.add(socket);
    this.parent?.add(socket);
  }

  delete(socket: net.Socket): void {
    this.sockets.delete(socket);
    this.parent?.delete(socket);
  }

  /** Destroys every socket in flight; later probes through this registry end at once. */
  cancel(): void {
    if (this.cancelledFlag) return;
    this.cancelledFlag = true;
    for (const c of this.children) c.cancel();
    for (const s of [...this.sockets]) s.destroy();
  }

  /** Stops listening to the signal and detaches from the parent. */
  dispose(): void {
    this.signal?.removeEventListener('abort', this.onAbort);
    this.parent?.children.delete(this);
  }
}

/* ------------------------------------------------------------------------------------------------
 * One probe
 * --------------------------------------------------------------------------------------------- */

/**
 * - `open`: the connection was established.
 * - `closed`: refused (a RST: the host is alive, nothing listens).
 * - `timeout`: no answer within the timeout.
 * - `unreachable`: the network said no (host or network unreachable, blocked locally).
 * - `error`: a local resource problem (out of descriptors or ephemeral ports): worth retrying.
 * - `aborted`: cancelled through the registry.
 */
export type ProbeState = 'open' | 'closed' | 'timeout' | 'unreachable' | 'error' | 'aborted';

export interface ProbeResult {
  state: ProbeState;
  /** Connect round-trip time in ms for `open` and `closed`, else null. */
  rttMs: number | null;
  code?: string;
  /** For `open`: the connection's own and remote endpoints as `address:port`. */
  local?: string;
  remote?: string;
}

export interface ProbeOptions {
  timeoutMs: number;
  registry?: SocketRegistry;
  localAddress?: string;
  localPort?: number;
}

const RETRYABLE = new Set(['EMFILE', 'ENFILE', 'EADDRNOTAVAIL', 'ENOBUFS', 'EAGAIN', 'EADDRINUSE', 'ENOMEM']);

export function classifyConnectError(code: string | undefined): ProbeState {
  if (code === 'ECONNREFUSED') return 'closed';
  if (code === 'ETIMEDOUT') return 'timeout';
  if (code && RETRYABLE.has(code)) return 'error';
  return 'unreachable';
}

/**
 * True when a loopback socket got connected to itself: with the ephemeral source port equal to
 * the destination port, TCP simultaneous open "succeeds" with nobody listening.
 */
export function isSelfConnect(socket: net.Socket): boolean {
  return (
    socket.localPort !== undefined &&
    socket.localPort === socket.remotePort &&
    socket.localAddress !== undefined &&
    socket.localAddress === socket.remoteAddress
  );
}

/** Connects to host:port once and reports what happened. Never rejects. */
export function probeTcp(host: string, port: number, options: ProbeOptions): Promise<ProbeResult> {
  const { registry } = options;
  if (registry?.cancelled) return Promise.resolve({ state: 'aborted', rttMs: null });
  return new Promise<ProbeResult>((resolve) => {
    const socket = new net.Socket();
    const started = performance.now();
    let settled = false;
    const finish = (state: ProbeState, code?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      registry?.delete(socket);
      const rttMs = state === 'open' || state === 'closed' ? performance.now() - started : null;
      const endpoints =
        state === 'open' ? { local: `${socket.localAddress}:${socket.localPort}`, remote: `${socket.remoteAddress}:${socket.remotePort}` } : {};
      if (state === 'open' && !socket.destroyed) {
        // A RST instead of a FIN: no TIME_WAIT left behind for every open port probed.
        try {
          socket.resetAndDestroy();
        } catch {
          socket.destroy();
        }
      } else {
        socket.destroy();
      }
      resolve(code === undefined ? { state, rttMs, ...endpoints } : { state, rttMs, code, ...endpoints });
    };
    const timer = setTimeout(() => finish('timeout'), options.timeoutMs);
    socket.once('connect', () => {
      if (isSelfConnect(socket)) finish('closed', 'SELF_CONNECT');
      else finish('open');
    });
    socket.on('error', (err: NodeJS.ErrnoException) => finish(classifyConnectError(err.code), err.code));
    socket.once('close', () => finish(registry?.cancelled ? 'aborted' : 'error', 'CLOSED'));
    registry?.add(socket);
    try {
      socket.connect({ host, port, localAddress: options.localAddress, localPort: options.localPort });
    } catch (err) {
      finish('error', (err as NodeJS.ErrnoException).code ?? 'CONNECT_THROW');
    }
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** probeTcp, retrying local resource errors (out of descriptors or ports) a few times. */
export async function probeWithRetry(host: string, port: number, options: ProbeOptions, attempts = 5): Promise<ProbeResult> {
  let result = await probeTcp(host, port, options);
  for (let i = 1; i < attempts && result.state === 'error' && !options.registry?.cancelled; i++) {
    await sleep(20 * 2 ** i);
    result = await probeTcp(host, port, options);
  }
  return result;
}

export interface OpenConnection {
  local?: string;
  remote?: string;
}

/**
 * Drops connections that ended at one of our own sockets. Scanning this machine's own address
 * (127.0.0.1, or its LAN address), a probe can connect to itself (source port = destination port)
 * or two probes to each other: A from port X to port Y while B goes from Y to X, their SYNs cross
 * and TCP simultaneous open connects them. No port has a listener, yet both look open. Such a
 * connection's remote end is the local end of one of our probes, which no real server's is (the
 * kernel never picks a listening port as an ephemeral source port).
 */
export function withoutOwnConnections<T extends OpenConnection>(connections: readonly T[]): T[] {
  const ownEnds = new Set<string>();
  for (const c of connections) if (c.local) ownEnds.add(c.local);
  return connections.filter((c) => c.remote === undefined || !ownEnds.has(c.remote));
}

/* ------------------------------------------------------------------------------------------------
 * Bounded pool
 * --------------------------------------------------------------------------------------------- */

/**
 * Runs `worker` over `items` with at most `concurrency` calls in flight. Items are pulled lazily,
 * so a generator of millions of jobs costs nothing up front. Stops taking items once `shouldStop`
 * says so (abort).
 */
export async function runPool<T>(
  items: Iterable<T>,
  concurrency: number,
  worker: (item: T) => Promise<void>,
  shouldStop: () => boolean = () => false,
): Promise<void> {
  const iterator = items[Symbol.iterator]();
  let exhausted = false;
  const loop = async (): Promise<void> => {
    while (!exhausted && !shouldStop()) {
      const next = iterator.next();
      if (next.done) {
        exhausted = true;
        return;
      }
      await worker(next.value);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, loop));
}

/* ------------------------------------------------------------------------------------------------
 * Adaptive timeouts
 * --------------------------------------------------------------------------------------------- */

export interface TimeoutPolicy {
  /** Timeout before any answer was seen from the host. */
  initialMs: number;
  minMs: number;
  maxMs: number;
  /** timeout = clamp(factor × largest connect RTT seen, minMs, maxMs). */
  rttFactor: number;
}

export const DEFAULT_PORT_TIMEOUTS: TimeoutPolicy = { initialMs: 1000, minMs: 150, maxMs: 1500, rttFactor: 4 };

/** Per-host timeout that follows the largest connect round-trip time observed. */
export class RttTracker {
  maxRttMs: number | null;

  constructor(
    private readonly policy: TimeoutPolicy,
    knownRttMs: number | null = null,
  ) {
    this.maxRttMs = knownRttMs;
  }

  observe(rttMs: number | null): void {
    if (rttMs === null || !Number.isFinite(rttMs)) return;
    if (this.maxRttMs === null || rttMs > this.maxRttMs) this.maxRttMs = rttMs;
  }

  timeoutMs(): number {
    const { initialMs, minMs, maxMs, rttFactor } = this.policy;
    if (this.maxRttMs === null) return initialMs;
    return Math.round(Math.min(maxMs, Math.max(minMs, rttFactor * this.maxRttMs)));
  }
}

/* ------------------------------------------------------------------------------------------------
 * Port scan over several hosts
 * --------------------------------------------------------------------------------------------- */

export interface HostPortResult {
  host: string;
  open: number[];
  /** Ports that never answered (after the retry). */
  filtered: number[];
  closedCount: number;
  /** True when the host ran out of its time budget before every port was probed. */
  timedOut: boolean;
  maxRttMs: number | null;
}

export interface ConnectScanOptions {
  maxSockets: number;
  timeouts: TimeoutPolicy;
  registry: SocketRegistry;
  /** Connect RTT already known per host (from discovery); starts the adaptive timeout lower. */
  knownRtt?: ReadonlyMap<string, number>;
  /** Per-host time budget in ms; ports not probed by then are skipped. */
  hostTimeoutMs?: number;
  /** Second tries for ports that timed out (nmap retransmits too). */
  retries?: number;
  onProgress?: (done: number, total: number, hostsDone: number) => void;
}

interface HostState {
  result: HostPortResult;
  /** Open ports with the endpoints of the probe that found them. */
  opened: { port: number; local: string | undefined; remote: string | undefined }[];
  rtt: RttTracker;
  startedAt: number | null;
  remaining: number;
  pendingRetry: number[];
  expired: boolean;
}

/**
 * Connect-scans `ports` on every host, all hosts in parallel through one bounded pool: jobs are
 * interleaved host by host so each host gets a share of the sockets and none waits for another.
 */
export async function connectScan(hosts: readonly string[], ports: readonly number[], options: ConnectScanOptions): Promise<HostPortResult[]> {
  const { registry, timeouts } = options;
  const retries = options.retries ?? 1;
  const states: HostState[] = hosts.map((host) => {
    const known = options.knownRtt?.get(host);
    return {
      result: { host, open: [], filtered: [], closedCount: 0, timedOut: false, maxRttMs: null },
      opened: [],
      rtt: new RttTracker(timeouts, known ?? null),
      startedAt: null,
      remaining: ports.length,
      pendingRetry: [],
      expired: false,
    };
  });
  const total = hosts.length * ports.length;
  let done = 0;
  let hostsDone = hosts.length === 0 || ports.length === 0 ? hosts.length : 0;
  const report = (): void => options.onProgress?.(Math.min(done, total), total, hostsDone);

  const expired = (s: HostState): boolean => {
    if (s.expired) return true;
    if (options.hostTimeoutMs !== undefined && s.startedAt !== null && performance.now() - s.startedAt > options.hostTimeoutMs) {
      s.expired = true;
      s.result.timedOut = true;
    }
    return s.expired;
  };

  function* firstPass(): Generator<[HostState, number]> {
    for (const port of ports) {
      for (const s of states) {
        if (!expired(s)) yield [s, port];
        else countDone(s);
      }
    }
  }

  function countDone(s: HostState): void {
    done += 1;
    s.remaining -= 1;
    if (s.remaining === 0) hostsDone += 1;
  }

  const record = (s: HostState, port: number, r: ProbeResult, final: boolean): void => {
    s.rtt.observe(r.rttMs);
    if (r.state === 'open') s.opened.push({ port, local: r.local, remote: r.remote });
    else if (r.state === 'closed') s.result.closedCount += 1;
    else if (r.state === 'aborted') return;
    else if (final) s.result.filtered.push(port);
    else s.pendingRetry.push(port);
  };

  await runPool(
    firstPass(),
    options.maxSockets,
    async ([s, port]) => {
      s.startedAt ??= performance.now();
      const r = await probeWithRetry(s.result.host, port, { timeoutMs: s.rtt.timeoutMs(), registry });
      record(s, port, r, retries <= 0);
      countDone(s);
      report();
    },
    () => registry.cancelled,
  );

  for (let attempt = 1; attempt <= retries && !registry.cancelled; attempt++) {
    const jobs: [HostState, number][] = [];
    for (const s of states) {
      for (const port of s.pendingRetry) jobs.push([s, port]);
      s.pendingRetry = [];
    }
    if (jobs.length === 0) break;
    const final = attempt === retries;
    await runPool(
      jobs,
      options.maxSockets,
      async ([s, port]) => {
        if (expired(s)) {
          s.result.filtered.push(port);
          return;
        }
        // Give a second try more time than the first: the answer may simply have been slow.
        const timeoutMs = Math.min(timeouts.maxMs, s.rtt.timeoutMs() * 2);
        const r = await probeWithRetry(s.result.host, port, { timeoutMs, registry });
        record(s, port, r, final);
      },
      () => registry.cancelled,
    );
  }

  const all = states.flatMap((s) => s.opened.map((o) => ({ ...o, state: s })));
  const genuine = new Set(withoutOwnConnections(all));
  for (const o of all) {
    if (genuine.has(o)) o.state.result.open.push(o.port);
    else o.state.result.closedCount += 1;
  }

  for (const s of states) {
    s.result.open.sort((a, b) => a - b);
    s.result.filtered.sort((a, b) => a - b);
    s.result.maxRttMs = s.rtt.maxRttMs;
  }
  report();
  return states.map((s) => s.result);
}
