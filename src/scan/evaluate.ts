import { detectChanges, type DeviceState, type RemovedDevice } from '../core/changes.js';
import { matchCves } from '../core/cve/index.js';
import { ipv4ToInt, networkContains, parseIpv4Network, type Ipv4Network, type PortRange } from '../core/net.js';
import { decidePresence, type PresenceOutcome } from '../core/presence.js';
import type { Settings } from '../core/settings.js';
import { assessRisk, compileRiskRules, portRiskSeverity, type RiskRuleSet } from '../core/risk.js';
import { isOpenPort } from '../core/model.js';
import { CveDatabase } from '../cve/dataset.js';
import { nowIso } from '../store/clock.js';
import type { Change } from '../schemas/change.js';
import type { DeviceAssessment, RangeDevice } from '../store/evaluation.js';
import type { Store } from '../store/index.js';
import type { ScanRow } from '../store/schema.js';
import { IDS_PER_STATEMENT, chunks } from '../util/batches.js';

export interface EvaluationContext {
  scan: ScanRow;
  seenDeviceIds: number[];
  /** False for discovery-only scans. */
  portsScanned: boolean;
  /** The ports this scan covered. */
  portList: PortRange[];
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
  ) {
    this.cves = new CveDatabase(dataDir);
  }

  async evaluate(ctx: EvaluationContext): Promise<EvaluationOutcome> {
    const settings = await this.store.settings.get();
    const rules = compileRiskRules(settings.scanning.risk_rules);
    await this.assess(ctx.scan.id, ctx.seenDeviceIds, rules);
    const current = await this.store.evaluation.currentStates(ctx.seenDeviceIds);
    const { presence, removed } = await this.presence(ctx, settings);
    const baseline = await this.baseline(ctx, current, presence);
    const drafts = detectChanges({
      baseline,
      current,
      portsScanned: ctx.portsScanned,
      portInScope: (port) => ctx.portList.some((r) => port >= r.low && port <= r.high),
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
    return { changes, devicesUpdated: [...devicesUpdated].sort((a, b) => a - b) };
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
   * Risk and CVEs of each device, from its current ports: findings and CVE matches are replaced,
   * and the device's level, score and summary updated. One transaction per batch of devices.
   */
  async assess(scanId: number | null, deviceIds: number[], rules: RiskRuleSet): Promise<void> {
    const index = this.cves.index();
    for (const ids of chunks(deviceIds, IDS_PER_STATEMENT)) {
      const devices = await this.store.evaluation.portsOf(ids);
      const batch: DeviceAssessment[] = devices.map((device) => {
        const matches = matchCves(device.ports.filter(isOpenPort), index, { os_name: device.os_name });
        return { deviceId: device.id, risk: assessRisk(device.ports, matches, rules), cves: matches };
      });
      await this.store.evaluation.replaceAssessments(scanId, batch);
    }
  }

  /**
   * Network scan: the devices of the previous completed scan of the same subnet, plus, for a seen
   * device that scan lacks but that was not gone (it missed fewer scans than the threshold, or
   * moved in from another target), its latest earlier snapshot, so its ports are still compared.
   * Device scan: the target device's latest snapshot from any completed scan (only that device is
   * compared). Null when there is nothing to compare with (the first scan of a target).
   */
  private async baseline(ctx: EvaluationContext, current: DeviceState[], presence: PresenceOutcome): Promise<DeviceState[] | null> {
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

function parseNetworks(cidrs: readonly string[]): Ipv4Network[] {
  return cidrs.flatMap((c) => {
    const parsed = parseIpv4Network(c);
    return parsed.ok ? [parsed.value] : [];
  });
}
