/**
 * Change detection, risk and CVEs end to end on the namespace lab (test/lab/lab.sh): the real
 * server and the nmap engine (SQLite) scan 10.66.0.8/29, the lab changes, a second scan reports
 * exactly what changed. Needs root (ip netns add) and nmap; skipped with a message elsewhere.
 *
 * First scan:
 *   h1 10.66.0.11 B8:27:EB:66:00:01   22 SSH-2.0-OpenSSH_8.9p1, 80 HTTP (nginx/1.18.0)
 *   h2 10.66.0.12 00:1C:42:66:00:02   21 `220 (vsFTPd 2.3.4)` (the backdoored release: CVE-2011-2523)
 *   h3 10.66.0.13 02:66:00:66:00:03   22 SSH-2.0-dropbear_2020.81
 *   h4 10.66.0.14 00:16:3E:66:00:04   22 SSH-2.0-OpenSSH_9.6p1
 *   h5 10.66.0.15 DC:A6:32:66:00:05   22 SSH-2.0-OpenSSH_9.6p1, but off the segment (stopped)
 * Then: h1's SSH answers OpenSSH_9.6p1 and its port 80 closes; h2 opens a Telnet login on 23;
 * h3 leaves; h4 moves to 10.66.0.10 keeping its MAC; h5 joins. Second scan, and the changes:
 *   port_opened critical 10.66.0.12:23 (the Telnet rule), port_closed info 10.66.0.11:80,
 *   service_changed low 10.66.0.11:22 (only the version changed), device_removed low 10.66.0.13,
 *   device_added medium 10.66.0.15 (untrusted, no risky port); nothing for h4.
 *
 * The Telnet banner is a Cisco IOS `User Access Verification` prompt: nmap identifies it from its
 * NULL probe at once. A BusyBox telnetd greeting starts with IAC option bytes (0xFF …), which
 * lab.sh cannot pass through its command line, and a prompt nmap has no signature for makes -sV
 * run every probe against it (about 2.5 minutes); the rule matches either way (port 23 + telnet).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nmapVersion } from '../../src/engines/nmap.js';
import { testDatabases } from '../helpers/databases.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { labCtl, labMacs, labUnavailableReason } from './lab.js';

const unavailable = await labUnavailableReason();
if (unavailable) console.warn(`skipping the namespace-lab change-detection tests: ${unavailable}`);
const hasNmap = unavailable ? false : (await nmapVersion()) !== null;
if (!unavailable && !hasNmap) console.warn('skipping the namespace-lab change-detection tests: nmap is not installed (apt-get install nmap)');

const SUBNET = '10.66.0.8/29';
const HOSTS = 5;
const MAC = labMacs(5);
/** The listener ports (21, 22, 80), the one that opens (23) and two that stay closed. */
const PORT_RANGE = '21,22,23,80,443,8080';
const SCAN_TIMEOUT_MS = 180_000;
const TEST_TIMEOUT_MS = 300_000;

const TELNET_BANNER = '\r\n\r\nUser Access Verification\r\n\r\nUsername: ';

async function buildLab(): Promise<void> {
  // Start clean: a previous run that crashed may have left part of a lab behind. Both wait while
  // another test run or a benchmark owns the lab.
  await labCtl.down();
  await labCtl.up(HOSTS);
  await labCtl.banner('h1', 22, 'SSH-2.0-OpenSSH_8.9p1');
  await labCtl.http('h1', 80, 'nginx/1.18.0');
  await labCtl.banner('h2', 21, '220 (vsFTPd 2.3.4)');
  await labCtl.banner('h3', 22, 'SSH-2.0-dropbear_2020.81');
  await labCtl.banner('h4', 22, 'SSH-2.0-OpenSSH_9.6p1');
  await labCtl.banner('h5', 22, 'SSH-2.0-OpenSSH_9.6p1');
  // h5 exists but is off the segment for the first scan: the second one sees a new device.
  await labCtl.stop('h5');
}

interface Device {
  id: number;
  ip_address: string;
  mac_address: string | null;
  risk_level: string;
  open_ports: number[];
}

interface Change {
  change_type: string;
  severity: string;
  device_id: number | null;
  device_ip: string | null;
  device_mac: string | null;
  port: number | null;
  protocol: string | null;
  old_value: string | null;
  new_value: string | null;
  description: string;
}

describe.skipIf(unavailable !== null || !hasNmap)('change detection on the namespace lab (nmap engine, sqlite)', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    await buildLab();
    ({ server, key } = await startServerWithAdmin(testDatabases()[0], {
      settings: {
        network: { subnet: SUBNET },
        scanning: { engine: 'nmap', port_range: PORT_RANGE, host_timeout_seconds: 60, os_detection: false },
      },
    }));
  }, 420_000);
  afterAll(async () => {
    await server?.close();
    await labCtl.down();
  }, 120_000);

  async function scan(): Promise<any> {
    const started = await triggerScan(server, key, { subnet: SUBNET, profile: 'normal' });
    const record = await waitForScan(server, key, started.scan_id, SCAN_TIMEOUT_MS);
    expect(record, `scan ${started.scan_id}: ${record.error}`).toMatchObject({ status: 'completed', error: null, scan_type: 'network' });
    return record;
  }

  async function devices(): Promise<Device[]> {
    return readJson(await server.request('/api/devices', { key }));
  }

  async function detail(id: number): Promise<any> {
    const res = await server.request(`/api/devices/${id}`, { key });
    expect(res.status).toBe(200);
    return readJson(res);
  }

  async function changesOf(scanId: number): Promise<Change[]> {
    const res = await server.request(`/api/changes?scan_id=${scanId}`, { key });
    expect(res.status).toBe(200);
    return readJson(res);
  }

  function byMac(list: Device[], mac: string): Device {
    const found = list.find((d) => d.mac_address === mac);
    if (!found) throw new Error(`no device with MAC ${mac} in ${JSON.stringify(list.map((d) => [d.ip_address, d.mac_address]))}`);
    return found;
  }

  /** Checks the vsftpd 2.3.4 host's CVEs and risk on its device view. */
  async function expectBackdooredFtp(id: number): Promise<any> {
    const view = await detail(id);
    expect(view.ports.find((p: { port: number }) => p.port === 21)).toMatchObject({
      state: 'open',
      service: 'ftp',
      product: 'vsftpd',
      version: '2.3.4',
    });

    const backdoor = view.cves.find((c: { id: string }) => c.id === 'CVE-2011-2523');
    expect(backdoor, JSON.stringify(view.cves.map((c: { id: string }) => c.id))).toMatchObject({
      severity: 'critical',
      cvss_score: 9.8,
      confidence: 'confirmed',
      port: 21,
      matched_version: '2.3.4',
    });
    expect(backdoor.remediation).toMatch(/vsftpd/i);
    // Fixed before 2.3.3: not this version.
    expect(view.cves.some((c: { id: string }) => c.id === 'CVE-2011-0762')).toBe(false);

    const findings = view.risk_details.findings as {
      severity: string;
      port: number | null;
      cve_ids: string[];
      recommendation: string;
      score: number;
    }[];
    const cveFinding = findings.find((f) => f.cve_ids.includes('CVE-2011-2523'));
    expect(cveFinding, JSON.stringify(findings)).toMatchObject({ severity: 'critical', port: 21 });
    expect(cveFinding!.recommendation.length).toBeGreaterThan(10);
    expect(cveFinding!.score).toBeGreaterThan(0);
    // The FTP rule itself (medium) is listed too.
    expect(findings.some((f) => f.port === 21 && f.severity === 'medium' && f.cve_ids.length === 0)).toBe(true);

    // The level is the worst finding's, on the device and in its risk details.
    expect(view.risk_level).toBe('critical');
    expect(view.risk_details.level).toBe('critical');
    expect(view.risk_score).toBe(view.risk_details.score);
    expect(view.risk_score).toBeGreaterThanOrEqual(70);
    return view;
  }

  it(
    'reports exactly what changed between two scans, with the documented severities',
    async () => {
      const first = await scan();
      expect(first.devices_found).toBe(4);
      const before = await devices();
      expect(before.map((d) => [d.ip_address, d.mac_address, d.open_ports])).toEqual([
        ['10.66.0.11', MAC.h1, [22, 80]],
        ['10.66.0.12', MAC.h2, [21]],
        ['10.66.0.13', MAC.h3, [22]],
        ['10.66.0.14', MAC.h4, [22]],
      ]);
      // No baseline: the first scan of the subnet reports nothing.
      expect(await changesOf(first.scan_id)).toEqual([]);
      await expectBackdooredFtp(byMac(before, MAC.h2).id);

      // Change the lab.
      await labCtl.banner('h1', 22, 'SSH-2.0-OpenSSH_9.6p1'); // replaces the 8.9p1 listener
      await labCtl.unlisten('h1', 80);
      await labCtl.banner('h2', 23, TELNET_BANNER);
      await labCtl.stop('h3');
      await labCtl.move('h4', '10.66.0.10');
      await labCtl.start('h5');

      const second = await scan();
      expect(second.devices_found).toBe(4);

      const changes = await changesOf(second.scan_id);
      const rank = (c: Change) => `${c.change_type}|${c.device_ip}|${String(c.port ?? '').padStart(5, '0')}`;
      const summary = [...changes]
        .sort((a, b) => rank(a).localeCompare(rank(b)))
        .map((c) => ({ change_type: c.change_type, severity: c.severity, device_ip: c.device_ip, port: c.port }));
      expect(summary).toEqual([
        { change_type: 'device_added', severity: 'medium', device_ip: '10.66.0.15', port: null },
        { change_type: 'device_removed', severity: 'low', device_ip: '10.66.0.13', port: null },
        { change_type: 'port_closed', severity: 'info', device_ip: '10.66.0.11', port: 80 },
        { change_type: 'port_opened', severity: 'critical', device_ip: '10.66.0.12', port: 23 },
        { change_type: 'service_changed', severity: 'low', device_ip: '10.66.0.11', port: 22 },
      ]);

      // The details a person reads.
      const find = (type: string) => changes.find((c) => c.change_type === type)!;
      expect(find('device_added')).toMatchObject({ device_mac: MAC.h5, new_value: '10.66.0.15', protocol: null });
      expect(find('device_added').description).toContain('22/tcp');
      expect(find('device_removed')).toMatchObject({
        device_id: byMac(before, MAC.h3).id,
        device_mac: MAC.h3,
        old_value: '10.66.0.13',
        new_value: null,
      });
      expect(find('port_closed')).toMatchObject({
        device_id: byMac(before, MAC.h1).id,
        protocol: 'tcp',
        old_value: 'http nginx 1.18.0',
        new_value: null,
      });
      expect(find('port_opened')).toMatchObject({ device_id: byMac(before, MAC.h2).id, device_mac: MAC.h2, protocol: 'tcp', old_value: null });
      expect(find('port_opened').new_value).toMatch(/^telnet/);
      expect(find('port_opened').description).toContain('critical');
      expect(find('service_changed')).toMatchObject({ protocol: 'tcp', old_value: 'ssh OpenSSH 8.9p1', new_value: 'ssh OpenSSH 9.6p1' });
      // The host that moved is the same device, and nothing is reported for it.
      expect(changes.some((c) => c.device_mac === MAC.h4 || c.device_ip === '10.66.0.10' || c.device_ip === '10.66.0.14')).toBe(false);

      const after = await devices();
      expect(byMac(after, MAC.h4)).toMatchObject({ id: byMac(before, MAC.h4).id, ip_address: '10.66.0.10', open_ports: [22] });
      expect(after.filter((d) => d.mac_address === MAC.h4)).toHaveLength(1);
      expect(byMac(after, MAC.h1)).toMatchObject({ id: byMac(before, MAC.h1).id, open_ports: [22] });

      // Risk and CVEs re-evaluated: the FTP host now also exposes Telnet; still critical, with both.
      const ftpHost = await expectBackdooredFtp(byMac(after, MAC.h2).id);
      expect(byMac(after, MAC.h2).open_ports).toEqual([21, 23]);
      expect(ftpHost.risk_details.findings).toContainEqual(expect.objectContaining({ port: 23, severity: 'critical', cve_ids: [] }));
    },
    TEST_TIMEOUT_MS * 2,
  );
});
