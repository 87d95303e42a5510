/**
 * The stored configuration: its schema, defaults, validation, partial updates and masking.
 * Pure: the shell loads and saves the document; everything here is plain data in, data out.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  ADDRESS_LIST_MAX_ITEMS,
  HOST_TIMEOUT_SECONDS,
  MAX_UDP_PORTS,
  MAX_PARALLEL_SCANS,
  OFFLINE_AFTER_SCANS,
  PORTS,
  RETENTION_DAYS,
  SECRET_MASK,
  TOP_PORTS,
  ZONE_NAME_MAX_LENGTH,
} from './limits.js';
import { countPorts, formatPortRanges, parseIpv4Network, parsePortRanges } from './net.js';
import { BUILTIN_RISK_RULES } from './risk-rules.js';
import { LEASE_FILE_FORMATS } from './lease-files.js';
import { DEFAULT_SCAN_PROFILE, SCAN_ENGINE_SETTINGS, SCAN_PROFILES } from './model.js';
import { FINDING_SEVERITIES } from './severity.js';
import { PROBE_NAMES } from './probe-results.js';
import { isObject } from '../util/is-object.js';

const BUILTIN_RISK_RULE_IDS = new Set(BUILTIN_RISK_RULES.map((r) => r.id));

export const DEFAULT_ZONES = ['Servers', 'Network', 'Workstations', 'IoT', 'DMZ', 'Guest'];

const strict = { additionalProperties: false } as const;

const ZoneName = Type.String({ minLength: 1, maxLength: ZONE_NAME_MAX_LENGTH, pattern: '^\\S(.*\\S)?$' });

export const RiskRuleSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9_.-]*$' }),
    port: Type.Optional(Type.Integer({ minimum: PORTS.min, maximum: PORTS.max })),
    protocol: Type.Optional(Type.Union([Type.Literal('tcp'), Type.Literal('udp')])),
    service: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    severity: Type.Optional(Type.Union(FINDING_SEVERITIES.map((s) => Type.Literal(s)))),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    recommendation: Type.Optional(Type.String({ maxLength: 2000 })),
    enabled: Type.Optional(Type.Boolean()),
  },
  strict,
);

function SourceUrl(description: string) {
  return Type.String({ maxLength: 2048, description: `${description}; http:// or https://, no credentials in it` });
}

export const SettingsSchema = Type.Object(
  {
    network: Type.Object(
      {
        subnet: Type.String({ description: 'Default scan target, IPv4 CIDR such as 192.168.1.0/24' }),
        exclude: Type.Array(Type.String(), {
          maxItems: ADDRESS_LIST_MAX_ITEMS,
          description: 'Addresses or CIDR blocks never scanned',
        }),
        resolve_hostnames: Type.Boolean({ description: 'Reverse DNS lookups during scans' }),
      },
      strict,
    ),
    scanning: Type.Object(
      {
        port_range: Type.String({ description: '<low>-<high>, or a comma list of ports and ranges' }),
        top_ports: Type.Integer({
          minimum: TOP_PORTS.min,
          maximum: TOP_PORTS.max,
          description:
            "The normal profile also scans this many of the most frequent TCP ports (ranked by the installed nmap's nmap-services file, " +
            'else by a built-in list) plus common home and self-hosted service ports, beside port_range; 0 scans port_range alone. Intensive scans cover every port',
        }),
        udp_ports: Type.String({
          maxLength: 4096,
          description:
            'UDP ports the normal and intensive profiles examine, a comma list of ports and ranges (at most ' +
            `${MAX_UDP_PORTS} ports); "" examines no UDP port. nmap needs root (raw sockets) for UDP: unprivileged, it skips them with a warning`,
        }),
        engine: Type.Union(SCAN_ENGINE_SETTINGS.map((e) => Type.Literal(e))),
        default_profile: Type.Union(
          SCAN_PROFILES.map((p) => Type.Literal(p)),
          { description: 'The profile of a scan or schedule that names none (the API, `netwarden scan`, `netwarden schedule add`, the web UI)' },
        ),
        max_hosts: Type.Integer({ minimum: 1, maximum: 16_777_216, description: 'Largest subnet a scan accepts, in addresses' }),
        scan_timeout_minutes: Type.Integer({ minimum: 1, maximum: 1440 }),
        host_timeout_seconds: Type.Integer({ minimum: HOST_TIMEOUT_SECONDS.min, maximum: HOST_TIMEOUT_SECONDS.max }),
        os_detection: Type.Boolean({ description: 'OS detection when privileged (normal and intensive profiles)' }),
        max_parallel_scans: Type.Integer({
          minimum: MAX_PARALLEL_SCANS.min,
          maximum: MAX_PARALLEL_SCANS.max,
          description: 'Scans of non-overlapping targets that may run at once, on workers or agents',
        }),
        risk_rules: Type.Array(RiskRuleSchema, { maxItems: 500, description: 'Rules added to or overriding the built-in risk rules, by id' }),
        allowed_targets: Type.Array(Type.String(), {
          minItems: 1,
          maxItems: ADDRESS_LIST_MAX_ITEMS,
          description:
            'IPv4 CIDR blocks scans may target; a scan whose target is not inside one of them is refused. ' +
            'The NETWARDEN_SCAN_ALLOW environment variable, when set, replaces this list and cannot be changed through the API.',
        }),
      },
      strict,
    ),
    zones: Type.Array(ZoneName, { minItems: 1, maxItems: 100, uniqueItems: true }),
    updates: Type.Object(
      {
        enabled: Type.Boolean(),
        feed_url: Type.String({ maxLength: 2048, description: 'Release feed: a GitHub "latest release" style JSON document' }),
        cache_minutes: Type.Integer({ minimum: 1, maximum: 10080 }),
        token: Type.String({ maxLength: 512, description: 'Optional bearer token for the feed (secret, masked on read)' }),
      },
      strict,
    ),
    retention: Type.Object(
      {
        days: Type.Integer({
          minimum: RETENTION_DAYS.min,
          maximum: RETENTION_DAYS.max,
          description:
            'Scans, snapshots, changes, notification deliveries and audit entries older than this are deleted daily (devices are kept); 0 keeps everything',
        }),
      },
      strict,
    ),
    server: Type.Object(
      {
        trust_proxy: Type.Union([Type.Boolean(), Type.Array(Type.String(), { maxItems: 64 })], {
          description: 'Honour X-Forwarded-For: false, true (any peer) or a list of proxy addresses/CIDRs',
        }),
        session_hours: Type.Integer({ minimum: 1, maximum: 720 }),
        remember_days: Type.Integer({ minimum: 1, maximum: 365 }),
        secure_cookies: Type.Boolean({ description: 'Always mark the session cookie Secure (it is anyway over HTTPS)' }),
        public_url: Type.String({
          maxLength: 2048,
          description:
            'The address users reach this service at (http:// or https://, e.g. https://netwarden.example.lan); notifications link to ' +
            '<public_url>/devices/<id>. Empty: messages carry no links',
        }),
      },
      strict,
    ),
    name_sources: Type.Object(
      {
        pihole: Type.Object(
          {
            enabled: Type.Boolean(),
            url: SourceUrl('Pi-hole v6 address, such as http://pi.hole or http://192.168.1.2:8080'),
            password: Type.String({ maxLength: 512, description: 'App password (Settings > Web interface / API); secret, masked on read' }),
          },
          strict,
        ),
        adguard: Type.Object(
          {
            enabled: Type.Boolean(),
            url: SourceUrl('AdGuard Home address, such as http://192.168.1.2:3000'),
            username: Type.String({ maxLength: 256 }),
            password: Type.String({ maxLength: 512, description: 'Secret, masked on read' }),
          },
          strict,
        ),
        unifi: Type.Object(
          {
            enabled: Type.Boolean(),
            url: SourceUrl('UniFi Network controller address, such as https://unifi.lan:8443 or https://192.168.1.1 (UniFi OS)'),
            username: Type.String({ maxLength: 256, description: 'A local controller account (a read-only one is enough)' }),
            password: Type.String({ maxLength: 512, description: 'Secret, masked on read' }),
            site: Type.String({
              minLength: 1,
              maxLength: 64,
              pattern: '^[A-Za-z0-9_-]+$',
              description: 'Site name as in the controller URL, usually "default"',
            }),
            unifi_os: Type.Boolean({
              description: 'The controller runs on UniFi OS (UDM, Cloud Key Gen2+, UniFi OS Server): /api/auth/login and /proxy/network',
            }),
            verify_tls: Type.Boolean({ description: "Check the controller's TLS certificate (controllers ship a self-signed one)" }),
          },
          strict,
        ),
        dhcp_leases: Type.Object(
          {
            enabled: Type.Boolean(),
            path: Type.String({ maxLength: 4096, description: 'Lease file readable by this service, such as /var/lib/misc/dnsmasq.leases' }),
            format: Type.Union(
              LEASE_FILE_FORMATS.map((f) => Type.Literal(f)),
              { description: 'dnsmasq, isc (dhcpd.leases), kea (CSV) or auto' },
            ),
          },
          strict,
        ),
      },
      {
        ...strict,
        description:
          "Names and MACs from the network's own records, looked up at each scan: fills hostnames the scan did not find and MACs it could not see. Each source is off until enabled.",
      },
    ),
    metrics: Type.Object(
      {
        public: Type.Boolean({
          description: 'Serve GET /metrics (Prometheus) without authentication; false: it needs an API key or a session like the API',
        }),
      },
      strict,
    ),
    recognition: Type.Object(
      {
        probes: Type.Array(Type.Union(PROBE_NAMES.map((p) => Type.Literal(p))), {
          uniqueItems: true,
          description:
            'Recognition probes run after the port scan on every host a scan reached, unicast to that host only (mdns, ssdp, netbios, snmp, http, tls, ssh); an empty list runs none',
        }),
        snmp_communities: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
          maxItems: 8,
          description: `SNMP v2c communities the snmp probe tries in turn (read-only requests); default public. Secrets: each reads back as "${SECRET_MASK}", and a mask sent back keeps the community stored at its place`,
        }),
      },
      { ...strict, description: 'What a scan asks each host it reached, to recognise what the device is (docs/recognition.md)' },
    ),
    presence: Type.Object(
      {
        offline_after_scans: Type.Integer({
          minimum: OFFLINE_AFTER_SCANS.min,
          maximum: OFFLINE_AFTER_SCANS.max,
          description:
            'A device goes offline (and is reported device_removed) only after it was missing from this many consecutive completed network scans of its address',
        }),
      },
      strict,
    ),
  },
  strict,
);

export type Settings = Static<typeof SettingsSchema>;
export type RiskRuleSetting = Static<typeof RiskRuleSchema>;

/**
 * Where scans may go unless configured otherwise: the private (RFC 1918), carrier-grade NAT,
 * link-local and loopback ranges. Nothing public is scanned by accident.
 */
export const DEFAULT_ALLOWED_TARGETS = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16', '127.0.0.0/8'];

/** DNS, DHCP, TFTP, NTP, NetBIOS names, SNMP, IKE, SSDP and mDNS: what answers on UDP in a home or office network. */
export const DEFAULT_UDP_PORTS = '53,67,69,123,137,161,500,1900,5353';

export const DEFAULT_UPDATE_FEED = 'https://api.github.com/repos/netwarden/netwarden/releases/latest';

export function defaultSettings(): Settings {
  return {
    network: { subnet: '192.168.1.0/24', exclude: [], resolve_hostnames: false },
    scanning: {
      port_range: '1-1000',
      top_ports: 1000,
      udp_ports: DEFAULT_UDP_PORTS,
      engine: 'auto',
      default_profile: DEFAULT_SCAN_PROFILE,
      max_hosts: 65_536,
      scan_timeout_minutes: 120,
      host_timeout_seconds: 300,
      os_detection: true,
      max_parallel_scans: 1,
      risk_rules: [],
      allowed_targets: [...DEFAULT_ALLOWED_TARGETS],
    },
    zones: [...DEFAULT_ZONES],
    updates: { enabled: true, feed_url: DEFAULT_UPDATE_FEED, cache_minutes: 360, token: '' },
    retention: { days: 365 },
    server: { trust_proxy: false, session_hours: 12, remember_days: 30, secure_cookies: false, public_url: '' },
    presence: { offline_after_scans: 1 },
    recognition: { probes: [...PROBE_NAMES], snmp_communities: ['public'] },
    metrics: { public: false },
    name_sources: {
      pihole: { enabled: false, url: '', password: '' },
      adguard: { enabled: false, url: '', username: '', password: '' },
      unifi: { enabled: false, url: '', username: '', password: '', site: 'default', unifi_os: false, verify_tls: false },
      dhcp_leases: { enabled: false, path: '', format: 'auto' },
    },
  };
}

/**
 * Secrets in the configuration: never returned (masked on read), and bound to the destination
 * they are sent to. Changing the destination without giving the secret again in the same update
 * clears it, so no secret ever follows a new destination.
 */
const SECRETS: ReadonlyArray<{ path: readonly string[]; key: string; destination: string; tls?: string }> = [
  { path: ['updates'], key: 'token', destination: 'feed_url' },
  { path: ['name_sources', 'pihole'], key: 'password', destination: 'url' },
  { path: ['name_sources', 'adguard'], key: 'password', destination: 'url' },
  // Turning certificate checks off counts as a new destination: anyone in the path could pose as the controller.
  { path: ['name_sources', 'unifi'], key: 'password', destination: 'url', tls: 'verify_tls' },
];

/** The object at `path` inside a settings document (or a patch), if there is one. */
function at(document: unknown, path: readonly string[]): Record<string, unknown> | undefined {
  let node: unknown = document;
  for (const key of path) node = isObject(node) && Object.hasOwn(node, key) ? node[key] : undefined;
  return isObject(node) ? node : undefined;
}

export type SettingsResult = { ok: true; settings: Settings } | { ok: false; error: string };

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * Deep-merges `patch` into `base`: objects merge key by key, arrays and scalars replace,
 * and `null` resets a key to its default. A key with no default stays `null`, for validation
 * to name as unknown. Returns a new object.
 */
export function mergeSettings(base: unknown, patch: unknown, defaults: unknown = defaultSettings()): unknown {
  if (!isObject(patch) || !isObject(base)) return patch;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    // Own keys only: `toString` or `constructor` in a patch are unknown keys, not Object.prototype's.
    const fallback = ownValue(defaults, key);
    const current = ownValue(base, key);
    if (value === null) out[key] = fallback === undefined ? null : structuredClone(fallback);
    else if (isObject(value) && isObject(current)) out[key] = mergeSettings(current, value, fallback);
    else out[key] = value;
  }
  return out;
}

function ownValue(object: unknown, key: string): unknown {
  return isObject(object) && Object.hasOwn(object, key) ? object[key] : undefined;
}

/** Checks a complete settings document; the first problem is reported as `path.to.key: message`. */
export function validateSettings(candidate: unknown): SettingsResult {
  const first = Value.Errors(SettingsSchema, candidate).First();
  if (first) return { ok: false, error: `${pathOf(first.path)}: ${describeError(first.schema, first.message, first.value)}` };
  const settings = candidate as Settings;

  const subnet = parseIpv4Network(settings.network.subnet);
  if (!subnet.ok) return { ok: false, error: `network.subnet: ${subnet.error}` };
  if (subnet.value.size > settings.scanning.max_hosts) {
    return {
      ok: false,
      error: `network.subnet: ${subnet.value.cidr} has ${subnet.value.size} addresses, more than scanning.max_hosts (${settings.scanning.max_hosts})`,
    };
  }
  for (const [i, entry] of settings.network.exclude.entries()) {
    const parsed = parseIpv4Network(entry);
    if (!parsed.ok) return { ok: false, error: `network.exclude.${i}: ${parsed.error}` };
  }
  for (const [i, entry] of settings.scanning.allowed_targets.entries()) {
    const parsed = parseIpv4Network(entry);
    if (!parsed.ok) return { ok: false, error: `scanning.allowed_targets.${i}: ${parsed.error}` };
  }
  const ports = parsePortRanges(settings.scanning.port_range);
  if (!ports.ok) return { ok: false, error: `scanning.port_range: ${ports.error}` };
  let udpPorts = '';
  if (settings.scanning.udp_ports.trim() !== '') {
    const udp = parsePortRanges(settings.scanning.udp_ports);
    if (!udp.ok) return { ok: false, error: `scanning.udp_ports: ${udp.error}; or "" for no UDP port` };
    if (countPorts(udp.value) > MAX_UDP_PORTS) {
      return {
        ok: false,
        error: `scanning.udp_ports: lists ${countPorts(udp.value)} ports, more than ${MAX_UDP_PORTS}; each silent UDP port costs a timeout`,
      };
    }
    udpPorts = formatPortRanges(udp.value);
  }
  if (!isHttpUrl(settings.updates.feed_url)) {
    return { ok: false, error: 'updates.feed_url: must be an http:// or https:// URL' };
  }
  if (settings.server.public_url !== '' && !isHttpUrl(settings.server.public_url)) {
    return { ok: false, error: 'server.public_url: must be an http:// or https:// URL such as https://netwarden.example.lan, or "" for none' };
  }
  const sources = settings.name_sources;
  for (const name of ['pihole', 'adguard', 'unifi'] as const) {
    const url = sources[name].url;
    if (url === '' ? sources[name].enabled : !isHttpUrl(url)) {
      return {
        ok: false,
        error: `name_sources.${name}.url: must be an http:// or https:// URL${sources[name].enabled ? ' while the source is enabled' : ', or "" for none'}`,
      };
    }
    if (url !== '' && hasUserInfo(url)) {
      return { ok: false, error: `name_sources.${name}.url: must not carry credentials; give them in the source's username and password` };
    }
  }
  if (sources.dhcp_leases.enabled && !sources.dhcp_leases.path.startsWith('/')) {
    return { ok: false, error: 'name_sources.dhcp_leases.path: must be the absolute path of a lease file while the source is enabled' };
  }
  if (Array.isArray(settings.server.trust_proxy)) {
    for (const [i, entry] of settings.server.trust_proxy.entries()) {
      if (!parseIpv4Network(entry).ok) {
        return { ok: false, error: `server.trust_proxy.${i}: must be an IPv4 address or CIDR block of a trusted proxy` };
      }
    }
  }
  const ruleIds = new Set<string>();
  for (const [i, rule] of settings.scanning.risk_rules.entries()) {
    // A built-in rule can be switched off ({id, enabled:false}) or partly overridden by its id.
    const builtin = BUILTIN_RISK_RULE_IDS.has(rule.id);
    if (rule.enabled !== false && !builtin) {
      if (rule.port === undefined && rule.service === undefined) {
        return { ok: false, error: `scanning.risk_rules.${i}: a rule needs a port, a service or both` };
      }
      if (!rule.severity) return { ok: false, error: `scanning.risk_rules.${i}.severity: is required for a new rule` };
      if (!rule.title) return { ok: false, error: `scanning.risk_rules.${i}.title: is required for a new rule` };
    }
    if (ruleIds.has(rule.id)) return { ok: false, error: `scanning.risk_rules.${i}.id: duplicate rule id '${rule.id}'` };
    ruleIds.add(rule.id);
  }
  return {
    ok: true,
    settings: {
      ...settings,
      network: {
        ...settings.network,
        subnet: subnet.value.cidr,
        exclude: settings.network.exclude.map(canonicalCidr),
      },
      scanning: { ...settings.scanning, udp_ports: udpPorts, allowed_targets: settings.scanning.allowed_targets.map(canonicalCidr) },
    },
  };
}

/**
 * Applies a partial update to the current settings. Masked secrets sent back unchanged keep
 * their stored value.
 */
export function applySettingsPatch(current: Settings, patch: unknown): SettingsResult {
  if (!isObject(patch)) return { ok: false, error: 'body: must be a JSON object with configuration sections' };
  if (Object.keys(patch).length === 0) return { ok: false, error: 'body: no configuration keys given' };
  const merged = mergeSettings(current, patch) as Record<string, Record<string, unknown>>;
  for (const { path, key, destination, tls } of SECRETS) {
    const s = at(merged, path);
    const before = at(current, path);
    if (!s || !before) continue;
    const given = at(patch, path)?.[key];
    const givenAgain = typeof given === 'string' && given !== SECRET_MASK;
    const moved = s[destination] !== before[destination] || (tls !== undefined && before[tls] === true && s[tls] !== true);
    if (moved && !givenAgain) s[key] = '';
    else if (s[key] === SECRET_MASK) s[key] = before[key];
  }
  // SNMP communities are secrets too, a list of them: a mask sent back keeps the community stored at its place.
  const communities = at(patch, ['recognition'])?.snmp_communities;
  if (Array.isArray(communities)) {
    const stored = current.recognition.snmp_communities;
    const kept: unknown[] = [];
    for (const [i, given] of communities.entries()) {
      if (given !== SECRET_MASK) kept.push(given);
      else if (i < stored.length) kept.push(stored[i]);
      else
        return {
          ok: false,
          error: `recognition.snmp_communities.${i}: give the community itself; ${SECRET_MASK} only keeps one already stored at that place`,
        };
    }
    merged.recognition.snmp_communities = kept;
  }
  return validateSettings(merged);
}

/** Fills keys missing from a stored (possibly older) document with defaults. */
export function withDefaults(stored: unknown): Settings {
  const merged = mergeSettings(defaultSettings(), isObject(stored) ? stored : {});
  const result = validateSettings(merged);
  return result.ok ? result.settings : defaultSettings();
}

/** The configuration as clients see it: secrets replaced by the mask (or `""` when unset). */
export function maskSettings(settings: Settings): Settings {
  const copy = structuredClone(settings) as unknown as Record<string, unknown>;
  for (const { path, key } of SECRETS) {
    const s = at(copy, path);
    if (s?.[key]) s[key] = SECRET_MASK;
  }
  // Each SNMP community is a password to the device's management: masked one by one (how many there are shows).
  const masked = copy as unknown as Settings;
  masked.recognition.snmp_communities = masked.recognition.snmp_communities.map(() => SECRET_MASK);
  return masked;
}

function canonicalCidr(text: string): string {
  const parsed = parseIpv4Network(text);
  return parsed.ok ? parsed.value.cidr : text;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function hasUserInfo(text: string): boolean {
  const url = new URL(text);
  return url.username !== '' || url.password !== '';
}

function pathOf(pointer: string): string {
  const path = pointer.replace(/^\//, '').split('/').join('.');
  return path === '' ? 'body' : path;
}

function describeError(schema: TSchema, message: string, value: unknown): string {
  if (schema.anyOf && Array.isArray(schema.anyOf) && schema.anyOf.every((s: TSchema) => 'const' in s)) {
    return `must be one of ${schema.anyOf.map((s: TSchema) => String(s.const)).join(', ')}`;
  }
  if (value === undefined) return 'is required';
  if (message.startsWith('Unexpected property')) return 'is not a known configuration key';
  return message.charAt(0).toLowerCase() + message.slice(1);
}

export type { Json };
