/**
 * The scored identity resolver on the namespace lab (issue 21 §4–§5), 10.66.0.8/29:
 *
 *   h1 10.66.0.11 B8:27:EB:66:00:01   an SSH banner only (no host key to read): a plain host
 *   h2 10.66.0.12 00:1C:42:66:00:02   NAS "vault-nas", first NIC   } the same mDNS name and SNMP engine ID:
 *   h4 10.66.0.14 00:16:3E:66:00:04   NAS "vault-nas", second NIC  } one host with two interfaces
 *   h3 10.66.0.13 02:66:00:66:00:03   phone "alices-phone" (a locally administered MAC) with a real
 *                                     SSH server; before the third scan it rejoins at 10.66.0.10
 *                                     with a new random MAC
 *
 * The keys come from the recognition responders (test/lab/responders.mjs: mDNS by legacy unicast,
 * SNMP v2c with its engine ID) inside each namespace, and from a real OpenSSH server on the phone
 * (lab.sh sshd: Debian's sshd with a host key made for this lab run, which nobody can log in to),
 * read by the SSH probe through ssh-keyscan. The NAS's two interfaces are two namespaces answering
 * with one identity: what the scanner sees of a host with two NICs (two MACs, two addresses, the
 * same keys). The phone's only strong key is its SSH host key (beside its mDNS name, a medium
 * one). Checked: the NAS is one device with both addresses; the phone holds its host key, exactly
 * as ssh-keygen prints it; a quiet rescan records zero changes; the phone keeps its device id across
 * the new MAC and address, with no device_added/device_removed pair, and its `same_device`
 * decision names the host key. Native engine and nmap, SQLite and PostgreSQL (when
 * TEST_DATABASE_URL is set). Run only under the lab lock:
 *   flock /tmp/nwlab.lock npx vitest run --project lab test/lab/resolver-lab.test.ts
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
import { labCtl, labMacs, labUnavailableReason } from './lab.js';

const unavailable = await labUnavailableReason();
if (unavailable) console.warn(`skipping the namespace-lab resolver tests: ${unavailable}`);
const hasNmap = unavailable ? false : (await nmapVersion()) !== null;
const ENGINES = (hasNmap ? (['native', 'nmap'] as const) : (['native'] as const)).filter(
  (e) => !process.env.NWLAB_ENGINE || e === process.env.NWLAB_ENGINE,
);

const SUBNET = '10.66.0.8/29';
const MAC = labMacs(4);
const PHONE_NEW_MAC = '02:66:00:66:01:03';
const PHONE_NEW_IP = '10.66.0.10';
const RESPONDERS = join(import.meta.dirname, 'responders.mjs');
const NAS_ENGINE_ID = '80001f8880a1b2c3d4e5f60708';

describe.skipIf(unavailable !== null)('identity resolver on the namespace lab', () => {
  const running = new Map<string, ChildProcess>();
  let dir = '';
  /** The phone's SSH host key fingerprint, as ssh-keygen -l prints it (lab.sh sshd). */
  let phoneHostKey = '';

  /** The recognition responders of one lab host at its current address: mDNS, and SNMP with an engine ID if given. */
  async function respond(host: string, ip: string, name: string, engineId?: string): Promise<void> {
    const ns = (await labCtl.hosts()).find((h) => h.name === host)?.namespace;
    if (!ns) throw new Error(`lab host ${host} missing`);
    const ready = join(dir, `${host}-${ip}.json`);
    const child = spawn(
      'ip',
      [
        'netns',
        'exec',
        ns,
        process.execPath,
        RESPONDERS,
        '--address',
        ip,
        '--name',
        name,
        '--only',
        engineId ? 'mdns,snmp' : 'mdns',
        ...(engineId ? ['--engine-id', engineId] : []),
        '--ready',
        ready,
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    running.set(host, child);
    const deadline = Date.now() + 20_000;
    while (!existsSync(ready)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the responders of ${host} did not start`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function silence(host: string): Promise<void> {
    const child = running.get(host);
    running.delete(host);
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }

  /** The first scan's lab: the phone at its own address with its own MAC (its sshd follows it, same host key). */
  async function resetLab(): Promise<void> {
    await silence('h3');
    await labCtl.setMac('h3', MAC.h3);
    await labCtl.move('h3', '10.66.0.13');
    await respond('h3', '10.66.0.13', 'alices-phone');
  }

  beforeAll(async () => {
    await labCtl.down();
    await labCtl.up(4);
    dir = mkdtempSync(join(tmpdir(), 'nw-resolver-lab-'));
    await labCtl.banner('h1', 22, 'SSH-2.0-OpenSSH_9.6p1');
    phoneHostKey = await labCtl.sshd('h3');
    expect(phoneHostKey).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    await respond('h2', '10.66.0.12', 'vault-nas', NAS_ENGINE_ID);
    await respond('h4', '10.66.0.14', 'vault-nas', NAS_ENGINE_ID);
  }, 300_000);

  afterAll(async () => {
    for (const host of [...running.keys()]) await silence(host);
    if (dir) rmSync(dir, { recursive: true, force: true });
    await labCtl.down();
  }, 120_000);

  // Both stores (PostgreSQL when TEST_DATABASE_URL is set, as .ci/run sets it): PostgreSQL adds
  // about as much as SQLite takes, 40 s on the 2-core machine at a load of 10 (70 s at 19).
  const databases = testDatabases();
  for (const database of databases) {
    for (const engine of ENGINES) {
      it(`${engine} engine (${database.kind}): two NICs are one device, a quiet rescan records nothing, the phone with a new MAC keeps its id`, async () => {
        await resetLab();
        let server: TestServer | undefined;
        try {
          let key: string;
          ({ server, key } = await startServerWithAdmin(database, {
            settings: {
              network: { subnet: SUBNET },
              scanning: { engine, port_range: '22', udp_ports: '161,5353', os_detection: false, host_timeout_seconds: 60 },
              recognition: { probes: ['mdns', 'snmp', 'ssh'] },
            },
          }));
          const get = async (path: string) => {
            const res = await server!.request(path, { key });
            expect(res.status, path).toBe(200);
            return readJson(res);
          };
          const scan = async () => {
            const started = await triggerScan(server!, key, { subnet: SUBNET, profile: 'normal' });
            const record = await waitForScan(server!, key, started.scan_id, 180_000);
            expect(record, `scan ${started.scan_id}: ${record.error}`).toMatchObject({ status: 'completed', error: null });
            return record;
          };

          const first = await scan();
          const devices = await get('/api/devices');
          expect(devices.map((d: any) => [d.ip_address, d.mac_address])).toEqual([
            ['10.66.0.11', MAC.h1],
            ['10.66.0.12', MAC.h2],
            ['10.66.0.13', MAC.h3],
          ]);
          const nas = devices[1];
          const nasDetail = await get(`/api/devices/${nas.id}`);
          expect(nasDetail.ip_history.map((h: any) => h.ip_address).sort()).toEqual(['10.66.0.12', '10.66.0.14']);
          const nasIdentity = await get(`/api/devices/${nas.id}/identity`);
          expect(nasIdentity.decisions).toContainEqual(
            expect.objectContaining({ rule: 'second_address', scan_id: first.scan_id, explanation: expect.stringContaining('10.66.0.14') }),
          );
          expect(
            nasIdentity.keys
              .filter((k: any) => k.kind === 'mac')
              .map((k: any) => k.value)
              .sort(),
          ).toEqual([MAC.h2, MAC.h4].sort());
          const phone = devices[2];
          const phoneKeys = (await get(`/api/devices/${phone.id}/identity`)).keys;
          expect(phoneKeys).toContainEqual(expect.objectContaining({ kind: 'mdns_name', value: 'alices-phone.local' }));
          // The host key the real sshd showed, read by ssh-keyscan and fingerprinted by the probe itself.
          expect(phoneKeys).toContainEqual(expect.objectContaining({ kind: 'ssh_host_key', value: phoneHostKey, source: 'ssh' }));
          expect(phoneKeys.filter((k: any) => k.kind === 'snmp_engine_id')).toEqual([]);
          // A banner without a key exchange gives no host key.
          expect((await get(`/api/devices/${devices[0].id}/identity`)).keys.filter((k: any) => k.kind === 'ssh_host_key')).toEqual([]);

          const quiet = await scan();
          expect(await get(`/api/changes?scan_id=${quiet.scan_id}`)).toEqual([]);
          expect((await get('/api/devices')).map((d: any) => d.id)).toEqual(devices.map((d: any) => d.id));

          // The phone leaves and rejoins with a new random MAC at another address.
          await silence('h3');
          await labCtl.setMac('h3', PHONE_NEW_MAC);
          await labCtl.move('h3', PHONE_NEW_IP);
          await respond('h3', PHONE_NEW_IP, 'alices-phone');
          const rejoined = await scan();
          const after = await get('/api/devices');
          // On a failure, what the phone's device at its new address was seen with and why it was kept apart.
          const newcomer = after.find((d: any) => d.ip_address === PHONE_NEW_IP);
          const why = newcomer ? JSON.stringify(await get(`/api/devices/${newcomer.id}/identity`)) : 'no device at the new address';
          expect(
            after.map((d: any) => [d.id, d.ip_address, d.mac_address]),
            why,
          ).toEqual([
            [phone.id, PHONE_NEW_IP, PHONE_NEW_MAC],
            [devices[0].id, '10.66.0.11', MAC.h1],
            [nas.id, '10.66.0.12', MAC.h2],
          ]);
          const changes = await get(`/api/changes?scan_id=${rejoined.scan_id}`);
          expect(changes.filter((c: any) => c.change_type === 'device_added' || c.change_type === 'device_removed')).toEqual([]);
          const identity = await get(`/api/devices/${phone.id}/identity`);
          const decision = identity.decisions.find((d: any) => d.rule === 'same_device');
          expect(decision).toMatchObject({
            scan_id: rejoined.scan_id,
            explanation: expect.stringContaining(`Seen at ${PHONE_NEW_IP} (MAC ${PHONE_NEW_MAC})`),
          });
          // The evidence: the host key (the decision shortens it to its first 20 characters) and the mDNS name.
          expect(decision.explanation).toContain(`SSH host key ${phoneHostKey.slice(0, 20)}`);
          expect(decision.explanation).toContain('mDNS name alices-phone.local');
          expect(identity.keys).toContainEqual(expect.objectContaining({ kind: 'ssh_host_key', value: phoneHostKey }));
          expect(identity.keys).toContainEqual(expect.objectContaining({ kind: 'mac', value: PHONE_NEW_MAC }));
        } finally {
          await server?.close();
        }
      }, 420_000);
    }
  }
});
