/**
 * Recording a scan's results and its end: the one path by which what a scan found reaches the
 * inventory, evaluation and the scan record, whether the scan ran here (its engine reported
 * hosts and ports as it went), on an agent (an upload) or in an nmap report (an import). Also the
 * end of a scan that did not complete, its audit entries and its scan_finished event.
 */
import type { OutboundGuard } from '../util/outbound.js';
import type { Logger } from 'pino';
import type { DiscoveredHost, ScannedHost } from '../core/model.js';
import type { PortRange } from '../core/net.js';
import { tcpCoverage, type PortCoverage } from '../core/coverage.js';
import { actorOf } from '../core/scan-target.js';
import type { EventBus } from '../events/bus.js';
import { NameLookup } from '../names/lookup.js';
import { nowIso } from '../store/clock.js';
import type { Store } from '../store/index.js';
import type { InventoryWriter, SeenDevice } from '../store/inventory.js';
import type { ScanRow } from '../store/schema.js';
import { toScanRecord } from '../store/scans.js';
import { ScanAbortedError } from '../engines/types.js';
import type { ScanEvaluator } from './evaluate.js';
import { publishScanOutcome } from './events.js';
import { identifyHostsWithProbes, type IdentifyTarget, type ProbedHost } from './identify.js';
import { recordControllerLinks, recordSwitchLinks } from './links.js';
import { resolveIdentities, type FoldKind, type ResolverHost } from '../core/resolver.js';
import type { DeviceRecognitionRecord, HeldKeys } from '../store/identity.js';
import type { ScanOwner } from './owner.js';
import type { ScanRequest, ScanRun } from './scan-run.js';

/** What a scan found, for recordResults. */
export type ScanResults = {
  /** The hosts discovery found. */
  hosts: DiscoveredHost[];
  /** The ports examined on them (for a quick scan, none are). */
  examined: PortCoverage | readonly PortRange[];
} & (
  | {
      /** The scan's own run: its hosts and ports were recorded as its engine reported them; these are the devices recorded. */
      seen: SeenDevice[];
    }
  | {
      /** Results gathered elsewhere (an agent's upload, an imported report), recorded now. */
      seen?: undefined;
      ports: ScannedHost[];
      warnings: string[];
    }
);

export interface ScanRecorderDeps {
  store: Store;
  log: Logger;
  events: EventBus;
  owner: ScanOwner;
  inventory: InventoryWriter;
  evaluator: ScanEvaluator;
  /** Which addresses the name sources may reach (default: no loopback, link-local or unspecified address, as without NETWARDEN_OUTBOUND_ALLOW; services.ts passes the configured one). */
  outboundGuard?: OutboundGuard;
}

type AuditAction = 'scan_started' | 'scan_completed' | 'scan_failed' | 'scan_cancelled';

export class ScanRecorder {
  constructor(private readonly deps: ScanRecorderDeps) {}

  /**
   * Records what a scan found and completes it: the hosts and ports (unless its own run recorded
   * them already), then risk, CVEs, presence and changes against the baseline, the snapshots,
   * the live events for what changed, and the completed record with its audit entry.
   */
  async recordResults(run: ScanRun, results: ScanResults): Promise<void> {
    const { scan, request } = run;
    let seen: SeenDevice[];
    if (results.seen === undefined) {
      await this.deps.store.scans.addWarnings(scan.id, results.warnings);
      seen = await this.recordDiscovery(run, results.hosts);
      if (request.profile !== 'quick') await this.recordPorts(scan, coverageOf(results.examined), results.ports, results.hosts, seen);
      seen = await this.recordIdentity(run, seen, results.hosts, request.profile !== 'quick' ? results.ports : [], false);
    } else {
      seen = results.seen;
    }
    // Where the time went, for the log line of the completed scan.
    const recordedAt = Date.now();
    await this.evaluate(run, seen, results.examined);
    await this.recordCompleted(run, results.hosts.length, { scan_ms: recordedAt - run.started, evaluation_ms: Date.now() - recordedAt });
  }

  /** Records the hosts discovery found (with the names the network's records give them); returns the devices recorded. */
  async recordDiscovery({ scan, names, settings, engineOptions }: ScanRun, discovered: DiscoveredHost[]): Promise<SeenDevice[]> {
    const { store, log, inventory } = this.deps;
    // Hostnames and MACs the scan did not see, from the network's own records (name sources).
    const lookup = names ?? NameLookup.start(settings.name_sources, { signal: engineOptions.signal, guard: this.deps.outboundGuard });
    const { hosts: live, warnings } = await lookup.apply(discovered);
    for (const warning of warnings) log.warn({ scan_id: scan.id }, warning);
    await store.scans.addWarnings(scan.id, warnings);
    const { seen, notes } = await inventory.recordDiscovery(scan.id, live, nowIso());
    for (const n of notes) log.warn({ scan_id: scan.id, ip: n.ip, mac: n.mac, device_id: n.deviceId }, `identity: ${n.reason}`);
    // Which device hangs off which switch or access point, from the sources that answered with links (UniFi).
    try {
      const { links, sources } = await lookup.links();
      if (sources.includes('unifi')) await recordControllerLinks(store, links, scan.id);
    } catch (err) {
      log.warn({ err, scan_id: scan.id }, 'could not record the links a name source gave');
    }
    return seen;
  }

  /**
   * Records port results of hosts discovery recorded, as examined by `scan` (only the `examined`
   * ports of the hosts in `results` change); the MAC discovery saw stands in for one the port scan did not.
   */
  async recordPorts(
    scan: Pick<ScanRow, 'id'>,
    examined: PortCoverage,
    results: ScannedHost[],
    live: DiscoveredHost[],
    seen: SeenDevice[],
  ): Promise<void> {
    const deviceByIp = new Map(seen.map((d) => [d.ip, d.deviceId]));
    const discoveredByIp = new Map(live.map((h) => [h.ip, h]));
    await this.deps.inventory.recordPorts(
      results
        .filter((h) => deviceByIp.has(h.ip))
        .map((h) => ({ deviceId: deviceByIp.get(h.ip)!, host: { ...h, mac: h.mac ?? discoveredByIp.get(h.ip)?.mac ?? null } })),
      nowIso(),
      { id: scan.id, examined },
    );
  }

  /**
   * Recognition of the devices a scan reached (src/scan/identify.ts): with `probe`, the recognition
   * probes ask each host first (its own scan's run, after the port scan); without, recognition reads
   * what the scan saw (an imported report) and the probe results that came with each host (an
   * agent's upload: the agent ran the probes where it scanned). Then the identity resolver
   * (core/resolver.ts) decides which devices the scan created are devices already known, or a
   * second address of another host of the scan, and folds them (store/device-merge.ts fold), before
   * the scan's changes are computed. Records keys, evidence, the recognised fields (never one a
   * person set) and the decisions. Returns the devices the scan saw after folding (the folded ones
   * replaced by the devices they are). A failure is logged, never fatal.
   */
  async recordIdentity(run: ScanRun, seen: SeenDevice[], live: DiscoveredHost[], scanned: ProbedHost[], probe: boolean): Promise<SeenDevice[]> {
    const { store, log } = this.deps;
    const scannedByIp = new Map(scanned.map((h) => [h.ip, h]));
    const liveByIp = new Map(live.map((h) => [h.ip, h]));
    const targets: IdentifyTarget[] = [];
    for (const device of seen) {
      const found = scannedByIp.get(device.ip);
      const discovered = liveByIp.get(device.ip);
      if (!found && !discovered) continue;
      // An agent's upload carries each host's probe results (`probes`): the spread keeps them.
      const host: ProbedHost = found
        ? {
            ...found,
            mac: found.mac ?? discovered?.mac ?? null,
            vendor: found.vendor ?? discovered?.vendor ?? null,
            hostname: found.hostname ?? discovered?.hostname ?? null,
          }
        : { ...discovered!, os_name: null, device_type: null, ports: [] };
      const decisions: { rule: string; explanation: string }[] = [];
      if (device.isNew)
        decisions.push({ rule: 'new_device', explanation: `First seen at ${device.ip}${host.mac ? ` with MAC ${host.mac}` : ' (no MAC seen)'}` });
      if (device.previousIp)
        decisions.push({
          rule: 'address_changed',
          explanation: `Same device (${host.mac ? `MAC ${host.mac}` : 'same identity'}) moved from ${device.previousIp} to ${device.ip}`,
        });
      targets.push({ deviceId: device.deviceId, host, decisions });
    }
    if (targets.length === 0) return seen;
    let after = seen;
    try {
      const { records, probes } = await identifyHostsWithProbes(targets, run.settings, { probe, signal: run.engineOptions.signal });
      if (run.engineOptions.signal.aborted) return seen;
      const resolved = await this.resolve(run, seen, targets, records);
      after = resolved.seen;
      await store.identity.recordRecognition(run.scan.id, resolved.records, nowIso(), resolved.held);
      // Switches' bridge and LLDP tables (the SNMP probe's): their clients, by the devices as folded.
      const hostOf = new Map(targets.map((t) => [t.host.ip, t.host]));
      await recordSwitchLinks(
        store,
        after.flatMap((d) => {
          const found = probes.get(d.ip);
          return found ? [{ deviceId: d.deviceId, mac: hostOf.get(d.ip)?.mac ?? null, probes: found }] : [];
        }),
        run.scan.id,
      );
    } catch (err) {
      log.warn({ err, scan_id: run.scan.id }, 'could not record what the devices of a scan are');
    }
    return after;
  }

  /**
   * The identity resolver over the scan's recognised hosts: folds the devices it decides are
   * others, and returns the records to store (one per device after folding, with the resolver's
   * keys and decisions) and the devices seen.
   */
  private async resolve(
    run: ScanRun,
    seen: SeenDevice[],
    targets: IdentifyTarget[],
    records: DeviceRecognitionRecord[],
  ): Promise<{ seen: SeenDevice[]; records: DeviceRecognitionRecord[]; held: HeldKeys }> {
    const { store, log } = this.deps;
    const seenById = new Map(seen.map((s) => [s.deviceId, s]));
    const hosts: ResolverHost[] = records.map((r, i) => ({
      deviceId: r.deviceId,
      isNew: seenById.get(r.deviceId)?.isNew ?? false,
      ip: targets[i].host.ip,
      mac: targets[i].host.mac,
      keys: r.keys,
    }));
    const stored = await store.identity.keysOfHolders(records.flatMap((r) => r.keys.filter((k) => k.kind !== 'ip' && k.strength !== 'excluded')));
    const involved = [...new Set([...hosts.map((h) => h.deviceId), ...stored.map((k) => k.deviceId)])];
    const separated = await store.deviceMerges.separatedPairs(involved);
    const resolution = resolveIdentities({ hosts, stored, separated });

    // Fold (independent folds together, store/device-merge.ts foldAll); a fold that cannot be made leaves both devices as they are.
    const into = new Map<number, { target: number; kind: FoldKind }>();
    const made = await store.deviceMerges.foldAll(resolution.folds, run.scan.id);
    for (const [i, fold] of resolution.folds.entries()) {
      const result = made[i];
      if (!result) continue;
      into.set(fold.deviceId, { target: result.target, kind: fold.kind });
      log.info(
        { scan_id: run.scan.id, device_id: result.target, folded: fold.deviceId, ip: fold.ip, kind: fold.kind },
        `identity: ${fold.explanation}`,
      );
    }
    const after: SeenDevice[] = [];
    for (const s of seen) {
      const folded = into.get(s.deviceId);
      if (!folded) after.push(s);
      else if (folded.kind === 'same_device') after.push({ deviceId: folded.target, ip: s.ip, isNew: false, previousIp: null });
    }

    // The records: a folded host's evidence and fields become its device's when that device had no host of its own here.
    const recordOf = new Map(records.map((r) => [r.deviceId, r]));
    const byTarget = new Map<number, DeviceRecognitionRecord>();
    for (const r of records) {
      const folded = into.get(r.deviceId);
      const deviceId = folded?.target ?? r.deviceId;
      if (byTarget.has(deviceId)) continue;
      if (folded && recordOf.has(deviceId)) continue;
      const decisions = folded ? r.decisions.filter((d) => d.rule !== 'new_device') : r.decisions;
      byTarget.set(deviceId, { ...r, deviceId, decisions });
    }
    const out: DeviceRecognitionRecord[] = [];
    for (const device of resolution.devices) {
      // A fold that could not be made: its host keeps its own record (and the keys it offered).
      const record = byTarget.get(device.deviceId);
      if (!record) continue;
      out.push({ ...record, keys: device.keys, decisions: [...record.decisions, ...device.decisions] });
    }
    const listed = new Set(out.map((r) => r.deviceId));
    for (const [deviceId, record] of byTarget) if (!listed.has(deviceId)) out.push(record);
    // The keys read above, for recording (the folds made changed their devices' keys: read again).
    const held = { keys: stored, changed: [...into].flatMap(([folded, { target }]) => [folded, target]) };
    return { seen: after, records: out, held };
  }

  /**
   * Risk, CVEs, presence and changes against the baseline, then the snapshots of this scan; then
   * the live events for what changed (before scan_finished, which closes the scan's events).
   */
  private async evaluate(
    { scan, settings, request, engineOptions, exclude }: ScanRun,
    seen: SeenDevice[],
    portList: PortCoverage | readonly PortRange[],
  ): Promise<void> {
    const { store, log, events, inventory, evaluator } = this.deps;
    engineOptions.onProgress({ phase: 'saving', percent: 50 });
    const seenDeviceIds = seen.map((d) => d.deviceId);
    const outcome = await evaluator.evaluate({
      scan,
      seenDeviceIds,
      portsScanned: request.profile !== 'quick',
      portList,
      exclude: exclude ?? (request.device ? [] : settings.network.exclude),
    });
    await inventory.recordSnapshots(scan.id, seenDeviceIds);
    await publishScanOutcome(events, store, outcome, { scanId: scan.id, newDeviceIds: seen.filter((d) => d.isNew).map((d) => d.deviceId) }).catch(
      (err) => log.warn({ err, scan_id: scan.id }, 'could not publish the changes of a scan'),
    );
  }

  private async recordCompleted(
    { running, scan, engine, request, started, ownerId }: ScanRun,
    devicesFound: number,
    timing: { scan_ms: number; evaluation_ms: number },
  ): Promise<void> {
    const progress = running.progress.update({ phase: 'done', percent: 100 });
    const recorded = await this.deps.store.scans.finish(scan.id, ownerId ?? this.deps.owner.id, {
      status: 'completed',
      completed_at: nowIso(),
      duration_seconds: (Date.now() - started) / 1000,
      devices_found: devicesFound,
      progress: JSON.stringify(progress),
    });
    if (!recorded) {
      this.deps.log.warn({ scan_id: scan.id }, 'scan finished, but another instance had already ended its record');
      return;
    }
    await this.publishFinished(scan.id);
    await this.audit('scan_completed', scan, request.actor, true, {
      devices_found: devicesFound,
      duration_seconds: Math.round((Date.now() - started) / 100) / 10,
      engine: engine.name,
    });
    this.deps.log.info({ scan_id: scan.id, devices: devicesFound, ms: Date.now() - started, ...timing, engine: engine.name }, 'scan completed');
  }

  /** Records how a scan run here that did not complete ended: cancelled, timed out, interrupted or failed. */
  async recordEnded({ running, scan, engine, settings, request, started }: ScanRun, err: unknown): Promise<void> {
    const { store, log, owner } = this.deps;
    const aborted = err instanceof ScanAbortedError || running.abort.signal.aborted;
    const reason = running.reason;
    if (aborted && reason === 'lost') {
      // Another instance ended the record (it took this process for dead): nothing left to write.
      log.warn({ scan_id: scan.id }, 'scan stopped: another instance ended its record');
      return;
    }
    const status = aborted && reason === 'cancelled' ? 'cancelled' : 'failed';
    const message = !aborted
      ? `Scan engine ${engine.name} failed: ${(err as Error).message}`
      : reason === 'timeout'
        ? `Scan exceeded its time limit of ${settings.scanning.scan_timeout_minutes} minutes (scanning.scan_timeout_minutes)`
        : reason === 'shutdown'
          ? 'Interrupted: the server stopped while this scan was running'
          : 'Cancelled';
    if (!aborted) log.error({ err, scan_id: scan.id }, 'scan failed');
    const recorded = await store.scans
      .finish(scan.id, owner.id, {
        status,
        error: message,
        completed_at: nowIso(),
        duration_seconds: (Date.now() - started) / 1000,
        progress: JSON.stringify(running.progress.current),
      })
      .catch((e) => {
        log.error({ err: e, scan_id: scan.id }, 'could not record the end of a scan');
        return false;
      });
    if (!recorded) return;
    await this.publishFinished(scan.id);
    await this.audit(status === 'cancelled' ? 'scan_cancelled' : 'scan_failed', scan, request.actor, status === 'cancelled', {
      error: message,
    }).catch((e) => log.warn({ err: e, scan_id: scan.id }, 'could not audit the end of a scan'));
  }

  /**
   * Ends a scan that does not run in this process (queued, an agent's, one whose owner is gone,
   * or one taken here that cannot start) as `status`, unless it ended already; owner `ownerId`
   * (null: a queued scan, which has none). Publishes scan_finished and writes the audit entry
   * (`details`; by default the error). Returns whether this call ended it.
   */
  async endElsewhere(
    scan: ScanRow,
    ownerId: string | null,
    status: 'failed' | 'cancelled',
    error: string,
    details: Record<string, unknown> = { error },
  ): Promise<boolean> {
    if (!(await this.deps.store.scans.finish(scan.id, ownerId, { ...ending(scan), status, error }))) return false;
    await this.publishFinished(scan.id);
    await this.audit(
      status === 'cancelled' ? 'scan_cancelled' : 'scan_failed',
      scan,
      actorOf(scan.triggered_by),
      status === 'cancelled',
      details,
    ).catch((err) => this.deps.log.warn({ err, scan_id: scan.id }, 'could not audit the end of a scan'));
    return true;
  }

  /** Publishes the final record of a scan that just ended (scan_finished); never throws. */
  async publishFinished(scanId: number): Promise<void> {
    try {
      const row = await this.deps.store.scans.get(scanId);
      if (row) this.deps.events.publish('scan_finished', toScanRecord(row));
    } catch (err) {
      this.deps.log.warn({ err, scan_id: scanId }, 'could not publish the end of a scan');
    }
  }

  /** The audit entry of a scan's start (by its actor) or end (by the system, naming who it was for). */
  async audit(action: AuditAction, scan: ScanRow, actor: ScanRequest['actor'], success: boolean, details: Record<string, unknown>): Promise<void> {
    const own = action === 'scan_started';
    await this.deps.store.audit.write({
      action,
      actor: own ? actor.name : 'system',
      actorType: own ? actor.type : 'system',
      resourceType: 'scan',
      resourceId: scan.id,
      details: { subnet: scan.subnet, profile: scan.profile, scan_type: scan.scan_type, ...(own ? {} : { triggered_by: actor.name }), ...details },
      ipAddress: own ? (actor.ip ?? null) : null,
      userAgent: own ? (actor.userAgent ?? null) : null,
      success,
    });
  }
}

/** completed_at and duration of a scan ended now. */
function ending(scan: ScanRow): { completed_at: string; duration_seconds: number | null } {
  const completedAt = nowIso();
  const started = scan.started_at ? Date.parse(scan.started_at) : NaN;
  return { completed_at: completedAt, duration_seconds: Number.isNaN(started) ? null : Math.max(0, (Date.parse(completedAt) - started) / 1000) };
}

/** The ports examined as coverage: a port list of the scan's own run is TCP. */
function coverageOf(examined: PortCoverage | readonly PortRange[]): PortCoverage {
  return Array.isArray(examined) ? tcpCoverage(examined) : (examined as PortCoverage);
}
