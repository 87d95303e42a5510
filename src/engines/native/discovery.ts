/**
 * Host discovery without privileges: TCP connect probes to a handful of common ports (any answer,
 * a connection or a refusal, means the host is up) plus the kernel neighbour table (a host on the
 * local segment that answered ARP is up even when every probed port is filtered, also when its
 * ARP answer arrives only after its probes gave up: see resolveWaitMs).
 *
 * A neighbour entry proves life only when it is news: it appeared, or changed MAC, during the scan,
 * or the kernel confirmed it again after the host was first probed. An entry already complete
 * before the scan may be the leftover of a host that has gone (unplugged, or moved to another
 * address keeping its MAC): the kernel keeps an entry REACHABLE for up to 1.5 × base_reachable_time
 * (45 s by default) after its last confirmation whatever happened since, and re-checks it only when
 * traffic is sent after that (stale → delay 5 s → 3 unicast probes → failed). So such entries are
 * settled after the probes: their hosts are probed again every second until the kernel has either
 * confirmed the entry anew (visible through iproute2, `ip -s neigh`: up) or dropped it; then the
 * address is resolved afresh and whoever answers now is up (another host may have taken the
 * address, as when two hosts swap addresses), else it is down. Without iproute2 a confirmation cannot be seen; then an entry that survived `staleVerifyMs`
 * counts, as weaker evidence (`cache`), and such a host is left out when its MAC answered a probe
 * at another address (the old address of a host that moved): the engine does not report one MAC
 * twice where it can tell which address is real. Identity resolution copes with the rest
 * (src/core/identity.ts).
 */
import { performance } from 'node:perf_hooks';
import { RttTracker, probeTcp, probeWithRetry, runPool, type SocketRegistry } from './connect-pool.js';
import { readNeighbourTable, type NeighbourEntry, type NeighbourStatus, type NeighbourStatusReader } from './neighbours.js';

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
  /** The kernel's state and last confirmation of each entry (iproute2); null when it cannot be read. */
  neighbourStatus: NeighbourStatusReader;
  /**
   * When the entry's confirmations cannot be seen: an entry that was complete before the scan
   * counts once it survived this long since the host's first probe (the kernel drops the entry of
   * a host that has gone within about 8 s of traffic, once the entry is stale).
   */
  staleVerifyMs: number;
  /**
   * How long after a host's first probe the kernel may still be resolving its address (ARP: three
   * requests one second apart). A host whose probes all timed out meanwhile is waited for up to
   * then: its ARP answer may come after the probes gave up, as when it just joined the segment and
   * the first request was lost. With iproute2 the wait ends as soon as no such address is still
   * INCOMPLETE.
   */
  resolveWaitMs: number;
  /** When they can: how long at most, from the host's first probe, to wait for the kernel to confirm or drop the entry. */
  revalidateMaxMs: number;
  /** How often a host whose entry is being settled is probed again (traffic makes the kernel re-check the entry). */
  revalidatePollMs: number;
  onProgress: (hostsDone: number, hostsFound: number, hostsTotal: number) => void;
}

export interface LiveHost {
  ip: string;
  /** Smallest connect RTT seen, null when found through the neighbour table alone. */
  rttMs: number | null;
  mac: string | null;
  /**
   * tcp: answered a probe. arp: its neighbour entry is news (new, changed or confirmed again during
   * the scan). cache: only an entry older than the scan that survived staleVerifyMs.
   */
  via: Evidence;
}

type Evidence = 'tcp' | 'arp' | 'cache';

interface HostState {
  ip: string;
  up: boolean;
  via: Evidence | null;
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
  const markUp = (s: HostState, via: Evidence, rttMs: number | null): void => {
    if (rttMs !== null) s.rttMs = s.rttMs === null ? rttMs : Math.min(s.rttMs, rttMs);
    if (s.up) return;
    s.up = true;
    s.via = via;
    hostsFound += 1;
    // One answer is enough: the other probes of this host are no longer needed.
    finishHost(s);
    report();
  };

  /** An entry that was not complete before the scan, or had another MAC then, is news. */
  const isNews = (entry: NeighbourEntry): boolean => before.get(entry.ip)?.mac !== entry.mac;

  // Adaptive probe timeout over the whole target: hosts of one network have similar round trips.
  const rtt = new RttTracker({
    initialMs: options.timeoutMs,
    minMs: Math.min(options.minTimeoutMs, options.timeoutMs),
    maxMs: options.timeoutMs,
    rttFactor: 4,
  });

  let latest = before;
  const checkNeighbours = async (): Promise<void> => {
    latest = await readNeighbourTable(options.neighbourTablePath);
    for (const [ip, entry] of latest) {
      const s = states.get(ip);
      if (s && !s.up && s.firstProbeAt !== null && isNews(entry)) markUp(s, 'arp', null);
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

  // Hosts whose probes all went unanswered: a late ARP answer still counts, and an entry from
  // before the scan is settled with the kernel.
  await checkNeighbours();
  await awaitResolutions();
  const pending = [...states.values()].filter((s) => !s.up && s.firstProbeAt !== null && before.has(s.ip));
  await settle(pending);
  if (registry.cancelled) return [];
  for (const s of states.values()) finishHost(s);
  report();

  const live: LiveHost[] = [];
  for (const s of states.values()) {
    if (!s.up || s.via === null) continue;
    const entry = targets.has(s.ip) ? latest.get(s.ip) : undefined;
    live.push({ ip: s.ip, rttMs: s.rttMs, mac: entry?.mac ?? null, via: s.via });
  }
  return withoutCachedDuplicates(live);

  /**
   * Waits for the addresses the kernel may still be resolving: each unanswered host without an
   * entry before the scan, until resolveWaitMs after its first probe, or until iproute2 shows none
   * of them INCOMPLETE any more. An entry that completes meanwhile is news: that host is up.
   */
  async function awaitResolutions(): Promise<void> {
    let waiting = [...states.values()].filter((s) => !s.up && s.firstProbeAt !== null && !before.has(s.ip));
    if (waiting.length === 0) return;
    const deadline = Math.max(...waiting.map((s) => s.firstProbeAt as number)) + options.resolveWaitMs;
    while (!registry.cancelled && performance.now() < deadline) {
      const status = await options.neighbourStatus();
      if (status !== null && !waiting.some((s) => status.get(s.ip)?.states.includes('INCOMPLETE'))) return;
      await sleep(Math.min(options.neighbourPollMs, Math.max(0, deadline - performance.now())), () => registry.cancelled);
      await checkNeighbours();
      waiting = waiting.filter((s) => !s.up);
      if (waiting.length === 0) return;
    }
  }

  /**
   * Decides each host that answered no probe but had a neighbour entry before the scan: probes it
   * again every revalidatePollMs until the kernel has confirmed the entry anew (up), or dropped it
   * and found nobody when resolving the address afresh (down: the host left; when another host took
   * the address, as when two hosts swap addresses, the fresh resolution finds it: up), or the time
   * allowed ran out (down: nothing new was heard from it).
   */
  async function settle(hosts: HostState[]): Promise<void> {
    if (hosts.length === 0) return;
    const open = new Set(hosts);
    // When each host's old entry was seen gone; a new entry after that is a fresh resolution.
    const droppedAt = new Map<HostState, number>();
    const reResolveMs = 4 * options.revalidatePollMs;
    let readAt = performance.now();
    let status = await options.neighbourStatus();
    const seenStatus = status !== null;
    while (open.size > 0 && !registry.cancelled) {
      for (const s of open) {
        const entry = latest.get(s.ip);
        const since = readAt - (s.firstProbeAt as number);
        let verdict: Evidence | 'up' | 'down' | 'pending';
        if (s.up) verdict = 'up';
        else if (!entry) {
          const dropped = droppedAt.get(s) ?? droppedAt.set(s, readAt).get(s)!;
          verdict = readAt - dropped >= reResolveMs ? 'down' : 'pending';
        } else if (droppedAt.has(s) || isNews(entry)) verdict = 'arp';
        else verdict = judgeOld(status?.get(s.ip), since, seenStatus);
        if (verdict === 'pending') continue;
        if (verdict === 'arp' || verdict === 'cache') markUp(s, verdict, null);
        open.delete(s);
      }
      if (open.size === 0) break;
      const port = options.ports[0];
      const probes =
        port === undefined
          ? []
          : [...open].map(async (s) => {
              const r = await probeTcp(s.ip, port, { timeoutMs: Math.max(50, options.revalidatePollMs - 50), registry });
              if (r.state === 'open' || r.state === 'closed') markUp(s, 'tcp', r.rttMs);
            });
      await sleep(options.revalidatePollMs, () => registry.cancelled);
      await Promise.all(probes);
      latest = await readNeighbourTable(options.neighbourTablePath);
      readAt = performance.now();
      // A failed read mid-way leaves nothing to judge a confirmation by: those hosts run out of time.
      if (seenStatus) status = (await options.neighbourStatus()) ?? new Map();
    }
  }

  /** The verdict on a complete entry older than the scan, `since` ms after the host's first probe. */
  function judgeOld(entry: NeighbourStatus | undefined, since: number, seenStatus: boolean): Evidence | 'down' | 'pending' {
    if (!seenStatus || (!entry && since >= options.staleVerifyMs)) {
      // No way to see confirmations (or the kernel does not list the entry): survival is the evidence.
      return since >= options.staleVerifyMs ? 'cache' : 'pending';
    }
    if (entry && entry.states.some((s) => s === 'PERMANENT' || s === 'NOARP')) return 'down'; // configured, never checked
    // Ages are whole seconds, rounded down: a confirmation after the first probe for certain.
    if (entry?.confirmedSecondsAgo != null && (entry.confirmedSecondsAgo + 1) * 1000 <= since) return 'arp';
    return since >= options.revalidateMaxMs ? 'down' : 'pending';
  }
}

/**
 * One MAC at several addresses: an address known only from an old neighbour entry is dropped when
 * the MAC answered at another address (typically the address a host had before it moved).
 */
export function withoutCachedDuplicates(live: LiveHost[]): LiveHost[] {
  const answered = new Set(live.filter((h) => h.mac && h.via !== 'cache').map((h) => h.mac));
  return live.filter((h) => !(h.via === 'cache' && h.mac && answered.has(h.mac)));
}
