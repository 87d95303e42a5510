/**
 * The kernel's IPv4 neighbour (ARP) table, /proc/net/arp: which addresses on the local segments
 * answered ARP, and with which MAC. Readable without privileges; absent outside Linux.
 */
import { readFile } from 'node:fs/promises';
import { normalizeMac } from '../../core/mac.js';

export const PROC_NET_ARP = '/proc/net/arp';

/** ATF_COM: the entry is complete (the address resolved to a MAC). */
const ATF_COM = 0x2;

export interface NeighbourEntry {
  ip: string;
  mac: string;
  device: string;
}

/**
 * Parses /proc/net/arp:
 * ```
 * IP address       HW type     Flags       HW address            Mask     Device
 * 192.168.1.1      0x1         0x2         aa:bb:cc:dd:ee:ff     *        eth0
 * ```
 * Only complete entries (flag 0x2) with a usable MAC are kept; incomplete ones (an address that
 * is being resolved or failed to resolve) are not.
 */
export function parseProcNetArp(text: string): Map<string, NeighbourEntry> {
  const table = new Map<string, NeighbourEntry>();
  for (const line of text.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 6) continue;
    const [ip, , flagsText, hw, , device] = fields;
    const flags = Number.parseInt(flagsText, 16);
    if (!Number.isFinite(flags) || (flags & ATF_COM) === 0) continue;
    const mac = normalizeMac(hw);
    if (!mac || !/^\d{1,3}(?:\.\d{1,3}){3}$/.test(ip)) continue;
    table.set(ip, { ip, mac, device });
  }
  return table;
}

/** The complete entries of the neighbour table; empty when it cannot be read. */
export async function readNeighbourTable(path: string = PROC_NET_ARP): Promise<Map<string, NeighbourEntry>> {
  try {
    return parseProcNetArp(await readFile(path, 'utf8'));
  } catch {
    return new Map();
  }
}
