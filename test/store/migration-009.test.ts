/**
 * Migration 009 (device search index) over a database written before it: devices that existed
 * before the index are found by search afterwards (SQLite fills the index in the migration;
 * PostgreSQL builds its expression index over the existing rows), and so are devices added later.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { testDatabases, withDatabaseBefore } from '../helpers/databases.js';

const AT = '2026-01-01T00:00:00.000Z';

for (const database of testDatabases()) {
  describe(`migration 009 (${database.kind})`, () => {
    it('makes devices written before it findable by search', async () => {
      await withDatabaseBefore(database, '009', async (old, { url, pgSchema }) => {
        await sql`insert into devices (identity, ip_address, ip_sort, hostname, vendor, label, first_seen, last_seen)
          values ('ip:10.66.0.5', '10.66.0.5', 172097541, 'Kitchen-Display', 'Synology', null, ${AT}, ${AT}),
                 ('ip:10.66.0.6', '10.66.0.6', 172097542, null, 'Raspberry Pi', 'Büro printer', ${AT}, ${AT})`.execute(old.db);
        await old.close();

        const store = await openStore({ url, pgSchema });
        try {
          const find = async (q: string) => (await store.devices.list({ search: q, limit: 100, offset: 0 })).rows.map((r) => r.ip_address);
          expect(await find('kitchen-disp')).toEqual(['10.66.0.5']);
          expect(await find('SYNOLOGY')).toEqual(['10.66.0.5']);
          expect(await find('büro')).toEqual(['10.66.0.6']);
          expect(await find('10.66.0.')).toEqual(['10.66.0.5', '10.66.0.6']);
          expect(await find('nowhere')).toEqual([]);
          await store.devices.updateUserFields(1, { label: 'lobby screen' });
          expect(await find('lobby scr')).toEqual(['10.66.0.5']);
        } finally {
          await store.close();
        }
      });
    });
  });
}
