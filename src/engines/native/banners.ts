/**
 * Banner grabbing for the native engine: collects what an open port says (its greeting, its
 * answer to `HEAD / HTTP/1.0`, its TLS certificate) for src/core/banners.ts to identify.
 * Only passive reads, one HTTP HEAD request and, to a Redis that answered it, the read-only
 * `INFO server` (for its version) are ever sent: nothing that changes a service.
 */
import net from 'node:net';
import tls from 'node:tls';
import { REDIS_INFO_REQUEST, isRedisAnswer, looksLikeTlsOnly, type ServiceEvidence, type TlsEvidence } from '../../core/banners.js';
import { GREETING_PORTS, HTTP_PORTS, TLS_PORTS } from '../../core/ports.js';
import type { SocketRegistry } from './connect-pool.js';

export interface BannerTimeouts {
  /** TCP connect. */
  connectMs: number;
  /** TLS handshake. */
  handshakeMs: number;
  /** Waiting for a greeting on ports whose protocol greets first (SSH, FTP, SMTP, POP3, IMAP, MySQL…). */
  greetingMs: number;
  /** Waiting for a greeting on other ports before sending the HTTP request. */
  silentMs: number;
  /** Waiting for the answer to the HTTP request. */
  responseMs: number;
  /** Once data has started, the quiet time after which a reply is taken as complete. */
  idleMs: number;
}

export const DEFAULT_BANNER_TIMEOUTS: BannerTimeouts = {
  connectMs: 2000,
  handshakeMs: 3000,
  greetingMs: 2500,
  silentMs: 800,
  responseMs: 2500,
  idleMs: 300,
};

const HEAD_REQUEST = Buffer.from('HEAD / HTTP/1.0\r\n\r\n', 'latin1');
const MAX_BYTES = 16 * 1024;

/** A socket's incoming bytes, with a way to wait for enough of them. */
class Conversation {
  private chunks: Buffer[] = [];
  private size = 0;
  closed = false;
  private wake: (() => void) | null = null;

  constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      if (this.size < MAX_BYTES) {
        this.chunks.push(chunk);
        this.size += chunk.length;
      }
      this.wake?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
    socket.on('error', () => {
      /* reported through close */
    });
  }

  data(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  /** Bytes received since `from`, waiting up to `ms` for `complete` or `idleMs` of quiet after data. */
  async read(from: number, ms: number, idleMs: number, complete: (data: Buffer) => boolean): Promise<Buffer> {
    const deadline = Date.now() + ms;
    let lastSize = -1;
    let lastChange = Date.now();
    for (;;) {
      const data = this.data().subarray(from);
      if (data.length !== lastSize) {
        lastSize = data.length;
        lastChange = Date.now();
      }
      const now = Date.now();
      if (this.closed || this.size >= MAX_BYTES || (data.length > 0 && complete(data))) return data;
      if (now >= deadline || (data.length > 0 && now - lastChange >= idleMs)) return data;
      const wait = Math.max(1, Math.min(deadline - now, data.length > 0 ? idleMs - (now - lastChange) : deadline - now));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, wait);
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.wake = done;
      });
      this.wake = null;
    }
  }

  write(bytes: Buffer): void {
    if (!this.closed && !this.socket.destroyed) this.socket.write(bytes);
  }

  get received(): number {
    return this.size;
  }
}

/** A greeting is complete at the end of a line that is not a `220-` continuation, or a whole MySQL packet. */
export function greetingComplete(data: Buffer): boolean {
  if (data.length >= 5 && data[3] === 0 && (data[4] === 0x0a || data[4] === 0xff)) {
    const length = data[0] | (data[1] << 8) | (data[2] << 16);
    return data.length >= length + 4;
  }
  if (data[data.length - 1] !== 0x0a) return false;
  const text = data.toString('latin1');
  const lines = text.split(/\r?\n/).filter((l) => l !== '');
  const last = lines[lines.length - 1] ?? '';
  return !/^\d{3}-/.test(last);
}

/** An HTTP head is complete at its blank line. */
export function httpHeadComplete(data: Buffer): boolean {
  const text = data.toString('latin1');
  if (!text.startsWith('HTTP/')) return greetingComplete(data);
  return text.includes('\r\n\r\n') || text.includes('\n\n');
}

/** A RESP reply is complete: a bulk string (`$<n>\r\n` and n bytes) in full, or a one-line reply. */
export function respReplyComplete(data: Buffer): boolean {
  const text = data.toString('latin1');
  const bulk = text.match(/^\$(-?\d+)\r\n/);
  if (bulk) return Number(bulk[1]) < 0 || data.length >= bulk[0].length + Number(bulk[1]) + 2;
  return text.includes('\r\n');
}

function track(socket: net.Socket, registry: SocketRegistry): () => void {
  registry.add(socket);
  return () => {
    registry.delete(socket);
    socket.destroy();
  };
}

/**
 * Waits for `socket` to reach `readyEvent` within `timeoutMs`: resolves it (taken out of the
 * registry, its listeners removed) or null after an error, a close, a timeout, or a failed
 * `accept` check. The registry holds it meanwhile, so a cancel destroys it.
 */
function settle<S extends net.Socket>(
  socket: S,
  readyEvent: 'connect' | 'secureConnect',
  timeoutMs: number,
  registry: SocketRegistry,
  accept: (socket: S) => boolean = () => true,
): Promise<S | null> {
  return new Promise((resolve) => {
    registry.add(socket);
    const fail = (): void => {
      clearTimeout(timer);
      registry.delete(socket);
      socket.destroy();
      resolve(null);
    };
    const timer = setTimeout(fail, timeoutMs);
    socket.once('error', fail);
    socket.once('close', fail);
    socket.once(readyEvent, () => {
      clearTimeout(timer);
      socket.removeListener('error', fail);
      socket.removeListener('close', fail);
      if (!accept(socket)) {
        fail();
        return;
      }
      registry.delete(socket);
      resolve(socket);
    });
  });
}

function connectPlain(host: string, port: number, timeoutMs: number, registry: SocketRegistry): Promise<net.Socket | null> {
  if (registry.cancelled) return Promise.resolve(null);
  // A socket connected to itself (TCP simultaneous open on loopback) is not a service.
  const notSelf = (socket: net.Socket) => !(socket.localPort === socket.remotePort && socket.localAddress === socket.remoteAddress);
  return settle(net.connect({ host, port }), 'connect', timeoutMs, registry, notSelf);
}

function connectTls(host: string, port: number, timeouts: BannerTimeouts, registry: SocketRegistry): Promise<tls.TLSSocket | null> {
  if (registry.cancelled) return Promise.resolve(null);
  // No servername: the target is an address, and SNI would only be a guess. Certificates are
  // read, never trusted, so verification is off; old protocol versions are allowed so that
  // ageing devices still show their certificate.
  let socket: tls.TLSSocket;
  try {
    socket = tls.connect({ host, port, rejectUnauthorized: false, minVersion: 'TLSv1', ciphers: 'DEFAULT:@SECLEVEL=0' });
  } catch {
    // Options this OpenSSL build refuses: no TLS probe, as if the port did not speak TLS.
    return Promise.resolve(null);
  }
  return settle(socket, 'secureConnect', timeouts.connectMs + timeouts.handshakeMs, registry);
}

function tlsEvidenceOf(socket: tls.TLSSocket): TlsEvidence {
  const cert = socket.getPeerCertificate();
  const cn = cert?.subject?.CN as string | string[] | undefined;
  return {
    subjectCN: Array.isArray(cn) ? cn.join(', ') : (cn ?? null),
    altNames: cert?.subjectaltname ?? null,
    protocol: socket.getProtocol() ?? null,
  };
}

/** Greeting first (or straight to HTTP on web ports), then HEAD if the server stayed silent. */
async function converse(
  socket: net.Socket,
  port: number,
  timeouts: BannerTimeouts,
  registry: SocketRegistry,
): Promise<{ greeting: Buffer | null; response: Buffer | null; info: Buffer | null; peerClosed: boolean }> {
  const untrack = track(socket, registry);
  const conv = new Conversation(socket);
  try {
    let greeting: Buffer | null = null;
    let response: Buffer | null = null;
    if (!HTTP_PORTS.has(port)) {
      const waitMs = GREETING_PORTS.has(port) ? timeouts.greetingMs : timeouts.silentMs;
      const got = await conv.read(0, waitMs, timeouts.idleMs, greetingComplete);
      if (got.length > 0) greeting = Buffer.from(got);
    }
    if (greeting === null && !conv.closed && !registry.cancelled) {
      const from = conv.received;
      conv.write(HEAD_REQUEST);
      const got = await conv.read(from, timeouts.responseMs, timeouts.idleMs, httpHeadComplete);
      if (got.length > 0) response = Buffer.from(got);
    }
    let info: Buffer | null = null;
    if (isRedisAnswer(response) && !conv.closed && !registry.cancelled) {
      const from = conv.received;
      conv.write(Buffer.from(REDIS_INFO_REQUEST, 'latin1'));
      const got = await conv.read(from, timeouts.responseMs, timeouts.idleMs, respReplyComplete);
      if (got.length > 0) info = Buffer.from(got);
    }
    return { greeting, response, info, peerClosed: conv.closed };
  } finally {
    untrack();
  }
}

/**
 * Everything a port says about itself. Implicit-TLS ports are tried with TLS first; a plain port
 * that answers like a TLS endpoint (an alert, nginx's "plain HTTP request was sent to HTTPS port",
 * or silence then a hang-up) is tried again with TLS.
 */
export async function collectEvidence(
  host: string,
  port: number,
  registry: SocketRegistry,
  timeouts: BannerTimeouts = DEFAULT_BANNER_TIMEOUTS,
): Promise<ServiceEvidence> {
  const empty: ServiceEvidence = { port, tls: null, greeting: null, response: null };
  const viaTls = async (): Promise<ServiceEvidence | null> => {
    const socket = await connectTls(host, port, timeouts, registry);
    if (!socket) return null;
    const tlsInfo = tlsEvidenceOf(socket);
    const { greeting, response, info } = await converse(socket, port, timeouts, registry);
    return { port, tls: tlsInfo, greeting, response, info };
  };

  const tlsFirst = TLS_PORTS.has(port);
  if (tlsFirst) {
    const evidence = await viaTls();
    if (evidence || registry.cancelled) return evidence ?? empty;
  }
  const socket = await connectPlain(host, port, timeouts.connectMs, registry);
  if (!socket) return empty;
  const { greeting, response, info, peerClosed } = await converse(socket, port, timeouts, registry);
  const plain: ServiceEvidence = { port, tls: null, greeting, response, info };
  if (!tlsFirst && !registry.cancelled && greeting === null && (looksLikeTlsOnly(response) || (response === null && peerClosed))) {
    const evidence = await viaTls();
    if (evidence) return evidence;
  }
  return plain;
}
