/**
 * Comparing two scans (CONTRACT §16, §18, issue 22 §1): two real nmap reports imported through the
 * API, the second examining fewer ports; the comparison matches devices by identity (a device that
 * changed address but kept its MAC is `moved`), never calls a port it did not examine "closed",
 * and refuses what cannot be compared. Real server over HTTP, both stores.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { FIRST, MAC, SECOND, nmapReport } from '../helpers/compare-reports.js';

describe.each(testDatabases())('scan comparison ($kind)', (database) => {
  let server: TestServer;
  let key: string;

  beforeEach(async () => {
    ({ server, key } = await startServerWithAdmin(database));
  });
  afterEach(async () => {
    await server?.close();
  });

  const importXml = async (xml: string) => {
    const res = await server.request('/api/scans/import', { method: 'POST', body: xml, headers: { 'Content-Type': 'application/xml' }, key });
    expect(res.status, await res.clone().text()).toBe(201);
    return readJson(res);
  };
  const get = async (path: string, status = 200) => {
    const res = await server.request(path, { key });
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(status);
    return readJson(res);
  };

  it('matches devices by identity and compares ports only where both scans examined them', async () => {
    const one = await importXml(FIRST);
    const two = await importXml(SECOND);
    expect(one.ports_examined).toBe('1-1000,3306');
    expect(two.ports_examined).toBe('22,80');

    const result = await get(`/api/scans/${two.scan_id}/compare/${one.scan_id}`);
    expect(result.current).toEqual(await get(`/api/scans/${two.scan_id}`));
    expect(result.previous).toEqual(await get(`/api/scans/${one.scan_id}`));
    expect(result.summary).toMatchObject({
      devices_added: 1,
      devices_removed: 1,
      devices_moved: 1,
      devices_changed: 2,
      ports_opened: 2,
      ports_closed: 1,
      services_changed: 1,
    });
    const byMac = new Map<string, any>(result.devices.map((d: any) => [d.mac_address, d]));
    const ids = new Map((await get('/api/devices?limit=1000')).map((d: any) => [d.mac_address, d.id]));

    // The moved device: one device, never added plus removed; its opened port is listed.
    expect(byMac.get(MAC(4))).toMatchObject({
      device_id: ids.get(MAC(4)),
      status: 'moved',
      ip_before: '10.66.0.5',
      ip_after: '10.66.0.9',
      ports_opened: [{ port: 80, protocol: 'tcp' }],
      ports_closed: [],
    });
    // 3306 was not examined by the second scan: not closed; the SSH version changed.
    expect(byMac.get(MAC(1))).toMatchObject({
      status: 'changed',
      ip_before: '10.66.0.2',
      ip_after: '10.66.0.2',
      ports_opened: [],
      ports_closed: [],
      services_changed: [{ port: 22, protocol: 'tcp', before: 'ssh OpenSSH 8.0', after: 'ssh OpenSSH 8.2' }],
    });
    expect(byMac.get(MAC(2))).toMatchObject({
      status: 'changed',
      ports_opened: [{ port: 22, protocol: 'tcp' }],
      ports_closed: [{ port: 80, protocol: 'tcp' }],
    });
    expect(byMac.get(MAC(3))).toMatchObject({ status: 'removed', ip_before: '10.66.0.4', ip_after: null, risk_after: null, ports_closed: [] });
    expect(byMac.get(MAC(3)).risk_before).toEqual({ level: expect.any(String), score: expect.any(Number) });
    expect(byMac.get(MAC(5))).toMatchObject({ status: 'added', ip_before: null, ip_after: '10.66.0.7', risk_before: null, ports_opened: [] });
    expect(result.devices.map((d: any) => d.status)).toEqual(['added', 'removed', 'moved', 'changed', 'changed']);
    expect(result.devices.every((d: any) => d.status !== 'unchanged')).toBe(true);

    // The other way round: what was added is removed, what opened closed.
    const back = await get(`/api/scans/${one.scan_id}/compare/${two.scan_id}`);
    expect(back.summary).toMatchObject({ devices_added: 1, devices_removed: 1, devices_moved: 1, ports_opened: 1, ports_closed: 2 });

    // Text export in the manner of ndiff.
    const res = await server.request(`/api/scans/${two.scan_id}/compare/${one.scan_id}?format=text`, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toContain(`-Scan #${one.scan_id} of 10.66.0.0/28`);
    expect(text).toContain(`+Scan #${two.scan_id} of 10.66.0.0/28`);
    expect(text).toContain(`-10.66.0.5 (${MAC(4)}):\n+10.66.0.9 (${MAC(4)}):`);
    expect(text).toContain('-22/tcp open  ssh OpenSSH 8.0\n+22/tcp open  ssh OpenSSH 8.2');
    expect(text).toContain('-80/tcp open');
    expect(text).not.toContain('3306/tcp');
    expect(text).toContain('Summary: 1 added, 1 removed, 1 moved, 2 changed');
  });

  it('lists unchanged devices on request', async () => {
    const one = await importXml(FIRST);
    const again = await importXml(FIRST);
    const result = await get(`/api/scans/${again.scan_id}/compare/${one.scan_id}`);
    expect(result.summary).toEqual({
      devices_added: 0,
      devices_removed: 0,
      devices_moved: 0,
      devices_changed: 0,
      ports_opened: 0,
      ports_closed: 0,
      services_changed: 0,
      risk_changed: 0,
    });
    expect(result.devices).toEqual([]);
    const all = await get(`/api/scans/${again.scan_id}/compare/${one.scan_id}?include_unchanged=true`);
    expect(all.devices.map((d: any) => [d.ip_after, d.status])).toEqual([
      ['10.66.0.2', 'unchanged'],
      ['10.66.0.3', 'unchanged'],
      ['10.66.0.4', 'unchanged'],
      ['10.66.0.5', 'unchanged'],
    ]);
    expect(all.devices[0].risk_before).toEqual(all.devices[0].risk_after);
  });

  it('refuses what cannot be compared', async () => {
    const one = await importXml(FIRST);
    const two = await importXml(SECOND);
    const detail = async (path: string, status: number) => (await get(path, status)).detail as string;

    expect(await detail(`/api/scans/${two.scan_id}/compare/${two.scan_id}`, 400)).toMatch(/itself/);
    expect(await detail(`/api/scans/${two.scan_id}/compare/999999`, 404)).toMatch(/Scan not found/);
    expect(await detail(`/api/scans/999999/compare/${one.scan_id}`, 404)).toMatch(/Scan not found/);
    expect(await detail(`/api/scans/abc/compare/${one.scan_id}`, 400)).toMatch(/current_id/);
    expect(await detail(`/api/scans/${two.scan_id}/compare/0`, 400)).toMatch(/previous_id/);
    expect(await detail(`/api/scans/${two.scan_id}/compare/${one.scan_id}?include_unchanged=maybe`, 400)).toMatch(/include_unchanged/);
    expect(await detail(`/api/scans/${two.scan_id}/compare/${one.scan_id}?format=xml`, 400)).toMatch(/format/);

    const failed = await server.store.scans.create({ status: 'failed', profile: 'normal', subnet: '10.66.0.0/28', scan_type: 'network' });
    expect(await detail(`/api/scans/${two.scan_id}/compare/${failed.id}`, 409)).toMatch(/failed; only completed scans/);

    const elsewhere = await importXml(nmapReport('127.0.0.50', '22', [{ ip: '127.0.0.50', mac: MAC(6), ports: [{ port: 22, service: 'ssh' }] }]));
    expect(await detail(`/api/scans/${elsewhere.scan_id}/compare/${one.scan_id}`, 400)).toMatch(/disjoint/);

    const unauthenticated = await server.request(`/api/scans/${two.scan_id}/compare/${one.scan_id}`);
    expect(unauthenticated.status).toBe(401);
  });
});
