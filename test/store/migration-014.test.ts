/**
 * Migration 014 (coverage-aware inventory) over a database written before it: a device's coverage
 * is the port list of the latest completed port scan that saw it, its ports count as verified by
 * that scan at their last sighting, and completed port scans count their devices as examined.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { testDatabases, withDatabaseBefore } from '../helpers/databases.js';

const AT = '2026-01-01T00:00:00.000Z';
const LATER = '2026-01-02T00:00:00.000Z';

for (const database of testDatabases()) {
  describe(`migration 014 (${database.kind})`, () => {
    it('gives devices the coverage of their latest completed port scan, and their ports its verification', async () => {
      await withDatabaseBefore(database, '014', async (old, { url, pgSchema }) => {
        // Scan 1: normal, completed; scan 2: a later quick scan; scan 3: a normal scan that failed.
        await sql`insert into scans (status, profile, subnet, scan_type, created_at, completed_at, devices_found, port_list)
          values ('completed', 'normal', '10.66.0.0/24', 'network', ${AT}, ${AT}, 2, '1-1000,8080'),
                 ('completed', 'quick', '10.66.0.0/24', 'network', ${LATER}, ${LATER}, 2, null),
                 ('failed', 'normal', '10.66.0.0/24', 'network', ${LATER}, ${LATER}, 0, null)`.execute(old.db);
        await sql`insert into devices (identity, ip_address, ip_sort, first_seen, last_seen)
          values ('ip:10.66.0.5', '10.66.0.5', 172097541, ${AT}, ${LATER}),
                 ('ip:10.66.0.6', '10.66.0.6', 172097542, ${LATER}, ${LATER})`.execute(old.db);
        await sql`insert into ports (device_id, port, protocol, state, service, cpe, first_seen, last_seen)
          values (1, 22, 'tcp', 'open', 'ssh', '[]', ${AT}, ${AT})`.execute(old.db);
        await sql`insert into device_snapshots (scan_id, device_id, ip_address, ip_sort, ports, risk_level, risk_score)
          values (1, 1, '10.66.0.5', 172097541, '[]', 'none', 0),
                 (2, 1, '10.66.0.5', 172097541, '[]', 'none', 0),
                 (2, 2, '10.66.0.6', 172097542, '[]', 'none', 0)`.execute(old.db);
        await old.close();

        const store = await openStore({ url, pgSchema });
        try {
          const devices = await store.db.selectFrom('devices').select(['id', 'port_coverage']).orderBy('id').execute();
          expect(devices.map((d) => [d.id, d.port_coverage === null ? null : JSON.parse(d.port_coverage)])).toEqual([
            [1, [{ scan_id: 1, at: AT, ports: '1-1000,8080' }]],
            // Only ever seen by a quick scan: nothing examined.
            [2, null],
          ]);
          expect(
            await store.db.selectFrom('ports').select(['port', 'last_verified_at', 'verified_by_scan_id', 'unverified_scans']).execute(),
          ).toEqual([{ port: 22, last_verified_at: AT, verified_by_scan_id: 1, unverified_scans: 0 }]);
          const scans = await store.db.selectFrom('scans').select(['id', 'hosts_examined']).orderBy('id').execute();
          expect(scans).toEqual([
            { id: 1, hosts_examined: 2 },
            { id: 2, hosts_examined: null },
            { id: 3, hosts_examined: null },
          ]);
          // As the API shows them.
          const detail = (await store.devices.get(1))!;
          expect(detail).toMatchObject({ ports_examined: '1-1000,8080', ports_examined_at: AT, stale_ports: 0 });
          expect(detail.ports[0]).toMatchObject({ port: 22, verified_by_scan_id: 1, last_verified_at: AT, stale: false });
        } finally {
          await store.close();
        }
      });
    });
  });
}
