import type { Kysely, Selectable } from 'kysely';
import type { Database, RiskAcceptancesTable } from './schema.js';
import { AlreadyAcceptedError } from './errors.js';
import { IDS_PER_STATEMENT, chunks } from '../util/batches.js';

/** An acceptance as stored (CONTRACT §17): who accepted which finding of which device, why, until when. */
export type AcceptanceRow = Selectable<RiskAcceptancesTable>;

export interface NewAcceptance {
  deviceId: number;
  findingKey: string;
  reason: string;
  createdBy: string;
  createdAt: string;
  expiresAt: string | null;
}

/**
 * Accepted risk: active while not ended and not past `expires_at`. Ended acceptances are kept with
 * how they ended (`removed`, `expired`): the memory of what was decided.
 */
export class AcceptanceStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly onWrite: () => void,
  ) {}

  /** Records an acceptance; AlreadyAcceptedError when the finding already has an active one. */
  async create(a: NewAcceptance): Promise<AcceptanceRow> {
    const row = await this.db.transaction().execute(async (trx) => {
      const active = await trx
        .selectFrom('risk_acceptances')
        .select('id')
        .where('device_id', '=', a.deviceId)
        .where('finding_key', '=', a.findingKey)
        .where('ended_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', a.createdAt)]))
        .executeTakeFirst();
      if (active)
        throw new AlreadyAcceptedError(`finding_key: ${a.findingKey} of device ${a.deviceId} is already accepted (acceptance ${active.id})`);
      return trx
        .insertInto('risk_acceptances')
        .values({
          device_id: a.deviceId,
          finding_key: a.findingKey,
          reason: a.reason,
          created_by: a.createdBy,
          created_at: a.createdAt,
          expires_at: a.expiresAt,
          ended_at: null,
          end_reason: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    });
    this.onWrite();
    return row;
  }

  async get(id: number): Promise<AcceptanceRow | undefined> {
    return this.db.selectFrom('risk_acceptances').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Active acceptances (at `now`), or every one with `includeEnded`, newest first. */
  async list(now: string, includeEnded = false): Promise<AcceptanceRow[]> {
    let q = this.db.selectFrom('risk_acceptances').selectAll();
    if (!includeEnded) q = q.where('ended_at', 'is', null).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
    return q.orderBy('id', 'desc').execute();
  }

  /** Ends an acceptance (`removed` or `expired`); false when it had already ended. */
  async end(id: number, reason: 'removed' | 'expired', at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('risk_acceptances')
      .set({ ended_at: at, end_reason: reason })
      .where('id', '=', id)
      .where('ended_at', 'is', null)
      .executeTakeFirst();
    this.onWrite();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Acceptances not ended whose `expires_at` is at or before `now`, oldest first. */
  async due(now: string): Promise<AcceptanceRow[]> {
    return this.db
      .selectFrom('risk_acceptances')
      .selectAll()
      .where('ended_at', 'is', null)
      .where('expires_at', 'is not', null)
      .where('expires_at', '<=', now)
      .orderBy('id')
      .execute();
  }

  /** The active acceptances of the given devices at `now`, by device and finding key. */
  async activeOf(deviceIds: number[], now: string): Promise<Map<number, Map<string, AcceptanceRow>>> {
    const out = new Map<number, Map<string, AcceptanceRow>>();
    for (const ids of chunks(deviceIds, IDS_PER_STATEMENT)) {
      const rows = await this.db
        .selectFrom('risk_acceptances')
        .selectAll()
        .where('device_id', 'in', ids)
        .where('ended_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .execute();
      for (const r of rows) {
        let m = out.get(r.device_id);
        if (!m) out.set(r.device_id, (m = new Map<string, AcceptanceRow>()));
        m.set(r.finding_key, r);
      }
    }
    return out;
  }

  /** Keys of the active acceptances of the given devices, by device. */
  async activeKeysOf(deviceIds: number[], now: string): Promise<Map<number, Set<string>>> {
    const out = new Map<number, Set<string>>();
    for (const [id, m] of await this.activeOf(deviceIds, now)) out.set(id, new Set(m.keys()));
    return out;
  }
}
