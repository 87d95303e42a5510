/**
 * A device's timeline (CONTRACT §16, §18, issue 22 §4): presence intervals from the completed
 * scans of its address, its changes and those scans with `seen`. Two real nmap reports imported
 * over HTTP into a real server, both stores.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { FIRST, SECOND } from '../helpers/compare-reports.js';

describe.each(testDatabases())('device timeline ($kind)', (database) => {
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

  it('shows presence intervals, changes and scans with seen true/false', async () => {
    const one = await importXml(FIRST);
    const two = await importXml(SECOND);
    const devices = await get('/api/devices?limit=1000');
    const id = (ip: string) => devices.find((d: any) => d.ip_address === ip).id;

    // .4 was seen by the first scan only: online, then offline (presence.offline_after_scans is 1) up to now.
    const gone = await get(`/api/devices/${id('10.66.0.4')}/timeline`);
    expect(gone.days).toBe(30);
    expect(gone.scans).toEqual([
      { scan_id: one.scan_id, at: one.completed_at, seen: true },
      { scan_id: two.scan_id, at: two.completed_at, seen: false },
    ]);
    expect(gone.presence.map((p: any) => [p.state, p.from, p.to])).toEqual([
      ['online', one.completed_at, two.completed_at],
      ['offline', two.completed_at, null],
    ]);
    expect(gone.presence[0].duration_seconds).toBe(Math.round((Date.parse(two.completed_at) - Date.parse(one.completed_at)) / 1000));
    expect(gone.presence[1].duration_seconds).toBeGreaterThanOrEqual(0);
    expect(gone.changes.map((c: any) => c.change_type)).toEqual(['device_removed']);

    // .2 was seen by both: one open interval; its SSH version changed.
    const kept = await get(`/api/devices/${id('10.66.0.2')}/timeline?days=1`);
    expect(kept.days).toBe(1);
    expect(kept.presence.map((p: any) => [p.state, p.from, p.to])).toEqual([['online', one.completed_at, null]]);
    expect(kept.scans.map((s: any) => s.seen)).toEqual([true, true]);
    expect(kept.changes.map((c: any) => [c.change_type, c.port])).toEqual([['service_changed', 22]]);

    // The moved device keeps its history: both scans saw it, at either address.
    const moved = await get(`/api/devices/${id('10.66.0.9')}/timeline`);
    expect(moved.scans.map((s: any) => [s.scan_id, s.seen])).toEqual([
      [one.scan_id, true],
      [two.scan_id, true],
    ]);
    expect(moved.presence).toHaveLength(1);

    // The new device: the first scan was before it was known, so it starts online at the second.
    const added = await get(`/api/devices/${id('10.66.0.7')}/timeline`);
    expect(added.scans.map((s: any) => s.seen)).toEqual([false, true]);
    expect(added.presence.map((p: any) => [p.state, p.from, p.to])).toEqual([['online', two.completed_at, null]]);
  });

  it('refuses bad days and unknown devices', async () => {
    await importXml(FIRST);
    const [device] = await get('/api/devices');
    for (const days of ['0', '3651', 'x', '1.5']) {
      const body = await get(`/api/devices/${device.id}/timeline?days=${days}`, 400);
      expect(body.detail).toMatch(/days/);
    }
    expect((await get(`/api/devices/${device.id}/timeline?days=3650`)).days).toBe(3650);
    expect((await get('/api/devices/999999/timeline', 404)).detail).toMatch(/Device not found/);
    expect((await get('/api/devices/abc/timeline', 400)).detail).toMatch(/device_id/);
  });
});
