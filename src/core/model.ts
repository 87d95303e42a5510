/**
 * What a scan finds, as every layer sees it: engines produce it, the store records it, the core
 * evaluates it. Pure types and the few facts about them (which profiles exist, what counts as open).
 */

/** quick = discovery only; normal = discovery, configured ports, service versions; intensive = all ports, OS, safe scripts. */
export const SCAN_PROFILES = ['quick', 'normal', 'intensive'] as const;
export type ScanProfile = (typeof SCAN_PROFILES)[number];

/** scanning.default_profile's own default: the profile of a scan, schedule or import that names none. */
export const DEFAULT_SCAN_PROFILE: ScanProfile = 'normal';

/** The scan engines Netwarden has: nmap (the program) and the native engine (connect scans in Node). */
export const SCAN_ENGINE_NAMES = ['nmap', 'native'] as const;
export type ScanEngineName = (typeof SCAN_ENGINE_NAMES)[number];

/** What `scanning.engine` (and an agent's `--engine`) may say: an engine, or `auto` (nmap when installed, else native). */
export const SCAN_ENGINE_SETTINGS = ['auto', ...SCAN_ENGINE_NAMES] as const;
export type ScanEngineSetting = (typeof SCAN_ENGINE_SETTINGS)[number];
export function isScanEngineSetting(text: string | undefined): text is ScanEngineSetting {
  return (SCAN_ENGINE_SETTINGS as readonly unknown[]).includes(text);
}

/** A scan's lifecycle: queued → running → completed | failed | cancelled. */
export const SCAN_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export type ScanStatus = (typeof SCAN_STATUSES)[number];

export interface ScannedPort {
  port: number;
  protocol: 'tcp' | 'udp';
  /** nmap's states: open, closed, filtered, unfiltered, open|filtered, closed|filtered. */
  state: string;
  service: string | null;
  product: string | null;
  version: string | null;
  extra_info: string | null;
  cpe: string[];
  /**
   * True when `service` is only what the port number usually runs (nmap's `method="table"`, the
   * native engine's fallback name): nothing answered as that service. Absent means false.
   */
  service_guessed?: boolean;
}

/**
 * Where a device's hostname or MAC came from: the scan itself, or one of the network's own
 * records (name sources, src/names/): Pi-hole, AdGuard Home, UniFi, a DHCP lease file.
 */
export const FACT_SOURCES = ['scan', 'pihole', 'adguard', 'unifi', 'dhcp_leases'] as const;
export type FactSource = (typeof FACT_SOURCES)[number];
/** The name sources alone (every fact source but the scan). */
export type NameSource = Exclude<FactSource, 'scan'>;
/** How each name source is named to a person ("name from Pi-hole"). */
export const NAME_SOURCE_LABELS: Record<NameSource, string> = {
  pihole: 'Pi-hole',
  adguard: 'AdGuard Home',
  unifi: 'UniFi',
  dhcp_leases: 'DHCP lease file',
};

export interface DiscoveredHost {
  ip: string;
  /** Upper-case colon form `AA:BB:CC:DD:EE:FF`, or null when the engine could not see it (not on the local segment). */
  mac: string | null;
  vendor: string | null;
  hostname: string | null;
  /** Where `hostname` came from when a name source filled it; absent or null: the scan saw it. */
  hostname_source?: NameSource | null;
  /** Where `mac` came from when a name source filled it; absent or null: the scan saw it. */
  mac_source?: NameSource | null;
}

export interface ScannedHost extends DiscoveredHost {
  os_name: string | null;
  device_type: string | null;
  /** Every port the engine reported individually (open, and filtered/closed where it lists them). */
  ports: ScannedPort[];
}

/**
 * Whether a port counts as open: something answered on it. nmap's `open|filtered` (no answer,
 * typical of UDP) does not: a finding or a CVE needs a service that is really there.
 */
export function isOpenPort(port: { state: string }): boolean {
  // The exact 'open' nmap writes needs no new string; anything else is normalised first.
  return port.state === 'open' || port.state.trim().toLowerCase() === 'open';
}
