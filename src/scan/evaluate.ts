import { detectChanges, type DeviceState, type PortState } from '../core/changes.js';
import { matchCves } from '../core/cve/index.js';
import type { PortRange } from '../core/net.js';
import { assessRisk, compileRiskRules, portRiskSeverity, type RiskRuleSet } from '../core/risk.js';
import { isOpenPort, type ScannedPort } from '../core/model.js';
import { CveDatabase } from '../cve/dataset.js';
import { nowIso } from '../store/clock.js';
import type { Store } from '../store/index.js';
import type { ScanRow } from '../store/schema.js';
import { groupBy } from '../util/group-by.js';
import { IDS_PER_STATEMENT, chunks, rowsPerInsert } from '../util/batches.js';

export interface EvaluationContext {
  scan: ScanRow;
  seenDeviceIds: number[];
  /** False for discovery-only scans. */
  portsScanned: boolean;
  /** The ports this scan covered. */
  portList: PortRange[];
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
    const current = await this.currentStates(ctx.seenDeviceIds);
    const baseline = await this.baseline(ctx, current);
    const drafts = detectChanges({
      baseline,
      current,
      portsScanned: ctx.portsScanned,
      portInScope: (port) => ctx.portList.some((r) => port >= r.low && port <= r.high),
      portRisk: (port) => portRiskSeverity(port, rules),
    });
    const detectedAt = nowIso();
    await this.store.changes.insertMany(drafts.map((d) => ({ ...d, scan_id: ctx.scan.id, detected_at: detectedAt })));
  }

  /**
   * Risk and CVEs of each device, from its current ports: findings and CVE matches are replaced,
   * and the device's level, score and summary updated. One transaction per batch of devices.
   */
  async assess(scanId: number | null, deviceIds: number[], rules: RiskRuleSet): Promise<void> {
    const index = this.cves.index();
    for (const ids of chunks(deviceIds, IDS_PER_STATEMENT)) {
      await this.store.db.transaction().execute(async (trx) => {
        const [devices, ports] = await Promise.all([
          trx.selectFrom('devices').select(['id', 'os_name']).where('id', 'in', ids).execute(),
          trx.selectFrom('ports').selectAll().where('device_id', 'in', ids).execute(),
        ]);
        const byDevice = groupBy(ports, (p) => p.device_id);
        await trx.deleteFrom('risk_findings').where('device_id', 'in', ids).execute();
        await trx.deleteFrom('cve_matches').where('device_id', 'in', ids).execute();
        const findingRows = [];
        const cveRows = [];
        for (const device of devices) {
          const scanned: ScannedPort[] = (byDevice.get(device.id) ?? []).map((p) => ({
            port: p.port,
            protocol: p.protocol === 'udp' ? 'udp' : 'tcp',
            state: p.state,
            service: p.service,
            product: p.product,
            version: p.version,
            extra_info: p.extra_info,
            cpe: JSON.parse(p.cpe) as string[],
          }));
          const matches = matchCves(
            scanned.filter(isOpenPort),
            index,
            { os_name: device.os_name },
          );
          const risk = assessRisk(scanned, matches, rules);
          for (const f of risk.findings) {
            findingRows.push({ ...f, device_id: device.id, scan_id: scanId, cve_ids: JSON.stringify(f.cve_ids) });
          }
          for (const m of matches) {
            cveRows.push({
              device_id: device.id,
              scan_id: scanId,
              cve_id: m.id,
              severity: m.severity,
              cvss_score: m.cvss_score,
              description: m.description,
              remediation: m.remediation,
              references: JSON.stringify(m.references),
              confidence: m.confidence,
              port: m.port,
              matched_product: m.matched_product,
              matched_version: m.matched_version,
            });
          }
          await trx
            .updateTable('devices')
            .set({ risk_level: risk.level, risk_score: risk.score, risk_summary: risk.summary })
            .where('id', '=', device.id)
            .execute();
        }
        for (const batch of chunks(findingRows, rowsPerInsert(12))) await trx.insertInto('risk_findings').values(batch).execute();
        for (const batch of chunks(cveRows, rowsPerInsert(14))) await trx.insertInto('cve_matches').values(batch).execute();
      });
    }
    this.store.touch();
  }

  /** The seen devices with their ports as they are now. */
  private async currentStates(deviceIds: number[]): Promise<DeviceState[]> {
    const out: DeviceState[] = [];
    for (const ids of chunks(deviceIds, IDS_PER_STATEMENT)) {
      const [devices, ports] = await Promise.all([
        this.store.db.selectFrom('devices').select(['id', 'ip_address', 'mac_address', 'label', 'vendor', 'is_trusted']).where('id', 'in', ids).execute(),
        this.store.db
          .selectFrom('ports')
          .select(['device_id', 'port', 'protocol', 'state', 'service', 'product', 'version'])
          .where('device_id', 'in', ids)
          .execute(),
      ]);
      const byDevice = groupBy(ports, (p) => p.device_id);
      for (const d of devices) {
        out.push({
          deviceId: d.id,
          ip: d.ip_address,
          mac: d.mac_address,
          label: d.label,
          vendor: d.vendor,
          trusted: d.is_trusted === 1,
          ports: (byDevice.get(d.id) ?? []).map(({ device_id: _, ...p }) => p),
        });
      }
    }
    return out;
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
      const deviceId =
        seen?.deviceId ??
        (await this.store.db.selectFrom('devices').select('id').where('ip_address', '=', target).orderBy('last_seen', 'desc').executeTakeFirst())?.id;
      if (deviceId === undefined) return [];
      const snapshot = await this.store.db
        .selectFrom('device_snapshots as s')
        .innerJoin('scans as sc', 'sc.id', 's.scan_id')
        .select(['s.device_id', 's.ip_address', 's.mac_address', 's.ports'])
        .where('s.device_id', '=', deviceId)
        .where('sc.status', '=', 'completed')
        .where('sc.id', '<', scan.id)
        .orderBy('sc.id', 'desc')
        .executeTakeFirst();
      if (!snapshot) return seen ? null : [];
      return this.statesFromSnapshots([snapshot]);
    }
    const previous = await this.store.scans.previousCompleted(scan.subnet, scan.id);
    if (!previous) return null;
    const snapshots = await this.store.db
      .selectFrom('device_snapshots')
      .select(['device_id', 'ip_address', 'mac_address', 'ports'])
      .where('scan_id', '=', previous.id)
      .execute();
    return this.statesFromSnapshots(snapshots);
  }

  private async statesFromSnapshots(
    snapshots: { device_id: number; ip_address: string; mac_address: string | null; ports: string }[],
  ): Promise<DeviceState[]> {
    const meta = new Map<number, { label: string | null; vendor: string | null; is_trusted: number }>();
    const ids = snapshots.map((s) => s.device_id);
    for (const batch of chunks(ids, IDS_PER_STATEMENT)) {
      const rows = await this.store.db
        .selectFrom('devices')
        .select(['id', 'label', 'vendor', 'is_trusted'])
        .where('id', 'in', batch)
        .execute();
      for (const r of rows) meta.set(r.id, r);
    }
    return snapshots.map((s) => ({
      deviceId: s.device_id,
      ip: s.ip_address,
      mac: s.mac_address,
      label: meta.get(s.device_id)?.label ?? null,
      vendor: meta.get(s.device_id)?.vendor ?? null,
      trusted: meta.get(s.device_id)?.is_trusted === 1,
      ports: JSON.parse(s.ports) as PortState[],
    }));
  }
}
