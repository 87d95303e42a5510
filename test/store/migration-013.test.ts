/**
 * Migration 013 (scan port lists, guessed services) over a database written before it: completed
 * scans get the port list they most likely examined (the configured port_range for normal scans,
 * every port for intensive ones, none for quick or unfinished ones), and ports read as not guessed.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { testDatabases, withDatabaseBefore } from '../helpers/databases.js';

const AT = '2026-01-01T00:00:00.000Z';

for (const database of testDatabases()) {
  describe(`migration 013 (${database.kind})`, () => {
    it.each([
      ['the configured port_range', JSON.stringify({ scanning: { port_range: '1-2000, 8443' } }), '1-2000,8443'],
      ['the former default without a stored configuration', null, '1-1000'],
    ])('gives completed scans %s', async (_case, config, expected) => {
      await withDatabaseBefore(database, '013', async (old, { url, pgSchema }) => {
        if (config !== null) await sql`insert into settings (key, value, updated_at) values ('config', ${config}, ${AT})`.execute(old.db);
        await sql`insert into scans (status, profile, subnet, scan_type, created_at)
          values ('completed', 'normal', '10.66.0.0/24', 'network', ${AT}),
                 ('completed', 'intensive', '10.66.0.0/24', 'network', ${AT}),
                 ('completed', 'quick', '10.66.0.0/24', 'network', ${AT}),
                 ('failed', 'normal', '10.66.0.0/24', 'network', ${AT})`.execute(old.db);
        await sql`insert into devices (identity, ip_address, ip_sort, first_seen, last_seen)
          values ('ip:10.66.0.5', '10.66.0.5', 172097541, ${AT}, ${AT})`.execute(old.db);
        await sql`insert into ports (device_id, port, protocol, state, service, cpe, first_seen, last_seen)
          values (1, 8081, 'tcp', 'open', 'blackice-icecap', '[]', ${AT}, ${AT})`.execute(old.db);
        await old.close();

        const store = await openStore({ url, pgSchema });
        try {
          const lists = await store.db.selectFrom('scans').select(['profile', 'status', 'port_list']).orderBy('id').execute();
          expect(lists).toEqual([
            { profile: 'normal', status: 'completed', port_list: expected },
            { profile: 'intensive', status: 'completed', port_list: '1-65535' },
            { profile: 'quick', status: 'completed', port_list: null },
            { profile: 'normal', status: 'failed', port_list: null },
          ]);
          const port = await store.db.selectFrom('ports').select(['port', 'service_guessed']).executeTakeFirstOrThrow();
          expect(port).toEqual({ port: 8081, service_guessed: 0 });
        } finally {
          await store.close();
        }
      });
    });
  });
}
