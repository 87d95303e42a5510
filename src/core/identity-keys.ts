/**
 * The identity keys a host offers (CONTRACT §15 `kind`), each graded by how surely it names one
 * device: what the resolver (issue 21 §4) weighs when it decides that a host it sees is a device it
 * knows. Pure functions.
 *
 * Grades:
 *  - `strong`: generated on the device and kept for its life, unique to it: an SSH host key, the key
 *    of a self-signed certificate with its own name, a UPnP UDN, an SNMP engine ID, a global MAC.
 *    One strong key in common is enough to say "same device".
 *  - `medium`: unique in practice but chosen or shared by people: an mDNS or NetBIOS name, a DHCP
 *    client id, a certificate a CA issued (the same one often serves several hosts behind a proxy or
 *    as a shared wildcard). Two agreeing ones, or one with a weak one, make a match.
 *  - `weak`: says little alone: a randomised (locally administered) MAC, a host name, an address,
 *    default names (`iPhone`, `raspberrypi`) and default certificates shared by many devices.
 *  - `excluded`: never an identity: virtual router MACs (VRRP/CARP/HSRP), multicast, all-zero,
 *    `localhost`.
 */
import { gradeMac, normalizeMac } from './mac.js';
import type { ProbeResults, TlsResult } from './probe-results.js';

export const IDENTITY_KEY_KINDS = [
  'mac',
  'ssh_host_key',
  'tls_certificate',
  'upnp_udn',
  'mdns_name',
  'netbios_name',
  'dhcp_client_id',
  'snmp_engine_id',
  'hostname',
  'ip',
] as const;
export type IdentityKeyKind = (typeof IDENTITY_KEY_KINDS)[number];

export const KEY_STRENGTHS = ['strong', 'medium', 'weak', 'excluded'] as const;
export type KeyStrength = (typeof KEY_STRENGTHS)[number];

/** Each kind's grade when nothing about the value says otherwise. */
export const KIND_STRENGTH: Readonly<Record<IdentityKeyKind, KeyStrength>> = {
  mac: 'strong',
  ssh_host_key: 'strong',
  tls_certificate: 'strong',
  upnp_udn: 'strong',
  snmp_engine_id: 'strong',
  mdns_name: 'medium',
  netbios_name: 'medium',
  dhcp_client_id: 'medium',
  hostname: 'weak',
  ip: 'weak',
};

export interface Grade {
  strength: KeyStrength;
  /** Why, in words (shown with the key and recorded with the resolver's decisions). */
  reason: string;
}

export interface IdentityKey extends Grade {
  kind: IdentityKeyKind;
  /** Normalised: MACs `AA:BB:…`, names lower case (NetBIOS upper case), hashes lower-case hex. */
  value: string;
  /** The probe or record it came from (`ssh`, `tls`, `ssdp`, `mdns`, `netbios`, `snmp`, `scan`, a name source). */
  source: string;
}

/* ------------------------------------------------------------------------------------------------
 * Grading one key
 * --------------------------------------------------------------------------------------------- */

/**
 * Names devices are given out of the box, shared by every unrenamed one of their kind (with an
 * optional `-2`, ` (2)` suffix that networks add to tell them apart).
 */
const DEFAULT_NAMES =
  /^(?:localhost|iphone|ipad|android|android-device|macbook|macbook-pro|macbook-air|imac|mac-mini|raspberrypi|homeassistant|diskstation|rackstation|nas|router|printer|camera|esp32|esp8266|espressif|chromecast|google-home|amazon|echo|kindle|galaxy|samsung|lgwebostv|tizen|unknown|default|device|host|workgroup|openwrt|pfsense|opnsense|ubuntu|debian|pi|dietpi|octopi|pve|proxmox|truenas|unraid)(?:[- ]?\(?\d{1,2}\)?)?$/i;

/** A name's first label, lower case, without `.local` or a domain. */
function firstLabel(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '').split('.')[0];
}

function gradeName(kind: 'mdns_name' | 'netbios_name' | 'hostname', name: string): Grade {
  const label = firstLabel(name);
  if (label === '' || label === 'localhost') return { strength: 'excluded', reason: `${kindWords[kind]} "${name}" names no particular device` };
  if (DEFAULT_NAMES.test(label)) {
    return { strength: 'weak', reason: `${kindWords[kind]} "${name}" is a default name many devices share` };
  }
  if (kind === 'hostname') return { strength: 'weak', reason: 'a host name can be reused or changed, and DNS may lag behind' };
  return {
    strength: 'medium',
    reason: `${kindWords[kind]} is unique on most networks, but a person can rename the device or give the name to another`,
  };
}

const kindWords: Record<'mdns_name' | 'netbios_name' | 'hostname', string> = {
  mdns_name: 'the mDNS name',
  netbios_name: 'the NetBIOS name',
  hostname: 'the host name',
};

export function gradeMdnsName(name: string): Grade {
  return gradeName('mdns_name', name);
}

export function gradeNetbiosName(name: string): Grade {
  return gradeName('netbios_name', name);
}

export function gradeHostname(name: string): Grade {
  return gradeName('hostname', name);
}

/**
 * Certificate subjects that firmware and tools put in certificates they ship or make by default: a
 * device's key is then often the same on every unit of the model (a key baked into the firmware).
 */
const DEFAULT_CERTIFICATE =
  /(?:^|[,/\s])CN\s*=\s*(?:localhost(?:\.localdomain)?|default|router|ip ?camera|camera|web ?server|www\.example\.(?:com|org)|example\.com|192\.168\.\d+\.\d+|10\.\d+\.\d+\.\d+|127\.0\.0\.1|Ubiquiti|UniFi|synology|QNAP NAS|DVR|NVR|Hikvision|IPC)\s*(?:[,/]|$)|Internet Widgits Pty Ltd|Default Company Ltd/i;

export function gradeTlsCertificate(tls: Pick<TlsResult, 'subject' | 'issuer' | 'sans' | 'selfSigned'>): Grade {
  const subject = tls.subject ?? '';
  const names = [subject, ...tls.sans];
  if (subject.trim() === '' && tls.sans.length === 0) {
    return { strength: 'weak', reason: 'a certificate without a name: often a default one shared by many devices' };
  }
  if (DEFAULT_CERTIFICATE.test(subject) || (tls.issuer !== null && DEFAULT_CERTIFICATE.test(tls.issuer) && tls.selfSigned)) {
    return { strength: 'weak', reason: 'a default certificate (generic name): many devices of the model may share its key' };
  }
  if (names.some((n) => /(?:^|[=:\s,])\*\./.test(n))) {
    return { strength: 'weak', reason: 'a wildcard certificate: the same key serves every host of the domain' };
  }
  if (!tls.selfSigned) {
    return { strength: 'medium', reason: 'a CA-issued certificate: the same certificate often serves several hosts (a proxy, a shared name)' };
  }
  return { strength: 'strong', reason: 'a self-signed certificate with its own name: its key was made on this device' };
}

export function gradeSshHostKey(): Grade {
  return { strength: 'strong', reason: 'an SSH host key is generated on the device when the system is installed' };
}

const HEX = /^[0-9a-f]+$/;

export function gradeUpnpUdn(udn: string): Grade {
  const id = udn.toLowerCase().replace(/^uuid:/, '');
  if (id.replace(/[-0]/g, '') === '' || id.length < 8) return { strength: 'weak', reason: 'an empty or placeholder UPnP UDN' };
  return { strength: 'strong', reason: 'a UPnP UDN is unique to the device and kept across restarts' };
}

export function gradeSnmpEngineId(engineId: string): Grade {
  const hex = engineId.toLowerCase().replace(/^0x/, '').replace(/[\s:]/g, '');
  if (!HEX.test(hex) || hex.length < 10 || /^0+$/.test(hex)) {
    return { strength: 'weak', reason: 'an SNMP engine ID too short or empty to tell devices apart' };
  }
  return { strength: 'strong', reason: 'an SNMP engine ID is unique to the agent and kept across restarts' };
}

/**
 * A DHCP client id: RFC 2132's type 1 is the MAC (`01:aa:bb:…`), so it is as good as that MAC (a
 * randomised MAC gives a randomised id); others (DUIDs) are chosen by the client and kept.
 */
export function gradeDhcpClientId(clientId: string): Grade {
  const hex = clientId.toLowerCase().replace(/[\s:-]/g, '');
  if (HEX.test(hex) && hex.length === 14 && hex.startsWith('01')) {
    const mac = gradeMac(hex.slice(2));
    if (mac.grade === 'excluded') return { strength: 'excluded', reason: `a DHCP client id made of ${mac.reason}` };
    if (mac.grade === 'weak') return { strength: 'weak', reason: 'a DHCP client id made of a randomised MAC: it changes with the MAC' };
  }
  return { strength: 'medium', reason: 'a DHCP client id is kept by the client across leases, but some clients share or reset it' };
}

/* ------------------------------------------------------------------------------------------------
 * All the keys of a host
 * --------------------------------------------------------------------------------------------- */

export interface IdentityKeyInput {
  ip: string;
  mac: string | null;
  /** Where the MAC was learnt (`scan`, a name source). */
  macSource?: string;
  hostname: string | null;
  /** Where the host name came from (`dns`, `pihole`, `dhcp_leases`, …). */
  hostnameSource?: string;
  dhcpClientId?: string | null;
  probes: ProbeResults;
}

const STRENGTH_ORDER: Readonly<Record<KeyStrength, number>> = { strong: 0, medium: 1, weak: 2, excluded: 3 };

/**
 * Every identity key the host offers, each once, strongest first (then in the order of
 * IDENTITY_KEY_KINDS, then by value). Excluded keys are listed too, so the reason is on record.
 */
export function identityKeysOf(input: IdentityKeyInput): IdentityKey[] {
  const out = new Map<string, IdentityKey>();
  const add = (kind: IdentityKeyKind, value: string | null | undefined, source: string, grade: Grade): void => {
    if (value === null || value === undefined || value === '') return;
    const key = `${kind}\u0000${value}`;
    const existing = out.get(key);
    // The same key from two places: keep its strongest reading.
    if (!existing || STRENGTH_ORDER[grade.strength] < STRENGTH_ORDER[existing.strength]) out.set(key, { kind, value, source, ...grade });
  };

  if (input.mac) {
    const grade = gradeMac(input.mac);
    const value = normalizeMac(input.mac) ?? input.mac.trim().toUpperCase();
    add('mac', value, input.macSource ?? 'scan', { strength: grade.grade, reason: grade.reason });
  }
  const p = input.probes;
  if (p.netbios?.mac) {
    const grade = gradeMac(p.netbios.mac);
    add('mac', normalizeMac(p.netbios.mac), 'netbios', { strength: grade.grade, reason: grade.reason });
  }
  for (const ssh of p.ssh ?? []) if (ssh.fingerprint) add('ssh_host_key', ssh.fingerprint.trim(), 'ssh', gradeSshHostKey());
  for (const tls of p.tls ?? []) if (tls.keyHash) add('tls_certificate', tls.keyHash.trim().toLowerCase(), 'tls', gradeTlsCertificate(tls));
  if (p.ssdp?.udn) add('upnp_udn', p.ssdp.udn.trim().toLowerCase(), 'ssdp', gradeUpnpUdn(p.ssdp.udn));
  for (const name of p.mdns?.names ?? []) add('mdns_name', name.trim().toLowerCase().replace(/\.$/, ''), 'mdns', gradeMdnsName(name));
  if (p.netbios?.name) add('netbios_name', p.netbios.name.trim().toUpperCase(), 'netbios', gradeNetbiosName(p.netbios.name));
  if (input.dhcpClientId) add('dhcp_client_id', input.dhcpClientId.trim().toLowerCase(), 'dhcp_leases', gradeDhcpClientId(input.dhcpClientId));
  if (p.snmp?.engineId) add('snmp_engine_id', p.snmp.engineId.trim().toLowerCase(), 'snmp', gradeSnmpEngineId(p.snmp.engineId));
  if (input.hostname)
    add('hostname', input.hostname.trim().toLowerCase().replace(/\.$/, ''), input.hostnameSource ?? 'dns', gradeHostname(input.hostname));
  add('ip', input.ip, 'scan', { strength: 'weak', reason: 'an address is lent by DHCP and may go to another device' });

  return [...out.values()].sort(
    (a, b) =>
      STRENGTH_ORDER[a.strength] - STRENGTH_ORDER[b.strength] ||
      IDENTITY_KEY_KINDS.indexOf(a.kind) - IDENTITY_KEY_KINDS.indexOf(b.kind) ||
      (a.value < b.value ? -1 : a.value > b.value ? 1 : 0),
  );
}
