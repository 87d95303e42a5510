/**
 * Scan results that arrive from outside (an imported nmap report, an agent's upload: CONTRACT
 * §14) are checked here against the limits of core/limits.ts before anything is recorded: one
 * set of rules for both ways in. A value out of bounds is refused with a message naming the
 * element (`host 3 address "010.0.0.1": …` in a report, `ports.2.ports.0.port: …` in an upload),
 * never left to the database to refuse. Hostnames are cleaned rather than refused: a line break
 * or a control character in one (a device's own reverse-DNS record can carry them) is removed, so
 * no notification, log line or CSV row can carry a forged line. Pure.
 */
import { InvalidInputError } from '../util/errors.js';
import {
  CPE_MAX_ITEMS,
  CPE_MAX_LENGTH,
  DEVICE_TYPE_MAX_LENGTH,
  HOST_PORTS_MAX_ITEMS,
  HOST_TEXT_MAX_LENGTH,
  HOSTNAME_MAX_LENGTH,
  PORT_STATE_MAX_LENGTH,
  PORTS,
  SCRIPT_OUTPUT_MAX_LENGTH,
  SERVICE_NAME_MAX_LENGTH,
  SERVICE_TEXT_MAX_LENGTH,
} from './limits.js';
import { normalizeMac } from './mac.js';
import { isIpv4Address, networkContains, type Ipv4Network } from './net.js';

/** A scan result out of bounds; the message names the element. */
export class ScanInputError extends InvalidInputError {
  override readonly code = 'NW_SCAN_INPUT';
}

/** One host's results as they came in, before they are trusted (a report's attributes are text, an upload's JSON values anything the schema let through). */
export interface HostInput {
  ip: unknown;
  mac?: unknown;
  vendor?: unknown;
  /** Every name the host came with (a report may list several). */
  hostnames?: readonly unknown[];
  os_name?: unknown;
  device_type?: unknown;
  ports?: readonly PortInput[];
}

export interface PortInput {
  port: unknown;
  protocol?: unknown;
  state?: unknown;
  service?: unknown;
  product?: unknown;
  version?: unknown;
  extra_info?: unknown;
  cpe?: readonly unknown[];
  /** NSE scripts' output (reports only). */
  scripts?: readonly { id: unknown; output: unknown }[];
}

export type HostField = 'ip' | 'mac' | 'vendor' | 'hostname' | 'os_name' | 'device_type' | 'ports';
export type PortField = 'port' | 'protocol' | 'state' | 'service' | 'product' | 'version' | 'extra_info' | 'cpe';

/** Names the elements of one host in messages, in the words of the document it came in. */
export interface HostLocator {
  host(field: HostField, value: unknown, index?: number): string;
  /** `port` is the port's own value as sent (names the port in a report). */
  port(index: number, port: unknown, field: PortField, itemIndex?: number): string;
  script(index: number, port: unknown, id: unknown): string;
}

/** Line breaks (also U+2028/U+2029, NEL) and every other control character. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

/**
 * A hostname fit to show and to send: each run of line breaks and control characters becomes one
 * space, the ends are trimmed; null when nothing is left.
 */
export function cleanHostname(name: string | null | undefined): string | null {
  if (name == null) return null;
  const clean = name.replace(CONTROL, ' ').trim();
  return clean === '' ? null : clean;
}

/** A value in a message: quoted, escaped, and cut short. */
export function quoted(value: unknown): string {
  const text = typeof value === 'string' ? value : String(value);
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text);
}

/** What is wrong with an IPv4 address, or null: strict dotted quad (no octal, hex, leading zeros or short forms). */
export function addressProblem(value: unknown): string | null {
  if (typeof value === 'string' && isIpv4Address(value)) return null;
  return 'must be an IPv4 address in dotted-quad form: four numbers 0–255 without leading zeros, such as 10.0.0.1';
}

/** What is wrong with a port number (a number, or its decimal text in a report), or null. */
export function portProblem(value: unknown): string | null {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^[1-9]\d{0,4}$/.test(value) ? Number(value) : NaN;
  return Number.isInteger(n) && n >= PORTS.min && n <= PORTS.max ? null : `must be a port number from ${PORTS.min} to ${PORTS.max}`;
}

/** What is wrong with an optional text of at most `max` characters, or null. */
export function textProblem(value: unknown, max: number): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') return 'must be text';
  return value.length > max ? `is ${value.length} characters long; at most ${max} are accepted` : null;
}

const MAC = /^[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}$/;

/** Checks one host as it came in; throws ScanInputError `<element>: <problem>` at the first value out of bounds. */
export function checkHostInput(host: HostInput, at: HostLocator): void {
  // The element is named only when it is refused: a host may list 131,070 ports.
  const fail = (where: () => string, problem: string | null) => {
    if (problem !== null) throw new ScanInputError(`${where()}: ${problem}`);
  };
  fail(() => at.host('ip', host.ip), addressProblem(host.ip));
  if (host.mac !== null && host.mac !== undefined && (typeof host.mac !== 'string' || !MAC.test(host.mac))) {
    fail(() => at.host('mac', host.mac), 'must be a MAC address such as B8:27:EB:12:34:56');
  }
  fail(() => at.host('vendor', host.vendor), textProblem(host.vendor, HOST_TEXT_MAX_LENGTH));
  for (const [i, name] of (host.hostnames ?? []).entries()) {
    // Measured as it is kept (cleaned).
    const problem = typeof name === 'string' || name == null ? textProblem(cleanHostname(name), HOSTNAME_MAX_LENGTH) : 'must be text';
    fail(() => at.host('hostname', name, i), problem);
  }
  fail(() => at.host('os_name', host.os_name), textProblem(host.os_name, HOST_TEXT_MAX_LENGTH));
  fail(() => at.host('device_type', host.device_type), textProblem(host.device_type, DEVICE_TYPE_MAX_LENGTH));
  const ports = host.ports ?? [];
  if (ports.length > HOST_PORTS_MAX_ITEMS) fail(() => at.host('ports', ports.length), `lists ${ports.length} ports; at most ${HOST_PORTS_MAX_ITEMS}`);
  for (const [j, p] of ports.entries()) {
    fail(() => at.port(j, p.port, 'port'), portProblem(p.port));
    if (p.protocol !== undefined && p.protocol !== 'tcp' && p.protocol !== 'udp') fail(() => at.port(j, p.port, 'protocol'), 'must be tcp or udp');
    fail(() => at.port(j, p.port, 'state'), textProblem(p.state, PORT_STATE_MAX_LENGTH));
    fail(() => at.port(j, p.port, 'service'), textProblem(p.service, SERVICE_NAME_MAX_LENGTH));
    for (const field of ['product', 'version', 'extra_info'] as const)
      fail(() => at.port(j, p.port, field), textProblem(p[field], SERVICE_TEXT_MAX_LENGTH));
    const cpe = p.cpe ?? [];
    if (cpe.length > CPE_MAX_ITEMS) fail(() => at.port(j, p.port, 'cpe'), `lists ${cpe.length} CPE names; at most ${CPE_MAX_ITEMS}`);
    for (const [k, name] of cpe.entries()) fail(() => at.port(j, p.port, 'cpe', k), textProblem(name, CPE_MAX_LENGTH));
    for (const script of p.scripts ?? []) fail(() => at.script(j, p.port, script.id), textProblem(script.output, SCRIPT_OUTPUT_MAX_LENGTH));
  }
}

/** Names elements as the JSON path of an upload: `hosts.2.ip`, `ports.1.ports.0.port`. */
export function jsonLocator(prefix: string): HostLocator {
  return {
    host: (field, _value, index) => (field === 'hostname' || index === undefined ? `${prefix}.${field}` : `${prefix}.${field}.${index}`),
    port: (index, _port, field, item) => `${prefix}.ports.${index}.${field}${item === undefined ? '' : `.${item}`}`,
    script: (index) => `${prefix}.ports.${index}.scripts`,
  };
}

/** Names elements of a report's n-th <host> (counted from 1): `host 3 address "010.0.0.1"`, `host 3 port 22 product`. */
export function reportLocator(n: number): HostLocator {
  const FIELD: Record<HostField, string> = {
    ip: 'address',
    mac: 'MAC address',
    vendor: 'MAC vendor',
    hostname: 'hostname',
    os_name: 'OS match name',
    device_type: 'OS class type',
    ports: 'ports',
  };
  const named = (port: unknown) => (portProblem(port) === null ? `port ${String(port)}` : `port ${quoted(port)}`);
  return {
    host: (field, value) => `host ${n} ${FIELD[field]}${field === 'ip' || field === 'mac' ? ` ${quoted(value)}` : ''}`,
    port: (_index, port, field) =>
      field === 'port' ? `host ${n} ${named(port)}` : `host ${n} ${named(port)} ${field === 'extra_info' ? 'extrainfo' : field}`,
    script: (_index, port, id) => `host ${n} ${named(port)} script ${quoted(id)} output`,
  };
}

/** A host of an upload, as its lists (`hosts`, `ports`) carry it. */
export type UploadedHost = { ip: string; hostname: string | null; mac: string | null; ports?: readonly PortInput[] };

/** Checks host `i` of one list of an upload (`hosts`, `ports`), naming its entries by their JSON path; returns it with its hostname cleaned. */
export function checkUploadedHost<H extends UploadedHost>(name: string, host: H, i: number): H {
  checkHostInput({ ...host, hostnames: [host.hostname] }, jsonLocator(`${name}.${i}`));
  return { ...host, hostname: cleanHostname(host.hostname) };
}

/**
 * An agent's upload places hosts inside its scan's target only (CONTRACT §14), and a MAC it
 * reports never moves a device from outside that target into it: where a MAC belongs to a device
 * whose address lies outside the target, the host is kept without it (recorded as a device of its
 * own, matched by its address) and a warning names the entry (`hosts.3.mac: …`).
 */
export class ForeignMacs {
  private readonly outside = new Map<string, { id: number; ip_address: string }>();
  private readonly warned = new Set<string>();
  /** One per host whose MAC was withheld. */
  readonly warnings: string[] = [];

  /** `holders`: the devices carrying the uploaded MACs, with their addresses. */
  constructor(
    private readonly target: Ipv4Network,
    holders: readonly { id: number; mac_address: string; ip_address: string }[],
  ) {
    for (const h of holders) if (!isIpv4Address(h.ip_address) || !networkContains(target, h.ip_address)) this.outside.set(h.mac_address, h);
  }

  /** The list `name` with foreign MACs withheld. */
  withhold<H extends { ip: string; mac: string | null }>(name: string, list: readonly H[]): H[] {
    return list.map((host, i) => {
      const mac = host.mac === null ? null : normalizeMac(host.mac);
      const holder = mac === null ? undefined : this.outside.get(mac);
      if (!holder) return host;
      if (!this.warned.has(host.ip)) {
        this.warnings.push(
          `${name}.${i}.mac: ${mac} belongs to device ${holder.id} at ${holder.ip_address}, outside the scan's target ${this.target.cidr}; ` +
            `${host.ip} was recorded without it, as a device of its own`,
        );
      }
      this.warned.add(host.ip);
      return { ...host, mac: null };
    });
  }
}
