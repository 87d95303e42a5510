/**
 * Device identity across two scans of the namespace lab (test/lab/lab.sh), with the native engine
 * and with nmap: between the scans one host moves to a new address keeping its MAC, one leaves the
 * segment and one joins. The second scan completes, the host that moved is the same device (label
 * and ip_history kept), the one that left is reported removed and the new one added. Needs root
 * (ip netns add); skipped with a message elsewhere. Scans only 10.66.0.8/29.
 *
 *   h1 10.66.0.11 B8:27:EB:66:00:01   22 SSH
 *   h2 10.66.0.12 00:1C:42:66:00:02   21 FTP
 *   h3 10.66.0.13 02:66:00:66:00:03   22 SSH; leaves before the second scan
 *   h4 10.66.0.14 00:16:3E:66:00:04   22 SSH; moves to 10.66.0.10 before the second scan
 *   h5 10.66.0.9  DC:A6:32:66:00:05   22 SSH; off the segment for the first scan, joins for the second
 *                                     (10.66.0.15 is the block's broadcast address, not probed)
 *
 * Then h1 and h2 swap addresses before a third scan: both stay themselves.
 *
 * The stale-neighbour case: lab.sh move normally deletes the scanner's ARP entry for the old
 * address, as a real network does after a while. With `--keep-neighbour` the entry stays (still
 * complete, with the moved host's MAC), as right after a DHCP renumbering: the native engine then
 * sees the same MAC at the old and the new address.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nmapVersion } from '../../src/engines/nmap.js';
import { testDatabases } from '../helpers/databases.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { adminWithKey, readJson, startTestServer, type TestServer } from '../helpers/server.js';
import { labCtl, labMacs, labUnavailableReason } from './lab.js';

const unavailable = await labUnavailableReason();
if (unavailable) console.warn(`skipping the namespace-lab identity tests: ${unavailable}`);
const hasNmap = unavailable ? false : (await nmapVersion()) !== null;
if (!unavailable && !hasNmap) console.warn('skipping the nmap namespace-lab identity tests: nmap is not installed (apt-get install nmap)');

const SUBNET = '10.66.0.8/29';
const MAC = labMacs(5);
const PORT_RANGE = '21,22,80';
const SCAN_TIMEOUT_MS = 180_000;
const TEST_TIMEOUT_MS = 420_000;

/** The first scan's lab: h1..h4 at their own addresses, h5 off the segment. Idempotent. */
async function resetLab(): Promise<void> {
  await labCtl.up(5);
  await labCtl.move('h4', '10.66.0.14');
  await labCtl.move('h5', '10.66.0.9');
  await labCtl.move('h1', '10.66.0.8');
  await labCtl.move('h2', '10.66.0.12');
  await labCtl.move('h1', '10.66.0.11');
  for (const h of ['h1', 'h2', 'h3', 'h4']) await labCtl.start(h);
  await labCtl.stop('h5');
}

interface Device {
  id: number;
  ip_address: string;
  mac_address: string | null;
  label: string | null;
  online: boolean;
  open_ports: number[];
}

interface Change {
  change_type: string;
  device_id: number | null;
  device_ip: string | null;
  device_mac: string | null;
}

function byMac(list: Device[], mac: string): Device {
  const found = list.filter((d) => d.mac_address === mac);
  if (found.length !== 1)
    throw new Error(`${found.length} devices with MAC ${mac} in ${JSON.stringify(list.map((d) => [d.id, d.ip_address, d.mac_address]))}`);
  return found[0];
}

describe.skipIf(unavailable !== null)('device identity on the namespace lab (bridge nwlab0, 10.66.0.0/24)', () => {
  beforeAll(async () => {
    // Start clean: a previous run that crashed may have left part of a lab behind. Both wait while
    // another test run or a benchmark owns the lab.
    await labCtl.down();
    await labCtl.up(5);
    for (const h of ['h1', 'h3', 'h4', 'h5']) await labCtl.banner(h, 22, 'SSH-2.0-OpenSSH_9.6p1');
    await labCtl.banner('h2', 21, '220 (vsFTPd 3.0.5)');
  }, 420_000);
  afterAll(() => labCtl.down(), 120_000);

  const databases = process.env.NWLAB_ALL_DATABASES ? testDatabases() : testDatabases().filter((d) => d.kind === 'sqlite');
  const engines = [
    { engine: 'native', keepNeighbour: false, run: true },
    { engine: 'native', keepNeighbour: true, run: true },
    { engine: 'nmap', keepNeighbour: false, run: hasNmap },
    { engine: 'nmap', keepNeighbour: true, run: hasNmap },
  ] as const;

  for (const database of databases) {
    for (const { engine, keepNeighbour, run } of engines) {
      const title = `${engine} engine (${database.kind}): moved, left and joined hosts${keepNeighbour ? ', old address still in the ARP table' : ''}`;
      describe.skipIf(!run)(title, () => {
        let server: TestServer;
        let key: string;

        beforeAll(async () => {
          await resetLab();
          server = await startTestServer(database, {
            settings: {
              network: { subnet: SUBNET },
              // Identity across moves is the subject here: UDP ports and recognition probes have labs of
              // their own (udp-lab, test/api/device-identity.test.ts) and would only slow these scans.
              scanning: { engine, port_range: PORT_RANGE, host_timeout_seconds: 60, os_detection: false, udp_ports: '' },
              recognition: { probes: [] },
            },
          });
          ({ key } = await adminWithKey(server));
        }, 420_000);
        afterAll(async () => {
          await server?.close();
        });

        async function scan(): Promise<any> {
          const started = await triggerScan(server, key, { subnet: SUBNET, profile: 'normal' });
          const record = await waitForScan(server, key, started.scan_id, SCAN_TIMEOUT_MS);
          expect(record, `scan ${started.scan_id}: ${record.error}`).toMatchObject({ status: 'completed', error: null });
          return record;
        }
        const devices = async (): Promise<Device[]> => readJson(await server.request('/api/devices', { key }));

        it(
          'the second scan completes: same device for the moved host, the one that left removed, the new one added',
          async () => {
            const first = await scan();
            expect(first.devices_found).toBe(4);
            const before = await devices();
            expect(before.map((d) => [d.ip_address, d.mac_address])).toEqual([
              ['10.66.0.11', MAC.h1],
              ['10.66.0.12', MAC.h2],
              ['10.66.0.13', MAC.h3],
              ['10.66.0.14', MAC.h4],
            ]);
            const moved = byMac(before, MAC.h4);
            const put = await server.request(`/api/devices/${moved.id}`, { method: 'PUT', key, json: { label: 'lab gateway' } });
            expect(put.status).toBe(200);

            await labCtl.stop('h3');
            if (keepNeighbour) await labCtl.moveKeepingNeighbour('h4', '10.66.0.10');
            else await labCtl.move('h4', '10.66.0.10');
            await labCtl.start('h5');

            const second = await scan();
            const after = await devices();
            expect(after.map((d) => [d.ip_address, d.mac_address, d.online])).toEqual([
              ['10.66.0.9', MAC.h5, true],
              ['10.66.0.10', MAC.h4, true],
              ['10.66.0.11', MAC.h1, true],
              ['10.66.0.12', MAC.h2, true],
              ['10.66.0.13', MAC.h3, false],
            ]);
            expect(second.devices_found).toBe(4);
            expect(byMac(after, MAC.h4)).toMatchObject({ id: moved.id, label: 'lab gateway', open_ports: [22] });
            const info = await readJson(await server.request(`/api/devices/${moved.id}`, { key }));
            expect(info.ip_history.map((h: { ip_address: string }) => h.ip_address).sort()).toEqual(['10.66.0.10', '10.66.0.14']);

            const changes: Change[] = await readJson(await server.request(`/api/changes?scan_id=${second.scan_id}`, { key }));
            const summary = changes
              .filter((c) => c.change_type === 'device_added' || c.change_type === 'device_removed')
              .map((c) => [c.change_type, c.device_ip, c.device_mac])
              .sort();
            expect(summary).toEqual([
              ['device_added', '10.66.0.9', MAC.h5],
              ['device_removed', '10.66.0.13', MAC.h3],
            ]);
            expect(changes.some((c) => c.device_mac === MAC.h4)).toBe(false);
          },
          TEST_TIMEOUT_MS,
        );

        it(
          'two hosts that swapped addresses stay themselves',
          async () => {
            const before = await devices();
            const [first, second] = [byMac(before, MAC.h1), byMac(before, MAC.h2)];
            expect([first.ip_address, second.ip_address]).toEqual(['10.66.0.11', '10.66.0.12']);
            const put = await server.request(`/api/devices/${first.id}`, { method: 'PUT', key, json: { label: 'lab pi' } });
            expect(put.status).toBe(200);

            const move = keepNeighbour ? labCtl.moveKeepingNeighbour : labCtl.move;
            await move('h1', '10.66.0.8');
            await move('h2', '10.66.0.11');
            await move('h1', '10.66.0.12');

            const third = await scan();
            expect(third.devices_found).toBe(4);
            const after = await devices();
            expect(after.map((d) => [d.ip_address, d.mac_address, d.online])).toEqual([
              ['10.66.0.9', MAC.h5, true],
              ['10.66.0.10', MAC.h4, true],
              ['10.66.0.11', MAC.h2, true],
              ['10.66.0.12', MAC.h1, true],
              ['10.66.0.13', MAC.h3, false],
            ]);
            expect(byMac(after, MAC.h1)).toMatchObject({ id: first.id, label: 'lab pi', open_ports: [22] });
            expect(byMac(after, MAC.h2)).toMatchObject({ id: second.id, open_ports: [21] });
            const changes: Change[] = await readJson(await server.request(`/api/changes?scan_id=${third.scan_id}`, { key }));
            expect(changes.filter((c) => c.change_type === 'device_added' || c.change_type === 'device_removed')).toEqual([]);
          },
          TEST_TIMEOUT_MS,
        );
      });
    }
  }
});
