/**
 * The native scan engine: everything nmap does for Netwarden's profiles that can be done without
 * nmap and without privileges. Host discovery by TCP connect probes plus the kernel neighbour
 * table, a connect port scan through a bounded socket pool with per-host adaptive timeouts, and
 * banner grabbing for service, product and version.
 */
import { Resolver } from 'node:dns/promises';
import { performance } from 'node:perf_hooks';
import { identifyService } from '../../core/banners.js';
import { parseCoverage } from '../../core/coverage.js';
import { DISCOVERY_PORTS, wellKnownService } from '../../core/ports.js';
import { type PortRange } from '../../core/net.js';
import { answeredUdpPort, silentUdpPort } from '../../core/udp-probes.js';
import { vendorForMac } from '../oui.js';
import { ScanAbortedError, type DiscoveryRequest, type EngineProgress, type PortScanRequest, type ScanEngine } from '../types.js';
import { type DiscoveredHost, type ScannedHost, type ScannedPort } from '../../core/model.js';
import { DEFAULT_BANNER_TIMEOUTS, collectEvidence, type BannerTimeouts } from './banners.js';
import { DEFAULT_PORT_TIMEOUTS, SocketRegistry, connectScan, runPool, type TimeoutPolicy } from './connect-pool.js';
import { discoverLiveHosts } from './discovery.js';
import { PROC_NET_ARP, readNeighbourStatus, readNeighbourTable, type NeighbourStatusReader } from './neighbours.js';
import { expandTargets } from './targets.js';
import { udpScan } from './udp.js';

export interface NativeEngineOptions {
  /** Where a progress listener's failure is reported (default: a process warning). */
  warn?: (context: Record<string, unknown>, message: string) => void;
  /** Sockets in flight at most, over all hosts (default 256). */
  maxSockets?: number;
  /** Ports probed for host discovery (default DISCOVERY_PORTS). */
  discoveryPorts?: readonly number[];
  /** Timeout of one discovery probe in ms before any host answered (default 1000). */
  discoveryTimeoutMs?: number;
  /** Lower bound of the adaptive discovery timeout, 4 × the largest RTT seen (default 500). */
  discoveryMinTimeoutMs?: number;
  /** Port-scan timeouts: initial, bounds and the RTT factor (default 1000 / 150–1500 / ×4). */
  portTimeouts?: Partial<TimeoutPolicy>;
  /** Second tries for ports that did not answer (default 1). */
  retries?: number;
  /** Filtered ports are listed only when a host has at most this many (default 20, as nmap). */
  filteredReportLimit?: number;
  /** Banner grabs in parallel (default 64). */
  bannerConcurrency?: number;
  bannerTimeouts?: Partial<BannerTimeouts>;
  /** UDP probes in flight at most (default 64); they run beside the TCP scan, in sockets of their own. */
  udpConcurrency?: number;
  /** How long one UDP try waits for an answer in ms (default 1000). */
  udpTimeoutMs?: number;
  /** UDP tries after the first for a silent port (default 1). */
  udpRetries?: number;
  /** The kernel neighbour table (default /proc/net/arp). */
  neighbourTablePath?: string;
  /** How often the neighbour table is read during discovery in ms (default 250). */
  neighbourPollMs?: number;
  /** Without iproute2: how long a neighbour entry older than the scan must survive to count, in ms (default 9000); see discovery.ts. */
  staleNeighbourVerifyMs?: number;
  /** With iproute2: how long at most to wait for the kernel to confirm or drop such an entry, in ms (default 60000). */
  neighbourRevalidateMaxMs?: number;
  /** How long after a silent host's first probe its ARP answer still counts, in ms (default 3500: the kernel's three requests a second apart); see discovery.ts. */
  neighbourResolveWaitMs?: number;
  /** The kernel's neighbour states and confirmation times (default: `ip -j -s -4 neigh show`, null without iproute2). */
  neighbourStatus?: NeighbourStatusReader;
  /** How often a host whose old neighbour entry is being settled is probed again, in ms (default 1000). */
  neighbourRevalidatePollMs?: number;
  /** Reverse DNS; defaults to node:dns with a short timeout. Used only when the request asks for hostnames. */
  reverseLookup?: (ip: string) => Promise<string[]>;
  /** Minimum interval between progress reports in ms (default 250). */
  progressIntervalMs?: number;
}

const FULL_RANGE: PortRange[] = [{ low: 1, high: 65535 }];

function expandPorts(ranges: PortRange[]): number[] {
  const ports: number[] = [];
  for (const r of ranges) for (let p = r.low; p <= r.high; p++) ports.push(p);
  return ports;
}

/** Calls `listener` at most every `intervalMs`, except for forced reports (phase start and end). */
function throttle(
  listener: (p: EngineProgress) => void,
  intervalMs: number,
  warn: NonNullable<NativeEngineOptions['warn']>,
): (p: EngineProgress, force?: boolean) => void {
  let last = -Infinity;
  return (p, force = false) => {
    const now = performance.now();
    if (!force && now - last < intervalMs) return;
    last = now;
    try {
      listener(p);
    } catch (err) {
      // A listener's failure is not the scan's: report it and carry on scanning.
      warn({ err, phase: p.phase }, 'a scan progress listener failed');
    }
  };
}

function eta(startedAt: number, fraction: number): number | null {
  if (fraction <= 0.02 || fraction >= 1) return fraction >= 1 ? 0 : null;
  const elapsed = (performance.now() - startedAt) / 1000;
  return Math.round((elapsed * (1 - fraction)) / fraction);
}

function percent(fraction: number): number {
  return Math.max(0, Math.min(100, Math.round(fraction * 1000) / 10));
}

export class NativeEngine implements ScanEngine {
  readonly name = 'native' as const;

  private readonly maxSockets: number;
  private readonly discoveryPorts: readonly number[];
  private readonly discoveryTimeoutMs: number;
  private readonly discoveryMinTimeoutMs: number;
  private readonly portTimeouts: TimeoutPolicy;
  private readonly retries: number;
  private readonly filteredReportLimit: number;
  private readonly bannerConcurrency: number;
  private readonly bannerTimeouts: BannerTimeouts;
  private readonly udpConcurrency: number;
  private readonly udpTimeoutMs: number;
  private readonly udpRetries: number;
  private readonly neighbourTablePath: string;
  private readonly neighbourPollMs: number;
  private readonly staleVerifyMs: number;
  private readonly revalidateMaxMs: number;
  private readonly resolveWaitMs: number;
  private readonly neighbourStatus: NeighbourStatusReader;
  private readonly revalidatePollMs: number;
  private readonly reverseLookup: ((ip: string) => Promise<string[]>) | null;
  private readonly progressIntervalMs: number;
  /** Connect RTT per host seen during discovery: the port scan's first timeout follows it. */
  private readonly knownRtt = new Map<string, number>();

  private readonly warn: NonNullable<NativeEngineOptions['warn']>;

  constructor(options: NativeEngineOptions = {}) {
    this.warn =
      options.warn ?? ((context, message) => process.emitWarning(`${message}: ${String((context.err as Error | undefined)?.message ?? '')}`));
    this.maxSockets = Math.max(1, Math.floor(options.maxSockets ?? 256));
    this.discoveryPorts = options.discoveryPorts ?? DISCOVERY_PORTS;
    this.discoveryTimeoutMs = options.discoveryTimeoutMs ?? 1000;
    this.discoveryMinTimeoutMs = options.discoveryMinTimeoutMs ?? 500;
    this.portTimeouts = { ...DEFAULT_PORT_TIMEOUTS, ...options.portTimeouts };
    this.retries = options.retries ?? 1;
    this.filteredReportLimit = options.filteredReportLimit ?? 20;
    this.bannerConcurrency = Math.max(1, options.bannerConcurrency ?? 64);
    this.bannerTimeouts = { ...DEFAULT_BANNER_TIMEOUTS, ...options.bannerTimeouts };
    this.udpConcurrency = Math.max(1, Math.floor(options.udpConcurrency ?? 64));
    this.udpTimeoutMs = Math.max(1, options.udpTimeoutMs ?? 1000);
    this.udpRetries = Math.max(0, Math.floor(options.udpRetries ?? 1));
    this.neighbourTablePath = options.neighbourTablePath ?? PROC_NET_ARP;
    this.neighbourPollMs = options.neighbourPollMs ?? 250;
    this.staleVerifyMs = options.staleNeighbourVerifyMs ?? 9000;
    this.revalidateMaxMs = options.neighbourRevalidateMaxMs ?? 60_000;
    this.resolveWaitMs = Math.max(0, options.neighbourResolveWaitMs ?? 3500);
    this.neighbourStatus = options.neighbourStatus ?? (() => readNeighbourStatus());
    this.revalidatePollMs = Math.max(50, options.neighbourRevalidatePollMs ?? 1000);
    this.reverseLookup = options.reverseLookup ?? null;
    this.progressIntervalMs = options.progressIntervalMs ?? 250;
  }

  async discover(request: DiscoveryRequest): Promise<DiscoveredHost[]> {
    if (request.signal.aborted) throw new ScanAbortedError();
    const addresses = expandTargets(request.cidr, request.exclude);
    const emit = throttle(request.onProgress, this.progressIntervalMs, this.warn);
    const startedAt = performance.now();
    const total = addresses.length;
    emit({ phase: 'discovery', percent: 0, hostsTotal: total, hostsFound: 0, hostsDone: 0, currentHost: null, etaSeconds: null }, true);

    this.knownRtt.clear();
    const registry = new SocketRegistry(request.signal);
    let live;
    try {
      live = await discoverLiveHosts(addresses, {
        ports: this.discoveryPorts,
        timeoutMs: this.discoveryTimeoutMs,
        minTimeoutMs: this.discoveryMinTimeoutMs,
        maxSockets: this.maxSockets,
        registry,
        neighbourTablePath: this.neighbourTablePath,
        neighbourPollMs: this.neighbourPollMs,
        staleVerifyMs: this.staleVerifyMs,
        neighbourStatus: this.neighbourStatus,
        revalidateMaxMs: this.revalidateMaxMs,
        resolveWaitMs: this.resolveWaitMs,
        revalidatePollMs: this.revalidatePollMs,
        onProgress: (hostsDone, hostsFound) => {
          const fraction = total === 0 ? 1 : hostsDone / total;
          emit({ phase: 'discovery', percent: percent(fraction), hostsTotal: total, hostsFound, hostsDone, etaSeconds: eta(startedAt, fraction) });
        },
      });
    } finally {
      // Nothing may outlive the call: after an error, sockets still in flight are destroyed too.
      registry.cancel();
      registry.dispose();
    }
    if (request.signal.aborted) throw new ScanAbortedError();

    for (const host of live) if (host.rttMs !== null) this.knownRtt.set(host.ip, host.rttMs);
    const hostnames = request.resolveHostnames
      ? await this.resolveAll(
          live.map((h) => h.ip),
          request.signal,
        )
      : new Map<string, string>();
    if (request.signal.aborted) throw new ScanAbortedError();

    emit({ phase: 'discovery', percent: 100, hostsTotal: total, hostsFound: live.length, hostsDone: total, currentHost: null, etaSeconds: 0 }, true);
    return live.map((h) => ({
      ip: h.ip,
      mac: h.mac,
      vendor: h.mac ? vendorForMac(h.mac) : null,
      hostname: hostnames.get(h.ip) ?? null,
    }));
  }

  async scanPorts(request: PortScanRequest): Promise<ScannedHost[]> {
    if (request.signal.aborted) throw new ScanAbortedError();
    const parsed = parseCoverage(request.ports);
    if (!parsed.ok) throw new Error(`Invalid port list '${request.ports}': ${parsed.error}`);
    const ports = expandPorts(request.profile === 'intensive' ? FULL_RANGE : parsed.value.tcp);
    const udpPorts = expandPorts(parsed.value.udp);
    const hosts = [...new Set(request.hosts)];
    const emit = throttle(request.onProgress, this.progressIntervalMs, this.warn);
    const registry = new SocketRegistry(request.signal);
    // The UDP probes stop with the scan, and when the call ends early (an error of the TCP scan).
    const udpStop = new AbortController();
    const stopUdp = (): void => udpStop.abort();
    request.signal.addEventListener('abort', stopUdp, { once: true });
    try {
      // Ports.
      const portsStarted = performance.now();
      emit(
        {
          phase: 'ports',
          percent: 0,
          hostsTotal: hosts.length,
          hostsFound: hosts.length,
          hostsDone: 0,
          currentHost: hosts.length === 1 ? hosts[0] : null,
          etaSeconds: null,
        },
        true,
      );
      // UDP beside TCP: its silent ports wait out their timeouts while the TCP scan and banner grabs run.
      const udp = udpScan(hosts, udpPorts, {
        concurrency: this.udpConcurrency,
        timeoutMs: this.udpTimeoutMs,
        retries: this.udpRetries,
        signal: udpStop.signal,
      });
      // Awaited after the banner grabs; an error before then must not go unhandled.
      udp.catch(() => undefined);
      const results = await connectScan(hosts, ports, {
        maxSockets: this.maxSockets,
        timeouts: this.portTimeouts,
        registry,
        knownRtt: this.knownRtt,
        hostTimeoutMs: request.hostTimeoutSeconds > 0 ? request.hostTimeoutSeconds * 1000 : undefined,
        retries: this.retries,
        onProgress: (done, total) => {
          const fraction = total === 0 ? 1 : done / total;
          emit({
            phase: 'ports',
            percent: percent(fraction),
            hostsTotal: hosts.length,
            hostsFound: hosts.length,
            // Hosts count as done once their services are read too (below), so the count only goes up.
            etaSeconds: eta(portsStarted, fraction),
          });
        },
      });
      if (registry.cancelled || request.signal.aborted) throw new ScanAbortedError();
      // A host without an open port is done; the others once each open port's service is read.
      const openLeft = new Map(results.filter((r) => r.open.length > 0).map((r) => [r.host, r.open.length]));
      let hostsDone = hosts.length - openLeft.size;
      emit({ phase: 'ports', percent: 100, hostsTotal: hosts.length, hostsFound: hosts.length, hostsDone, etaSeconds: 0 }, true);

      // Services.
      const servicesStarted = performance.now();
      const jobs = results.flatMap((r) => r.open.map((port) => ({ host: r.host, port })));
      const services = new Map<string, ScannedPort>();
      let done = 0;
      emit({ phase: 'services', percent: 0, hostsTotal: hosts.length, hostsFound: hosts.length, hostsDone, etaSeconds: null }, true);
      await runPool(
        jobs,
        this.bannerConcurrency,
        async ({ host, port }) => {
          const evidence = await collectEvidence(host, port, registry, this.bannerTimeouts);
          const info = identifyService(evidence);
          services.set(`${host}:${port}`, { port, protocol: 'tcp', state: 'open', ...info });
          done += 1;
          const left = (openLeft.get(host) ?? 1) - 1;
          openLeft.set(host, left);
          if (left === 0) hostsDone += 1;
          const fraction = jobs.length === 0 ? 1 : done / jobs.length;
          emit({
            phase: 'services',
            percent: percent(fraction),
            hostsTotal: hosts.length,
            hostsFound: hosts.length,
            hostsDone,
            currentHost: host,
            etaSeconds: eta(servicesStarted, fraction),
          });
        },
        () => registry.cancelled,
      );
      if (registry.cancelled || request.signal.aborted) throw new ScanAbortedError();
      // The UDP probes ran through the TCP port scan and the banner grabs; their silent ports wait out their timeouts here at the latest.
      const udpResults = new Map((await udp).map((r) => [r.host, r]));
      if (request.signal.aborted) throw new ScanAbortedError();

      const neighbours = await readNeighbourTable(this.neighbourTablePath);
      const hostnames = request.resolveHostnames ? await this.resolveAll(hosts, request.signal) : new Map<string, string>();
      if (request.signal.aborted) throw new ScanAbortedError();
      emit(
        {
          phase: 'services',
          percent: 100,
          hostsTotal: hosts.length,
          hostsFound: hosts.length,
          hostsDone: hosts.length,
          currentHost: null,
          etaSeconds: 0,
        },
        true,
      );

      return results.map((r) => {
        const mac = neighbours.get(r.host)?.mac ?? null;
        const list: ScannedPort[] = r.open.map(
          (port) =>
            services.get(`${r.host}:${port}`) ?? {
              port,
              protocol: 'tcp',
              state: 'open',
              service: wellKnownService(port),
              product: null,
              version: null,
              extra_info: null,
              cpe: [],
              ...(wellKnownService(port) !== null ? { service_guessed: true } : {}),
            },
        );
        if (r.filtered.length > 0 && r.filtered.length <= this.filteredReportLimit) {
          for (const port of r.filtered) {
            list.push({
              port,
              protocol: 'tcp',
              state: 'filtered',
              service: wellKnownService(port),
              product: null,
              version: null,
              extra_info: null,
              cpe: [],
            });
          }
        }
        const u = udpResults.get(r.host);
        if (u) {
          for (const [port, reply] of u.open) list.push(answeredUdpPort(port, reply));
          if (u.silent.length <= this.filteredReportLimit) for (const port of u.silent) list.push(silentUdpPort(port));
        }
        list.sort((a, b) => a.protocol.localeCompare(b.protocol) || a.port - b.port);
        return {
          ip: r.host,
          mac,
          vendor: mac ? vendorForMac(mac) : null,
          hostname: hostnames.get(r.host) ?? null,
          os_name: null,
          device_type: null,
          ports: list,
        };
      });
    } finally {
      // Nothing may outlive the call: after an error, sockets still in flight are destroyed too.
      registry.cancel();
      registry.dispose();
      request.signal.removeEventListener('abort', stopUdp);
      udpStop.abort();
    }
  }

  /** Reverse DNS names, a few lookups at a time, each bounded by a short timeout. */
  private async resolveAll(ips: string[], signal: AbortSignal): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    const resolver = this.reverseLookup ? null : new Resolver({ timeout: 1500, tries: 1 });
    const lookup = this.reverseLookup ?? ((ip: string) => (resolver as Resolver).reverse(ip));
    const onAbort = (): void => resolver?.cancel();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await runPool(
        ips,
        16,
        async (ip) => {
          try {
            const [name] = await lookup(ip);
            if (name) names.set(ip, name.replace(/\.$/, ''));
          } catch {
            // No PTR record (or no resolver) is the common case, not a failure: the host has no name.
          }
        },
        () => signal.aborted,
      );
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    return names;
  }
}
