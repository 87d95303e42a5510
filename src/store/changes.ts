import type { Kysely, Transaction } from 'kysely';
import type { Change } from '../schemas/change.js';
import type { Database, NewChange } from './schema.js';
import { chunks, rowsPerInsert } from '../util/batches.js';

/** What narrows the changes, combined with AND: the list's and the export's filters. */
export interface ChangeFilters {
  scanId?: number;
  changeType?: string;
  severity?: string;
  deviceId?: number;
}

export interface ChangeQuery extends ChangeFilters {
  limit: number;
  offset: number;
}

/** A stored change is exactly what the API shows. */
export type ChangeRecord = Change;

export class ChangeStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly onWrite: () => void,
  ) {}

  /** Stores the changes; returns them as stored (with their ids), in id order. */
  async insertMany(changes: NewChange[]): Promise<ChangeRecord[]> {
    const rows = await insertChanges(this.db, changes);
    if (changes.length > 0) this.onWrite();
    return rows;
  }

  async list(query: ChangeQuery): Promise<{ rows: ChangeRecord[]; total: number }> {
    const base = this.filtered(query);
    const [rows, total] = await Promise.all([
      base.selectAll().orderBy('id', 'desc').limit(query.limit).offset(query.offset).execute(),
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows: rows as ChangeRecord[], total: Number(total.n) };
  }

  /**
   * Every change matching the filters, newest first, `pageSize` at a time (for exports): keyset
   * pages on the primary key (`id` below the last row given), so only one page is held at a time.
   */
  async *iterate(filters: ChangeFilters, pageSize: number): AsyncGenerator<ChangeRecord[]> {
    const base = this.filtered(filters);
    let before: number | null = null;
    for (;;) {
      let page = base.selectAll();
      if (before !== null) page = page.where('id', '<', before);
      const rows = (await page.orderBy('id', 'desc').limit(pageSize).execute()) as ChangeRecord[];
      if (rows.length === 0) return;
      yield rows;
      if (rows.length < pageSize) return;
      before = rows[rows.length - 1].id;
    }
  }

  private filtered(query: ChangeFilters) {
    let base = this.db.selectFrom('changes');
    if (query.scanId !== undefined) base = base.where('scan_id', '=', query.scanId);
    if (query.changeType) base = base.where('change_type', '=', query.changeType);
    if (query.severity) base = base.where('severity', '=', query.severity);
    if (query.deviceId !== undefined) base = base.where('device_id', '=', query.deviceId);
    return base;
  }
}

/**
 * Inserts changes (inside the caller's transaction, when given one) and returns the stored rows in
 * id order: the live `change` events carry the ids the API shows.
 */
export async function insertChanges(db: Kysely<Database> | Transaction<Database>, changes: NewChange[]): Promise<ChangeRecord[]> {
  const out: ChangeRecord[] = [];
  for (const batch of chunks(changes, rowsPerInsert(13))) {
    out.push(...((await db.insertInto('changes').values(batch).returningAll().execute()) as ChangeRecord[]));
  }
  // Neither dialect promises RETURNING rows in insertion order.
  return out.sort((a, b) => a.id - b.id);
}
