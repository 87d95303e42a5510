/** Mapping nmap's XML output (`-oX`) to scan results, and reading its live progress. Pure. */
import { XMLParser } from 'fast-xml-parser';
import type { ScannedHost, ScannedPort } from './model.js';
import { normalizeMac } from './mac.js';
import { readReportXml } from './report-xml.js';
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

/** A document as fast-xml-parser reads it with the options above (what the mapping here reads; core/report-xml.ts gives the same). */
export function parseXmlTree(xml: string): Record<string, unknown> {
  return parser.parse(xml) as Record<string, unknown>;
}

/** Whether an element (or attribute) of that name is always an array in parseXmlTree's values. */
export function isArrayElement(name: string): boolean {
  return ARRAY_ELEMENTS.has(name);
}

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
  const { run, hostNodes } = parseReportDocument(xml);
  const hosts = new ReportHosts();
  for (const host of hostNodes) hosts.add(host);
  return hosts.report(run);
}

/**
 * parseNmapReport's result read in one pass that also checks the document is well-formed
 * (core/report-xml.ts), or null when the report is outside what that pass reads (a comment among
 * the hosts, an entity other than XML's five, a report that is not well-formed): read it with
 * checkWellFormed and parseNmapReport then. The same errors as parseNmapReport for a well-formed
 * report it reads. The caller checks the document's safety first (checkReportSafety).
 */
export function readNmapReportOnePass(xml: string): NmapReport | null {
  const hosts = new ReportHosts();
  // A host out of bounds counts once the whole document is known to be well-formed.
  const failures: Error[] = [];
  const read = readReportXml(xml, isArrayElement, (host) => {
    if (failures.length > 0) return;
    try {
      hosts.add(host as Node);
    } catch (err) {
      failures.push(err instanceof Error ? err : new Error(String(err)));
    }
  });
  if (read === false) return null;
  if (failures.length > 0) throw failures[0];
  return hosts.report(read.run);
}

/** The hosts of a report, read one <host> element at a time in document order (parseNmapReport). */
class ReportHosts {
  private readonly hosts: ScannedHost[] = [];
  private readonly down: string[] = [];
  private readonly otherHosts: NmapReport['otherHosts'] = [];
  private osDetection = false;
  private count = 0;

  /** Reads the next <host>; throws ScanInputError naming it when a value is out of bounds. */
  add(host: Node): void {
    const n = ++this.count;
    if (nodes(host.address).some((a) => a.addrtype === 'ipv4')) checkHostInput(reportHostInput(host), reportLocator(n));
    const read = readHost(host);
    if (read?.up) {
      this.hosts.push(read.host);
      this.osDetection ||= nodes((host.os as Node | undefined)?.osmatch).length > 0;
    } else if (read) this.down.push(read.ip);
    else {
      const address = nodes(host.address).find((a) => a.addrtype !== 'mac');
      if (typeof address?.addr === 'string') {
        this.otherHosts.push({
          address: address.addr,
          addrtype: typeof address.addrtype === 'string' ? address.addrtype : 'unknown',
          up: (host.status as Node | undefined)?.state === 'up',
        });
      }
    }
  }

  /** The report: these hosts and what its <nmaprun> says of the run. */
  report(run: Node): NmapReport {
    const start = Number(run.start);
    return {
      hosts: this.hosts,
      down: this.down,
      ...finishedOf((run.runstats as Node | undefined)?.finished as Node | undefined),
      args: typeof run.args === 'string' ? decodeCharacterReferences(run.args) : null,
      startedAt: Number.isFinite(start) && start > 0 ? new Date(start * 1000).toISOString() : null,
      version: typeof run.version === 'string' ? run.version : null,
      scanned: nodes(run.scaninfo).flatMap((info) =>
        typeof info.services === 'string' ? [{ protocol: typeof info.protocol === 'string' ? info.protocol : 'tcp', services: info.services }] : [],
      ),
      osDetection: this.osDetection,
      otherHosts: this.otherHosts,
    };
  }
}

/**
 * The report's <nmaprun> and its <host> children, in document order. A large report is read host
 * by host: the document with each <host> element cut out (an empty <host/> left in its place) is
 * parsed once, and each element on its own, so no tree of the whole report is built (building one
 * was most of reading a 10,000-host report, garbage collection included; profiled). The result is
 * the same as parsing the whole document; when that cannot be told from the text (a comment,
 * CDATA section or processing instruction among the hosts, an element named host that is not a
 * child of <nmaprun>) the whole document is parsed instead.
 */
export function parseReportDocument(xml: string): { run: Node; hostNodes: Node[] } {
  const split = splitHostElements(xml);
  if (split !== null) {
    const run = (parser.parse(split.skeleton) as Node).nmaprun as Node | undefined;
    // Every placeholder must be a <host> child of <nmaprun>, each one empty.
    const placeholders = run && typeof run === 'object' ? nodes(run.host) : [];
    if (placeholders.length === split.hosts.length && placeholders.every((h) => (h as unknown) === '')) {
      const hostNodes: Node[] = [];
      for (const element of split.hosts) {
        const parsed = nodes((parser.parse(element) as Node).host);
        if (parsed.length !== 1) return parseWhole(xml);
        hostNodes.push(parsed[0]);
      }
      return { run: run as Node, hostNodes };
    }
  }
  return parseWhole(xml);
}

function parseWhole(xml: string): { run: Node; hostNodes: Node[] } {
  const doc = parser.parse(xml) as Node;
  const run = doc.nmaprun as Node | undefined;
  if (!run || typeof run !== 'object') throw new Error('not an nmap XML document (no <nmaprun>)');
  return { run, hostNodes: nodes(run.host) };
}

/** Reports smaller than this are parsed whole: cutting them into hosts saves nothing worth the work. */
const SPLIT_THRESHOLD_CHARS = 256 * 1024;

/**
 * The top-level <host> elements of a well-formed report as texts, and the report with each of them
 * replaced by `<host/>`; null when the report is small or when the hosts' part of it holds
 * anything but elements and text (`<!` or `<?`), so a tag found by its text is always a tag.
 * Nested elements named host stay inside their outermost one.
 */
export function splitHostElements(xml: string): { skeleton: string; hosts: string[] } | null {
  if (xml.length < SPLIT_THRESHOLD_CHARS) return null;
  const first = findHostTag(xml, 0);
  if (first < 0 || !markupClosedBefore(xml, first)) return null;
  const hosts: string[] = [];
  const parts: string[] = [xml.slice(0, first)];
  let i = first;
  let lastEnd = first;
  while (i >= 0) {
    // The text between two hosts is part of the skeleton; it must not open a comment, CDATA or PI.
    const between = xml.slice(lastEnd, i);
    if (between.includes('<!') || between.includes('<?')) return null;
    if (hosts.length > 0) parts.push(between);
    const end = hostElementEnd(xml, i);
    if (end < 0) return null;
    hosts.push(xml.slice(i, end));
    parts.push('<host/>');
    lastEnd = end;
    i = findHostTag(xml, end);
  }
  parts.push(xml.slice(lastEnd));
  return { skeleton: parts.join(''), hosts };
}

/** Whether every comment, CDATA section, processing instruction and declaration before `at` ends before it. */
function markupClosedBefore(xml: string, at: number): boolean {
  for (let i = xml.indexOf('<', 0); i >= 0 && i < at; i = xml.indexOf('<', i + 1)) {
    const c = xml.charCodeAt(i + 1);
    if (c !== 0x21 && c !== 0x3f) continue;
    const close = xml.startsWith('<!--', i) ? '-->' : xml.startsWith('<![CDATA[', i) ? ']]>' : c === 0x3f ? '?>' : '>';
    const end = xml.indexOf(close, i + 2);
    if (end < 0 || end + close.length > at) return false;
    i = end;
  }
  return true;
}

/** Where the next tag `<host` (the name host exactly, opening or empty) starts at or after `from`, or -1. */
function findHostTag(xml: string, from: number): number {
  for (let i = xml.indexOf('<host', from); i >= 0; i = xml.indexOf('<host', i + 5)) {
    if (isNameEnd(xml.charCodeAt(i + 5))) return i;
  }
  return -1;
}

/** Whether a character ends an element's name: white space, `>` or `/`. */
function isNameEnd(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x3e || c === 0x2f;
}

/** The end of a tag starting at `start` (after its `>`, quoted values skipped), or -1. */
function tagEnd(xml: string, start: number): number {
  let quote = 0;
  for (let i = start + 1; i < xml.length; i++) {
    const c = xml.charCodeAt(i);
    if (quote !== 0) {
      if (c === quote) quote = 0;
    } else if (c === 0x22 || c === 0x27) quote = c;
    else if (c === 0x3e) return i + 1;
  }
  return -1;
}

/**
 * The end of the <host> element whose start tag is at `start` (after its end tag), counting nested
 * host elements; -1 when the text between holds `<!` or `<?` or the element does not end.
 */
function hostElementEnd(xml: string, start: number): number {
  let depth = 0;
  let i = start;
  for (;;) {
    const end = tagEnd(xml, i);
    if (end < 0) return -1;
    const closing = xml.charCodeAt(i + 1) === 0x2f;
    const empty = xml.charCodeAt(end - 2) === 0x2f;
    if (closing) depth--;
    else if (!empty) depth++;
    if (depth === 0) return end;
    // The next tag named host (opening, empty or closing) after this one; any <! or <? before it gives up.
    let next = -1;
    for (let j = xml.indexOf('<', end); j >= 0; j = xml.indexOf('<', j + 1)) {
      const c = xml.charCodeAt(j + 1);
      if (c === 0x21 || c === 0x3f) return -1;
      const nameAt = c === 0x2f ? j + 2 : j + 1;
      if (xml.startsWith('host', nameAt) && isNameEnd(xml.charCodeAt(nameAt + 4))) {
        next = j;
        break;
      }
    }
    if (next < 0) return -1;
    i = next;
  }
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
