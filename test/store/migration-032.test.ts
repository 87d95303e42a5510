/**
 * Migration 032 (recognition evidence as one row per recognition, src/store/evidence.ts) over a
 * database written before it: every device shows the same evidence, in the same order, with the
 * same times; rows a merge moved in stay apart with their own times; a device's evidence digest
 * (of its hits, migration 025) still holds, so the next scan reading the same evidence only dates it.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { evidenceDigest } from '../../src/store/evidence.js';
import { openStore } from '../../src/store/index.js';
import { testDatabases, withDatabaseBefore } from '../helpers/databases.js';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-02T00:00:00.000Z';
const T2 = '2026-01-03T00:00:00.000Z';

/** The old rows, in id order: [device, field, value, source, detail, confidence, observed_at]. */
const OLD: [number, string, string, string, string, number, string][] = [
  [1, 'vendor', 'Synology', 'mdns', 'TXT vendor=Synology', 70, T1],
  [1, 'device_type', 'nas', 'snmp', 'sysDescr names DiskStation', 90, T1],
  [2, 'vendor', 'HP', 'oui', 'MAC vendor "Hewlett Packard"', 50, T1],
  // Moved in by a merge from a device recognised earlier, then the kept device's own again.
  [1, 'name', 'old-nas', 'mdns', 'mDNS name', 60, T0],
  [1, 'model', 'DS920+', 'mdns', 'TXT model=DS920+', 70, T0],
  [1, 'cpe', 'cpe:/o:synology:dsm', 'snmp', 'sysDescr', 80, T1],
];

const item = ([, field, value, source, detail, confidence, observed_at]: (typeof OLD)[number]) => ({
  field,
  value,
  source,
  detail,
  confidence,
  observed_at,
});

for (const database of testDatabases()) {
  describe(`migration 032 (${database.kind})`, () => {
    it('keeps every device’s evidence, order and times; one row per recognition', async () => {
      await withDatabaseBefore(database, '032', async (old, { url, pgSchema }) => {
        await sql`insert into devices (identity, ip_address, ip_sort, first_seen, last_seen, evidence_digest)
          values ('ip:10.66.0.5', '10.66.0.5', 172097541, ${T0}, ${T1}, 'old digest'),
                 ('ip:10.66.0.6', '10.66.0.6', 172097542, ${T0}, ${T1}, ${evidenceDigest(OLD.filter((r) => r[0] === 2).map(item))}),
                 ('ip:10.66.0.7', '10.66.0.7', 172097543, ${T0}, ${T1}, null)`.execute(old.db);
        for (const [device_id, field, value, source, detail, confidence, observed_at] of OLD) {
          await sql`insert into device_evidence (device_id, field, value, source, detail, confidence, observed_at)
            values (${device_id}, ${field}, ${value}, ${source}, ${detail}, ${confidence}, ${observed_at})`.execute(old.db);
        }
        await old.close();

        const store = await openStore({ url, pgSchema });
        try {
          expect((await store.identity.get(1))!.evidence).toEqual(OLD.filter((r) => r[0] === 1).map(item));
          expect((await store.identity.get(2))!.evidence).toEqual(OLD.filter((r) => r[0] === 2).map(item));
          expect((await store.identity.get(3))!.evidence).toEqual([]);
          // Device 1: its rows at T1, the two moved in at T0, its own at T1 again; each row keeps the id of its first.
          const rows = await store.db.selectFrom('device_evidence').select(['id', 'device_id', 'observed_at']).orderBy('id').execute();
          expect(rows).toEqual([
            { id: 1, device_id: 1, observed_at: T1 },
            { id: 3, device_id: 2, observed_at: T1 },
            { id: 4, device_id: 1, observed_at: T0 },
            { id: 6, device_id: 1, observed_at: T1 },
          ]);
          // What reads the evidence by field.
          expect(await store.identity.discoveredValue(1, 'device_type')).toEqual({ value: 'nas', confidence: 90 });
          expect((await store.evaluation.cpesOf([1, 2])).get(1)).toEqual([{ cpe: 'cpe:/o:synology:dsm', source: 'snmp', detail: 'sysDescr' }]);

          // Read again as stored, device 2's one row only gets its time.
          const again = (deviceId: number, evidence: { field: string; value: string; source: string; detail: string; confidence: number }[]) => ({
            deviceId,
            keys: [],
            fields: { device_type: 'unknown', type_confidence: 0, vendor: null, model: null, os_name: null, os_version: null, discovered_name: null },
            evidence,
            reason: '',
            decisions: [],
          });
          await store.identity.recordRecognition(
            null,
            [
              again(
                2,
                [item(OLD[2])].map(({ observed_at: _, ...e }) => e),
              ),
            ],
            T2,
          );
          expect(await store.db.selectFrom('device_evidence').select(['id', 'observed_at']).where('device_id', '=', 2).execute()).toEqual([
            { id: 3, observed_at: T2 },
          ]);
        } finally {
          await store.close();
        }
      });
    });
  });
}
