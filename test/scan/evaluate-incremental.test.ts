/**
 * Incremental evaluation (ScanEvaluator re-assessing only devices whose OS, ports, rules or CVE
 * data changed) over random scan sequences: two real stores receive the same scans through the
 * scan pipeline's writers, one evaluated incrementally and one in full; after every scan, every
 * device as the API shows it (findings, CVEs with their text, risk) and the changes stored are the
 * same in both. Some sequences change the risk rules between scans.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { ScannedPort } from '../../src/core/model.js';
import type { RiskRuleSetting } from '../../src/core/settings.js';
import { ScanEvaluator } from '../../src/scan/evaluate.js';
import type { Store } from '../../src/store/index.js';
import { InventoryWriter } from '../../src/store/inventory.js';
import { testDatabases, type OpenedDatabase } from '../helpers/databases.js';

const P = (
  port: number,
  service: string,
  product: string | null,
  version: string | null,
  cpe: string[] = [],
  extra: string | null = null,
): ScannedPort => ({
  port,
  protocol: 'tcp',
  state: 'open',
  service,
  product,
  version,
  extra_info: extra,
  cpe,
});

/** Port variants per port slot: software with known CVEs, ports risk rules flag, and harmless ones. */
const SLOTS: ScannedPort[][] = [
  [P(21, 'ftp', 'vsftpd', '2.3.4', ['cpe:/a:vsftpd:vsftpd:2.3.4']), P(21, 'ftp', 'vsftpd', '3.0.5', ['cpe:/a:vsftpd:vsftpd:3.0.5'])],
  [
    P(22, 'ssh', 'OpenSSH', '7.4', ['cpe:/a:openbsd:openssh:7.4'], 'protocol 2.0'),
    P(22, 'ssh', 'OpenSSH', '8.9p1 Ubuntu 3ubuntu0.1', ['cpe:/a:openbsd:openssh:8.9p1'], 'Ubuntu Linux; protocol 2.0'),
    P(22, 'ssh', 'OpenSSH', '9.8p1', ['cpe:/a:openbsd:openssh:9.8p1']),
  ],
  [P(23, 'telnet', 'Linux telnetd', null, ['cpe:/o:linux:linux_kernel'])],
  [
    P(80, 'http', 'Apache httpd', '2.4.49', ['cpe:/a:apache:http_server:2.4.49'], '(Unix)'),
    P(80, 'http', 'nginx', '1.24.0', ['cpe:/a:igor_sysoev:nginx:1.24.0']),
  ],
  [P(445, 'microsoft-ds', null, null), P(445, 'netbios-ssn', 'Samba smbd', '3.0.20-Debian', ['cpe:/a:samba:samba'])],
  [P(6379, 'redis', 'Redis key-value store', '5.0.7'), { ...P(6379, 'redis', 'Redis key-value store', '5.0.7'), state: 'filtered' }],
  [P(3306, 'mysql', 'MySQL', '5.7.33', ['cpe:/a:mysql:mysql:5.7.33'])],
];
const OS = [null, 'Linux 2.6.32 - 3.10', 'Microsoft Windows 7 SP1'];
/** A user rule some sequences add and drop between scans: a fingerprint change re-assesses every device. */
const USER_RULES: RiskRuleSetting[][] = [
  [],
  [{ id: 'custom-mysql', port: 3306, severity: 'high', title: 'MySQL reachable' }],
  [{ id: 'telnet', severity: 'low' }],
];

/** One host of a scan: which of the 6 addresses, and per slot a variant or nothing. */
const host = fc.record({
  address: fc.integer({ min: 1, max: 6 }),
  withMac: fc.boolean(),
  os: fc.integer({ min: 0, max: OS.length - 1 }),
  slots: fc.array(fc.option(fc.nat({ max: 2 }), { nil: null }), { minLength: SLOTS.length, maxLength: SLOTS.length }),
});
const scan = fc.record({
  hosts: fc.array(host, { maxLength: 6 }),
  rules: fc.option(fc.integer({ min: 0, max: USER_RULES.length - 1 }), { nil: null, freq: 3 }),
});

type ScanStep = typeof scan extends fc.Arbitrary<infer T> ? T : never;

async function runScan(store: Store, evaluator: ScanEvaluator, step: ScanStep, at: string) {
  if (step.rules !== null) {
    const settings = await store.settings.get();
    await store.settings.put({ ...settings, scanning: { ...settings.scanning, risk_rules: USER_RULES[step.rules] } });
  }
  const record = await store.scans.create({
    status: 'running',
    profile: 'normal',
    subnet: '10.66.0.0/24',
    scan_type: 'network',
    target: null,
    started_at: at,
    completed_at: null,
    duration_seconds: null,
    error: null,
    triggered_by: 'test',
    progress: null,
  });
  // One entry per address (the last wins), as a discovery reports each address once.
  const byAddress = new Map(step.hosts.map((h) => [h.address, h]));
  const hosts = [...byAddress.values()].map((h) => ({
    ip: `10.66.0.${h.address}`,
    mac: h.withMac ? `B8:27:EB:00:00:0${h.address}` : null,
    vendor: null,
    hostname: null,
    os_name: OS[h.os],
    device_type: null,
    ports: h.slots.flatMap((v, i) => (v === null ? [] : [SLOTS[i][v % SLOTS[i].length]])),
  }));
  const inventory = new InventoryWriter(store.db, () => store.touch());
  const { seen } = await inventory.recordDiscovery(record.id, hosts, at);
  const byIp = new Map(seen.map((s) => [s.ip, s.deviceId]));
  await inventory.recordPorts(
    hosts.filter((h) => byIp.has(h.ip)).map((h) => ({ deviceId: byIp.get(h.ip)!, host: h })),
    at,
  );
  const ids = seen.map((s) => s.deviceId);
  const outcome = await evaluator.evaluate({ scan: record, seenDeviceIds: ids, portsScanned: true, portList: [{ low: 1, high: 65535 }], at });
  await inventory.recordSnapshots(record.id, ids);
  await store.scans.update(record.id, { status: 'completed', completed_at: at });
  return outcome;
}

/** Everything a user can see of the outcome: every device as the API shows it, and every change stored. */
async function visible(store: Store, evaluator: ScanEvaluator) {
  const ids = (await store.db.selectFrom('devices').select('id').orderBy('id').execute()).map((d) => d.id);
  const devices = await Promise.all(ids.map((id) => store.devices.get(id, (cve) => evaluator.cves.entry(cve))));
  const changes = await store.db.selectFrom('changes').selectAll().orderBy('id').execute();
  return { devices, changes: changes.map(({ id: _, ...c }) => c) };
}

for (const database of testDatabases()) {
  describe(`incremental evaluation (${database.kind})`, () => {
    const opened: OpenedDatabase[] = [];
    afterAll(async () => {
      for (const o of opened) await o.cleanup();
    });

    it('gives exactly the findings, CVEs, risk and changes of a full evaluation, scan after scan', async () => {
      let assessedIncrementally = 0;
      let assessedInFull = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(scan, { minLength: 1, maxLength: 5 }), async (scans) => {
          const [a, b] = [await database.open(), await database.open()];
          try {
            const incremental = new ScanEvaluator(a.store, null);
            const full = new ScanEvaluator(b.store, null, { incremental: false });
            for (const [n, step] of scans.entries()) {
              const at = new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString();
              const count = async (store: Store) => (await store.db.selectFrom('cve_matches').select('id').execute()).length;
              const outA = await runScan(a.store, incremental, step, at);
              const outB = await runScan(b.store, full, step, at);
              expect(outA.devicesUpdated).toEqual(outB.devicesUpdated);
              expect(outA.changes.map(({ id: _, ...c }) => c)).toEqual(outB.changes.map(({ id: _, ...c }) => c));
              expect(await visible(a.store, incremental)).toEqual(await visible(b.store, full));
              expect(await count(a.store)).toBe(await count(b.store));
            }
            const assessed = async (store: Store) =>
              (await store.db.selectFrom('devices').select('assessed_input').where('assessed_input', 'is not', null).execute()).length;
            assessedIncrementally += await assessed(a.store);
            assessedInFull += await assessed(b.store);
          } finally {
            await a.cleanup();
            await b.cleanup();
          }
        }),
        // Each run opens two fresh databases (migrations and all): fewer runs on PostgreSQL, where that is slower.
        { numRuns: database.kind === 'sqlite' ? 25 : 8 },
      );
      // Both record what they assessed from: the hash is what lets the next scan skip a device.
      expect(assessedIncrementally).toBe(assessedInFull);
    }, 180_000);

    it('leaves unchanged devices untouched and re-assesses only what changed', async () => {
      const db = await database.open();
      opened.push(db);
      const evaluator = new ScanEvaluator(db.store, null);
      const slots = [0, 0, 0, 0, 0, 0, 0];
      const step = (hosts: { address: number; slots: (number | null)[] }[]) => ({
        hosts: hosts.map((h) => ({ ...h, withMac: true, os: 0 })),
        rules: null,
      });
      await runScan(
        db.store,
        evaluator,
        step([
          { address: 1, slots },
          { address: 2, slots },
        ]),
        '2026-01-01T00:00:00.000Z',
      );
      const rowIds = async () => await db.store.db.selectFrom('cve_matches').select(['id', 'device_id']).orderBy('id').execute();
      const before = await rowIds();
      expect(before.length).toBeGreaterThan(0);
      // Device 2's SSH changes version; device 1 is seen again exactly as it was.
      await runScan(
        db.store,
        evaluator,
        step([
          { address: 1, slots },
          { address: 2, slots: [0, 2, 0, 0, 0, 0, 0] },
        ]),
        '2026-01-02T00:00:00.000Z',
      );
      const after = await rowIds();
      const device1 = (rows: { id: number; device_id: number }[]) => rows.filter((r) => r.device_id === 1).map((r) => r.id);
      expect(device1(after)).toEqual(device1(before));
      const device2 = (rows: { id: number; device_id: number }[]) => rows.filter((r) => r.device_id === 2).map((r) => r.id);
      expect(Math.min(...device2(after))).toBeGreaterThan(Math.max(...before.map((r) => r.id)));
    });
  });
}
