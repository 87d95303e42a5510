/**
 * PostgreSQL: the references of the tables an import writes in bulk checked once per statement,
 * not once per row (issue 24). A first import of 10,000 hosts inserts about 80,000 `ports`,
 * 280,000 `risk_findings` and 240,000 `cve_matches` rows; a foreign key checks each row on its
 * own (a query on the parent with a FOR KEY SHARE lock, per row and per key), which measured
 * 5.6 s of PostgreSQL's 13 s of CPU for that import (the three tables' keys dropped on a copy:
 * 7.4 s), where one set-based check per statement costs a few milliseconds.
 *
 * The foreign keys of those three tables (`ports.device_id`, `risk_findings.device_id` and
 * `.scan_id`, `cve_matches.device_id` and `.scan_id`, migration 001) are replaced by triggers that
 * keep the same rules:
 * - an insert whose rows name a device (or scan) that does not exist fails as the foreign key
 *   did (SQLSTATE 23503, the same message), checked once per statement over its new rows (a
 *   transition table); the parents it names are locked FOR KEY SHARE as the foreign key locked
 *   them, so a device deleted meanwhile either waits for the insert's transaction (and then
 *   deletes its rows) or makes the insert fail;
 * - an update that changes a row's `device_id` or `scan_id` (merging devices moves their rows) is
 *   checked per changed row, as before (only rows whose key changes run the check);
 * - deleting devices deletes their rows of the three tables (was `on delete cascade`), deleting
 *   scans sets `scan_id` to null in findings and CVE matches (was `on delete set null`), once per
 *   statement over the deleted rows.
 * Changing a device's or scan's id, which nothing does, is no longer refused.
 *
 * SQLite: nothing changes. Its foreign-key checks are a lookup by primary key in process (cheap),
 * and backups read the tables' order from the SQLite schema (src/store/backup-tables.ts), which
 * keeps its foreign keys.
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

/** Child tables whose references become triggers, and the parents they reference (column → parent). */
const CHILDREN: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  ports: { device_id: 'devices' },
  risk_findings: { device_id: 'devices', scan_id: 'scans' },
  cve_matches: { device_id: 'devices', scan_id: 'scans' },
};

export async function up(db: Kysely<unknown>, { dialect }: MigrationContext): Promise<void> {
  if (dialect !== 'postgres') return;
  // The rows a statement inserted, checked against each parent they name (TG_ARGV: column, parent, column, parent, ...).
  await sql`create or replace function netwarden_inserted_references() returns trigger language plpgsql as $fn$
    declare
      i integer;
      missing bigint;
      named bigint;
      locked bigint;
    begin
      for i in 0 .. tg_nargs - 1 by 2 loop
        execute format('select count(distinct %I) from added', tg_argv[i]) into named;
        continue when named = 0;
        execute format('select count(*) from (select 1 from %I p where p.id in (select %I from added) for key share of p) l', tg_argv[i + 1], tg_argv[i])
          into locked;
        continue when locked = named;
        execute format('select a.%I from added a where a.%I is not null and not exists (select 1 from %I p where p.id = a.%I) limit 1',
          tg_argv[i], tg_argv[i], tg_argv[i + 1], tg_argv[i]) into missing;
        raise exception using errcode = 'foreign_key_violation',
          message = format('insert or update on table "%s" violates foreign key constraint "%s"', tg_table_name, tg_table_name || '_' || tg_argv[i] || '_fkey'),
          detail = format('Key (%s)=(%s) is not present in table "%s".', tg_argv[i], missing, tg_argv[i + 1]);
      end loop;
      return null;
    end $fn$`.execute(db);
  // One row whose key changed (TG_ARGV: column, parent).
  await sql`create or replace function netwarden_updated_reference() returns trigger language plpgsql as $fn$
    declare
      value bigint;
      found_it boolean;
    begin
      execute format('select ($1).%I', tg_argv[0]) using new into value;
      if value is null then return null; end if;
      execute format('select true from %I p where p.id = $1 for key share of p', tg_argv[1]) using value into found_it;
      if found_it is null then
        raise exception using errcode = 'foreign_key_violation',
          message = format('insert or update on table "%s" violates foreign key constraint "%s"', tg_table_name, tg_table_name || '_' || tg_argv[0] || '_fkey'),
          detail = format('Key (%s)=(%s) is not present in table "%s".', tg_argv[0], value, tg_argv[1]);
      end if;
      return null;
    end $fn$`.execute(db);
  await sql`create or replace function netwarden_devices_deleted() returns trigger language plpgsql as $fn$
    begin
      delete from ports where device_id in (select id from gone);
      delete from risk_findings where device_id in (select id from gone);
      delete from cve_matches where device_id in (select id from gone);
      return null;
    end $fn$`.execute(db);
  await sql`create or replace function netwarden_scans_deleted() returns trigger language plpgsql as $fn$
    begin
      update risk_findings set scan_id = null where scan_id in (select id from gone);
      update cve_matches set scan_id = null where scan_id in (select id from gone);
      return null;
    end $fn$`.execute(db);

  for (const [table, references] of Object.entries(CHILDREN)) {
    const args = Object.entries(references).flatMap(([column, parent]) => [sql.lit(column), sql.lit(parent)]);
    await sql`create trigger ${sql.id(`${table}_inserted_references`)} after insert on ${sql.table(table)}
      referencing new table as added for each statement execute function netwarden_inserted_references(${sql.join(args)})`.execute(db);
    for (const [column, parent] of Object.entries(references)) {
      await sql`alter table ${sql.table(table)} drop constraint ${sql.id(`${table}_${column}_fkey`)}`.execute(db);
      await sql`create trigger ${sql.id(`${table}_${column}_updated`)} after update of ${sql.ref(column)} on ${sql.table(table)}
        for each row when (new.${sql.ref(column)} is distinct from old.${sql.ref(column)})
        execute function netwarden_updated_reference(${sql.lit(column)}, ${sql.lit(parent)})`.execute(db);
    }
  }
  await sql`create trigger devices_deleted_children after delete on devices
    referencing old table as gone for each statement execute function netwarden_devices_deleted()`.execute(db);
  await sql`create trigger scans_deleted_children after delete on scans
    referencing old table as gone for each statement execute function netwarden_scans_deleted()`.execute(db);
}
