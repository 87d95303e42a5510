import { sql, type Kysely } from 'kysely';
import type { ActiveScan } from '../core/scan-queue.js';
import { ipv4ToInt, parseIpv4Network } from '../core/net.js';
import { nowIso } from './clock.js';
import type { Dialect } from './migrations/index.js';
import type { Database, NewScan, ScanRow, ScanUpdate } from './schema.js';
import type { ScanStatus } from '../core/model.js';
import type { ScanProgress, ScanRecord } from '../schemas/scan.js';

/** Who runs a scan, and until when its claim holds unless renewed. */
export interface ScanLease {
  ownerId: string;
  host: string;
  pid: number;
  leaseExpiresAt: string;
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
    runner: row.runner,
    agent_id: row.agent_id,
    warnings: row.warnings ? (JSON.parse(row.warnings) as string[]) : [],
    ports_examined: row.port_list,
    hosts_examined: row.hosts_examined,
  };
}

/** The IPv4 range a scan of `subnet` (a CIDR or one address) covers, as unsigned integers. */
export function targetRange(subnet: string): { low: number; high: number } | null {
  const parsed = parseIpv4Network(subnet);
  if (!parsed.ok) return null;
  const low = ipv4ToInt(parsed.value.network);
  return { low, high: low + parsed.value.size - 1 };
}

/** A lock class of Netwarden's own for the scan queue (PostgreSQL advisory locks); the key is the schema's hash. */
const QUEUE_LOCK_CLASS = 0x4e58;

/** What a queued scan records before it starts: no owner, no start time, no active slot. */
export type QueuedScan = Omit<
  NewScan,
  | 'created_at'
  | 'status'
  | 'active_slot'
  | 'owner_id'
  | 'owner_host'
  | 'owner_pid'
  | 'lease_expires_at'
  | 'started_at'
  | 'target_low'
  | 'target_high'
  | 'agent_id'
> & {
  created_at: string;
};

/**
 * Inserts a queued scan through `db` (a transaction when the scheduler claims a slot with it),
 * with its target range, routed to the agent whose networks hold its target, if any (the oldest
 * such agent not revoked; CONTRACT §12). Undefined when its schedule already has a queued scan.
 */
export function insertQueued(db: Kysely<Database>, scan: QueuedScan): Promise<ScanRow | undefined> {
  const range = targetRange(scan.subnet);
  return db
    .insertInto('scans')
    .values((eb) => ({
      ...scan,
      status: 'queued',
      target_low: range?.low ?? null,
      target_high: range?.high ?? null,
      agent_id: range
        ? eb
            .selectFrom('agent_networks')
            .innerJoin('agents', 'agents.id', 'agent_networks.agent_id')
            .select('agents.id')
            .where('agents.revoked_at', 'is', null)
            .where('agent_networks.low', '<=', range.low)
            .where('agent_networks.high', '>=', range.high)
            .orderBy('agents.id')
            .limit(1)
        : null,
    }))
    .onConflict((oc) => oc.doNothing())
    .returningAll()
    .executeTakeFirst();
}

/**
 * Records an imported report's scan (CONTRACT §11) as running for `owner` through `db` (the queue
 * lock's transaction): no active slot (nothing is scanned), never routed to an agent, its target
 * range set so that no overlapping scan starts while it is recorded.
 */
export async function insertImported(
  db: Kysely<Database>,
  scan: { profile: string; subnet: string; triggered_by: string; runner: string; at: string },
  owner: ScanLease,
): Promise<ScanRow> {
  const range = targetRange(scan.subnet);
  return db
    .insertInto('scans')
    .values({
      profile: scan.profile,
      subnet: scan.subnet,
      scan_type: 'network',
      target: null,
      triggered_by: scan.triggered_by,
      runner: scan.runner,
      created_at: scan.at,
      started_at: scan.at,
      status: 'running',
      target_low: range?.low ?? null,
      target_high: range?.high ?? null,
      owner_id: owner.ownerId,
      owner_host: owner.host,
      owner_pid: owner.pid,
      lease_expires_at: owner.leaseExpiresAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A unique index refused a row (PostgreSQL 23505, SQLite SQLITE_CONSTRAINT_UNIQUE). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

export class ScanStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly onWrite: () => void,
    private readonly dialect: Dialect,
  ) {}

  /**
   * Runs `fn` in a transaction holding the scan queue's lock: what decides which scans may start
   * (triggers, workers and agents taking scans) happens one at a time across every process
   * sharing the database, so two decisions never both take the last slot or two overlapping
   * targets. PostgreSQL: a transaction-scoped advisory lock; SQLite: its single writer.
   */
  async underQueueLock<T>(fn: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    const result = await this.db.transaction().execute(async (trx) => {
      if (this.dialect === 'postgres') {
        await sql`select pg_advisory_xact_lock(${sql.lit(QUEUE_LOCK_CLASS)}, hashtext(coalesce(current_schema(), '')))`.execute(trx);
      } else {
        // Takes SQLite's write lock now, not at the first write (another process may be deciding too).
        await sql`update scans set id = id where 0`.execute(trx);
      }
      return fn(trx);
    });
    this.onWrite();
    return result;
  }

  /** Every queued and running scan, as the queue's rules see them (read under the queue lock). */
  async activeForQueue(db: Kysely<Database>): Promise<ActiveScan[]> {
    const rows = await db
      .selectFrom('scans')
      .select(['id', 'status', 'target_low', 'target_high', 'agent_id', 'active_slot'])
      .where('status', 'in', ['queued', 'running'])
      .orderBy('id')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      status: r.status as 'queued' | 'running',
      // A row without a range (never written by this version) blocks every other target.
      low: r.target_low ?? 0,
      high: r.target_high ?? 0xffffffff,
      agentId: r.agent_id,
      slot: r.active_slot,
    }));
  }

  /** Records the queue's job id of a queued scan. */
  async setJob(db: Kysely<Database>, id: number, jobId: string): Promise<void> {
    await db.updateTable('scans').set({ job_id: jobId }).where('id', '=', id).execute();
  }

  /** Queued scans of the server's workers that have no job (queued before the job queue, or their job was lost). */
  queuedWithoutJob(createdBefore: string): Promise<ScanRow[]> {
    return this.db
      .selectFrom('scans')
      .selectAll()
      .where('status', '=', 'queued')
      .where('agent_id', 'is', null)
      .where('job_id', 'is', null)
      .where('created_at', '<', createdBefore)
      .orderBy('id')
      .execute();
  }

  /** Queued scans of the server's workers (a worker that keeps its jobs in memory enqueues them at start). */
  queuedForWorkers(): Promise<ScanRow[]> {
    return this.db.selectFrom('scans').selectAll().where('status', '=', 'queued').where('agent_id', 'is', null).orderBy('id').execute();
  }

  /**
   * Starts a queued scan in active slot `slot` for `owner` (under the queue lock, after the rules
   * said it may start). Undefined when it is no longer queued.
   */
  async claim(db: Kysely<Database>, id: number, slot: number, owner: ScanLease, runner: string, startedAt: string): Promise<ScanRow | undefined> {
    return db
      .updateTable('scans')
      .set({
        status: 'running',
        active_slot: slot,
        started_at: startedAt,
        owner_id: owner.ownerId,
        owner_host: owner.host,
        owner_pid: owner.pid,
        lease_expires_at: owner.leaseExpiresAt,
        runner,
      })
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .returningAll()
      .executeTakeFirst();
  }

  /**
   * Marks the start of recording an agent's uploaded results; true when this call may record them.
   * A mark older than `staleBefore` (the instance recording them stopped) is taken over: what
   * that attempt wrote for the scan is removed first, so nothing is recorded twice.
   */
  async beginUpload(id: number, ownerId: string, now: string, staleBefore: string): Promise<boolean> {
    const result = await this.db
      .updateTable('scans')
      .set({ upload_started_at: now })
      .where('id', '=', id)
      .where('owner_id', '=', ownerId)
      .where('status', '=', 'running')
      .where((eb) => eb.or([eb('upload_started_at', 'is', null), eb('upload_started_at', '<', staleBefore)]))
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return false;
    await this.db.deleteFrom('changes').where('scan_id', '=', id).execute();
    await this.db.deleteFrom('device_snapshots').where('scan_id', '=', id).execute();
    return true;
  }

  /** Appends warnings (problems that did not stop the scan) to its record. */
  async addWarnings(id: number, warnings: readonly string[]): Promise<void> {
    if (warnings.length === 0) return;
    const row = await this.db.selectFrom('scans').select('warnings').where('id', '=', id).executeTakeFirst();
    const current = row?.warnings ? (JSON.parse(row.warnings) as string[]) : [];
    await this.db
      .updateTable('scans')
      .set({ warnings: JSON.stringify([...current, ...warnings]) })
      .where('id', '=', id)
      .execute();
    this.onWrite();
  }

  async create(scan: Omit<NewScan, 'created_at'> & { created_at?: string }): Promise<ScanRow> {
    const row = await this.db
      .insertInto('scans')
      .values({ created_at: nowIso(), ...scan })
      .returningAll()
      .executeTakeFirstOrThrow();
    this.onWrite();
    return row;
  }

  /**
   * Records what a completed scan examined: its port list (core/coverage.ts format), and 0 hosts
   * examined when no host's ports were recorded (InventoryWriter.recordPorts counts them).
   */
  async recordExamined(id: number, portList: string): Promise<void> {
    await this.db
      .updateTable('scans')
      .set((eb) => ({ port_list: portList, hosts_examined: eb.fn.coalesce('hosts_examined', sql<number>`0`) }))
      .where('id', '=', id)
      .execute();
    this.onWrite();
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
      this.db
        .selectFrom('scans')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(total.n) };
  }

  /**
   * A scan in progress for GET /api/scan/status when this process runs none: a running one, else
   * the oldest queued one. (Which scan a trigger must wait for is core/scan-queue.ts's rule.)
   */
  async active(): Promise<ScanRow | undefined> {
    return (await this.running()) ?? (await this.nextQueued());
  }

  /** The scan holding the active slot (running), if any. */
  running(): Promise<ScanRow | undefined> {
    return this.db.selectFrom('scans').selectAll().where('status', '=', 'running').orderBy('id', 'desc').executeTakeFirst();
  }

  /** Every scan still queued or running. */
  listActive(): Promise<ScanRow[]> {
    return this.db.selectFrom('scans').selectAll().where('status', 'in', ['queued', 'running']).orderBy('id').execute();
  }

  /** Every running scan: what crash recovery looks at (queued scans have no owner to lose). */
  listRunning(): Promise<ScanRow[]> {
    return this.db.selectFrom('scans').selectAll().where('status', '=', 'running').orderBy('id').execute();
  }

  /** The queued scan to start next: the oldest. */
  nextQueued(): Promise<ScanRow | undefined> {
    return this.db.selectFrom('scans').selectAll().where('status', '=', 'queued').orderBy('id').executeTakeFirst();
  }

  /** The scan queued for a schedule, if any (there is at most one). */
  queuedFor(scheduleId: number): Promise<ScanRow | undefined> {
    return this.db.selectFrom('scans').selectAll().where('schedule_id', '=', scheduleId).where('status', '=', 'queued').executeTakeFirst();
  }

  /**
   * Records a queued scan. Returns undefined, writing nothing, when its schedule already has a
   * queued scan (the unique index of migration 003 decides, whichever instance asks).
   */
  async enqueue(scan: QueuedScan): Promise<ScanRow | undefined> {
    const row = await insertQueued(this.db, scan);
    if (row) this.onWrite();
    return row;
  }

  /**
   * Extends the owner's lease on its running scan. Returns what the owner must react to: the scan
   * ended elsewhere (`lost`), a cancel was asked through another instance, or nothing.
   */
  async renewLease(id: number, ownerId: string, leaseExpiresAt: string): Promise<'ok' | 'lost' | 'cancel_requested'> {
    const row = await this.db
      .updateTable('scans')
      .set({ lease_expires_at: leaseExpiresAt })
      .where('id', '=', id)
      .where('owner_id', '=', ownerId)
      .where('status', '=', 'running')
      .returning('cancel_requested_at')
      .executeTakeFirst();
    if (!row) return 'lost';
    return row.cancel_requested_at ? 'cancel_requested' : 'ok';
  }

  /** Asks the owner of a running scan to cancel it; it sees the request at its next lease renewal. */
  async requestCancel(id: number, at: string): Promise<void> {
    await this.db.updateTable('scans').set({ cancel_requested_at: at }).where('id', '=', id).where('status', '=', 'running').execute();
  }

  /**
   * Ends an active scan with its final status, if it is still active and owned by `ownerId`
   * (null: a scan without an owner). Frees the active slot and clears what only a running scan
   * carries. False when the scan had already ended (another instance ended it first).
   */
  async finish(id: number, ownerId: string | null, patch: ScanUpdate & { status: 'completed' | 'failed' | 'cancelled' }): Promise<boolean> {
    const result = await this.db
      .updateTable('scans')
      .set({
        // A finished scan never keeps an error from an earlier state: completed clears it.
        error: null,
        ...patch,
        active_slot: null,
        lease_expires_at: null,
        engine_pgid: null,
        engine_pgids: null,
        cancel_requested_at: null,
      })
      .where('id', '=', id)
      .where('status', 'in', ['queued', 'running'])
      .where((eb) => (ownerId === null ? eb('owner_id', 'is', null) : eb('owner_id', '=', ownerId)))
      .executeTakeFirst();
    this.onWrite();
    return Number(result.numUpdatedRows) === 1;
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
}
