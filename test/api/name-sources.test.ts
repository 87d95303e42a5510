/**
 * Name sources end to end: a real loopback scan through the API with a fake Pi-hole enabled that
 * knows 127.0.0.1's name and MAC. The device gets both, with where they came from on its detail
 * record; the password set through /api/config reads back masked. With the Pi-hole down, the
 * next scan still completes, keeps what the device already had, and the warning is logged.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { closedPort } from '../helpers/listeners.js';
import { startFakePihole, type FakePihole } from '../helpers/name-source-fakes.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

describe.each(testDatabases())('name sources in a real scan ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let pihole: FakePihole;
  const logged: { msg: string; scan_id?: number; level: number }[] = [];

  beforeAll(async () => {
    pihole = await startFakePihole({ password: 'app-password-1' });
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logged.push(JSON.parse(line));
        done();
      },
    });
    ({ server, key } = await startServerWithAdmin(database, {
      logger: pino({ level: 'warn' }, sink),
      settings: { scanning: { engine: 'native', host_timeout_seconds: 30, os_detection: false } },
    }));
  });
  afterAll(async () => {
    await server?.close();
    await pihole?.close();
  });

  const deviceAt = async (ip: string) => {
    const list = await readJson(await server.request(`/api/devices?q=${ip}`, { key }));
    const summary = (list.items ?? list).find((d: { ip_address: string }) => d.ip_address === ip);
    return summary ? readJson(await server.request(`/api/devices/${summary.id}`, { key })) : null;
  };

  it("fills the device's hostname and MAC from Pi-hole, with the source shown", async () => {
    const put = await server.request('/api/config', {
      method: 'PUT',
      key,
      json: { name_sources: { pihole: { enabled: true, url: pihole.url, password: 'app-password-1' } } },
    });
    expect(put.status, await put.clone().text()).toBe(200);
    expect((await readJson(put)).name_sources.pihole).toEqual({ enabled: true, url: pihole.url, password: '********' });
    // The audit entry of the change names the keys, never the password.
    const audit = await (await server.request('/api/audit-logs?action=config_updated', { key })).text();
    expect(audit).toContain('name_sources.pihole.url');
    expect(audit).not.toContain('app-password-1');

    const scan = await triggerScan(server, key, { subnet: '127.0.0.1/32', profile: 'quick' });
    expect((await waitForScan(server, key, scan.scan_id)).status).toBe('completed');
    const device = await deviceAt('127.0.0.1');
    expect(device).toMatchObject({
      ip_address: '127.0.0.1',
      hostname: 'raspberrypi',
      hostname_source: 'pihole',
      mac_address: 'B8:27:EB:12:34:56',
      mac_source: 'pihole',
    });
    expect(pihole.openSessions.size).toBe(0);
    expect(logged.filter((l) => l.msg.startsWith('name source'))).toEqual([]);
  });

  it('with the Pi-hole down the scan completes, the device keeps its facts, and the warning is logged', async () => {
    const down = `http://127.0.0.1:${await closedPort('127.0.0.1')}`;
    const put = await server.request('/api/config', { method: 'PUT', key, json: { name_sources: { pihole: { url: down } } } });
    // A new destination without the password given again: the password does not follow it.
    expect((await readJson(put)).name_sources.pihole).toEqual({ enabled: true, url: down, password: '' });

    const scan = await triggerScan(server, key, { subnet: '127.0.0.1/32', profile: 'quick' });
    expect((await waitForScan(server, key, scan.scan_id)).status).toBe('completed');
    expect(await deviceAt('127.0.0.1')).toMatchObject({ hostname: 'raspberrypi', hostname_source: 'pihole', mac_source: 'pihole' });
    expect(logged.filter((l) => l.msg.startsWith('name source'))).toEqual([
      expect.objectContaining({ scan_id: scan.scan_id, msg: `name source Pi-hole (${down}): connection failed: ECONNREFUSED` }),
    ]);
  });
});
