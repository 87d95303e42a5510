/** Mapping nmap's XML output (`-oX`) to scan results, and reading its live progress. Pure. */
import { XMLParser } from 'fast-xml-parser';
import type { ScannedHost, ScannedPort } from './model.js';
import { normalizeMac } from './mac.js';
import { checkHostInput, cleanHostname, reportLocator, type HostInput } from './scan-input.js';

export interface NmapRun {
  hosts: ScannedHost[];
  /** Hosts nmap reported as down (only listed when it lists them, e.g. with -v or --reason). */
  down: string[];
  /** `exit` attribute of <finished>: `success` or `error`. */
  exit: string | null;
  /** nmap's own error message when it gave one (`errormsg`). */
  error: string | null;
  elapsedSeconds: number | null;
}

const ARRAY_ELEMENTS = new Set(['host', 'scaninfo', 'address', 'hostname', 'port', 'cpe', 'osmatch', 'osclass', 'extraports', 'script']);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseAttributeValue: false,
  parseTagValue: false,
  processEntities: true,
  isArray: (name) => ARRAY_ELEMENTS.has(name),
  // isArray needs the tag's name only: no path text built for every element (a tenth of a large report's parse, profiled).
  jPath: false,
});

type Node = Record<string, unknown>;

function nodes(value: unknown): Node[] {
  return Array.isArray(value) ? (value as Node[]) : value && typeof value === 'object' ? [value as Node] : [];
}

function text(value: unknown): string | null {
  if (typeof value === 'string') return value.trim() || null;
  if (value && typeof value === 'object' && '#text' in value) return text((value as Node)['#text']);
  return null;
}

/** Parses a complete nmap XML document. Throws on XML that is not an nmap run. */
export function parseNmapXml(xml: string): NmapRun {
  const doc = parser.parse(xml) as Node;
  const run = doc.nmaprun as Node | undefined;
  if (!run) throw new Error('not an nmap XML document (no <nmaprun>)');
  const hosts: ScannedHost[] = [];
  const down: string[] = [];
  for (const host of nodes(run.host)) {
    const read = readHost(host);
    if (read?.up) hosts.push(read.host);
    else if (read) down.push(read.ip);
  }
  return { hosts, down, ...finishedOf((run.runstats as Node | undefined)?.finished as Node | undefined) };
}

/** What a whole report says besides its hosts (for importing it as a scan: core/nmap-import.ts). */
export interface NmapReport extends NmapRun {
  /** The command line nmap recorded (`args` of <nmaprun>), numeric character references decoded. */
  args: string | null;
  /** When the run started (`start` of <nmaprun>, Unix seconds), as ISO 8601; null when absent. */
  startedAt: string | null;
  /** nmap's version (`version` of <nmaprun>). */
  version: string | null;
  /** The ports examined, one nmap port list per <scaninfo> (per protocol); empty for discovery only (-sn). */
  scanned: { protocol: string; services: string }[];
  /** Whether any host has an OS match (the run used -O). */
  osDetection: boolean;
  /** Hosts without an IPv4 address (IPv6 runs): their address and whether nmap saw them up. */
  otherHosts: { address: string; addrtype: string; up: boolean }[];
}

/**
 * Parses a complete nmap XML report with what describes the run (arguments, start, the ports
 * examined) and the hosts it could not map (no IPv4 address). Throws on XML that is not an nmap
 * run, and ScanInputError (core/scan-input.ts) naming the first value of a host out of bounds
 * (`host 3 address "010.0.0.1": …`, hosts counted from 1 in document order). The caller checks
 * the document first (core/nmap-import.ts): this parser is not for untrusted documents with a DTD.
 */
export function parseNmapReport(xml: string): NmapReport {
  const doc = parser.parse(xml) as Node;
  const run = doc.nmaprun as Node | undefined;
  if (!run || typeof run !== 'object') throw new Error('not an nmap XML document (no <nmaprun>)');
  const hosts: ScannedHost[] = [];
  const down: string[] = [];
  const otherHosts: NmapReport['otherHosts'] = [];
  let osDetection = false;
  for (const [i, host] of nodes(run.host).entries()) {
    if (nodes(host.address).some((a) => a.addrtype === 'ipv4')) checkHostInput(reportHostInput(host), reportLocator(i + 1));
    const read = readHost(host);
    if (read?.up) {
      hosts.push(read.host);
      osDetection ||= nodes((host.os as Node | undefined)?.osmatch).length > 0;
    } else if (read) down.push(read.ip);
    else {
      const address = nodes(host.address).find((a) => a.addrtype !== 'mac');
      if (typeof address?.addr === 'string') {
        otherHosts.push({
          address: address.addr,
          addrtype: typeof address.addrtype === 'string' ? address.addrtype : 'unknown',
          up: (host.status as Node | undefined)?.state === 'up',
        });
      }
    }
  }
  const start = Number(run.start);
  return {
    hosts,
    down,
    ...finishedOf((run.runstats as Node | undefined)?.finished as Node | undefined),
    args: typeof run.args === 'string' ? decodeCharacterReferences(run.args) : null,
    startedAt: Number.isFinite(start) && start > 0 ? new Date(start * 1000).toISOString() : null,
    version: typeof run.version === 'string' ? run.version : null,
    scanned: nodes(run.scaninfo).flatMap((info) =>
      typeof info.services === 'string' ? [{ protocol: typeof info.protocol === 'string' ? info.protocol : 'tcp', services: info.services }] : [],
    ),
    osDetection,
    otherHosts,
  };
}

/** A report's <host> element as core/scan-input.ts checks it: its attributes as written. */
function reportHostInput(host: Node): HostInput {
  const addresses = nodes(host.address);
  const mac = addresses.find((a) => a.addrtype === 'mac');
  // The best OS match is what is kept (mapHost).
  const os = bestOsMatch(host.os as Node | undefined);
  return {
    ip: addresses.find((a) => a.addrtype === 'ipv4')?.addr,
    mac: mac?.addr,
    vendor: mac?.vendor,
    hostnames: nodes((host.hostnames as Node | undefined)?.hostname).map((h) =>
      typeof h.name === 'string' ? decodeCharacterReferences(h.name) : h.name,
    ),
    os_name: os.name,
    device_type: os.deviceType,
    ports: nodes((host.ports as Node | undefined)?.port).map((port) => {
      const service = (port.service as Node | undefined) ?? {};
      return {
        // The protocol is not checked: nmap writes sctp too, recorded as tcp (mapPort).
        port: port.portid,
        state: (port.state as Node | undefined)?.state,
        service: service.name,
        product: service.product,
        version: service.version,
        extra_info: service.extrainfo,
        cpe: nodes(service.cpe).map(text),
        scripts: nodes(port.script).map((script) => ({ id: script.id, output: script.output })),
      };
    }),
  };
}

/** `&#45;` and `&#x2d;` as characters (nmap writes `--` in its arguments as `-&#45;`; the parser leaves numeric references). */
function decodeCharacterReferences(text: string): string {
  return text.replace(/&#(x[0-9a-f]+|\d+);/gi, (ref, code: string) => {
    const n = code[0] === 'x' || code[0] === 'X' ? parseInt(code.slice(1), 16) : Number(code);
    return n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : ref;
  });
}

/** One parsed <host> element: up with its details, or down; null without an IPv4 address. */
function readHost(host: Node): { up: true; ip: string; host: ScannedHost } | { up: false; ip: string } | null {
  const ip = nodes(host.address).find((a) => a.addrtype === 'ipv4')?.addr as string | undefined;
  if (!ip) return null;
  if ((host.status as Node | undefined)?.state !== 'up') return { up: false, ip };
  return { up: true, ip, host: mapHost(host, ip) };
}

function finishedOf(finished: Node | undefined): Pick<NmapRun, 'exit' | 'error' | 'elapsedSeconds'> {
  return {
    exit: (finished?.exit as string | undefined) ?? null,
    error: (finished?.errormsg as string | undefined) ?? null,
    elapsedSeconds: finished?.elapsed ? Number(finished.elapsed) : null,
  };
}

/**
 * Reads nmap's XML as it is written: each <host> element is parsed the moment it is complete, so
 * the results of a host are at hand while nmap works on the others, and nothing is left to parse
 * when nmap exits. `finish()` gives the same NmapRun parseNmapXml gives for the whole document.
 */
export class NmapXmlReader {
  private rest = '';
  private sawRun = false;
  private readonly hosts: ScannedHost[] = [];
  private readonly down: string[] = [];

  /** Reads a chunk of output; returns progress events and the hosts completed by it (up ones with their details). */
  push(chunk: string): NmapReadEvent[] {
    const text = this.rest + chunk;
    if (!this.sawRun) this.sawRun = text.includes('<nmaprun');
    const { events, rest } = readNmapStream(text);
    this.rest = rest;
    const out: NmapReadEvent[] = [];
    for (const event of events) {
      if (event.kind === 'task') {
        out.push(event);
        continue;
      }
      const read = readHost(nodes((parser.parse(event.xml) as Node).host)[0] ?? {});
      if (!read) continue;
      if (read.up) this.hosts.push(read.host);
      else this.down.push(read.ip);
      out.push(read.up ? { kind: 'host', ip: read.ip, up: true, host: read.host } : { kind: 'host', ip: read.ip, up: false, host: null });
    }
    return out;
  }

  /** The run, once nmap's output has ended. Throws on output that is not an nmap run. */
  finish(): NmapRun {
    if (!this.sawRun) throw new Error('not an nmap XML document (no <nmaprun>)');
    const finished = this.rest.match(/<finished\b[^>]*>/)?.[0];
    const attributes = finished ? ((parser.parse(finished) as Node).finished as Node | undefined) : undefined;
    return { hosts: this.hosts, down: this.down, ...finishedOf(attributes) };
  }
}

export type NmapReadEvent =
  | { kind: 'task'; task: string; percent: number; remaining: number | null }
  | { kind: 'host'; ip: string; up: true; host: ScannedHost }
  | { kind: 'host'; ip: string; up: false; host: null };

function mapHost(host: Node, ip: string): ScannedHost {
  const macAddress = nodes(host.address).find((a) => a.addrtype === 'mac');
  const hostnames = nodes((host.hostnames as Node | undefined)?.hostname);
  const hostname = (hostnames.find((h) => h.type === 'user') ?? hostnames.find((h) => h.type === 'PTR') ?? hostnames[0])?.name;
  const os = bestOsMatch(host.os as Node | undefined);
  return {
    ip,
    mac: normalizeMac(macAddress?.addr as string | undefined),
    vendor: (macAddress?.vendor as string | undefined) ?? null,
    // A name nmap wrote with character references (`&#10;`) is read as the characters, then cleaned.
    hostname: typeof hostname === 'string' ? cleanHostname(decodeCharacterReferences(hostname)) : null,
    os_name: os.name,
    device_type: os.deviceType,
    ports: nodes((host.ports as Node | undefined)?.port).map(mapPort),
  };
}

function mapPort(port: Node): ScannedPort {
  const service = (port.service as Node | undefined) ?? {};
  const state = (port.state as Node | undefined)?.state;
  const name = serviceName(service);
  return {
    port: Number(port.portid),
    protocol: port.protocol === 'udp' ? 'udp' : 'tcp',
    state: typeof state === 'string' ? state : 'unknown',
    service: name,
    // Without a product of its own, the Server header the http-server-header script read (left
    // as sent, `Apache/2.4.49 (Unix)`: core/services.ts normalizePort reads product and version from it).
    product: (service.product as string | undefined) ?? serverHeaderOf(port),
    version: (service.version as string | undefined) ?? null,
    extra_info: (service.extrainfo as string | undefined) ?? null,
    cpe: [
      ...new Set(
        nodes(service.cpe)
          .map(text)
          .filter((c): c is string => c !== null)
          .concat(scriptCpesOf(port)),
      ),
    ],
    // method="table": nmap only named the port's usual service from nmap-services; nothing answered as it.
    ...(service.method === 'table' && name !== null ? { service_guessed: true } : {}),
  };
}

/**
 * CPEs the port's scripts name (the vulners script keys its results by CPE:
 * `<table key="cpe:/a:openbsd:openssh:7.4">`), beside the service's own.
 */
function scriptCpesOf(port: Node): string[] {
  return nodes(port.script)
    .flatMap((script) => nodes(script.table))
    .map((table) => table.key)
    .filter((key): key is string => typeof key === 'string' && key.startsWith('cpe:/'));
}

/** The http-server-header script's output (the Server header), when it read one. */
function serverHeaderOf(port: Node): string | null {
  const script = nodes(port.script).find((s) => s.id === 'http-server-header');
  const output = typeof script?.output === 'string' ? script.output.trim() : '';
  // Without a header the script says so in words; a header is one line.
  if (output === '' || output.includes('\n') || /^(?:no |server header)/i.test(output)) return null;
  return output.slice(0, 200);
}

/** nmap names TLS-wrapped services with `tunnel="ssl"` (http + ssl is https). */
function serviceName(service: Node): string | null {
  const name = service.name as string | undefined;
  if (!name || name === 'unknown') return name ?? null;
  if (service.tunnel === 'ssl' && name === 'http') return 'https';
  return name;
}

function bestOsMatch(os: Node | undefined): { name: string | null; deviceType: string | null } {
  const match = nodes(os?.osmatch).sort((a, b) => Number(b.accuracy) - Number(a.accuracy))[0];
  if (!match) return { name: null, deviceType: null };
  const osClass = nodes(match.osclass)[0];
  return { name: (match.name as string | undefined) ?? null, deviceType: (osClass?.type as string | undefined) ?? null };
}

export type NmapStreamEvent =
  | { kind: 'task'; task: string; percent: number; remaining: number | null }
  | { kind: 'host'; ip: string; up: boolean; /** The whole <host> element. */ xml: string };

const STREAM_ITEM = /<taskprogress\b[^>]*\/>|<host\b[\s\S]*?<\/host>/g;

/**
 * Reads the complete `<taskprogress/>` and `<host>…</host>` elements from streamed XML.
 * Returns them with the unread rest, to be prefixed to the next chunk.
 */
export function readNmapStream(buffer: string): { events: NmapStreamEvent[]; rest: string } {
  const events: NmapStreamEvent[] = [];
  let consumed = 0;
  for (const m of buffer.matchAll(STREAM_ITEM)) {
    consumed = m.index + m[0].length;
    if (m[0].startsWith('<taskprogress')) {
      const task = m[0].match(/task="([^"]*)"/)?.[1];
      const percent = m[0].match(/percent="([\d.]+)"/)?.[1];
      const remaining = m[0].match(/remaining="(\d+)"/)?.[1];
      if (task && percent) {
        events.push({ kind: 'task', task, percent: Math.min(100, Number(percent)), remaining: remaining ? Number(remaining) : null });
      }
    } else {
      const ip = m[0].match(/<address addr="([\d.]+)" addrtype="ipv4"/)?.[1];
      if (ip) events.push({ kind: 'host', ip, up: /<status state="up"/.test(m[0]), xml: m[0] });
    }
  }
  return { events, rest: buffer.slice(consumed) };
}
