import { createHash } from 'node:crypto';
import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import { insertManyWith, insertTuples, updateManyById, type Tuple } from './bulk.js';
import type { DeviceState, PortState } from '../core/changes.js';
import type { PresenceState } from '../core/presence.js';
import type { Change } from '../schemas/change.js';
import { insertChanges } from './changes.js';
import type { CveAffected, CveMatch, HostCpe } from '../core/cve/index.js';
import type { ScannedPort } from '../core/model.js';
import type { FindingKind, RiskAssessment, RiskFinding } from '../core/risk.js';
import type { RiskLevel, FindingSeverity } from '../core/severity.js';
import type { Database, EvaluationStateRow, EvaluationStateTable, NewChange } from './schema.js';
import { groupBy } from '../util/group-by.js';
import { IDS_PER_STATEMENT, chunks } from '../util/batches.js';
import { portFromRow } from './port-rows.js';
import { evidenceOfField, fieldPattern, type EvidenceItem } from './evidence.js';
import { parseSegments, segmentsCoverage, storedCoverage, type CoverageSegment, type PortCoverage } from '../core/coverage.js';

/** A device as risk assessment sees it: its OS and its current ports. */
export interface DevicePorts {
  id: number;
  os_name: string | null;
  ports: ScannedPort[];
}

type SnapshotRow = {
  device_id: number;
  ip_address: string;
  mac_address: string | null;
  ports: string;
  ports_hash: string | null;
  /** The port list of the snapshot's scan (scans.port_list). */
  port_list: string | null;
  /** The device's coverage when the snapshot was taken (migration 014); null for older snapshots. */
  port_coverage: string | null;
};

/** A device inside a scanned range, as presence and a `device_removed` change need it. */
export interface RangeDevice extends Omit<DeviceState, 'ports'>, PresenceState {
  ipSort: number;
}

/**
 * What the CVE matcher found on a device, as far as it is stored: a reference to the dataset's
 * record (its id, with the severity and score it had, so an id a later import drops still answers)
 * and how it matched. `remediation` is only what differs from the dataset's (null: the dataset's).
 */
export type StoredCveMatch = Pick<
  CveMatch,
  'id' | 'severity' | 'cvss_score' | 'remediation' | 'confidence' | 'port' | 'matched_product' | 'matched_version'
>;

/** The outcome of assessing one device: its risk and the CVEs matched on its ports. */
export interface DeviceAssessment {
  deviceId: number;
  risk: Pick<RiskAssessment, 'level' | 'score' | 'summary' | 'findings'>;
  cves: StoredCveMatch[];
  /** Hash of the OS and ports assessed (devices.assessed_input); null: not recorded. */
  input?: string | null;
}

/** The text of a CVE as the dataset has it (the API adds it to the stored match). */
export interface CveText {
  description: string;
  remediation: string | null;
  references: string[];
  /** Listed as known exploited in the dataset. */
  kev?: boolean;
  /** The affected products and version ranges: which version fixes it (core/cve/fixes.ts). */
  affected?: readonly CveAffected[];
}

/** Looks a CVE up in the dataset in use; undefined when the dataset (no longer) has it. */
export type CveDescriber = (id: string) => CveText | undefined;

/**
 * A device as evaluation after a scan reads it first, without its ports: what change detection
 * compares (`state`, its ports filled in later), and what its stored assessment was computed from.
 */
export interface EvaluationDevice {
  state: DeviceState;
  os_name: string | null;
  /** devices.ports_hash: equal hashes, equal ports (port-rows.ts portsHash). */
  portsHash: string | null;
  /** devices.assessed_input and assessed_with. */
  assessedInput: string | null;
  assessedWith: string | null;
  /** devices.port_coverage read back: which scan last examined which of its ports (core/coverage.ts). */
  coverage: CoverageSegment[];
  /** devices.zone: its zone's policy applies. */
  zone: string | null;
  /** Its risk as last assessed (to tell when an assessment changed its level). */
  risk: { level: RiskLevel; score: number };
  /** The CPEs its latest recognition produced (device_evidence, field `cpe`), for CVE matching: strongest evidence first. */
  cpes: HostCpe[];
}

/** A device with its ports, as risk assessment needs it. */
export interface EvaluationInput extends EvaluationDevice {
  ports: ScannedPort[];
}

/** A device as a scan's snapshot saw it, with the hash of the ports it had then (null: an older snapshot). */
export type SnapshotState = DeviceState & { portsHash: string | null };

/** The device with these ports, in its state for change detection too. */
export function withPorts(device: EvaluationDevice, ports: ScannedPort[]): EvaluationInput {
  const states = ports.map(({ port, protocol, state, service, product, version }) => ({ port, protocol, state, service, product, version }));
  return { ...device, state: { ...device.state, ports: states }, ports };
}

/** Column order of the tuples replaceAssessments builds: keep both in step. */
const FINDING_COLUMNS = {
  device_id: 'integer',
  scan_id: 'integer',
  port: 'integer',
  protocol: 'text',
  severity: 'text',
  score: 'integer',
  service: 'text',
  title: 'text',
  description: 'text',
  recommendation: 'text',
  cve_ids: 'text',
  finding_key: 'text',
  kind: 'text',
  cvss_score: 'real',
  text_id: 'integer',
} as const;
/** Where text_id sits in a finding tuple: set once the batch's texts have their ids. */
const TEXT_ID_INDEX = Object.keys(FINDING_COLUMNS).indexOf('text_id');
const FINDING_TEXT_COLUMNS = { text_key: 'text', title: 'text', description: 'text', recommendation: 'text' } as const;
const CVE_MATCH_COLUMNS = {
  device_id: 'integer',
  scan_id: 'integer',
  cve_id: 'text',
  severity: 'text',
  cvss_score: 'real',
  remediation: 'text',
  confidence: 'text',
  port: 'integer',
  matched_product: 'text',
  matched_version: 'text',
} as const;
const RISK_COLUMNS = { risk_level: 'text', risk_score: 'integer', risk_summary: 'text', assessed_input: 'text', assessed_with: 'text' } as const;

/**
 * What evaluation after a scan reads and writes: the devices' ports to assess, their findings, CVE
 * matches and risk, and the states change detection compares (now, and as earlier scans saw them).
 */
export class EvaluationStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly onWrite: () => void,
  ) {}

  /** The given devices (those that exist) with their OS and current ports. */
  async portsOf(deviceIds: number[]): Promise<DevicePorts[]> {
    return (await this.inputsOf(deviceIds)).map((d) => ({ id: d.state.deviceId, os_name: d.os_name, ports: d.ports }));
  }

  /** The given devices (those that exist), in id order, without their ports (state.ports is empty). */
  async devicesOf(deviceIds: number[]): Promise<EvaluationDevice[]> {
    const out: EvaluationDevice[] = [];
    // Devices a scan examined alike share their coverage text: each is read once (the segments are only read).
    const segmentsOf = new Map<string, CoverageSegment[]>();
    const parsed = (text: string | null) => {
      let segments = segmentsOf.get(text ?? '');
      if (!segments) segmentsOf.set(text ?? '', (segments = parseSegments(text)));
      return segments;
    };
    for (const ids of chunks(deviceIds, IDS_PER_STATEMENT)) {
      const rows = await this.db
        .selectFrom('devices')
        .select([
          'id',
          'ip_address',
          'mac_address',
          'label',
          'vendor',
          'is_trusted',
          'os_name',
          'ports_hash',
          'assessed_input',
          'assessed_with',
          'port_coverage',
          'zone',
          'risk_level',
          'risk_score',
        ])
        .where('id', 'in', ids)
        .orderBy('id')
        .execute();
      for (const d of rows) {
        out.push({
          state: { deviceId: d.id, ip: d.ip_address, mac: d.mac_address, label: d.label, vendor: d.vendor, trusted: d.is_trusted === 1, ports: [] },
          os_name: d.os_name,
          portsHash: d.ports_hash,
          assessedInput: d.assessed_input,
          assessedWith: d.assessed_with,
          coverage: parsed(d.port_coverage),
          zone: d.zone,
          risk: { level: d.risk_level as RiskLevel, score: d.risk_score },
          cpes: [],
        });
      }
    }
    const cpes = await this.cpesOf(out.map((d) => d.state.deviceId));
    for (const d of out) d.cpes = cpes.get(d.state.deviceId) ?? [];
    return out.sort((a, b) => a.state.deviceId - b.state.deviceId);
  }

  /**
   * The CPEs recognition recorded for the given devices (src/scan/identify.ts keeps, as evidence
   * with the field `cpe`, only those recognition chose), each once, with its strongest evidence.
   */
  async cpesOf(deviceIds: number[]): Promise<Map<number, HostCpe[]>> {
    const out = new Map<number, HostCpe[]>();
    for (const ids of chunks(deviceIds, IDS_PER_STATEMENT)) {
      const rows = await this.db
        .selectFrom('device_evidence')
        .select(['device_id', 'evidence'])
        .where('device_id', 'in', ids)
        .where('evidence', 'like', fieldPattern('cpe'))
        .orderBy('device_id')
        .orderBy('id')
        .execute();
      // Each device's CPE hits in stored order, then strongest first (a stable sort: ties keep that order).
      const hits = new Map<number, EvidenceItem[]>();
      for (const r of rows) {
        let list = hits.get(r.device_id);
        if (!list) hits.set(r.device_id, (list = []));
        list.push(...evidenceOfField(r.evidence, 'cpe'));
      }
      for (const [deviceId, list] of hits) {
        if (list.length === 0) continue;
        const cpes: HostCpe[] = [];
        for (const e of list.sort((x, y) => y.confidence - x.confidence)) {
          if (!cpes.some((c) => c.cpe === e.value)) cpes.push({ cpe: e.value, source: e.source, detail: e.detail });
        }
        out.set(deviceId, cpes);
      }
    }
    return out;
  }

  /** The current ports of the given devices (a device without ports is absent). */
  async portsOfDevices(deviceIds: number[]): Promise<Map<number, ScannedPort[]>> {
    const out = new Map<number, ScannedPort[]>();
    for (const ids of chunks(deviceIds, IDS_PER_STATEMENT)) {
      const rows = await this.db
        .selectFrom('ports')
        .select(['device_id', 'port', 'protocol', 'state', 'service', 'product', 'version', 'extra_info', 'cpe', 'service_guessed'])
        .where('device_id', 'in', ids)
        // In the order they were written, on both stores (PostgreSQL's heap order moves as rows are rewritten).
        .orderBy('id')
        .execute();
      for (const [id, ports] of groupBy(rows, (p) => p.device_id)) out.set(id, ports.map(portFromRow));
    }
    return out;
  }

  /** The given devices (those that exist), in id order, with their ports. */
  async inputsOf(deviceIds: number[]): Promise<EvaluationInput[]> {
    const [devices, ports] = await Promise.all([this.devicesOf(deviceIds), this.portsOfDevices(deviceIds)]);
    return devices.map((d) => withPorts(d, ports.get(d.state.deviceId) ?? []));
  }

  /**
   * Replaces the findings and CVE matches of each assessed device and sets its risk level, score,
   * summary and what they were computed from (`input`, and `fingerprint` of the rules and dataset),
   * in one transaction: a reader never sees a device half assessed. A fixed number of statements
   * per batch of devices, whatever its size: deletes by id list, one UPDATE … FROM for the
   * devices, bulk inserts (store/bulk.ts).
   */
  async replaceAssessments(scanId: number | null, batch: DeviceAssessment[], fingerprint: string | null = null): Promise<void> {
    if (batch.length === 0) return;
    // Tuples in the column order of FINDING_COLUMNS and CVE_MATCH_COLUMNS (store/bulk.ts Tuple).
    // The texts are stored once (finding_texts, migration 024): each row carries the index of its
    // texts among the batch's distinct ones until they have their ids, and empty texts of its own.
    const findingRows: unknown[][] = [];
    const cveRows: Tuple[] = [];
    const texts = new DistinctTexts();
    for (const { deviceId, risk, cves } of batch) {
      for (const f of risk.findings) {
        findingRows.push([
          deviceId,
          scanId,
          f.port,
          f.protocol,
          f.severity,
          f.score,
          f.service,
          '',
          '',
          '',
          JSON.stringify(f.cve_ids),
          f.finding_key,
          f.kind,
          f.cvss_score,
          texts.indexOf(f.title, f.description, f.recommendation),
        ]);
      }
      for (const m of cves) {
        cveRows.push([deviceId, scanId, m.id, m.severity, m.cvss_score, m.remediation, m.confidence, m.port, m.matched_product, m.matched_version]);
      }
    }
    await this.db.transaction().execute(async (trx) => {
      const textIds = await storeTexts(trx, texts.list);
      for (const row of findingRows) row[TEXT_ID_INDEX] = textIds[row[TEXT_ID_INDEX] as number];
      for (const ids of chunks(
        batch.map((a) => a.deviceId),
        IDS_PER_STATEMENT,
      )) {
        await trx.deleteFrom('risk_findings').where('device_id', 'in', ids).execute();
        await trx.deleteFrom('cve_matches').where('device_id', 'in', ids).execute();
      }
      await updateManyById(
        trx,
        'devices',
        RISK_COLUMNS,
        batch.map((a) => ({
          id: a.deviceId,
          risk_level: a.risk.level,
          risk_score: a.risk.score,
          risk_summary: a.risk.summary,
          assessed_input: a.input ?? null,
          assessed_with: fingerprint,
        })),
      );
      await insertTuples(trx, 'risk_findings', FINDING_COLUMNS, findingRows);
      await insertTuples(trx, 'cve_matches', CVE_MATCH_COLUMNS, cveRows);
    });
    this.onWrite();
  }

  /** The stored findings of a device, as assessment built them (for rescoring after an acceptance changed). */
  async findingsOf(deviceId: number): Promise<RiskFinding[]> {
    const rows = await this.db
      .selectFrom('risk_findings as f')
      .leftJoin('finding_texts as t', 't.id', 'f.text_id')
      .selectAll('f')
      .select(FINDING_TEXTS)
      .where('f.device_id', '=', deviceId)
      .orderBy('f.id')
      .execute();
    return rows.map((r) => ({
      finding_key: r.finding_key ?? `legacy:${r.id}`,
      kind: (r.kind ?? (r.cve_ids !== '[]' ? 'cve' : 'rule')) as FindingKind,
      port: r.port,
      protocol: r.protocol,
      severity: r.severity as FindingSeverity,
      score: r.score,
      service: r.service,
      title: r.title,
      description: r.description,
      recommendation: r.recommendation,
      cve_ids: JSON.parse(r.cve_ids) as string[],
      cvss_score: r.cvss_score,
    }));
  }

  /** Writes a device's findings' scores and its level, score and summary after rescoring (core/risk.ts rescoreFindings). */
  async applyScores(deviceId: number, risk: Pick<RiskAssessment, 'level' | 'score' | 'summary' | 'findings'>): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      for (const f of risk.findings) {
        await trx
          .updateTable('risk_findings')
          .set({ score: f.score })
          .where('device_id', '=', deviceId)
          .where('finding_key', '=', f.finding_key)
          .execute();
      }
      await trx
        .updateTable('devices')
        .set({ risk_level: risk.level, risk_score: risk.score, risk_summary: risk.summary })
        .where('id', '=', deviceId)
        .execute();
    });
    this.onWrite();
  }

  /** Devices not evaluated with `fingerprint` (ascending ids, at most `limit`): what a background re-evaluation has left. */
  async staleDevices(fingerprint: string, limit: number): Promise<number[]> {
    const rows = await this.db
      .selectFrom('devices')
      .select('id')
      .where((eb) => eb.or([eb('assessed_with', 'is', null), eb('assessed_with', '!=', fingerprint)]))
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /** How many devices are not evaluated with `fingerprint`, and how many there are. */
  async staleCount(fingerprint: string): Promise<{ stale: number; total: number }> {
    const row = await this.db
      .selectFrom('devices')
      .select((eb) => [
        eb.fn.countAll<number>().as('total'),
        eb.fn
          .sum<number>(
            eb
              .case()
              .when(eb.or([eb('assessed_with', 'is', null), eb('assessed_with', '!=', fingerprint)]))
              .then(1)
              .else(0)
              .end(),
          )
          .as('stale'),
      ])
      .executeTakeFirstOrThrow();
    return { stale: Number(row.stale ?? 0), total: Number(row.total) };
  }

  /** The evaluation state row (migration 006). */
  async state(): Promise<EvaluationStateRow> {
    const row = await this.db.selectFrom('evaluation_state').selectAll().where('id', '=', 1).executeTakeFirst();
    return row ?? { id: 1, fingerprint: null, target: null, devices_total: 0, devices_done: 0, started_at: null, finished_at: null };
  }

  /** Updates the evaluation state row. */
  async setState(patch: Omit<Insertable<EvaluationStateTable>, 'id'>): Promise<void> {
    await this.db
      .insertInto('evaluation_state')
      .values({ id: 1, ...patch })
      .onConflict((oc) => oc.column('id').doUpdateSet(patch))
      .execute();
  }

  /** Presence state (online flag, consecutive missed scans) of the given devices that exist. */
  async presenceOf(deviceIds: number[]): Promise<PresenceState[]> {
    const out: PresenceState[] = [];
    for (const ids of chunks(deviceIds, IDS_PER_STATEMENT)) {
      const rows = await this.db.selectFrom('devices').select(['id', 'online', 'missed_scans']).where('id', 'in', ids).execute();
      for (const r of rows) out.push({ deviceId: r.id, online: r.online === 1, missedScans: r.missed_scans });
    }
    return out;
  }

  /** Every device whose current address lies in [low, high] (IPv4 as integers), in address order. */
  async devicesWithin(low: number, high: number): Promise<RangeDevice[]> {
    const rows = await this.db
      .selectFrom('devices')
      .select(['id', 'ip_address', 'ip_sort', 'mac_address', 'label', 'vendor', 'is_trusted', 'online', 'missed_scans', 'offline_after_scans'])
      .where('ip_sort', '>=', low)
      .where('ip_sort', '<=', high)
      .orderBy('ip_sort')
      .orderBy('id')
      .execute();
    return rows.map((r) => ({
      deviceId: r.id,
      ip: r.ip_address,
      ipSort: r.ip_sort,
      mac: r.mac_address,
      label: r.label,
      vendor: r.vendor,
      trusted: r.is_trusted === 1,
      online: r.online === 1,
      missedScans: r.missed_scans,
      offlineAfterScans: r.offline_after_scans,
    }));
  }

  /**
   * The outcome of a completed scan, in one transaction: the devices' new presence (online flag
   * and missed-scan counter) and the changes it detected. Returns the changes as stored, in id order.
   */
  async recordOutcome(presence: PresenceState[], changes: NewChange[]): Promise<Change[]> {
    if (presence.length === 0 && changes.length === 0) return [];
    // One statement per distinct (online, missed_scans) pair and batch of ids: few for any scan size.
    const groups = groupBy(presence, (p) => `${p.online ? 1 : 0}:${p.missedScans}`);
    const stored = await this.db.transaction().execute(async (trx) => {
      for (const group of groups.values()) {
        const { online, missedScans } = group[0];
        for (const ids of chunks(
          group.map((p) => p.deviceId),
          IDS_PER_STATEMENT,
        )) {
          await trx
            .updateTable('devices')
            .set({ online: online ? 1 : 0, missed_scans: missedScans })
            .where('id', 'in', ids)
            .execute();
        }
      }
      return insertChanges(trx, changes);
    });
    this.onWrite();
    return stored;
  }

  /**
   * For each given device, its latest snapshot from a completed scan before `beforeScanId` (devices
   * never snapshotted are left out): the ports a returning device is compared with when the
   * baseline lacks it.
   */
  async latestSnapshotsOf(deviceIds: number[], beforeScanId: number): Promise<SnapshotState[]> {
    const latest = new Map<number, SnapshotRow>();
    for (const ids of chunks(deviceIds, IDS_PER_STATEMENT)) {
      const rows = await this.db
        .selectFrom('device_snapshots as s')
        .innerJoin('scans as sc', 'sc.id', 's.scan_id')
        .select(['s.device_id', 's.ip_address', 's.mac_address', 's.ports', 's.ports_hash', 's.port_coverage', 'sc.port_list', 'sc.id as scan_id'])
        .where('s.device_id', 'in', ids)
        .where('sc.status', '=', 'completed')
        .where('sc.id', '<', beforeScanId)
        .orderBy('sc.id', 'desc')
        .execute();
      for (const r of rows) if (!latest.has(r.device_id)) latest.set(r.device_id, r);
    }
    return this.statesFromSnapshots([...latest.values()]);
  }

  /** The devices as scan `scanId` saw them (its snapshots), with their label, vendor and trust as they are now. */
  async snapshotsOf(scanId: number): Promise<SnapshotState[]> {
    const snapshots = await this.db
      .selectFrom('device_snapshots as s')
      .innerJoin('scans as sc', 'sc.id', 's.scan_id')
      .select(['s.device_id', 's.ip_address', 's.mac_address', 's.ports', 's.ports_hash', 's.port_coverage', 'sc.port_list'])
      .where('s.scan_id', '=', scanId)
      .execute();
    return this.statesFromSnapshots(snapshots);
  }

  /** The device as the latest completed scan before `beforeScanId` that saw it saw it; undefined when none did. */
  async latestSnapshotOf(deviceId: number, beforeScanId: number): Promise<SnapshotState | undefined> {
    const snapshot = await this.db
      .selectFrom('device_snapshots as s')
      .innerJoin('scans as sc', 'sc.id', 's.scan_id')
      .select(['s.device_id', 's.ip_address', 's.mac_address', 's.ports', 's.ports_hash', 's.port_coverage', 'sc.port_list'])
      .where('s.device_id', '=', deviceId)
      .where('sc.status', '=', 'completed')
      .where('sc.id', '<', beforeScanId)
      .orderBy('sc.id', 'desc')
      .executeTakeFirst();
    return snapshot ? (await this.statesFromSnapshots([snapshot]))[0] : undefined;
  }

  private async statesFromSnapshots(snapshots: SnapshotRow[]): Promise<SnapshotState[]> {
    const meta = new Map<number, { label: string | null; vendor: string | null; is_trusted: number }>();
    for (const ids of chunks(
      snapshots.map((s) => s.device_id),
      IDS_PER_STATEMENT,
    )) {
      const rows = await this.db.selectFrom('devices').select(['id', 'label', 'vendor', 'is_trusted']).where('id', 'in', ids).execute();
      for (const r of rows) meta.set(r.id, r);
    }
    // The devices a scan saw share their coverage text (the same segments): each text is read once.
    const known = new Map<string, PortCoverage | null>();
    const knownOf = (s: SnapshotRow) => {
      const key = JSON.stringify([s.port_coverage, s.port_list]);
      let coverage = known.get(key);
      if (coverage === undefined) known.set(key, (coverage = knownPortsOf(s)));
      return coverage;
    };
    return snapshots.map((s) => ({
      deviceId: s.device_id,
      ip: s.ip_address,
      mac: s.mac_address,
      label: meta.get(s.device_id)?.label ?? null,
      vendor: meta.get(s.device_id)?.vendor ?? null,
      trusted: meta.get(s.device_id)?.is_trusted === 1,
      ports: JSON.parse(s.ports) as PortState[],
      portsHash: s.ports_hash,
      coverage: knownOf(s),
    }));
  }
}

/**
 * The ports whose state a snapshot knows: the device's coverage when it was taken; for a snapshot
 * older than that (migration 014), its scan's port list (a scan then replaced the device's ports);
 * null when neither is known (before migration 013, or a discovery-only scan's old snapshot).
 */
function knownPortsOf(s: Pick<SnapshotRow, 'port_coverage' | 'port_list'>): PortCoverage | null {
  if (s.port_coverage !== null) return segmentsCoverage(parseSegments(s.port_coverage));
  return storedCoverage(s.port_list);
}

/**
 * A finding's title, description and recommendation as the reader selects them, from
 * `risk_findings as f` left-joined with `finding_texts as t` on `t.id = f.text_id`: its stored
 * texts when it refers to them (migration 024), else its own columns (rows written before).
 */
export const FINDING_TEXTS = [
  sql<string>`coalesce(t.title, f.title)`.as('title'),
  sql<string>`coalesce(t.description, f.description)`.as('description'),
  sql<string>`coalesce(t.recommendation, f.recommendation)`.as('recommendation'),
] as const;

/** The finding's title alone, as FINDING_TEXTS gives it. */
export const FINDING_TITLE = FINDING_TEXTS[0];

type FindingTexts = { title: string; description: string; recommendation: string };

/**
 * The distinct texts of a batch of findings, each with its index in `list`. Looked up by each text
 * in turn (nested maps), so no key string is built per finding: a first import has 260,000.
 */
class DistinctTexts {
  readonly list: FindingTexts[] = [];
  readonly #index = new Map<string, Map<string, Map<string, number>>>();

  indexOf(title: string, description: string, recommendation: string): number {
    let byDescription = this.#index.get(title);
    if (!byDescription) this.#index.set(title, (byDescription = new Map<string, Map<string, number>>()));
    let byRecommendation = byDescription.get(description);
    if (!byRecommendation) byDescription.set(description, (byRecommendation = new Map<string, number>()));
    let i = byRecommendation.get(recommendation);
    if (i === undefined) {
      i = this.list.push({ title, description, recommendation }) - 1;
      byRecommendation.set(recommendation, i);
    }
    return i;
  }
}

/** finding_texts.text_key: a digest of the three texts. */
function textKey(t: FindingTexts): string {
  return createHash('sha256')
    .update(JSON.stringify([t.title, t.description, t.recommendation]))
    .digest('base64url');
}

/** The ids of the given texts in finding_texts (in their order), added where missing. */
async function storeTexts(trx: Transaction<Database>, texts: readonly FindingTexts[]): Promise<number[]> {
  const keys = texts.map(textKey);
  const ids = new Map<string, number>();
  const lookup = async (wanted: string[]) => {
    for (const part of chunks(wanted, IDS_PER_STATEMENT)) {
      const rows = await trx.selectFrom('finding_texts').select(['id', 'text_key']).where('text_key', 'in', part).execute();
      for (const r of rows) ids.set(r.text_key, r.id);
    }
  };
  await lookup(keys);
  const missing = texts.flatMap((t, i) => (ids.has(keys[i]) ? [] : [{ text_key: keys[i], ...t }]));
  if (missing.length > 0) {
    const made = await insertManyWith<{ id: number; text_key: string }>(
      trx,
      'finding_texts',
      FINDING_TEXT_COLUMNS,
      missing,
      'on conflict (text_key) do nothing returning id, text_key',
    );
    for (const r of made) ids.set(r.text_key, r.id);
    // Another writer added the same text meanwhile (PostgreSQL): its row is the one.
    const left = keys.filter((k) => !ids.has(k));
    if (left.length > 0) await lookup(left);
  }
  return keys.map((k) => ids.get(k)!);
}
