/**
 * What each device is and what names it (CONTRACT §15): its identity keys, the evidence of its
 * latest recognition, the decisions scans made about it, and the fields a person set, which no
 * scan overwrites (migration 015). Scans write through recordRecognition (src/scan/identify.ts);
 * the API reads through get (GET /api/devices/{id}/identity).
 */
import { type Kysely, type Transaction, type Updateable } from 'kysely';
import { isDeviceType } from '../core/device-types.js';
import type { IdentityKey } from '../core/identity-keys.js';
import type { StoredKey } from '../core/resolver.js';
import { IDS_PER_STATEMENT, chunks } from '../util/batches.js';
import type { Database, DevicesTable } from './schema.js';
import { evidenceDigest, evidenceItems, evidenceOfField, evidenceText, fieldPattern, type EvidenceItem } from './evidence.js';
import { insertMany, insertTuples, updateManyById, type BulkType, type Tuple } from './bulk.js';

/** Fields a person may set on a device that discovery also fills; `name` is the device's label. */
export const USER_SET_FIELDS = ['name', 'device_type'] as const;
export type UserSetField = (typeof USER_SET_FIELDS)[number];

/** When each user-set field was set (devices.user_fields). */
export type UserFieldTimes = Partial<Record<UserSetField, string>>;

export function parseUserFields(stored: string | null | undefined): UserFieldTimes {
  if (!stored) return {};
  try {
    const value: unknown = JSON.parse(stored);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
    const out: UserFieldTimes = {};
    for (const field of USER_SET_FIELDS) {
      const at = (value as Record<string, unknown>)[field];
      if (typeof at === 'string') out[field] = at;
    }
    return out;
  } catch {
    return {};
  }
}

export interface IdentityKeyRecord {
  kind: string;
  value: string;
  source: string;
  first_seen: string;
  last_seen: string;
}

/** One hit of the device's latest recognition, as stored (src/store/evidence.ts), with when it was read. */
export interface EvidenceRecord extends EvidenceItem {
  observed_at: string;
}

export interface DecisionRecord {
  scan_id: number | null;
  rule: string;
  explanation: string;
  at: string;
}

export interface DeviceIdentity {
  keys: IdentityKeyRecord[];
  evidence: EvidenceRecord[];
  decisions: DecisionRecord[];
}

/** One device's recognition by a scan, as src/scan/identify.ts computes it. */
export interface DeviceRecognitionRecord {
  deviceId: number;
  keys: readonly IdentityKey[];
  /** What recognition concluded; null fields leave the stored value as it is. */
  fields: {
    device_type: string;
    type_confidence: number;
    vendor: string | null;
    model: string | null;
    os_name: string | null;
    os_version: string | null;
    discovered_name: string | null;
  };
  /** The evidence read; replaces the device's stored evidence. */
  evidence: readonly Omit<EvidenceRecord, 'observed_at'>[];
  /** The short reason (core/recognition.ts reasonOf), recorded as a decision when the result changed. */
  reason: string;
  /** Other decisions about the device in this scan (new device, address change, resolver notes). */
  decisions: readonly { rule: string; explanation: string }[];
}

/** A stored key as keysOfHolders reads it: what the resolver compares, and its row (id, source). */
export interface HeldKey extends StoredKey {
  id: number;
  source: string;
}

/**
 * What the resolution of a scan read before recording (keysOfHolders), handed to recordRecognition
 * so that it does not read the same keys again: every key of every device listed in `keys`, as it
 * was read; `changed`: devices whose keys were written since (the devices of the folds made), read
 * again.
 */
export interface HeldKeys {
  keys: readonly HeldKey[];
  changed: Iterable<number>;
}

/**
 * keysOfHolders reads every stored key when it looks for at least one in this many of them (the
 * keys of a scan of most of the inventory), and looks each up otherwise.
 */
const WHOLE_READ_SHARE = 4;

/** How many decisions are kept per device: the oldest go first. */
const DECISIONS_KEPT = 200;

const KIND_ORDER = [
  'mac',
  'ssh_host_key',
  'tls_certificate',
  'upnp_udn',
  'snmp_engine_id',
  'mdns_name',
  'netbios_name',
  'dhcp_client_id',
  'hostname',
  'ip',
];

export class IdentityStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly onWrite: () => void,
  ) {}

  /** The device's identity record; undefined for an unknown device. */
  async get(deviceId: number): Promise<DeviceIdentity | undefined> {
    const device = await this.db
      .selectFrom('devices')
      .select(['id', 'label', 'device_type', 'user_fields'])
      .where('id', '=', deviceId)
      .executeTakeFirst();
    if (!device) return undefined;
    const [keys, evidence, decisions] = await Promise.all([
      this.db
        .selectFrom('device_identity_keys')
        .select(['kind', 'value', 'source', 'first_seen', 'last_seen'])
        .where('device_id', '=', deviceId)
        .orderBy('id')
        .execute(),
      this.db.selectFrom('device_evidence').select(['evidence', 'observed_at']).where('device_id', '=', deviceId).orderBy('id').execute(),
      this.db
        .selectFrom('identity_decisions')
        .select(['scan_id', 'rule', 'explanation', 'at'])
        .where('device_id', '=', deviceId)
        .orderBy('id', 'desc')
        .limit(DECISIONS_KEPT)
        .execute(),
    ]);
    // What a person set comes first, with the source `user`.
    const set = parseUserFields(device.user_fields);
    const user: EvidenceRecord[] = [];
    if (set.name && device.label !== null)
      user.push({
        field: 'name',
        value: device.label,
        source: 'user',
        detail: 'Named by a person; scans do not change it',
        confidence: 100,
        observed_at: set.name,
      });
    if (set.device_type && device.device_type !== null)
      user.push({
        field: 'device_type',
        value: device.device_type,
        source: 'user',
        detail: 'Type set by a person; scans do not change it',
        confidence: 100,
        observed_at: set.device_type,
      });
    return {
      keys: [...keys].sort((a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0)),
      evidence: [...user, ...evidence.flatMap((row) => evidenceItems(row.evidence).map((e) => ({ ...e, observed_at: row.observed_at })))],
      decisions,
    };
  }

  /**
   * Records what scan `scanId` recognised about each device, one transaction for all: keys
   * (a strong key another device holds is not taken from it: a decision says so), evidence
   * (replacing the device's previous evidence), the discovered fields (never one a person set)
   * and the decisions.
   */
  async recordRecognition(scanId: number | null, records: readonly DeviceRecognitionRecord[], at: string, held?: HeldKeys): Promise<void> {
    if (records.length === 0) return;
    // A device listed twice: one record after the other, each reading what the one before wrote.
    const once = new Set(records.map((r) => r.deviceId)).size === records.length;
    const heldKeys = once && held ? keysByDevice(held) : undefined;
    await this.db.transaction().execute(async (trx) => {
      if (!once) for (const record of records) await this.recordOne(trx, scanId, record, at);
      else for (const part of chunks(records, IDS_PER_STATEMENT)) await this.recordBatch(trx, scanId, part, at, heldKeys);
    });
    this.onWrite();
  }

  /**
   * recordOne for a batch of records of distinct devices, with the same outcome (the same rows,
   * in the same order per device) in a fixed number of statements instead of several per device (a
   * first scan of 10,000 devices spent most of its recording here, profiled): the devices, their
   * keys, the strong keys they may meet and their stored evidence are read first, then the writes go
   * out in bulk, each only where something changed: a key seen again as it was, or evidence read
   * again as stored, only has its time set (one statement per chunk, ids only); the rest is written
   * in multi-row statements. Keys taken and given up earlier in the batch count as recordOne would
   * see them.
   */
  private async recordBatch(
    trx: Transaction<Database>,
    scanId: number | null,
    records: readonly DeviceRecognitionRecord[],
    at: string,
    held?: ReadonlyMap<number, OwnKey[]>,
  ): Promise<void> {
    const ids = records.map((r) => r.deviceId);
    const devices = new Map(
      (
        await trx
          .selectFrom('devices')
          .select([
            'id',
            'device_type',
            'type_confidence',
            'vendor',
            'model',
            'os_name',
            'os_version',
            'discovered_name',
            'user_fields',
            'evidence_digest',
            // How many evidence rows the device has stored (below).
            (eb) =>
              eb
                .selectFrom('device_evidence')
                .select(eb.fn.countAll<number | string>().as('n'))
                .whereRef('device_evidence.device_id', '=', 'devices.id')
                .as('evidence_rows'),
          ])
          .where('id', 'in', ids)
          .execute()
      ).map((d) => [d.id, d]),
    );
    const seen = records.filter((r) => devices.has(r.deviceId));
    if (seen.length === 0) return;
    const seenIds = seen.map((r) => r.deviceId);
    /**
     * The devices' own keys: stored (with the row id and what it holds) or inserted by this batch (the
     * row to insert). A device has a few: a list per device, searched (no key strings joined per key).
     */
    const own = new Map<number, OwnKey[]>();
    const ownKey = (deviceId: number, kind: string, value: string) => own.get(deviceId)?.find((k) => k.kind === kind && k.value === value);
    const addOwn = (deviceId: number, key: OwnKey) => {
      const list = own.get(deviceId);
      if (list) list.push(key);
      else own.set(deviceId, [key]);
    };
    // What the resolution read (its entries are the batch's to change: each device is in one batch); the other devices' keys are read.
    const unread: number[] = [];
    for (const id of seenIds) {
      const keys = held?.get(id);
      if (keys) own.set(id, keys);
      else unread.push(id);
    }
    if (unread.length > 0) {
      for (const k of await trx
        .selectFrom('device_identity_keys')
        .select(['id', 'device_id', 'kind', 'value', 'strength', 'source'])
        .where('device_id', 'in', unread)
        .execute()) {
        addOwn(k.device_id, { kind: k.kind, value: k.value, id: k.id, strength: k.strength, source: k.source });
      }
    }
    /**
     * Who holds each strong key the batch may take (one device at most: the index is unique). A
     * device's own strong keys are known from the read above; the others are looked up.
     */
    const strong = new PairMap<number>();
    for (const r of seen) {
      for (const k of r.keys)
        if (k.strength === 'strong' && ownKey(r.deviceId, k.kind, k.value)?.strength === 'strong') strong.set(k.kind, k.value, r.deviceId);
    }
    const strongKeys = seen.flatMap((r) => r.keys.filter((k) => k.strength === 'strong' && strong.get(k.kind, k.value) !== r.deviceId));
    // By kind, so that each (kind, value) is one probe of the index (a list of kinds and one of
    // values probed every pairing: five times the probes, most of a first scan's lookups).
    for (const [kind, values] of valuesByKind(strongKeys)) {
      for (const part of chunks([...values], IDS_PER_STATEMENT)) {
        const rows = await trx
          .selectFrom('device_identity_keys')
          .select(['device_id', 'value'])
          .where('strength', '=', 'strong')
          .where('kind', '=', kind)
          .where('value', 'in', part)
          .orderBy('id')
          .execute();
        for (const r of rows) if (strong.get(kind, r.value) === undefined) strong.set(kind, r.value, r.device_id);
      }
    }
    /**
     * How many evidence rows each device has stored (one per recognition, src/store/evidence.ts;
     * read with the device): what its one row holds is the device's evidence_digest (written with
     * it), so no row is read (reading them cost more than the rest of a rescan's recording,
     * profiled). The count catches rows a merge moved in.
     */
    const storedEvidence = (deviceId: number) => Number(devices.get(deviceId)?.evidence_rows ?? 0);

    const keyUpdates: { id: number; last_seen: string; source: string; strength: string }[] = [];
    /** Keys seen again as they are stored: only their time changes. */
    const keysSeenAgain: number[] = [];
    const keyInserts: KeyRow[] = [];
    /** Devices whose evidence is read again as stored (its time changes), and those whose evidence is replaced (its one row, if any, to insert). */
    const evidenceSeenAgain: number[] = [];
    const evidenceReplaced: number[] = [];
    const evidence: Tuple[] = [];
    const decisionRows: Tuple[] = [];
    const patches = new Map<string, Record<string, unknown>[]>();
    for (const record of seen) {
      const { deviceId } = record;
      const device = devices.get(deviceId)!;
      const decisions = [...record.decisions];
      for (const key of record.keys) {
        if (key.strength === 'excluded') continue;
        const mine = ownKey(deviceId, key.kind, key.value);
        if (key.strength === 'strong' && mine?.strength !== 'strong') {
          const holder = strong.get(key.kind, key.value);
          if (holder !== undefined && holder !== deviceId) {
            decisions.push({
              rule: 'strong_key_held',
              explanation: `The ${key.kind.replace(/_/g, ' ')} ${key.value} also answered here, but device ${holder} holds it; it stays with that device`,
            });
            continue;
          }
        }
        if (mine) {
          if (mine.insert) Object.assign(mine.insert, { last_seen: at, source: key.source, strength: key.strength });
          else if (mine.source === key.source && mine.strength === key.strength) keysSeenAgain.push(mine.id!);
          else keyUpdates.push({ id: mine.id!, last_seen: at, source: key.source, strength: key.strength });
          if (mine.strength === 'strong' && key.strength !== 'strong' && strong.get(key.kind, key.value) === deviceId)
            strong.delete(key.kind, key.value);
          mine.strength = key.strength;
          mine.source = key.source;
        } else {
          const insert = {
            device_id: deviceId,
            kind: key.kind,
            value: key.value,
            strength: key.strength,
            source: key.source,
            first_seen: at,
            last_seen: at,
          };
          keyInserts.push(insert);
          addOwn(deviceId, { kind: key.kind, value: key.value, id: null, strength: key.strength, source: key.source, insert });
        }
        if (key.strength === 'strong') strong.set(key.kind, key.value, deviceId);
      }
      const stored = storedEvidence(deviceId);
      const digest = evidenceDigest(record.evidence);
      if (record.evidence.length === 0 ? stored === 0 : stored === 1 && device.evidence_digest === digest) {
        if (stored > 0) evidenceSeenAgain.push(deviceId);
      } else {
        if (stored > 0) evidenceReplaced.push(deviceId);
        const text = evidenceText(record.evidence);
        if (text !== null) evidence.push([deviceId, text, at]);
      }

      const patch = recognisedPatch(device, record.fields);
      if (device.evidence_digest !== digest) patch.evidence_digest = digest;
      const before = device as Record<string, unknown>;
      let changed = false;
      let described = false;
      for (const k in patch) {
        if (before[k] === (patch as Record<string, unknown>)[k]) continue;
        changed = true;
        if (k === 'device_type' || k === 'vendor' || k === 'model' || k === 'os_name' || k === 'os_version') described = true;
      }
      if (changed) {
        const shape = Object.keys(patch).join(',');
        const rows = patches.get(shape) ?? [];
        rows.push({ id: deviceId, ...patch });
        patches.set(shape, rows);
      }
      if (described) decisions.push({ rule: 'recognition', explanation: record.reason });
      for (const d of decisions) decisionRows.push([deviceId, scanId, d.rule, d.explanation, at]);
    }
    await updateManyById(trx, 'device_identity_keys', { last_seen: 'text', source: 'text', strength: 'text' }, keyUpdates);
    for (const part of chunks(keysSeenAgain, IDS_PER_STATEMENT)) {
      await trx.updateTable('device_identity_keys').set({ last_seen: at }).where('id', 'in', part).execute();
    }
    await insertMany(trx, 'device_identity_keys', KEY_COLUMNS, keyInserts);
    for (const part of chunks(evidenceReplaced, IDS_PER_STATEMENT)) {
      await trx.deleteFrom('device_evidence').where('device_id', 'in', part).execute();
    }
    for (const part of chunks(evidenceSeenAgain, IDS_PER_STATEMENT)) {
      await trx.updateTable('device_evidence').set({ observed_at: at }).where('device_id', 'in', part).execute();
    }
    await insertTuples(trx, 'device_evidence', EVIDENCE_COLUMNS, evidence);
    for (const [shape, rows] of patches) {
      await updateManyById(trx, 'devices', Object.fromEntries(shape.split(',').map((c) => [c, PATCH_TYPES[c]])), rows);
    }
    await insertTuples(trx, 'identity_decisions', DECISION_COLUMNS, decisionRows);
  }

  private async recordOne(trx: Transaction<Database>, scanId: number | null, record: DeviceRecognitionRecord, at: string): Promise<void> {
    const { deviceId } = record;
    const device = await trx
      .selectFrom('devices')
      .select(['device_type', 'type_confidence', 'vendor', 'model', 'os_name', 'os_version', 'discovered_name', 'user_fields', 'evidence_digest'])
      .where('id', '=', deviceId)
      .executeTakeFirst();
    if (!device) return;
    const decisions = [...record.decisions];

    for (const key of record.keys) {
      if (key.strength === 'excluded') continue;
      const own = await trx
        .selectFrom('device_identity_keys')
        .select(['id', 'strength'])
        .where('device_id', '=', deviceId)
        .where('kind', '=', key.kind)
        .where('value', '=', key.value)
        .executeTakeFirst();
      if (key.strength === 'strong' && own?.strength !== 'strong') {
        const holder = await trx
          .selectFrom('device_identity_keys')
          .select('device_id')
          .where('kind', '=', key.kind)
          .where('value', '=', key.value)
          .where('strength', '=', 'strong')
          .where('device_id', '!=', deviceId)
          .executeTakeFirst();
        if (holder) {
          decisions.push({
            rule: 'strong_key_held',
            explanation: `The ${key.kind.replace(/_/g, ' ')} ${key.value} also answered here, but device ${holder.device_id} holds it; it stays with that device`,
          });
          continue;
        }
      }
      if (own) {
        await trx
          .updateTable('device_identity_keys')
          .set({ last_seen: at, source: key.source, strength: key.strength })
          .where('id', '=', own.id)
          .execute();
      } else {
        await trx
          .insertInto('device_identity_keys')
          .values({
            device_id: deviceId,
            kind: key.kind,
            value: key.value,
            strength: key.strength,
            source: key.source,
            first_seen: at,
            last_seen: at,
          })
          .execute();
      }
    }

    await trx.deleteFrom('device_evidence').where('device_id', '=', deviceId).execute();
    const text = evidenceText(record.evidence);
    if (text !== null) await trx.insertInto('device_evidence').values({ device_id: deviceId, evidence: text, observed_at: at }).execute();

    const patch = recognisedPatch(device, record.fields);
    patch.evidence_digest = evidenceDigest(record.evidence);
    const before = device as Record<string, unknown>;
    const changed = Object.entries(patch)
      .filter(([k, v]) => before[k] !== v)
      .map(([k]) => k);
    if (changed.length > 0) await trx.updateTable('devices').set(patch).where('id', '=', deviceId).execute();
    if (changed.some((k) => k === 'device_type' || k === 'vendor' || k === 'model' || k === 'os_name' || k === 'os_version')) {
      decisions.push({ rule: 'recognition', explanation: record.reason });
    }
    if (decisions.length > 0) {
      await trx
        .insertInto('identity_decisions')
        .values(decisions.map((d) => ({ device_id: deviceId, scan_id: scanId, rule: d.rule, explanation: d.explanation, at })))
        .execute();
    }
  }

  /**
   * Every stored key of every device that holds one of `keys` (any strength): what the identity
   * resolver (core/resolver.ts) compares a scan's hosts with. In the order of the devices, by
   * chunks of IDS_PER_STATEMENT devices, each chunk's keys in the order of their ids.
   */
  async keysOfHolders(keys: readonly { kind: string; value: string }[]): Promise<HeldKey[]> {
    const valuesOf = valuesByKind(keys);
    let wanted = 0;
    for (const values of valuesOf.values()) wanted += values.size;
    if (wanted === 0) return [];
    // Looking up this many keys one by one costs more than reading every key once (a rescan of
    // 10,000 devices looks up the 38,000 keys it read, nearly every stored one; profiled: 0.19 s
    // of CPU one by one, 0.11 s read whole); a scan of a few hosts in a large inventory looks up.
    const { stored } = await this.db
      .selectFrom('device_identity_keys')
      .select((eb) => eb.fn.countAll<number | string>().as('stored'))
      .executeTakeFirstOrThrow();
    if (wanted * WHOLE_READ_SHARE >= Number(stored)) return this.keysOfHoldersRead(valuesOf);
    return this.keysOfHoldersLookedUp(valuesOf);
  }

  /** keysOfHolders by reading every stored key once. */
  private async keysOfHoldersRead(valuesOf: ReadonlyMap<string, ReadonlySet<string>>): Promise<HeldKey[]> {
    const rows = await this.db
      .selectFrom('device_identity_keys')
      .select(['id', 'device_id', 'kind', 'value', 'strength', 'source'])
      .orderBy('id')
      .execute();
    const holders = new Set<number>();
    for (const r of rows) if (valuesOf.get(r.kind)?.has(r.value)) holders.add(r.device_id);
    // The chunk of devices each holder would be read with (keysOfHoldersLookedUp): the same order.
    const chunkOf = new Map<number, number>();
    [...holders].sort((a, b) => a - b).forEach((id, i) => chunkOf.set(id, Math.floor(i / IDS_PER_STATEMENT)));
    const byChunk: HeldKey[][] = [];
    for (const r of rows) {
      const chunk = chunkOf.get(r.device_id);
      if (chunk === undefined) continue;
      (byChunk[chunk] ??= []).push({ deviceId: r.device_id, kind: r.kind, value: r.value, strength: r.strength, id: r.id, source: r.source });
    }
    return byChunk.flat();
  }

  /** keysOfHolders by looking up each key, then reading the holders' keys. */
  private async keysOfHoldersLookedUp(valuesOf: ReadonlyMap<string, ReadonlySet<string>>): Promise<HeldKey[]> {
    // By kind, so that the (kind, value) index serves each lookup (by value alone, every statement
    // read the whole table: most of a rescan's resolution of 10,000 devices, profiled).
    const holders = new Set<number>();
    for (const [kind, values] of valuesOf) {
      for (const part of chunks([...values], IDS_PER_STATEMENT)) {
        const rows = await this.db
          .selectFrom('device_identity_keys')
          .select('device_id')
          .where('kind', '=', kind)
          .where('value', 'in', part)
          .execute();
        for (const r of rows) holders.add(r.device_id);
      }
    }
    const out: HeldKey[] = [];
    // In the order of the devices (the lookups above give them in no particular order).
    for (const part of chunks(
      [...holders].sort((a, b) => a - b),
      IDS_PER_STATEMENT,
    )) {
      const rows = await this.db
        .selectFrom('device_identity_keys')
        .select(['id', 'device_id', 'kind', 'value', 'strength', 'source'])
        .where('device_id', 'in', part)
        .orderBy('id')
        .execute();
      for (const r of rows) out.push({ deviceId: r.device_id, kind: r.kind, value: r.value, strength: r.strength, id: r.id, source: r.source });
    }
    return out;
  }

  /**
   * The value discovery would give a field a person hands back (`null` in PUT): the strongest
   * stored evidence for it, or null.
   */
  async discoveredValue(deviceId: number, field: 'device_type'): Promise<{ value: string; confidence: number } | null> {
    const rows = await this.db
      .selectFrom('device_evidence')
      .select('evidence')
      .where('device_id', '=', deviceId)
      .where('evidence', 'like', fieldPattern(field))
      .orderBy('id')
      .execute();
    let best: { value: string; confidence: number } | null = null;
    for (const row of rows) {
      for (const e of evidenceOfField(row.evidence, field)) {
        if (best === null || e.confidence > best.confidence) best = { value: e.value, confidence: e.confidence };
      }
    }
    return best;
  }
}

/** The device's columns recognition sets (never one a person set; a null field leaves its column alone). */
function recognisedPatch(
  device: { user_fields: string | null; device_type: string | null; vendor: string | null },
  f: DeviceRecognitionRecord['fields'],
): Updateable<DevicesTable> {
  const userSet = parseUserFields(device.user_fields);
  const patch: Updateable<DevicesTable> = {};
  if (!userSet.device_type) {
    if (f.device_type !== 'unknown') {
      patch.device_type = f.device_type;
      patch.type_confidence = f.type_confidence;
    } else if (!isDeviceType(device.device_type) || device.device_type === 'unknown') {
      // What nmap's OS class said (`general purpose`) is no type of the list: unknown until recognised.
      patch.device_type = 'unknown';
      patch.type_confidence = 0;
    }
  }
  // The MAC's vendor as IEEE registers it ("Raspberry Pi Foundation") stands when recognition only shortened it.
  if (f.vendor !== null && !sameVendor(device.vendor, f.vendor)) patch.vendor = f.vendor;
  if (f.model !== null) patch.model = f.model;
  if (f.os_name !== null) patch.os_name = f.os_name;
  if (f.os_version !== null) patch.os_version = f.os_version;
  if (f.discovered_name !== null) patch.discovered_name = f.discovered_name;
  return patch;
}

/** The held keys by device, as recordBatch tracks them; the devices whose keys changed since are left out (read again). */
function keysByDevice(held: HeldKeys): Map<number, OwnKey[]> {
  const changed = new Set(held.changed);
  const out = new Map<number, OwnKey[]>();
  for (const k of held.keys) {
    if (changed.has(k.deviceId)) continue;
    const key: OwnKey = { kind: k.kind, value: k.value, id: k.id, strength: k.strength, source: k.source };
    const list = out.get(k.deviceId);
    if (list) list.push(key);
    else out.set(k.deviceId, [key]);
  }
  return out;
}

/** A device's key as recordBatch tracks it: stored (its row id) or inserted by the batch (the row). */
interface OwnKey {
  kind: string;
  value: string;
  id: number | null;
  strength: string;
  source: string;
  insert?: KeyRow;
}

/** Values by kind and value, in maps of maps: no string joined from both per lookup. */
class PairMap<T> {
  private readonly byKind = new Map<string, Map<string, T>>();

  get(kind: string, value: string): T | undefined {
    return this.byKind.get(kind)?.get(value);
  }

  set(kind: string, value: string, v: T): void {
    let values = this.byKind.get(kind);
    if (!values) this.byKind.set(kind, (values = new Map<string, T>()));
    values.set(value, v);
  }

  delete(kind: string, value: string): void {
    this.byKind.get(kind)?.delete(value);
  }
}

/** The distinct values of `keys` per kind: one lookup of the (kind, value) index per kind and value. */
function valuesByKind(keys: Iterable<{ kind: string; value: string }>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const k of keys) {
    const set = out.get(k.kind);
    if (set) set.add(k.value);
    else out.set(k.kind, new Set([k.value]));
  }
  return out;
}

/** A key row recordBatch inserts. */
type KeyRow = Record<keyof typeof KEY_COLUMNS, string | number>;

/** Columns of the bulk writes of recordBatch (tuples are in this order). */
const KEY_COLUMNS = {
  device_id: 'integer',
  kind: 'text',
  value: 'text',
  strength: 'text',
  source: 'text',
  first_seen: 'text',
  last_seen: 'text',
} as const;
const EVIDENCE_COLUMNS = { device_id: 'integer', evidence: 'text', observed_at: 'text' } as const;
const DECISION_COLUMNS = { device_id: 'integer', scan_id: 'integer', rule: 'text', explanation: 'text', at: 'text' } as const;
const PATCH_TYPES: Record<string, BulkType> = {
  device_type: 'text',
  type_confidence: 'integer',
  vendor: 'text',
  model: 'text',
  os_name: 'text',
  os_version: 'text',
  discovered_name: 'text',
  evidence_digest: 'text',
};

/** Whether `recognised` only names `current` in fewer words (letters and digits compared, case ignored). */
function sameVendor(current: string | null, recognised: string): boolean {
  if (current === null) return false;
  const key = (v: string) => v.toLowerCase().replace(/[^a-z0-9]/g, '');
  const a = key(current);
  const b = key(recognised);
  return b.length >= 2 && a.includes(b);
}
