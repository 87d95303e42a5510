/**
 * Real scans of the namespace lab (test/lab/lab.sh): hosts in their own network namespaces on the
 * project's bridge nwlab0, 10.66.0.0/24, with fixed MACs and listeners. Needs root (ip netns add);
 * skipped with a message elsewhere. Scans only 10.66.0.8/29 and addresses inside it.
 *
 *   h1 10.66.0.11 B8:27:EB:66:00:01 (Raspberry Pi Foundation)  22 SSH (OpenSSH banner), 80 HTTP (nginx)
 *   h2 10.66.0.12 00:1C:42:66:00:02 (Parallels)                21 FTP (vsftpd), 8080 HTTP behind an iptables DROP
 *   h3 10.66.0.13 02:66:00:66:00:03 (locally administered)      80 HTTP (lighttpd)
 *   h4 10.66.0.14 00:16:3E:66:00:04 (Xensource)                 22 SSH (dropbear banner)
 *   10.66.0.8, .9, .10 and .15: no host.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nmapVersion } from '../../src/engines/nmap.js';
import { testDatabases } from '../helpers/databases.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { labCtl, labMacs, labUnavailableReason } from './lab.js';

const unavailable = await labUnavailableReason();
if (unavailable) console.warn(`skipping namespace-lab tests: ${unavailable}`);
const hasNmap = unavailable ? false : (await nmapVersion()) !== null;
if (!unavailable && !hasNmap) console.warn('skipping the nmap namespace-lab tests: nmap is not installed (apt-get install nmap)');

const SUBNET = '10.66.0.8/29';
const ABSENT = ['10.66.0.8', '10.66.0.9', '10.66.0.10', '10.66.0.15'];
const LIVE = ['10.66.0.11', '10.66.0.12', '10.66.0.13', '10.66.0.14'];
const MAC = labMacs(4);
/** Listener ports, one closed port (23) and the filtered one (8080). */
const PORT_RANGE = '21,22,23,80,8080';
const SCAN_TIMEOUT_MS = 180_000;
const TEST_TIMEOUT_MS = 300_000;

const SSH_BANNER = 'SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.10';

async function buildLab(): Promise<void> {
  // Start clean: a previous run that crashed may have left part of a lab behind.
  await labCtl.down();
  await labCtl.up(4);
  await labCtl.banner('h1', 22, SSH_BANNER);
  await labCtl.http('h1', 80, 'nginx/1.18.0');
  await labCtl.banner('h2', 21, '220 (vsFTPd 3.0.5)');
  // Something listens on 8080, so if the DROP did not work the port would be open, never filtered.
  await labCtl.http('h2', 8080, 'Jetty(9.4.z-SNAPSHOT)');
  await labCtl.filter('h2', 8080);
  await labCtl.http('h3', 80, 'lighttpd/1.4.59');
  await labCtl.banner('h4', 22, 'SSH-2.0-dropbear_2020.81');
}

interface Device {
  id: number;
  ip_address: string;
  mac_address: string | null;
  mac_randomized: boolean;
  vendor: string | null;
  label: string | null;
  online: boolean;
  open_ports: number[];
}

async function devices(server: TestServer, key: string): Promise<Device[]> {
  return readJson(await server.request('/api/devices', { key }));
}

async function detail(server: TestServer, key: string, id: number): Promise<any> {
  const res = await server.request(`/api/devices/${id}`, { key });
  expect(res.status).toBe(200);
  return readJson(res);
}

function byMac(list: Device[], mac: string): Device {
  const found = list.find((d) => d.mac_address === mac);
  if (!found) throw new Error(`no device with MAC ${mac} in ${JSON.stringify(list.map((d) => [d.ip_address, d.mac_address]))}`);
  return found;
}

async function scan(server: TestServer, key: string, profile: 'quick' | 'normal'): Promise<any> {
  const started = await triggerScan(server, key, { subnet: SUBNET, profile });
  const record = await waitForScan(server, key, started.scan_id, SCAN_TIMEOUT_MS);
  expect(record, `scan ${started.scan_id}: ${record.error}`).toMatchObject({ status: 'completed', error: null });
  return record;
}

describe.skipIf(unavailable !== null)('namespace lab (bridge nwlab0, 10.66.0.0/24)', () => {
  beforeAll(buildLab, 360_000);
  afterAll(() => labCtl.down(), 120_000);

  // Scans are slow, so PostgreSQL joins only when asked for (NWLAB_ALL_DATABASES=1); the
  // inventory code paths are the same ones the loopback and API tests run on both stores.
  const databases = process.env.NWLAB_ALL_DATABASES ? testDatabases() : testDatabases().filter((d) => d.kind === 'sqlite');

  describe.skipIf(!hasNmap).each(databases)('nmap engine ($kind)', (database) => {
    let server: TestServer;
    let key: string;

    beforeAll(async () => {
      ({ server, key } = await startServerWithAdmin(database, {
        settings: {
          network: { subnet: SUBNET },
          scanning: { engine: 'nmap', port_range: PORT_RANGE, host_timeout_seconds: 60, os_detection: false },
        },
      }));
    });
    afterAll(async () => {
      await server?.close();
    });

    it(
      'discovers the live hosts with their MACs and vendors, and no host at the empty addresses',
      async () => {
        const record = await scan(server, key, 'normal');
        expect(record).toMatchObject({ devices_found: 4, subnet: SUBNET, scan_type: 'network' });

        const list = await devices(server, key);
        expect(list.map((d) => d.ip_address)).toEqual(LIVE);
        for (const ip of ABSENT) expect(list.some((d) => d.ip_address === ip)).toBe(false);

        const pi = byMac(list, MAC.h1);
        expect(pi).toMatchObject({ ip_address: '10.66.0.11', mac_randomized: false, online: true, open_ports: [22, 80] });
        expect(pi.vendor).toContain('Raspberry Pi');
        expect(byMac(list, MAC.h2).vendor).toMatch(/Parallels/);
        expect(byMac(list, MAC.h4).vendor).toMatch(/Xensource/);
        const randomised = byMac(list, MAC.h3);
        expect(randomised).toMatchObject({ ip_address: '10.66.0.13', mac_randomized: true, vendor: null, open_ports: [80] });

        const piDetail = await detail(server, key, pi.id);
        expect(piDetail.ports).toEqual([
          expect.objectContaining({ port: 22, state: 'open', service: 'ssh', product: 'OpenSSH', version: '8.9p1 Ubuntu 3ubuntu0.10' }),
          expect.objectContaining({ port: 80, state: 'open', service: 'http', product: 'nginx', version: '1.18.0' }),
        ]);
        expect(piDetail.ip_history.map((h: { ip_address: string }) => h.ip_address)).toEqual(['10.66.0.11']);

        const perScan = await readJson(await server.request(`/api/scans/${record.scan_id}/devices`, { key }));
        expect(perScan.map((d: { ip_address: string }) => d.ip_address)).toEqual(LIVE);
        expect(perScan.find((d: { mac_address: string }) => d.mac_address === MAC.h4).open_ports).toEqual([22]);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'reports a port dropped by the host firewall as filtered, never open',
      async () => {
        const list = await devices(server, key);
        const ftpHost = byMac(list, MAC.h2);
        expect(ftpHost.open_ports).toEqual([21]);
        const ports = (await detail(server, key, ftpHost.id)).ports;
        expect(ports.find((p: { port: number }) => p.port === 21)).toMatchObject({
          state: 'open',
          service: 'ftp',
          product: 'vsftpd',
          version: '3.0.5',
        });
        expect(ports.find((p: { port: number }) => p.port === 8080)).toMatchObject({ state: 'filtered' });
        expect(ports.filter((p: { state: string }) => p.state === 'open').map((p: { port: number }) => p.port)).toEqual([21]);
        // Closed ports are not part of the inventory.
        expect(ports.some((p: { port: number }) => p.port === 23)).toBe(false);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'marks a host that left the network offline, and back online when it returns',
      async () => {
        await labCtl.stop('h3');
        try {
          const record = await scan(server, key, 'quick');
          expect(record.devices_found).toBe(3);
          const list = await devices(server, key);
          expect(byMac(list, MAC.h3)).toMatchObject({ ip_address: '10.66.0.13', online: false });
          // A quick scan keeps what the last port scan found.
          expect(byMac(list, MAC.h3).open_ports).toEqual([80]);
          for (const mac of [MAC.h1, MAC.h2, MAC.h4]) expect(byMac(list, mac).online).toBe(true);
        } finally {
          await labCtl.start('h3');
        }
        const again = await scan(server, key, 'quick');
        expect(again.devices_found).toBe(4);
        expect(byMac(await devices(server, key), MAC.h3).online).toBe(true);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'keeps the identity, label and history of a host that moved to a new address',
      async () => {
        const before = byMac(await devices(server, key), MAC.h4);
        expect(before.ip_address).toBe('10.66.0.14');
        const put = await server.request(`/api/devices/${before.id}`, { method: 'PUT', key, json: { label: 'lab gateway', notes: 'moves around' } });
        expect(put.status).toBe(200);

        await labCtl.move('h4', '10.66.0.10');
        try {
          const record = await scan(server, key, 'normal');
          expect(record.devices_found).toBe(4);
          const list = await devices(server, key);
          expect(list).toHaveLength(4);
          const after = byMac(list, MAC.h4);
          expect(after).toMatchObject({ id: before.id, ip_address: '10.66.0.10', label: 'lab gateway', online: true, open_ports: [22] });
          expect(list.some((d) => d.ip_address === '10.66.0.14')).toBe(false);
          const info = await detail(server, key, before.id);
          expect(info.notes).toBe('moves around');
          expect(info.ip_history.map((h: { ip_address: string }) => h.ip_address).sort()).toEqual(['10.66.0.10', '10.66.0.14']);
        } finally {
          await labCtl.move('h4', '10.66.0.14');
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'scans a single device',
      async () => {
        const res = await server.request('/api/scan/device/10.66.0.11', { method: 'POST', key });
        expect(res.status).toBe(200);
        const started = await readJson(res);
        expect(started).toMatchObject({ status: 'started', subnet: '10.66.0.11/32', target: '10.66.0.11', profile: 'normal' });
        const record = await waitForScan(server, key, started.scan_id, SCAN_TIMEOUT_MS);
        expect(record).toMatchObject({ status: 'completed', error: null, scan_type: 'device', target: '10.66.0.11', devices_found: 1 });
        const perScan = await readJson(await server.request(`/api/scans/${started.scan_id}/devices`, { key }));
        expect(perScan).toEqual([expect.objectContaining({ ip_address: '10.66.0.11', mac_address: MAC.h1, open_ports: [22, 80] })]);
        // The other devices are untouched by a single-device scan.
        const list = await devices(server, key);
        for (const d of list) expect(d.online).toBe(true);

        // An address with no host: the scan completes and finds nothing.
        const empty = await readJson(await server.request('/api/scan/device/10.66.0.9', { method: 'POST', key }));
        const emptyRecord = await waitForScan(server, key, empty.scan_id, SCAN_TIMEOUT_MS);
        expect(emptyRecord).toMatchObject({ status: 'completed', devices_found: 0 });
      },
      TEST_TIMEOUT_MS,
    );
  });

  describe('native engine (sqlite)', () => {
    let server: TestServer;
    let key: string;

    beforeAll(async () => {
      ({ server, key } = await startServerWithAdmin(testDatabases()[0], {
        settings: {
          network: { subnet: SUBNET },
          scanning: { engine: 'native', port_range: PORT_RANGE, host_timeout_seconds: 60, os_detection: false },
        },
      }));
    });
    afterAll(async () => {
      await server?.close();
    });

    it(
      'discovers the live hosts with MACs from the neighbour table, and their open ports',
      async () => {
        const health = await readJson(await server.request('/health'));
        expect(health.engine).toBe('native');

        const record = await scan(server, key, 'normal');
        expect(record.devices_found).toBe(4);
        const list = await devices(server, key);
        expect(list.map((d) => d.ip_address)).toEqual(LIVE);
        expect(list.map((d) => d.mac_address)).toEqual([MAC.h1, MAC.h2, MAC.h3, MAC.h4]);
        expect(byMac(list, MAC.h1).vendor).toContain('Raspberry Pi');
        expect(byMac(list, MAC.h3)).toMatchObject({ mac_randomized: true, vendor: null });
        expect(list.map((d) => d.open_ports)).toEqual([[22, 80], [21], [80], [22]]);

        const pi = await detail(server, key, byMac(list, MAC.h1).id);
        expect(pi.ports).toEqual([
          expect.objectContaining({ port: 22, state: 'open', service: 'ssh', product: 'OpenSSH' }),
          expect.objectContaining({ port: 80, state: 'open', service: 'http', product: 'nginx', version: '1.18.0' }),
        ]);
        const ftp = await detail(server, key, byMac(list, MAC.h2).id);
        expect(ftp.ports.find((p: { port: number }) => p.port === 21)).toMatchObject({ state: 'open', service: 'ftp', product: 'vsftpd' });
        expect(ftp.ports.find((p: { port: number }) => p.port === 8080)?.state ?? 'filtered').toBe('filtered');
      },
      TEST_TIMEOUT_MS,
    );
  });
});
