/**
 * What a scan may target, as pure rules: a request's subnet or device checked against the limits
 * (scanning.max_hosts) and the allowed targets (scanning.allowed_targets or NETWARDEN_SCAN_ALLOW),
 * and who a recorded scan was for. The scan manager applies them when a scan is triggered, when a
 * queued one starts (here or on an agent) and when a schedule is saved.
 */
import { InvalidInputError } from '../util/errors.js';
import { networkWithin, parseIpv4Network, type Ipv4Network } from './net.js';
import type { Settings } from './settings.js';

/** The subnet or address is not a valid scan target (malformed, or larger than scanning.max_hosts). */
export class InvalidTargetError extends InvalidInputError {
  override readonly code = 'NW_INVALID_TARGET';
}

/** The target is valid but outside scanning.allowed_targets / NETWARDEN_SCAN_ALLOW. */
export class TargetNotAllowedError extends InvalidInputError {
  override readonly code = 'NW_TARGET_NOT_ALLOWED';
}

/** The CIDR blocks scans may target, and the setting that says so (for error messages). */
export interface AllowedTargets {
  cidrs: string[];
  source: string;
}

/** A scan's target: a subnet (default network.subnet) or a single device's address. */
export interface TargetRequest {
  /** CIDR or single address; defaults to network.subnet. */
  subnet?: string;
  /** A single-device scan of this address. */
  device?: string;
}

/** The allowed targets: NETWARDEN_SCAN_ALLOW's list (`scanAllow`) when it replaces the setting, else scanning.allowed_targets. */
export function allowedTargets(scanAllow: string[] | null, settings: Settings): AllowedTargets {
  return scanAllow
    ? { cidrs: scanAllow, source: 'NETWARDEN_SCAN_ALLOW' }
    : { cidrs: settings.scanning.allowed_targets, source: 'scanning.allowed_targets' };
}

/** What resolveTarget reads of the configuration: the default subnet and the size limit. */
export interface TargetSettings {
  network: Pick<Settings['network'], 'subnet'>;
  scanning: Pick<Settings['scanning'], 'max_hosts'>;
}

/** Why a subnet cannot be scanned: not a network, larger than scanning.max_hosts, or outside the allowed targets. */
export type SubnetProblem =
  | { kind: 'malformed'; error: string }
  | { kind: 'too_large'; cidr: string; size: number; max: number }
  | { kind: 'not_allowed'; cidr: string; allowed: AllowedTargets };

/**
 * The rules a scan's subnet must pass, as data: null when `text` may be scanned. resolveTarget
 * throws on them; the set-up wizard and the settings page check a subnet with them as it is typed.
 */
export function subnetProblem(text: string, settings: Pick<TargetSettings, 'scanning'>, allowed: AllowedTargets): SubnetProblem | null {
  const parsed = parseIpv4Network(text);
  if (!parsed.ok) return { kind: 'malformed', error: parsed.error };
  const max = settings.scanning.max_hosts;
  if (parsed.value.size > max) return { kind: 'too_large', cidr: parsed.value.cidr, size: parsed.value.size, max };
  if (!allowed.cidrs.some((cidr) => insideCidr(parsed.value, cidr))) return { kind: 'not_allowed', cidr: parsed.value.cidr, allowed };
  return null;
}

/** A subnet problem in plain words, for under the field where the subnet is typed (it names no setting path). */
export function describeSubnetProblem(problem: SubnetProblem): string {
  const n = (value: number) => value.toLocaleString('en-US');
  switch (problem.kind) {
    case 'malformed':
      return 'This is not a network: type one in CIDR form such as 192.168.1.0/24, or a single IPv4 address.';
    case 'too_large':
      return (
        `${problem.cidr} has ${n(problem.size)} addresses, more than this server scans at once (${n(problem.max)}). ` +
        'Use a smaller block, such as a /24 with 256 addresses.'
      );
    case 'not_allowed': {
      const where =
        problem.allowed.source === 'NETWARDEN_SCAN_ALLOW'
          ? 'The list is set on the server by the NETWARDEN_SCAN_ALLOW environment variable.'
          : 'An administrator can add it under Settings → Network and scanning → Allowed scan targets.';
      return `${problem.cidr} is outside the networks this server may scan (${problem.allowed.cidrs.join(', ')}). ${where}`;
    }
  }
}

/** The validated target of a request, and how many addresses it covers. */
export function resolveTarget(request: TargetRequest, settings: TargetSettings, allowed: AllowedTargets): { network: Ipv4Network; hosts: number } {
  const target = parseTarget(request, settings);
  if (!allowed.cidrs.some((cidr) => insideCidr(target.network, cidr))) {
    const field = request.device !== undefined ? 'ip_address' : 'subnet';
    throw new TargetNotAllowedError(
      `${field}: ${request.device ?? target.network.cidr} is outside the allowed scan targets (${allowed.source}: ${allowed.cidrs.join(', ')})`,
    );
  }
  return target;
}

/** The target of a scan recorded earlier: its device for a single-device scan, else its subnet. */
export function recordedTarget(scan: { scan_type: string; target: string | null; subnet: string }): TargetRequest {
  return scan.scan_type === 'device' && scan.target ? { device: scan.target } : { subnet: scan.subnet };
}

/** A recorded scan's subnet as a network (it was validated when the scan was recorded). */
export function networkOf(subnet: string): Ipv4Network {
  const parsed = parseIpv4Network(subnet);
  if (!parsed.ok) throw new InvalidTargetError(`subnet: ${parsed.error}`);
  return parsed.value;
}

/**
 * Who a scan recorded earlier (a queued one) was for, from its triggered_by (CONTRACT §7):
 * `schedule:<name>`, `cli` and `import` are the system, `key:<name>` an API key, else a user.
 */
export function actorOf(triggeredBy: string | null): { name: string | null; type: 'system' | 'api_key' | 'user' } {
  if (triggeredBy === null || triggeredBy === 'cli' || triggeredBy === 'import' || triggeredBy.startsWith('schedule:')) {
    return { name: triggeredBy, type: 'system' };
  }
  if (triggeredBy.startsWith('key:')) return { name: triggeredBy.slice(4), type: 'api_key' };
  return { name: triggeredBy, type: 'user' };
}

function insideCidr(network: Ipv4Network, cidr: string): boolean {
  const outer = parseIpv4Network(cidr);
  return outer.ok && networkWithin(network, outer.value);
}

function parseTarget(request: TargetRequest, settings: TargetSettings): { network: Ipv4Network; hosts: number } {
  if (request.device !== undefined) {
    const parsed = parseIpv4Network(request.device);
    if (!parsed.ok || request.device.includes('/')) {
      throw new InvalidTargetError('ip_address: must be a single IPv4 address such as 192.168.1.10');
    }
    return { network: parsed.value, hosts: 1 };
  }
  const text = request.subnet ?? settings.network.subnet;
  // The allowed targets are resolveTarget's to check (with the request's field name): any list passes here.
  const problem = subnetProblem(text, settings, { cidrs: ['0.0.0.0/0'], source: '' });
  if (problem?.kind === 'malformed') throw new InvalidTargetError(`subnet: ${problem.error}`);
  if (problem?.kind === 'too_large') {
    throw new InvalidTargetError(
      `subnet: ${problem.cidr} has ${problem.size} addresses, more than the limit of ${problem.max} (scanning.max_hosts); scan a smaller block`,
    );
  }
  const network = networkOf(text);
  return { network, hosts: network.size };
}
