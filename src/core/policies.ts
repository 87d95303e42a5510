/**
 * Zone policies (CONTRACT §17, §18): per zone, ports and services that must not be open, or an
 * allow-list of ports, and the severity of a breach. Pure: validation of the `PUT /api/policies`
 * object, the suggested defaults (offered, never imposed) and the findings a device's open ports
 * give under its zone's policy. A breach is a finding `policy:<zone>:<port>` (`/udp` for UDP),
 * one per open port whatever number of rules it breaks, scored like a rule finding.
 */
import { FINDING_SEVERITIES, type FindingSeverity } from './severity.js';
import { isOpenPort } from './model.js';

/** One zone's policy as the API reads and writes it. Ports are `23` or `"161/udp"` (TCP unless written `/udp`). */
export interface ZonePolicy {
  forbidden_ports: (number | string)[];
  forbidden_services: string[];
  /** Only these ports may be open; null: no allow-list. */
  allowed_ports: (number | string)[] | null;
  severity: FindingSeverity;
}

export type ZonePolicies = Record<string, ZonePolicy>;

/** A port of a policy, read: number and protocol. */
export interface PolicyPort {
  port: number;
  protocol: 'tcp' | 'udp';
}

/** Ports IoT and Guest zones should not expose: telnet, SMB/NetBIOS, RDP, VNC and database ports. */
const SUGGESTED_FORBIDDEN_PORTS = [23, 139, 445, 3389, 5900, 1433, 3306, 5432, 6379, 27017, 9200];
const SUGGESTED_FORBIDDEN_SERVICES = [
  'telnet',
  'microsoft-ds',
  'netbios-ssn',
  'ms-wbt-server',
  'vnc',
  'mysql',
  'postgresql',
  'ms-sql-s',
  'redis',
  'mongodb',
];

/** The defaults `GET /api/policies/suggested` offers for the zones named IoT and Guest (nothing applies them unasked). */
export function suggestedPolicies(): ZonePolicies {
  const policy = (): ZonePolicy => ({
    forbidden_ports: [...SUGGESTED_FORBIDDEN_PORTS],
    forbidden_services: [...SUGGESTED_FORBIDDEN_SERVICES],
    allowed_ports: null,
    severity: 'high',
  });
  return { IoT: policy(), Guest: policy() };
}

/** `23`, `"23"`, `"161/udp"`, `"443/tcp"` → port and protocol; null when it is not one. */
export function parsePolicyPort(value: unknown): PolicyPort | null {
  let text: string;
  if (typeof value === 'number') text = String(value);
  else if (typeof value === 'string') text = value.trim().toLowerCase();
  else return null;
  const m = /^(\d{1,5})(?:\/(tcp|udp))?$/.exec(text);
  if (!m) return null;
  const port = Number(m[1]);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) return null;
  return { port, protocol: (m[2] as 'tcp' | 'udp' | undefined) ?? 'tcp' };
}

/** `22` for TCP, `161/udp` for UDP: the port part of a finding key and of policy lists. */
export function portLabel(port: number | null, protocol: string | null): string {
  if (port === null) return '-';
  const p = (protocol ?? 'tcp').toLowerCase();
  return p === 'tcp' ? String(port) : `${port}/${p}`;
}

/**
 * Checks a whole policies object (`PUT /api/policies`): returns the error naming the field, or
 * the policies written canonically (ports as numbers for TCP, `"161/udp"` for UDP; services lower case).
 */
export function validatePolicies(input: unknown, zones: readonly string[]): { ok: true; value: ZonePolicies } | { ok: false; error: string } {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return { ok: false, error: 'body: must be an object of zone names to policies' };
  const out: ZonePolicies = {};
  for (const [zone, raw] of Object.entries(input as Record<string, unknown>)) {
    if (!zones.includes(zone)) return { ok: false, error: `${zone}: not a zone; zones are ${zones.join(', ')}` };
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, error: `${zone}: must be an object` };
    const p = raw as Record<string, unknown>;
    const unknown = Object.keys(p).filter((k) => !['forbidden_ports', 'forbidden_services', 'allowed_ports', 'severity'].includes(k));
    if (unknown.length > 0)
      return { ok: false, error: `${zone}.${unknown[0]}: unknown field (allowed: forbidden_ports, forbidden_services, allowed_ports, severity)` };
    const ports = (field: string, value: unknown): (number | string)[] | string => {
      if (!Array.isArray(value)) return `${zone}.${field}: must be a list of ports such as 23 or "161/udp"`;
      if (value.length > 1000) return `${zone}.${field}: at most 1000 ports`;
      const list: (number | string)[] = [];
      for (const [i, v] of value.entries()) {
        const parsed = parsePolicyPort(v);
        if (!parsed) return `${zone}.${field}[${i}]: must be a port 1–65535, written 23 or "161/udp"`;
        const canonical = parsed.protocol === 'tcp' ? parsed.port : `${parsed.port}/udp`;
        if (!list.includes(canonical)) list.push(canonical);
      }
      return list;
    };
    const forbidden = ports('forbidden_ports', p.forbidden_ports ?? []);
    if (typeof forbidden === 'string') return { ok: false, error: forbidden };
    let allowed: (number | string)[] | null = null;
    if (p.allowed_ports !== undefined && p.allowed_ports !== null) {
      const list = ports('allowed_ports', p.allowed_ports);
      if (typeof list === 'string') return { ok: false, error: list };
      allowed = list;
    }
    const services = p.forbidden_services ?? [];
    if (!Array.isArray(services) || services.some((s) => typeof s !== 'string' || s.trim() === '' || s.length > 64)) {
      return { ok: false, error: `${zone}.forbidden_services: must be a list of service names such as "telnet" (1–64 characters)` };
    }
    if (services.length > 1000) return { ok: false, error: `${zone}.forbidden_services: at most 1000 names` };
    const severity = p.severity ?? 'high';
    if (typeof severity !== 'string' || !(FINDING_SEVERITIES as readonly string[]).includes(severity)) {
      return { ok: false, error: `${zone}.severity: must be one of ${FINDING_SEVERITIES.join(', ')}` };
    }
    out[zone] = {
      forbidden_ports: forbidden,
      forbidden_services: [...new Set((services as string[]).map((s) => s.trim().toLowerCase()))],
      allowed_ports: allowed,
      severity: severity as FindingSeverity,
    };
  }
  return { ok: true, value: out };
}

/** An open port as a policy reads it. */
export interface PolicyPortInput {
  port: number;
  protocol: string;
  state: string;
  service: string | null;
}

/** One breach: the port and why. */
export interface PolicyBreach {
  port: number;
  protocol: string;
  service: string | null;
  reasons: string[];
}

/** The open ports that break `policy`, one entry per port with every reason, in port order. */
export function policyBreaches(policy: ZonePolicy, ports: readonly PolicyPortInput[]): PolicyBreach[] {
  const has = (list: readonly (number | string)[], port: number, protocol: string) =>
    list.some((v) => {
      const p = parsePolicyPort(v);
      return p !== null && p.port === port && p.protocol === protocol;
    });
  const out = new Map<string, PolicyBreach>();
  for (const port of ports) {
    if (!isOpenPort(port)) continue;
    const protocol = port.protocol.toLowerCase();
    const service =
      port.service
        ?.trim()
        .toLowerCase()
        .replace(/^(ssl|tls)\//, '') || null;
    const reasons: string[] = [];
    if (has(policy.forbidden_ports, port.port, protocol)) reasons.push(`port ${portLabel(port.port, protocol)} is forbidden`);
    if (service !== null && policy.forbidden_services.includes(service)) reasons.push(`service "${service}" is forbidden`);
    if (policy.allowed_ports !== null && !has(policy.allowed_ports, port.port, protocol))
      reasons.push(`port ${portLabel(port.port, protocol)} is not on the allow-list`);
    if (reasons.length === 0) continue;
    const key = `${port.port}/${protocol}`;
    const seen = out.get(key);
    if (seen) seen.reasons.push(...reasons.filter((r) => !seen.reasons.includes(r)));
    else out.set(key, { port: port.port, protocol, service: port.service, reasons });
  }
  return [...out.values()].sort((a, b) => a.port - b.port || a.protocol.localeCompare(b.protocol));
}
