/** Target expansion for the native engine: a CIDR minus excluded blocks, as addresses. */
import { intToIpv4, ipv4ToInt, parseIpv4Network } from '../../core/net.js';

interface IntRange {
  low: number;
  high: number;
}

function rangeOf(cidr: string): IntRange & { prefix: number } {
  const parsed = parseIpv4Network(cidr);
  if (!parsed.ok) throw new Error(`Invalid target '${cidr}': ${parsed.error}`);
  const low = ipv4ToInt(parsed.value.network);
  return { low, high: low + parsed.value.size - 1, prefix: parsed.value.prefix };
}

/**
 * The addresses to probe in `cidr`, in ascending order, without those inside any `exclude` block.
 * The network and broadcast addresses of blocks larger than /31 are left out: they are not hosts
 * (a TCP connect to a broadcast address fails locally anyway).
 */
export function expandTargets(cidr: string, exclude: readonly string[] = []): string[] {
  const target = rangeOf(cidr);
  let { low, high } = target;
  if (target.prefix < 31) {
    low += 1;
    high -= 1;
  }
  const excluded = exclude
    .map((e) => e.trim())
    .filter((e) => e !== '')
    .map(rangeOf)
    .filter((r) => r.high >= low && r.low <= high)
    .sort((a, b) => a.low - b.low);
  const out: string[] = [];
  let next = low;
  for (const r of excluded) {
    for (let v = next; v < Math.min(r.low, high + 1); v++) out.push(intToIpv4(v));
    next = Math.max(next, r.high + 1);
  }
  for (let v = next; v <= high; v++) out.push(intToIpv4(v));
  return out;
}
