#!/usr/bin/env node
/**
 * Recognition responders for one lab host: answers the probes of src/probes/ (mDNS by legacy
 * unicast, SSDP M-SEARCH with a device description served over HTTP, NetBIOS node status, SNMP
 * v2c) on one address, as a device of the given identity would. Meant to run inside a lab
 * namespace (10.66.0.0/23) on the protocols' own ports, or on 127.0.0.0/8 with port 0 (the ports
 * taken are then written to the --ready file). It refuses any other address, joins no multicast
 * group and sends only answers, to whoever asked.
 *
 *   node test/lab/responders.mjs --address 10.66.0.21 --name nas1 --model DS920+ \
 *     --vendor Synology --mac 02:00:00:00:00:21 --udn uuid:nas-1 [--only mdns,ssdp,netbios,snmp] \
 *     [--community public] [--engine-id 8000...] [--sysdescr TEXT] [--sysobjectid OID] \
 *     [--mdns-port 5353] [--ssdp-port 1900] [--netbios-port 137] [--snmp-port 161] [--http-port 0] \
 *     [--ready FILE]
 *
 * --ready FILE receives `{"address", "ports": {"mdns", "ssdp", "netbios", "snmp", "http"}}` once
 * every responder listens. SIGTERM or SIGINT closes them all.
 */
import dgram from 'node:dgram';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { parseArgs } from 'node:util';
import makeMdns from 'multicast-dns';
import snmp from 'net-snmp';

const { values: opts } = parseArgs({
  options: {
    address: { type: 'string' },
    name: { type: 'string', default: 'device' },
    model: { type: 'string', default: 'Model 1' },
    vendor: { type: 'string', default: 'Netwarden Lab' },
    mac: { type: 'string', default: '02:00:00:00:00:01' },
    udn: { type: 'string' },
    only: { type: 'string', default: 'mdns,ssdp,netbios,snmp' },
    community: { type: 'string', default: 'public' },
    'engine-id': { type: 'string' },
    sysdescr: { type: 'string' },
    sysobjectid: { type: 'string', default: '1.3.6.1.4.1.8072.3.2.10' },
    'mdns-port': { type: 'string', default: '5353' },
    'ssdp-port': { type: 'string', default: '1900' },
    'netbios-port': { type: 'string', default: '137' },
    'snmp-port': { type: 'string', default: '161' },
    'http-port': { type: 'string', default: '0' },
    ready: { type: 'string' },
  },
});

function die(message) {
  process.stderr.write(`responders: ${message}\n`);
  process.exit(2);
}

const address = opts.address ?? die('--address is required');
const octets = address.split('.').map(Number);
const ipv4 = octets.length === 4 && octets.every((o) => Number.isInteger(o) && o >= 0 && o <= 255);
const loopback = ipv4 && octets[0] === 127;
const lab = ipv4 && octets[0] === 10 && octets[1] === 66 && octets[2] <= 1;
if (!loopback && !lab) die(`${address} is neither loopback (127.0.0.0/8) nor the namespace lab (10.66.0.0/23)`);

function portOption(name) {
  const port = Number(opts[`${name}-port`]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) die(`--${name}-port must be 0..65535`);
  return port;
}
const macBytes = Buffer.from(opts.mac.split(/[:-]/).map((h) => parseInt(h, 16)));
if (macBytes.length !== 6 || macBytes.some((b) => Number.isNaN(b))) die('--mac must be six hex octets');
const only = new Set(opts.only.split(',').map((s) => s.trim()));
const udn = opts.udn ?? `uuid:${opts.name}-0000-0000-0000-${macBytes.toString('hex')}`;
const host = `${opts.name}.local`;
const closers = [];
const ports = {};

function udpSocket(port) {
  const socket = dgram.createSocket('udp4');
  socket.on('error', (err) => process.stderr.write(`responders: ${err.message}\n`));
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, address, () => {
      socket.removeListener('error', reject);
      closers.push(() => socket.close());
      resolve(socket);
    });
  });
}

/** A port free on the address right now (net-snmp's agent cannot bind port 0 and tell which it got). */
async function freePort() {
  const socket = dgram.createSocket('udp4');
  await new Promise((resolve) => socket.bind(0, address, resolve));
  const { port } = socket.address();
  await new Promise((resolve) => socket.close(resolve));
  return port;
}

function escapeXml(text) {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]);
}

async function startHttp() {
  const description = `<?xml version="1.0"?>
<root xmlns="urn:schemas-upnp-org:device-1-0">
  <specVersion><major>1</major><minor>0</minor></specVersion>
  <device>
    <deviceType>urn:schemas-upnp-org:device:Basic:1</deviceType>
    <friendlyName>${escapeXml(opts.name)}</friendlyName>
    <manufacturer>${escapeXml(opts.vendor)}</manufacturer>
    <modelName>${escapeXml(opts.model)}</modelName>
    <modelNumber>${escapeXml(opts.model)}</modelNumber>
    <UDN>${escapeXml(udn)}</UDN>
  </device>
</root>`;
  const server = http.createServer((req, res) => {
    if (req.url !== '/description.xml') {
      res.statusCode = 404;
      return res.end();
    }
    res.setHeader('Content-Type', 'text/xml; charset="utf-8"');
    res.end(description);
  });
  await new Promise((resolve) => server.listen(portOption('http'), address, resolve));
  closers.push(() => server.close());
  ports.http = server.address().port;
}

async function startSsdp() {
  const socket = await udpSocket(portOption('ssdp'));
  ports.ssdp = socket.address().port;
  socket.on('message', (msg, from) => {
    if (msg.length > 4096 || !msg.toString('latin1').startsWith('M-SEARCH * HTTP/1.1')) return;
    const answer = [
      'HTTP/1.1 200 OK',
      'CACHE-CONTROL: max-age=1800',
      'EXT:',
      `LOCATION: http://${address}:${ports.http}/description.xml`,
      `SERVER: Linux/6.1 UPnP/1.0 ${opts.vendor.replace(/\s+/g, '')}/1.0`,
      'ST: upnp:rootdevice',
      `USN: ${udn}::upnp:rootdevice`,
      '',
      '',
    ].join('\r\n');
    socket.send(Buffer.from(answer, 'latin1'), from.port, from.address);
  });
}

async function startMdns() {
  const socket = await udpSocket(portOption('mdns'));
  ports.mdns = socket.address().port;
  const mdns = makeMdns({ socket, multicast: false, bind: false, ip: address, port: ports.mdns });
  mdns.on('warning', () => {});
  const instance = `${opts.name}._http._tcp.local`;
  const records = [
    { name: '_services._dns-sd._udp.local', type: 'PTR', data: '_http._tcp.local' },
    { name: '_http._tcp.local', type: 'PTR', data: instance },
    { name: instance, type: 'SRV', data: { target: host, port: ports.http ?? 80, priority: 0, weight: 0 } },
    { name: instance, type: 'TXT', data: ['path=/'] },
    { name: `${opts.name}._device-info._tcp.local`, type: 'TXT', data: [`model=${opts.model}`] },
    { name: `${octets.slice().reverse().join('.')}.in-addr.arpa`, type: 'PTR', data: host },
    { name: host, type: 'A', data: address },
  ];
  mdns.on('query', (query, from) => {
    // Only legacy unicast questions (from a port other than 5353) are answered, to the asker.
    const answers = [];
    for (const q of query.questions.slice(0, 8)) {
      for (const r of records) if (r.name.toLowerCase() === q.name.toLowerCase() && (q.type === 'ANY' || q.type === r.type)) answers.push(r);
    }
    if (answers.length) mdns.respond({ id: query.id, questions: query.questions, answers }, { port: from.port, address: from.address });
  });
}

function nbstatAnswer(request) {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(request.readUInt16BE(0), 0);
  header.writeUInt16BE(0x8400, 2);
  header.writeUInt16BE(1, 6);
  const names = [
    { name: opts.name.toUpperCase().slice(0, 15), suffix: 0x00, group: false },
    { name: opts.name.toUpperCase().slice(0, 15), suffix: 0x20, group: false },
    { name: 'WORKGROUP', suffix: 0x00, group: true },
  ];
  const entries = names.map((n) => {
    const e = Buffer.alloc(18, 0x20);
    e.write(n.name, 0, 'latin1');
    e[15] = n.suffix;
    e.writeUInt16BE((n.group ? 0x8000 : 0) | 0x0400, 16);
    return e;
  });
  const rdata = Buffer.concat([Buffer.from([names.length]), ...entries, macBytes, Buffer.alloc(40)]);
  const rr = Buffer.alloc(10);
  rr.writeUInt16BE(0x21, 0);
  rr.writeUInt16BE(1, 2);
  rr.writeUInt16BE(rdata.length, 8);
  return Buffer.concat([header, request.subarray(12, 46), rr, rdata]);
}

async function startNetbios() {
  const socket = await udpSocket(portOption('netbios'));
  ports.netbios = socket.address().port;
  socket.on('message', (msg, from) => {
    if (msg.length === 50 && msg[12] === 32 && msg.readUInt16BE(46) === 0x21) socket.send(nbstatAnswer(msg), from.port, from.address);
  });
}

async function startSnmp() {
  const port = portOption('snmp') || (await freePort());
  const agent = snmp.createAgent({ port, address, disableAuthorization: false }, () => {});
  const mib = agent.getMib();
  const scalar = (name, oid, type, value) => {
    mib.registerProvider({ name, type: snmp.MibProviderType.Scalar, oid, scalarType: type, maxAccess: snmp.MaxAccess['read-only'] });
    mib.setScalarValue(name, value);
  };
  scalar('sysDescr', '1.3.6.1.2.1.1.1', snmp.ObjectType.OctetString, opts.sysdescr ?? `${opts.vendor} ${opts.model}`);
  scalar('sysObjectID', '1.3.6.1.2.1.1.2', snmp.ObjectType.OID, opts.sysobjectid);
  scalar('sysName', '1.3.6.1.2.1.1.5', snmp.ObjectType.OctetString, opts.name);
  const engineId = opts['engine-id'] ?? `80001f8803${macBytes.toString('hex')}`;
  scalar('snmpEngineID', '1.3.6.1.6.3.10.2.1.1', snmp.ObjectType.OctetString, Buffer.from(engineId, 'hex'));
  agent.getAuthorizer().addCommunity(opts.community);
  closers.push(() => agent.close());
  ports.snmp = port;
}

// HTTP first: the SSDP answer and the mDNS SRV name its port.
if (only.has('ssdp') || only.has('mdns')) await startHttp();
if (only.has('mdns')) await startMdns();
if (only.has('ssdp')) await startSsdp();
if (only.has('netbios')) await startNetbios();
if (only.has('snmp')) await startSnmp();

if (opts.ready) writeFileSync(opts.ready, JSON.stringify({ address, ports }));
process.stderr.write(`responders: ${opts.name} on ${address} ${JSON.stringify(ports)}\n`);

const stop = () => {
  for (const close of closers) {
    try {
      close();
    } catch {
      // already closed
    }
  }
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
