/**
 * The run of a scan this process took: its start (scan_started, the audit entry), then its phases
 * (discovery and the port scan, one after the other or overlapped by the engines' pipeline), with
 * its time limit, lease and progress, and finally its results or its end handed to the recorder.
 */
import type { OutboundGuard } from '../util/outbound.js';
import type { Logger } from 'pino';
import type { DiscoveredHost, ScannedHost, ScanProfile } from '../core/model.js';
import { ipv4ToInt, networkContains, parseIpv4Network, type Ipv4Network } from '../core/net.js';
import { formatCoverage, type PortCoverage } from '../core/coverage.js';
import type { Settings } from '../core/settings.js';
import type { EventBus } from '../events/bus.js';
import { NameLookup } from '../names/lookup.js';
import type { Store } from '../store/index.js';
import type { SeenDevice } from '../store/inventory.js';
import { onlineAddressesBetween } from '../store/online.js';
import type { ScanRow } from '../store/schema.js';
import { toScanRecord } from '../store/scans.js';
import { runPipeline } from '../engines/pipeline.js';
import { hasRawSocketPrivilege } from '../engines/privileges.js';
import { ScanAbortedError, type EngineProgress, type ScanEngine } from '../engines/types.js';
import type { EngineSelector } from '../engines/engines.js';
import type { ScanLifecycle } from './lifecycle.js';
import type { ScanRecorder } from './recording.js';
import { portListOf, runningScan, type RunningScan, type ScanRequest, type ScanRun } from './scan-run.js';

/** How often progress is written to the scan record while it runs (what other instances show). */
const PERSIST_EVERY_MS = 1000;
/** Live progress events are published at most this often (CONTRACT §10: at most twice a second). */
const PROGRESS_EVENT_EVERY_MS = 500;

export interface ScanRunnerDeps {
  store: Store;
  log: Logger;
  events: EventBus;
  recorder: ScanRecorder;
  lifecycle: ScanLifecycle;
  /** Whose nmap-services ranks the frequent ports (scanning.top_ports). */
  engines: EngineSelector;
  /** `worker <name>`, written on the scans this process runs. */
  runnerName: string;
  /** Called as a scan ends here: the next queued scan may start. */
  wake: () => void;
  /** Which addresses the name sources may reach (default: no loopback, link-local or unspecified address, as without NETWARDEN_OUTBOUND_ALLOW; services.ts passes the configured one). */
  outboundGuard?: OutboundGuard;
}

type Phases = { live: DiscoveredHost[]; seen: SeenDevice[]; portList: PortCoverage; scanned: ScannedHost[] };

export class ScanRunner {
  constructor(private readonly deps: ScanRunnerDeps) {}

  /** Records the start of a scan that now holds an active slot, then runs it in the background. */
  async launch(
    scan: ScanRow,
    engine: ScanEngine,
    settings: Settings,
    target: { network: Ipv4Network; hosts: number },
    actor: ScanRequest['actor'],
  ): Promise<void> {
    const { log, events, recorder, lifecycle } = this.deps;
    const profile = scan.profile as ScanProfile;
    const running = runningScan(scan, profile, target.hosts);
    lifecycle.running.set(scan.id, running);
    events.publish('scan_started', toScanRecord(scan));
    const details = {
      engine: engine.name,
      profile,
      subnet: scan.subnet,
      runner: this.deps.runnerName,
      ...(scan.schedule_id !== null ? { schedule_id: scan.schedule_id } : {}),
    };
    // The scan holds the slot now: it must run (and end) even if the audit entry cannot be written.
    const audited = recorder
      .audit('scan_started', scan, actor, true, details)
      .catch((err) => log.warn({ err, scan_id: scan.id }, 'could not audit the start of a scan'));
    const request: ScanRequest = { profile, ...(scan.scan_type === 'device' && scan.target ? { device: scan.target } : {}), actor };
    // `done` is the scan's end from the moment it is listed in `running`: whoever waits for it
    // (idle(), cancel()) meanwhile waits for the real end, never for a promise already settled.
    running.done = audited
      .then(() => this.execute(running, scan, engine, settings, target.network, request))
      .finally(() => {
        lifecycle.running.delete(scan.id);
        // The next queued scan starts as this one ends, here, whichever instance queued it.
        this.deps.wake();
      });
    await audited;
  }

  /**
   * Runs a recorded scan to its end, phase by phase: discovery, the port scan, evaluation, and
   * the final record. Whatever happens, the scan record ends in a final state (unless another
   * instance ended it first) and the timers are cleared.
   */
  private async execute(
    running: RunningScan,
    scan: ScanRow,
    engine: ScanEngine,
    settings: Settings,
    network: Ipv4Network,
    request: ScanRequest,
  ): Promise<void> {
    const { recorder, lifecycle } = this.deps;
    const run: ScanRun = {
      running,
      scan,
      engine,
      settings,
      network,
      request,
      started: Date.now(),
      ...this.engineOptions(running, scan, settings),
      // Name sources (issue 14): asked now, in parallel with discovery.
      names: NameLookup.start(settings.name_sources, { signal: running.abort.signal, guard: this.deps.outboundGuard }),
    };
    const timer = setTimeout(() => {
      running.reason = 'timeout';
      running.abort.abort();
    }, settings.scanning.scan_timeout_minutes * 60_000);
    timer.unref();
    const lease = lifecycle.keepLease(running);
    try {
      const {
        live,
        seen: discovered,
        portList,
        scanned,
      } = engine.concurrent && request.profile !== 'quick' ? await this.pipelinedPhases(run, request.profile) : await this.phases(run);
      if (running.abort.signal.aborted) throw new ScanAbortedError();
      // Recognition (issue 21): the probes ask the hosts the port scan reached what they are, and
      // the resolver folds the devices it created that are devices already known.
      const seen = await recorder.recordIdentity(run, discovered, live, scanned, request.profile !== 'quick');
      if (running.abort.signal.aborted) throw new ScanAbortedError();
      await recorder.recordResults(run, { hosts: live, seen, examined: portList });
    } catch (err) {
      await recorder.recordEnded(run, err);
    } finally {
      clearTimeout(timer);
      clearInterval(lease);
    }
  }

  /** What every engine call of this scan shares: privileges, timeouts, the abort signal, and where progress goes. */
  private engineOptions(running: RunningScan, scan: ScanRow, settings: Settings): Pick<ScanRun, 'engineOptions' | 'recordProcessGroups'> {
    const { store, log, events } = this.deps;
    let lastPersist = 0;
    let lastEvent = 0;
    const onProgress = (event: EngineProgress) => {
      const progress = running.progress.update(event);
      if (Date.now() - lastEvent >= PROGRESS_EVENT_EVERY_MS) {
        lastEvent = Date.now();
        events.publish('scan_progress', { scan_id: scan.id, progress });
      }
      if (Date.now() - lastPersist >= PERSIST_EVERY_MS) {
        lastPersist = Date.now();
        store.scans
          .update(scan.id, { progress: JSON.stringify(progress) })
          .catch((err) => log.warn({ err, scan_id: scan.id }, 'could not record scan progress'));
      }
    };
    // The engine's process groups go on the record, so a restart after a crash can end them.
    // One write after another: with overlapping runs a later value must not be overtaken.
    let recording = Promise.resolve();
    const record = (patch: { engine_pgid: number | null; engine_pgids: string | null }) => {
      recording = recording.then(() =>
        store.scans
          .update(scan.id, patch)
          .then(() => undefined)
          .catch((err) => log.warn({ err, scan_id: scan.id }, 'could not record the engine process')),
      );
    };
    return {
      engineOptions: {
        privileged: hasRawSocketPrivilege(),
        resolveHostnames: settings.network.resolve_hostnames,
        hostTimeoutSeconds: settings.scanning.host_timeout_seconds,
        signal: running.abort.signal,
        onProgress,
        onProcess: (pgid) => record({ engine_pgid: pgid, engine_pgids: null }),
      },
      recordProcessGroups: (live) => record({ engine_pgid: live.at(-1) ?? null, engine_pgids: live.length > 0 ? JSON.stringify(live) : null }),
    };
  }

  /** Discovery, then the port scan of the hosts it found (not for quick scans): one after the other. */
  private async phases(run: ScanRun): Promise<Phases> {
    const { live, seen } = await this.discoveryPhase(run);
    const scanned: ScannedHost[] = [];
    const portList = await this.portPhase(run, live, seen, scanned);
    return { live, seen, portList, scanned };
  }

  /** Finds the live hosts and records them in the inventory (presence is decided once the scan completes). */
  private async discoveryPhase(run: ScanRun): Promise<{ live: DiscoveredHost[]; seen: SeenDevice[] }> {
    const { engine, settings, network, request, engineOptions } = run;
    const { onProgress } = engineOptions;
    onProgress({ phase: 'discovery', percent: 0 });
    const exclude = request.device ? [] : settings.network.exclude;
    const live = await engine.discover({ cidr: network.cidr, exclude, ...engineOptions });
    // Recording what discovery found is still discovery: 'saving' is the last stretch of the bar.
    onProgress({ phase: 'discovery', percent: -1, hostsFound: live.length });
    const seen = await this.deps.recorder.recordDiscovery(run, live);
    onProgress({ phase: 'discovery', percent: 100, hostsFound: live.length, hostsDone: request.profile === 'quick' ? live.length : 0 });
    return { live, seen };
  }

  /** Scans the live hosts' ports (not for quick scans) and records them; returns the port list examined. */
  private async portPhase(run: ScanRun, live: DiscoveredHost[], seen: SeenDevice[], scanned: ScannedHost[]): Promise<PortCoverage> {
    const { engine, settings, request, engineOptions } = run;
    if (request.profile === 'quick') return portListOf(settings, request.profile, this.deps.engines);
    const portList = await this.examinedBy(run, request.profile);
    if (live.length === 0) return portList;
    const results = await engine.scanPorts({
      hosts: live.map((h) => h.ip),
      profile: request.profile,
      ports: formatCoverage(portList),
      osDetection: settings.scanning.os_detection,
      ...engineOptions,
    });
    engineOptions.onProgress({ phase: 'saving', percent: 0, hostsDone: live.length });
    await this.deps.recorder.recordPorts(run.scan, portList, results, live, seen);
    scanned.push(...results);
    return portList;
  }

  /**
   * The ports this run's engine examines for `profile`: the configured ones, less what the engine
   * cannot examine here (nmap's UDP scan unprivileged), which the scan log then names.
   */
  private async examinedBy(run: ScanRun, profile: Exclude<ScanProfile, 'quick'>): Promise<PortCoverage> {
    const configured = portListOf(run.settings, profile, this.deps.engines);
    const { coverage, warning } = run.engine.examinable?.(configured, run.engineOptions.privileged) ?? { coverage: configured, warning: null };
    if (warning) {
      this.deps.log.warn({ scan_id: run.scan.id }, warning);
      await this.deps.store.scans.addWarnings(run.scan.id, [warning]);
    }
    return coverage;
  }

  /**
   * Discovery and the port scan overlapped (src/engines/pipeline.ts): the hosts online after the
   * previous scan are port-scanned from the start, the others as discovery reports them, and
   * results are written while the engine still runs. Records exactly what phases() records.
   */
  private async pipelinedPhases(run: ScanRun, profile: Exclude<ScanProfile, 'quick'>): Promise<Phases> {
    const { engine, settings, network, request, engineOptions } = run;
    const { recorder, store } = this.deps;
    const portList = await this.examinedBy(run, profile);
    const exclude = request.device ? [] : settings.network.exclude;
    engineOptions.onProgress({ phase: 'discovery', percent: 0 });
    let found: { live: DiscoveredHost[]; seen: SeenDevice[] } = { live: [], seen: [] };
    const scanned: ScannedHost[] = [];
    const { privileged, resolveHostnames, hostTimeoutSeconds } = engineOptions;
    const live = await runPipeline({
      engine,
      discovery: { cidr: network.cidr, exclude, ...engineOptions },
      ports: {
        profile,
        ports: formatCoverage(portList),
        osDetection: settings.scanning.os_detection,
        privileged,
        resolveHostnames,
        hostTimeoutSeconds,
      },
      expected: await onlineWithin(store, network, exclude),
      recordDiscovery: async (hosts) => {
        found = { live: hosts, seen: await recorder.recordDiscovery(run, hosts) };
      },
      recordPorts: async (results) => {
        await recorder.recordPorts(run.scan, portList, results, found.live, found.seen);
        scanned.push(...results);
      },
      onProcessGroups: run.recordProcessGroups,
    });
    engineOptions.onProgress({ phase: 'saving', percent: 0, hostsDone: live.length });
    return { ...found, portList, scanned };
  }
}

/** The addresses of the devices online after the previous scan that lie in `network` and outside `exclude`. */
export async function onlineWithin(store: Store, network: Ipv4Network, exclude: string[]): Promise<string[]> {
  const low = ipv4ToInt(network.network);
  const online = await onlineAddressesBetween(store.db, low, low + network.size - 1);
  const excluded = exclude.map((cidr) => parseIpv4Network(cidr)).flatMap((p) => (p.ok ? [p.value] : []));
  return online.filter((ip) => networkContains(network, ip) && !excluded.some((net) => networkContains(net, ip)));
}
