/**
 * Loopback listeners for the native engine tests. Network-safety rule: everything here binds to
 * and is scanned on 127.0.0.0/8 only, on ports the OS chooses.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Listener {
  host: string;
  port: number;
  close(): Promise<void>;
}

function assertLoopback(host: string): void {
  if (!/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) throw new Error(`tests listen on 127.0.0.0/8 only, not ${host}`);
}

async function listen(server: net.Server, host: string): Promise<Listener> {
  assertLoopback(host);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const sockets = new Set<net.Socket>();
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return {
    host,
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A TCP server that greets every client with `greeting` (a string or raw bytes) and then idles. */
export function greetingServer(host: string, greeting: string | Buffer): Promise<Listener> {
  const server = net.createServer((socket) => {
    socket.on('error', () => {});
    socket.write(greeting);
    socket.setTimeout(10_000, () => socket.destroy());
  });
  return listen(server, host);
}

/** A TCP server that accepts and never says anything. */
export function silentServer(host: string): Promise<Listener> {
  const server = net.createServer((socket) => {
    socket.on('error', () => {});
    socket.on('data', () => {});
    socket.setTimeout(30_000, () => socket.destroy());
  });
  return listen(server, host);
}

/** An HTTP server answering every request with the given Server header. */
export function httpServer(host: string, serverHeader: string): Promise<Listener> {
  const server = http.createServer((req, res) => {
    res.setHeader('Server', serverHeader);
    res.setHeader('Content-Type', 'text/plain');
    res.end(req.method === 'HEAD' ? undefined : 'hello\n');
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  return listen(server, host);
}

export interface SelfSignedCert {
  key: string;
  cert: string;
}

/** A self-signed certificate made with the openssl CLI; null when openssl is not installed. */
export async function makeSelfSignedCert(commonName: string, altNames: string): Promise<SelfSignedCert | null> {
  const dir = await mkdtemp(join(tmpdir(), 'netwarden-native-'));
  try {
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    const ok = await new Promise<boolean>((resolve) => {
      execFile(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-days',
          '2',
          '-subj',
          `/CN=${commonName}`,
          '-addext',
          `subjectAltName=${altNames}`,
          '-keyout',
          keyFile,
          '-out',
          certFile,
        ],
        { timeout: 20_000 },
        (err) => resolve(!err),
      );
    });
    if (!ok) return null;
    return { key: await readFile(keyFile, 'utf8'), cert: await readFile(certFile, 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** An HTTPS server with the given certificate and Server header. */
export function httpsServer(host: string, cert: SelfSignedCert, serverHeader: string): Promise<Listener> {
  const server = https.createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
    res.setHeader('Server', serverHeader);
    res.end(req.method === 'HEAD' ? undefined : 'hello\n');
  });
  server.on('tlsClientError', () => {});
  server.on('clientError', (_err, socket) => socket.destroy());
  return listen(server, host);
}

/** A MySQL-like server sending the initial handshake packet for `version`. */
export function mysqlServer(host: string, version: string): Promise<Listener> {
  const body = Buffer.concat([
    Buffer.from([0x0a]),
    Buffer.from(version, 'latin1'),
    Buffer.from([0]),
    Buffer.from([8, 0, 0, 0]),
    Buffer.alloc(8, 0x61),
    Buffer.from([0, 0xff, 0xf7, 0x21, 0x02, 0x00]),
    Buffer.alloc(13, 0),
    Buffer.alloc(12, 0x62),
    Buffer.from([0]),
  ]);
  const packet = Buffer.concat([Buffer.from([body.length & 0xff, (body.length >> 8) & 0xff, 0, 0]), body]);
  return greetingServer(host, packet);
}

/**
 * A port that never answers: a listener (python3, backlog 0) that never accepts, with its accept
 * queue filled by one connection, so the kernel drops further SYNs: the loopback version of a
 * firewall DROP. Null when python3 is missing.
 */
export async function unansweringPort(host: string): Promise<(Listener & { child: ChildProcess }) | null> {
  assertLoopback(host);
  const script = [
    'import socket, sys',
    's = socket.socket()',
    `s.bind((${JSON.stringify(host)}, 0))`,
    's.listen(0)',
    'print(s.getsockname()[1], flush=True)',
    'sys.stdin.read()',
  ].join('\n');
  let child: ChildProcess;
  try {
    child = spawn('python3', ['-c', script], { stdio: ['pipe', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
  const port = await new Promise<number | null>((resolve) => {
    child.once('error', () => resolve(null));
    child.stdout?.once('data', (d: Buffer) => resolve(Number(String(d).trim()) || null));
    setTimeout(() => resolve(null), 10_000);
  });
  if (!port) {
    child.kill();
    return null;
  }
  const filler = net.connect({ host, port });
  filler.on('error', () => {});
  await new Promise<void>((resolve) => {
    filler.once('connect', () => resolve());
    setTimeout(resolve, 2000);
  });
  return {
    host,
    port,
    child,
    close: async () => {
      filler.destroy();
      child.stdin?.end();
      child.kill();
    },
  };
}

/** TCP ports in LISTEN state that accept connections to `host` (bound to it or to a wildcard). */
export async function listeningPorts(host: string): Promise<Set<number>> {
  const ports = new Set<number>();
  const hexHost = host
    .split('.')
    .map((o) => Number(o).toString(16).padStart(2, '0').toUpperCase())
    .reverse()
    .join('');
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = await readFile(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 4 || f[3] !== '0A') continue; // 0A = LISTEN
      const [addr, portHex] = f[1].split(':');
      const wildcard = /^0+$/.test(addr);
      const v4mapped = addr.length === 32 && addr.endsWith(hexHost) && addr.startsWith('0000000000000000FFFF0000');
      if (wildcard || addr === hexHost || v4mapped) ports.add(Number.parseInt(portHex, 16));
    }
  }
  return ports;
}
