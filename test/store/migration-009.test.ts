/**
 * Migration 009 (device search index) over a database written before it: devices that existed
 * before the index are found by search afterwards (SQLite fills the index in the migration;
 * PostgreSQL builds its expression index over the existing rows), and so are devices added later.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { knownMigrations, migrateThrough } from '../../src/store/backup-tables.js';
import { dropPgSchema, ensurePgSchema, openDatabase } from '../../src/store/db.js';
import { openStore } from '../../src/store/index.js';
import { testDatabases } from '../helpers/databases.js';

const AT = '2026-01-01T00:00:00.000Z';

for (const database of testDatabases()) {
  describe(`migration 009 (${database.kind})`, () => {
    it('makes devices written before it findable by search', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'netwarden-m009-'));
      const pgSchema = database.kind === 'postgres' ? `nw_m009_${process.pid}_${Date.now()}` : undefined;
      const url = pgSchema ? process.env.TEST_DATABASE_URL! : join(dir, 'netwarden.db');
      if (pgSchema) await ensurePgSchema(url, pgSchema);
      try {
        const old = openDatabase({ url, pgSchema });
        const before = (await knownMigrations()).filter((m) => m < '009');
        await migrateThrough(old.db as unknown as Kysely<unknown>, old.dialect, before, pgSchema);
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
      } finally {
        rmSync(dir, { recursive: true, force: true });
        if (pgSchema) await dropPgSchema(url, pgSchema);
      }
    });
  });
}
