import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { EngineSelector } from '../../src/engines/engines.js';
import { nmapVersion } from '../../src/engines/nmap.js';
import { testDatabases } from '../helpers/databases.js';
import { bannerListener } from '../helpers/listeners.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { adminWithKey, readJson, startTestServer, type TestServer } from '../helpers/server.js';

const hasNmap = (await nmapVersion()) !== null;
const scratch = mkdtempSync(join(tmpdir(), 'netwarden-lifecycle-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** An executable that claims to be nmap for --version and fails every scan. */
function brokenNmap(): string {
  const path = join(scratch, 'nmap');
  writeFileSync(
    path,
    '#!/bin/sh\nif [ "$1" = "--version" ]; then echo "Nmap version 7.93 ( fake )"; exit 0; fi\necho "fake nmap: cannot open raw socket" >&2\nexit 3\n',
  );
  chmodSync(path, 0o755);
  return path;
}

describe.each(testDatabases())('scan lifecycle ($kind)', (database) => {
  let server: TestServer | undefined;
  const savedPath = process.env.NETWARDEN_NMAP_PATH;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    if (savedPath === undefined) delete process.env.NETWARDEN_NMAP_PATH;
    else process.env.NETWARDEN_NMAP_PATH = savedPath;
  });

  it.skipIf(!hasNmap)('refuses a second scan with 409 and cancels the running one', async () => {
    server = await startTestServer(database, { settings: { scanning: { engine: 'nmap', port_range: '1-3000', os_detection: false } } });
    const { key } = await adminWithKey(server);
    const started = await triggerScan(server, key, { subnet: '127.0.3.0/24', profile: 'intensive' });

    const second = await server.request('/api/scan/trigger?subnet=127.0.4.0/30', { method: 'POST', key });
    expect(second.status).toBe(409);
    expect(await readJson(second)).toEqual({ detail: 'A scan is already running', code: 'NW_SCAN_BUSY', scan_id: started.scan_id });
    const device = await server.request('/api/scan/device/127.0.4.1', { method: 'POST', key });
    expect(device.status).toBe(409);

    const status = await readJson(await server.request('/api/scan/status', { key }));
    expect(status).toMatchObject({ scanning: true, scan_id: started.scan_id, subnet: '127.0.3.0/24', profile: 'intensive' });
    expect(status.progress).toMatchObject({ phase: expect.any(String), percent: expect.any(Number), hosts_total: 256 });

    const cancel = await server.request(`/api/scans/${started.scan_id}/cancel`, { method: 'POST', key });
    expect(cancel.status).toBe(200);
    expect(await readJson(cancel)).toMatchObject({ scan_id: started.scan_id, status: 'cancelled', error: 'Cancelled' });
    expect(await readJson(await server.request('/api/scan/status', { key }))).toMatchObject({ scanning: false, scan_id: null });
    const again = await server.request(`/api/scans/${started.scan_id}/cancel`, { method: 'POST', key });
    expect(again.status).toBe(409);
    const audit = await readJson(await server.request('/api/audit-logs?action=scan_cancelled', { key }));
    expect(audit[0]).toMatchObject({ resource_id: String(started.scan_id) });

    // The service is free again.
    const next = await triggerScan(server, key, { subnet: '127.0.4.1', profile: 'quick' });
    expect((await waitForScan(server, key, next.scan_id)).status).toBe('completed');
  });

  it('scans with scanning.default_profile when a request names no profile', async () => {
    server = await startTestServer(database, { settings: { scanning: { default_profile: 'quick', engine: 'native' } } });
    const { key } = await adminWithKey(server);
    const network = await triggerScan(server, key, { subnet: '127.0.5.1' });
    expect(network.profile).toBe('quick');
    expect(await waitForScan(server, key, network.scan_id)).toMatchObject({ status: 'completed', profile: 'quick' });

    const config = await server.request('/api/config', { method: 'PUT', key, json: { scanning: { default_profile: 'normal' } } });
    expect(config.status).toBe(200);
    const device = await server.request('/api/scan/device/127.0.5.2', { method: 'POST', key });
    expect(await readJson(device)).toMatchObject({ profile: 'normal', target: '127.0.5.2' });
    const named = await server.request('/api/scans?limit=1', { key });
    const [latest] = await readJson(named);
    expect(latest.profile).toBe('normal');
    expect((await waitForScan(server, key, latest.scan_id)).status).toBe('completed');
  });

  it('answers 400 for bad scan requests and 404 for cancelling an unknown scan', async () => {
    server = await startTestServer(database);
    const { key } = await adminWithKey(server);
    for (const [path, detail] of [
      ['/api/scan/trigger?subnet=10.0.0.0/8', 'scanning.max_hosts'],
      ['/api/scan/trigger?subnet=192.168.1.0/33', 'subnet:'],
      ['/api/scan/trigger?subnet=lan', 'subnet:'],
      ['/api/scan/trigger?profile=deep', 'profile: must be one of quick, normal, intensive'],
      ['/api/scan/device/not-an-ip', 'ip_address:'],
      ['/api/scan/device/10.0.0.0%2F24', 'ip_address:'],
    ]) {
      const res = await server.request(path, { method: 'POST', key });
      expect(res.status, path).toBe(400);
      expect((await readJson(res)).detail, path).toContain(detail);
    }
    const res = await server.request('/api/scans/999/cancel', { method: 'POST', key });
    expect(res.status).toBe(404);
  });

  it('falls back to the native engine when nmap is not installed', async () => {
    process.env.NETWARDEN_NMAP_PATH = join(scratch, 'no-such-nmap');
    const ssh = await bannerListener('127.0.0.31', 'SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n');
    try {
      server = await startTestServer(database, { settings: { scanning: { engine: 'auto', port_range: String(ssh.port) } } });
      const { key } = await adminWithKey(server);
      expect(await readJson(await server.request('/health'))).toMatchObject({ engine: 'native' });
      const started = await triggerScan(server, key, { subnet: '127.0.0.31', profile: 'normal' });
      const scan = await waitForScan(server, key, started.scan_id);
      expect(scan.status).toBe('completed');
      const [device] = await readJson(await server.request(`/api/devices?scan_id=${started.scan_id}`, { key }));
      expect(device.open_ports).toEqual([ssh.port]);
      const audit = await readJson(await server.request('/api/audit-logs?action=scan_started', { key }));
      expect(audit[0].details).toMatchObject({ engine: 'native' });
    } finally {
      await ssh.close();
    }
  });

  it('reports an engine failure as a failed scan and keeps serving', async () => {
    process.env.NETWARDEN_NMAP_PATH = brokenNmap();
    server = await startTestServer(database, { settings: { scanning: { engine: 'nmap' } } });
    const { key } = await adminWithKey(server);
    const started = await triggerScan(server, key, { subnet: '127.0.0.41', profile: 'normal' });
    const scan = await waitForScan(server, key, started.scan_id);
    expect(scan.status).toBe('failed');
    expect(scan.error).toContain('fake nmap: cannot open raw socket');
    expect((await server.request('/health')).status).toBe(200);
    const audit = await readJson(await server.request('/api/audit-logs?action=scan_failed', { key }));
    expect(audit[0]).toMatchObject({ resource_id: String(started.scan_id), success: false });
  });
});

describe('engine selection', () => {
  it('requires nmap when configured so, and uses the native engine otherwise', async () => {
    const selector = new EngineSelector(join(scratch, 'missing-nmap'));
    expect((await selector.select('auto')).name).toBe('native');
    expect((await selector.select('native')).name).toBe('native');
    await expect(selector.select('nmap')).rejects.toThrow(/nmap is not installed/);
    expect(await selector.info('auto')).toMatchObject({ engine: 'native', nmap_version: null });
  });
});
