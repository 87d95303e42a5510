import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';

export interface Listener {
  host: string;
  port: number;
  close(): Promise<void>;
}

/** Starts `server` on `host` (a free port unless given) and gives it as a Listener whose close() also drops open connections. */
export function listen(server: Server | HttpServer, host: string, port = 0): Promise<Listener> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      if (!address || typeof address === 'string') return reject(new Error('no TCP address'));
      resolve({
        host,
        port: address.port,
        close: () =>
          new Promise<void>((done) => {
            if ('closeAllConnections' in server) server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** A TCP server that greets every connection with `banner` (an SSH or FTP server, say) and keeps it briefly open. */
export function bannerListener(host: string, banner: string, port = 0): Promise<Listener> {
  const server = createServer((socket) => {
    socket.on('error', () => {});
    socket.write(banner);
    socket.setTimeout(5000, () => socket.destroy());
    socket.on('data', () => {});
  });
  return listen(server, host, port);
}

/** An HTTP server answering every request with 200 and the given `Server` header. */
export function httpListener(host: string, serverHeader: string, port = 0): Promise<Listener> {
  const server = createHttpServer((req, res) => {
    res.writeHead(200, { Server: serverHeader, 'Content-Type': 'text/html' });
    res.end(req.method === 'HEAD' ? undefined : '<html><head><title>Test device</title></head><body>ok</body></html>');
  });
  return listen(server, host, port);
}

/**
 * A TCP server that accepts every connection and never says a word (a hung SMTP server or MQTT
 * broker, for timeouts); close() drops the connections it holds.
 */
export async function silentListener(host: string): Promise<Listener> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  const listener = await listen(server, host);
  return {
    ...listener,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return listener.close();
    },
  };
}

/** A port on `host` that nothing listens on (bound, then released). */
export async function closedPort(host: string): Promise<number> {
  const l = await listen(createServer(), host);
  await l.close();
  return l.port;
}
