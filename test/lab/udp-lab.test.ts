/**
 * UDP ports on the namespace lab (issue 21 §2): h1 runs the recognition responders
 * (test/lab/responders.mjs: SNMP v2c `public` on 161, NetBIOS on 137, SSDP on 1900, mDNS on 5353)
 * inside its namespace; h2 has no UDP service. A normal scan with the default scanning.udp_ports,
 * with the native engine and with nmap, both stores: h1's UDP services are open (SNMP raises its
 * risk finding); nothing of h2 is open over UDP. Run it only under the lab lock:
 *   flock /tmp/nwlab.lock npx vitest run test/lab/udp-lab.test.ts
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nmapVersion } from '../../src/engines/nmap.js';
import { testDatabases } from '../helpers/databases.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { labCtl, labUnavailableReason } from './lab.js';

const unavailable = await labUnavailableReason();
if (unavailable) console.warn(`skipping namespace-lab tests: ${unavailable}`);
const hasNmap = unavailable ? false : (await nmapVersion()) !== null;
const ENGINES = hasNmap ? (['native', 'nmap'] as const) : (['native'] as const);

const SUBNET = '10.66.0.8/29';
const H1 = '10.66.0.11';
const H2 = '10.66.0.12';
const RESPONDERS = join(import.meta.dirname, 'responders.mjs');

describe.skipIf(unavailable !== null)('UDP ports on the namespace lab', () => {
  let responders: ChildProcess | null = null;
  let dir = '';

  beforeAll(async () => {
    await labCtl.down();
    await labCtl.up(2);
    await labCtl.banner('h1', 22, 'SSH-2.0-OpenSSH_8.9p1');
    await labCtl.banner('h2', 22, 'SSH-2.0-dropbear_2020.81');
    const h1 = (await labCtl.hosts()).find((h) => h.name === 'h1');
    if (!h1) throw new Error('lab host h1 missing');
    dir = mkdtempSync(join(tmpdir(), 'nw-udp-lab-'));
    const ready = join(dir, 'ready.json');
    responders = spawn(
      'ip',
      [
        'netns',
        'exec',
        h1.namespace,
        process.execPath,
        RESPONDERS,
        '--address',
        H1,
        '--name',
        'switch1',
        '--sysdescr',
        'Linux switch1 5.10',
        '--ready',
        ready,
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    const deadline = Date.now() + 20_000;
    while (!existsSync(ready)) {
      if (Date.now() > deadline || responders.exitCode !== null) throw new Error('the lab responders did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 300_000);

  afterAll(async () => {
    if (responders?.pid !== undefined && responders.exitCode === null) responders.kill('SIGTERM');
    if (dir) rmSync(dir, { recursive: true, force: true });
    await labCtl.down();
  }, 120_000);

  describe.each(testDatabases())('$kind', (database) => {
    it.each(ENGINES)(
      'engine %s: the UDP services of h1 are open, SNMP public is a finding, h2 has no open UDP port',
      async (engine) => {
        let server: TestServer | undefined;
        try {
          let key: string;
          ({ server, key } = await startServerWithAdmin(database, {
            settings: { scanning: { engine, os_detection: false, port_range: '22', udp_ports: '53,67,69,123,137,161,500,1900,5353' } },
          }));
          const started = await triggerScan(server, key, { subnet: SUBNET, profile: 'normal' });
          const record = await waitForScan(server, key, started.scan_id, 180_000);
          expect(record, JSON.stringify(record)).toMatchObject({ status: 'completed', ports_examined: '22,udp:53,67,69,123,137,161,500,1900,5353' });
          const list = await readJson(await server.request('/api/devices', { key }));
          const detailOf = async (ip: string) => {
            const d = list.find((x: any) => x.ip_address === ip);
            expect(d, `device ${ip}`).toBeDefined();
            return readJson(await server!.request(`/api/devices/${d.id}`, { key }));
          };
          const h1 = await detailOf(H1);
          const udpOpen = (detail: any) =>
            detail.ports
              .filter((p: any) => p.protocol === 'udp' && p.state === 'open')
              .map((p: any) => p.port)
              .sort((a: number, b: number) => a - b);
          expect(udpOpen(h1)).toEqual(expect.arrayContaining([137, 161]));
          expect(h1.ports.find((p: any) => p.protocol === 'udp' && p.port === 161)).toMatchObject({ service: 'snmp' });
          expect(h1.risk_details.findings).toContainEqual(expect.objectContaining({ title: 'SNMP agent answers', port: 161, protocol: 'udp' }));
          const h2 = await detailOf(H2);
          expect(udpOpen(h2)).toEqual([]);
          expect(h2.risk_details.findings.filter((f: any) => f.protocol === 'udp')).toEqual([]);
        } finally {
          await server?.close();
        }
      },
      300_000,
    );
  });
});
