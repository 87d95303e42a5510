/**
 * An imported nmap report (CONTRACT §11, §13), recorded as a completed scan through the same
 * path as a scan run here: nothing is scanned, but while it is recorded the scan is running,
 * owned by this process, so no scan of an overlapping target starts meanwhile.
 */
import type { Logger } from 'pino';
import type { ImportPlan } from '../core/nmap-import.js';
import { rangesOverlap } from '../core/scan-queue.js';
import { InvalidTargetError, networkOf } from '../core/scan-target.js';
import type { EventBus } from '../events/bus.js';
import { nowIso } from '../store/clock.js';
import type { Store } from '../store/index.js';
import type { ScanRow } from '../store/schema.js';
import { insertImported, targetRange, toScanRecord } from '../store/scans.js';
import type { ScanEngine } from '../engines/types.js';
import { ScanBusyError } from './errors.js';
import type { ScanLifecycle } from './lifecycle.js';
import type { ScanRecorder } from './recording.js';
import { recordingRun, runningScan, type ScanRequest } from './scan-run.js';

/** Who imports a report (POST /api/scans/import, `netwarden import`), and its size for the audit entry. */
export interface ImportRequest {
  actor: ScanRequest['actor'];
  bytes: number;
}

export interface ScanImportsDeps {
  store: Store;
  log: Logger;
  events: EventBus;
  lifecycle: ScanLifecycle;
  recorder: ScanRecorder;
  /** Called once the import ends: scans that waited for its target may start. */
  wake: () => void;
}

export class ScanImports {
  constructor(private readonly deps: ScanImportsDeps) {}

  /** See ScanManager.importReport. */
  async importReport(plan: ImportPlan, request: ImportRequest): Promise<ScanRow> {
    const { store, log, events, lifecycle, recorder } = this.deps;
    const settings = await store.settings.get();
    const network = networkOf(plan.subnet);
    const max = settings.scanning.max_hosts;
    if (network.size > max) {
      throw new InvalidTargetError(
        `body: the report covers ${network.cidr} (${plan.subnetFrom === 'args' ? 'its target' : 'the smallest block holding its hosts'}), ` +
          `${network.size} addresses, more than the limit of ${max} (scanning.max_hosts); raise the limit or import a report of a smaller network`,
      );
    }
    const range = targetRange(network.cidr)!;
    const at = nowIso();
    const recorded = await store.scans.underQueueLock(async (db) => {
      const busy = (await store.scans.activeForQueue(db)).find((s) => s.status === 'running' && rangesOverlap(s, range));
      if (busy) return { conflict: busy.id, scan: null };
      const scan = await insertImported(
        db,
        { profile: plan.profile, subnet: network.cidr, triggered_by: 'import', runner: 'import', at },
        lifecycle.lease(),
      );
      return { conflict: null, scan };
    });
    if (recorded.scan === null) throw new ScanBusyError(recorded.conflict);
    const { scan } = recorded;
    const profile = plan.profile;
    const running = runningScan(scan, profile, plan.hosts.length);
    const run = recordingRun({
      running,
      scan,
      // What the audit entry and the log name as the engine (nothing is run).
      engine: { name: 'nmap-import' as string } as ScanEngine,
      settings,
      network,
      request: { profile, actor: request.actor },
      started: Date.now(),
      exclude: plan.exclude,
    });
    events.publish('scan_started', toScanRecord(scan));
    const lease = lifecycle.keepLease(running);
    try {
      await recorder.recordResults(run, { hosts: plan.hosts, ports: plan.hosts, warnings: plan.warnings, examined: plan.portList });
    } catch (err) {
      await recorder.recordEnded(run, err);
      throw err;
    } finally {
      clearInterval(lease);
      // Scans that waited for this target start now.
      this.deps.wake();
    }
    const final = (await store.scans.get(scan.id))!;
    await store.audit
      .write({
        action: 'scan_imported',
        actor: request.actor.name,
        actorType: request.actor.type,
        resourceType: 'scan',
        resourceId: scan.id,
        details: {
          subnet: scan.subnet,
          subnet_from: plan.subnetFrom,
          profile,
          devices_found: plan.hosts.length,
          hosts_down: plan.hostsDown,
          warnings: plan.warnings.length,
          bytes: request.bytes,
          nmap_version: plan.report.nmapVersion,
          nmap_args: plan.report.args?.slice(0, 500) ?? null,
          report_started_at: plan.report.startedAt,
        },
        ipAddress: request.actor.ip ?? null,
        userAgent: request.actor.userAgent ?? null,
        success: final.status === 'completed',
      })
      .catch((err) => log.warn({ err, scan_id: scan.id }, 'could not audit an import'));
    return final;
  }
}
