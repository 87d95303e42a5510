/**
 * A CVE dataset change (`netwarden cve import` writing <data dir>/cve-imported.json) has every
 * device assessed again once, by one of the instances sharing the database.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { IMPORTED_FORMAT, importedFilePath, type ImportedCveFile } from '../../src/cve/dataset.js';
import { ScanEvaluator } from '../../src/scan/evaluate.js';
import { Reevaluator } from '../../src/scan/reevaluate.js';
import { InventoryWriter } from '../../src/store/inventory.js';
import { freshDatabaseEachTest, testDatabases, type OpenedDatabase } from '../helpers/databases.js';

const AT = '2026-01-01T00:00:00.000Z';

for (const database of testDatabases()) {
  describe(`re-evaluation after a CVE import (${database.kind})`, () => {
    let db: OpenedDatabase;
    freshDatabaseEachTest(database, (opened) => (db = opened));
    const dataDir = mkdtempSync(join(tmpdir(), 'netwarden-reevaluate-'));
    afterEach(() => rmSync(importedFilePath(dataDir), { force: true }));

    it('assesses every device once, on one instance, and the new CVE shows', async () => {
      const { store } = db;
      const scan = await store.scans.create({
        status: 'running',
        profile: 'normal',
        subnet: '10.66.0.0/24',
        scan_type: 'network',
        target: null,
        started_at: AT,
        completed_at: null,
        duration_seconds: null,
        error: null,
        triggered_by: 'test',
        progress: null,
      });
      const inventory = new InventoryWriter(store.db, () => store.touch());
      const hosts = [1, 2, 3].map((n) => ({
        ip: `10.66.0.${n}`,
        mac: null,
        vendor: null,
        hostname: null,
        os_name: null,
        device_type: null,
        ports: [
          {
            port: 21,
            protocol: 'tcp' as const,
            state: 'open',
            service: 'ftp',
            product: 'vsftpd',
            version: '3.0.3',
            extra_info: null,
            cpe: ['cpe:/a:vsftpd:vsftpd:3.0.3'],
          },
        ],
      }));
      const { seen } = await inventory.recordDiscovery(scan.id, hosts, AT);
      await inventory.recordPorts(
        seen.map((s, i) => ({ deviceId: s.deviceId, host: hosts[i] })),
        AT,
      );
      const evaluator = new ScanEvaluator(store, dataDir);
      await evaluator.evaluate({ scan, seenDeviceIds: seen.map((s) => s.deviceId), portsScanned: true, portList: [{ low: 1, high: 65535 }], at: AT });

      const log = pino({ level: 'silent' });
      const [a, b] = ['instance-a', 'instance-b'].map((ownerId) => new Reevaluator({ store, log, ownerId, dataDir }));
      // Devices assessed by their scan: the first pass only records the fingerprint.
      expect(await a.runOnce()).toBe(0);

      const imported: ImportedCveFile = {
        format: IMPORTED_FORMAT,
        version: 1,
        updated_at: AT,
        cves: [
          {
            id: 'CVE-2099-0001',
            cvss_score: 9.1,
            cvss_vector: null,
            cvss_version: '3.1',
            description: 'A test vulnerability in every vsftpd before 9.',
            remediation: 'Upgrade vsftpd.',
            references: ['https://example.invalid/CVE-2099-0001'],
            kev: false,
            affected: [{ cpe: 'beasts:vsftpd', versionEndExcluding: '9' }],
          },
        ],
        kev: {},
        sources: [],
      };
      writeFileSync(importedFilePath(dataDir), JSON.stringify(imported));

      // Both instances notice; the lease lets exactly one do the work.
      const done = await Promise.all([a.runOnce(), b.runOnce()]);
      expect(done.reduce((x, y) => x + y, 0)).toBe(3);
      expect(await a.status()).toMatchObject({ state: 'idle', devices_total: 3, devices_done: 3 });
      expect(await Promise.all([a.runOnce(), b.runOnce()])).toEqual([0, 0]);

      for (const { deviceId } of seen) {
        const device = await store.devices.get(deviceId, (id) => evaluator.cves.entry(id));
        expect(device?.cves).toContainEqual(
          expect.objectContaining({
            id: 'CVE-2099-0001',
            description: 'A test vulnerability in every vsftpd before 9.',
            references: ['https://example.invalid/CVE-2099-0001'],
            port: 21,
          }),
        );
      }
    });
  });
}
