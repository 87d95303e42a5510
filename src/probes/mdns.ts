/**
 * mDNS / DNS-SD, asked by unicast: DNS queries sent straight to the host's UDP 5353 from an
 * ephemeral port ("legacy unicast", RFC 6762 §6.7), which responders answer to that port alone.
 * Nothing is sent to the mDNS multicast group and the socket joins no group: the datagram goes to
 * the host's own address, with multicast-dns (its packet codec, dns-packet) on a socket of ours.
 *
 * Three rounds, one question per datagram (small responders answer only a packet's first):
 * 1. the service types (`_services._dns-sd._udp.local` PTR), the host's name (reverse PTR of its
 *    address) and `_device-info._tcp.local`;
 * 2. each type's instances (PTR);
 * 3. the instances' SRV and TXT not already answered, and `<name>._device-info._tcp.local` TXT
 *    (`model=` on Apple devices and others) for the host's name and first instances.
 * A responder is silent about what it does not have, so a round ends when every question was
 * answered or nothing came for a short while. No answer to round 1: the host speaks no mDNS (null).
 */
import { isIP } from 'node:net';
import makeMdns from 'multicast-dns';
import type { Answer, Question } from 'dns-packet';
import type { MdnsResult } from '../core/probe-results.js';
import { connectedUdp, deadlineSignal, isRefused, isUnicastHost, pinDestination, portOf, quietly, timeoutOf, type ProbeOptions } from './common.js';
import { cleanText } from './text.js';

export const MDNS_PORT = 5353;

/** Bounds on what one host's answers may add: beyond these it is noise, not a device. */
const MAX_RECORDS = 1000;
const MAX_SERVICES = 32;
const MAX_INSTANCES = 64;
const MAX_NAMES = 16;
const MAX_TXT_KEYS = 64;
/** Instances whose SRV/TXT are asked for in round 3 (each one costs two datagrams). */
const MAX_INSTANCE_QUERIES = 24;

const SERVICES_NAME = '_services._dns-sd._udp.local';
const DEVICE_INFO = '_device-info._tcp.local';
const SERVICE_TYPE = /^(_[a-z0-9-]{1,63}\._(?:tcp|udp))\.local$/i;
/** `<instance label>.<service type>.local`, the label not itself a service name. */
const INSTANCE_NAME = /^[^_].*\._[a-z0-9-]{1,63}\._(?:tcp|udp)\.local$/i;

/** `4.3.2.1.in-addr.arpa` for 1.2.3.4; the nibble form for IPv6. */
export function reverseName(ip: string): string {
  if (isIP(ip) === 4) return `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
  const groups = ip.split('::');
  const head = groups[0] ? groups[0].split(':') : [];
  const tail = groups.length > 1 && groups[1] ? groups[1].split(':') : [];
  const full = [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail];
  const hex = full.map((g) => g.padStart(4, '0')).join('');
  return `${[...hex].reverse().join('.')}.ip6.arpa`;
}

function lowerName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/** One TXT record's strings as key/values; keys lower-case, a key without `=` is a flag (empty value). */
function txtPairs(data: unknown): [string, string][] {
  const items = Array.isArray(data) ? data : [data];
  const out: [string, string][] = [];
  for (const item of items) {
    const text = Buffer.isBuffer(item) ? item.toString('utf8') : typeof item === 'string' ? item : '';
    if (!text) continue;
    const eq = text.indexOf('=');
    const key = cleanText(eq < 0 ? text : text.slice(0, eq), 64)?.toLowerCase();
    if (!key) continue;
    out.push([key, eq < 0 ? '' : (cleanText(text.slice(eq + 1), 255) ?? '')]);
  }
  return out;
}

class Findings {
  readonly names = new Set<string>();
  readonly services = new Set<string>();
  readonly instances = new Set<string>();
  /** Instance (lower-case) → whether its SRV / TXT came. */
  readonly srvSeen = new Set<string>();
  readonly txtSeen = new Set<string>();
  /** `<name>._device-info._tcp.local`, when the host lists them. */
  readonly deviceInfoNames = new Set<string>();
  readonly deviceInfo = new Map<string, string>();
  readonly serviceTxt = new Map<string, string>();
  records = 0;

  constructor(private readonly host: string) {}

  add(record: Answer): void {
    if (this.records >= MAX_RECORDS) return;
    this.records++;
    const name = typeof record.name === 'string' ? record.name : '';
    const lname = lowerName(name);
    switch (record.type) {
      case 'PTR': {
        const data = typeof record.data === 'string' ? record.data.replace(/\.$/, '') : '';
        if (!data) return;
        if (lname === SERVICES_NAME) {
          const type = SERVICE_TYPE.exec(data);
          if (type && this.services.size < MAX_SERVICES) this.services.add(type[1].toLowerCase());
        } else if (lname.endsWith('.in-addr.arpa') || lname.endsWith('.ip6.arpa')) {
          this.addName(data);
        } else if (lname === DEVICE_INFO) {
          if (this.deviceInfoNames.size < 8) this.deviceInfoNames.add(data);
        } else if (SERVICE_TYPE.test(lname)) {
          if (this.services.size < MAX_SERVICES) this.services.add(SERVICE_TYPE.exec(lname)![1]);
          this.addInstance(data);
        }
        return;
      }
      case 'SRV': {
        this.addInstance(name);
        this.srvSeen.add(lname);
        const target = record.data && typeof record.data === 'object' && 'target' in record.data ? record.data.target : null;
        if (typeof target === 'string') this.addName(target);
        return;
      }
      case 'TXT': {
        const into = lname.endsWith(`.${DEVICE_INFO}`) ? this.deviceInfo : this.serviceTxt;
        if (into === this.serviceTxt) {
          this.addInstance(name);
          this.txtSeen.add(lname);
        }
        for (const [key, value] of txtPairs(record.data)) {
          if (into.size >= MAX_TXT_KEYS) break;
          if (!into.has(key)) into.set(key, value);
        }
        return;
      }
      case 'A':
      case 'AAAA':
        if (record.data === this.host) this.addName(name);
        return;
      default:
        return;
    }
  }

  private addName(name: string): void {
    const clean = cleanText(lowerName(name), 255);
    if (clean && this.names.size < MAX_NAMES) this.names.add(clean);
  }

  private addInstance(name: string): void {
    const clean = cleanText(name.replace(/\.$/, ''), 255);
    if (!clean || !INSTANCE_NAME.test(clean) || clean.toLowerCase().endsWith(`.${DEVICE_INFO}`)) return;
    if (this.instances.size < MAX_INSTANCES) this.instances.add(clean);
  }

  result(): MdnsResult {
    // `_device-info` speaks for the device itself: its keys win over a service's.
    const txt: Record<string, string> = Object.fromEntries(this.serviceTxt);
    for (const [key, value] of this.deviceInfo) txt[key] = value;
    return { names: [...this.names], services: [...this.services], instances: [...this.instances], txt };
  }
}

export async function probeMdns(host: string, options: ProbeOptions = {}): Promise<MdnsResult | null> {
  if (!isUnicastHost(host)) return null;
  return quietly(() => run(host, options));
}

async function run(host: string, options: ProbeOptions): Promise<MdnsResult | null> {
  const port = portOf(options, MDNS_PORT);
  // Ends the probe at once when the host says nothing listens on its mDNS port.
  const refused = new AbortController();
  const signal = AbortSignal.any([deadlineSignal(options), refused.signal]);
  const total = timeoutOf(options);
  /** Silence that ends a round once it has had an answer (responders delay shared answers up to 120 ms). */
  const quietMs = Math.min(300, Math.max(100, total / 6));
  const socket = await connectedUdp(host, port);
  if (!socket) return null;
  socket.on('error', (error) => {
    if (isRefused(error)) refused.abort();
  });
  // Our socket, connected to the host's port: multicast-dns neither binds it nor joins a group
  // (multicast: false), and whatever destination it passes to send, the datagram can only go to
  // the host (the library's own default destination, the group, is never reachable).
  pinDestination(socket);
  const mdns = makeMdns({ socket, multicast: false, bind: false, ip: host, port });
  mdns.on('error', () => {});
  mdns.on('warning', () => {});
  const findings = new Findings(host);
  const pending = new Set<number>();
  let answered = 0;
  let nudge: (() => void) | null = null;
  mdns.on('response', (packet, rinfo) => {
    if (rinfo.address !== host || rinfo.port !== port) return;
    answered++;
    pending.delete(packet.id ?? -1);
    for (const record of [...(packet.answers ?? []), ...(packet.additionals ?? [])]) findings.add(record);
    nudge?.();
  });
  let nextId = 1 + Math.floor(Math.random() * 30000);

  /** Sends each question in its own datagram; resolves when all were answered, on silence, or at the deadline. */
  const ask = async (questions: Question[], firstWaitMs: number): Promise<void> => {
    if (signal.aborted || questions.length === 0) return;
    for (const question of questions) {
      const id = nextId++ & 0xffff;
      pending.add(id);
      mdns.query({ id, type: 'query', questions: [question] }, { port, address: host });
    }
    let wait = firstWaitMs;
    while (pending.size > 0 && !signal.aborted) {
      const seen = answered;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          nudge = null;
          resolve();
        };
        const timer = setTimeout(done, wait);
        signal.addEventListener('abort', done, { once: true });
        nudge = done;
      });
      if (answered === seen) break; // silence: the rest will not come
      wait = quietMs;
    }
    pending.clear();
  };

  try {
    await ask(
      [
        { name: SERVICES_NAME, type: 'PTR' },
        { name: reverseName(host), type: 'PTR' },
        { name: DEVICE_INFO, type: 'PTR' },
      ],
      total,
    );
    if (answered === 0) return null;
    await ask(
      [...findings.services].map((type) => ({ name: `${type}.local`, type: 'PTR' as const })),
      quietMs,
    );
    const instances = [...findings.instances];
    const round3: Question[] = [];
    for (const instance of instances.slice(0, MAX_INSTANCE_QUERIES)) {
      const lname = instance.toLowerCase();
      if (!findings.srvSeen.has(lname)) round3.push({ name: instance, type: 'SRV' });
      if (!findings.txtSeen.has(lname)) round3.push({ name: instance, type: 'TXT' });
    }
    if (findings.deviceInfo.size === 0) {
      const names = new Set([...findings.deviceInfoNames].map((n) => n.toLowerCase()));
      for (const name of findings.names) if (name.endsWith('.local')) names.add(`${name.slice(0, -'.local'.length)}.${DEVICE_INFO}`);
      for (const instance of instances.slice(0, 4)) names.add(`${instance.slice(0, instance.indexOf('.')).toLowerCase()}.${DEVICE_INFO}`);
      for (const name of [...names].slice(0, 8)) round3.push({ name, type: 'TXT' });
    }
    await ask(round3, quietMs);
    return findings.result();
  } finally {
    mdns.destroy();
  }
}
