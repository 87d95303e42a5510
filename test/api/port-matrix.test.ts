/**
 * The port matrix (CONTRACT §16, §18, issue 22 §3): devices × open ports, counts, offline devices
 * with their last known ports, archived devices left out, forbidden (zone policy) and rare ports,
 * subnet and zone filters, 400s. Real nmap reports imported over HTTP into a real server, both stores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRarePort } from '../../src/core/port-matrix.js';
import { FIRST, SECOND, nmapReport } from '../helpers/compare-reports.js';
import { testDatabases } from '../helpers/databases.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

/** A second network: .1 has SSH and telnet, .2 has nothing open. */
const OTHER = nmapReport('10.66.1.0/28', '1-1000', [
  {
    ip: '10.66.1.1',
    mac: '00:16:3E:33:00:01',
    ports: [
      { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.6' },
      { port: 23, service: 'telnet' },
    ],
  },
  { ip: '10.66.1.2', mac: '00:16:3E:33:00:02', ports: [] },
]);

describe('rare ports', () => {
  it('are open on at most 2 devices or under 1 %, never on every device', () => {
    expect(isRarePort(1, 3)).toBe(true);
    expect(isRarePort(2, 10)).toBe(true);
    expect(isRarePort(3, 10)).toBe(false);
    expect(isRarePort(99, 10_000)).toBe(true);
    expect(isRarePort(100, 10_000)).toBe(false);
    expect(isRarePort(2, 2)).toBe(false);
    expect(isRarePort(1, 1)).toBe(false);
  });
});

describe.each(testDatabases())('port matrix ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let id: (ip: string) => number;

  beforeAll(async () => {
    ({ server, key } = await startServerWithAdmin(database));
    for (const xml of [FIRST, SECOND, OTHER]) {
      const res = await server.request('/api/scans/import', { method: 'POST', body: xml, headers: { 'Content-Type': 'application/xml' }, key });
      expect(res.status, await res.clone().text()).toBe(201);
    }
    const devices: { id: number; ip_address: string }[] = await readJson(await server.request('/api/devices?limit=1000', { key }));
    id = (ip) => devices.find((d) => d.ip_address === ip)!.id;
  });
  afterAll(() => server?.close());

  const get = async (path: string, status = 200) => {
    const res = await server.request(path, { key });
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(status);
    return readJson(res);
  };
  const send = async (method: string, path: string, json: unknown) => {
    const res = await server.request(path, { method, key, json });
    expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBe(200);
  };
  const portsOf = (m: any) => m.ports.map((p: any) => [`${p.port}/${p.protocol}`, p.devices]);

  it('counts each open port over the devices, offline ones with their last known ports, and leaves out devices with none', async () => {
    const res = await server.request('/api/visualization/port-matrix', { key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const m = await readJson(res);
    // 22: .2, .3, .4 (offline since the second scan), .9 (moved from .5), 10.66.1.1; 80: .7, .9; 3306: .2 (not examined by the second scan); 23: 10.66.1.1.
    expect(portsOf(m)).toEqual([
      ['22/tcp', 5],
      ['23/tcp', 1],
      ['80/tcp', 2],
      ['3306/tcp', 1],
    ]);
    expect(m.total_devices).toBe(6);
    expect(m.devices.map((d: any) => d.ip_address)).toEqual(['10.66.0.2', '10.66.0.3', '10.66.0.4', '10.66.0.7', '10.66.0.9', '10.66.1.1']);
    const offline = m.devices.find((d: any) => d.ip_address === '10.66.0.4');
    expect(offline.online).toBe(false);
    expect(offline.device_id).toBe(id('10.66.0.4'));
    expect(offline.ports).toEqual([{ port: 22, protocol: 'tcp', service: 'ssh', forbidden: false }]);
    expect(m.devices.find((d: any) => d.ip_address === '10.66.0.2').ports.map((p: any) => p.port)).toEqual([22, 3306]);
    expect(m.ports.find((p: any) => p.port === 22)).toMatchObject({ service: 'ssh', rare: false, forbidden: false, forbidden_devices: 0 });
    expect(m.ports.find((p: any) => p.port === 3306)).toMatchObject({ service: 'mysql', rare: true });
    expect(m.ports.find((p: any) => p.port === 80).rare).toBe(true);
    expect(m.rare_rule).toMatch(/at most 2 devices/);
    expect(m.subnet).toBeNull();
    expect(m.zone).toBeNull();
  });

  it('filters by subnet and zone, and marks ports a zone policy forbids', async () => {
    const sub = await get('/api/visualization/port-matrix?subnet=10.66.1.7/28');
    expect(sub.subnet).toBe('10.66.1.0/28');
    expect(sub.devices.map((d: any) => d.ip_address)).toEqual(['10.66.1.1']);
    expect(portsOf(sub)).toEqual([
      ['22/tcp', 1],
      ['23/tcp', 1],
    ]);
    // One device: a port on every device of the matrix is never rare.
    expect(sub.ports.every((p: any) => !p.rare)).toBe(true);

    await send('PUT', `/api/devices/${id('10.66.1.1')}`, { zone: 'IoT' });
    await send('PUT', `/api/devices/${id('10.66.0.2')}`, { zone: 'IoT' });
    await send('PUT', '/api/policies', { IoT: { forbidden_ports: [23], forbidden_services: ['mysql'], allowed_ports: null, severity: 'high' } });

    const iot = await get('/api/visualization/port-matrix?zone=IoT');
    expect(iot.zone).toBe('IoT');
    expect(iot.devices.map((d: any) => d.ip_address)).toEqual(['10.66.0.2', '10.66.1.1']);
    expect(iot.ports.map((p: any) => [p.port, p.devices, p.forbidden, p.forbidden_devices])).toEqual([
      [22, 2, false, 0],
      [23, 1, true, 1],
      [3306, 1, true, 1],
    ]);
    expect(iot.devices[1].ports).toEqual([
      { port: 22, protocol: 'tcp', service: 'ssh', forbidden: false },
      { port: 23, protocol: 'tcp', service: 'telnet', forbidden: true },
    ]);

    // The same port on a device of another zone is not forbidden there, and the column says how many break it.
    const all = await get('/api/visualization/port-matrix');
    expect(all.ports.find((p: any) => p.port === 22)).toMatchObject({ devices: 5, forbidden: false });
    expect(all.ports.find((p: any) => p.port === 23)).toMatchObject({ devices: 1, forbidden: true, forbidden_devices: 1 });

    await send('PUT', '/api/policies', {});
  });

  it('leaves archived devices out', async () => {
    // Asked twice: the second answer is the one kept; the write below makes it stale.
    await get('/api/visualization/port-matrix');
    expect((await get('/api/visualization/port-matrix')).devices.map((d: any) => d.ip_address)).toContain('10.66.0.7');
    await send('PUT', `/api/devices/${id('10.66.0.7')}`, { status: 'archived' });
    const m = await get('/api/visualization/port-matrix?subnet=10.66.0.0/24');
    expect(m.devices.map((d: any) => d.ip_address)).not.toContain('10.66.0.7');
    expect(m.ports.find((p: any) => p.port === 80).devices).toBe(1);
    const all = await get('/api/visualization/port-matrix');
    expect(all.devices.map((d: any) => d.ip_address)).not.toContain('10.66.0.7');
    expect(all.ports.find((p: any) => p.port === 80).devices).toBe(1);
    await send('PUT', `/api/devices/${id('10.66.0.7')}`, { status: 'known' });
  });

  it('answers 400 naming the parameter for bad filters', async () => {
    for (const [query, detail] of [
      ['subnet=10.66.0.0/33', /^subnet: /],
      ['subnet=nonsense', /^subnet: /],
      ['subnet=', /subnet/],
      ['zone=Nowhere', /^zone: .*not a zone/],
      ['zone=', /zone/],
      ['limit=5', /limit/],
    ] as const) {
      const body = await get(`/api/visualization/port-matrix?${query}`, 400);
      expect(body.detail, query).toMatch(detail);
    }
    const empty = await get('/api/visualization/port-matrix?subnet=10.99.0.0/16');
    expect(empty).toMatchObject({ total_devices: 0, ports: [], devices: [] });
  });

  it('needs authentication', async () => {
    const res = await server.request('/api/visualization/port-matrix');
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ detail: 'Not authenticated' });
  });
});
