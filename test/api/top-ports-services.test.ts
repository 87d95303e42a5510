/**
 * scanning.top_ports and friendlier services end to end: a web server answering
 * `Server: Apache/2.4.49 (Unix)` on 8080 (outside 1-1000, among the most frequent ports) is found
 * by a normal scan with either engine, described in plain words, matched to its CVE and flagged as
 * an admin page over plain HTTP; a scan that does not examine 8080 keeps it listed (stale, CONTRACT
 * §14) and reports it neither closed nor, when it is examined again, opened.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nmapVersion } from '../../src/engines/nmap.js';
import { testDatabases } from '../helpers/databases.js';
import { httpListener, type Listener } from '../helpers/listeners.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

const hasNmap = (await nmapVersion()) !== null;
if (!hasNmap) console.warn('nmap is not installed: only the native engine is tested here (apt-get install nmap)');

// An address no other test uses, so that 8080 is free on it.
const HOST = '127.0.0.214';
const WEB_PORT = 8080;
const engines = [...(hasNmap ? (['nmap'] as const) : []), 'native'] as const;

for (const engine of engines) {
  describe.each(testDatabases())(`top ports and service descriptions, ${engine} engine ($kind)`, (database) => {
    let server: TestServer;
    let key: string;
    let web: Listener;

    beforeAll(async () => {
      web = await httpListener(HOST, 'Apache/2.4.49 (Unix)', WEB_PORT);
      ({ server, key } = await startServerWithAdmin(database, {
        settings: { scanning: { engine, port_range: '1-1000', top_ports: 1000, host_timeout_seconds: 120, os_detection: false } },
      }));
    });
    afterAll(async () => {
      await server?.close();
      await web?.close();
    });

    const scanOnce = async () => {
      const started = await triggerScan(server, key, { subnet: `${HOST}/32`, profile: 'normal' });
      const scan = await waitForScan(server, key, started.scan_id, 240_000);
      expect(scan).toMatchObject({ status: 'completed', error: null, devices_found: 1 });
      const [device] = await readJson(await server.request(`/api/devices?scan_id=${started.scan_id}`, { key }));
      const detail = await readJson(await server.request(`/api/devices/${device.id}`, { key }));
      const changes = await readJson(await server.request(`/api/changes?scan_id=${started.scan_id}`, { key }));
      return { scanId: started.scan_id as number, device, detail, changes };
    };

    it('finds the web server on 8080 with its CVE, the admin-page finding and a plain description', async () => {
      const { device, detail } = await scanOnce();
      expect(device.open_ports).toContain(WEB_PORT);
      const port = detail.ports.find((p: { port: number }) => p.port === WEB_PORT);
      expect(port).toMatchObject({ state: 'open', description: 'web server (Apache httpd 2.4.49)' });
      expect(detail.cves).toContainEqual(expect.objectContaining({ id: 'CVE-2021-41773', port: WEB_PORT }));
      expect(detail.risk_details.findings).toContainEqual(
        expect.objectContaining({ port: WEB_PORT, title: 'Administration web interface over plain HTTP' }),
      );
    }, 300_000);

    it('keeps 8080 listed (stale) when a scan does not examine it, reporting it neither closed nor, examined again, opened', async () => {
      const first = await scanOnce();
      const off = await server.request('/api/config', { method: 'PUT', key, json: { scanning: { top_ports: 0 } } });
      expect(off.status).toBe(200);
      const narrow = await scanOnce();
      // Not examined, so still known open from the first scan, marked stale with that scan's verification.
      expect(narrow.device.open_ports).toContain(WEB_PORT);
      expect(narrow.detail.ports.find((p: { port: number }) => p.port === WEB_PORT)).toMatchObject({
        stale: true,
        verified_by_scan_id: first.scanId,
      });
      expect(narrow.changes.filter((c: { port: number | null }) => c.port === WEB_PORT)).toEqual([]);

      const on = await server.request('/api/config', { method: 'PUT', key, json: { scanning: { top_ports: 1000 } } });
      expect(on.status).toBe(200);
      const wide = await scanOnce();
      expect(wide.device.open_ports).toContain(WEB_PORT);
      expect(wide.detail.ports.find((p: { port: number }) => p.port === WEB_PORT)).toMatchObject({ stale: false, verified_by_scan_id: wide.scanId });
      expect(wide.changes.filter((c: { port: number | null }) => c.port === WEB_PORT)).toEqual([]);
    }, 600_000);
  });
}
