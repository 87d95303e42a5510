/**
 * The scored identity resolver over HTTP (issue 21 §4, CONTRACT §15), real scans of loopback
 * addresses where HTTPS listeners answer with one self-signed certificate (a key made on the
 * device: strong), native engine, both stores:
 *  - two addresses of one scan with that key are one device with two addresses (a NAS with two
 *    NICs), its decision explained in GET /api/devices/{id}/identity; a quiet rescan records no change;
 *  - the key answering at an address another scan reaches is that device (no device_added), and a
 *    person's undo of that fold stands: the next scan does not fold them again.
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { makeSelfSignedCert } from '../scan/native/listeners.js';

interface Closer {
  close(): Promise<void>;
}

function httpsOn(host: string, port: number, tls: { key: string; cert: string }): Promise<{ port: number } & Closer> {
  const server = https.createServer(tls, (_req, res) => res.end('<html><head><title>storage</title></head></html>'));
  server.on('tlsClientError', () => {});
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () =>
      resolve({
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

/** A /30 of loopback of its own: .1 and .2 are its hosts; .5 (outside it) a third address. */
function block(): { a: string; b: string; c: string; subnet: string } {
  const byte = (min: number) => min + Math.floor(Math.random() * (250 - min));
  const prefix = `127.${byte(10)}.${byte(0)}`;
  const base = 8 * (1 + Math.floor(Math.random() * 29));
  return { a: `${prefix}.${base + 1}`, b: `${prefix}.${base + 2}`, c: `${prefix}.${base + 5}`, subnet: `${prefix}.${base}/30` };
}

describe.each(testDatabases())('identity resolver over HTTP ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  const closers: Closer[] = [];
  const net = block();

  beforeAll(async () => {
    const cert = await makeSelfSignedCert('nas-alice', 'DNS:nas-alice');
    if (!cert) throw new Error('openssl could not make a test certificate (apt-get install openssl)');
    const first = await httpsOn(net.a, 0, cert);
    closers.push(first);
    closers.push(await httpsOn(net.b, first.port, cert), await httpsOn(net.c, first.port, cert));
    ({ server, key } = await startServerWithAdmin(database, {
      settings: {
        scanning: { engine: 'native', os_detection: false, port_range: String(first.port), udp_ports: '' },
        recognition: { probes: ['tls'] },
      },
    }));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(closers.map((c) => c.close().catch(() => undefined)));
    await server?.close();
  });

  const get = async (path: string) => {
    const res = await server.request(path, { key });
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    return readJson(res);
  };
  const scan = async (subnet: string) => {
    const started = await triggerScan(server, key, { subnet, profile: 'normal' });
    const done = await waitForScan(server, key, started.scan_id);
    expect(done.status, JSON.stringify(done)).toBe('completed');
    return done;
  };

  it('one device for two addresses with one strong key; a quiet rescan records nothing; another address is the same device; an undo stands', async () => {
    const first = await scan(net.subnet);
    const devices = await get(`/api/devices?scan_id=${first.scan_id}`);
    expect(devices.map((d: any) => d.ip_address)).toEqual([net.a]);
    const nas = devices[0];
    const detail = await get(`/api/devices/${nas.id}`);
    expect(detail.ip_history.map((h: any) => h.ip_address).sort()).toEqual([net.a, net.b].sort());
    const identity = await get(`/api/devices/${nas.id}/identity`);
    const decision = identity.decisions.find((d: any) => d.rule === 'second_address');
    expect(decision, JSON.stringify(identity.decisions)).toMatchObject({ scan_id: first.scan_id });
    expect(decision.explanation).toContain(net.b);
    expect(decision.explanation).toMatch(/TLS certificate key/);
    expect(identity.keys.filter((k: any) => k.kind === 'tls_certificate')).toHaveLength(1);

    const quiet = await scan(net.subnet);
    expect(await get(`/api/changes?scan_id=${quiet.scan_id}`)).toEqual([]);
    expect((await get(`/api/devices?scan_id=${quiet.scan_id}`)).map((d: any) => d.id)).toEqual([nas.id]);

    // The same key at an address of another scan: that device, not a new one.
    const moved = await scan(`${net.c}/32`);
    const there = await get(`/api/devices?scan_id=${moved.scan_id}`);
    expect(there.map((d: any) => [d.id, d.ip_address])).toEqual([[nas.id, net.c]]);
    const changes = await get(`/api/changes?scan_id=${moved.scan_id}`);
    expect(changes.filter((c: any) => c.change_type === 'device_added' || c.change_type === 'device_removed')).toEqual([]);
    const decisions = (await get(`/api/devices/${nas.id}/identity`)).decisions;
    expect(decisions[0]).toMatchObject({ rule: 'same_device', scan_id: moved.scan_id, explanation: expect.stringContaining(net.c) });

    // A person says it is not: the undo gives the address its own device again, and the next scan leaves it so.
    const merges = await server.store.db.selectFrom('device_merges').select(['id', 'created_by']).orderBy('id', 'desc').execute();
    expect(merges[0].created_by).toBe('resolver');
    const undo = await server.request(`/api/merges/${merges[0].id}/undo`, { method: 'POST', key });
    expect(undo.status, await undo.clone().text()).toBe(200);
    const split = await get('/api/devices');
    expect(split.map((d: any) => d.ip_address).sort()).toEqual([net.a, net.c].sort());
    const again = await scan(`${net.c}/32`);
    const after = await get(`/api/devices?scan_id=${again.scan_id}`);
    expect(after.map((d: any) => d.ip_address)).toEqual([net.c]);
    expect(after[0].id).not.toBe(nas.id);
    expect((await get('/api/devices')).length).toBe(2);
  }, 120_000);
});
