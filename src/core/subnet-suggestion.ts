/**
 * The subnet the set-up wizard starts from: one a scan would accept, never a value that shows an
 * error before anything was typed. Pure.
 */
import { parseIpv4Network } from './net.js';
import { subnetProblem, type AllowedTargets } from './scan-target.js';

export type SubnetSource = 'configured' | 'detected' | 'allowed_targets';

export interface SubnetSuggestion {
  /** null when no candidate passes the rules (the field starts empty). */
  subnet: string | null;
  source: SubnetSource | null;
  /** Where it came from, in plain words, for the hint under the field. */
  detail: string;
}

/**
 * In order: the configured subnet (network.subnet), the local network detected from the host's
 * interfaces, the first allowed scan target that fits the size limit (else the start of the first
 * one, cut to the limit). The first that passes the rules subnetProblem applies is taken.
 */
export function suggestSubnet(input: { configured: string; detected: string | null; allowed: AllowedTargets; maxHosts: number }): SubnetSuggestion {
  const { allowed, maxHosts } = input;
  const passes = (cidr: string) => subnetProblem(cidr, { scanning: { max_hosts: maxHosts } }, allowed) === null;
  if (passes(input.configured)) return { subnet: input.configured, source: 'configured', detail: 'The configured subnet.' };
  if (input.detected && passes(input.detected)) {
    return { subnet: input.detected, source: 'detected', detail: "This server's local network, detected from its interfaces." };
  }
  const fitting = allowed.cidrs.find(passes);
  if (fitting) return { subnet: fitting, source: 'allowed_targets', detail: `The first of the allowed scan targets (${allowed.source}).` };
  for (const cidr of allowed.cidrs) {
    const cut = cutToLimit(cidr, maxHosts);
    if (cut && passes(cut)) {
      return {
        subnet: cut,
        source: 'allowed_targets',
        detail: `The start of ${cidr}, the first allowed scan target (${allowed.source}), cut to the scan size limit.`,
      };
    }
  }
  return { subnet: null, source: null, detail: `No subnet to suggest: type one inside the allowed scan targets (${allowed.cidrs.join(', ')}).` };
}

/** The first block of `cidr` no larger than `maxHosts` addresses, or null. */
function cutToLimit(cidr: string, maxHosts: number): string | null {
  const parsed = parseIpv4Network(cidr);
  if (!parsed.ok || maxHosts < 1) return null;
  const bits = Math.min(32, Math.max(parsed.value.prefix, 32 - Math.floor(Math.log2(maxHosts))));
  return `${parsed.value.network}/${bits}`;
}
