/**
 * What every recognition probe shares: its options (port, time, cancel), the deadline that bounds
 * it, the refusal to address anything but one unicast host, and a UDP exchange with that host
 * alone. A probe asks one host, unauthenticated, and gives up quietly: a silent, odd or oversized
 * answer is "no answer" (null), never an exception.
 */
import dgram from 'node:dgram';
import { isIP } from 'node:net';

export interface ProbeOptions {
  /** The port asked; each probe has the protocol's own as default (tests run responders on free loopback ports). */
  port?: number;
  /** The probe's whole time, in ms, answers included. */
  timeoutMs?: number;
  /** Aborted when the scan is cancelled: the probe stops at once and returns null (or what it has). */
  signal?: AbortSignal;
}

export const DEFAULT_PROBE_TIMEOUT_MS = 2000;

/** The probe's time, within sane bounds whatever the caller passed. */
export function timeoutOf(options: ProbeOptions): number {
  const ms = options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 50), 60_000) : DEFAULT_PROBE_TIMEOUT_MS;
}

/**
 * The one way a socket probe ends: the first call resolves with its value (an abort of `signal`
 * resolves null), frees the socket with `release` and stops listening; later calls do nothing.
 */
export function settleOnce<T>(signal: AbortSignal, resolve: (value: T | null) => void, release: () => void): (value: T | null) => void {
  let settled = false;
  const finish = (value: T | null) => {
    if (settled) return;
    settled = true;
    signal.removeEventListener('abort', onAbort);
    release();
    resolve(value);
  };
  const onAbort = () => finish(null);
  signal.addEventListener('abort', onAbort, { once: true });
  return finish;
}

/** A signal that aborts on the caller's cancel or when the probe's time is up. */
export function deadlineSignal(options: ProbeOptions): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutOf(options));
  return options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
}

/** Resolves when the signal aborts (at once if it already has); never rejects. */
export function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** Resolves after `ms`, or earlier when the signal aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Whether `ip` is one host's unicast address: an IP literal that is not multicast (224.0.0.0/4,
 * ff00::/8), broadcast, or unspecified. Probes address nothing else, so no probe can ever send to
 * a group (mDNS's or SSDP's multicast group) from this machine.
 */
export function isUnicastHost(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) {
    const first = Number(ip.split('.')[0]);
    return first !== 0 && first < 224;
  }
  if (family === 6) return !/^ff/i.test(ip) && ip !== '::';
  return false;
}

/** A valid port number or the default. */
export function portOf(options: ProbeOptions, fallback: number): number {
  const port = options.port;
  return port !== undefined && Number.isInteger(port) && port > 0 && port < 65536 ? port : fallback;
}

/**
 * A UDP socket connected to the host's port: the kernel then sends only there and delivers only
 * that peer's datagrams, and an ICMP "port unreachable" comes back as an ECONNREFUSED error, so a
 * host without the service is known at once instead of after the whole timeout. Null when the
 * host is not a unicast address or the socket cannot be made.
 */
export async function connectedUdp(host: string, port: number): Promise<dgram.Socket | null> {
  if (!isUnicastHost(host)) return null;
  const socket = dgram.createSocket({ type: isIP(host) === 6 ? 'udp6' : 'udp4' });
  const ok = await new Promise<boolean>((resolve) => {
    socket.once('error', () => resolve(false));
    socket.connect(port, host, () => resolve(true));
  });
  socket.removeAllListeners('error');
  if (!ok) {
    socket.close();
    return null;
  }
  return socket;
}

type SendCallback = (error: Error | null, bytes: number) => void;

/**
 * Lets a library written for unconnected sockets use a connected one: its
 * `send(msg, offset, length, port, address, cb)` loses the destination (the socket can reach no
 * other), sends wait until the connection is made, and nothing can ever be addressed elsewhere.
 */
export function pinDestination(socket: dgram.Socket, connected: Promise<unknown> = Promise.resolve()): void {
  const send = socket.send.bind(socket) as (msg: Uint8Array, offset: number, length: number, cb?: SendCallback) => void;
  socket.send = ((msg: Uint8Array, ...rest: unknown[]) => {
    const offset = typeof rest[0] === 'number' ? rest[0] : 0;
    const length = typeof rest[1] === 'number' ? rest[1] : msg.length;
    const cb = rest.find((r): r is SendCallback => typeof r === 'function');
    void connected.then(() => {
      try {
        send(msg, offset, length, cb);
      } catch {
        // closed meanwhile
      }
    });
  }) as typeof socket.send;
}

/** Whether a socket error says the host answered "nothing listens here" (ICMP port unreachable). */
export function isRefused(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === 'ECONNREFUSED';
}

/**
 * A UDP conversation with one host's port: datagrams from anyone else (or, unless `anySourcePort`,
 * from another port) are dropped unread, each kept datagram is at most `maxBytes`, and at most
 * `maxMessages` are kept.
 * The socket sends only to the host (never setBroadcast, never a membership).
 */
export class UdpPeer {
  private readonly queue: Buffer[] = [];
  private waiter: (() => void) | null = null;
  private received = 0;
  private closed = false;

  private constructor(
    private readonly socket: dgram.Socket,
    readonly host: string,
    readonly port: number,
    private readonly maxBytes: number,
    private readonly maxMessages: number,
    private readonly anySourcePort: boolean,
  ) {
    socket.on('message', (msg, rinfo) => {
      if (rinfo.address !== host || (!anySourcePort && rinfo.port !== port)) return;
      if (msg.length > maxBytes || this.received >= this.maxMessages) return;
      this.received++;
      this.queue.push(msg);
      this.wake();
    });
    // On a connected socket an ICMP port unreachable is ECONNREFUSED: nothing listens, stop now.
    socket.on('error', (error) => {
      if (isRefused(error)) this.refused = true;
      this.close();
    });
  }

  /** A socket on an ephemeral port of the right family, or null when the host is not a unicast address. */
  static async open(
    host: string,
    port: number,
    limits: { maxBytes: number; maxMessages?: number; anySourcePort?: boolean },
  ): Promise<UdpPeer | null> {
    if (!isUnicastHost(host)) return null;
    let socket: dgram.Socket | null;
    if (limits.anySourcePort) {
      // Answers may come from another port: an unconnected socket, sending to the host alone.
      socket = dgram.createSocket({ type: isIP(host) === 6 ? 'udp6' : 'udp4' });
      const bound = socket;
      const ok = await new Promise<boolean>((resolve) => {
        bound.once('error', () => resolve(false));
        bound.bind(0, () => resolve(true));
      });
      bound.removeAllListeners('error');
      if (!ok) {
        bound.close();
        return null;
      }
    } else {
      socket = await connectedUdp(host, port);
      if (!socket) return null;
    }
    const peer = new UdpPeer(socket, host, port, limits.maxBytes, limits.maxMessages ?? 64, limits.anySourcePort ?? false);
    if (limits.anySourcePort) {
      // An unconnected socket hears no "port unreachable": a connected twin sends the first
      // datagram too, so a host without the service still ends the probe at once.
      peer.canary = await connectedUdp(host, port);
      peer.canary?.on('error', (error) => {
        if (isRefused(error)) peer.refused = true;
        peer.close();
      });
    }
    return peer;
  }

  /** Whether the host said nothing listens on the port (ICMP port unreachable). */
  refused = false;

  private canary: dgram.Socket | null = null;
  private canarySent = false;

  send(packet: Uint8Array): void {
    if (this.closed) return;
    try {
      if (this.canary && !this.canarySent) {
        this.canarySent = true;
        this.canary.send(packet, () => {});
      }
      if (this.anySourcePort) this.socket.send(packet, this.port, this.host, () => {});
      else this.socket.send(packet, () => {});
    } catch {
      this.close();
    }
  }

  /** The next datagram, or null when none came within `waitMs`, the signal aborted, or the peer closed. */
  async next(waitMs: number, signal: AbortSignal): Promise<Buffer | null> {
    const ready = this.queue.shift();
    if (ready) return ready;
    if (this.closed || signal.aborted || waitMs <= 0) return null;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.waiter = null;
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      signal.addEventListener('abort', done, { once: true });
      this.waiter = done;
    });
    return signal.aborted ? null : (this.queue.shift() ?? null);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const socket of [this.socket, this.canary]) {
      try {
        socket?.close();
      } catch {
        // already closed
      }
    }
    this.wake();
  }

  private wake(): void {
    this.waiter?.();
  }
}

/** Runs `probe`, turning any exception (a parser's, a library's) into null: probes never throw. */
export async function quietly<T>(probe: () => Promise<T | null>): Promise<T | null> {
  try {
    return await probe();
  } catch {
    return null;
  }
}
