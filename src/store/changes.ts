import type { Kysely } from 'kysely';
import type { Severity } from '../core/severity.js';
import type { ChangeRow, Database, NewChange } from './schema.js';
import { chunks, rowsPerInsert } from '../util/batches.js';

export const CHANGE_TYPES = ['device_added', 'device_removed', 'port_opened', 'port_closed', 'service_changed'] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

export interface ChangeQuery {
  scanId?: number;
  changeType?: string;
  severity?: string;
  deviceId?: number;
  limit: number;
  offset: number;
}

export type ChangeRecord = Omit<ChangeRow, 'severity' | 'change_type'> & {
  change_type: ChangeType;
  severity: Severity;
};

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
