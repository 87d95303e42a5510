/**
 * The overlapped discovery and port scan (src/engines/pipeline.ts) with a scripted engine: which host
 * is port-scanned by which run, what is recorded, and how a failure or a cancel stops every run.
 * Nothing is sent on the network; the loopback tests with nmap are in pipeline-nmap.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { DiscoveredHost, ScannedHost } from '../../src/core/model.js';
import { runPipeline, type PipelineInput } from '../../src/engines/pipeline.js';
import { ScanAbortedError, type DiscoveryRequest, type PortScanRequest, type ScanEngine } from '../../src/engines/types.js';

const host = (ip: string): DiscoveredHost => ({ ip, mac: null, vendor: null, hostname: null });
const scanned = (ip: string): ScannedHost => ({ ...host(ip), os_name: null, device_type: null, ports: [] });

/** Resolves when `release()` is called, or rejects when `signal` aborts. */
function gate(signal: AbortSignal): { wait: Promise<void>; release: () => void } {
  let release!: () => void;
  const wait = new Promise<void>((resolve, reject) => {
    release = resolve;
    signal.addEventListener('abort', () => reject(new ScanAbortedError()), { once: true });
  });
  return { wait, release };
}

/**
 * Discovery finds `up` (reporting each as it goes, then waiting for `finishDiscovery`); a port run
 * returns the hosts of its list that are in `answers` when verifyUp (else all of them), once the
 * test lets it end. Every call gets a made-up process group.
 */
class ScriptedEngine implements ScanEngine {
  readonly name = 'native' as const;
  readonly concurrent = true;
  readonly runs: { hosts: string[]; verifyUp: boolean; startedDuringDiscovery: boolean }[] = [];
  /** Set when discovery has ended: runs started before it overlap it. */
  discoveryEnded = false;
  private nextPgid = 1000;
  finishDiscovery: () => void = () => {};
  discoveryFails: Error | null = null;
  portRunFails: Error | null = null;
  /** Port runs wait for this before they end (released by the test). */
  holdPorts = false;
  readonly portGates: (() => void)[] = [];
  /** Resolves on the next port run start. */
  portRunStarted: Promise<void> = Promise.resolve();
  private markPortRun: () => void = () => {};

  constructor(
    private readonly up: string[],
    private readonly answers: Set<string>,
    /** Whether discovery reports hosts as it finds them (onHostUp), or only in the list it resolves to. */
    private readonly streams = true,
  ) {
    this.expectPortRun();
  }

  expectPortRun(): void {
    this.portRunStarted = new Promise((resolve) => (this.markPortRun = resolve));
  }

  async discover(request: DiscoveryRequest): Promise<DiscoveredHost[]> {
    const pgid = this.nextPgid++;
    request.onProcess?.(pgid);
    try {
      if (this.streams) for (const ip of this.up) request.onHostUp?.(ip);
      const g = gate(request.signal);
      this.finishDiscovery = g.release;
      await g.wait;
      if (this.discoveryFails) throw this.discoveryFails;
      return this.up.map(host);
    } finally {
      this.discoveryEnded = true;
      request.onProcess?.(null);
    }
  }

  async scanPorts(request: PortScanRequest): Promise<ScannedHost[]> {
    this.runs.push({ hosts: [...request.hosts], verifyUp: request.verifyUp === true, startedDuringDiscovery: !this.discoveryEnded });
    const pgid = this.nextPgid++;
    request.onProcess?.(pgid);
    this.markPortRun();
    try {
      if (this.holdPorts) {
        const g = gate(request.signal);
        this.portGates.push(g.release);
        await g.wait;
      }
      if (this.portRunFails) throw this.portRunFails;
      return request.hosts.filter((ip) => !request.verifyUp || this.answers.has(ip)).map(scanned);
    } finally {
      request.onProcess?.(null);
    }
  }
}

function pipeline(engine: ScriptedEngine, expected: string[], signal = new AbortController().signal) {
  const recorded: { discovery: string[][]; ports: string[][]; order: string[]; processes: (number | null)[] } = {
    discovery: [],
    ports: [],
    order: [],
    processes: [],
  };
  const input: PipelineInput = {
    engine,
    discovery: {
      cidr: '127.0.0.0/28',
      exclude: [],
      privileged: false,
      resolveHostnames: false,
      hostTimeoutSeconds: 60,
      signal,
      onProgress: () => {},
      onProcess: (pgid) => recorded.processes.push(pgid),
    },
    ports: { profile: 'normal', ports: '1-1000', osDetection: false, privileged: false, resolveHostnames: false, hostTimeoutSeconds: 60 },
    expected,
    recordDiscovery: async (live) => {
      recorded.discovery.push(live.map((h) => h.ip));
      recorded.order.push('discovery');
    },
    recordPorts: async (results) => {
      recorded.ports.push(results.map((h) => h.ip).sort());
      recorded.order.push('ports');
    },
  };
  return { done: runPipeline(input), recorded };
}

/** How many times each host was port-scanned in a run that reported it (a verifyUp run only scans the hosts that answer). */
function scansPerHost(engine: ScriptedEngine, answers: Set<string>): Map<string, number> {
  const count = new Map<string, number>();
  for (const run of engine.runs) {
    for (const ip of run.hosts) if (!run.verifyUp || answers.has(ip)) count.set(ip, (count.get(ip) ?? 0) + 1);
  }
  return count;
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/** Waits until `condition` holds (hosts discovery reports are gathered briefly before their run starts). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('the scan pipeline', () => {
  it('port-scans the expected hosts and the hosts discovery reports while discovery runs, each once, and records only what discovery found', async () => {
    // .1 and .2 were online and still are; .3 was online and is gone; .4 is new; .5 was online,
    // discovery finds it, but it did not answer the early run (a lost probe): it gets a run of its own.
    const up = ['127.0.0.1', '127.0.0.2', '127.0.0.4', '127.0.0.5'];
    const answers = new Set(['127.0.0.1', '127.0.0.2', '127.0.0.3']);
    const engine = new ScriptedEngine(up, answers);
    const { done, recorded } = pipeline(engine, ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.5']);
    await until(() => engine.runs.length === 2);
    // Both runs started before discovery ended: the expected hosts at once, the new one as reported.
    expect(engine.runs).toEqual([
      { hosts: ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.5'], verifyUp: true, startedDuringDiscovery: true },
      { hosts: ['127.0.0.4'], verifyUp: false, startedDuringDiscovery: true },
    ]);
    engine.finishDiscovery();
    const live = await done;

    expect(live.map((h) => h.ip)).toEqual(up);
    expect(engine.runs[2]).toEqual({ hosts: ['127.0.0.5'], verifyUp: false, startedDuringDiscovery: false });
    expect(engine.runs).toHaveLength(3);
    const scans = scansPerHost(engine, answers);
    for (const ip of up) expect(scans.get(ip)).toBe(1);
    // Discovery is recorded first; the gone host's results (.3) are never written.
    expect(recorded.discovery).toEqual([up]);
    expect(recorded.order[0]).toBe('discovery');
    expect(recorded.ports.flat().sort()).toEqual([...up].sort());
    expect(recorded.processes.at(-1)).toBeNull();
  });

  it('holds port results that end before discovery until discovery is recorded', async () => {
    const engine = new ScriptedEngine(['127.0.0.1'], new Set(['127.0.0.1', '127.0.0.2']));
    const { done, recorded } = pipeline(engine, ['127.0.0.1', '127.0.0.2']);
    await tick();
    await tick();
    expect(recorded.order).toEqual([]);
    engine.finishDiscovery();
    await done;
    expect(recorded.order).toEqual(['discovery', 'ports']);
    expect(recorded.ports).toEqual([['127.0.0.1']]);
  });

  it('reports each process group it starts, the newest running one on the record, null at the end', async () => {
    const engine = new ScriptedEngine(['127.0.0.1', '127.0.0.4'], new Set(['127.0.0.1']));
    engine.holdPorts = true;
    const { done, recorded } = pipeline(engine, ['127.0.0.1']);
    await until(() => engine.runs.length === 2);
    expect(recorded.processes).toEqual([1000, 1001, 1002]);
    engine.finishDiscovery();
    await tick();
    for (const release of engine.portGates) release();
    await done;
    expect(recorded.processes.at(-1)).toBeNull();
  });

  it('stops every run when one fails, and fails with that error', async () => {
    const engine = new ScriptedEngine(['127.0.0.1', '127.0.0.4'], new Set(['127.0.0.1']));
    engine.holdPorts = true;
    const { done, recorded } = pipeline(engine, ['127.0.0.1']);
    await until(() => engine.runs.length === 2);
    engine.discoveryFails = new Error('nmap failed (exit code 1): boom');
    engine.finishDiscovery();
    await expect(done).rejects.toThrow('boom');
    // The held port runs were stopped (they reject on the abort), and nothing was recorded.
    expect(engine.runs).toHaveLength(2);
    expect(recorded.order).toEqual([]);
    expect(recorded.processes.at(-1)).toBeNull();
  });

  it('stops every run when cancelled mid-way, starts none after, and records nothing more', async () => {
    const engine = new ScriptedEngine(['127.0.0.1', '127.0.0.4'], new Set(['127.0.0.1']));
    engine.holdPorts = true;
    const cancel = new AbortController();
    const { done, recorded } = pipeline(engine, ['127.0.0.1'], cancel.signal);
    await until(() => engine.runs.length === 2);
    cancel.abort();
    await expect(done).rejects.toBeInstanceOf(ScanAbortedError);
    expect(engine.runs).toHaveLength(2);
    expect(recorded.order).toEqual([]);
    expect(recorded.processes.at(-1)).toBeNull();
  });

  it('with no hosts online before, scans what discovery reports', async () => {
    const engine = new ScriptedEngine(['127.0.0.7'], new Set());
    const { done, recorded } = pipeline(engine, []);
    await engine.portRunStarted;
    expect(engine.runs).toEqual([{ hosts: ['127.0.0.7'], verifyUp: false, startedDuringDiscovery: true }]);
    engine.finishDiscovery();
    await done;
    expect(recorded.ports).toEqual([['127.0.0.7']]);
  });

  it('scans the hosts of a discovery that reports them only at its end in one run', async () => {
    const up = ['127.0.0.7', '127.0.0.8', '127.0.0.9'];
    const engine = new ScriptedEngine(up, new Set(), false);
    const { done, recorded } = pipeline(engine, []);
    await tick();
    engine.finishDiscovery();
    await done;
    expect(engine.runs).toEqual([{ hosts: up, verifyUp: false, startedDuringDiscovery: false }]);
    expect(recorded.ports).toEqual([up]);
  });
});
