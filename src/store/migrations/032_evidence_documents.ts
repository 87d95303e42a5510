/**
 * Recognition evidence as one row per recognition of a device (issue 21; the format is
 * src/store/evidence.ts): `device_evidence.evidence`, a JSON array of
 * `[field, value, source, detail, confidence]`, replaces the columns of one row per hit (field,
 * value, source, detail, confidence). A first scan of 10,000 devices wrote 102,000 evidence rows
 * and a rescan dated each again; now 10,000 each (profiled: most of the first scan's recording).
 *
 * The rows are converted as they stand: a device's consecutive rows (by id) with the same
 * `observed_at` (one recognition; a merge moves another device's rows in with their own times) become
 * one row, with the id of the first and its hits in id order, so every device shows the same
 * evidence in the same order with the same times. `devices.evidence_digest` (migration 025) is a
 * digest of the hits, not of how they are stored: it stays. A device left with several rows (a
 * merge moved rows in) has its evidence written again by its next recognition, as before.
 */
import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from './context.js';

/** Statements of at most this many rows (well below either database's parameter limit). */
const PER_STATEMENT = 500;

interface OldRow {
  id: number;
  device_id: number;
  field: string;
  value: string;
  source: string;
  detail: string;
  confidence: number;
  observed_at: string;
}

export async function up(db: Kysely<unknown>, { dialect }: MigrationContext): Promise<void> {
  await db.schema
    .alterTable('device_evidence')
    .addColumn('evidence', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();

  const { rows } = await sql<OldRow>`
    select id, device_id, field, value, source, detail, confidence, observed_at
    from device_evidence order by device_id, id`.execute(db);
  const kept: { id: number; text: string }[] = [];
  const dropped: number[] = [];
  for (let i = 0; i < rows.length;) {
    const first = rows[i];
    const items: unknown[] = [];
    let j = i;
    for (; j < rows.length && rows[j].device_id === first.device_id && rows[j].observed_at === first.observed_at; j++) {
      const r = rows[j];
      items.push([r.field, r.value, r.source, r.detail, Number(r.confidence)]);
      if (j > i) dropped.push(Number(r.id));
    }
    const text = JSON.stringify(items);
    kept.push({ id: Number(first.id), text });
    i = j;
  }
  for (let i = 0; i < kept.length; i += PER_STATEMENT) {
    const part = kept.slice(i, i + PER_STATEMENT);
    const cases = sql.join(
      part.map((k) => sql`when ${k.id} then ${k.text}`),
      sql` `,
    );
    await sql`update device_evidence set evidence = case id ${cases} end where id in (${sql.join(part.map((k) => k.id))})`.execute(db);
  }
  for (let i = 0; i < dropped.length; i += PER_STATEMENT) {
    await sql`delete from device_evidence where id in (${sql.join(dropped.slice(i, i + PER_STATEMENT))})`.execute(db);
  }
  for (const column of ['field', 'value', 'source', 'detail', 'confidence']) {
    await db.schema.alterTable('device_evidence').dropColumn(column).execute();
  }
  // The default served only the rows already there: every row is written with its text.
  if (dialect === 'postgres') await sql`alter table device_evidence alter column evidence drop default`.execute(db);
}
