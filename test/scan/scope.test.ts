/**
 * The scan scope guard: a scan whose target is not inside scanning.allowed_targets (or, when set,
 * NETWARDEN_SCAN_ALLOW, which the API cannot change) is refused with 400 naming the setting, and
 * nothing is recorded or sent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_ALLOWED_TARGETS } from '../../src/core/settings.js';
import { cliDatastores, runCli } from '../cli/helpers.js';
import { testDatabases } from '../helpers/databases.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { adminWithKey, readJson, startTestServer, type TestServer } from '../helpers/server.js';

describe.each(testDatabases())('scan scope guard ($kind)', (database) => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const refused = async (s: TestServer, key: string, path: string) => {
    const res = await s.request(path, { method: 'POST', key });
    expect(res.status, path).toBe(400);
    return (await readJson(res)).detail as string;
  };

  it('refuses targets outside NETWARDEN_SCAN_ALLOW, which the API shows but cannot change', async () => {
    server = await startTestServer(database, { scanAllow: ['127.0.0.0/8', '10.66.0.0/24'] });
    const { key } = await adminWithKey(server);
    expect(await refused(server, key, '/api/scan/trigger?subnet=192.168.1.0/24')).toBe(
      'subnet: 192.168.1.0/24 is outside the allowed scan targets (NETWARDEN_SCAN_ALLOW: 127.0.0.0/8, 10.66.0.0/24)',
    );
    // The configured default subnet (192.168.1.0/24) is refused the same way.
    expect(await refused(server, key, '/api/scan/trigger')).toMatch(/^subnet: 192\.168\.1\.0\/24 is outside/);
    expect(await refused(server, key, '/api/scan/trigger?subnet=10.66.0.0/23')).toMatch(/NETWARDEN_SCAN_ALLOW/);
    expect(await refused(server, key, '/api/scan/device/8.8.8.8')).toMatch(/^ip_address: 8\.8\.8\.8 is outside the allowed scan targets/);
    expect((await server.request('/api/scans', { key })).headers.get('x-total-count')).toBe('0');

    const config = await readJson(await server.request('/api/config', { key }));
    expect(config.scanning.allowed_targets).toEqual(['127.0.0.0/8', '10.66.0.0/24']);
    const widen = await server.request('/api/config', { method: 'PUT', key, json: { scanning: { allowed_targets: ['0.0.0.0/0'] } } });
    expect(widen.status).toBe(400);
    expect((await readJson(widen)).detail).toMatch(/^scanning\.allowed_targets: set by the NETWARDEN_SCAN_ALLOW environment variable/);
    // Sending back the whole document as read is fine.
    const echo = await server.request('/api/config', { method: 'PUT', key, json: config });
    expect(echo.status).toBe(200);
    expect((await readJson(echo)).scanning.allowed_targets).toEqual(['127.0.0.0/8', '10.66.0.0/24']);
  });

  it('enforces the stored scanning.allowed_targets when no variable is set', async () => {
    server = await startTestServer(database, { scanAllow: null, settings: { scanning: { allowed_targets: ['127.0.0.0/24'] } } });
    const { key } = await adminWithKey(server);
    expect(await refused(server, key, '/api/scan/trigger?subnet=127.0.1.0/30')).toBe(
      'subnet: 127.0.1.0/30 is outside the allowed scan targets (scanning.allowed_targets: 127.0.0.0/24)',
    );
    const started = await triggerScan(server, key, { subnet: '127.0.0.7', profile: 'quick' });
    expect((await waitForScan(server, key, started.scan_id)).status).toBe('completed');

    const bad = await server.request('/api/config', { method: 'PUT', key, json: { scanning: { allowed_targets: ['127.0.0.0/24', 'lan'] } } });
    expect(bad.status).toBe(400);
    expect((await readJson(bad)).detail).toMatch(/^scanning\.allowed_targets\.1: must be an IPv4 CIDR/);
    const empty = await server.request('/api/config', { method: 'PUT', key, json: { scanning: { allowed_targets: [] } } });
    expect(empty.status).toBe(400);
    expect((await readJson(empty)).detail).toMatch(/^scanning\.allowed_targets: /);
    const reset = await server.request('/api/config', { method: 'PUT', key, json: { scanning: { allowed_targets: null } } });
    expect((await readJson(reset)).scanning.allowed_targets).toEqual(DEFAULT_ALLOWED_TARGETS);
  });
});

describe.each(cliDatastores())('scan scope guard on the command line ($kind)', ({ create }) => {
  it('refuses a scan outside NETWARDEN_SCAN_ALLOW and a malformed variable, naming it', async () => {
    const ds = await create();
    try {
      const outside = await runCli(ds, ['scan', '--subnet', '192.168.77.0/24', '--no-progress']);
      expect(outside.code).toBe(2);
      expect(outside.stderr).toMatch(
        /subnet: 192\.168\.77\.0\/24 is outside the allowed scan targets \(NETWARDEN_SCAN_ALLOW: 127\.0\.0\.0\/8, 10\.66\.0\.0\/24\)/,
      );
      const malformed = await runCli(ds, ['scan', '--subnet', '127.0.0.1', '--no-progress'], {
        env: { NETWARDEN_SCAN_ALLOW: '127.0.0.0/8,everything' },
      });
      expect(malformed.code).not.toBe(0);
      expect(malformed.stderr).toMatch(/NETWARDEN_SCAN_ALLOW: 'everything' must be an IPv4 CIDR/);
    } finally {
      await ds.cleanup();
    }
  });
});
