/**
 * Real UDP responders for the probe tests, each bound to a 127.0.0.0/8 address on a port the OS
 * chooses (network-safety rule: nothing else is listened on or sent to): an mDNS responder
 * answering legacy unicast queries from a record list (multicast-dns's codec, no group joined),
 * an SSDP responder, a NetBIOS node-status responder, an SNMP agent (net-snmp's own), and the raw
 * responder they are built on, which tests also use to send silence, garbage or oversized answers.
 */
import dgram from 'node:dgram';
import makeMdns from 'multicast-dns';
import snmp from 'net-snmp';
import type { Answer } from 'dns-packet';

export function assertLoopback(host: string): void {
  if (!/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) throw new Error(`tests listen on 127.0.0.0/8 only, not ${host}`);
}

export interface UdpResponder {
  host: string;
  port: number;
  /** Every datagram received, with where it came from. */
  received: { msg: Buffer; from: dgram.RemoteInfo }[];
  close(): Promise<void>;
}

type Reply = (answer: Buffer) => void;

/** A UDP socket on `host` that calls `answer` for each datagram; `reply` sends back to the sender. */
export async function udpResponder(host: string, answer: (msg: Buffer, reply: Reply, from: dgram.RemoteInfo) => void): Promise<UdpResponder> {
  assertLoopback(host);
  const socket = dgram.createSocket('udp4');
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.bind(0, host, resolve));
  const received: UdpResponder['received'] = [];
  socket.on('message', (msg, from) => {
    received.push({ msg, from });
    answer(msg, (buf) => socket.send(buf, from.port, from.address), from);
  });
  return {
    host,
    port: socket.address().port,
    received,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** A free UDP port on `host` (for servers that cannot bind port 0 and say which they got). */
export async function freeUdpPort(host: string): Promise<number> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, host, resolve));
  const port = socket.address().port;
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

export interface MdnsResponderOptions {
  /** Answers only a query's first question, as small embedded responders do. Default true. */
  firstQuestionOnly?: boolean;
  /** Names whose PTR answers carry the instance's SRV/TXT as additional records. */
  withAdditionals?: string[];
}

/** An mDNS responder answering unicast queries from `records`, silent when it has no matching record. */
export async function mdnsResponder(host: string, records: Answer[], options: MdnsResponderOptions = {}): Promise<UdpResponder> {
  assertLoopback(host);
  const socket = dgram.createSocket('udp4');
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.bind(0, host, resolve));
  const mdns = makeMdns({ socket, multicast: false, bind: false, ip: host, port: 9 });
  mdns.on('warning', () => {});
  const received: UdpResponder['received'] = [];
  const additionalsFor = new Set((options.withAdditionals ?? []).map((n) => n.toLowerCase()));
  mdns.on('query', (query, from) => {
    received.push({ msg: Buffer.alloc(0), from });
    const questions = options.firstQuestionOnly === false ? query.questions : query.questions.slice(0, 1);
    const answers: Answer[] = [];
    for (const q of questions) {
      for (const r of records) {
        if (r.name.toLowerCase() === q.name.toLowerCase() && ((q.type as string) === 'ANY' || q.type === r.type)) answers.push(r);
      }
    }
    if (answers.length === 0) return;
    const additionals: Answer[] = [];
    for (const a of answers) {
      if (a.type === 'PTR' && additionalsFor.has(a.name.toLowerCase())) {
        const target = a.data.toLowerCase();
        additionals.push(...records.filter((r) => r.name.toLowerCase() === target && (r.type === 'SRV' || r.type === 'TXT')));
      }
    }
    mdns.respond({ id: query.id, answers, additionals }, { port: from.port, address: from.address });
  });
  return {
    host,
    port: socket.address().port,
    received,
    close: () => new Promise<void>((resolve) => mdns.destroy(() => resolve())),
  };
}

/** An SSDP responder answering M-SEARCH with `headers` (LOCATION, SERVER, USN, …). */
export function ssdpResponder(host: string, headers: Record<string, string>): Promise<UdpResponder> {
  return udpResponder(host, (msg, reply) => {
    if (!msg.toString('latin1').startsWith('M-SEARCH * HTTP/1.1')) return;
    const lines = ['HTTP/1.1 200 OK', 'CACHE-CONTROL: max-age=1800', 'EXT:', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    reply(Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'));
  });
}

export interface NbName {
  name: string;
  suffix: number;
  group?: boolean;
}

/** A node status answer (RFC 1002 §4.2.18) to request `request`, listing `names` and `mac`. */
export function nbstatAnswer(request: Buffer, names: NbName[], mac: Buffer): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(request.readUInt16BE(0), 0);
  header.writeUInt16BE(0x8400, 2); // response, authoritative
  header.writeUInt16BE(1, 6); // one answer
  const question = request.subarray(12, 12 + 34); // the encoded `*` name, as asked
  const rrHead = Buffer.alloc(10);
  rrHead.writeUInt16BE(0x21, 0);
  rrHead.writeUInt16BE(1, 2);
  rrHead.writeUInt32BE(0, 4);
  const entries = names.map((n) => {
    const e = Buffer.alloc(18, 0x20);
    e.write(n.name.slice(0, 15), 0, 'latin1');
    e[15] = n.suffix;
    e.writeUInt16BE((n.group ? 0x8000 : 0) | 0x0400, 16);
    return e;
  });
  const stats = Buffer.concat([mac, Buffer.alloc(40)]);
  const rdata = Buffer.concat([Buffer.from([names.length]), ...entries, stats]);
  rrHead.writeUInt16BE(rdata.length, 8);
  return Buffer.concat([header, question, rrHead, rdata]);
}

/** A NetBIOS responder answering node-status queries. */
export function netbiosResponder(host: string, names: NbName[], mac: Buffer): Promise<UdpResponder> {
  return udpResponder(host, (msg, reply) => {
    if (msg.length >= 50 && msg.readUInt16BE(msg.length - 4) === 0x21) reply(nbstatAnswer(msg, names, mac));
  });
}

export interface SnmpAgent {
  host: string;
  port: number;
  close(): Promise<void>;
}

export interface SnmpAgentOptions {
  communities: string[];
  sysDescr: string;
  sysObjectID: string;
  sysName: string;
  /** hex; absent: the agent has no snmpEngineID object (answers noSuchObject). */
  engineId?: string;
  /** Rows of BRIDGE-MIB dot1dTpFdbTable: a MAC learned behind a bridge port (served when given). */
  bridge?: { mac: string; port: number }[];
  /** Rows of LLDP-MIB lldpRemTable: a neighbour on a local port (served when given). */
  lldp?: { localPort: number; chassisMac: string; sysName: string }[];
  /** The agent's port (default: a free one); 161 for a scan's probe, which asks the well-known port. */
  port?: number;
}

/** net-snmp's agent on `host`, serving the system group (and snmpEngineID when given). */
export async function snmpAgent(host: string, options: SnmpAgentOptions): Promise<SnmpAgent> {
  assertLoopback(host);
  const port = options.port ?? (await freeUdpPort(host));
  const agent = snmp.createAgent({ port, address: host, disableAuthorization: false }, () => {});
  const mib = agent.getMib();
  const scalar = (name: string, oid: string, type: number, value: unknown) => {
    mib.registerProvider({ name, type: snmp.MibProviderType.Scalar, oid, scalarType: type, maxAccess: snmp.MaxAccess['read-only'] });
    mib.setScalarValue(name, value);
  };
  scalar('sysDescr', '1.3.6.1.2.1.1.1', snmp.ObjectType.OctetString, options.sysDescr);
  scalar('sysObjectID', '1.3.6.1.2.1.1.2', snmp.ObjectType.OID, options.sysObjectID);
  scalar('sysName', '1.3.6.1.2.1.1.5', snmp.ObjectType.OctetString, options.sysName);
  if (options.engineId) scalar('snmpEngineID', '1.3.6.1.6.3.10.2.1.1', snmp.ObjectType.OctetString, Buffer.from(options.engineId, 'hex'));
  const column = (number: number, name: string, type: number) => ({ number, name, type, maxAccess: snmp.MaxAccess['read-only'] });
  const macBytes = (mac: string) => Buffer.from(mac.replace(/:/g, ''), 'hex');
  if (options.bridge) {
    mib.registerProvider({
      name: 'dot1dTpFdbTable',
      type: snmp.MibProviderType.Table,
      oid: '1.3.6.1.2.1.17.4.3.1',
      maxAccess: snmp.MaxAccess['not-accessible'],
      tableColumns: [
        column(1, 'dot1dTpFdbAddress', snmp.ObjectType.OctetString),
        column(2, 'dot1dTpFdbPort', snmp.ObjectType.Integer),
        column(3, 'dot1dTpFdbStatus', snmp.ObjectType.Integer),
      ],
      // MacAddress is a fixed-size string: its six octets are the index, without a length.
      tableIndex: [{ columnName: 'dot1dTpFdbAddress', length: 6 }],
    });
    for (const row of options.bridge) mib.addTableRow('dot1dTpFdbTable', [macBytes(row.mac), row.port, 3]);
  }
  if (options.lldp) {
    mib.registerProvider({
      name: 'lldpRemTable',
      type: snmp.MibProviderType.Table,
      oid: '1.0.8802.1.1.2.1.4.1.1',
      maxAccess: snmp.MaxAccess['not-accessible'],
      tableColumns: [
        column(1, 'lldpRemTimeMark', snmp.ObjectType.TimeTicks),
        column(2, 'lldpRemLocalPortNum', snmp.ObjectType.Integer),
        column(3, 'lldpRemIndex', snmp.ObjectType.Integer),
        column(4, 'lldpRemChassisIdSubtype', snmp.ObjectType.Integer),
        column(5, 'lldpRemChassisId', snmp.ObjectType.OctetString),
        column(9, 'lldpRemSysName', snmp.ObjectType.OctetString),
      ],
      tableIndex: [{ columnName: 'lldpRemTimeMark' }, { columnName: 'lldpRemLocalPortNum' }, { columnName: 'lldpRemIndex' }],
    });
    options.lldp.forEach((n, i) => mib.addTableRow('lldpRemTable', [0, n.localPort, i + 1, 4, macBytes(n.chassisMac), n.sysName]));
  }
  for (const community of options.communities) agent.getAuthorizer().addCommunity(community);
  return { host, port, close: () => new Promise<void>((resolve) => agent.close(() => resolve())) };
}
