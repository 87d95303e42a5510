/**
 * `netwarden agent` at work (CONTRACT §12): long-polls the server for a scan of its networks,
 * runs it with a local engine (the same engines and the same overlap of discovery and port scans
 * as the server's own scans), reports progress at most once a second (and at least every few
 * seconds, which keeps the scan's lease and brings a cancel), uploads the results until the
 * server has them, and stops cleanly when told to.
 */
import { randomUUID } from 'node:crypto';
import {
  CPE_MAX_ITEMS,
  CPE_MAX_LENGTH,
  DEVICE_TYPE_MAX_LENGTH,
  HOST_TEXT_MAX_LENGTH,
  HOSTNAME_MAX_LENGTH,
  PORT_STATE_MAX_LENGTH,
  SERVICE_NAME_MAX_LENGTH,
  SERVICE_TEXT_MAX_LENGTH,
} from '../core/limits.js';
import type { DiscoveredHost, ScanEngineName, ScanEngineSetting, ScannedHost, ScannedPort } from '../core/model.js';
import { cleanHostname } from '../core/scan-input.js';
import { networkWithin, parseIpv4Network } from '../core/net.js';
import type { AgentJob, AgentUpload } from '../schemas/agent.js';
import type { ScanProgress } from '../schemas/scan.js';
import type { EngineSelector } from '../engines/engines.js';
import { runPipeline } from '../engines/pipeline.js';
import { hasRawSocketPrivilege } from '../engines/privileges.js';
import { ProgressTracker } from '../scan/progress.js';
import { probeHosts, type ProbeRunOptions } from '../scan/identify.js';
import type { ProbeResults } from '../core/probe-results.js';
import { ScanAbortedError, type EngineProgress, type ScanEngine } from '../engines/types.js';
import { AgentRequestError, AgentTokenRefusedError, sleep, type AgentClient } from './client.js';

/** What the runtime logs through (pino's shape; the CLI passes its logger). */
export interface AgentLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface AgentRuntimeOptions {
  client: AgentClient;
  engines: EngineSelector;
  /** --engine: which engine runs a scan whose server setting is `auto` (auto: nmap when installed). */
  engine: ScanEngineSetting;
  version: string;
  hostname: string;
  log: AgentLog;
  /** NETWARDEN_SCAN_ALLOW on the agent's host: when set, a scan outside it is refused (failed), whatever the server asks. */
  scanAllow?: string[] | null;
  /** Progress is sent at most this often (default 1 s)... */
  progressEveryMs?: number;
  /** ...and at least this often while a scan runs, changed or not (default 3 s): the lease and a cancel ride on it. */
  heartbeatMs?: number;
  /** Seconds each long poll waits on the server (default 25). */
  pollWaitSeconds?: number;
  /** What tests change about the recognition probes (their UDP ports, ssh-keyscan): see runProbes. */
  probeOptions?: ProbeRunOptions;
}

/** Why a running scan was stopped. */
type StopReason = 'cancelled' | 'timeout' | 'shutdown' | 'lost';

/** Lengths the server accepts for each text of an upload (src/schemas/agent.ts); longer text is cut, never refused. */
/** What the server accepts (core/limits.ts): longer texts are cut here, so one odd device never gets a whole upload refused. */
const MAX_TEXT = {
  vendor: HOST_TEXT_MAX_LENGTH,
  hostname: HOSTNAME_MAX_LENGTH,
  os_name: HOST_TEXT_MAX_LENGTH,
  device_type: DEVICE_TYPE_MAX_LENGTH,
  service: SERVICE_NAME_MAX_LENGTH,
  product: SERVICE_TEXT_MAX_LENGTH,
  version: SERVICE_TEXT_MAX_LENGTH,
  extra_info: SERVICE_TEXT_MAX_LENGTH,
};

export class AgentRuntime {
  /** This run's id: the scans it takes are bound to it on the server. */
  readonly runId = randomUUID();
  private readonly progressEveryMs: number;
  private readonly heartbeatMs: number;

  constructor(private readonly options: AgentRuntimeOptions) {
    this.progressEveryMs = options.progressEveryMs ?? 1000;
    this.heartbeatMs = options.heartbeatMs ?? 3000;
  }

  /** The engines this host can run, best first; throws when --engine nmap is asked and nmap is missing. */
  async availableEngines(): Promise<ScanEngineName[]> {
    const nmap = (await this.options.engines.nmapVersion()) !== null;
    if (this.options.engine === 'nmap' && !nmap) {
      throw new Error('--engine nmap: nmap is not installed on this host (install nmap, or use --engine auto or native)');
    }
    if (this.options.engine === 'native') return ['native'];
    return nmap ? ['nmap', 'native'] : ['native'];
  }

  /**
   * Takes and runs scans until `signal` aborts (a scan running then is stopped and reported as
   * interrupted). Throws AgentTokenRefusedError when the server refuses the token (revoked).
   */
  async run(signal: AbortSignal): Promise<void> {
    const engines = await this.availableEngines();
    const { log } = this.options;
    log.info({ run_id: this.runId, engines, version: this.options.version }, 'netwarden agent ready');
    while (!signal.aborted) {
      let job: AgentJob | null;
      try {
        job = await this.options.client.nextJob(
          {
            run_id: this.runId,
            version: this.options.version,
            engine: engines[0],
            engines,
            hostname: this.options.hostname,
            wait_seconds: this.options.pollWaitSeconds ?? 25,
          },
          signal,
        );
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof AgentTokenRefusedError) throw err;
        // A refusal a retry does not change (a bad request): said once, then tried again a little later.
        log.error({ err: describe(err) }, 'the server refused the poll for a scan');
        await sleep(30_000, signal);
        continue;
      }
      if (job) await this.runJob(job, engines, signal);
    }
    log.info({ run_id: this.runId }, 'netwarden agent stopped');
  }

  /** Runs one scan to its end and reports that end to the server, whatever it was. */
  async runJob(job: AgentJob, engines: ScanEngineName[], shutdown: AbortSignal): Promise<void> {
    const { log, client } = this.options;
    const started = Date.now();
    log.info({ scan_id: job.scan_id, subnet: job.subnet, profile: job.profile }, 'scan taken');
    const refusal = this.refusal(job, engines);
    if (refusal) {
      log.warn({ scan_id: job.scan_id, error: refusal }, 'scan refused');
      await this.reportEnd(job.scan_id, 'failed', refusal);
      return;
    }
    const engine = await this.options.engines.select(this.engineFor(job, engines));

    const abort = new AbortController();
    let reason: StopReason | null = null;
    const stop = (why: StopReason) => {
      if (abort.signal.aborted) return;
      reason = why;
      abort.abort();
    };
    const onShutdown = () => stop('shutdown');
    shutdown.addEventListener('abort', onShutdown, { once: true });
    // Told to stop while the poll that brought this scan was answered: it is reported as interrupted at once.
    if (shutdown.aborted) onShutdown();
    const timer = setTimeout(() => stop('timeout'), job.timeout_seconds * 1000);
    timer.unref();

    const network = parseIpv4Network(job.subnet);
    const tracker = new ProgressTracker(job.profile, network.ok ? network.value.size : 0);
    const reporter = new ProgressReporter(
      (progress) => client.progress(job.scan_id, this.runId, progress),
      tracker,
      { everyMs: this.progressEveryMs, heartbeatMs: this.heartbeatMs },
      (action) => {
        if (action === 'cancel') stop('cancelled');
        else if (action === 'drop') stop('lost');
      },
    );
    reporter.start();
    try {
      const { hosts, ports } = await this.scan(job, engine, abort.signal, (event) => reporter.update(event));
      if (abort.signal.aborted) throw new ScanAbortedError();
      // Recognition (issue 21): the probes the server runs after its own scans' port phase, run here
      // on the hosts this scan reached (the server cannot reach them); their answers go up with each host.
      const probes = await this.probe(job, hosts, ports, abort.signal);
      if (abort.signal.aborted) throw new ScanAbortedError();
      reporter.update({ phase: 'saving', percent: 0, hostsDone: hosts.length });
      await reporter.stop();
      clearTimeout(timer);
      const upload: AgentUpload = {
        run_id: this.runId,
        engine: engine.name,
        hosts: hosts.map(uploadedHost),
        ports: ports.map((h) => uploadedScan(h, probes.get(h.ip))),
      };
      const record = await client.uploadResults(job.scan_id, upload, {
        // The lease would run out while the server is unreachable or still recording an earlier attempt.
        whileWaiting: async () => void (await reporter.once()),
      });
      log.info(
        { scan_id: job.scan_id, status: record.status, devices: record.devices_found, ms: Date.now() - started, engine: engine.name },
        'scan results recorded',
      );
    } catch (err) {
      await reporter.stop();
      const aborted = err instanceof ScanAbortedError || abort.signal.aborted;
      const why = reason as StopReason | null;
      if (aborted && why === 'lost') {
        log.warn({ scan_id: job.scan_id }, 'scan stopped: the server ended it elsewhere');
      } else if (aborted && why === 'cancelled') {
        log.info({ scan_id: job.scan_id }, 'scan cancelled');
        await this.reportEnd(job.scan_id, 'cancelled', 'Cancelled');
      } else if (aborted) {
        const message =
          why === 'timeout'
            ? `Scan exceeded its time limit of ${Math.round(job.timeout_seconds / 60)} minutes (scanning.scan_timeout_minutes)`
            : 'Interrupted: the agent stopped while this scan was running';
        log.warn({ scan_id: job.scan_id, error: message }, 'scan stopped');
        await this.reportEnd(job.scan_id, 'failed', message);
      } else if (err instanceof AgentRequestError) {
        // The server refused the results for good (the scan ended meanwhile, or they were invalid).
        log.error({ scan_id: job.scan_id, err: describe(err) }, 'the server refused the results');
        if (err.status !== 409 && err.status !== 404) await this.reportEnd(job.scan_id, 'failed', `The server refused the results: ${err.detail}`);
      } else {
        const message = `Scan engine ${engine.name} failed: ${describe(err)}`;
        log.error({ scan_id: job.scan_id, error: message }, 'scan failed');
        await this.reportEnd(job.scan_id, 'failed', message);
      }
    } finally {
      clearTimeout(timer);
      shutdown.removeEventListener('abort', onShutdown);
    }
  }

  /** Why this agent will not run the job (outside its own scope, an engine it lacks), or null. */
  private refusal(job: AgentJob, engines: ScanEngineName[]): string | null {
    const target = parseIpv4Network(job.subnet);
    if (!target.ok) return `The agent cannot read the scan's target ${job.subnet}: ${target.error}`;
    const allow = this.options.scanAllow;
    if (allow && !allow.some((cidr) => withinCidr(target.value, cidr))) {
      return `${job.subnet} is outside the targets this agent may scan (NETWARDEN_SCAN_ALLOW on the agent's host: ${allow.join(', ')})`;
    }
    const wanted = this.engineFor(job, engines);
    if (!engines.includes(wanted)) {
      return wanted === 'nmap'
        ? 'scanning.engine is "nmap" but nmap is not installed on the agent\'s host; install it there, or set scanning.engine to auto or native'
        : `The agent was started with --engine ${this.options.engine}, which cannot run scans set to scanning.engine "${job.engine}"`;
    }
    return null;
  }

  /** The engine a job runs with: the server's scanning.engine when it names one, else --engine, else the best installed. */
  private engineFor(job: AgentJob, engines: ScanEngineName[]): ScanEngineName {
    if (job.engine !== 'auto') return job.engine;
    if (this.options.engine !== 'auto') return this.options.engine;
    return engines[0];
  }

  /** Discovery and the port scan, as the server runs them: overlapped for an engine that can (nmap), else one after the other. */
  private async scan(
    job: AgentJob,
    engine: ScanEngine,
    signal: AbortSignal,
    onProgress: (event: EngineProgress) => void,
  ): Promise<{ hosts: DiscoveredHost[]; ports: ScannedHost[] }> {
    const common = { privileged: hasRawSocketPrivilege(), resolveHostnames: job.resolve_hostnames, hostTimeoutSeconds: job.host_timeout_seconds };
    const discovery = { cidr: job.subnet, exclude: job.exclude, ...common, signal, onProgress };
    onProgress({ phase: 'discovery', percent: 0 });
    if (job.profile === 'quick' || job.ports === null) {
      const hosts = await engine.discover(discovery);
      onProgress({ phase: 'discovery', percent: 100, hostsFound: hosts.length, hostsDone: hosts.length });
      return { hosts, ports: [] };
    }
    const portRequest = { profile: job.profile, ports: job.ports, osDetection: job.os_detection, ...common };
    if (engine.concurrent) {
      const ports: ScannedHost[] = [];
      const hosts = await runPipeline({
        engine,
        discovery,
        ports: portRequest,
        expected: job.expected,
        // Kept in memory until the upload: the server records them as its own scans' (with name sources, identity, evaluation).
        recordDiscovery: async () => {},
        recordPorts: async (results) => {
          ports.push(...results);
        },
      });
      // Port results only of the hosts discovery found (the pipeline guarantees it; kept explicit).
      const live = new Set(hosts.map((h) => h.ip));
      return { hosts, ports: ports.filter((p) => live.has(p.ip)) };
    }
    const hosts = await engine.discover(discovery);
    onProgress({ phase: 'discovery', percent: 100, hostsFound: hosts.length, hostsDone: 0 });
    if (hosts.length === 0) return { hosts, ports: [] };
    const ports = await engine.scanPorts({ hosts: hosts.map((h) => h.ip), ...portRequest, signal, onProgress });
    return { hosts, ports };
  }

  /**
   * The recognition probes on every host the scan reached (a `normal` or `intensive` scan, as on
   * the server), unicast to each, each host within its time bound; a cancel stops them. Results by
   * address (only hosts that answered something).
   */
  private async probe(job: AgentJob, hosts: DiscoveredHost[], ports: ScannedHost[], signal: AbortSignal): Promise<Map<string, ProbeResults>> {
    const recognition = job.recognition;
    if (job.profile === 'quick' || job.ports === null || !recognition || recognition.probes.length === 0) return new Map();
    const scanned = new Map(ports.map((h) => [h.ip, h]));
    const reached = hosts.map((h) => scanned.get(h.ip) ?? { ip: h.ip, ports: [] });
    const started = Date.now();
    const results = await probeHosts(reached, recognition, signal, this.options.probeOptions);
    for (const [ip, r] of results) if (Object.keys(r).length === 0) results.delete(ip);
    this.options.log.info(
      { scan_id: job.scan_id, hosts: reached.length, answered: results.size, ms: Date.now() - started },
      'recognition probes done',
    );
    return results;
  }

  private async reportEnd(scanId: number, status: 'failed' | 'cancelled', error: string): Promise<void> {
    try {
      await this.options.client.end(scanId, { run_id: this.runId, status, error: error.slice(0, 2000) });
    } catch (err) {
      // The scan's lease runs out on the server and it ends as failed there anyway.
      this.options.log.warn({ scan_id: scanId, err: describe(err) }, 'could not report the end of a scan');
    }
  }
}

/**
 * Sends a running scan's progress: at most once per progressEveryMs when it changed, and every
 * heartbeatMs regardless (the scan's lease rides on it, and so does a cancel). One request at a
 * time; a failed one is simply followed by the next.
 */
class ProgressReporter {
  private timer: NodeJS.Timeout | null = null;
  private changed = true;
  private lastSent = 0;
  private inFlight: Promise<void> | null = null;

  constructor(
    private readonly send: (progress: ScanProgress) => Promise<'continue' | 'cancel' | 'drop'>,
    private readonly tracker: ProgressTracker,
    private readonly timing: { everyMs: number; heartbeatMs: number },
    private readonly onAnswer: (action: 'continue' | 'cancel' | 'drop') => void,
  ) {}

  start(): void {
    const { everyMs, heartbeatMs } = this.timing;
    this.timer = setInterval(
      () => {
        const since = Date.now() - this.lastSent;
        if ((this.changed && since >= everyMs) || since >= heartbeatMs) void this.once();
      },
      Math.min(everyMs, heartbeatMs),
    );
    this.timer.unref();
  }

  update(event: EngineProgress): void {
    this.tracker.update(event);
    this.changed = true;
  }

  /** Sends the current progress now (unless a report is on its way). */
  once(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    this.changed = false;
    this.lastSent = Date.now();
    this.inFlight = this.send(this.tracker.current)
      .then((action) => this.onAnswer(action))
      .catch(() => undefined)
      .finally(() => {
        this.inFlight = null;
      });
    return this.inFlight;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.inFlight;
  }
}

function withinCidr(network: Parameters<typeof networkWithin>[0], cidr: string): boolean {
  const outer = parseIpv4Network(cidr);
  return outer.ok && networkWithin(network, outer.value);
}

function cut(text: string | null | undefined, max: number): string | null {
  return text == null ? null : text.slice(0, max);
}

function uploadedHost(h: DiscoveredHost): AgentUpload['hosts'][number] {
  return { ip: h.ip, mac: h.mac, vendor: cut(h.vendor, MAX_TEXT.vendor), hostname: cut(cleanHostname(h.hostname), MAX_TEXT.hostname) };
}

function uploadedPort(p: ScannedPort): AgentUpload['ports'][number]['ports'][number] {
  return {
    port: p.port,
    protocol: p.protocol,
    state: p.state.slice(0, PORT_STATE_MAX_LENGTH),
    service: cut(p.service, MAX_TEXT.service),
    product: cut(p.product, MAX_TEXT.product),
    version: cut(p.version, MAX_TEXT.version),
    extra_info: cut(p.extra_info, MAX_TEXT.extra_info),
    cpe: p.cpe.slice(0, CPE_MAX_ITEMS).map((c) => c.slice(0, CPE_MAX_LENGTH)),
    ...(p.service_guessed !== undefined ? { service_guessed: p.service_guessed } : {}),
  };
}

function uploadedScan(h: ScannedHost, probes: ProbeResults | undefined): AgentUpload['ports'][number] {
  return {
    ...uploadedHost(h),
    os_name: cut(h.os_name, MAX_TEXT.os_name),
    device_type: cut(h.device_type, MAX_TEXT.device_type),
    ports: h.ports.map(uploadedPort),
    // The probes keep their answers within the bounds the upload allows (src/probes/).
    ...(probes ? { probes: uploadedProbes(probes) } : {}),
  };
}

/** Probe results as uploaded: nmap's OS matches stay out (the host's `os_name` carries the scan's own). */
function uploadedProbes({ nmapOs: _nmapOs, ...probes }: ProbeResults): NonNullable<AgentUpload['ports'][number]['probes']> {
  return probes;
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message} (${cause.message})` : err.message;
  }
  return String(err);
}
