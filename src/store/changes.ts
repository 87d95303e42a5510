import type { Kysely } from 'kysely';
import type { Change } from '../schemas/change.js';
import type { Database, NewChange } from './schema.js';
import { chunks, rowsPerInsert } from '../util/batches.js';

export interface ChangeQuery {
  scanId?: number;
  changeType?: string;
  severity?: string;
  deviceId?: number;
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

  async insertMany(changes: NewChange[]): Promise<void> {
    for (const batch of chunks(changes, rowsPerInsert(13))) {
      await this.db.insertInto('changes').values(batch).execute();
    }
    if (changes.length > 0) this.onWrite();
  }

  async list(query: ChangeQuery): Promise<{ rows: ChangeRecord[]; total: number }> {
    let base = this.db.selectFrom('changes');
    if (query.scanId !== undefined) base = base.where('scan_id', '=', query.scanId);
    if (query.changeType) base = base.where('change_type', '=', query.changeType);
    if (query.severity) base = base.where('severity', '=', query.severity);
    if (query.deviceId !== undefined) base = base.where('device_id', '=', query.deviceId);
    const [rows, total] = await Promise.all([
      base.selectAll().orderBy('id', 'desc').limit(query.limit).offset(query.offset).execute(),
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows: rows as ChangeRecord[], total: Number(total.n) };
  }
}
