import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nmapVersion } from '../../src/engines/nmap.js';
import { testDatabases } from '../helpers/databases.js';
import { bannerListener, closedPort, httpListener, type Listener } from '../helpers/listeners.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

const hasNmap = (await nmapVersion()) !== null;
if (!hasNmap) console.warn('nmap is not installed: skipping the nmap loopback scan tests (apt-get install nmap; .ci/run installs it)');

describe.skipIf(!hasNmap).each(testDatabases())('nmap engine on loopback listeners ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  const listeners: Listener[] = [];
  let ssh: Listener;
  let http: Listener;
  let closed: number;

  beforeAll(async () => {
    ssh = await bannerListener('127.0.0.9', 'SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.10\r\n');
    http = await httpListener('127.0.0.10', 'nginx/1.18.0');
    listeners.push(ssh, http);
    closed = await closedPort('127.0.0.9');
    ({ server, key } = await startServerWithAdmin(database, {
      settings: { scanning: { engine: 'nmap', port_range: `${ssh.port},${http.port},${closed}`, host_timeout_seconds: 60, os_detection: false } },
    }));
  });
  afterAll(async () => {
    await server?.close();
    await Promise.all(listeners.map((l) => l.close()));
  });

  it('finds the listeners with their services and versions', async () => {
    const started = await triggerScan(server, key, { subnet: '127.0.0.8/30', profile: 'normal' });
    expect(started).toMatchObject({ status: 'started', profile: 'normal', subnet: '127.0.0.8/30' });
    const scan = await waitForScan(server, key, started.scan_id);
    expect(scan).toMatchObject({ status: 'completed', error: null, devices_found: 4, scan_type: 'network' });

    const devices = await readJson(await server.request('/api/devices', { key }));
    expect(devices.map((d: { ip_address: string }) => d.ip_address)).toEqual(['127.0.0.8', '127.0.0.9', '127.0.0.10', '127.0.0.11']);
    const sshHost = devices.find((d: { ip_address: string }) => d.ip_address === '127.0.0.9');
    expect(sshHost.open_ports).toEqual([ssh.port]);
    expect(sshHost.online).toBe(true);

    const detail = await readJson(await server.request(`/api/devices/${sshHost.id}`, { key }));
    const port = detail.ports.find((p: { port: number }) => p.port === ssh.port);
    expect(port).toMatchObject({ state: 'open', service: 'ssh', product: 'OpenSSH', version: '8.9p1 Ubuntu 3ubuntu0.10' });
    expect(port.cpe).toContain('cpe:/a:openbsd:openssh:8.9p1');
    expect(detail.ports.some((p: { port: number }) => p.port === closed)).toBe(false);

    const web = devices.find((d: { ip_address: string }) => d.ip_address === '127.0.0.10');
    const webDetail = await readJson(await server.request(`/api/devices/${web.id}`, { key }));
    expect(webDetail.ports).toEqual([
      expect.objectContaining({ port: http.port, state: 'open', service: 'http', product: 'nginx', version: '1.18.0' }),
    ]);

    const perScan = await readJson(await server.request(`/api/scans/${started.scan_id}/devices`, { key }));
    expect(perScan.find((d: { ip_address: string }) => d.ip_address === '127.0.0.10').open_ports).toEqual([http.port]);

    const audit = await readJson(await server.request('/api/audit-logs?action=scan_completed', { key }));
    expect(audit[0]).toMatchObject({ action: 'scan_completed', resource_id: String(started.scan_id), success: true });
    const startedAudit = await readJson(await server.request('/api/audit-logs?action=scan_started', { key }));
    expect(startedAudit[0]).toMatchObject({ actor: 'test-key', actor_type: 'api_key' });
  });

  it('keeps ports but never reports them closed on a quick scan', async () => {
    const started = await triggerScan(server, key, { subnet: '127.0.0.8/30', profile: 'quick' });
    const scan = await waitForScan(server, key, started.scan_id);
    expect(scan.status).toBe('completed');
    const devices = await readJson(await server.request(`/api/devices?scan_id=${started.scan_id}`, { key }));
    expect(devices.find((d: { ip_address: string }) => d.ip_address === '127.0.0.9').open_ports).toEqual([ssh.port]);
  });

  it('scans a single device', async () => {
    const res = await server.request('/api/scan/device/127.0.0.10', { method: 'POST', key });
    const started = await readJson(res);
    expect(res.status).toBe(200);
    expect(started).toMatchObject({ status: 'started', subnet: '127.0.0.10/32', target: '127.0.0.10', profile: 'normal' });
    const scan = await waitForScan(server, key, started.scan_id);
    expect(scan).toMatchObject({ status: 'completed', scan_type: 'device', devices_found: 1 });
  });
});
