/**
 * Host discovery without privileges: TCP connect probes to a handful of common ports (any answer,
 * a connection or a refusal, means the host is up) plus the kernel neighbour table (a host on the
 * local segment that answered ARP is up even when every probed port is filtered).
 */
import { performance } from 'node:perf_hooks';
import { RttTracker, probeWithRetry, runPool, type SocketRegistry } from './connect-pool.js';
import { readNeighbourTable, type NeighbourEntry } from './neighbours.js';

/** Ports most devices answer on (open or refused): web, SSH, SMB, RDP, DNS, iOS lockdown, alt-web. */
export const DISCOVERY_PORTS: readonly number[] = [80, 443, 22, 445, 139, 3389, 8080, 53, 62078, 8443];

export interface DiscoveryOptions {
  ports: readonly number[];
  /** Timeout of a probe until answers were seen; then 4 × the largest RTT seen, within [minTimeoutMs, timeoutMs]. */
  timeoutMs: number;
  minTimeoutMs: number;
  maxSockets: number;
  registry: SocketRegistry;
  neighbourTablePath: string;
  /** How often the neighbour table is read while probes run. */
  neighbourPollMs: number;
  /**
   * A neighbour entry that was already complete before the scan may be a stale leftover of a host
   * that has gone. The kernel re-validates it once traffic is sent (stale → delay 5 s → 3 unicast
   * probes → failed), so such an entry counts only after this long since the host's first probe.
   */
  staleVerifyMs: number;
  onProgress: (hostsDone: number, hostsFound: number, hostsTotal: number) => void;
}

export interface LiveHost {
  ip: string;
  /** Smallest connect RTT seen, null when found through the neighbour table alone. */
  rttMs: number | null;
  mac: string | null;
  via: 'tcp' | 'arp';
}

interface HostState {
  ip: string;
  up: boolean;
  via: 'tcp' | 'arp' | null;
  rttMs: number | null;
  firstProbeAt: number | null;
  completed: number;
  finished: boolean;
  registry: SocketRegistry | null;
}

/** Waits `ms`, or less when `stop()` becomes true (checked every 25 ms). */
const sleep = (ms: number, stop: () => boolean): Promise<void> =>
  new Promise((resolve) => {
    const started = performance.now();
    const tick = (): void => {
      const left = ms - (performance.now() - started);
      if (stop() || left <= 0) resolve();
      else setTimeout(tick, Math.min(left, 25));
    };
    tick();
  });

export async function discoverLiveHosts(addresses: readonly string[], options: DiscoveryOptions): Promise<LiveHost[]> {
  const { registry } = options;
  const targets = new Set(addresses);
  const before = await readNeighbourTable(options.neighbourTablePath);
  const states = new Map<string, HostState>();
  for (const ip of addresses) {
    states.set(ip, { ip, up: false, via: null, rttMs: null, firstProbeAt: null, completed: 0, finished: false, registry: null });
  }
  let hostsDone = 0;
  let hostsFound = 0;
  const report = (): void => options.onProgress(hostsDone, hostsFound, addresses.length);

  const finishHost = (s: HostState): void => {
    if (s.finished) return;
    s.finished = true;
    hostsDone += 1;
    s.registry?.cancel();
    s.registry?.dispose();
    s.registry = null;
  };
  const markUp = (s: HostState, via: 'tcp' | 'arp', rttMs: number | null): void => {
    if (rttMs !== null) s.rttMs = s.rttMs === null ? rttMs : Math.min(s.rttMs, rttMs);
    if (s.up) return;
    s.up = true;
    s.via = via;
    hostsFound += 1;
    // One answer is enough: the other probes of this host are no longer needed.
    finishHost(s);
    report();
  };

  /** A complete neighbour entry is proof of life when it appeared during the scan or survived re-validation. */
  const arpProves = (s: HostState, entry: NeighbourEntry | undefined, now: number): boolean => {
    if (!entry) return false;
    const previous = before.get(s.ip);
    if (!previous || previous.mac !== entry.mac) return true;
    return s.firstProbeAt !== null && now - s.firstProbeAt >= options.staleVerifyMs;
  };

  // Adaptive probe timeout over the whole target: hosts of one network have similar round trips.
  const rtt = new RttTracker({ initialMs: options.timeoutMs, minMs: Math.min(options.minTimeoutMs, options.timeoutMs), maxMs: options.timeoutMs, rttFactor: 4 });

  let latest = before;
  const checkNeighbours = async (): Promise<void> => {
    latest = await readNeighbourTable(options.neighbourTablePath);
    const now = performance.now();
    for (const [ip, entry] of latest) {
      const s = states.get(ip);
      if (s && !s.up && s.firstProbeAt !== null && arpProves(s, entry, now)) markUp(s, 'arp', null);
    }
  };

  // Poll the neighbour table while probes run.
  let polling = true;
  const poller = (async () => {
    while (polling && !registry.cancelled) {
      await sleep(options.neighbourPollMs, () => !polling || registry.cancelled);
      if (polling && !registry.cancelled) await checkNeighbours();
    }
  })();

  function* jobs(): Generator<[HostState, number]> {
    for (const s of states.values()) {
      for (const port of options.ports) {
        if (s.up || s.finished) break;
        yield [s, port];
      }
    }
  }

  try {
    await runPool(
      jobs(),
      options.maxSockets,
      async ([s, port]) => {
        if (s.up || s.finished) return;
        s.firstProbeAt ??= performance.now();
        s.registry ??= registry.child();
        const r = await probeWithRetry(s.ip, port, { timeoutMs: rtt.timeoutMs(), registry: s.registry });
        s.completed += 1;
        rtt.observe(r.rttMs);
        if (r.state === 'open' || r.state === 'closed') markUp(s, 'tcp', r.rttMs);
        else if (s.completed === options.ports.length && !s.finished) {
          finishHost(s);
          report();
        }
      },
      () => registry.cancelled,
    );
  } finally {
    polling = false;
    await poller;
  }
  if (registry.cancelled) return [];

  // Hosts whose probes all went unanswered: still up if the neighbour table proves it. A pre-existing
  // entry needs re-validation time; wait for it (bounded by staleVerifyMs) only when such hosts exist.
  await checkNeighbours();
  const candidates = [...states.values()].filter((s) => !s.up && latest.has(s.ip) && before.has(s.ip) && s.firstProbeAt !== null);
  if (candidates.length > 0) {
    const newest = candidates.reduce((max, s) => Math.max(max, s.firstProbeAt as number), 0);
    const wait = options.staleVerifyMs - (performance.now() - newest);
    if (wait > 0) await sleep(wait + 250, () => registry.cancelled);
    if (registry.cancelled) return [];
    await checkNeighbours();
  }
  for (const s of states.values()) finishHost(s);
  report();

  const live: LiveHost[] = [];
  for (const s of states.values()) {
    if (!s.up || s.via === null) continue;
    const entry = targets.has(s.ip) ? latest.get(s.ip) : undefined;
    live.push({ ip: s.ip, rttMs: s.rttMs, mac: entry?.mac ?? null, via: s.via });
  }
  return live;
}
