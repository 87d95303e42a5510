import { execFile, spawn } from 'node:child_process';
import type { PortCoverage } from '../core/coverage.js';
import { discoveryArgs, hostGroupSize, nmapCoverage, phaseOfTask, portScanArgs, udpScanArgs } from '../core/nmap-args.js';
import { NmapXmlReader, type NmapReadEvent, type NmapRun } from '../core/nmap-xml.js';
import { engineCommand } from './engine-process.js';
import { vendorForMac } from './oui.js';
import { ScanAbortedError, type DiscoveryRequest, type PortScanRequest, type ScanEngine } from './types.js';
import { type DiscoveredHost, type ScannedHost } from '../core/model.js';

/** Output larger than this means something is badly wrong; nmap is stopped rather than eat memory. */
const MAX_OUTPUT_BYTES = 512 * 1024 * 1024;

/** The installed nmap's version, or null when it cannot be run. */
export function nmapVersion(binary = 'nmap'): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(binary, ['--version'], { timeout: 5000 }, (err, stdout) => {
      if (err) return resolve(null);
      resolve(stdout.match(/Nmap version (\S+)/)?.[1] ?? null);
    });
  });
}

export class NmapEngine implements ScanEngine {
  readonly name = 'nmap' as const;
  /** Every call is its own nmap process: discovery and port scans may overlap. */
  readonly concurrent = true;

  constructor(private readonly binary = 'nmap') {}

  async discover(request: DiscoveryRequest): Promise<DiscoveredHost[]> {
    const args = discoveryArgs(request.cidr, request.exclude, request);
    let found = 0;
    const run = await this.run(args, null, request, (event) => {
      if (event.kind === 'host' && event.up) {
        found++;
        request.onHostUp?.(event.ip);
      }
      request.onProgress(
        event.kind === 'host'
          ? { phase: 'discovery', percent: -1, hostsFound: found, currentHost: event.ip }
          : { phase: 'discovery', percent: event.percent, hostsFound: found, etaSeconds: event.remaining },
      );
    });
    return run.hosts.map((h) => ({ ip: h.ip, mac: h.mac, vendor: h.vendor ?? (h.mac ? vendorForMac(h.mac) : null), hostname: h.hostname }));
  }

  examinable(coverage: PortCoverage, privileged: boolean): { coverage: PortCoverage; warning: string | null } {
    return nmapCoverage(coverage, privileged);
  }

  async scanPorts(request: PortScanRequest): Promise<ScannedHost[]> {
    if (request.hosts.length === 0) return [];
    const args = portScanArgs({ ...request, hostCount: request.hosts.length });
    const stdin = `${request.hosts.join('\n')}\n`;
    // The UDP ports: a run of their own beside the TCP run (udpScanArgs says why), stopped with it.
    // Its process is not reported to onProcess (one process per call there); it dies with this service anyway.
    const udpArgs = udpScanArgs(request);
    const stopUdp = new AbortController();
    const udpRun = udpArgs ? this.run(udpArgs, stdin, { signal: AbortSignal.any([request.signal, stopUdp.signal]) }, () => {}) : null;
    udpRun?.catch(() => undefined);
    let done = 0;
    let run: NmapRun;
    try {
      run = await this.run(args, stdin, request, (event) => {
        if (event.kind === 'host') {
          done++;
          request.onProgress({ phase: 'services', percent: -1, hostsDone: done, hostsTotal: request.hosts.length, currentHost: event.ip });
        } else {
          const hostsInGroup = Math.min(hostGroupSize(request.hosts.length), request.hosts.length - done);
          request.onProgress({ phase: phaseOfTask(event.task), percent: event.percent, hostsDone: done, hostsInGroup, etaSeconds: event.remaining });
        }
      });
    } catch (err) {
      stopUdp.abort();
      throw err;
    }
    const udpPorts = new Map(((await udpRun)?.hosts ?? []).map((h) => [h.ip, h.ports]));
    return run.hosts.map((h) => ({
      ...h,
      vendor: h.vendor ?? (h.mac ? vendorForMac(h.mac) : null),
      ports: [...h.ports, ...(udpPorts.get(h.ip) ?? [])],
    }));
  }

  /**
   * Spawns nmap in its own process group (so cancelling kills it and anything it started), tied
   * to this process's life (engine-process.ts: it dies with the service, even on SIGKILL), and
   * reads its XML as it comes: progress, and each host parsed as soon as nmap has written it.
   */
  private async run(
    args: string[],
    stdin: string | null,
    { signal, onProcess }: Pick<DiscoveryRequest, 'signal' | 'onProcess'>,
    onEvent: (event: NmapReadEvent) => void,
  ): Promise<NmapRun> {
    const command = await engineCommand(this.binary, args);
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(new ScanAbortedError());
      const child = spawn(command.command, command.args, { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
      // Detached: the child leads its own process group, whose id is its pid.
      if (child.pid !== undefined) onProcess?.(child.pid);
      const reader = new NmapXmlReader();
      let size = 0;
      let stderr = '';
      let settled = false;
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        onProcess?.(null);
        fn();
      };
      const kill = () => {
        if (child.pid === undefined) return;
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {
          /* already gone */
        }
        setTimeout(() => {
          try {
            if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
          } catch {
            /* already gone */
          }
        }, 2000).unref();
      };
      const onAbort = () => {
        kill();
        finish(() => reject(new ScanAbortedError()));
      };
      signal.addEventListener('abort', onAbort, { once: true });

      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        if (settled) return;
        size += chunk.length;
        if (size > MAX_OUTPUT_BYTES) {
          kill();
          finish(() => reject(new Error('nmap produced more output than expected; stopped')));
          return;
        }
        let events: NmapReadEvent[];
        try {
          events = reader.push(chunk);
        } catch (err) {
          kill();
          finish(() => reject(new Error(`nmap output could not be read: ${(err as Error).message}`)));
          return;
        }
        for (const event of events) onEvent(event);
      });
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk: string) => {
        if (stderr.length < 64 * 1024) stderr += chunk;
      });
      child.stdin.on('error', () => {
        /* nmap may exit before reading stdin; the exit code tells the story */
      });
      child.stdin.end(stdin ?? '');
      child.on('error', (err) => finish(() => reject(new Error(`could not run nmap: ${err.message}`))));
      child.on('close', (code, sig) => {
        if (settled) return;
        if (code !== 0) {
          finish(() => reject(new Error(`nmap failed (${sig ?? `exit code ${code}`}): ${firstLines(stderr) || 'no error output'}`)));
          return;
        }
        try {
          const run = reader.finish();
          if (run.exit === 'error') throw new Error(run.error ?? firstLines(stderr));
          finish(() => resolve(run));
        } catch (err) {
          finish(() => reject(new Error(`nmap output could not be read: ${(err as Error).message}`)));
        }
      });
    });
  }
}

function firstLines(text: string): string {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(0, 3)
    .join(' | ')
    .slice(0, 500);
}
