/**
 * Agents' jobs (CONTRACT §12): an agent takes a queued scan routed to it, reports its progress
 * (renewing its lease), and uploads its results, which are recorded here exactly as a scan run
 * here is; or it reports how its scan ended without results. A revoked agent's scans end.
 */
import type { Logger } from 'pino';
import type { DiscoveredHost, ScanProfile } from '../core/model.js';
import { formatPortRanges, type Ipv4Network } from '../core/net.js';
import { storedCoverage, tcpCoverage } from '../core/coverage.js';
import { startableScans } from '../core/scan-queue.js';
import { actorOf, networkOf, resolveTarget, type AllowedTargets } from '../core/scan-target.js';
import type { Settings } from '../core/settings.js';
import type { EventBus } from '../events/bus.js';
import type { ScanProgress } from '../schemas/scan.js';
import { nowIso } from '../store/clock.js';
import type { Store } from '../store/index.js';
import type { ScanRow } from '../store/schema.js';
import { toScanRecord, type ScanLease } from '../store/scans.js';
import { RefusedError } from '../util/errors.js';
import type { ScanEngine } from '../engines/types.js';
import type { EngineSelector } from '../engines/engines.js';
import { ScanNotFoundError, ScanNotRunningError, UploadInProgressError } from './errors.js';
import type { ScanLifecycle } from './lifecycle.js';
import type { ProbedHost } from './identify.js';
import type { ScanRecorder } from './recording.js';
import { onlineWithin } from './run.js';
import { portListOf, recordingRun, runningScan } from './scan-run.js';

/** An agent's upload whose recording began this long ago without finishing is taken over (the instance recording it stopped). */
const UPLOAD_STALE_MS = 120_000;

/** What an agent is handed with a scan it took: the scan and how to run it (CONTRACT §12). */
export interface AgentJob {
  scan_id: number;
  profile: ScanProfile;
  /** The CIDR to discover in (a single-device scan: the address as /32). */
  subnet: string;
  /** A single-device scan's address, else null. */
  device: string | null;
  exclude: string[];
  /** The ports to examine (nmap's -p syntax); null for a quick scan. */
  ports: string | null;
  os_detection: boolean;
  resolve_hostnames: boolean;
  host_timeout_seconds: number;
  engine: Settings['scanning']['engine'];
  /** The scan's time limit; the agent stops it after this. */
  timeout_seconds: number;
  /** Addresses online after the previous scan (port-scanned from the start, as the server does). */
  expected: string[];
  /** The recognition probes to run after the port phase, and the SNMP communities they try (settings.recognition). */
  recognition: Settings['recognition'];
}

/** What an agent sends back when its scan has run; each of `ports` may carry the probe results of its host. */
export interface AgentResult {
  engine: string;
  hosts: DiscoveredHost[];
  /** With each host's probe results when the agent ran the probes (identify.ts ProbedHost). */
  ports: ProbedHost[];
  warnings?: string[];
}

export interface AgentJobsDeps {
  store: Store;
  log: Logger;
  events: EventBus;
  lifecycle: ScanLifecycle;
  recorder: ScanRecorder;
  /** Whose nmap-services ranks the frequent ports (scanning.top_ports) an agent is handed. */
  engines: EngineSelector;
  allowedTargets: (settings: Settings) => AllowedTargets;
}

export class AgentJobs {
  /** Agents' uploads being recorded here, by scan id: a retry on this instance waits for the first. */
  private readonly uploads = new Map<number, Promise<ScanRow>>();

  constructor(private readonly deps: AgentJobsDeps) {}

  /** See ScanManager.claimForAgent. */
  async claimForAgent(agent: { id: number; name: string }, ownerId: string): Promise<AgentJob | null> {
    const { store, log, events, lifecycle, recorder } = this.deps;
    const settings = await store.settings.get();
    const lease: ScanLease = { ownerId, host: `agent:${agent.id}`, pid: 0, leaseExpiresAt: lifecycle.leaseUntil() };
    for (;;) {
      const claimed = await store.scans.underQueueLock(async (db) => {
        const pick = startableScans(await store.scans.activeForQueue(db), settings.scanning.max_parallel_scans, agent.id)[0];
        return pick ? ((await store.scans.claim(db, pick.id, pick.slot, lease, `agent ${agent.name}`, nowIso())) ?? null) : null;
      });
      if (!claimed) return null;
      const profile = claimed.profile as ScanProfile;
      const device = claimed.scan_type === 'device' ? claimed.target : null;
      let network: Ipv4Network;
      try {
        network = resolveTarget(device ? { device } : { subnet: claimed.subnet }, settings, this.deps.allowedTargets(settings)).network;
      } catch (err) {
        if (!(err instanceof RefusedError)) throw err;
        const error = `Could not start: ${err.message}`;
        await recorder.endElsewhere(claimed, ownerId, 'failed', error, { error, runner: claimed.runner });
        continue;
      }
      events.publish('scan_started', toScanRecord(claimed));
      await recorder
        .audit('scan_started', claimed, actorOf(claimed.triggered_by), true, {
          engine: 'agent',
          profile,
          subnet: claimed.subnet,
          runner: claimed.runner,
        })
        .catch((err) => log.warn({ err, scan_id: claimed.id }, 'could not audit the start of a scan'));
      const exclude = device ? [] : settings.network.exclude;
      // TCP only for now: an agent's engine may lack the privileges nmap needs for UDP, and what it
      // leaves out must not be recorded as examined.
      const ports = profile === 'quick' ? null : formatPortRanges(portListOf(settings, profile, this.deps.engines).tcp);
      // The list the agent examines, on the record now: its upload is recorded with it, whatever the settings are then.
      if (ports !== null) await store.scans.update(claimed.id, { port_list: ports });
      return {
        scan_id: claimed.id,
        profile,
        subnet: network.cidr,
        device,
        exclude,
        ports,
        os_detection: settings.scanning.os_detection,
        resolve_hostnames: settings.network.resolve_hostnames,
        host_timeout_seconds: settings.scanning.host_timeout_seconds,
        engine: settings.scanning.engine,
        timeout_seconds: settings.scanning.scan_timeout_minutes * 60,
        expected: await onlineWithin(store, network, exclude),
        recognition: settings.recognition,
      };
    }
  }

  /** See ScanManager.agentRevoked. */
  async agentRevoked(agent: { id: number; name: string }): Promise<number[]> {
    const ended: number[] = [];
    for (const scan of await this.deps.store.scans.listActive()) {
      if (scan.agent_id !== agent.id) continue;
      const error = `Agent ${agent.name} was revoked ${scan.status === 'queued' ? 'before it ran this scan' : 'while it ran this scan'}`;
      if (await this.deps.recorder.endElsewhere(scan, scan.owner_id, 'failed', error)) ended.push(scan.id);
    }
    return ended;
  }

  /** See ScanManager.agentProgress. */
  async agentProgress(scanId: number, ownerId: string, progress: ScanProgress): Promise<'ok' | 'cancel' | 'lost'> {
    const { store, events, lifecycle } = this.deps;
    const state = await store.scans.renewLease(scanId, ownerId, lifecycle.leaseUntil());
    if (state === 'lost') return 'lost';
    await store.scans.update(scanId, { progress: JSON.stringify(progress) });
    events.publish('scan_progress', { scan_id: scanId, progress });
    return state === 'cancel_requested' ? 'cancel' : 'ok';
  }

  /** See ScanManager.agentEnded. */
  async agentEnded(scanId: number, ownerId: string, status: 'failed' | 'cancelled', error: string): Promise<ScanRow | undefined> {
    const { store, recorder } = this.deps;
    const scan = await store.scans.get(scanId);
    if (scan && scan.status === 'running' && scan.owner_id === ownerId) {
      await recorder.endElsewhere(scan, ownerId, status, error, { error, runner: scan.runner });
    }
    return store.scans.get(scanId);
  }

  /** See ScanManager.recordAgentResults. */
  async recordAgentResults(scanId: number, ownerId: string, result: AgentResult): Promise<ScanRow> {
    const pending = this.uploads.get(scanId);
    if (pending) return pending;
    const recording = this.recordUpload(scanId, ownerId, result).finally(() => this.uploads.delete(scanId));
    this.uploads.set(scanId, recording);
    return recording;
  }

  private async recordUpload(scanId: number, ownerId: string, result: AgentResult): Promise<ScanRow> {
    const { store, lifecycle, recorder } = this.deps;
    const scan = await store.scans.get(scanId);
    if (!scan) throw new ScanNotFoundError();
    if (scan.status !== 'running' || scan.owner_id !== ownerId) {
      if (scan.status === 'completed') return scan;
      throw new ScanNotRunningError(scanId, scan.status);
    }
    const now = Date.now();
    if (!(await store.scans.beginUpload(scanId, ownerId, nowIso(), new Date(now - UPLOAD_STALE_MS).toISOString()))) {
      const current = await store.scans.get(scanId);
      if (current?.status === 'completed') return current;
      throw new UploadInProgressError(scanId);
    }
    const settings = await store.settings.get();
    const profile = scan.profile as ScanProfile;
    const run = recordingRun({
      running: runningScan(scan, profile, result.hosts.length),
      scan,
      engine: { name: result.engine } as ScanEngine,
      settings,
      network: networkOf(scan.subnet),
      request: { profile, ...(scan.scan_type === 'device' && scan.target ? { device: scan.target } : {}), actor: actorOf(scan.triggered_by) },
      started: scan.started_at ? Date.parse(scan.started_at) : now,
      ownerId,
    });
    // The agent's lease holds while its results are recorded (the agent waits for the answer).
    const lease = lifecycle.keepLeaseOf(scanId, ownerId);
    try {
      // The ports the agent was handed when it took the scan (claimForAgent); a quick scan examines none.
      const examined = storedCoverage(scan.port_list) ?? tcpCoverage(portListOf(settings, profile, this.deps.engines).tcp);
      await recorder.recordResults(run, { hosts: result.hosts, ports: result.ports, warnings: result.warnings ?? [], examined });
    } catch (err) {
      // A retry may record the results at once (beginUpload removes what this attempt wrote).
      await store.scans.update(scanId, { upload_started_at: null }).catch(() => undefined);
      throw err;
    } finally {
      clearInterval(lease);
    }
    return (await store.scans.get(scanId))!;
  }

  /** Waits for the uploads being recorded here. */
  async settle(): Promise<void> {
    await Promise.allSettled(this.uploads.values());
  }
}
