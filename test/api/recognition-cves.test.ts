/**
 * Versions reach CVE matching (issue 21): a real native-engine scan of a loopback address where a
 * Postfix greets with its version `(3.5.23)`, a Redis answers `INFO server` with `redis_version`,
 * and an SSDP responder on UDP 1900 names MiniUPnPd 2.1 in its SERVER header. The first two give
 * their ports a version (core/banners.ts), so the shipped dataset's CVEs match on those ports; the
 * third is seen only by recognition, whose CPE (`cpe:/a:miniupnp_project:miniupnpd:2.1`) is
 * matched on the device itself, `likely`, with the finding saying where it came from. Over HTTP
 * against the real server, both stores.
 */
import dgram from 'node:dgram';
import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { bannerListener, type Listener } from '../helpers/listeners.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { randomLoopback } from '../helpers/udp-responders.js';

/** Binding UDP 1900 (the port the SSDP probe asks) needs root, as the tests run. */
const privileged = process.getuid?.() === 0;

/** A Redis as the native engine meets it: an unknown-command error for its HTTP request, then the `INFO server` bulk string. */
function fakeRedis(host: string, version: string): Promise<Listener> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    let said = false;
    socket.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      if (/^INFO\b/i.test(text)) {
        const body = `# Server\r\nredis_version:${version}\r\nredis_mode:standalone\r\nos:Linux 6.1.0 x86_64\r\n`;
        socket.write(`$${Buffer.byteLength(body)}\r\n${body}\r\n`);
      } else if (!said) {
        said = true;
        socket.write("-ERR unknown command 'HEAD', with args beginning with: '/' 'HTTP/1.0' \r\n");
      }
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () =>
      resolve({
        host,
        port: (server.address() as { port: number }).port,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      }),
    );
  });
}

/** An SSDP responder on `host`:1900 answering a unicast M-SEARCH with `server` as its SERVER header. */
function ssdpOn1900(host: string, server: string): Promise<Listener> {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (msg, from) => {
    if (!msg.toString('latin1').startsWith('M-SEARCH * HTTP/1.1')) return;
    const answer = [
      'HTTP/1.1 200 OK',
      'CACHE-CONTROL: max-age=1800',
      'EXT:',
      `SERVER: ${server}`,
      'ST: upnp:rootdevice',
      'USN: uuid:4d696e69-5550-6e50-0000-0123456789ab::upnp:rootdevice',
    ];
    socket.send(Buffer.from(`${answer.join('\r\n')}\r\n\r\n`, 'latin1'), from.port, from.address);
  });
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(1900, host, () => resolve({ host, port: 1900, close: () => new Promise<void>((done) => socket.close(() => done())) }));
  });
}

describe.skipIf(!privileged).each(testDatabases())('versions and recognised CPEs reach CVE matching ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  const closers: Listener[] = [];

  afterEach(async () => {
    await Promise.all(closers.splice(0).map((c) => c.close().catch(() => undefined)));
    await server?.close();
  });

  const get = async (path: string) => {
    const res = await server.request(path, { key });
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    return readJson(res);
  };

  it('matches Postfix and Redis by the versions their banners say, and MiniUPnPd by recognition on the device itself', async () => {
    const ip = randomLoopback();
    const postfix = await bannerListener(ip, '220 mail.example.com ESMTP Postfix (3.5.23)\r\n');
    closers.push(postfix);
    const redis = await fakeRedis(ip, '6.2.5');
    closers.push(redis);
    closers.push(await ssdpOn1900(ip, 'OpenWrt/23.05 UPnP/1.1 MiniUPnPd/2.1'));
    ({ server, key } = await startServerWithAdmin(database, {
      settings: {
        scanning: { engine: 'native', os_detection: false, port_range: `${postfix.port},${redis.port}` },
        // Only what answers here (the others would wait out their silence).
        recognition: { probes: ['ssdp'] },
      },
    }));

    const started = await triggerScan(server, key, { subnet: `${ip}/32`, profile: 'normal' });
    const done = await waitForScan(server, key, started.scan_id);
    expect(done.status, JSON.stringify(done)).toBe('completed');
    const [summary] = await get(`/api/devices?scan_id=${done.scan_id}`);
    const detail = await get(`/api/devices/${summary.id}`);

    // The banners' versions are on the ports, and the dataset's CVEs for them matched there.
    expect(detail.ports).toContainEqual(expect.objectContaining({ port: postfix.port, product: 'Postfix smtpd', version: '3.5.23' }));
    expect(detail.ports).toContainEqual(expect.objectContaining({ port: redis.port, product: 'Redis key-value store', version: '6.2.5' }));
    const cve = (id: string) => detail.cves.find((c: any) => c.id === id);
    expect(cve('CVE-2023-51764')).toMatchObject({ port: postfix.port, matched_version: '3.5.23', confidence: 'confirmed' });
    expect(cve('CVE-2021-32675')).toMatchObject({ port: redis.port, matched_version: '6.2.5', confidence: 'confirmed' });
    // Versions outside the affected ranges match nothing.
    expect(cve('CVE-2011-0411')).toBeUndefined();
    expect(cve('CVE-2021-32761')).toBeUndefined();

    // MiniUPnPd answered only the SSDP probe: recognition's CPE carries its version to the matcher.
    const identity = await get(`/api/devices/${summary.id}/identity`);
    expect(identity.evidence).toContainEqual(
      expect.objectContaining({
        field: 'cpe',
        value: 'cpe:/a:miniupnp_project:miniupnpd:2.1',
        source: 'ssdp',
        detail: expect.stringContaining('MiniUPnPd/2.1'),
      }),
    );
    const upnp = cve('CVE-2019-12107');
    expect(upnp).toMatchObject({ port: null, matched_product: 'MiniUPnP', matched_version: '2.1', confidence: 'likely' });
    expect(cve('CVE-2013-0229')).toBeUndefined();
    const finding = detail.risk_details.findings.find((f: any) => f.cve_ids.includes('CVE-2019-12107'));
    expect(finding).toMatchObject({ port: null, kind: 'cve', finding_key: 'cve:CVE-2019-12107:-' });
    expect(finding.description).toContain('come from recognition');
    expect(finding.description).toContain('cpe:/a:miniupnp_project:miniupnpd:2.1');
    expect(finding.description).toMatch(/UPnP.*MiniUPnPd\/2\.1/);
  }, 120_000);
});
