// What a device's "no risk" covers: the ports the scans that reached it examined, and when
// (CONTRACT §14). A green badge that only said "No risk" read as "safe" even after a quick scan,
// which checks no port at all; one computed from today's settings claimed ports no scan had looked
// at. So it is read from the device itself (`ports_examined`, `ports_examined_at`, `stale_ports`),
// never from the configuration.
import type { DeviceSummary } from './types';

export type Coverage = { scanned: false } | { scanned: true; ports: string; at: string | null; stale: number };

/** Ranges shown in full; a longer list is summarised ("22, 80, 443 and 5 more"). */
const ENTRIES_SHOWN = 3;

/** `1-1000,8080` → "ports 1–1000, 8080"; every port → "all ports"; UDP after `udp:` → "… and UDP ports 53, 161". */
export function describePorts(portList: string): string {
  const at = portList.indexOf('udp:');
  const tcp = at < 0 ? portList : portList.slice(0, at);
  const udp = at < 0 ? '' : portList.slice(at + 4);
  const parts = [describeList(tcp), describeList(udp)];
  if (parts[0] && parts[1]) return `TCP ${parts[0]} and UDP ${parts[1]}`;
  return parts[0] || (parts[1] ? `UDP ${parts[1]}` : 'no port');
}

function describeList(list: string): string {
  const entries = list
    .split(',')
    .map((e) => e.trim().replace(/^tcp:/, ''))
    .filter(Boolean);
  if (entries.length === 0) return '';
  if (entries.length === 1 && /^(1|0)-65535$/.test(entries[0])) return 'all ports';
  const shown = entries.slice(0, ENTRIES_SHOWN).map((e) => e.replace('-', '–'));
  const more = entries.length - shown.length;
  const single = entries.length === 1 && !entries[0].includes('-');
  return `${single ? 'port' : 'ports'} ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/** What the inventory knows of a device's ports, from its summary. */
export function coverageOf(device: Pick<DeviceSummary, 'ports_examined' | 'ports_examined_at' | 'stale_ports'>): Coverage {
  if (!device.ports_examined) return { scanned: false };
  return { scanned: true, ports: describePorts(device.ports_examined), at: device.ports_examined_at, stale: device.stale_ports };
}
