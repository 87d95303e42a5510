import { detectChanges, type DeviceState } from '../core/changes.js';
import { matchCves } from '../core/cve/index.js';
import type { PortRange } from '../core/net.js';
import { assessRisk, compileRiskRules, portRiskSeverity, type RiskRuleSet } from '../core/risk.js';
import { isOpenPort } from '../core/model.js';
import { CveDatabase } from '../cve/dataset.js';
import { nowIso } from '../store/clock.js';
import type { DeviceAssessment } from '../store/evaluation.js';
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
}

/**
 * After a scan's results are stored: re-evaluates risk and CVEs of the devices it saw, and
 * records what changed since the baseline (the previous completed scan of the same target).
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

  async evaluate(ctx: EvaluationContext): Promise<void> {
    const settings = await this.store.settings.get();
    const rules = compileRiskRules(settings.scanning.risk_rules);
    await this.assess(ctx.scan.id, ctx.seenDeviceIds, rules);
    const current = await this.store.evaluation.currentStates(ctx.seenDeviceIds);
    const baseline = await this.baseline(ctx, current);
    const drafts = detectChanges({
      baseline,
      current,
      portsScanned: ctx.portsScanned,
      portInScope: (port) => ctx.portList.some((r) => port >= r.low && port <= r.high),
      portRisk: (port) => portRiskSeverity(port, rules),
    });
    const detectedAt = ctx.at ?? nowIso();
    await this.store.changes.insertMany(drafts.map((d) => ({ ...d, scan_id: ctx.scan.id, detected_at: detectedAt })));
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
   * Network scan: the devices of the previous completed scan of the same subnet. Device scan: the
   * target device's latest snapshot from any completed scan (only that device is compared).
   */
  private async baseline(ctx: EvaluationContext, current: DeviceState[]): Promise<DeviceState[] | null> {
    const { scan } = ctx;
    if (scan.scan_type === 'device') {
      const target = scan.target ?? scan.subnet.split('/')[0];
      const seen = current[0];
      const deviceId = seen?.deviceId ?? (await this.store.evaluation.deviceIdAt(target));
      if (deviceId === undefined) return [];
      const snapshot = await this.store.evaluation.latestSnapshotOf(deviceId, scan.id);
      if (!snapshot) return seen ? null : [];
      return [snapshot];
    }
    const previous = await this.store.scans.previousCompleted(scan.subnet, scan.id);
    if (!previous) return null;
    return this.store.evaluation.snapshotsOf(previous.id);
  }
}
