/**
 * UDP probes of the native engine: what to send to a UDP port so that the service on it answers,
 * and what its answer says. A UDP service ignores a datagram it cannot read, so a port whose
 * service is known gets a request in that service's own protocol; any other port an empty
 * datagram (as nmap sends). Every request only asks (a DNS query, an NTP time request, an SNMP
 * get of sysDescr): nothing that changes a service. Pure: src/engines/native/udp.ts sends them.
 */
import type { ScannedPort } from './model.js';

/** What an answer told about the service, beside the fact that something answered. */
export type UdpServiceInfo = Pick<ScannedPort, 'service' | 'product' | 'version' | 'extra_info'>;

export interface UdpProbe {
  /** The service's name (nmap-services' name for the port). */
  service: string;
  /** The request; built per send (some carry a random id). */
  /** The request for `host` (the scanned address: SSDP's HOST names it). */
  payload(host: string): Buffer;
  /** Reads an answer: what it says when it is this service's, null when it is not (something else answered). */
  read(reply: Buffer): UdpServiceInfo | null;
}

/** Names of UDP ports that have no probe of their own (an answer there is named after the port only). */
const UDP_PORT_NAMES: Readonly<Record<number, string>> = {
  67: 'dhcps',
  68: 'dhcpc',
  514: 'syslog',
  520: 'route',
  623: 'asf-rmcp',
  1194: 'openvpn',
  1812: 'radius',
  4500: 'nat-t-ike',
  5060: 'sip',
  51820: 'wireguard',
};

function randomId(): number {
  return Math.floor(Math.random() * 0x10000);
}

/** A DNS name in wire format (labels, then the root's zero length). */
function dnsName(name: string): Buffer {
  const parts = name
    .split('.')
    .filter(Boolean)
    .map((label) => {
      const bytes = Buffer.from(label, 'ascii');
      return Buffer.concat([Buffer.from([bytes.length]), bytes]);
    });
  return Buffer.concat([...parts, Buffer.from([0])]);
}

/** A DNS query with one question (`flags` 0x0100: recursion desired; 0 for mDNS). */
function dnsQuery(name: string, type: number, flags: number): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(randomId(), 0);
  header.writeUInt16BE(flags, 2);
  header.writeUInt16BE(1, 4);
  const question = Buffer.alloc(4);
  question.writeUInt16BE(type, 0);
  question.writeUInt16BE(1, 2);
  return Buffer.concat([header, dnsName(name), question]);
}

/** Whether `reply` is a DNS response (QR bit set, a header's length at least). */
function isDnsResponse(reply: Buffer): boolean {
  return reply.length >= 12 && (reply[2] & 0x80) !== 0;
}

const DNS_RCODES: Readonly<Record<number, string>> = { 0: 'NOERROR', 1: 'FORMERR', 2: 'SERVFAIL', 3: 'NXDOMAIN', 4: 'NOTIMP', 5: 'REFUSED' };

function info(service: string, extra: string | null = null, product: string | null = null): UdpServiceInfo {
  return { service, product, version: null, extra_info: extra };
}

/** Printable text of a byte string (control bytes dropped), trimmed and bounded. */
function printable(bytes: Buffer, max = 200): string {
  return bytes
    .toString('latin1')
    .replace(/[^\x20-\x7e]+/g, ' ')
    .trim()
    .slice(0, max);
}

/** The length of a BER element at `offset`: its header size and content length, or null when cut short. */
function berLength(reply: Buffer, offset: number): { header: number; length: number } | null {
  if (offset + 1 >= reply.length) return null;
  const first = reply[offset + 1];
  if (first < 0x80) return { header: 2, length: first };
  const count = first & 0x7f;
  if (count === 0 || count > 3 || offset + 2 + count > reply.length) return null;
  let length = 0;
  for (let i = 0; i < count; i++) length = length * 256 + reply[offset + 2 + i];
  return { header: 2 + count, length };
}

/** SNMP get-request's variable: sysDescr.0 (1.3.6.1.2.1.1.1.0). */
const SYS_DESCR_OID = Buffer.from([0x06, 0x08, 0x2b, 0x06, 0x01, 0x02, 0x01, 0x01, 0x01, 0x00]);

/** SNMPv2c get-request of sysDescr.0 with the community `public`. */
function snmpGet(): Buffer {
  const community = Buffer.from('public', 'ascii');
  const requestId = Buffer.alloc(4);
  requestId.writeUInt32BE(randomId());
  const varbind = Buffer.concat([SYS_DESCR_OID, Buffer.from([0x05, 0x00])]);
  const varbinds = Buffer.concat([Buffer.from([0x30, varbind.length + 2, 0x30, varbind.length]), varbind]);
  const pdu = Buffer.concat([Buffer.from([0x02, 0x04]), requestId, Buffer.from([0x02, 0x01, 0x00, 0x02, 0x01, 0x00]), varbinds]);
  const body = Buffer.concat([Buffer.from([0x02, 0x01, 0x01, 0x04, community.length]), community, Buffer.from([0xa0, pdu.length]), pdu]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

/** An SNMP answer: a BER sequence holding a version and a community; sysDescr's text when it carries it. */
function readSnmp(reply: Buffer): UdpServiceInfo | null {
  if (reply[0] !== 0x30 || !berLength(reply, 0)) return null;
  const header = berLength(reply, 0)!.header;
  if (reply[header] !== 0x02) return null;
  const at = reply.indexOf(SYS_DESCR_OID);
  let descr: string | null = null;
  if (at >= 0 && reply[at + SYS_DESCR_OID.length] === 0x04) {
    const len = berLength(reply, at + SYS_DESCR_OID.length);
    if (len) {
      const start = at + SYS_DESCR_OID.length + len.header;
      descr = printable(reply.subarray(start, start + len.length)) || null;
    }
  }
  return info('snmp', descr ? `community "public"; sysDescr: ${descr}` : 'answered with the community "public"');
}

/** NetBIOS node status request (NBSTAT) for the wildcard name `*`. */
function nbstat(): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(randomId(), 0);
  header.writeUInt16BE(1, 4);
  // `*` padded with NULs to 16 bytes, each nibble + 'A' (RFC 1001 first-level encoding).
  const encoded = Buffer.from('CK' + 'A'.repeat(30), 'ascii');
  return Buffer.concat([header, Buffer.from([0x20]), encoded, Buffer.from([0x00, 0x00, 0x21, 0x00, 0x01])]);
}

/** The first name of an NBSTAT answer (the machine's name), when the answer carries one. */
function readNbstat(reply: Buffer): UdpServiceInfo | null {
  if (!isDnsResponse(reply)) return null;
  // Header (12), the question name echoed (34), type, class, TTL, data length (10), the name count.
  const count = reply[56];
  const name = count > 0 && reply.length >= 57 + 15 ? printable(reply.subarray(57, 57 + 15)) : '';
  return info('netbios-ns', name ? `name: ${name}` : null);
}

/** An NTP client request (version 4, mode 3). */
function ntpRequest(): Buffer {
  const packet = Buffer.alloc(48);
  packet[0] = (4 << 3) | 3;
  return packet;
}

function readNtp(reply: Buffer): UdpServiceInfo | null {
  if (reply.length < 48) return null;
  const mode = reply[0] & 0x07;
  const version = (reply[0] >> 3) & 0x07;
  if (mode !== 4 && mode !== 2) return null;
  return info('ntp', `NTP v${version}, stratum ${reply[1]}`);
}

/** SSDP M-SEARCH sent to the host itself: a unicast search (UPnP 1.1), whose HOST names that host. */
function mSearch(host: string): Buffer {
  return Buffer.from(
    `M-SEARCH * HTTP/1.1\r\nHOST: ${host}:1900\r\nMAN: "ssdp:discover"\r\nMX: 1\r\nST: ssdp:all\r\nUSER-AGENT: Netwarden UDP probe\r\n\r\n`,
    'ascii',
  );
}

function readSsdp(reply: Buffer): UdpServiceInfo | null {
  const text = reply.toString('latin1');
  if (!/^HTTP\/1\.[01] \d{3}/.test(text) && !/^NOTIFY \* HTTP/.test(text)) return null;
  const server = /^server:[ \t]*(.+)$/im.exec(text)?.[1]?.trim() ?? null;
  return info('upnp', null, server ? printable(Buffer.from(server, 'latin1'), 120) : null);
}

/** A TFTP read request of a file no server has (any answer, even "file not found", means a server). */
function tftpRead(): Buffer {
  return Buffer.concat([Buffer.from([0x00, 0x01]), Buffer.from('netwarden-probe\0octet\0', 'ascii')]);
}

function readTftp(reply: Buffer): UdpServiceInfo | null {
  if (reply.length < 4 || reply[0] !== 0 || reply[1] < 3 || reply[1] > 5) return null;
  return info('tftp', reply[1] === 5 ? `error: ${printable(reply.subarray(4), 80) || 'unnamed'}` : null);
}

/** An ISAKMP (IKEv1) header opening Identity Protection mode: IKE daemons answer with a notification or an offer. */
function ikeHeader(): Buffer {
  const packet = Buffer.alloc(28);
  for (let i = 0; i < 8; i++) packet[i] = Math.floor(Math.random() * 256);
  packet[17] = 0x10; // version 1.0
  packet[18] = 2; // exchange: Identity Protection (Main Mode)
  packet.writeUInt32BE(28, 24);
  return packet;
}

function readIke(reply: Buffer): UdpServiceInfo | null {
  if (reply.length < 28) return null;
  const major = reply[17] >> 4;
  if (major !== 1 && major !== 2) return null;
  return info('isakmp', `IKEv${major}`);
}

/** The probes by port (nmap-services' names). */
export const UDP_PROBES: Readonly<Record<number, UdpProbe>> = {
  53: {
    service: 'domain',
    payload: () => dnsQuery('', 2, 0x0100),
    read: (reply) => (isDnsResponse(reply) ? info('domain', `answer: ${DNS_RCODES[reply[3] & 0x0f] ?? `rcode ${reply[3] & 0x0f}`}`) : null),
  },
  69: { service: 'tftp', payload: tftpRead, read: readTftp },
  123: { service: 'ntp', payload: ntpRequest, read: readNtp },
  137: { service: 'netbios-ns', payload: nbstat, read: readNbstat },
  161: { service: 'snmp', payload: snmpGet, read: readSnmp },
  500: { service: 'isakmp', payload: ikeHeader, read: readIke },
  1900: { service: 'upnp', payload: mSearch, read: readSsdp },
  5353: {
    service: 'mdns',
    payload: () => dnsQuery('_services._dns-sd._udp.local', 12, 0),
    read: (reply) => (isDnsResponse(reply) ? info('mdns') : null),
  },
};

/** What to send to UDP `port` of `host`: its service's request, else an empty datagram. */
export function udpPayload(port: number, host: string): Buffer {
  return UDP_PROBES[port]?.payload(host) ?? Buffer.alloc(0);
}

/** The name a UDP port usually carries, or null. */
export function udpPortName(port: number): string | null {
  return UDP_PROBES[port]?.service ?? UDP_PORT_NAMES[port] ?? null;
}

/**
 * A UDP port that answered, as a port row: the service its probe recognised in the answer, or
 * (another answer, or a port without a probe) only the port's usual name, marked as a guess.
 */
export function answeredUdpPort(port: number, reply: Buffer): ScannedPort {
  const recognised = UDP_PROBES[port]?.read(reply) ?? null;
  if (recognised) return { port, protocol: 'udp', state: 'open', ...recognised, cpe: [] };
  return guessedUdpPort(port, 'open');
}

/** A UDP port in `state` with only the port's usual name (marked as a guess) for a service. */
function guessedUdpPort(port: number, state: ScannedPort['state']): ScannedPort {
  const name = udpPortName(port);
  return {
    port,
    protocol: 'udp',
    state,
    service: name,
    product: null,
    version: null,
    extra_info: null,
    cpe: [],
    ...(name ? { service_guessed: true } : {}),
  };
}

/** A UDP port that never answered (nor refused): open, or dropped by a firewall. */
export function silentUdpPort(port: number): ScannedPort {
  return guessedUdpPort(port, 'open|filtered');
}
