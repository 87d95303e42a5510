import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import { IDS_PER_STATEMENT, chunks } from '../util/batches.js';

export interface RetentionResult {
  scans: number;
  snapshots: number;
  changes: number;
  audit_entries: number;
  deliveries: number;
}

/**
 * Deletes history older than a cutoff: finished scans with their snapshots and changes, audit
 * entries, and notification deliveries that are no longer pending (a pending one is still to be sent). Devices are kept, and so is the latest completed scan of each subnet, however old: it
 * is the baseline the next scan of that subnet is compared with.
 */
/** Audit entries deleted per statement: keeps each transaction short on a large log. */
const AUDIT_ROWS_PER_DELETE = 5_000;

export class RetentionStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly onWrite: () => void,
  ) {}

  async purgeBefore(cutoff: string): Promise<RetentionResult> {
    const result: RetentionResult = { scans: 0, snapshots: 0, changes: 0, audit_entries: 0, deliveries: 0 };
    const baselines = this.db
      .selectFrom('scans')
      .select((eb) => eb.fn.max('id').as('id'))
      .where('status', '=', 'completed')
      .groupBy('subnet');
    const old = await this.db
      .selectFrom('scans')
      .select('id')
      .where('status', 'in', ['completed', 'failed', 'cancelled'])
      .where((eb) => eb(eb.fn.coalesce('completed_at', 'created_at'), '<', cutoff))
      .where('id', 'not in', baselines)
      .execute();
    const ids = old.map((r) => r.id);
    for (const batch of chunks(ids, IDS_PER_STATEMENT)) {
      await this.db.transaction().execute(async (trx) => {
        // Counted, then deleted explicitly: the foreign keys would cascade, but the audit entry reports the numbers.
        const snapshots = await trx.deleteFrom('device_snapshots').where('scan_id', 'in', batch).executeTakeFirst();
        const changes = await trx.deleteFrom('changes').where('scan_id', 'in', batch).executeTakeFirst();
        const scans = await trx.deleteFrom('scans').where('id', 'in', batch).executeTakeFirst();
        result.snapshots += Number(snapshots.numDeletedRows);
        result.changes += Number(changes.numDeletedRows);
        result.scans += Number(scans.numDeletedRows);
      });
    }
    for (;;) {
      const doomed = this.db.selectFrom('audit_logs').select('id').where('timestamp', '<', cutoff).limit(AUDIT_ROWS_PER_DELETE);
      const deleted = await this.db.deleteFrom('audit_logs').where('id', 'in', doomed).executeTakeFirst();
      const n = Number(deleted.numDeletedRows);
      result.audit_entries += n;
      if (n < AUDIT_ROWS_PER_DELETE) break;
    }
    for (;;) {
      const doomed = this.db
        .selectFrom('notification_deliveries')
        .select('id')
        .where('created_at', '<', cutoff)
        .where('status', '<>', 'pending')
        .limit(AUDIT_ROWS_PER_DELETE);
      const deleted = await this.db.deleteFrom('notification_deliveries').where('id', 'in', doomed).executeTakeFirst();
      const n = Number(deleted.numDeletedRows);
      result.deliveries += n;
      if (n < AUDIT_ROWS_PER_DELETE) break;
    }
    if (result.scans > 0) this.onWrite();
    return result;
  }
}
