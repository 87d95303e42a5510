/**
 * The stored configuration: its schema, defaults, validation, partial updates and masking.
 * Pure: the shell loads and saves the document; everything here is plain data in, data out.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parseIpv4Network, parsePortRanges } from './net.js';
import { BUILTIN_RISK_RULES } from './risk-rules.js';

const BUILTIN_RISK_RULE_IDS = new Set(BUILTIN_RISK_RULES.map((r) => r.id));

export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
export const SCAN_PROFILES = ['quick', 'normal', 'intensive'] as const;
export const SCAN_ENGINES = ['auto', 'nmap', 'native'] as const;
export const DEFAULT_ZONES = ['Servers', 'Network', 'Workstations', 'IoT', 'DMZ', 'Guest'];

/** Shown instead of a secret value; sending it back in an update keeps the stored secret. */
export const SECRET_MASK = '********';

const strict = { additionalProperties: false } as const;

const ZoneName = Type.String({ minLength: 1, maxLength: 40, pattern: '^\\S(.*\\S)?$' });

export const RiskRuleSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9_.-]*$' }),
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
    protocol: Type.Optional(Type.Union([Type.Literal('tcp'), Type.Literal('udp')])),
    service: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    severity: Type.Optional(Type.Union(SEVERITIES.filter((s) => s !== 'info').map((s) => Type.Literal(s)))),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    recommendation: Type.Optional(Type.String({ maxLength: 2000 })),
    enabled: Type.Optional(Type.Boolean()),
  },
  strict,
);

export const SettingsSchema = Type.Object(
  {
    network: Type.Object(
      {
        subnet: Type.String({ description: 'Default scan target, IPv4 CIDR such as 192.168.1.0/24' }),
        exclude: Type.Array(Type.String(), {
          maxItems: 256,
          description: 'Addresses or CIDR blocks never scanned',
        }),
        resolve_hostnames: Type.Boolean({ description: 'Reverse DNS lookups during scans' }),
      },
      strict,
    ),
    scanning: Type.Object(
      {
        port_range: Type.String({ description: '<low>-<high>, or a comma list of ports and ranges' }),
        engine: Type.Union(SCAN_ENGINES.map((e) => Type.Literal(e))),
        default_profile: Type.Union(SCAN_PROFILES.map((p) => Type.Literal(p))),
        max_hosts: Type.Integer({ minimum: 1, maximum: 16_777_216, description: 'Largest subnet a scan accepts, in addresses' }),
        scan_timeout_minutes: Type.Integer({ minimum: 1, maximum: 1440 }),
        host_timeout_seconds: Type.Integer({ minimum: 5, maximum: 3600 }),
        os_detection: Type.Boolean({ description: 'OS detection when privileged (normal and intensive profiles)' }),
        risk_rules: Type.Array(RiskRuleSchema, { maxItems: 500, description: 'Rules added to or overriding the built-in risk rules, by id' }),
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
    server: Type.Object(
      {
        trust_proxy: Type.Union([Type.Boolean(), Type.Array(Type.String(), { maxItems: 64 })], {
          description: 'Honour X-Forwarded-For: false, true (any peer) or a list of proxy addresses/CIDRs',
        }),
        session_hours: Type.Integer({ minimum: 1, maximum: 720 }),
        remember_days: Type.Integer({ minimum: 1, maximum: 365 }),
        secure_cookies: Type.Boolean({ description: 'Always mark the session cookie Secure (it is anyway over HTTPS)' }),
      },
      strict,
    ),
  },
  strict,
);

export type Settings = Static<typeof SettingsSchema>;
export type RiskRuleSetting = Static<typeof RiskRuleSchema>;

export const DEFAULT_UPDATE_FEED = 'https://api.github.com/repos/netwarden/netwarden/releases/latest';

export function defaultSettings(): Settings {
  return {
    network: { subnet: '192.168.1.0/24', exclude: [], resolve_hostnames: false },
    scanning: {
      port_range: '1-1000',
      engine: 'auto',
      default_profile: 'normal',
      max_hosts: 65_536,
      scan_timeout_minutes: 120,
      host_timeout_seconds: 300,
      os_detection: true,
      risk_rules: [],
    },
    zones: [...DEFAULT_ZONES],
    updates: { enabled: true, feed_url: DEFAULT_UPDATE_FEED, cache_minutes: 360, token: '' },
    server: { trust_proxy: false, session_hours: 12, remember_days: 30, secure_cookies: false },
  };
}

/** Paths whose values are secrets: never returned, masked on read. */
const SECRET_PATHS: ReadonlyArray<readonly [keyof Settings, string]> = [['updates', 'token']];

export type SettingsResult = { ok: true; settings: Settings } | { ok: false; error: string };

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Deep-merges `patch` into `base`: objects merge key by key, arrays and scalars replace,
 * and `null` resets a key to its default. A key with no default stays `null`, for validation
 * to name as unknown. Returns a new object.
 */
export function mergeSettings(base: unknown, patch: unknown, defaults: unknown = defaultSettings()): unknown {
  if (!isPlainObject(patch) || !isPlainObject(base)) return patch;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    // Own keys only: `toString` or `constructor` in a patch are unknown keys, not Object.prototype's.
    const fallback = ownValue(defaults, key);
    const current = ownValue(base, key);
    if (value === null) out[key] = fallback === undefined ? null : structuredClone(fallback);
    else if (isPlainObject(value) && isPlainObject(current)) out[key] = mergeSettings(current, value, fallback);
    else out[key] = value;
  }
  return out;
}

function ownValue(object: unknown, key: string): unknown {
  return isPlainObject(object) && Object.hasOwn(object, key) ? object[key] : undefined;
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
  const ports = parsePortRanges(settings.scanning.port_range);
  if (!ports.ok) return { ok: false, error: `scanning.port_range: ${ports.error}` };
  if (!isHttpUrl(settings.updates.feed_url)) {
    return { ok: false, error: 'updates.feed_url: must be an http:// or https:// URL' };
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
        exclude: settings.network.exclude.map((e) => {
          const parsed = parseIpv4Network(e);
          return parsed.ok ? parsed.value.cidr : e;
        }),
      },
    },
  };
}

/**
 * Applies a partial update to the current settings. Masked secrets sent back unchanged keep
 * their stored value.
 */
export function applySettingsPatch(current: Settings, patch: unknown): SettingsResult {
  if (!isPlainObject(patch)) return { ok: false, error: 'body: must be a JSON object with configuration sections' };
  if (Object.keys(patch).length === 0) return { ok: false, error: 'body: no configuration keys given' };
  const merged = mergeSettings(current, patch) as Record<string, Record<string, unknown>>;
  for (const [section, key] of SECRET_PATHS) {
    const s = merged[section];
    if (isPlainObject(s) && s[key] === SECRET_MASK) s[key] = (current[section] as Record<string, unknown>)[key];
  }
  return validateSettings(merged);
}

/** Fills keys missing from a stored (possibly older) document with defaults. */
export function withDefaults(stored: unknown): Settings {
  const merged = mergeSettings(defaultSettings(), isPlainObject(stored) ? stored : {});
  const result = validateSettings(merged);
  return result.ok ? result.settings : defaultSettings();
}

/** The configuration as clients see it: secrets replaced by the mask (or `""` when unset). */
export function maskSettings(settings: Settings): Settings {
  const copy = structuredClone(settings) as unknown as Record<string, Record<string, unknown>>;
  for (const [section, key] of SECRET_PATHS) {
    if (copy[section][key]) copy[section][key] = SECRET_MASK;
  }
  return copy as unknown as Settings;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
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
