/**
 * nmap command lines, built only from validated values as argument arrays (never a shell string).
 * Pure: the shell spawns what these return.
 */
import type { ScanProfile } from './model.js';
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
  /** Canonical port list (`1-1000`, `22,80`); ignored by intensive, which scans every port. */
  ports: string;
  osDetection: boolean;
  /** The hosts are only thought to be up: nmap checks them with the discovery probes instead of `-Pn`. */
  verifyUp?: boolean;
}

/**
 * One run over the hosts read from stdin (`-iL -`): port scan, then version detection on the open
 * ports. Hosts discovery found are known to be up, so nmap skips its own discovery (`-Pn`); hosts
 * only thought to be up (verifyUp) are checked first with the probes discovery uses, so that one
 * gone since is dropped after its ping instead of having every port probed.
 */
export function portScanArgs(options: PortScanOptions): string[] {
  const intensive = options.profile === 'intensive';
  const args = [
    options.privileged ? '-sS' : '-sT',
    ...(options.verifyUp ? discoveryProbes(options.privileged) : ['-Pn']),
    '-p',
    intensive ? '1-65535' : options.ports,
    '-sV',
    ...(intensive ? ['--version-all'] : ['--version-intensity', '7']),
    '-T4',
    '--max-retries',
    '2',
    '--min-hostgroup',
    '64',
  ];
  if (options.privileged && (intensive || options.osDetection)) args.push('-O', '--osscan-limit');
  if (intensive) args.push('--script', 'default and safe');
  args.push(...common(options), '-iL', '-');
  return args;
}

/** Maps nmap's task names in <taskprogress> to our phases. */
export function phaseOfTask(task: string): 'discovery' | 'ports' | 'services' | 'os' {
  const t = task.toLowerCase();
  if (t.includes('service')) return 'services';
  if (t.includes('os detection') || t.includes('script') || t.includes('nse')) return 'os';
  if (t.includes('ping') || t.includes('arp') || t.includes('parallel dns') || t.includes('discovery')) return 'discovery';
  return 'ports';
}
