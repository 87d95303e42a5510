/**
 * TCP-side fixtures for the HTTP, TLS and SSH probe tests, on 127.0.0.0/8 only: an HTTP(S) server
 * with routes, and certificates made by the openssl CLI (self-signed, and one signed by a
 * throw-away CA), argument arrays only.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertLoopback } from './responders.js';

export interface WebServer {
  host: string;
  port: number;
  /** Paths asked, in order. */
  requests: string[];
  close(): Promise<void>;
}

type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export function webServer(host: string, routes: Record<string, Route>, tls?: { key: string; cert: string }): Promise<WebServer> {
  assertLoopback(host);
  const requests: string[] = [];
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    requests.push(req.url ?? '');
    const route = routes[req.url ?? ''];
    if (route) return route(req, res);
    res.statusCode = 404;
    res.end('not found');
  };
  const server = tls ? https.createServer({ key: tls.key, cert: tls.cert }, handler) : http.createServer(handler);
  server.on('tlsClientError', () => {});
  server.on('clientError', (_err, socket) => socket.destroy());
  return new Promise((resolve) =>
    server.listen(0, host, () =>
      resolve({
        host,
        port: (server.address() as AddressInfo).port,
        requests,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      }),
    ),
  );
}

function openssl(args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile('openssl', args, { cwd, timeout: 20_000 }, (err, _out, stderr) =>
      err ? reject(new Error(`openssl ${args[0]}: ${stderr}`)) : resolve(),
    ),
  );
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export interface Certificate {
  key: string;
  cert: string;
}

/** A leaf certificate for `subject` with `altNames`, signed by a fresh CA (`/CN=Netwarden Test CA`). */
export async function caSignedCertificate(subject: string, altNames: string): Promise<Certificate> {
  const dir = await mkdtemp(join(tmpdir(), 'netwarden-probes-'));
  try {
    await openssl(['req', '-x509', ...EC, '-days', '2', '-subj', '/CN=Netwarden Test CA', '-keyout', 'ca.key', '-out', 'ca.pem'], dir);
    await openssl(['req', '-new', ...EC, '-subj', subject, '-keyout', 'leaf.key', '-out', 'leaf.csr'], dir);
    await writeFile(join(dir, 'ext.cnf'), `subjectAltName=${altNames}\n`);
    await openssl(
      [
        'x509',
        '-req',
        '-in',
        'leaf.csr',
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-days',
        '2',
        '-extfile',
        'ext.cnf',
        '-out',
        'leaf.pem',
      ],
      dir,
    );
    return { key: await readFile(join(dir, 'leaf.key'), 'utf8'), cert: await readFile(join(dir, 'leaf.pem'), 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
