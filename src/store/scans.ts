import type { Kysely } from 'kysely';
import { nowIso } from './clock.js';
import type { Database, NewScan, ScanRow, ScanUpdate } from './schema.js';

export const SCAN_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export type ScanStatus = (typeof SCAN_STATUSES)[number];

export interface ScanProgress {
  phase: string;
  percent: number;
  hosts_total: number | null;
  hosts_found: number;
  hosts_done: number;
  current_host: string | null;
  elapsed_seconds: number;
  eta_seconds: number | null;
}

export interface ScanRecord {
  scan_id: number;
  status: ScanStatus;
  profile: string;
  subnet: string;
  scan_type: 'network' | 'device';
  target: string | null;
  started_at: string | null;
  completed_at: string | null;
  duration_seconds: number | null;
  devices_found: number;
  error: string | null;
  triggered_by: string | null;
  progress: ScanProgress | null;
}

export function toScanRecord(row: ScanRow): ScanRecord {
  return {
    scan_id: row.id,
    status: row.status as ScanStatus,
    profile: row.profile,
    subnet: row.subnet,
    scan_type: row.scan_type as 'network' | 'device',
    target: row.target,
    started_at: row.started_at,
    completed_at: row.completed_at,
    duration_seconds: row.duration_seconds,
    devices_found: row.devices_found,
    error: row.error,
    triggered_by: row.triggered_by,
    progress: row.progress ? (JSON.parse(row.progress) as ScanProgress) : null,
  };
}

export class ScanStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly onWrite: () => void,
  ) {}

  async create(scan: Omit<NewScan, 'created_at'> & { created_at?: string }): Promise<ScanRow> {
    const row = await this.db
      .insertInto('scans')
      .values({ created_at: nowIso(), ...scan })
      .returningAll()
      .executeTakeFirstOrThrow();
    this.onWrite();
    return row;
  }

  async update(id: number, patch: ScanUpdate): Promise<void> {
    await this.db.updateTable('scans').set(patch).where('id', '=', id).execute();
    this.onWrite();
  }

  get(id: number): Promise<ScanRow | undefined> {
    return this.db.selectFrom('scans').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async list(limit: number, offset: number): Promise<{ rows: ScanRow[]; total: number }> {
    const [rows, total] = await Promise.all([
      this.db.selectFrom('scans').selectAll().orderBy('id', 'desc').limit(limit).offset(offset).execute(),
      this.db.selectFrom('scans').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(total.n) };
  }

  /** The scan currently queued or running, if any. */
  active(): Promise<ScanRow | undefined> {
    return this.db
      .selectFrom('scans')
      .selectAll()
      .where('status', 'in', ['queued', 'running'])
      .orderBy('id', 'desc')
      .executeTakeFirst();
  }

  /** The latest completed scan of `subnet` before `beforeId`: the baseline for change detection. */
  previousCompleted(subnet: string, beforeId: number): Promise<ScanRow | undefined> {
    return this.db
      .selectFrom('scans')
      .selectAll()
      .where('subnet', '=', subnet)
      .where('status', '=', 'completed')
      .where('id', '<', beforeId)
      .orderBy('id', 'desc')
      .executeTakeFirst();
  }

  /** Marks scans left queued or running by a crash or restart as failed. Returns their ids. */
  async failInterrupted(reason: string): Promise<number[]> {
    const stale = await this.db.selectFrom('scans').select('id').where('status', 'in', ['queued', 'running']).execute();
    if (stale.length === 0) return [];
    const now = nowIso();
    await this.db
      .updateTable('scans')
      .set({ status: 'failed', error: reason, completed_at: now })
      .where('status', 'in', ['queued', 'running'])
      .execute();
    this.onWrite();
    return stale.map((s) => s.id);
  }
}
