import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { freshDatabaseEachTest, testDatabases } from '../helpers/databases.js';

/**
 * Migration 031 replaced PostgreSQL's foreign keys of ports, risk_findings and cve_matches with
 * triggers; the rules stay those of the foreign keys, which SQLite keeps: the same test on both.
 */
describe.each(testDatabases())('migration 031: references of the bulk-written tables ($kind)', (database) => {
  let store: Store;
  freshDatabaseEachTest(database, (opened) => {
    store = opened.store;
  });

  const setup = async () => {
    await sql`insert into scans (id, status, subnet, profile, scan_type, created_at)
      values (1, 'completed', '10.0.0.0/24', 'quick', 'network', '2026-01-01T00:00:00Z'),
             (2, 'completed', '10.0.0.0/24', 'quick', 'network', '2026-01-01T00:00:00Z')`.execute(store.db);
    await sql`insert into devices (id, identity, ip_address, ip_sort, first_seen, last_seen)
      values (1, 'a', '10.0.0.1', 1, 'x', 'x'), (2, 'b', '10.0.0.2', 2, 'x', 'x')`.execute(store.db);
  };
  const finding = (device: number, scan: number | null) =>
    sql`insert into risk_findings (device_id, scan_id, severity, score, title, description, recommendation)
      values (1, 1, 'low', 1, '', '', ''), (${device}, ${scan}, 'low', 1, '', '', '')`.execute(store.db);
  const cve = (device: number, scan: number | null) =>
    sql`insert into cve_matches (device_id, scan_id, cve_id, severity, confidence) values (${device}, ${scan}, 'CVE-2020-0001', 'low', 'high')`.execute(
      store.db,
    );
  const port = (device: number) =>
    sql`insert into ports (device_id, port, protocol, state, first_seen, last_seen) values (${device}, 22, 'tcp', 'open', 'x', 'x')`.execute(
      store.db,
    );
  const count = async (table: string, where = sql`1 = 1`) =>
    Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where ${where}`.execute(store.db)).rows[0].n);
  const refused = async (write: Promise<unknown>) => {
    const err = (await write.then(
      () => null,
      (e: unknown) => e,
    )) as { code?: string } | null;
    expect(err).not.toBeNull();
    expect(String(err!.code)).toMatch(/^(23503|SQLITE_CONSTRAINT_FOREIGNKEY)$/);
  };

  it('refuses rows naming a device or scan that does not exist, and nothing of the statement is written', async () => {
    await setup();
    await refused(finding(9, 1));
    await refused(finding(2, 9));
    await refused(cve(9, 1));
    await refused(cve(1, 9));
    await refused(port(9));
    expect(await count('risk_findings')).toBe(0);
    await finding(2, null);
    await cve(2, 2);
    await port(2);
    expect([await count('risk_findings'), await count('cve_matches'), await count('ports')]).toEqual([2, 1, 1]);
  });

  it('refuses moving rows to a device that does not exist; moving them to one that does is fine', async () => {
    await setup();
    await finding(2, 1);
    await port(2);
    await refused(sql`update risk_findings set device_id = 9 where device_id = 2`.execute(store.db));
    await refused(sql`update ports set device_id = 9`.execute(store.db));
    await cve(1, 1);
    await refused(sql`update cve_matches set scan_id = 9`.execute(store.db));
    await sql`update risk_findings set device_id = 1, score = 2 where device_id = 2`.execute(store.db);
    await sql`update ports set device_id = 1`.execute(store.db);
    expect(await count('risk_findings', sql`device_id = 1`)).toBe(2);
    expect(await count('ports', sql`device_id = 1`)).toBe(1);
  });

  it("deleting devices deletes their rows; deleting scans forgets them in the others' rows", async () => {
    await setup();
    await finding(2, 2);
    await cve(1, 1);
    await cve(2, 2);
    await port(1);
    await port(2);
    await sql`delete from devices where id = 1`.execute(store.db);
    expect(await count('risk_findings', sql`device_id = 1`)).toBe(0);
    expect(await count('cve_matches', sql`device_id = 1`)).toBe(0);
    expect(await count('ports', sql`device_id = 1`)).toBe(0);
    expect([await count('risk_findings'), await count('cve_matches'), await count('ports')]).toEqual([1, 1, 1]);
    await sql`delete from scans where id = 2`.execute(store.db);
    expect(await count('risk_findings', sql`scan_id is null and device_id = 2`)).toBe(1);
    expect(await count('cve_matches', sql`scan_id is null and device_id = 2`)).toBe(1);
  });

  it('a device deleted while a transaction writes its rows waits for it, then deletes them (no rows left without their device)', async () => {
    await setup();
    const deleting: Promise<unknown>[] = [];
    await store.db.transaction().execute(async (trx) => {
      await sql`insert into risk_findings (device_id, scan_id, severity, score, title, description, recommendation)
        values (2, 1, 'low', 1, '', '', '')`.execute(trx);
      await sql`insert into ports (device_id, port, protocol, state, first_seen, last_seen) values (2, 22, 'tcp', 'open', 'x', 'x')`.execute(trx);
      deleting.push(sql`delete from devices where id = 2`.execute(store.db));
      await new Promise((resolve) => setTimeout(resolve, 200));
    });
    await Promise.all(deleting);
    expect(await count('devices', sql`id = 2`)).toBe(0);
    expect(await count('risk_findings')).toBe(0);
    expect(await count('ports')).toBe(0);
  });
});
