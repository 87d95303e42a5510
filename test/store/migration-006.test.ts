/**
 * Migration 006 (incremental evaluation) over data written before it: CVE matches that carried
 * copies of the dataset's text become references and still read the same through the store, an
 * id the dataset no longer has still answers, and the background re-evaluation then assesses
 * every device once with the current rules and data.
 */
import { sql } from 'kysely';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { CveDatabase } from '../../src/cve/dataset.js';
import { Reevaluator } from '../../src/scan/reevaluate.js';
import { openStore } from '../../src/store/index.js';
import { testDatabases, withDatabaseBefore } from '../helpers/databases.js';

const AT = '2026-01-01T00:00:00.000Z';

for (const database of testDatabases()) {
  describe(`migration 006 (${database.kind})`, () => {
    it('keeps CVE matches readable as references, and the re-evaluation then assesses every device once', async () => {
      await withDatabaseBefore(database, '006', async (old, { url, pgSchema }) => {
        // The database as the release before migration 006 left it.
        await sql`insert into scans (status, profile, subnet, scan_type, created_at, devices_found) values ('completed', 'normal', '10.66.0.0/24', 'network', ${AT}, 1)`.execute(
          old.db,
        );
        await sql`insert into devices (identity, ip_address, ip_sort, first_seen, last_seen, risk_level, risk_score) values ('ip:10.66.0.5', '10.66.0.5', 172097541, ${AT}, ${AT}, 'critical', 70)`.execute(
          old.db,
        );
        await sql`insert into ports (device_id, port, protocol, state, service, product, version, cpe, first_seen, last_seen)
          values (1, 21, 'tcp', 'open', 'ftp', 'vsftpd', '2.3.4', '["cpe:/a:vsftpd:vsftpd:2.3.4"]', ${AT}, ${AT})`.execute(old.db);
        for (const [id, score, remediation] of [
          ['CVE-2011-2523', 9.8, 'Upgrade vsftpd.'],
          ['CVE-1999-0001', 5, null],
        ] as const) {
          await sql`insert into cve_matches (device_id, scan_id, cve_id, severity, cvss_score, description, remediation, "references", confidence, port, matched_product, matched_version)
            values (1, 1, ${id}, 'critical', ${score}, 'old copy', ${remediation}, '["https://example.invalid"]', 'confirmed', 21, 'vsftpd', '2.3.4')`.execute(
            old.db,
          );
        }
        await old.close();

        const store = await openStore({ url, pgSchema });
        try {
          const cves = new CveDatabase(null);
          const describe = (id: string) => cves.entry(id);
          const shipped = cves.entry('CVE-2011-2523')!;
          const detail = await store.devices.get(1, describe);
          expect(detail?.cves).toEqual([
            {
              id: 'CVE-2011-2523',
              severity: 'critical',
              cvss_score: 9.8,
              description: shipped.description,
              remediation: 'Upgrade vsftpd.',
              references: shipped.references,
              confidence: 'confirmed',
              port: 21,
              matched_product: 'vsftpd',
              matched_version: '2.3.4',
              kev: null,
              epss: null,
              fixed_in: null,
            },
            {
              id: 'CVE-1999-0001',
              severity: 'critical',
              cvss_score: 5,
              description: 'CVE-1999-0001 is no longer in the CVE dataset; the next evaluation drops this match.',
              remediation: null,
              references: [],
              confidence: 'confirmed',
              port: 21,
              matched_product: 'vsftpd',
              matched_version: '2.3.4',
              kev: null,
              epss: null,
              fixed_in: null,
            },
          ]);

          // Devices from before carry no assessment fingerprint: one background pass assesses them.
          const reevaluator = new Reevaluator({ store, log: pino({ level: 'silent' }), ownerId: 'test' });
          expect(await reevaluator.runOnce()).toBe(1);
          expect(await reevaluator.runOnce()).toBe(0);
          expect(await reevaluator.status()).toMatchObject({ state: 'idle', devices_total: 1, devices_done: 1 });
          const after = await store.devices.get(1, describe);
          expect(after?.cves.map((c) => c.id)).toContain('CVE-2011-2523');
          expect(after?.cves.map((c) => c.id)).not.toContain('CVE-1999-0001');
          expect(after?.cves.find((c) => c.id === 'CVE-2011-2523')).toMatchObject({
            description: shipped.description,
            remediation: shipped.remediation,
          });
        } finally {
          await store.close();
        }
      });
    });
  });
}
