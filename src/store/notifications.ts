/**
 * Notification channels, the delivery log and the changes held for digests. The config here is
 * the stored one, secrets included: masking is the API's business (through the drivers, which
 * know which keys are secret).
 */
import type { Kysely } from 'kysely';
import {
  type ChannelFilters,
  type ChannelType,
  type DeliveryStatus,
  type MessageEvent,
  type QuietHours,
  defaultFilters,
} from '../core/notify-rules.js';
import { AT_RISK_LEVELS } from '../core/severity.js';
import type { Change } from '../schemas/change.js';
import type { Delivery } from '../schemas/notification.js';
import { InvalidInputError } from '../util/errors.js';
import { IDS_PER_STATEMENT, chunks } from '../util/batches.js';
import type { Database, NotificationChannelRow, NotificationDeliveryRow } from './schema.js';

export interface StoredChannel {
  id: number;
  name: string;
  type: ChannelType;
  enabled: boolean;
  config: Record<string, unknown>;
  filters: ChannelFilters;
  digest: string | null;
  quiet_hours: QuietHours | null;
  digest_last_slot: string | null;
  created_at: string;
  updated_at: string;
}

export type ChannelValues = Omit<StoredChannel, 'id' | 'created_at' | 'digest_last_slot'>;

export interface StoredDelivery extends Delivery {
  payload: string;
  first_attempt_at: string | null;
}

export interface NewDelivery {
  channel_id: number;
  event: MessageEvent;
  scan_id: number | null;
  /** The composed message, serialised (text is stored as is). */
  payload: string;
  created_at: string;
  /** Null: sent only by an explicit attempt (the test button), never by the loop. */
  next_attempt_at: string | null;
}

export interface DeliveryQuery {
  channelId?: number;
  status?: DeliveryStatus;
  limit: number;
  offset: number;
}

export interface HeldChange {
  id: number;
  scan_id: number | null;
  change: Change;
}

/** A device as notification filters and messages see it: its current zone, trust and names. */
export interface DeviceFactsRow {
  id: number;
  ip_address: string;
  label: string | null;
  hostname: string | null;
  zone: string | null;
  is_trusted: boolean;
}

/** The columns of a delivery record (never its payload, which can be large). */
const RECORD_COLUMNS = [
  'id',
  'channel_id',
  'event',
  'status',
  'attempts',
  'last_error',
  'created_at',
  'sent_at',
  'scan_id',
  'next_attempt_at',
] as const;

export function toDelivery(row: Pick<NotificationDeliveryRow, (typeof RECORD_COLUMNS)[number]>): Delivery {
  return {
    id: row.id,
    channel_id: row.channel_id,
    event: row.event as MessageEvent,
    status: row.status as DeliveryStatus,
    attempts: row.attempts,
    last_error: row.last_error,
    created_at: row.created_at,
    sent_at: row.sent_at,
    scan_id: row.scan_id,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at : null,
  };
}

function toChannel(row: NotificationChannelRow): StoredChannel {
  return {
    id: row.id,
    name: row.name,
    type: row.type as ChannelType,
    enabled: row.enabled === 1,
    config: JSON.parse(row.config) as Record<string, unknown>,
    filters: { ...defaultFilters(), ...(JSON.parse(row.filters) as Partial<ChannelFilters>) },
    digest: row.digest,
    quiet_hours: row.quiet_hours ? (JSON.parse(row.quiet_hours) as QuietHours) : null,
    digest_last_slot: row.digest_last_slot,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? '';
  return code === '23505' || code.startsWith('SQLITE_CONSTRAINT_UNIQUE');
}

const duplicateName = (name: string) => new InvalidInputError(`name: a channel named "${name}" already exists; choose another name`);

export class NotificationStore {
  constructor(private readonly db: Kysely<Database>) {}

  // Channels ----------------------------------------------------------------------------------

  async listChannels(): Promise<StoredChannel[]> {
    const rows = await this.db.selectFrom('notification_channels').selectAll().orderBy('id').execute();
    return rows.map(toChannel);
  }

  async getChannel(id: number): Promise<StoredChannel | undefined> {
    const row = await this.db.selectFrom('notification_channels').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toChannel(row) : undefined;
  }

  async nameTaken(name: string, exceptId?: number): Promise<boolean> {
    let q = this.db.selectFrom('notification_channels').select('id').where('name', '=', name);
    if (exceptId !== undefined) q = q.where('id', '<>', exceptId);
    return (await q.executeTakeFirst()) !== undefined;
  }

  /** Creates a channel; a taken name is an InvalidInputError naming `name` (also when two requests race). */
  async createChannel(values: ChannelValues, now: string): Promise<StoredChannel> {
    if (await this.nameTaken(values.name)) throw duplicateName(values.name);
    try {
      const row = await this.db
        .insertInto('notification_channels')
        .values({ ...this.columns(values), digest_last_slot: values.digest ? now : null, created_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toChannel(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName(values.name);
      throw err;
    }
  }

  /**
   * Replaces a channel's values. A digest whose cron changed starts counting from now, so a new
   * schedule never fires for slots before it existed.
   */
  async updateChannel(id: number, values: ChannelValues, digestChanged: boolean): Promise<StoredChannel | undefined> {
    if (await this.nameTaken(values.name, id)) throw duplicateName(values.name);
    try {
      const row = await this.db
        .updateTable('notification_channels')
        .set({ ...this.columns(values), ...(digestChanged ? { digest_last_slot: values.digest ? values.updated_at : null } : {}) })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return row ? toChannel(row) : undefined;
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName(values.name);
      throw err;
    }
  }

  /** Deletes a channel with its delivery log and held changes. */
  async deleteChannel(id: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('notification_deliveries').where('channel_id', '=', id).execute();
      await trx.deleteFrom('notification_held').where('channel_id', '=', id).execute();
      const r = await trx.deleteFrom('notification_channels').where('id', '=', id).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    });
  }

  private columns(v: ChannelValues) {
    return {
      name: v.name,
      type: v.type,
      enabled: v.enabled ? 1 : 0,
      config: JSON.stringify(v.config),
      filters: JSON.stringify(v.filters),
      digest: v.digest,
      quiet_hours: v.quiet_hours ? JSON.stringify(v.quiet_hours) : null,
      updated_at: v.updated_at,
    };
  }

  /**
   * Claims a digest slot: true for exactly one caller across instances, the one whose conditional
   * update moved `digest_last_slot` from what it read to `slot`.
   */
  async claimDigestSlot(id: number, expected: string | null, slot: string): Promise<boolean> {
    let q = this.db.updateTable('notification_channels').set({ digest_last_slot: slot }).where('id', '=', id);
    q = expected === null ? q.where('digest_last_slot', 'is', null) : q.where('digest_last_slot', '=', expected);
    const r = await q.executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  // Held changes (digests) ------------------------------------------------------------------------

  async hold(channelId: number, changes: Change[], now: string): Promise<void> {
    for (const batch of chunks(changes, 200)) {
      await this.db
        .insertInto('notification_held')
        .values(batch.map((c) => ({ channel_id: channelId, scan_id: c.scan_id, change: JSON.stringify(c), created_at: now })))
        .execute();
    }
  }

  async heldFor(channelId: number): Promise<HeldChange[]> {
    const rows = await this.db.selectFrom('notification_held').selectAll().where('channel_id', '=', channelId).orderBy('id').execute();
    return rows.map((r) => ({ id: r.id, scan_id: r.scan_id, change: JSON.parse(r.change) as Change }));
  }

  /** Records a digest's delivery and removes the changes it carries, in one transaction. */
  async createDigestDelivery(delivery: NewDelivery, heldIds: number[]): Promise<Delivery> {
    return this.db.transaction().execute(async (trx) => {
      for (const batch of chunks(heldIds, IDS_PER_STATEMENT)) {
        await trx.deleteFrom('notification_held').where('id', 'in', batch).execute();
      }
      const row = await trx
        .insertInto('notification_deliveries')
        .values(this.deliveryColumns(delivery))
        .returning(RECORD_COLUMNS)
        .executeTakeFirstOrThrow();
      return toDelivery(row);
    });
  }

  // Deliveries -----------------------------------------------------------------------------------

  async createDelivery(delivery: NewDelivery): Promise<Delivery> {
    const row = await this.db
      .insertInto('notification_deliveries')
      .values(this.deliveryColumns(delivery))
      .returning(RECORD_COLUMNS)
      .executeTakeFirstOrThrow();
    return toDelivery(row);
  }

  private deliveryColumns(d: NewDelivery) {
    return {
      channel_id: d.channel_id,
      event: d.event,
      status: 'pending',
      attempts: 0,
      scan_id: d.scan_id,
      payload: d.payload,
      created_at: d.created_at,
      next_attempt_at: d.next_attempt_at,
    };
  }

  async getDelivery(id: number): Promise<Delivery | undefined> {
    const row = await this.db.selectFrom('notification_deliveries').select(RECORD_COLUMNS).where('id', '=', id).executeTakeFirst();
    return row ? toDelivery(row) : undefined;
  }

  async listDeliveries(query: DeliveryQuery): Promise<{ rows: Delivery[]; total: number }> {
    let base = this.db.selectFrom('notification_deliveries');
    if (query.channelId !== undefined) base = base.where('channel_id', '=', query.channelId);
    if (query.status) base = base.where('status', '=', query.status);
    const [rows, total] = await Promise.all([
      base.select(RECORD_COLUMNS).orderBy('id', 'desc').limit(query.limit).offset(query.offset).execute(),
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows: rows.map(toDelivery), total: Number(total.n) };
  }

  /** Ids of pending deliveries due at `now` that no instance is working on, oldest first. */
  async dueDeliveries(now: string, limit: number): Promise<number[]> {
    const rows = await this.db
      .selectFrom('notification_deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /**
   * When the next pending delivery falls due for this instance: its `next_attempt_at`, or for one
   * another attempt holds, when that claim runs out. Null when nothing is pending.
   */
  async nextDueAt(now: string): Promise<string | null> {
    const row = await this.db
      .selectFrom('notification_deliveries')
      .select((eb) =>
        eb.fn
          .min<string>(
            eb
              .case()
              .when(eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
              .then(eb.ref('next_attempt_at'))
              .else(eb.ref('claimed_until'))
              .end(),
          )
          .as('due'),
      )
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return row?.due ?? null;
  }

  /**
   * Takes a due pending delivery for one attempt: exactly one instance gets it, until `until`
   * (the attempt's timeout and a margin). Returns the row, or undefined when another has it.
   */
  async claimDelivery(id: number, owner: string, now: string, until: string, { ignoreDue = false } = {}): Promise<StoredDelivery | undefined> {
    let q = this.db
      .updateTable('notification_deliveries')
      .set({ claimed_by: owner, claimed_until: until })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]));
    if (!ignoreDue) q = q.where('next_attempt_at', '<=', now);
    const row = await q.returningAll().executeTakeFirst();
    return row ? { ...toDelivery(row), payload: row.payload, first_attempt_at: row.first_attempt_at } : undefined;
  }

  /** Records an attempt's outcome and releases the claim (only the claim's owner can). */
  async recordAttempt(
    id: number,
    owner: string,
    outcome: {
      status: DeliveryStatus;
      attempts: number;
      last_error: string | null;
      first_attempt_at: string;
      next_attempt_at: string | null;
      sent_at: string | null;
    },
  ): Promise<Delivery | undefined> {
    const row = await this.db
      .updateTable('notification_deliveries')
      .set({ ...outcome, claimed_by: null, claimed_until: null })
      .where('id', '=', id)
      .where('claimed_by', '=', owner)
      .returning(RECORD_COLUMNS)
      .executeTakeFirst();
    return row ? toDelivery(row) : undefined;
  }

  /**
   * Test messages whose process stopped during their one attempt (never claimed again: the loop
   * does not send tests) are marked failed, so none stays pending forever.
   */
  async failAbandonedTests(now: string, createdBefore: string): Promise<number> {
    const r = await this.db
      .updateTable('notification_deliveries')
      .set({ status: 'failed', last_error: 'interrupted: the server stopped during the test', claimed_by: null, claimed_until: null })
      .where('event', '=', 'test')
      .where('status', '=', 'pending')
      .where('next_attempt_at', 'is', null)
      .where('created_at', '<', createdBefore)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  /** Gives a claimed delivery back untouched (an attempt abandoned at shutdown). */
  async releaseClaim(id: number, owner: string): Promise<void> {
    await this.db
      .updateTable('notification_deliveries')
      .set({ claimed_by: null, claimed_until: null })
      .where('id', '=', id)
      .where('claimed_by', '=', owner)
      .execute();
  }

  // What messages are made of ----------------------------------------------------------------------

  /** Every change of a scan, in the order they were detected. */
  async changesOfScan(scanId: number): Promise<Change[]> {
    // Archived devices are left out of alerts (CONTRACT §18).
    const rows = await this.db
      .selectFrom('changes')
      .selectAll()
      .where('scan_id', '=', scanId)
      .where((eb) =>
        eb.or([eb('device_id', 'is', null), eb('device_id', 'not in', eb.selectFrom('devices').select('id').where('status', '=', 'archived'))]),
      )
      .orderBy('id')
      .execute();
    return rows as Change[];
  }

  async deviceFacts(ids: number[]): Promise<Map<number, DeviceFactsRow>> {
    const out = new Map<number, DeviceFactsRow>();
    for (const batch of chunks([...new Set(ids)], IDS_PER_STATEMENT)) {
      const rows = await this.db
        .selectFrom('devices')
        .select(['id', 'ip_address', 'label', 'hostname', 'zone', 'is_trusted'])
        .where('id', 'in', batch)
        .execute();
      for (const r of rows) out.set(r.id, { ...r, is_trusted: r.is_trusted === 1 });
    }
    return out;
  }

  /** Devices online and at risk (medium or worse) whose address lies in [low, high] (numeric IPv4). */
  async networkCounts(low: number, high: number): Promise<{ online: number; atRisk: number }> {
    const row = await this.db
      .selectFrom('devices')
      .select((eb) => [
        eb.fn.sum<number>(eb.case().when('online', '=', 1).then(1).else(0).end()).as('online'),
        eb.fn
          .sum<number>(
            eb
              .case()
              .when('risk_level', 'in', [...AT_RISK_LEVELS])
              .then(1)
              .else(0)
              .end(),
          )
          .as('at_risk'),
      ])
      .where('ip_sort', '>=', low)
      .where('ip_sort', '<=', high)
      .executeTakeFirst();
    return { online: Number(row?.online ?? 0), atRisk: Number(row?.at_risk ?? 0) };
  }
}
