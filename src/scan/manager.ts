import type { Logger } from 'pino';
import { formatPortRanges, ipv4ToInt, parseIpv4Network, parsePortRanges, type Ipv4Network } from '../core/net.js';
import type { Settings } from '../core/settings.js';
import type { ActorType } from '../store/audit.js';
import { nowIso } from '../store/clock.js';
import type { Store } from '../store/index.js';
import { InventoryWriter } from '../store/inventory.js';
import type { ScanProgress } from '../store/scans.js';
import type { ScanRow } from '../store/schema.js';
import { EngineSelector } from './engines.js';
import { ScanEvaluator } from './evaluate.js';
import { ScanRequestError } from './errors.js';
import { hasRawSocketPrivilege } from './privileges.js';
import { ProgressTracker } from './progress.js';
import { ScanAbortedError, type EngineProgress, type ScanEngine, type ScanProfile } from './types.js';

export interface ScanRequest {
  profile: ScanProfile;
  /** CIDR or single address; defaults to network.subnet. */
  subnet?: string;
  /** A single-device scan of this address. */
  device?: string;
  actor: { name: string | null; type: ActorType; ip?: string | null; userAgent?: string | null };
}

interface RunningScan {
  id: number;
  profile: ScanProfile;
  subnet: string;
  abort: AbortController;
  /** Why the abort happened: a user's cancel, the time limit, or shutdown. */
  reason: 'cancelled' | 'timeout' | 'shutdown' | null;
  progress: ProgressTracker;
  done: Promise<void>;
}

/** How often progress is written to the scan record while it runs. */
const PERSIST_EVERY_MS = 2000;

/**
 * Runs scans one at a time: validates the request, picks the engine, runs discovery and the port
 * scan, writes results to the inventory, and keeps progress for /api/scan/status.
 */
export class ScanManager {
  private running: RunningScan | null = null;
  private readonly inventory: InventoryWriter;
  readonly engines: EngineSelector;
  private readonly evaluator: ScanEvaluator;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    engines?: EngineSelector,
    /** Data directory holding imported CVE data; null uses only the shipped dataset. */
    dataDir: string | null = null,
  ) {
    this.inventory = new InventoryWriter(store.db, () => store.touch());
    this.engines = engines ?? new EngineSelector();
    this.evaluator = new ScanEvaluator(store, dataDir);
  }

  /** Validates and starts a scan; resolves once it is recorded as running. */
  async trigger(request: ScanRequest): Promise<ScanRow> {
    const settings = await this.store.settings.get();
    const target = resolveTarget(request, settings);
    if (this.running) throw busy(this.running.id);
    const active = await this.store.scans.active();
    if (active) throw busy(active.id);

    const engine = await this.engines.select(settings.scanning.engine);
    const now = nowIso();
    const scan = await this.store.scans.create({
      status: 'running',
      profile: request.profile,
      subnet: target.network.cidr,
      scan_type: request.device ? 'device' : 'network',
      target: request.device ?? null,
      started_at: now,
      triggered_by: request.actor.name,
    });
    const abort = new AbortController();
    const running: RunningScan = {
      id: scan.id,
      profile: request.profile,
      subnet: scan.subnet,
      abort,
      reason: null,
      progress: new ProgressTracker(request.profile, target.hosts),
      done: Promise.resolve(),
    };
    this.running = running;
    await this.audit('scan_started', scan, request.actor, true, { engine: engine.name, profile: request.profile, subnet: scan.subnet });
    running.done = this.execute(running, scan, engine, settings, target.network, request).finally(() => {
      if (this.running === running) this.running = null;
    });
    return scan;
  }

  /** Cancels the running scan. */
  async cancel(scanId: number): Promise<void> {
    const scan = await this.store.scans.get(scanId);
    if (!scan) throw new ScanRequestError(404, 'Scan not found');
    if (this.running?.id === scanId) {
      this.running.reason = 'cancelled';
      this.running.abort.abort();
      await this.running.done;
      return;
    }
    if (scan.status === 'running' || scan.status === 'queued') {
      // Left running by an instance that no longer runs it: nothing to stop, so record the end.
      await this.store.scans.update(scanId, { status: 'cancelled', completed_at: nowIso(), error: 'Cancelled' });
      return;
    }
    throw new ScanRequestError(409, `Scan ${scanId} is not running (status ${scan.status})`, { scan_id: scanId, status: scan.status });
  }

  /** Progress of the scan this process runs, if any. */
  current(): { id: number; profile: ScanProfile; subnet: string; progress: ScanProgress } | null {
    const r = this.running;
    return r ? { id: r.id, profile: r.profile, subnet: r.subnet, progress: r.progress.current } : null;
  }

  /** Waits for the running scan (if any) to end. */
  async idle(): Promise<void> {
    await this.running?.done;
  }

  /** Stops a running scan because the server is going down; it is recorded as failed. */
  async shutdown(): Promise<void> {
    const r = this.running;
    if (!r) return;
    r.reason = 'shutdown';
    r.abort.abort();
    await r.done;
  }

  private async execute(
    running: RunningScan,
    scan: ScanRow,
    engine: ScanEngine,
    settings: Settings,
    network: Ipv4Network,
    request: ScanRequest,
  ): Promise<void> {
    const started = Date.now();
    const { signal } = running.abort;
    const limitMs = settings.scanning.scan_timeout_minutes * 60_000;
    const timer = setTimeout(() => {
      running.reason = 'timeout';
      running.abort.abort();
    }, limitMs);
    timer.unref();
    let lastPersist = 0;
    const onProgress = (event: EngineProgress) => {
      const progress = running.progress.update(event);
      if (Date.now() - lastPersist >= PERSIST_EVERY_MS) {
        lastPersist = Date.now();
        this.store.scans.update(scan.id, { progress: JSON.stringify(progress) }).catch(() => {});
      }
    };
    const privileged = hasRawSocketPrivilege();
    const common = {
      privileged,
      resolveHostnames: settings.network.resolve_hostnames,
      hostTimeoutSeconds: settings.scanning.host_timeout_seconds,
      signal,
      onProgress,
    };
    try {
      onProgress({ phase: 'discovery', percent: 0 });
      const live = await engine.discover({ cidr: network.cidr, exclude: request.device ? [] : settings.network.exclude, ...common });
      // Recording what discovery found is still discovery: 'saving' is the last stretch of the bar.
      onProgress({ phase: 'discovery', percent: -1, hostsFound: live.length });
      const at = nowIso();
      const { seen, notes } = await this.inventory.recordDiscovery(scan.id, live, at);
      for (const n of notes) this.log.warn({ scan_id: scan.id, ip: n.ip, mac: n.mac, device_id: n.deviceId }, `identity: ${n.reason}`);
      const base = ipv4ToInt(network.network);
      const excluded = request.device
        ? []
        : settings.network.exclude.flatMap((e) => {
            const net = parseIpv4Network(e);
            return net.ok ? [{ low: ipv4ToInt(net.value.network), high: ipv4ToInt(net.value.network) + net.value.size - 1 }] : [];
          });
      await this.inventory.markUnseenOffline(
        { low: base, high: base + network.size - 1 },
        seen.map((s) => s.deviceId),
        (ip) => excluded.some((r) => ip >= r.low && ip <= r.high),
      );
      onProgress({ phase: 'discovery', percent: 100, hostsFound: live.length, hostsDone: request.profile === 'quick' ? live.length : 0 });

      const configured = parsePortRanges(settings.scanning.port_range);
      const scannedPorts = request.profile === 'intensive' || !configured.ok ? [{ low: 1, high: 65535 }] : configured.value;
      if (request.profile !== 'quick' && live.length > 0) {
        const results = await engine.scanPorts({
          hosts: live.map((h) => h.ip),
          profile: request.profile,
          ports: formatPortRanges(scannedPorts),
          osDetection: settings.scanning.os_detection,
          ...common,
        });
        onProgress({ phase: 'saving', percent: 0, hostsDone: live.length });
        const deviceByIp = new Map(seen.map((s) => [s.ip, s.deviceId]));
        const discoveredByIp = new Map(live.map((h) => [h.ip, h]));
        await this.inventory.recordPorts(
          results
            .filter((h) => deviceByIp.has(h.ip))
            .map((h) => {
              const discovered = discoveredByIp.get(h.ip);
              return { deviceId: deviceByIp.get(h.ip)!, host: { ...h, mac: h.mac ?? discovered?.mac ?? null } };
            }),
          nowIso(),
        );
      }
      if (signal.aborted) throw new ScanAbortedError();
      onProgress({ phase: 'saving', percent: 50 });
      const seenIds = seen.map((s) => s.deviceId);
      await this.evaluator.evaluate({ scan, seenDeviceIds: seenIds, portsScanned: request.profile !== 'quick', portList: scannedPorts });
      await this.inventory.recordSnapshots(scan.id, seenIds);
      const progress = running.progress.update({ phase: 'done', percent: 100 });
      const completedAt = nowIso();
      await this.store.scans.update(scan.id, {
        status: 'completed',
        completed_at: completedAt,
        duration_seconds: (Date.now() - started) / 1000,
        devices_found: live.length,
        progress: JSON.stringify(progress),
      });
      await this.audit('scan_completed', scan, request.actor, true, {
        devices_found: live.length,
        duration_seconds: Math.round((Date.now() - started) / 100) / 10,
        engine: engine.name,
      });
      this.log.info({ scan_id: scan.id, devices: live.length, ms: Date.now() - started, engine: engine.name }, 'scan completed');
    } catch (err) {
      const aborted = err instanceof ScanAbortedError || signal.aborted;
      const reason = running.reason;
      const status = aborted && reason === 'cancelled' ? 'cancelled' : 'failed';
      const message = !aborted
        ? `Scan engine ${engine.name} failed: ${(err as Error).message}`
        : reason === 'timeout'
          ? `Scan exceeded its time limit of ${settings.scanning.scan_timeout_minutes} minutes (scanning.scan_timeout_minutes)`
          : reason === 'shutdown'
            ? 'Interrupted: the server stopped while this scan was running'
            : 'Cancelled';
      if (!aborted) this.log.error({ err, scan_id: scan.id }, 'scan failed');
      await this.store.scans
        .update(scan.id, {
          status,
          error: message,
          completed_at: nowIso(),
          duration_seconds: (Date.now() - started) / 1000,
          progress: JSON.stringify(running.progress.current),
        })
        .catch((e) => this.log.error({ err: e }, 'could not record the end of a scan'));
      await this.audit(status === 'cancelled' ? 'scan_cancelled' : 'scan_failed', scan, request.actor, status === 'cancelled', { error: message }).catch(
        () => {},
      );
    } finally {
      clearTimeout(timer);
    }
  }

  private async audit(
    action: 'scan_started' | 'scan_completed' | 'scan_failed' | 'scan_cancelled',
    scan: ScanRow,
    actor: ScanRequest['actor'],
    success: boolean,
    details: Record<string, unknown>,
  ): Promise<void> {
    const own = action === 'scan_started';
    await this.store.audit.write({
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

function busy(id: number): ScanRequestError {
  return new ScanRequestError(409, 'A scan is already running', { scan_id: id });
}

/** The validated target of a request, and how many addresses it covers. */
export function resolveTarget(request: Pick<ScanRequest, 'subnet' | 'device'>, settings: Settings): { network: Ipv4Network; hosts: number } {
  if (request.device !== undefined) {
    const parsed = parseIpv4Network(request.device);
    if (!parsed.ok || request.device.includes('/')) {
      throw new ScanRequestError(400, 'ip_address: must be a single IPv4 address such as 192.168.1.10');
    }
    return { network: parsed.value, hosts: 1 };
  }
  const text = request.subnet ?? settings.network.subnet;
  const parsed = parseIpv4Network(text);
  if (!parsed.ok) throw new ScanRequestError(400, `subnet: ${parsed.error}`);
  const max = settings.scanning.max_hosts;
  if (parsed.value.size > max) {
    throw new ScanRequestError(
      400,
      `subnet: ${parsed.value.cidr} has ${parsed.value.size} addresses, more than the limit of ${max} (scanning.max_hosts); scan a smaller block`,
    );
  }
  return { network: parsed.value, hosts: parsed.value.size };
}
