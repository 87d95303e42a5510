/**
 * The recognition probes of one host (docs/recognition.md, "Probes"): the UDP ones (mDNS, SSDP,
 * NetBIOS, SNMP) always, unicast to the host; HTTP, TLS and SSH on the open TCP ports that carry
 * them. They run up to eight at a time, each bounded by its own time, all of them by the host's time and
 * the caller's cancel; whatever answered by then is the result. Nothing here throws.
 */
import { HTTP_PORTS, TLS_PORTS, TLS_WRAPPED_NAMES, wellKnownService } from '../core/ports.js';
import type { HttpResult, ProbeName, ProbeResults, SshResult, TlsResult } from '../core/probe-results.js';
import { aborted, isUnicastHost } from './common.js';
import { probeHttp } from './http.js';
import { probeMdns } from './mdns.js';
import { probeNetbios } from './netbios.js';
import { DEFAULT_PROBE_SETTINGS, type ProbeSettings } from './settings.js';
import { probeSnmp } from './snmp.js';
import { probeSsdp } from './ssdp.js';
import { probeSsh } from './ssh.js';
import { probeTls } from './tls.js';

export { DEFAULT_PROBE_SETTINGS, ProbeSettingsSchema, type ProbeSettings } from './settings.js';

export interface ProbeHost {
  ip: string;
  /** The host's open TCP ports with the service each carries (null or the port's usual name when unrecognised). */
  openTcpPorts: { port: number; service: string | null }[];
  /** Open UDP ports, when the scan examined UDP (informational: the UDP probes run regardless). */
  openUdpPorts?: number[];
  /**
   * UDP ports the scan examined and found closed (the host answered "port unreachable"): the probe
   * of that port is skipped, since nothing there can answer it and waiting out its silence would
   * only slow the scan. Ports not examined, open or `open|filtered` are probed.
   */
  closedUdpPorts?: number[];
}

/** What tests and the lab change: the UDP probes' ports, the ssh-keyscan program, the parallelism. */
export interface ProbeRunOptions {
  ports?: Partial<Record<'mdns' | 'ssdp' | 'netbios' | 'snmp', number>>;
  keyscanPath?: string | null;
  /** Probes of one host in flight at once (each holds one socket and mostly waits). Default 8. */
  concurrency?: number;
}

/** The well-known port each UDP probe asks (ProbeRunOptions.ports may move it). */
const UDP_PROBE_PORTS = [
  ['snmp', 161],
  ['mdns', 5353],
  ['ssdp', 1900],
  ['netbios', 137],
] as const;

/** Ports per kind probed on one host: a host with 200 web ports is examined on its first few. */
const MAX_PORTS_PER_PROBE = 8;

function serviceOf(entry: { port: number; service: string | null }): string | null {
  const service = entry.service?.toLowerCase() ?? null;
  // The port's usual name says nothing was recognised there: judge by the port instead.
  return service && service !== wellKnownService(entry.port) ? service : null;
}

/** Whether the port speaks TLS from its first byte. */
export function carriesTls(entry: { port: number; service: string | null }): boolean {
  const service = serviceOf(entry);
  if (service) return TLS_WRAPPED_NAMES.has(service) || service.startsWith('ssl') || service.startsWith('tls') || service.includes('https');
  return TLS_PORTS.has(entry.port) || /https|ssl|tls/.test(entry.service?.toLowerCase() ?? '');
}

/** Whether the port speaks HTTP (plain or inside TLS). */
export function carriesHttp(entry: { port: number; service: string | null }): boolean {
  const service = serviceOf(entry);
  if (service) return service.includes('http');
  return HTTP_PORTS.has(entry.port) || (entry.service?.toLowerCase().includes('http') ?? false);
}

export function carriesSsh(entry: { port: number; service: string | null }): boolean {
  const service = serviceOf(entry);
  return service ? service === 'ssh' : entry.port === 22;
}

/** Runs `tasks` at most `limit` at a time; a task not yet started when the signal aborts is skipped. */
async function pool(tasks: (() => Promise<void>)[], limit: number, signal: AbortSignal): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length && !signal.aborted) {
      const task = tasks[next++];
      await task();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, tasks.length)) }, worker));
}

export async function runProbes(
  host: ProbeHost,
  settings: ProbeSettings = DEFAULT_PROBE_SETTINGS,
  signal?: AbortSignal,
  options: ProbeRunOptions = {},
): Promise<ProbeResults> {
  const results: ProbeResults = {};
  if (!isUnicastHost(host.ip)) return results;
  // Settings come validated from the store; a value out of range still must not unbound or break the run.
  const hostMs = Number.isFinite(settings.host_timeout_ms)
    ? Math.min(Math.max(settings.host_timeout_ms, 500), 60_000)
    : DEFAULT_PROBE_SETTINGS.host_timeout_ms;
  const all = AbortSignal.timeout(hostMs);
  const bound = signal ? AbortSignal.any([signal, all]) : all;
  const enabled = new Set<ProbeName>(settings.probes ?? DEFAULT_PROBE_SETTINGS.probes);
  const common = { signal: bound, timeoutMs: settings.probe_timeout_ms };
  const ports = options.ports ?? {};
  const ip = host.ip;
  const tcp = [...new Map(host.openTcpPorts.map((p) => [p.port, p])).values()].sort((a, b) => a.port - b.port);
  const http: HttpResult[] = [];
  const tls: TlsResult[] = [];
  const ssh: SshResult[] = [];

  const tasks: (() => Promise<void>)[] = [];
  const closedUdp = new Set(host.closedUdpPorts ?? []);
  for (const [probe, port] of UDP_PROBE_PORTS) if (closedUdp.has(ports[probe] ?? port)) enabled.delete(probe);
  // The slow-to-fail UDP probes first: they wait out silence, the TCP ones mostly answer at once.
  if (enabled.has('snmp'))
    tasks.push(async () => {
      const r = await probeSnmp(ip, { ...common, port: ports.snmp, communities: settings.snmp_communities });
      if (r) results.snmp = r;
    });
  if (enabled.has('mdns'))
    tasks.push(async () => {
      const r = await probeMdns(ip, { ...common, port: ports.mdns });
      if (r) results.mdns = r;
    });
  if (enabled.has('ssdp'))
    tasks.push(async () => {
      const r = await probeSsdp(ip, { ...common, port: ports.ssdp });
      if (r) results.ssdp = r;
    });
  if (enabled.has('netbios'))
    tasks.push(async () => {
      const r = await probeNetbios(ip, { ...common, port: ports.netbios });
      if (r) results.netbios = r;
    });
  if (enabled.has('ssh'))
    for (const entry of tcp.filter(carriesSsh).slice(0, MAX_PORTS_PER_PROBE))
      tasks.push(async () => {
        const r = await probeSsh(ip, entry.port, { ...common, keyscanPath: options.keyscanPath });
        if (r) ssh.push(r);
      });
  if (enabled.has('tls'))
    for (const entry of tcp.filter(carriesTls).slice(0, MAX_PORTS_PER_PROBE))
      tasks.push(async () => {
        const r = await probeTls(ip, entry.port, common);
        if (r) tls.push(r);
      });
  if (enabled.has('http'))
    for (const entry of tcp.filter(carriesHttp).slice(0, MAX_PORTS_PER_PROBE))
      tasks.push(async () => {
        const r = await probeHttp(ip, entry.port, { ...common, tls: carriesTls(entry) });
        if (r) http.push(r);
      });

  // Every probe honours the signal; the race makes the host's bound hold even if one did not.
  await Promise.race([pool(tasks, options.concurrency ?? 8, bound), aborted(bound)]);
  const byPort = (a: { port: number }, b: { port: number }) => a.port - b.port;
  const out: ProbeResults = { ...results };
  if (http.length) out.http = [...http].sort(byPort);
  if (tls.length) out.tls = [...tls].sort(byPort);
  if (ssh.length) out.ssh = [...ssh].sort(byPort);
  return out;
}
