/**
 * Importing an nmap XML report (`nmap -oX`) as a completed scan (CONTRACT §11, §13): the checks
 * an untrusted document must pass before it is parsed (no DTD beyond nmap's own
 * `<!DOCTYPE nmaprun>`, no entity declarations, well-formed), and what the scan records from it:
 * its subnet, profile, the ports it examined and the hosts, every value within the bounds of
 * core/scan-input.ts (CONTRACT §14). Pure: the scan manager records it.
 */
import { XMLValidator } from 'fast-xml-parser';
import { InvalidInputError } from '../util/errors.js';
import type { ScannedHost, ScanProfile } from './model.js';
import { emptyCoverage, PORT_PROTOCOLS, type PortCoverage } from './coverage.js';
import { intToIpv4, ipv4ToInt, networkContains, parseIpv4Network, parsePortRanges } from './net.js';
import { parseNmapReport, readNmapReportOnePass, type NmapReport } from './nmap-xml.js';
import { ScanInputError } from './scan-input.js';

/** The report was refused: not safe to parse, not well-formed, not an nmap report, or nothing to import. */
export class ReportRejectedError extends InvalidInputError {
  override readonly code = 'NW_REPORT_REJECTED';
}

/** At most this many skipped IPv6 hosts are named one by one in the scan's warnings; the rest are counted. */
export const MAX_NAMED_SKIPPED_HOSTS = 100;

/** What an imported report records as a scan. */
export interface ImportPlan {
  /** The scan's subnet: the report's single target, else the smallest IPv4 CIDR covering its hosts. */
  subnet: string;
  subnetFrom: 'args' | 'hosts';
  /** quick for discovery only (-sn), intensive with OS detection, scripts or every port, else normal. */
  profile: ScanProfile;
  /** The hosts up with an IPv4 address (one per address). */
  hosts: ScannedHost[];
  /** How many hosts the report lists as down (listed only with -v or --reason). */
  hostsDown: number;
  /** The ports the report examined (its <scaninfo>, by protocol; SCTP and IP protocol scans are left out); empty for discovery only. */
  portList: PortCoverage;
  /** CIDR blocks the run left out (`--exclude`): presence leaves their devices alone. */
  exclude: string[];
  /** Problems that did not stop the import (IPv6 hosts skipped, nmap's own error). */
  warnings: string[];
  /** How the report describes its run. */
  report: { args: string | null; startedAt: string | null; nmapVersion: string | null; elapsedSeconds: number | null };
}

/**
 * Refuses what must never reach an XML parser: a DOCTYPE other than nmap's own bare
 * `<!DOCTYPE nmaprun>` (an internal subset, a SYSTEM or PUBLIC identifier) and any markup
 * declaration (ENTITY, ELEMENT, ATTLIST, NOTATION) anywhere. Nothing is expanded or fetched.
 */
export function checkReportSafety(xml: string): void {
  let i = xml.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (;;) {
    while (i < xml.length && /\s/.test(xml[i])) i++;
    if (xml.startsWith('<?', i)) {
      const end = xml.indexOf('?>', i + 2);
      if (end < 0) break;
      i = end + 2;
    } else if (xml.startsWith('<!--', i)) {
      const end = xml.indexOf('-->', i + 4);
      if (end < 0) break;
      i = end + 3;
    } else if (xml.slice(i, i + 9).toUpperCase() === '<!DOCTYPE') {
      const end = xml.indexOf('>', i);
      const declaration = xml.slice(i, end < 0 ? undefined : end + 1);
      if (!/^<!DOCTYPE\s+nmaprun\s*>$/.test(declaration)) throw new ReportRejectedError(`body: ${doctypeProblem(declaration)}`);
      i = end + 1;
      // Only one DOCTYPE: a second is caught below.
      break;
    } else break;
  }
  const declaration = /<!(DOCTYPE|ENTITY|ELEMENT|ATTLIST|NOTATION)\b/i.exec(xml.slice(i));
  if (declaration) {
    const kind = declaration[1].toUpperCase();
    throw new ReportRejectedError(
      kind === 'ENTITY'
        ? 'body: the document declares an entity (<!ENTITY>); entities are never expanded or fetched, so reports with them are refused'
        : kind === 'DOCTYPE'
          ? "body: the document has a second or misplaced DOCTYPE; only nmap's own <!DOCTYPE nmaprun> at the start is accepted"
          : `body: the document has a DTD declaration (<!${kind}>); only nmap's own <!DOCTYPE nmaprun> is accepted`,
    );
  }
}

function doctypeProblem(declaration: string): string {
  if (declaration.includes('[')) {
    return "the DOCTYPE has an internal DTD subset ([…]); only nmap's own <!DOCTYPE nmaprun> is accepted, and entities are never expanded";
  }
  if (/\b(SYSTEM|PUBLIC)\b/i.test(declaration)) {
    return "the DOCTYPE names an external DTD (SYSTEM or PUBLIC identifier); it is never fetched, and only nmap's own <!DOCTYPE nmaprun> is accepted";
  }
  return "the DOCTYPE is not nmap's; only <!DOCTYPE nmaprun> is accepted";
}

/** Refuses a document that is not well-formed XML (a truncated report, a file cut short), naming where. */
export function checkWellFormed(xml: string): void {
  if (xml.trim() === '') throw new ReportRejectedError('body: is empty; send an nmap XML report (nmap -oX FILE)');
  const result = XMLValidator.validate(xml);
  if (result !== true) {
    const { msg, line, col } = result.err;
    throw new ReportRejectedError(
      `body: not well-formed XML at line ${line}, column ${col}: ${msg} (a report cut short, e.g. by an interrupted nmap, cannot be imported)`,
    );
  }
}

/** Options of nmap that take the next word as their value (so it is not a target). */
const VALUE_OPTIONS = new Set(
  (
    '-p -e -S -D -g -b -iL -iR -oN -oX -oS -oG -oA -oM -sI -T ' +
    '--exclude --excludefile --exclude-ports --script --script-args --script-args-file --script-timeout --script-trace-file ' +
    '--host-timeout --max-retries --min-rate --max-rate --source-port --data-length --data --data-string --ttl --spoof-mac ' +
    '--proxies --proxy --dns-servers --top-ports --port-ratio --version-intensity --min-hostgroup --max-hostgroup ' +
    '--min-parallelism --max-parallelism --min-rtt-timeout --max-rtt-timeout --initial-rtt-timeout --scan-delay ' +
    '--max-scan-delay --stats-every --datadir --servicedb --versiondb --stylesheet --mtu --max-os-tries --resume --ip-options'
  ).split(' '),
);

/** The command line's words that name targets, and the value of `--exclude` (both as written). */
export function nmapCommandTargets(args: string): { targets: string[]; exclude: string[] } {
  const words = args.trim().split(/\s+/).filter(Boolean);
  // The first word is the program (nmap, /usr/bin/nmap).
  if (words.length > 0 && !words[0].startsWith('-')) words.shift();
  const targets: string[] = [];
  const exclude: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    if (!word.startsWith('-') || word === '-') {
      targets.push(word);
      continue;
    }
    const [option, inline] = word.startsWith('--')
      ? [word.split('=')[0], word.includes('=') ? word.slice(word.indexOf('=') + 1) : undefined]
      : [word, undefined];
    // -p22 / -T4 / -PS22 carry their value; -p / -T alone take the next word.
    const takesNext = inline === undefined && VALUE_OPTIONS.has(option);
    const value = inline ?? (takesNext ? words[i + 1] : undefined);
    if (takesNext) i++;
    if (option === '--exclude' && value) exclude.push(...value.split(',').filter(Boolean));
  }
  return { targets, exclude };
}

/** The smallest IPv4 CIDR block holding every address given (at least one). */
export function coveringCidr(addresses: readonly string[]): string {
  let low = 0xffffffff;
  let high = 0;
  for (const ip of addresses) {
    const n = ipv4ToInt(ip);
    if (n < low) low = n;
    if (n > high) high = n;
  }
  let prefix = 32;
  while (prefix > 0 && low >>> (32 - prefix) !== high >>> (32 - prefix)) prefix--;
  const network = prefix === 0 ? 0 : (low >>> (32 - prefix)) << (32 - prefix);
  return `${intToIpv4(network >>> 0)}/${prefix}`;
}

/**
 * The scan's subnet (CONTRACT §13): the report's single target when it is one IPv4 CIDR or
 * address (as /32) holding every host it lists, else the smallest IPv4 CIDR covering its hosts
 * (up and down). Null when it has neither.
 */
export function reportSubnet(args: string | null, addresses: readonly string[]): { cidr: string; from: 'args' | 'hosts' } | null {
  const { targets } = nmapCommandTargets(args ?? '');
  if (targets.length === 1) {
    const parsed = parseIpv4Network(targets[0]);
    if (parsed.ok) {
      const net = parsed.value;
      if (addresses.every((ip) => networkContains(net, ip))) return { cidr: net.cidr, from: 'args' };
    }
  }
  return addresses.length > 0 ? { cidr: coveringCidr(addresses), from: 'hosts' } : null;
}

/** The scan profile an imported run is recorded with. */
export function reportProfile(report: Pick<NmapReport, 'args' | 'scanned' | 'osDetection'>): ScanProfile {
  if (report.scanned.length === 0) return 'quick';
  const words = (report.args ?? '').split(/\s+/);
  const intensive =
    report.osDetection ||
    words.some((w) => ['-A', '-O', '-sC', '-p-', '--script', '--osscan-guess'].includes(w) || w.startsWith('--script=')) ||
    report.scanned.some((s) => s.services === '1-65535');
  return intensive ? 'intensive' : 'normal';
}

/** The ports every <scaninfo> examined, merged by protocol (port lists nmap wrote; port 0 is left out). */
export function reportPortList(scanned: NmapReport['scanned']): PortCoverage {
  const out = emptyCoverage();
  for (const protocol of PORT_PROTOCOLS) {
    const parts = scanned
      .filter((s) => s.protocol.trim().toLowerCase() === protocol)
      .flatMap((s) => s.services.split(','))
      .map((p) => p.trim().replace(/^0-/, '1-'))
      .filter((p) => p !== '' && p !== '0');
    if (parts.length === 0) continue;
    const parsed = parsePortRanges(parts.join(','));
    if (parsed.ok) out[protocol] = parsed.value;
  }
  return out;
}

/**
 * Checks and reads a report: safety, well-formedness, that it is nmap's, then what the scan
 * records. Throws ReportRejectedError with a message naming the problem. A report nmap wrote is
 * checked and read in one pass (planOnePass); any other is checked, then parsed (planWellFormed).
 */
export function planImport(xml: string): ImportPlan {
  const plan = planOnePass(xml);
  if (plan !== null) return plan;
  checkWellFormed(xml);
  return planWellFormed(xml);
}

/**
 * planImport's answer from one pass that checks well-formedness while it reads
 * (core/nmap-xml.ts readNmapReportOnePass), after the safety checks; null when the report is
 * outside what that pass reads: then checkWellFormed and planWellFormed give the answer.
 */
export function planOnePass(xml: string): ImportPlan | null {
  checkReportSafety(xml);
  const report = reading(() => readNmapReportOnePass(xml));
  return report === null ? null : planOf(report);
}

/**
 * planImport's reading once the document is known to be well-formed (checkWellFormed), or while
 * another thread checks that (scan/report-reader.ts): the safety checks, then the parse and the
 * plan. A document that is not well-formed gives no reliable answer here.
 */
export function planWellFormed(xml: string): ImportPlan {
  checkReportSafety(xml);
  return planOf(reading(() => parseNmapReport(xml)));
}

/** A report read, or the ReportRejectedError naming why it cannot be. */
function reading<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    // A value out of bounds (core/scan-input.ts): its message names the host and the element.
    if (err instanceof ScanInputError) throw new ReportRejectedError(err.message);
    throw new ReportRejectedError(`body: not an nmap XML report (${(err as Error).message}); send the file nmap -oX writes`);
  }
}

/** What the scan records from a report read. */
function planOf(report: NmapReport): ImportPlan {
  const byIp = new Map<string, ScannedHost>();
  for (const host of report.hosts) byIp.set(host.ip, host);
  const hosts = [...byIp.values()];
  const down = [...new Set(report.down)].filter((ip) => !byIp.has(ip));
  const subnet = reportSubnet(report.args, [...hosts.map((h) => h.ip), ...down]);
  if (!subnet) {
    const skipped = report.otherHosts.length;
    throw new ReportRejectedError(
      skipped > 0
        ? `body: the report has no IPv4 host (${skipped} IPv6 host${skipped === 1 ? '' : 's'}); Netwarden records IPv4 devices only`
        : 'body: the report names no single IPv4 target and lists no IPv4 host; nothing to import',
    );
  }
  const warnings: string[] = [];
  const skipped = report.otherHosts;
  for (const host of skipped.slice(0, MAX_NAMED_SKIPPED_HOSTS)) {
    warnings.push(
      `Skipped ${host.addrtype === 'ipv6' ? 'IPv6' : host.addrtype} host ${host.address} (${host.up ? 'up' : 'down'}): Netwarden records IPv4 devices only`,
    );
  }
  if (skipped.length > MAX_NAMED_SKIPPED_HOSTS) {
    warnings.push(`Skipped ${skipped.length - MAX_NAMED_SKIPPED_HOSTS} more hosts without an IPv4 address`);
  }
  if (report.exit === 'error') warnings.push(`nmap reported an error for this run: ${report.error ?? 'no message'}`);
  const exclude = nmapCommandTargets(report.args ?? '')
    .exclude.map((entry) => parseIpv4Network(entry))
    .flatMap((p) => (p.ok ? [p.value.cidr] : []));
  // Without <scaninfo> (a report another tool wrote in nmap's format), the ports it lists are what it examined.
  const listed = report.scanned.length === 0 ? hosts.flatMap((h) => h.ports.map((p) => ({ protocol: p.protocol, services: String(p.port) }))) : [];
  return {
    subnet: subnet.cidr,
    subnetFrom: subnet.from,
    profile: reportProfile({ ...report, scanned: listed.length > 0 ? listed : report.scanned }),
    hosts,
    hostsDown: down.length,
    portList: reportPortList(listed.length > 0 ? listed : report.scanned),
    exclude,
    warnings,
    report: { args: report.args, startedAt: report.startedAt, nmapVersion: report.version, elapsedSeconds: report.elapsedSeconds },
  };
}
