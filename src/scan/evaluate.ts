import { detectChanges, type DeviceState, type RemovedDevice } from '../core/changes.js';
import { createHash } from 'node:crypto';
import { matchCves, type CveIndex, type CveMatch } from '../core/cve/index.js';
import { formatCoverage, storedCoverage, tcpCoverage, type PortCoverage } from '../core/coverage.js';
import { ipv4ToInt, networkContains, parseIpv4Network, type Ipv4Network, type PortRange } from '../core/net.js';
import { decidePresence, type PresenceOutcome } from '../core/presence.js';
import type { Settings } from '../core/settings.js';
import type { ZonePolicies } from '../core/policies.js';
import type { RiskLevel } from '../core/severity.js';
import { assessRisk, compileRiskRules, portRiskSeverity, type RiskRuleSet } from '../core/risk.js';
import { isOpenPort } from '../core/model.js';
import { normalizePort } from '../core/services.js';
import { CveDatabase } from '../cve/dataset.js';
import { nowIso } from '../store/clock.js';
import type { Change } from '../schemas/change.js';
import {
  withPorts,
  type DeviceAssessment,
  type EvaluationDevice,
  type EvaluationInput,
  type RangeDevice,
  type SnapshotState,
  type StoredCveMatch,
} from '../store/evaluation.js';
import type { Store } from '../store/index.js';
import type { ScanRow } from '../store/schema.js';
import { IDS_PER_STATEMENT, chunks } from '../util/batches.js';

export interface ScanEvaluatorOptions {
  /**
   * False: every seen device is assessed again, as before incremental evaluation (the tests compare
   * both). Default true: only devices whose OS, ports, rules or CVE data changed.
   */
  incremental?: boolean;
  /**
   * Told of the devices whose risk level an assessment outside a scan changed (the `risk_changed`
   * live event); a scan's own changes are in its outcome (`riskChanged`).
   */
  onRiskChanged?: (changes: RiskChange[]) => void;
}

/** A device whose risk level an assessment changed. */
export interface RiskChange {
  deviceId: number;
  before: { level: RiskLevel; score: number };
  after: { level: RiskLevel; score: number };
}

export interface EvaluationContext {
  scan: ScanRow;
  seenDeviceIds: number[];
  /** False for discovery-only scans. */
  portsScanned: boolean;
  /** The ports this scan examined: by protocol, or TCP ranges alone. */
  portList: PortCoverage | readonly PortRange[];
  /** When the changes were detected: now unless given (as the inventory writer takes `at`). */
  at?: string;
  /**
   * CIDR blocks the scan did not probe (network.exclude as it was when the scan started): their
   * devices' presence is left alone. Defaults to the current network.exclude.
   */
  exclude?: string[];
}

/** What evaluating a completed scan produced, for the live events. */
export interface EvaluationOutcome {
  /** The changes detected, as stored (with their ids), in id order. */
  changes: Change[];
  /** Devices whose summary the scan changed visibly: those with changes, and those it brought online or took offline. Ascending ids. */
  devicesUpdated: number[];
  /** Devices this scan brought online (new ones included), and those it took offline. Ascending ids. */
  arrived: number[];
  departed: number[];
  /**
   * Devices whose risk level this scan's assessment changed, in id order; a device assessed for the
   * first time has no level to change from and is left out (it is `device_new` or was unassessed).
   */
  riskChanged: RiskChange[];
}

/**
 * After a scan's results are stored, once it has run to completion: re-evaluates risk and CVEs of
 * the devices it saw, decides presence (core/presence.ts: which devices are online, which missed
 * one more scan, which are gone), and records what changed since the baseline (the previous
 * completed scan of the same target). A scan that fails or is cancelled never gets here, so it
 * changes no presence and reports no change.
 */
export class ScanEvaluator {
  readonly cves: CveDatabase;

  /** `dataDir` holds CVE data imported with `netwarden cve import` (null: the shipped dataset only). */
  constructor(
    private readonly store: Store,
    dataDir: string | null = null,
    private readonly options: ScanEvaluatorOptions = {},
  ) {
    this.cves = new CveDatabase(dataDir);
  }

  /**
   * What an assessment is computed from besides the device: the effective risk rules, the CVE
   * dataset and the revision of the matching code. A device assessed under another fingerprint is
   * assessed again (by the next scan that sees it, and by the background re-evaluation).
   */
  fingerprint(rules: RiskRuleSet, policies: ZonePolicies = {}): string {
    let hash = fingerprints.get(rules);
    if (hash === undefined) {
      const ruleText = JSON.stringify(rules.rules, (_key, value: unknown) => (value instanceof RegExp ? String(value) : value));
      hash = digest(`${EVALUATION_REVISION}\u0000${ruleText}`);
      fingerprints.set(rules, hash);
    }
    return digest(`${hash}\u0000${this.cves.fingerprint()}\u0000${JSON.stringify(policies)}`);
  }

  async evaluate(ctx: EvaluationContext): Promise<EvaluationOutcome> {
    // What the scan examined, on its record (GET /api/scans/{id}: ports_examined, hosts_examined).
    const examined = Array.isArray(ctx.portList) ? tcpCoverage(ctx.portList) : (ctx.portList as PortCoverage);
    if (ctx.portsScanned) await this.store.scans.recordExamined(ctx.scan.id, formatCoverage(examined));
    const settings = await this.store.settings.get();
    const rules = compileRiskRules(settings.scanning.risk_rules);
    const policies = await this.store.policies.get();
    const incremental = this.options.incremental !== false;
    const fingerprint = this.fingerprint(rules, policies);
    // The seen devices without their ports first (in id order, as the baseline: the changes come
    // out in the same order whatever order the database returned rows in).
    const devices = await this.store.evaluation.devicesOf(ctx.seenDeviceIds);
    const { presence, removed } = await this.presence(ctx, settings);
    const baseline =
      (
        await this.baseline(
          ctx,
          devices.map((d) => d.state),
          presence,
        )
      )?.sort(byDeviceId) ?? null;
    // Ports are read only for the devices that need them: those to assess again, and those whose
    // ports do not hash as in their baseline snapshot. The others have the snapshot's ports.
    const before = new Map((baseline ?? []).map((b) => [b.deviceId, b]));
    // Each device's two questions answered once (its input key is a hash of what it is assessed from).
    const stale = devices.map((d) => !incremental || d.assessedWith !== fingerprint || d.assessedInput === null || d.assessedInput !== inputKey(d));
    const unchanged = devices.map((d) => incremental && d.portsHash !== null && before.get(d.state.deviceId)?.portsHash === d.portsHash);
    const portsOf = await this.store.evaluation.portsOfDevices(devices.filter((_d, i) => stale[i] || !unchanged[i]).map((d) => d.state.deviceId));
    const current = devices.map((d, i) =>
      portsOf.has(d.state.deviceId) || !unchanged[i]
        ? withPorts(d, portsOf.get(d.state.deviceId) ?? []).state
        : { ...d.state, ports: before.get(d.state.deviceId)!.ports },
    );
    const riskChanged: RiskChange[] = [];
    await this.assessInputs(
      ctx.scan.id,
      devices.filter((_d, i) => stale[i]).map((d) => withPorts(d, portsOf.get(d.state.deviceId) ?? [])),
      rules,
      policies,
      riskChanged,
    );
    const ownSegments = new Map(
      devices.flatMap((d) => {
        const own = d.coverage.find((seg) => seg.scan_id === ctx.scan.id);
        return own ? [[d.state.deviceId, own] as const] : [];
      }),
    );
    const readSegments = new Map<string, PortCoverage>();
    const drafts = detectChanges({
      baseline,
      current,
      portsScanned: ctx.portsScanned,
      // What this scan examined on each device: its own coverage segment (the scan's list and any
      // port found open outside it); none on a device it has no segment on (discovery saw the host,
      // the port scan did not reach it). Ports written without a scan (test fixtures) leave no
      // segment anywhere: then the scan's list.
      examinedOn: (deviceId) => {
        const segment = ownSegments.get(deviceId);
        if (!segment) return ownSegments.size > 0 ? null : examined;
        // Most devices share the scan's list: each text is read once.
        let coverage = readSegments.get(segment.ports);
        if (!coverage) readSegments.set(segment.ports, (coverage = storedCoverage(segment.ports) ?? examined));
        return coverage;
      },
      portRisk: (port) => portRiskSeverity(port, rules),
      presence: { arrived: presence.arrived, removed },
    });
    const detectedAt = ctx.at ?? nowIso();
    const changes = await this.store.evaluation.recordOutcome(
      presence.updates,
      drafts.map((d) => ({ ...d, scan_id: ctx.scan.id, detected_at: detectedAt })),
    );
    const devicesUpdated = new Set([...presence.arrived, ...presence.removed]);
    for (const c of changes) if (c.device_id !== null) devicesUpdated.add(c.device_id);
    const ascending = (ids: readonly number[]) => [...ids].sort((a, b) => a - b);
    return {
      changes,
      devicesUpdated: ascending([...devicesUpdated]),
      arrived: ascending(presence.arrived),
      departed: ascending(presence.removed),
      riskChanged: riskChanged.sort((a, b) => a.deviceId - b.deviceId),
    };
  }

  /**
   * Presence after this scan: the devices it saw are present; for a network scan, every other
   * device at an address inside its target (outside the excluded blocks) missed one more scan. A
   * device scan does not count as a miss for anyone.
   */
  private async presence(ctx: EvaluationContext, settings: Settings): Promise<{ presence: PresenceOutcome; removed: RemovedDevice[] }> {
    const seen = await this.store.evaluation.presenceOf(ctx.seenDeviceIds);
    let missing: RangeDevice[] = [];
    const target = parseIpv4Network(ctx.scan.subnet);
    if (ctx.scan.scan_type === 'network' && target.ok) {
      const seenIds = new Set(ctx.seenDeviceIds);
      const excluded = parseNetworks(ctx.exclude ?? settings.network.exclude);
      const low = ipv4ToInt(target.value.network);
      missing = (await this.store.evaluation.devicesWithin(low, low + target.value.size - 1)).filter(
        (d) => !seenIds.has(d.deviceId) && !excluded.some((net) => networkContains(net, d.ip)),
      );
    }
    const presence = decidePresence({ seen, missing, offlineAfterScans: settings.presence.offline_after_scans });
    const gone = new Set(presence.removed);
    const removed = missing
      .filter((d) => gone.has(d.deviceId))
      .map((d) => ({
        deviceId: d.deviceId,
        ip: d.ip,
        mac: d.mac,
        label: d.label,
        vendor: d.vendor,
        trusted: d.trusted,
        ports: [],
        missedScans: d.missedScans + 1,
      }));
    return { presence, removed };
  }

  /**
   * Risk and CVEs of each given device, from its current ports, whatever it was assessed from
   * before: findings and CVE matches are replaced, and the device's level, score and summary
   * updated. Returns how many devices were assessed.
   */
  async assess(scanId: number | null, deviceIds: number[], rules: RiskRuleSet, policies: ZonePolicies = {}): Promise<number> {
    let assessed = 0;
    for (const ids of chunks(deviceIds, IDS_PER_STATEMENT)) {
      assessed += await this.assessInputs(scanId, await this.store.evaluation.inputsOf(ids), rules, policies);
    }
    return assessed;
  }

  /**
   * Risk and CVEs of the given devices, recorded with what they were computed from (inputKey and
   * the fingerprint), a batch of devices per transaction. Returns how many devices were assessed.
   * The devices whose level moved go to `riskChanged` when given (a scan's, published with its
   * outcome; devices assessed for the first time left out), else to `onRiskChanged`.
   */
  private async assessInputs(
    scanId: number | null,
    inputs: EvaluationInput[],
    rules: RiskRuleSet,
    policies: ZonePolicies,
    riskChanged?: RiskChange[],
  ): Promise<number> {
    const index = this.cves.index();
    const fingerprint = this.fingerprint(rules, policies);
    const accepted = await this.store.acceptances.activeKeysOf(
      inputs.map((d) => d.state.deviceId),
      nowIso(),
    );
    const before = new Map(inputs.filter((d) => !riskChanged || d.assessedInput !== null).map((d) => [d.state.deviceId, d.risk]));
    let assessed = 0;
    let batch: DeviceAssessment[] = [];
    const flush = async () => {
      await this.store.evaluation.replaceAssessments(scanId, batch, fingerprint);
      assessed += batch.length;
      const changed: RiskChange[] = [];
      for (const a of batch) {
        const was = before.get(a.deviceId);
        if (was && was.level !== a.risk.level)
          changed.push({ deviceId: a.deviceId, before: was, after: { level: a.risk.level, score: a.risk.score } });
      }
      if (riskChanged) riskChanged.push(...changed);
      else if (changed.length > 0) this.options.onRiskChanged?.(changed);
      batch = [];
    };
    for (const device of inputs) {
      // Products left as the server sent them (`Apache/2.4.49 (Unix)`) are read into product and version
      // first, and a web server nmap named `http-proxy` after its port is a web server (core/services.ts).
      const ports = device.ports.map(normalizePort);
      const matches = matchCves(ports.filter(isOpenPort), index, { os_name: device.os_name, cpes: device.cpes });
      batch.push({
        deviceId: device.state.deviceId,
        risk: assessRisk(ports, matches, rules, {
          policy: device.zone !== null && policies[device.zone] ? { zone: device.zone, policy: policies[device.zone] } : null,
          accepted: accepted.get(device.state.deviceId),
        }),
        cves: matches.map((m) => storedMatch(m, index)),
        input: inputKey(device),
      });
      // Written a batch at a time: only one batch's findings and matches are in memory at once.
      if (batch.length === IDS_PER_STATEMENT) await flush();
    }
    await flush();
    return assessed;
  }

  /**
   * Network scan: the devices of the previous completed scan of the same subnet, plus, for a seen
   * device that scan lacks but that was not gone (it missed fewer scans than the threshold, or
   * moved in from another target), its latest earlier snapshot, so its ports are still compared.
   * Device scan: the target device's latest snapshot from any completed scan (only that device is
   * compared). Null when there is nothing to compare with (the first scan of a target).
   */
  private async baseline(ctx: EvaluationContext, current: DeviceState[], presence: PresenceOutcome): Promise<SnapshotState[] | null> {
    const { scan } = ctx;
    if (scan.scan_type === 'device') {
      const seen = current[0];
      if (!seen) return [];
      const snapshot = await this.store.evaluation.latestSnapshotOf(seen.deviceId, scan.id);
      return snapshot ? [snapshot] : null;
    }
    const previous = await this.store.scans.previousCompleted(scan.subnet, scan.id);
    if (!previous) return null;
    const baseline = await this.store.evaluation.snapshotsOf(previous.id);
    const inBaseline = new Set(baseline.map((d) => d.deviceId));
    const arrived = new Set(presence.arrived);
    const returning = current.filter((d) => !inBaseline.has(d.deviceId) && !arrived.has(d.deviceId)).map((d) => d.deviceId);
    if (returning.length > 0) baseline.push(...(await this.store.evaluation.latestSnapshotsOf(returning, scan.id)));
    return baseline;
  }
}

/**
 * Bump when a change of the matching or scoring code (core/cve, core/risk.ts) changes what an
 * assessment of the same ports gives: every device is then assessed again once.
 */
const EVALUATION_REVISION = 3;

const fingerprints = new WeakMap<RiskRuleSet, string>();

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

/**
 * What a device's risk and CVEs are computed from, hashed: its OS, its zone (its policy), its ports (by their hash,
 * store/port-rows.ts portsHash) and recognition's CPEs (only when it has some: the keys of devices without stay as
 * they were). Null when the ports were never hashed (the device must be assessed).
 */
function inputKey(device: Pick<EvaluationDevice, 'os_name' | 'portsHash' | 'zone' | 'cpes'>): string | null {
  if (device.portsHash === null) return null;
  const cpes = device.cpes.map((c) => [c.cpe, c.source, c.detail]);
  return digest(
    JSON.stringify(cpes.length > 0 ? [device.os_name, device.portsHash, device.zone, cpes] : [device.os_name, device.portsHash, device.zone]),
  );
}

/** A match as stored: a reference to the dataset's record, with the remediation only when it differs from the record's. */
function storedMatch(m: CveMatch, index: CveIndex): StoredCveMatch {
  return {
    id: m.id,
    severity: m.severity,
    cvss_score: m.cvss_score,
    remediation: m.remediation === (index.entries.get(m.id)?.remediation ?? null) ? null : m.remediation,
    confidence: m.confidence,
    port: m.port,
    matched_product: m.matched_product,
    matched_version: m.matched_version,
  };
}

const byDeviceId = (a: DeviceState, b: DeviceState) => a.deviceId - b.deviceId;

function parseNetworks(cidrs: readonly string[]): Ipv4Network[] {
  return cidrs.flatMap((c) => {
    const parsed = parseIpv4Network(c);
    return parsed.ok ? [parsed.value] : [];
  });
}
