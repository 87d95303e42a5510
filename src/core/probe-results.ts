/**
 * What the recognition probes (src/probes/) learned about one host, as every layer sees it: the
 * probes produce it, nmap's OS detection and scripts add to it, the recognition rules
 * (core/fingerprints.ts, core/recognition.ts) read it, the store keeps it as evidence. Pure types.
 * Every field is what the host itself answered, unauthenticated; absent means the probe got no
 * answer (or was not run), never "the host has none".
 */

/** DNS-SD / mDNS answers from the host (unicast to UDP 5353). */
export interface MdnsResult {
  /** Host names it answered for (`nas.local`), lower-case, no trailing dot. */
  names: string[];
  /** Service types it advertises (`_http._tcp`, `_airplay._tcp`). */
  services: string[];
  /** Instance names of those services (`Living Room TV._airplay._tcp.local`). */
  instances: string[];
  /** TXT key/values of its `_device-info._tcp` record and its services (keys lower-case): `model`, `osxvers`, … */
  txt: Record<string, string>;
}

/** SSDP (unicast M-SEARCH to UDP 1900) and the UPnP device description it points to. */
export interface SsdpResult {
  /** The LOCATION header: the URL of the device description. */
  location: string | null;
  /** The SERVER header (`Linux/5.4 UPnP/1.0 MiniUPnPd/2.2`). */
  server: string | null;
  /** From the device description XML. */
  friendlyName: string | null;
  manufacturer: string | null;
  modelName: string | null;
  modelNumber: string | null;
  /** `uuid:…`, stable per device: an identity key (the USN's `uuid:` when the description could not be read). */
  udn: string | null;
  /** `urn:schemas-upnp-org:device:MediaRenderer:1`. */
  deviceType: string | null;
}

/** NetBIOS name service status (UDP 137). */
export interface NetbiosResult {
  /** The workstation/server name (suffix 0x00 or 0x20, unique). */
  name: string;
  workgroup: string | null;
  /** The MAC the host reports in the status answer (upper-case colon form), when not all zeros. */
  mac: string | null;
}

/** SNMP v2c system group (UDP 161), with the community that answered. */
export interface SnmpResult {
  community: string;
  sysDescr: string | null;
  /** Dotted OID (`1.3.6.1.4.1.9.1.1208`). */
  sysObjectID: string | null;
  sysName: string | null;
  /** snmpEngineID as lower-case hex: an identity key. */
  engineId: string | null;
  /**
   * BRIDGE-MIB dot1dTpFdbTable (Q-BRIDGE-MIB dot1qTpFdbTable when that is empty): the MACs the host,
   * a bridge, learned behind each of its ports (MAC upper-case colon form, bridge port number).
   * Absent when the host has none (not a switch) or did not say in time.
   */
  bridge?: SnmpBridgeEntry[];
  /** LLDP-MIB lldpRemTable: the neighbours the host hears on its ports. Absent when none. */
  lldp?: SnmpLldpNeighbour[];
}

/** Rows of a bridge table the SNMP probe reads at most (a large switch learns thousands of MACs). */
export const MAX_BRIDGE_ROWS = 4096;
/** LLDP neighbours the SNMP probe reads at most. */
export const MAX_LLDP_ROWS = 256;

export interface SnmpBridgeEntry {
  mac: string;
  port: number;
}

export interface SnmpLldpNeighbour {
  /** lldpRemLocalPortNum: the host's port the neighbour is on. */
  localPort: number;
  /** lldpRemChassisId when its subtype is a MAC address (4), upper-case colon form; else null. */
  chassisMac: string | null;
  /** lldpRemSysName. */
  sysName: string | null;
}

/** One HTTP(S) service's first page. */
export interface HttpResult {
  port: number;
  tls: boolean;
  /** Of the page shown: after at most two redirects on the same scheme, host and port (others are not followed). */
  status: number | null;
  /** The page's `<title>`, entities decoded, whitespace collapsed, at most 200 characters. */
  title: string | null;
  /** The `Server` header. */
  server: string | null;
  /** mmh3 of the base64 favicon, as Shodan computes it (signed 32-bit), when /favicon.ico answered. */
  faviconHash: number | null;
}

/** One TLS service's certificate. */
export interface TlsResult {
  port: number;
  /** `CN=nas.local, O=Synology Inc.`: the attributes in the certificate's order, comma-separated. */
  subject: string | null;
  /** Same form as `subject`; equal to it for a self-signed certificate. */
  issuer: string | null;
  /** DNS and IP subject alternative names. */
  sans: string[];
  /** ISO 8601, like `notAfter`. */
  notBefore: string | null;
  /** ISO 8601. */
  notAfter: string | null;
  selfSigned: boolean;
  /** sha256 of the public key (SPKI), hex: an identity key that survives a re-issued certificate. */
  keyHash: string | null;
}

/** One SSH service: its banner and host key. */
export interface SshResult {
  port: number;
  /** `SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3`. */
  banner: string | null;
  /** `ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`. */
  keyType: string | null;
  /** `SHA256:` + unpadded base64 of the key blob's sha256, as `ssh-keygen -l` prints it: an identity key. */
  fingerprint: string | null;
}

/** One OS match of nmap's `-O` (osmatch with its first osclass). */
export interface NmapOsMatch {
  name: string;
  /** 0–100. */
  accuracy: number;
  vendor: string | null;
  family: string | null;
  generation: string | null;
  /** nmap's class type: `general purpose`, `router`, `WAP`, `printer`, … */
  type: string | null;
  cpe: string[];
}

/** Everything the probes learned about one host. */
export interface ProbeResults {
  mdns?: MdnsResult;
  ssdp?: SsdpResult;
  netbios?: NetbiosResult;
  snmp?: SnmpResult;
  http?: HttpResult[];
  tls?: TlsResult[];
  ssh?: SshResult[];
  nmapOs?: NmapOsMatch[];
}

/** The probe names, as settings, evidence `source` and the docs name them. */
export const PROBE_NAMES = ['mdns', 'ssdp', 'netbios', 'snmp', 'http', 'tls', 'ssh'] as const;
export type ProbeName = (typeof PROBE_NAMES)[number];
