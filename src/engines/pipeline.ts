/**
 * Discovery and the port scan of a scan, overlapped, for engines that can run them at the same
 * time (ScanEngine.concurrent). Without it a scan waits for discovery to end before port-scanning
 * a single host; with it:
 *
 * - the hosts online in the previous scan (inside the target) are port-scanned from the start,
 *   next to discovery, with `verifyUp`: the engine checks each still answers before probing its
 *   ports, so a host gone since costs its ping, not a scan of every port;
 * - hosts discovery reports that are not in that run are port-scanned as soon as it reports
 *   them, in runs of their own, while discovery goes on;
 * - discovery's hosts are recorded (identity, device ids) while the port scans run, and each port
 *   run's results are written as that run ends, while the others still run.
 *
 * What is recorded is exactly what one discovery followed by one port scan of its hosts records:
 * discovery's list alone decides which hosts the scan saw; port results of a host discovery did
 * not find are dropped; a host discovery found that the early run did not find up is scanned in
 * a run of its own. Every host discovery found is port-scanned once.
 *
 * Any run failing stops the others (their processes are killed) and fails the scan with the first
 * error; cancelling (the request's signal) stops them all.
 */
import type { DiscoveredHost, ScannedHost } from '../core/model.js';
import {
  ScanAbortedError,
  type DiscoveryRequest,
  type EngineProgress,
  type PortScanRequest,
  type ProcessListener,
  type ScanEngine,
} from './types.js';

/** Port runs at most at once; hosts reported while this many run wait for one to end. */
const MAX_PORT_RUNS = 4;
/**
 * How long hosts discovery reports are gathered before a port run starts for them: nmap writes a
 * whole ping group at once, but it may reach us in several reads, and they belong in one run.
 */
const GATHER_MS = 100;

export interface PipelineInput {
  engine: ScanEngine;
  discovery: DiscoveryRequest;
  /** Everything of a port-scan request but its hosts; its signal, onProgress and onProcess are discovery's. */
  ports: Omit<PortScanRequest, 'hosts' | 'verifyUp' | 'signal' | 'onProgress' | 'onProcess'>;
  /** Hosts thought to be up (online after the previous scan), port-scanned from the start. */
  expected: string[];
  /** Records discovery's hosts; runs while port scans go on, and before any recordPorts. */
  recordDiscovery(live: DiscoveredHost[]): Promise<void>;
  /** Records port results, only ever of hosts discovery found; once per port run, one call at a time. */
  recordPorts(results: ScannedHost[]): Promise<void>;
  /**
   * Told every process group running at once (newest last) whenever that changes, so a crash
   * recovery can end them all. Without it discovery's onProcess is told the newest.
   */
  onProcessGroups?: (live: readonly number[]) => void;
}

/** Runs discovery and the port scans overlapped; resolves to discovery's hosts once everything is recorded. */
export async function runPipeline(input: PipelineInput): Promise<DiscoveredHost[]> {
  return new Pipeline(input).run();
}

class Pipeline {
  /** Aborted by the scan's signal or by the first failure: stops every run. */
  private readonly stop = new AbortController();
  private readonly signal: AbortSignal;
  private failure: { error: unknown } | null = null;
  private readonly processes: ProcessGroups;
  private readonly progress: PortProgress;

  /** Hosts given to a port run, or waiting for one. */
  private readonly scheduled = new Set<string>();
  private readonly waiting: string[] = [];
  /** Hosts of the run of expected hosts not yet known to be covered by it. */
  private readonly expected: Set<string>;
  private readonly upInExpectedRun = new Set<string>();
  private expectedRunDone: boolean;
  private portRuns = 0;
  private gathering: NodeJS.Timeout | null = null;
  /** Discovery and the port runs not yet ended. */
  private outstanding = 0;

  private live: DiscoveredHost[] | null = null;
  private liveIps = new Set<string>();
  /** Settles once discovery's hosts are recorded (rejects when the pipeline stops first). */
  private readonly recorded = deferred();
  /** The store writes, one after another. */
  private writes: Promise<void> = Promise.resolve();
  /** Port results waiting for discovery's hosts to be recorded before they are queued. */
  private readonly portWrites: Promise<void>[] = [];
  private readonly ended = deferred();

  constructor(private readonly input: PipelineInput) {
    this.signal = AbortSignal.any([input.discovery.signal, this.stop.signal]);
    this.processes = new ProcessGroups(input.onProcessGroups ?? ((live) => input.discovery.onProcess?.(live.at(-1) ?? null)));
    this.progress = new PortProgress(input.discovery.onProgress);
    this.expected = new Set(input.expected);
    this.expectedRunDone = this.expected.size === 0;
    this.recorded.promise.catch(() => undefined);
  }

  async run(): Promise<DiscoveredHost[]> {
    if (this.signal.aborted) throw new ScanAbortedError();
    if (this.expected.size > 0) {
      for (const ip of this.expected) this.scheduled.add(ip);
      this.startPortRun([...this.expected], true);
    }
    this.outstanding++;
    this.input.engine
      .discover({
        ...this.input.discovery,
        signal: this.signal,
        onProcess: this.processes.listener(),
        onProgress: (event) => this.progress.discovery(event),
        onHostUp: (ip) => this.reported(ip),
      })
      .then((live) => this.discovered(live))
      .catch((err) => this.fail(err))
      .finally(() => this.runEnded());
    await this.ended.promise;
    // Every run has ended; the last writes may still be going.
    await Promise.allSettled(this.portWrites);
    await this.writes;
    if (this.failure) throw this.failure.error;
    if (this.signal.aborted) throw new ScanAbortedError();
    return this.live ?? [];
  }

  private discovered(live: DiscoveredHost[]): void {
    if (this.gathering) clearTimeout(this.gathering);
    this.gathering = null;
    this.live = live;
    this.liveIps = new Set(live.map((h) => h.ip));
    this.progress.discoveryEnded(live.length);
    this.write(() => this.input.recordDiscovery(live)).then(this.recorded.resolve, this.recorded.reject);
    // The streamed reports were a head start; discovery's list is what counts.
    for (const host of live) this.schedule(host.ip);
    this.rescheduleMissed();
    this.pump();
  }

  /** A host discovery reported: port-scanned (after GATHER_MS, with the others reported by then) unless a run already has it. */
  private reported(ip: string): void {
    if (!this.schedule(ip)) return;
    this.gathering ??= setTimeout(() => {
      this.gathering = null;
      this.pump();
    }, GATHER_MS);
  }

  /** Puts a host discovery found among those waiting for a port run, unless a run already has it; the caller pumps. */
  private schedule(ip: string): boolean {
    if (this.scheduled.has(ip)) return false;
    this.scheduled.add(ip);
    this.waiting.push(ip);
    return true;
  }

  /** Hosts discovery found that the run of expected hosts did not find up: scanned in a run of their own. */
  private rescheduleMissed(): void {
    if (!this.live || !this.expectedRunDone) return;
    for (const ip of this.expected) {
      if (this.liveIps.has(ip) && !this.upInExpectedRun.has(ip)) this.waiting.push(ip);
    }
    this.expected.clear();
    this.pump();
  }

  /** Starts a port run of the waiting hosts when one may start. */
  private pump(): void {
    if (this.signal.aborted) this.waiting.length = 0;
    if (this.waiting.length > 0 && this.portRuns < MAX_PORT_RUNS) this.startPortRun(this.waiting.splice(0), false);
  }

  private startPortRun(hosts: string[], verifyUp: boolean): void {
    this.portRuns++;
    this.outstanding++;
    this.progress.addHosts(hosts.length);
    this.input.engine
      .scanPorts({
        ...this.input.ports,
        hosts,
        verifyUp,
        signal: this.signal,
        onProcess: this.processes.listener(),
        onProgress: this.progress.portRun(),
      })
      .then((results) => {
        if (verifyUp) for (const h of results) this.upInExpectedRun.add(h.ip);
        if (results.length > 0) this.writePorts(results);
      })
      .catch((err) => this.fail(err))
      .finally(() => {
        this.portRuns--;
        if (verifyUp) {
          this.expectedRunDone = true;
          this.rescheduleMissed();
        }
        this.pump();
        this.runEnded();
      });
  }

  private runEnded(): void {
    this.outstanding--;
    if (this.outstanding === 0 && this.waiting.length === 0) this.ended.resolve();
  }

  /** Writes the port results of the hosts discovery found, once discovery's hosts are recorded. */
  private writePorts(results: ScannedHost[]): void {
    // Not queued before that: recordDiscovery may itself still wait in the queue.
    this.portWrites.push(
      this.recorded.promise.then(
        () => {
          const found = results.filter((h) => this.liveIps.has(h.ip));
          return found.length > 0 ? this.write(() => this.input.recordPorts(found)) : undefined;
        },
        () => undefined,
      ),
    );
  }

  /** Queues a store write after the previous ones; a failed write fails the scan. */
  private write(task: () => Promise<void>): Promise<void> {
    const next = this.writes.then(() => {
      if (this.signal.aborted) throw new ScanAbortedError();
      return task();
    });
    this.writes = next.catch((err) => this.fail(err));
    return next;
  }

  private fail(error: unknown): void {
    // A run stopped by cancelling, or by another run's failure, is not a failure of its own.
    if (!(error instanceof ScanAbortedError) && !this.failure) this.failure = { error };
    this.recorded.reject(new ScanAbortedError());
    this.stop.abort();
    this.waiting.length = 0;
    if (this.gathering) clearTimeout(this.gathering);
    this.gathering = null;
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (err: unknown) => void } {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** The process groups of the engine's runs, told as one list (newest last) whenever it changes. */
class ProcessGroups {
  private readonly live: number[] = [];

  constructor(private readonly onChange: (live: readonly number[]) => void) {}

  /** A listener for one engine call: its start and end. */
  listener(): ProcessListener {
    let mine: number | null = null;
    return (pgid) => {
      if (pgid !== null) {
        mine = pgid;
        this.live.push(pgid);
      } else if (mine !== null) {
        this.live.splice(this.live.indexOf(mine), 1);
        mine = null;
      }
      this.onChange([...this.live]);
    };
  }
}

/**
 * Progress of overlapping runs as one bar: discovery's events while it runs; then the port runs',
 * with hosts done and hosts total counted over all of them.
 */
class PortProgress {
  private discovering = true;
  private hostsTotal = 0;
  private hostsDoneBefore = 0;

  constructor(private readonly onProgress: (event: EngineProgress) => void) {}

  discovery(event: EngineProgress): void {
    if (this.discovering) this.onProgress(event);
  }

  addHosts(n: number): void {
    this.hostsTotal += n;
  }

  /** A progress listener for one port run. */
  portRun(): (event: EngineProgress) => void {
    let done = 0;
    return (event) => {
      if (event.hostsDone !== undefined && event.hostsDone > done) {
        this.hostsDoneBefore += event.hostsDone - done;
        done = event.hostsDone;
      }
      // While discovery runs the bar shows discovery; the port runs' hosts count all the same.
      if (this.discovering) return;
      this.onProgress({ ...event, hostsDone: this.hostsDoneBefore, hostsTotal: this.hostsTotal });
    };
  }

  /** Discovery has ended: port runs drive the bar from now on. */
  discoveryEnded(hostsFound: number): void {
    this.onProgress({ phase: 'discovery', percent: 100, hostsFound, hostsDone: this.hostsDoneBefore });
    this.discovering = false;
  }
}
