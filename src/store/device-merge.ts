/**
 * Deleting a device with its history, merging devices into one and undoing a merge (CONTRACT §15).
 * Every table of device-owned rows is named once, in device-tables.ts; both go through that list.
 *
 * A merge moves every row of the merged devices to the kept device (a row that would collide with
 * one of the kept device's, e.g. the same port, is removed: the kept device's stays), fills the
 * kept device's empty label, zone and notes from the merged ones, keeps the earliest first sighting,
 * watches what any of them watched, and deletes the merged devices. Their rows, the ids moved and
 * the kept device's values before are stored in `device_merges` (migration 016), so an undo puts
 * every row back where it was and the devices as they were. Rows a later scan rewrote on the kept
 * device (its ports) stay with it.
 */
import type { Kysely, Transaction } from 'kysely';
import { ConflictError, InvalidInputError, NotFoundError } from '../util/errors.js';
import { IDS_PER_STATEMENT, chunks } from '../util/batches.js';
import { DEVICE_TABLES, type DeviceTable } from './device-tables.js';
import { settlePortVerification } from './port-rows.js';
import { insertManyWith, updateManyById, type BulkType } from './bulk.js';
import type { Database, DeviceRow } from './schema.js';
import { nowIso } from './clock.js';
import { covers, examineSegments, parseSegments, storedCoverage } from '../core/coverage.js';
import type { FoldKind } from '../core/resolver.js';

type Row = Record<string, unknown> & { id: number; device_id: number };

/** A port row's own verification columns, before a merge gave it its device's (settlePortVerification). */
interface SettledPort {
  id: number;
  /** The device it came from. */
  device_id: number;
  last_verified_at: string | null;
  verified_by_scan_id: number | null;
}

/** The columns of the kept device a merge may change, restored by an undo. */
const KEPT_COLUMNS = ['label', 'zone', 'notes', 'first_seen', 'watch_offline', 'watch_online', 'ports_hash', 'assessed_input'] as const;

/**
 * What a resolver fold (`same_device`) also changes on the kept device: it takes the address, MAC
 * and identity the scan saw, and the scan's port coverage. An undo restores them (before the
 * folded device, which had that identity, comes back).
 */
const FOLD_COLUMNS = [
  ...KEPT_COLUMNS,
  'identity',
  'ip_address',
  'ip_sort',
  'mac_address',
  'mac_randomized',
  'mac_source',
  'hostname',
  'hostname_source',
  'vendor',
  'last_seen',
  'last_scan_id',
  'port_coverage',
] as const;

/** Who a merge the identity resolver made is by (device_merges.created_by). */
export const RESOLVER_ACTOR = 'resolver';

/** What an undo needs: stored as JSON in device_merges.snapshot. */
interface MergeSnapshot {
  /** The kept device's values of KEPT_COLUMNS (of FOLD_COLUMNS for a resolver fold) before the merge. */
  kept: Partial<Pick<DeviceRow, (typeof FOLD_COLUMNS)[number]>>;
  /** The merged devices' rows, whole. */
  devices: DeviceRow[];
  /**
   * Per table: the ids of the rows moved to the kept device, by the device they came from; the rows
   * removed (collisions), whole; for ports, the moved rows that were verified with their device's
   * last port recording (migration 022), with their own verification columns before the move.
   */
  tables: Partial<Record<DeviceTable, { moved: Record<string, number[]>; removed: Row[]; settled?: SettledPort[] }>>;
  /**
   * device_links naming a merged device as the parent: the ids repointed to the kept device, by the
   * parent they had; and the links between the merged devices and the kept one, removed whole
   * (they would link the kept device to itself). Absent in merges made before migration 021.
   */
  parents?: { moved: Record<string, number[]>; removed: Row[] };
}

export interface MergeRecord {
  id: number;
  deviceId: number;
  mergedIds: number[];
  createdAt: string;
  undoneAt: string | null;
}

export class DeviceMergeStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly onWrite: () => void,
  ) {}

  /** Deletes the device and every row of its history (device-tables.ts); false when it did not exist. */
  async deleteDevice(id: number): Promise<boolean> {
    const deleted = await this.db.transaction().execute(async (trx) => {
      const any = trx as unknown as Kysely<Record<string, Row>>;
      // Links of the devices that hang off it (the rows with it below go with its other tables).
      await trx.deleteFrom('device_links').where('parent_device_id', '=', id).execute();
      for (const { table } of DEVICE_TABLES) await any.deleteFrom(table).where('device_id', '=', id).execute();
      const result = await trx.deleteFrom('devices').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    });
    if (deleted) this.onWrite();
    return deleted;
  }

  /**
   * Merges `mergedIds` into `keptId`. Throws NotFoundError (the kept device or any merged one
   * missing, listing them) or InvalidInputError (the kept device among the merged).
   */
  async merge(keptId: number, mergedIds: number[], actor: string | null): Promise<MergeRecord> {
    if (mergedIds.includes(keptId)) {
      throw new InvalidInputError(`device_ids: must not contain the device merged into (${keptId}); list only the devices to merge into it`);
    }
    const record = await this.db.transaction().execute(async (trx) => {
      const kept = await trx.selectFrom('devices').selectAll().where('id', '=', keptId).executeTakeFirst();
      if (!kept) throw new NotFoundError('Device not found');
      const merged = await trx.selectFrom('devices').selectAll().where('id', 'in', mergedIds).orderBy('id').execute();
      if (merged.length !== mergedIds.length) {
        const found = new Set(merged.map((d) => d.id));
        const missing = mergedIds.filter((id) => !found.has(id));
        throw new NotFoundError(`device_ids: devices not found: ${missing.join(', ')}`, { missing });
      }
      const snapshot: MergeSnapshot = { kept: pick(kept, KEPT_COLUMNS), devices: merged, tables: {} };
      snapshot.parents = await moveParents(trx, keptId, mergedIds);
      for (const { table, unique } of DEVICE_TABLES) snapshot.tables[table] = await moveRows(trx, table, unique, keptId, mergedIds);
      const firstOf = (column: 'label' | 'zone' | 'notes') => kept[column] ?? merged.find((d) => d[column] !== null)?.[column] ?? null;
      await trx
        .updateTable('devices')
        .set({
          label: firstOf('label'),
          zone: firstOf('zone'),
          notes: firstOf('notes'),
          first_seen: [kept, ...merged].map((d) => d.first_seen).reduce((a, b) => (b < a ? b : a)),
          watch_offline: [kept, ...merged].some((d) => d.watch_offline === 1) ? 1 : 0,
          watch_online: [kept, ...merged].some((d) => d.watch_online === 1) ? 1 : 0,
          // Its ports and findings now include the merged ones': the next scan rewrites and assesses them again.
          ports_hash: null,
          assessed_input: null,
        })
        .where('id', '=', keptId)
        .execute();
      await trx.deleteFrom('devices').where('id', 'in', mergedIds).execute();
      const createdAt = nowIso();
      const row = await trx
        .insertInto('device_merges')
        .values({
          device_id: keptId,
          merged_ids: JSON.stringify(mergedIds),
          snapshot: JSON.stringify(snapshot),
          created_at: createdAt,
          created_by: actor,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return { id: row.id, deviceId: keptId, mergedIds, createdAt, undoneAt: null };
    });
    this.onWrite();
    return record;
  }

  /**
   * The identity resolver's fold (core/resolver.ts): device `newId`, created by scan `scanId`, is
   * device `keptId`. Recorded as a merge by `resolver` (undoable like any). `same_device`: the kept
   * device was not otherwise seen by the scan: it takes the new device's address, MAC, identity,
   * sighting and this scan's port coverage, and its ports that this scan examined are replaced by
   * what the scan found. `second_address`: the kept device was seen at another address by the
   * same scan: it keeps its own, gains the other address's history and any port it lacks.
   * Null when either device is gone.
   */
  async fold(keptId: number, newId: number, scanId: number, kind: FoldKind): Promise<MergeRecord | null> {
    const record = await this.db.transaction().execute(async (trx) => {
      const kept = await trx.selectFrom('devices').selectAll().where('id', '=', keptId).executeTakeFirst();
      const folded = await trx.selectFrom('devices').selectAll().where('id', '=', newId).executeTakeFirst();
      if (!kept || !folded) return null;
      const same = kind === 'same_device';
      const snapshot: MergeSnapshot = { kept: pick(kept, same ? FOLD_COLUMNS : KEPT_COLUMNS), devices: [folded], tables: {} };
      // What this scan examined on the new device: the kept device's ports there are now what the scan found.
      const segment = parseSegments(folded.port_coverage).find((s) => s.scan_id === scanId);
      const examined = segment ? storedCoverage(segment.ports) : null;
      snapshot.parents = await moveParents(trx, keptId, [newId]);
      for (const { table, unique } of DEVICE_TABLES) {
        const prefer = same && table === 'ports' ? 'merged' : 'kept';
        const stale = same && table === 'ports' && examined ? (r: Row) => covers(examined, Number(r.port), String(r.protocol)) : undefined;
        snapshot.tables[table] = await moveRows(trx, table, unique, keptId, [newId], prefer, stale);
      }
      await trx.deleteFrom('devices').where('id', '=', newId).execute();
      return finishFold(trx, { kept, folded, same, examined, segment, keptId, newId, snapshot }, scanId);
    });
    if (record) this.onWrite();
    return record;
  }

  /**
   * The resolver's folds of one scan, in order, as `fold` makes them one after the other: a fold
   * into a device an earlier one folded goes to where that one went. Independent folds (no device
   * in two of them) are made together, one transaction and a few statements per table for all
   * (a rescan that folds a hundred devices spent most of their cost on per-fold statements,
   * profiled); a fold that depends on an earlier one waits for it. Each fold's result is fold's:
   * its merge record (undoable like any), or null when either device is gone, with the device it
   * went into.
   */
  async foldAll(
    folds: readonly { deviceId: number; into: number; kind: FoldKind }[],
    scanId: number,
  ): Promise<({ target: number; merge: MergeRecord } | null)[]> {
    const results: ({ target: number; merge: MergeRecord } | null)[] = [];
    const into = new Map<number, number>();
    let batch: { index: number; keptId: number; newId: number; kind: FoldKind }[] = [];
    let busy = new Set<number>();
    const flush = async () => {
      if (batch.length === 0) return;
      const made = await this.foldBatch(batch, scanId);
      batch.forEach((b, i) => {
        const merge = made[i];
        results[b.index] = merge ? { target: b.keptId, merge } : null;
        if (merge) into.set(b.newId, b.keptId);
      });
      batch = [];
      busy = new Set();
    };
    for (const [index, f] of folds.entries()) {
      if (busy.has(f.into) || busy.has(f.deviceId) || busy.has(into.get(f.into) ?? f.into)) await flush();
      const keptId = into.get(f.into) ?? f.into;
      if (busy.has(keptId)) await flush();
      batch.push({ index, keptId, newId: f.deviceId, kind: f.kind });
      busy.add(keptId).add(f.deviceId).add(f.into);
    }
    await flush();
    if (results.some((r) => r !== null)) this.onWrite();
    return results;
  }

  /** `fold` for folds of which no two share a device, in one transaction: the same rows, snapshots and merge records. */
  private async foldBatch(folds: readonly { keptId: number; newId: number; kind: FoldKind }[], scanId: number): Promise<(MergeRecord | null)[]> {
    return this.db.transaction().execute(async (trx) => {
      const any = trx as unknown as Kysely<Record<string, Row>>;
      const devices = new Map<number, DeviceRow>();
      for (const part of chunks(
        folds.flatMap((f) => [f.keptId, f.newId]),
        IDS_PER_STATEMENT,
      )) {
        for (const d of await trx.selectFrom('devices').selectAll().where('id', 'in', part).execute()) devices.set(d.id, d);
      }
      const valid = folds.filter((f) => devices.has(f.keptId) && devices.has(f.newId));
      const plans = valid.map((f) => {
        const kept = devices.get(f.keptId)!;
        const folded = devices.get(f.newId)!;
        const same = f.kind === 'same_device';
        const segment = parseSegments(folded.port_coverage).find((s) => s.scan_id === scanId);
        const snapshot: MergeSnapshot = { kept: pick(kept, same ? FOLD_COLUMNS : KEPT_COLUMNS), devices: [folded], tables: {} };
        return { ...f, kept, folded, same, segment, examined: segment ? storedCoverage(segment.ports) : null, snapshot };
      });
      const byId = (rows: Row[]) => {
        const out = new Map<number, Row[]>();
        for (const r of rows) {
          const list = out.get(r.device_id);
          if (list) list.push(r);
          else out.set(r.device_id, [r]);
        }
        return out;
      };
      const newIds = plans.map((p) => p.newId);
      const keptIds = plans.map((p) => p.keptId);
      // As fold does: links between the two devices go, links naming the new one as parent name the kept one.
      await moveParentsOfFolds(trx, plans);
      for (const { table, unique } of DEVICE_TABLES) {
        const mergedRows = new Map<number, Row[]>();
        for (const part of chunks(newIds, IDS_PER_STATEMENT)) {
          const rows = (await any.selectFrom(table).selectAll().where('device_id', 'in', part).orderBy('device_id').orderBy('id').execute()) as Row[];
          for (const [id, list] of byId(rows)) mergedRows.set(id, list);
        }
        // The kept devices' rows, where a fold compares with them.
        const needKept = plans.some((p) => unique.length > 0 || (p.same && table === 'ports'));
        const keptRows = new Map<number, Row[]>();
        if (needKept) {
          for (const part of chunks(keptIds, IDS_PER_STATEMENT)) {
            const rows = (await any
              .selectFrom(table)
              .selectAll()
              .where('device_id', 'in', part)
              .orderBy('device_id')
              .orderBy('id')
              .execute()) as Row[];
            for (const [id, list] of byId(rows)) keptRows.set(id, list);
          }
        }
        const removedIds: number[] = [];
        const movedRows: { id: number; device_id: number }[] = [];
        const settling: { plan: (typeof plans)[number]; rows: Row[]; moved: Record<string, number[]> }[] = [];
        for (const p of plans) {
          const prefer = p.same && table === 'ports' ? 'merged' : 'kept';
          const examined = p.examined;
          const stale = p.same && table === 'ports' && examined ? (r: Row) => covers(examined, Number(r.port), String(r.protocol)) : undefined;
          const rows = mergedRows.get(p.newId) ?? [];
          const result = planMove(unique, rows, keptRows.get(p.keptId) ?? [], prefer, stale);
          p.snapshot.tables[table] = result;
          settling.push({ plan: p, rows, moved: result.moved });
          for (const r of result.removed) removedIds.push(r.id);
          for (const ids of Object.values(result.moved)) for (const id of ids) movedRows.push({ id, device_id: p.keptId });
        }
        for (const part of chunks(removedIds, IDS_PER_STATEMENT)) await any.deleteFrom(table).where('id', 'in', part).execute();
        // The ports each fold settles (settleMovedPorts), in one pass for all: no row is in two folds.
        const settledIds: number[] = [];
        for (const { plan, rows, moved } of settling) {
          const settled = settledPorts(table, rows, moved);
          for (const p of settled) settledIds.push(p.id);
          if (settled.length) plan.snapshot.tables[table] = { ...plan.snapshot.tables[table]!, settled };
        }
        await settlePortVerification(trx, settledIds);
        await updateManyById(trx, table, { device_id: 'integer' }, movedRows);
      }
      for (const part of chunks(newIds, IDS_PER_STATEMENT)) await trx.deleteFrom('devices').where('id', 'in', part).execute();
      const made = await finishFolds(trx, plans, scanId);
      return folds.map((f) => made.get(f.newId) ?? null);
    });
  }

  /** Pairs of devices a person separated: every undone merge's kept device with each device it had merged. */
  async separatedPairs(deviceIds: readonly number[]): Promise<[number, number][]> {
    if (deviceIds.length === 0) return [];
    const pairs: [number, number][] = [];
    for (const part of chunks([...deviceIds], IDS_PER_STATEMENT)) {
      const rows = await this.db
        .selectFrom('device_merges')
        .select(['device_id', 'merged_ids'])
        .where('undone_at', 'is not', null)
        .where('device_id', 'in', part)
        .execute();
      for (const r of rows) for (const m of JSON.parse(r.merged_ids) as number[]) pairs.push([r.device_id, m]);
    }
    return pairs;
  }

  async get(id: number): Promise<MergeRecord | undefined> {
    const row = await this.db
      .selectFrom('device_merges')
      .select(['id', 'device_id', 'merged_ids', 'created_at', 'undone_at'])
      .where('id', '=', id)
      .executeTakeFirst();
    return (
      row && {
        id: row.id,
        deviceId: row.device_id,
        mergedIds: JSON.parse(row.merged_ids) as number[],
        createdAt: row.created_at,
        undoneAt: row.undone_at,
      }
    );
  }

  /**
   * Restores the devices and rows as they were before the merge. Throws NotFoundError (no such
   * merge) or ConflictError (already undone; the kept device deleted since; a device created since
   * holds a merged device's identity).
   */
  async undo(id: number): Promise<MergeRecord> {
    const record = await this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('device_merges').selectAll().where('id', '=', id).executeTakeFirst();
      if (!row) throw new NotFoundError('Merge not found');
      if (row.undone_at !== null) throw new ConflictError(`Merge ${id} was already undone at ${row.undone_at}`, { undone_at: row.undone_at });
      const snapshot = JSON.parse(row.snapshot) as MergeSnapshot;
      const kept = await trx.selectFrom('devices').select(['id', 'ports_hash', 'assessed_input']).where('id', '=', row.device_id).executeTakeFirst();
      if (!kept)
        throw new ConflictError(`Device ${row.device_id}, which the merge kept, was deleted since; the merge cannot be undone`, {
          device_id: row.device_id,
        });
      const identities = snapshot.devices.map((d) => d.identity);
      // A resolver fold gave the kept device a merged device's identity: the undo gives it back first.
      const restoresIdentity = snapshot.kept.identity !== undefined;
      const holders = await trx
        .selectFrom('devices')
        .select(['id', 'identity'])
        .where((eb) =>
          eb.or([
            eb('identity', 'in', identities),
            eb(
              'id',
              'in',
              snapshot.devices.map((d) => d.id),
            ),
          ]),
        )
        .where('id', '!=', restoresIdentity ? row.device_id : -1)
        .execute();
      if (holders.length > 0) {
        const ids = holders.map((h) => h.id);
        throw new ConflictError(
          `Device(s) ${ids.join(', ')} were created since the merge with the identity of a merged device (${holders.map((h) => h.identity).join(', ')}); ` +
            'delete them or merge them into the kept device, then undo again',
          { conflicting_device_ids: ids },
        );
      }
      // The hash and assessment the kept device had, unless a scan has computed them again since.
      const untouched = kept.ports_hash === null && kept.assessed_input === null;
      const { ports_hash, assessed_input, ...values } = snapshot.kept;
      await trx
        .updateTable('devices')
        .set({ ...values, ...(untouched ? { ports_hash, assessed_input } : { ports_hash: null, assessed_input: null }) })
        .where('id', '=', row.device_id)
        .execute();
      for (const device of snapshot.devices) await trx.insertInto('devices').values(device).execute();
      const any = trx as unknown as Kysely<Record<string, Row>>;
      for (const { table, unique } of DEVICE_TABLES) {
        const saved = snapshot.tables[table];
        if (!saved) continue;
        for (const [deviceId, ids] of Object.entries(saved.moved)) {
          for (const part of chunks(ids, IDS_PER_STATEMENT)) {
            await any
              .updateTable(table)
              .set({ device_id: Number(deviceId) })
              .where('id', 'in', part)
              .where('device_id', '=', row.device_id)
              .execute();
          }
        }
        // Moved ports back with the verification they had (their device is back with its own).
        for (const p of saved.settled ?? []) {
          await trx
            .updateTable('ports')
            .set({ last_verified_at: p.last_verified_at, verified_by_scan_id: p.verified_by_scan_id, verified_with_device: 1 })
            .where('id', '=', p.id)
            .where('device_id', '=', p.device_id)
            .where('verified_with_device', '=', 0)
            .execute();
        }
        for (const removed of saved.removed) {
          // A row of the kept device a resolver fold replaced: unless a later scan wrote that row again.
          if (removed.device_id === row.device_id && unique.length > 0) {
            let again = any.selectFrom(table).select('id').where('device_id', '=', row.device_id);
            for (const c of unique) again = again.where(c, '=', removed[c] as never);
            if (await again.executeTakeFirst()) continue;
          }
          await any.insertInto(table).values(removed).execute();
        }
      }
      if (snapshot.parents) await restoreParents(trx, row.device_id, snapshot.parents);
      const undoneAt = nowIso();
      await trx.updateTable('device_merges').set({ undone_at: undoneAt }).where('id', '=', id).execute();
      return { id, deviceId: row.device_id, mergedIds: JSON.parse(row.merged_ids) as number[], createdAt: row.created_at, undoneAt };
    });
    this.onWrite();
    return record;
  }
}

/** What a resolver fold sets on the kept device (`same_device`: the folded device's address, MAC, identity and sighting too). */
function foldedValues(
  kept: DeviceRow,
  folded: DeviceRow,
  same: boolean,
  examined: ReturnType<typeof storedCoverage> | null,
  segment: ReturnType<typeof parseSegments>[number] | undefined,
  scanId: number,
) {
  return {
    first_seen: kept.first_seen < folded.first_seen ? kept.first_seen : folded.first_seen,
    ports_hash: null,
    assessed_input: null,
    ...(same
      ? {
          identity: folded.identity,
          ip_address: folded.ip_address,
          ip_sort: folded.ip_sort,
          ...(folded.mac_address ? { mac_address: folded.mac_address, mac_randomized: folded.mac_randomized, mac_source: folded.mac_source } : {}),
          ...(folded.hostname ? { hostname: folded.hostname, hostname_source: folded.hostname_source } : {}),
          ...(folded.vendor ? { vendor: folded.vendor } : {}),
          last_seen: folded.last_seen,
          last_scan_id: folded.last_scan_id,
          port_coverage: examined
            ? JSON.stringify(examineSegments(parseSegments(kept.port_coverage), scanId, segment!.at, examined))
            : kept.port_coverage,
        }
      : {}),
  };
}

/** A fold's last step, once its rows moved and the new device is gone: the kept device's columns, and the merge record (by `resolver`). */
async function finishFold(
  trx: Transaction<Database>,
  fold: {
    kept: DeviceRow;
    folded: DeviceRow;
    same: boolean;
    examined: ReturnType<typeof storedCoverage> | null;
    segment: ReturnType<typeof parseSegments>[number] | undefined;
    keptId: number;
    newId: number;
    snapshot: MergeSnapshot;
  },
  scanId: number,
): Promise<MergeRecord> {
  const { kept, folded, same, examined, segment, keptId, newId, snapshot } = fold;
  const at = nowIso();
  await trx
    .updateTable('devices')
    .set(foldedValues(kept, folded, same, examined, segment, scanId))
    .where('id', '=', keptId)
    .execute();
  const row = await trx
    .insertInto('device_merges')
    .values({
      device_id: keptId,
      merged_ids: JSON.stringify([newId]),
      snapshot: JSON.stringify(snapshot),
      created_at: at,
      created_by: RESOLVER_ACTOR,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: row.id, deviceId: keptId, mergedIds: [newId], createdAt: at, undoneAt: null };
}

/** The columns foldedValues sets, with their types for a bulk update. */
const FOLDED_TYPES: Readonly<Record<string, BulkType>> = {
  first_seen: 'text',
  ports_hash: 'text',
  assessed_input: 'text',
  identity: 'text',
  ip_address: 'text',
  ip_sort: 'bigint',
  mac_address: 'text',
  mac_randomized: 'integer',
  mac_source: 'text',
  hostname: 'text',
  hostname_source: 'text',
  vendor: 'text',
  last_seen: 'text',
  last_scan_id: 'integer',
  port_coverage: 'text',
};

/**
 * finishFold for folds of which no two share a device, in a few statements for all: the kept
 * devices' columns (one bulk update per set of columns) and the merge records (one bulk insert,
 * in the folds' order). The merge records by the folded device's id.
 */
async function finishFolds(
  trx: Transaction<Database>,
  folds: readonly Parameters<typeof finishFold>[1][],
  scanId: number,
): Promise<Map<number, MergeRecord>> {
  const made = new Map<number, MergeRecord>();
  if (folds.length === 0) return made;
  const at = nowIso();
  const byShape = new Map<string, Record<string, unknown>[]>();
  for (const f of folds) {
    const values = foldedValues(f.kept, f.folded, f.same, f.examined, f.segment, scanId);
    const shape = Object.keys(values).join(',');
    const list = byShape.get(shape);
    if (list) list.push({ id: f.keptId, ...values });
    else byShape.set(shape, [{ id: f.keptId, ...values }]);
  }
  for (const [shape, rows] of byShape) {
    await updateManyById(trx, 'devices', Object.fromEntries(shape.split(',').map((c) => [c, FOLDED_TYPES[c]])), rows);
  }
  const inserted = await insertManyWith<{ id: number; device_id: number }>(
    trx,
    'device_merges',
    { device_id: 'integer', merged_ids: 'text', snapshot: 'text', created_at: 'text', created_by: 'text' },
    folds.map((f) => ({
      device_id: f.keptId,
      merged_ids: JSON.stringify([f.newId]),
      snapshot: JSON.stringify(f.snapshot),
      created_at: at,
      created_by: RESOLVER_ACTOR,
    })),
    'returning id, device_id',
  );
  // By the kept device (one per fold here), not by position: RETURNING promises no order.
  const idOf = new Map(inserted.map((r) => [Number(r.device_id), Number(r.id)]));
  for (const f of folds) made.set(f.newId, { id: idOf.get(f.keptId)!, deviceId: f.keptId, mergedIds: [f.newId], createdAt: at, undoneAt: null });
  return made;
}

/**
 * moveParents for folds of which no two share a device, in a few statements for all: a link
 * between the two devices of one fold goes; links naming a fold's new device as the parent name its
 * kept device. Each fold's snapshot gets what an undo restores, as moveParents returns it.
 */
async function moveParentsOfFolds(
  trx: Transaction<Database>,
  folds: readonly { keptId: number; newId: number; snapshot: MergeSnapshot }[],
): Promise<void> {
  const foldOf = new Map<number, number>();
  folds.forEach((f, i) => foldOf.set(f.keptId, i).set(f.newId, i));
  const removed: Row[][] = folds.map(() => []);
  const moved: Record<string, number[]>[] = folds.map(() => ({}));
  const ids = [...foldOf.keys()];
  const removedIds: number[] = [];
  for (const part of chunks(ids, IDS_PER_STATEMENT)) {
    const rows = (await trx.selectFrom('device_links').selectAll().where('device_id', 'in', part).orderBy('id').execute()) as unknown as Row[];
    for (const r of rows) {
      const i = foldOf.get(r.device_id);
      if (i !== undefined && foldOf.get(Number(r.parent_device_id)) === i) {
        removed[i].push(r);
        removedIds.push(r.id);
      }
    }
  }
  for (const list of removed) list.sort((a, b) => a.id - b.id);
  for (const part of chunks(removedIds, IDS_PER_STATEMENT)) await trx.deleteFrom('device_links').where('id', 'in', part).execute();
  const keptOf = new Map(folds.map((f) => [f.newId, f.keptId]));
  const parents: { id: number; parent_device_id: number }[] = [];
  for (const part of chunks([...keptOf.keys()], IDS_PER_STATEMENT)) {
    parents.push(
      ...(await trx.selectFrom('device_links').select(['id', 'parent_device_id']).where('parent_device_id', 'in', part).orderBy('id').execute()),
    );
  }
  parents.sort((a, b) => a.id - b.id);
  for (const r of parents) (moved[foldOf.get(r.parent_device_id)!][String(r.parent_device_id)] ??= []).push(r.id);
  await updateManyById(
    trx,
    'device_links',
    { parent_device_id: 'integer' },
    parents.map((r) => ({ id: r.id, parent_device_id: keptOf.get(r.parent_device_id)! })),
  );
  folds.forEach((f, i) => (f.snapshot.parents = { moved: moved[i], removed: removed[i] }));
}

/** Moves `table`'s rows of the merged devices to the kept device; a row colliding on `unique` with one already there is removed. */
async function moveRows(
  trx: Transaction<Database>,
  table: DeviceTable,
  unique: readonly string[],
  keptId: number,
  mergedIds: number[],
  prefer: 'kept' | 'merged' = 'kept',
  stale?: (keptRow: Row) => boolean,
): Promise<{ moved: Record<string, number[]>; removed: Row[]; settled?: SettledPort[] }> {
  const any = trx as unknown as Kysely<Record<string, Row>>;
  const rows = (await any.selectFrom(table).selectAll().where('device_id', 'in', mergedIds).orderBy('device_id').orderBy('id').execute()) as Row[];
  let keptRows: Record<string, unknown>[] = [];
  if (prefer === 'merged') keptRows = await any.selectFrom(table).selectAll().where('device_id', '=', keptId).orderBy('id').execute();
  else if (unique.length > 0)
    keptRows = await any
      .selectFrom(table)
      .select(unique as string[])
      .where('device_id', '=', keptId)
      .execute();
  const { moved, removed } = planMove(unique, rows, keptRows, prefer, stale);
  for (const part of chunks(
    removed.map((r) => r.id),
    IDS_PER_STATEMENT,
  )) {
    await any.deleteFrom(table).where('id', 'in', part).execute();
  }
  const settled = await settleMovedPorts(trx, table, rows, moved);
  for (const ids of Object.values(moved)) {
    for (const part of chunks(ids, IDS_PER_STATEMENT)) await any.updateTable(table).set({ device_id: keptId }).where('id', 'in', part).execute();
  }
  return { moved, removed, ...(settled.length ? { settled } : {}) };
}

/**
 * Ports verified with their device's last port recording (migration 022) keep that verification
 * as their own when they move: the kept device's is not theirs. Returns their own columns from
 * before, for an undo.
 */
async function settleMovedPorts(
  trx: Transaction<Database>,
  table: DeviceTable,
  rows: Row[],
  moved: Record<string, number[]>,
): Promise<SettledPort[]> {
  const settled = settledPorts(table, rows, moved);
  await settlePortVerification(
    trx,
    settled.map((p) => p.id),
  );
  return settled;
}

/** The moved ports settleMovedPorts settles, with their own columns from before. */
function settledPorts(table: DeviceTable, rows: Row[], moved: Record<string, number[]>): SettledPort[] {
  if (table !== 'ports') return [];
  const movedIds = new Set(Object.values(moved).flat());
  return rows
    .filter((r) => r.verified_with_device === 1 && movedIds.has(r.id))
    .map((r) => ({
      id: r.id,
      device_id: r.device_id,
      last_verified_at: r.last_verified_at as string | null,
      verified_by_scan_id: r.verified_by_scan_id as number | null,
    }));
}

/**
 * Which of the merged devices' `rows` move to the kept device and which rows are removed: a merged
 * row colliding on `unique` with one of `keptRows` (or with an earlier merged row) is removed; with
 * `prefer` `merged` (a resolver fold: they are what the scan just found), the kept device's colliding
 * rows, and those `stale` says the scan replaced, are removed instead (`keptRows` whole, in id order).
 */
function planMove(
  unique: readonly string[],
  rows: readonly Row[],
  keptRows: readonly Record<string, unknown>[],
  prefer: 'kept' | 'merged',
  stale?: (keptRow: Row) => boolean,
): { moved: Record<string, number[]>; removed: Row[] } {
  const keyOf = (r: Record<string, unknown>) => JSON.stringify(unique.map((c) => r[c]));
  const taken = new Set<string>();
  const moved: Record<string, number[]> = {};
  const removed: Row[] = [];
  if (prefer === 'merged') {
    const incoming = new Set(rows.map(keyOf));
    removed.push(...(keptRows as Row[]).filter((r) => incoming.has(keyOf(r)) || stale?.(r)));
  } else if (unique.length > 0) {
    for (const r of keptRows) taken.add(keyOf(r));
  }
  for (const r of rows) {
    if (unique.length > 0) {
      const key = keyOf(r);
      if (taken.has(key)) {
        removed.push(r);
        continue;
      }
      taken.add(key);
    }
    (moved[String(r.device_id)] ??= []).push(r.id);
  }
  return { moved, removed };
}

/**
 * Before a merge moves the merged devices' rows: the links between the devices merged (kept one
 * included) are removed (they would link the kept device to itself), and the links naming a merged
 * device as the parent now name the kept device. Returns what an undo restores.
 */
async function moveParents(trx: Transaction<Database>, keptId: number, mergedIds: number[]): Promise<NonNullable<MergeSnapshot['parents']>> {
  const all = [keptId, ...mergedIds];
  const removed = (await trx
    .selectFrom('device_links')
    .selectAll()
    .where('device_id', 'in', all)
    .where('parent_device_id', 'in', all)
    .orderBy('id')
    .execute()) as unknown as Row[];
  for (const part of chunks(
    removed.map((r) => r.id),
    IDS_PER_STATEMENT,
  ))
    await trx.deleteFrom('device_links').where('id', 'in', part).execute();
  const rows = await trx
    .selectFrom('device_links')
    .select(['id', 'parent_device_id'])
    .where('parent_device_id', 'in', mergedIds)
    .orderBy('id')
    .execute();
  const moved: Record<string, number[]> = {};
  for (const r of rows) (moved[String(r.parent_device_id)] ??= []).push(r.id);
  for (const part of chunks(
    rows.map((r) => r.id),
    IDS_PER_STATEMENT,
  ))
    await trx.updateTable('device_links').set({ parent_device_id: keptId }).where('id', 'in', part).execute();
  return { moved, removed };
}

/** An undo's counterpart of moveParents (after the merged devices and their own rows are back). */
async function restoreParents(trx: Transaction<Database>, keptId: number, parents: NonNullable<MergeSnapshot['parents']>): Promise<void> {
  for (const [parentId, ids] of Object.entries(parents.moved))
    for (const part of chunks(ids, IDS_PER_STATEMENT))
      await trx
        .updateTable('device_links')
        .set({ parent_device_id: Number(parentId) })
        .where('id', 'in', part)
        .where('parent_device_id', '=', keptId)
        .execute();
  for (const removed of parents.removed) {
    // Unless a later refresh of that source linked the device again.
    const again = await trx
      .selectFrom('device_links')
      .select('id')
      .where('device_id', '=', Number(removed.device_id))
      .where('source', '=', String(removed.source))
      .executeTakeFirst();
    const ends = await trx
      .selectFrom('devices')
      .select('id')
      .where('id', 'in', [Number(removed.device_id), Number(removed.parent_device_id)])
      .execute();
    if (!again && ends.length === 2) await (trx as unknown as Kysely<Record<string, Row>>).insertInto('device_links').values(removed).execute();
  }
}

function pick<T extends object, K extends keyof T>(row: T, keys: readonly K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, row[k]])) as Pick<T, K>;
}
