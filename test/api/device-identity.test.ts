/**
 * What a device is, and that a person's word about it stands (CONTRACT §15, issue 21): a real scan
 * of a loopback address where real listeners answer (a web interface with a <title> and a Server
 * header, the same behind TLS with a certificate naming its maker, an SSH-like banner) runs the
 * recognition probes after the port scan; the device is recognised (type, vendor, confidence), its
 * identity record lists the keys, the evidence with its sources and the decisions; a name and
 * type a person set survive a rescan, and `null` hands the type back to discovery. Search finds
 * devices by what runs on them. Over HTTP against the real server, both engines, both stores.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { bannerListener, type Listener } from '../helpers/listeners.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { randomLoopback } from '../helpers/udp-responders.js';
import { caSignedCertificate } from '../probes/servers.js';

const privileged = process.getuid?.() === 0;
/** nmap needs raw sockets for its UDP scan: run as root here (as the tests are); the native engine needs nothing. */
const ENGINES = privileged ? (['native', 'nmap'] as const) : (['native'] as const);

/** A web interface: its <title> names a Synology DiskStation, its Server header nginx. */
function webInterface(host: string, tls?: { key: string; cert: string }): Promise<Listener> {
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(200, { Server: 'nginx', 'Content-Type': 'text/html' });
    res.end(req.method === 'HEAD' ? undefined : '<html><head><title>nas - Synology DiskStation</title></head><body>DSM</body></html>');
  };
  const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
  server.on('tlsClientError', () => {});
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () =>
      resolve({
        host,
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      }),
    );
  });
}

describe.each(testDatabases())('device identity ($kind)', (database) => {
  describe.each(ENGINES)('engine %s', (engine) => {
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
    const put = (id: number, json: unknown) => server.request(`/api/devices/${id}`, { method: 'PUT', key, json });
    const scan = async (ip: string) => {
      const started = await triggerScan(server, key, { subnet: `${ip}/32`, profile: 'normal' });
      const done = await waitForScan(server, key, started.scan_id);
      expect(done.status, JSON.stringify(done)).toBe('completed');
      return done;
    };

    it('recognises a device from its probes, explains it, and keeps what a person set across rescans', async () => {
      const ip = randomLoopback();
      const cert = await caSignedCertificate('/CN=nas.example/O=Synology Inc.', 'DNS:nas.example');
      const web = await webInterface(ip);
      closers.push(web);
      const secure = await webInterface(ip, cert);
      closers.push(secure);
      const ssh = await bannerListener(ip, 'SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n');
      closers.push(ssh);
      ({ server, key } = await startServerWithAdmin(database, {
        settings: {
          scanning: { engine, os_detection: false, port_range: [web.port, secure.port, ssh.port].join(','), udp_ports: '161' },
          // The UDP probes answer nothing here (no mDNS, SSDP or NetBIOS on this address): ask what answers.
          recognition: { probes: ['http', 'tls', 'ssh'] },
        },
      }));

      const first = await scan(ip);
      const [summary] = await get(`/api/devices?scan_id=${first.scan_id}`);
      expect(summary).toMatchObject({ ip_address: ip, device_type: 'nas', vendor: 'Synology', name: null, model: null });
      expect(summary.type_confidence).toBeGreaterThanOrEqual(50);
      expect(summary.type_confidence).toBeLessThan(100);

      const identity = await get(`/api/devices/${summary.id}/identity`);
      expect(Object.keys(identity).sort()).toEqual(['decisions', 'evidence', 'keys']);
      // Every key in the contract's shape; the address and the certificate's key are among them.
      for (const k of identity.keys) expect(Object.keys(k).sort()).toEqual(['first_seen', 'kind', 'last_seen', 'source', 'value']);
      expect(identity.keys).toContainEqual(expect.objectContaining({ kind: 'ip', value: ip, source: 'scan' }));
      expect(identity.keys).toContainEqual(
        expect.objectContaining({ kind: 'tls_certificate', source: 'tls', value: expect.stringMatching(/^[0-9a-f]{64}$/) }),
      );
      for (const e of identity.evidence) expect(Object.keys(e).sort()).toEqual(['confidence', 'detail', 'field', 'observed_at', 'source', 'value']);
      // The page's title (plain and behind TLS), the certificate's maker and the SSH banner all said something.
      expect(identity.evidence).toContainEqual(
        expect.objectContaining({
          field: 'device_type',
          value: 'nas',
          source: 'http_title',
          detail: expect.stringContaining('Synology DiskStation'),
        }),
      );
      expect(identity.evidence).toContainEqual(expect.objectContaining({ field: 'vendor', value: 'Synology', source: 'tls' }));
      expect(identity.evidence.some((e: any) => e.source === 'ssh')).toBe(true);
      expect(identity.decisions.map((d: any) => d.rule).sort()).toEqual(['new_device', 'recognition']);
      expect(identity.decisions.every((d: any) => d.scan_id === first.scan_id && d.explanation.length > 10)).toBe(true);

      // Search finds the device by what runs on it: a product, the type, the vendor.
      const detail = await get(`/api/devices/${summary.id}`);
      const product = detail.ports.map((p: any) => p.product).find((p: unknown) => typeof p === 'string' && p.length >= 3);
      const searches = ['synology', 'NAS', ...(product ? [product] : [])];
      for (const term of searches) {
        const found = await get(`/api/devices?q=${encodeURIComponent(term)}`);
        expect(
          found.map((d: any) => d.id),
          term,
        ).toEqual([summary.id]);
      }
      expect(await get('/api/devices?q=no-such-thing-here')).toEqual([]);
      // What a person set, kept across a rescan, does not depend on the engine: the native case
      // checks it (an nmap scan with version detection takes about 30 s here).
      if (engine === 'nmap') return;

      // A person names it and says it is a printer: source `user`, and a rescan leaves both.
      const res = await put(summary.id, { name: 'Office NAS', device_type: 'printer' });
      expect(res.status, await res.clone().text()).toBe(200);
      expect(await readJson(res)).toMatchObject({ name: 'Office NAS', label: 'Office NAS', device_type: 'printer', type_confidence: 100 });
      const userSet = (await get(`/api/devices/${summary.id}/identity`)).evidence.filter((e: any) => e.source === 'user');
      expect(userSet.map((e: any) => [e.field, e.value])).toEqual([
        ['name', 'Office NAS'],
        ['device_type', 'printer'],
      ]);

      const second = await scan(ip);
      const after = (await get(`/api/devices?scan_id=${second.scan_id}`))[0];
      expect(after).toMatchObject({ id: summary.id, name: 'Office NAS', device_type: 'printer', type_confidence: 100, vendor: 'Synology' });
      const again = await get(`/api/devices/${summary.id}/identity`);
      expect(again.evidence.filter((e: any) => e.source === 'user')).toHaveLength(2);
      // The rescan still read the evidence; it only did not apply it over the person's choice.
      expect(again.evidence).toContainEqual(expect.objectContaining({ field: 'device_type', value: 'nas', source: 'http_title' }));
      const ipKey = again.keys.find((k: any) => k.kind === 'ip');
      expect(ipKey.last_seen >= ipKey.first_seen).toBe(true);

      // `null` hands the type and the name back to discovery.
      const back = await readJson(await put(summary.id, { device_type: null, name: null }));
      expect(back).toMatchObject({ device_type: 'nas', name: null, label: null });
      // Until the next scan, the strongest single piece of evidence stands for the type's confidence.
      expect(back.type_confidence).toBeGreaterThan(0);
      expect(back.type_confidence).toBeLessThanOrEqual(summary.type_confidence);
      expect((await get(`/api/devices/${summary.id}/identity`)).evidence.some((e: any) => e.source === 'user')).toBe(false);
      const audit = await get('/api/audit-logs?action=device_updated');
      expect(audit[0].details.changes).toEqual({ label: { old: 'Office NAS', new: null }, device_type: { old: 'printer', new: 'nas' } });
    }, 180_000);

    if (engine === 'native')
      it('answers 404 for an unknown device, 400 for a bad id or type, and describes the endpoint', async () => {
        ({ server, key } = await startServerWithAdmin(database));
        expect((await server.request('/api/devices/999999/identity', { key })).status).toBe(404);
        for (const bad of ['abc', '0', '-1', '1.5']) {
          const res = await server.request(`/api/devices/${bad}/identity`, { key });
          expect(res.status, bad).toBe(400);
          expect((await readJson(res)).detail).toMatch(/device_id/);
        }
        expect((await server.request('/api/devices/1/identity')).status).toBe(401);
        const device = await server.store.devices.insert({
          identity: 'ip:127.9.9.9',
          ip_address: '127.9.9.9',
          ip_sort: 0x7f090909,
          first_seen: new Date().toISOString(),
          last_seen: new Date().toISOString(),
        });
        expect(await get(`/api/devices/${device.id}/identity`)).toEqual({ keys: [], evidence: [], decisions: [] });
        const res = await put(device.id, { device_type: 'toaster' });
        expect(res.status).toBe(400);
        expect((await readJson(res)).detail).toMatch(/device_type/);
        const doc = await get('/openapi.json');
        expect(doc.paths['/api/devices/{device_id}/identity'].get.responses).toHaveProperty('200');
      });
  });
});
