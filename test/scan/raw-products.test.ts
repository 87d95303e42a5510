/**
 * Evaluation reads raw product strings (an HTTP Server header nmap left unparsed, or another
 * tool's report) into product and version before CVE matching and the risk rules, and shows a
 * plain description; each port-scanning scan stores the port list it examined.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { ScannedHost, ScannedPort } from '../../src/core/model.js';
import { parseNmapXml } from '../../src/core/nmap-xml.js';
import { ScanEvaluator } from '../../src/scan/evaluate.js';
import { InventoryWriter } from '../../src/store/inventory.js';
import { testDatabases, type OpenedDatabase } from '../helpers/databases.js';

const AT = '2026-11-25T12:00:00.000Z';
const webPort: ScannedPort = { port: 8080, protocol: 'tcp', state: 'open', service: null, product: null, version: null, extra_info: null, cpe: [] };
/** nmap's XML when version detection named no product but the http-server-header script read the header. */
const SCRIPT_REPORT = `<?xml version="1.0"?><nmaprun><host><status state="up"/><address addr="10.66.0.7" addrtype="ipv4"/><ports>
<port protocol="tcp" portid="8080"><state state="open"/><service name="http-proxy" method="table" conf="3"/><script id="http-server-header" output="Apache/2.4.49 (Unix)"/></port>
</ports></host><runstats><finished exit="success"/></runstats></nmaprun>`;

for (const database of testDatabases()) {
  describe(`raw products and port lists in evaluation (${database.kind})`, () => {
    const opened: OpenedDatabase[] = [];
    afterAll(async () => {
      for (const o of opened) await o.cleanup();
    });

    it.each([
      ['the product field', (): ScannedPort => ({ ...webPort, service: 'http-proxy', product: 'Apache/2.4.49 (Unix)' })],
      ['the http-server-header script of an nmap report', (): ScannedPort => parseNmapXml(SCRIPT_REPORT).hosts[0].ports[0]],
    ])('a Server header left in %s gets the Apache CVE and the admin-page finding', async (_case, web) => {
      const db = await database.open();
      opened.push(db);
      const { store } = db;
      const evaluator = new ScanEvaluator(store, null);
      const scan = await store.scans.create({
        status: 'running',
        profile: 'normal',
        subnet: '10.66.0.7/32',
        scan_type: 'network',
        target: null,
        started_at: AT,
        completed_at: null,
        duration_seconds: null,
        error: null,
        triggered_by: 'test',
        progress: null,
      });
      const host: ScannedHost = {
        ip: '10.66.0.7',
        mac: null,
        vendor: null,
        hostname: null,
        os_name: null,
        device_type: null,
        ports: [
          web(),
          {
            port: 8081,
            protocol: 'tcp',
            state: 'open',
            service: 'blackice-icecap',
            product: null,
            version: null,
            extra_info: null,
            cpe: [],
            service_guessed: true,
          },
        ],
      };
      const inventory = new InventoryWriter(store.db, () => store.touch());
      const { seen } = await inventory.recordDiscovery(scan.id, [host], AT);
      await inventory.recordPorts([{ deviceId: seen[0].deviceId, host }], AT);
      const portList = [
        { low: 1, high: 1000 },
        { low: 8080, high: 8081 },
      ];
      await evaluator.evaluate({ scan, seenDeviceIds: [seen[0].deviceId], portsScanned: true, portList, at: AT });

      const device = await store.devices.get(seen[0].deviceId, (id) => evaluator.cves.entry(id));
      expect(device!.cves).toContainEqual(
        expect.objectContaining({ id: 'CVE-2021-41773', port: 8080, matched_product: expect.stringMatching(/apache/i) }),
      );
      expect(device!.risk_details.findings).toContainEqual(
        expect.objectContaining({ port: 8080, title: 'Administration web interface over plain HTTP' }),
      );
      expect(device!.ports).toEqual([
        expect.objectContaining({ port: 8080, product: 'Apache/2.4.49 (Unix)', description: 'web server (Apache httpd 2.4.49)' }),
        expect.objectContaining({ port: 8081, service: 'blackice-icecap', description: 'unidentified service (nmap guesses blackice-icecap)' }),
      ]);
      expect(device!.ports[0]).not.toHaveProperty('service_guessed');
      expect((await store.scans.get(scan.id))!.port_list).toBe('1-1000,8080-8081');
    });
  });
}
