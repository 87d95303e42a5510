/**
 * nmap command lines, built only from validated values as argument arrays (never a shell string).
 * Pure: the shell spawns what these return.
 */
import { emptyCoverage, parseCoverage, type PortCoverage } from './coverage.js';
import type { ScanProfile } from './model.js';
import { formatPortRanges } from './net.js';
import { NMAP_DISCOVERY_PORTS } from './ports.js';

export interface NmapCommonOptions {
  privileged: boolean;
  resolveHostnames: boolean;
  hostTimeoutSeconds: number;
}

/** Probes for hosts that ignore ping: SSH, web, SMB, RDP and common IoT/admin ports. */
const DISCOVERY_TCP_PORTS = NMAP_DISCOVERY_PORTS.join(',');

function common(options: NmapCommonOptions): string[] {
  return [
    // -n unless the user asked for reverse DNS (network.resolve_hostnames); tests never do.
    options.resolveHostnames ? '-R' : '-n',
    options.privileged ? '--privileged' : '--unprivileged',
    '-oX',
    '-',
    '--stats-every',
    '1s',
    '--host-timeout',
    `${options.hostTimeoutSeconds}s`,
  ];
}

/** The probes that decide whether a host is up (nmap uses ARP instead on the local segment when privileged). */
function discoveryProbes(privileged: boolean): string[] {
  return privileged ? ['-PE', '-PP', `-PS${DISCOVERY_TCP_PORTS}`, '-PA80,443'] : [`-PS${DISCOVERY_TCP_PORTS}`];
}

/** Host discovery only (`-sn`): ARP on the local segment when privileged, ICMP and TCP probes otherwise. */
export function discoveryArgs(cidr: string, exclude: string[], options: NmapCommonOptions): string[] {
  return [
    '-sn',
    ...discoveryProbes(options.privileged),
    '-T4',
    '--max-retries',
    '2',
    ...common(options),
    ...(exclude.length ? ['--exclude', exclude.join(',')] : []),
    cidr,
  ];
}

export interface PortScanOptions extends NmapCommonOptions {
  profile: Exclude<ScanProfile, 'quick'>;
  /**
   * The ports, as core/coverage.ts writes them (`1-1000,udp:53,161`); intensive scans every TCP
   * port whatever the TCP part says. UDP ports need privileges: unprivileged, they are left out
   * (nmapCoverage says so beforehand).
   */
  ports: string;
  osDetection: boolean;
  /** The hosts are only thought to be up: nmap checks them with the discovery probes instead of `-Pn`. */
  verifyUp?: boolean;
  /** How many hosts the run reads from stdin (sizes its host groups: hostGroupSize). */
  hostCount?: number;
}

/** Most host groups a port run is cut into. */
const MAX_HOST_GROUPS = 4;
/**
 * Fewest hosts in a group. Each group waits for its slowest service before the next starts, so
 * cutting a small network into groups costs wall time: 8 lab hosts in two groups of 4 took 10.9 s
 * against 5.6 s in one. Up to this many hosts stay one group.
 */
const MIN_HOST_GROUP = 16;

/**
 * The hosts nmap scans together in one port run. nmap takes a group through port scan, service
 * detection and scripts together and writes its hosts only when the whole group is done, so one
 * group of every host (the old `--min-hostgroup 64`) showed "0 of 200 devices done" until the end.
 * Up to MAX_HOST_GROUPS groups of at least MIN_HOST_GROUP hosts: on a network of more than 16
 * devices the count of devices done moves during a run, while the hosts of a group still overlap
 * their waits; a smaller network is one group (its bar and time left move with nmap's own task
 * progress).
 */
export function hostGroupSize(hostCount: number): number {
  return Math.max(MIN_HOST_GROUP, Math.ceil(hostCount / MAX_HOST_GROUPS));
}

function portsOf(options: PortScanOptions): PortCoverage {
  const parsed = parseCoverage(options.ports);
  if (!parsed.ok) throw new Error(`Invalid port list '${options.ports}': ${parsed.error}`);
  return parsed.value;
}

/**
 * One run over the hosts read from stdin (`-iL -`): TCP port scan, then version detection on the
 * open ports. Hosts discovery found are known to be up, so nmap skips its own discovery (`-Pn`);
 * hosts only thought to be up (verifyUp) are checked first with the probes discovery uses, so
 * that one gone since is dropped after its ping instead of having every port probed. The UDP
 * ports of the list are udpScanArgs' run.
 */
export function portScanArgs(options: PortScanOptions): string[] {
  const intensive = options.profile === 'intensive';
  const tcp = intensive ? '1-65535' : formatPortRanges(portsOf(options).tcp);
  if (tcp === '') throw new Error('No TCP port to scan: the port list is empty');
  const args = [
    options.privileged ? '-sS' : '-sT',
    ...(options.verifyUp ? discoveryProbes(options.privileged) : ['-Pn']),
    '-p',
    tcp,
    '-sV',
    ...(intensive ? ['--version-all'] : ['--version-intensity', '7']),
    '-T4',
    '--max-retries',
    '2',
    ...(options.hostCount === undefined
      ? ['--min-hostgroup', '64']
      : ['--min-hostgroup', String(hostGroupSize(options.hostCount)), '--max-hostgroup', String(hostGroupSize(options.hostCount))]),
  ];
  if (options.privileged && (intensive || options.osDetection)) args.push('-O', '--osscan-limit');
  if (intensive) args.push('--script', 'default and safe');
  args.push(...common(options), '-iL', '-');
  return args;
}

/**
 * The UDP run beside portScanArgs' (null when the list has no UDP port, or without privileges:
 * nmap's UDP scan needs raw sockets). A run of its own, started with the TCP run, and without
 * version detection: nmap probes every UDP port that stays silent (open|filtered) with each of
 * its UDP version probes and waits out each one, which took 100 s for a single silent port on
 * loopback (12 s at intensity 2) against 1.4 s without. nmap-payloads still sends each well-known
 * port its service's request (DNS, NTP, NBSTAT, SNMP public, SSDP…), so a service answers and its
 * port is open; the port's name is then nmap-services' (a guess, method="table").
 */
export function udpScanArgs(options: PortScanOptions): string[] | null {
  const udp = formatPortRanges(portsOf(options).udp);
  if (udp === '' || !options.privileged) return null;
  return [
    '-sU',
    ...(options.verifyUp ? discoveryProbes(options.privileged) : ['-Pn']),
    '-p',
    udp,
    '-T4',
    '--max-retries',
    '2',
    '--min-hostgroup',
    '64',
    ...common(options),
    '-iL',
    '-',
  ];
}

/**
 * What an nmap port scan of `coverage` really examines: UDP needs raw sockets, so unprivileged
 * the UDP ports are left out, with the warning the scan records (rather than failing the scan).
 */
export function nmapCoverage(coverage: PortCoverage, privileged: boolean): { coverage: PortCoverage; warning: string | null } {
  if (privileged || coverage.udp.length === 0) return { coverage, warning: null };
  return {
    coverage: { ...emptyCoverage(), tcp: coverage.tcp },
    warning:
      `UDP ports ${formatPortRanges(coverage.udp)} were not examined: nmap needs root or the CAP_NET_RAW capability for a UDP scan ` +
      '(run the service as root, give nmap the capability, or use scanning.engine "native", which scans UDP without privileges)',
  };
}

/** Maps nmap's task names in <taskprogress> to our phases. */
export function phaseOfTask(task: string): 'discovery' | 'ports' | 'services' | 'os' {
  const t = task.toLowerCase();
  if (t.includes('service')) return 'services';
  if (t.includes('os detection') || t.includes('script') || t.includes('nse')) return 'os';
  if (t.includes('ping') || t.includes('arp') || t.includes('parallel dns') || t.includes('discovery')) return 'discovery';
  return 'ports';
}
