import { readFileSync } from 'node:fs';

const CAP_NET_RAW = 13;

/**
 * Whether raw sockets are available: root, or CAP_NET_RAW in the effective set. nmap needs them
 * for SYN scans, ARP discovery (MACs) and OS detection; without them it does connect scans.
 */
export function hasRawSocketPrivilege(): boolean {
  if (process.getuid?.() === 0) return true;
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    const capEff = status.match(/^CapEff:\s*([0-9a-f]+)$/m)?.[1];
    return capEff !== undefined && (BigInt(`0x${capEff}`) & (1n << BigInt(CAP_NET_RAW))) !== 0n;
  } catch {
    return false;
  }
}
