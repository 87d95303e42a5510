/**
 * The HTTP probe against real HTTP and HTTPS servers on loopback: title (entities decoded), Server
 * header, status, Shodan's favicon hash; redirects followed only on the same origin; oversized,
 * garbage and silent answers bounded; cancel prompt. MurmurHash3 checked against published values.
 */
import net from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { faviconHash, probeHttp, titleOf } from '../../src/probes/http.js';
import { murmur3 } from '../../src/util/murmur3.js';
import { greetingServer, makeSelfSignedCert, silentServer, type Listener, type SelfSignedCert } from '../scan/native/listeners.js';
import { webServer, type WebServer } from './servers.js';

const HOST = '127.0.0.1';
const ICON = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 37) % 256));

let cert: SelfSignedCert;
beforeAll(async () => {
  const made = await makeSelfSignedCert('nas.local', 'DNS:nas.local,IP:127.0.0.1');
  if (!made) throw new Error('openssl could not make a test certificate (apt-get install openssl)');
  cert = made;
});

const open: (WebServer | Listener)[] = [];
async function track<T extends WebServer | Listener>(p: Promise<T>): Promise<T> {
  const value = await p;
  open.push(value);
  return value;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const nasRoutes = {
  '/': (_req: unknown, res: import('node:http').ServerResponse) => {
    res.statusCode = 302;
    res.setHeader('Location', '/webman/index.cgi');
    res.setHeader('Server', 'nginx');
    res.end();
  },
  '/webman/index.cgi': (_req: unknown, res: import('node:http').ServerResponse) => {
    res.setHeader('Server', 'nginx');
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end('<html><head><title>\n  Synology&nbsp;DiskStation &amp; Caf&#233; &lt;NAS&gt;\n</title></head><body>hi</body></html>');
  },
  '/favicon.ico': (_req: unknown, res: import('node:http').ServerResponse) => {
    res.setHeader('Content-Type', 'image/x-icon');
    res.end(ICON);
  },
};

describe('MurmurHash3 and the favicon hash', () => {
  it('gives the published MurmurHash3 x86 32-bit values (signed, as mmh3.hash)', () => {
    expect(murmur3(Buffer.from(''))).toBe(0);
    expect(murmur3(Buffer.from('hello'))).toBe(613153351);
    expect(murmur3(Buffer.from('foo'))).toBe(-156908512);
    expect(murmur3(Buffer.from('The quick brown fox jumps over the lazy dog')) >>> 0).toBe(0x2e4ff723);
    expect(murmur3(Buffer.from(''), 1) >>> 0).toBe(0x514e28b7);
  });

  it('hashes base64 with a newline every 76 characters and at the end (Python base64.encodebytes)', () => {
    expect(faviconHash(Buffer.from('hello'))).toBe(murmur3(Buffer.from('aGVsbG8=\n')));
    const sixty = Buffer.alloc(60);
    expect(faviconHash(sixty)).toBe(murmur3(Buffer.from(`${'A'.repeat(76)}\nAAAA\n`)));
  });
});

describe('HTTP probe', () => {
  it('reads the title, Server header and favicon hash, following a same-origin redirect', async () => {
    const server = await track(webServer(HOST, nasRoutes));
    const result = await probeHttp(HOST, server.port, { timeoutMs: 3000 });
    expect(result).toEqual({
      port: server.port,
      tls: false,
      status: 200,
      title: 'Synology DiskStation & Café <NAS>',
      server: 'nginx',
      faviconHash: faviconHash(ICON),
    });
    expect(server.requests).toEqual(['/', '/webman/index.cgi', '/favicon.ico']);
  });

  it('speaks HTTPS to a self-signed server (the certificate is read, not trusted)', async () => {
    const server = await track(webServer(HOST, nasRoutes, cert));
    const result = await probeHttp(HOST, server.port, { tls: true, timeoutMs: 3000 });
    expect(result).toMatchObject({ tls: true, status: 200, title: 'Synology DiskStation & Café <NAS>', faviconHash: faviconHash(ICON) });
  });

  it('never follows a redirect to another host or port', async () => {
    const elsewhere = await track(webServer('127.0.0.2', nasRoutes));
    const server = await track(
      webServer(HOST, {
        '/': (_req, res) => {
          res.statusCode = 301;
          res.setHeader('Location', `http://127.0.0.2:${elsewhere.port}/webman/index.cgi`);
          res.setHeader('Server', 'lighttpd/1.4.59');
          res.end('<title>Moved</title>');
        },
      }),
    );
    const result = await probeHttp(HOST, server.port, { timeoutMs: 2000 });
    expect(result).toMatchObject({ status: 301, title: 'Moved', server: 'lighttpd/1.4.59', faviconHash: null });
    expect(elsewhere.requests).toEqual([]);
  });

  it('reads only the start of a huge page and hashes no favicon over the cap', async () => {
    const server = await track(
      webServer(HOST, {
        '/': (_req, res) => {
          res.write('<title>Router</title>');
          // 8 MiB more, which the probe must not wait for.
          const chunk = Buffer.alloc(64 * 1024, 0x20);
          let sent = 0;
          const more = () => {
            while (sent < 128 && res.write(chunk)) sent++;
            if (sent < 128) res.once('drain', more);
            else res.end();
          };
          more();
        },
        '/favicon.ico': (_req, res) => res.end(Buffer.alloc(1024 * 1024, 1)),
      }),
    );
    const result = await probeHttp(HOST, server.port, { timeoutMs: 3000 });
    expect(result).toMatchObject({ status: 200, title: 'Router', faviconHash: null });

    const late = await track(webServer(HOST, { '/': (_req, res) => res.end(`${' '.repeat(70 * 1024)}<title>Too late</title>`) }));
    expect(await probeHttp(HOST, late.port, { timeoutMs: 3000 })).toMatchObject({ status: 200, title: null });
  });

  it('returns null for a non-HTTP answer, silence or cancel, promptly', async () => {
    const garbage = await track(greetingServer(HOST, Buffer.from('\x00\xff garbage that is not HTTP\r\n\r\n')));
    expect(await probeHttp(HOST, garbage.port, { timeoutMs: 1000 })).toBeNull();

    const silent = await track(silentServer(HOST));
    const started = Date.now();
    expect(await probeHttp(HOST, silent.port, { timeoutMs: 300 })).toBeNull();
    expect(Date.now() - started).toBeLessThan(2000);

    const controller = new AbortController();
    const cancelStart = Date.now();
    const pending = probeHttp(HOST, silent.port, { timeoutMs: 20_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toBeNull();
    expect(Date.now() - cancelStart).toBeLessThan(2000);

    // A closed port.
    const closedPort = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, HOST, () => {
        const { port } = s.address() as net.AddressInfo;
        s.close(() => resolve(port));
      });
    });
    expect(await probeHttp(HOST, closedPort, { timeoutMs: 1000 })).toBeNull();
  });

  it('reads a title in the page charset, or none when there is none', () => {
    expect(titleOf(Buffer.from('<TITLE lang="fr">Imprimante \xe9t\xe9</TITLE>', 'latin1'), 'text/html; charset=ISO-8859-1')).toBe('Imprimante été');
    expect(titleOf(Buffer.from('<html><body>no title</body></html>'), undefined)).toBeNull();
    expect(titleOf(Buffer.from(`<title>${'x'.repeat(500)}</title>`), undefined)).toHaveLength(200);
  });
});
