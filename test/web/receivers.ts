/**
 * Loopback peers for the browser tests: a listener that never answers (it keeps a scan's service
 * detection waiting, so the scan runs until cancelled) and a webhook receiver that records what
 * it gets. Both bind only the loopback address they are given.
 */
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import type { Listener } from '../helpers/listeners.js';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  port: number;
  received: Received[];
  close: () => Promise<void>;
}

/** An HTTP receiver on `host` (a loopback address) that records what it gets; `/missing` answers 404. */
export async function webhookReceiver(host: string): Promise<Receiver> {
  const received: Received[] = [];
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/missing') {
        res.writeHead(404).end('no such hook');
        return;
      }
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    received,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** A TCP listener that accepts connections and never says a word: service detection waits on it. */
export function silentListener(host: string): Promise<Listener> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      resolve({
        host,
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
