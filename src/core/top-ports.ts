/**
 * The ports a scan examines: `scanning.port_range` plus, for the normal profile, the most
 * frequent TCP ports (`scanning.top_ports`). Pure: the scan layer reads nmap's `nmap-services`
 * file (src/engines/top-ports.ts) and hands its text to parseNmapServices; without one the built-in
 * ranking below stands in.
 */
import type { PortCoverage } from './coverage.js';
import type { ScanProfile } from './model.js';
import { parsePortRanges, type PortRange } from './net.js';
import { PORTS } from './limits.js';

/**
 * TCP ports of nmap's `nmap-services` file, most frequently open first (ties by port number).
 * Lines are `name<TAB>port/protocol<TAB>frequency[<TAB># comment]`; comments, other protocols,
 * lines without a frequency and anything malformed are skipped. A port listed twice keeps its
 * higher frequency.
 */
export function parseNmapServices(text: string): number[] {
  const frequency = new Map<number, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const [, portProtocol, freqText] = line.split(/\s+/, 3);
    const m = portProtocol?.match(/^(\d{1,5})\/tcp$/);
    if (!m || freqText === undefined || !/^\d*\.?\d+(?:e-?\d+)?$/i.test(freqText)) continue;
    const port = Number(m[1]);
    const freq = Number(freqText);
    if (port < PORTS.min || port > PORTS.max || !Number.isFinite(freq)) continue;
    if (freq > (frequency.get(port) ?? -1)) frequency.set(port, freq);
  }
  return [...frequency].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([port]) => port);
}

/**
 * The ranking used when nmap (and so its `nmap-services` frequency table) is not installed. Not
 * derived from nmap's data (whose licence is not MIT): compiled by hand for Netwarden from the
 * services the well-known port registry and this project's risk rules (core/risk-rules.ts) and
 * port table (core/ports.ts) name, ordered by how often each kind of service is found on home and
 * small-office networks: web and remote access first, then Windows and file sharing, mail,
 * databases and message brokers, printers, media and smart-home services, then other common
 * administration and application ports. `scanning.top_ports` larger than this list adds all of it.
 */
export const BUILTIN_FREQUENT_PORTS: readonly number[] = [
  // Web, remote shells and desktops
  80, 443, 22, 8080, 23, 3389, 5900, 8443, 8000, 8888, 8081, 21, 53,
  // Windows, file and directory services
  445, 139, 135, 548, 2049, 111, 389, 636, 88, 873, 3268,
  // Mail
  25, 587, 465, 110, 995, 143, 993,
  // Databases, caches and message brokers
  3306, 5432, 1433, 1521, 6379, 27017, 11211, 9200, 5672, 1883, 8883, 5984,
  // Printers, media and smart-home devices
  631, 9100, 515, 554, 1900, 5000, 8123, 32400, 8096, 1400, 62078, 5353, 7000, 8008, 8009,
  // Administration consoles, containers and hypervisors
  10000, 9090, 9000, 9443, 8006, 2375, 2376, 6443, 10250, 5601, 3000, 8086, 8181, 8088, 5985, 5986, 161,
  // VPNs, tunnels and proxies
  1723, 1194, 500, 1080, 3128, 8118,
  // Other services still met on small networks
  113, 119, 179, 199, 5060, 5222, 6667, 1025, 1026, 1027, 49152, 49153, 49154, 2000, 7070, 8010, 8082, 8089, 8880, 9091, 9999,
  // Remote execution and legacy protocols
  512, 513, 514, 1099, 1524, 4444, 5555, 6000, 6001, 20, 69, 79, 81, 990, 992, 3690, 9418,
];

/**
 * Services common on home and self-hosted networks that nmap's frequency table (gathered from
 * Internet-wide scans) ranks below its first thousand ports: MQTT (1883, 8883), Redis (6379),
 * MongoDB (27017), memcached (11211), Docker's API (2375, 2376), Kibana (5601), Home Assistant
 * (8123), Plex (32400), Jellyfin (8096), Sonos (1400), Proxmox (8006), Portainer (9443) and the
 * Kubernetes API and kubelet (6443, 10250). Added whenever `scanning.top_ports` is above 0.
 */
export const HOME_SERVICE_PORTS: readonly number[] = [
  1883, 8883, 6379, 27017, 11211, 2375, 2376, 5601, 8123, 32400, 8096, 1400, 8006, 9443, 6443, 10250,
];

/** The ports `scanning.top_ports` adds: the first `count` of `ranking`, plus HOME_SERVICE_PORTS when count > 0. */
export function topPorts(count: number, ranking: readonly number[]): number[] {
  if (count <= 0) return [];
  return [...ranking.slice(0, count), ...HOME_SERVICE_PORTS];
}

/** Sorted, merged ranges of port ranges and single ports together. */
export function unionPorts(ranges: readonly PortRange[], ports: readonly number[]): PortRange[] {
  const parts = [...ranges.map((r) => ({ ...r })), ...ports.filter((p) => p >= PORTS.min && p <= PORTS.max).map((p) => ({ low: p, high: p }))];
  parts.sort((a, b) => a.low - b.low || a.high - b.high);
  const merged: PortRange[] = [];
  for (const r of parts) {
    const last = merged[merged.length - 1];
    if (last && r.low <= last.high + 1) last.high = Math.max(last.high, r.high);
    else merged.push(r);
  }
  return merged;
}

/** Whether `port` lies in one of `ranges` (sorted or not). */
export function inPortRanges(ranges: readonly PortRange[], port: number): boolean {
  return ranges.some((r) => port >= r.low && port <= r.high);
}

/** Every port, for intensive scans (and a port_range that cannot be read). */
export const ALL_PORTS: readonly PortRange[] = [{ low: PORTS.min, high: PORTS.max }];

/**
 * The ports a scan of `profile` examines: every port for intensive scans; otherwise
 * `scanning.port_range` together with the `scanning.top_ports` most frequent ports of `ranking`
 * (nmap-services' order, or BUILTIN_FREQUENT_PORTS). A port_range that cannot be read (validation
 * keeps it from being stored) scans every port, as before.
 */
export function scanPortList(scanning: { port_range: string; top_ports: number }, profile: ScanProfile, ranking: readonly number[]): PortRange[] {
  const configured = parsePortRanges(scanning.port_range);
  if (profile === 'intensive' || !configured.ok) return ALL_PORTS.map((r) => ({ ...r }));
  return unionPorts(configured.value, topPorts(scanning.top_ports, ranking));
}

/**
 * Every port a scan of `profile` examines, by protocol: the TCP ports of scanPortList and the UDP
 * ports of `scanning.udp_ports` (none for quick scans, nor when the setting is "" or unreadable).
 */
export function scanPortCoverage(
  scanning: { port_range: string; top_ports: number; udp_ports: string },
  profile: ScanProfile,
  ranking: readonly number[],
): PortCoverage {
  const udp = scanning.udp_ports.trim() === '' ? null : parsePortRanges(scanning.udp_ports);
  return { tcp: scanPortList(scanning, profile, ranking), udp: profile !== 'quick' && udp?.ok ? udp.value : [] };
}
