/**
 * The fingerprint table: what the recognition probes, the MAC's vendor, nmap's OS detection and the
 * open ports say about what a device is. Pure data (like `risk-rules.ts`) plus the small matcher
 * that applies one rule to one host's observations; `recognition.ts` combines the hits.
 *
 * A rule has conditions (`when`), all of which must hold: a pattern over one text field the probes
 * filled (SNMP sysDescr, a UPnP manufacturer, an mDNS TXT `key=value`, an HTTP title…), or a set
 * of open ports. Named captures of the patterns (`model`, `version`, …) fill `{name}` placeholders
 * in what the rule yields: a device type (`device-types.ts`), vendor, model, operating system and
 * version, and CPEs for CVE matching (CPE 2.2 URIs as nmap writes them, as `cve/cpe.ts` reads them;
 * a `:{name}` whose capture is absent is left out). Each rule has one confidence (0–100) for what
 * it yields, with per-field exceptions (a MAC's vendor names the maker surely, the type hardly).
 *
 * Every rule carries examples that must fire it and examples that must not (test/core/fingerprints
 * .test.ts runs them all). A string example is a value of the first condition's field; an object
 * gives values per field and the open ports.
 *
 * The rules are written for this project from the devices' own documented or observed answers;
 * public collections (Rapid7 Recog, Fingerbank) only showed which fields are worth reading.
 * Nothing here is taken from nmap's data files.
 */
import type { DeviceType } from './device-types.js';
import { literalFilterOf, mayMatch, type LiteralFilter } from './fingerprint-literals.js';

/** The text fields a rule can read. */
export const FINGERPRINT_FIELDS = [
  'snmp_sysdescr',
  'snmp_sysobjectid',
  'upnp_manufacturer',
  'upnp_model',
  'upnp_device_type',
  'upnp_friendly_name',
  'upnp_server',
  'mdns_service',
  'mdns_txt',
  'mdns_name',
  'http_title',
  'http_server',
  'tls_subject',
  'tls_issuer',
  'ssh_banner',
  'netbios_name',
  'nmap_os_name',
  'nmap_os_class',
  'nmap_os_cpe',
  'oui_vendor',
  'mac',
  'hostname',
  'port_product',
] as const;
export type FingerprintField = (typeof FINGERPRINT_FIELDS)[number];

/** Where evidence came from, as CONTRACT §15's `source` names it. */
export type EvidenceSource =
  'mdns' | 'ssdp' | 'snmp' | 'netbios' | 'http_title' | 'http_server' | 'tls' | 'ssh' | 'nmap_os' | 'oui' | 'ports' | 'hostname';

/** Each field's source and how a sentence names it. */
export const FIELD_INFO: Readonly<Record<FingerprintField | 'ports', { source: EvidenceSource; label: string }>> = {
  snmp_sysdescr: { source: 'snmp', label: 'SNMP sysDescr' },
  snmp_sysobjectid: { source: 'snmp', label: 'SNMP sysObjectID' },
  upnp_manufacturer: { source: 'ssdp', label: 'UPnP manufacturer' },
  upnp_model: { source: 'ssdp', label: 'UPnP model name' },
  upnp_device_type: { source: 'ssdp', label: 'UPnP device type' },
  upnp_friendly_name: { source: 'ssdp', label: 'UPnP friendly name' },
  upnp_server: { source: 'ssdp', label: 'SSDP server header' },
  mdns_service: { source: 'mdns', label: 'mDNS service' },
  mdns_txt: { source: 'mdns', label: 'mDNS TXT record' },
  mdns_name: { source: 'mdns', label: 'mDNS name' },
  http_title: { source: 'http_title', label: 'HTTP title' },
  http_server: { source: 'http_server', label: 'HTTP Server header' },
  tls_subject: { source: 'tls', label: 'TLS certificate subject' },
  tls_issuer: { source: 'tls', label: 'TLS certificate issuer' },
  ssh_banner: { source: 'ssh', label: 'SSH banner' },
  netbios_name: { source: 'netbios', label: 'NetBIOS name' },
  nmap_os_name: { source: 'nmap_os', label: 'nmap OS match' },
  nmap_os_class: { source: 'nmap_os', label: 'nmap OS class' },
  nmap_os_cpe: { source: 'nmap_os', label: 'nmap OS CPE' },
  oui_vendor: { source: 'oui', label: 'MAC vendor' },
  mac: { source: 'oui', label: 'MAC address' },
  hostname: { source: 'hostname', label: 'Host name' },
  port_product: { source: 'ports', label: 'Service product' },
  ports: { source: 'ports', label: 'Open ports' },
};

/** A port a rule needs open: a number is TCP, `161/udp` is UDP. */
export type PortSpec = number | `${number}/udp`;

/** A pattern over one text field, or over any of several (the first that matches counts). */
export interface TextCondition {
  field: FingerprintField | readonly FingerprintField[];
  pattern: RegExp;
}

/** Open ports, all of which must be open. */
export interface PortsCondition {
  field: 'ports';
  ports: readonly PortSpec[];
}

export type FingerprintCondition = TextCondition | PortsCondition;

/** One field's value as a rule sees it. */
export interface ObservedValue {
  value: string;
  /** 0–1: how much a match on it counts (nmap's accuracy; 1 otherwise). */
  weight: number;
  /** Where it was seen, for the sentence: `port 5001`, `accuracy 96%`. */
  where: string | null;
  /** The value in lower case, kept by matching once computed (the literal pre-filters read it). */
  lower?: string;
}

/** Everything known about one host, as the rules read it. */
export interface Observation {
  values: ReadonlyMap<FingerprintField, readonly ObservedValue[]>;
  /** Open ports as `22/tcp`, `161/udp`. */
  ports: ReadonlySet<string>;
}

/** A rule example: a value of the first condition's field, or values per field and open ports. */
export type FingerprintExample = string | ({ ports?: readonly PortSpec[] } & Partial<Record<FingerprintField, string | readonly string[]>>);

/** The fields a rule yields (besides CPEs). */
export type YieldField = 'device_type' | 'vendor' | 'model' | 'os_name' | 'os_version' | 'cpe';

export interface FingerprintRule {
  /** Stable identifier, shown with the evidence. */
  id: string;
  /** What a match means, ending the evidence sentence: "… matches Synology DSM". */
  label: string;
  when: readonly FingerprintCondition[];
  type?: DeviceType;
  vendor?: string;
  model?: string;
  os?: string;
  osVersion?: string;
  cpes?: readonly string[];
  /** 0–100, for every field the rule yields unless `confidences` says otherwise. */
  confidence: number;
  confidences?: Partial<Record<YieldField, number>>;
  examples: { match: readonly FingerprintExample[]; noMatch: readonly FingerprintExample[] };
}

/* ------------------------------------------------------------------------------------------------
 * Matching
 * --------------------------------------------------------------------------------------------- */

export interface ConditionMatch {
  field: FingerprintField | 'ports';
  value: string;
  where: string | null;
  /** Where in `value` the pattern matched, and how much of it (for quoting the part that counts). */
  index: number;
  length: number;
}

export interface RuleHit {
  rule: FingerprintRule;
  /** Named captures of all conditions (the first condition's win). */
  captures: Record<string, string>;
  /** What each condition matched, in order. */
  matched: ConditionMatch[];
  /** 0–1: the smallest weight among the values matched. */
  weight: number;
}

export function portKey(spec: PortSpec): string {
  return typeof spec === 'number' ? `${spec}/tcp` : spec;
}

/** Each text field's position in FINGERPRINT_FIELDS; its bit (which fields a host has values of, as one number) is 2 to that power. */
const FIELD_INDEX: ReadonlyMap<FingerprintField, number> = new Map(FINGERPRINT_FIELDS.map((f, i) => [f, i]));

/**
 * A condition as matching uses it (compiled once per rule): its fields as a list and as bits, its
 * pattern's literal pre-filter (`fingerprint-literals.ts`), port specs as keys.
 */
type CompiledCondition =
  | { kind: 'text'; fields: readonly FingerprintField[]; indexes: readonly number[]; bits: number; pattern: RegExp; filter: LiteralFilter | null }
  | { kind: 'ports'; keys: readonly string[]; value: string };

const compiledRules = new WeakMap<FingerprintRule, readonly CompiledCondition[]>();

function compiled(rule: FingerprintRule): readonly CompiledCondition[] {
  let conditions = compiledRules.get(rule);
  if (!conditions) {
    conditions = rule.when.map((c): CompiledCondition => {
      if (c.field === 'ports') {
        const keys = c.ports.map(portKey);
        return { kind: 'ports', keys, value: keys.join(', ') };
      }
      const t = c;
      const fields: readonly FingerprintField[] = typeof t.field === 'string' ? [t.field] : t.field;
      const indexes = fields.map((f) => FIELD_INDEX.get(f) ?? -1);
      let bits = 0;
      for (const i of indexes) if (i >= 0) bits |= 2 ** i;
      return { kind: 'text', fields, indexes, bits, pattern: t.pattern, filter: literalFilterOf(t.pattern) };
    });
    compiledRules.set(rule, conditions);
  }
  return conditions;
}

/** The observation's values by field position, and the bits of the fields it has values of. */
interface Indexed {
  byField: (readonly ObservedValue[] | undefined)[];
  bits: number;
}

function indexed(obs: Observation): Indexed {
  const byField = new Array<readonly ObservedValue[] | undefined>(FINGERPRINT_FIELDS.length).fill(undefined);
  let bits = 0;
  for (const [field, list] of obs.values) {
    const i = FIELD_INDEX.get(field);
    if (i === undefined) continue;
    byField[i] = list;
    bits |= 2 ** i;
  }
  return { byField, bits };
}

/** The rule's hit on an observation, or null when one of its conditions does not hold. */
export function matchRule(rule: FingerprintRule, obs: Observation): RuleHit | null {
  return matchCompiled(rule, compiled(rule), obs, indexed(obs));
}

/**
 * What one value of a field gives one rule whose only condition is a pattern over that field,
 * worked out once per value (`FieldValueCache`): where the pattern matched, its captures, and, as
 * recognition asks for them, what the hit yields and its condition matches by `where`. Shared by
 * every host that offers the same value, so nothing here is ever changed once made.
 */
interface ValueHit {
  order: number;
  /** The field's position in the condition's fields (the first field that matches wins). */
  fieldPos: number;
  index: number;
  length: number;
  captures: Record<string, string>;
  /** The condition match by `where` (`port 80`, …), made on first use. */
  matches: Map<string | null, ConditionMatch> | null;
}

/**
 * The single-condition rules' hits on each value of one field, by value. Many hosts offer the same
 * banners, services, TXT records and MAC vendors: a value seen before costs one lookup instead of a
 * pre-filter test (and now and then a regular expression) per rule reading the field (profiled on
 * 10,000 hosts). Bounded: cleared when full (values unique to a host, a MAC or a name, fill it).
 */
const VALUES_CACHED_PER_FIELD = 4096;

interface CompiledTable {
  conditions: readonly (readonly CompiledCondition[])[];
  /** Bits of each rule's first text condition (0: none); used for the rules matched one by one. */
  firstBits: Int32Array;
  /** Rules not of one text condition, in order: matched one by one. */
  general: readonly number[];
  /** By field position: the rules of one text condition reading the field, with the field's position in their condition. */
  singles: readonly (readonly { order: number; fieldPos: number }[])[];
  /** By field position: the single-condition hits of each value seen. */
  valueHits: Map<string, readonly ValueHit[]>[];
}

/** Each table's rules compiled once (most rules read one field a host rarely has, and are passed over on that alone). */
const compiledTables = new WeakMap<readonly FingerprintRule[], CompiledTable>();

function compiledTable(rules: readonly FingerprintRule[]): CompiledTable {
  let table = compiledTables.get(rules);
  if (!table) {
    const conditions = rules.map(compiled);
    const firstBits = new Int32Array(rules.length);
    const general: number[] = [];
    const singles: { order: number; fieldPos: number }[][] = FINGERPRINT_FIELDS.map(() => []);
    conditions.forEach((cs, i) => {
      const first = cs.find((c) => c.kind === 'text');
      firstBits[i] = first?.kind === 'text' ? first.bits : 0;
      const only = cs.length === 1 ? cs[0] : null;
      if (only?.kind === 'text' && only.indexes.every((x) => x >= 0) && new Set(only.indexes).size === only.indexes.length) {
        only.indexes.forEach((x, fieldPos) => singles[x].push({ order: i, fieldPos }));
      } else general.push(i);
    });
    table = { conditions, firstBits, general, singles, valueHits: FINGERPRINT_FIELDS.map(() => new Map<string, readonly ValueHit[]>()) };
    compiledTables.set(rules, table);
  }
  return table;
}

/** The single-condition rules' hits on `value` of the field at `fieldIndex` (cached). */
function valueHitsOf(table: CompiledTable, fieldIndex: number, value: string): readonly ValueHit[] {
  const cache = table.valueHits[fieldIndex];
  let hits = cache.get(value);
  if (hits === undefined) {
    const out: ValueHit[] = [];
    let lower: string | undefined;
    for (const { order, fieldPos } of table.singles[fieldIndex]) {
      const c = table.conditions[order][0];
      if (c.kind !== 'text') continue;
      const { filter, pattern } = c;
      if (filter && !mayMatch(filter, filter.lowerCase ? (lower ??= value.toLowerCase()) : value)) continue;
      const m = pattern.exec(value);
      if (!m) continue;
      out.push({ order, fieldPos, index: m.index, length: m[0].length, captures: capturesOf(m.groups, {}), matches: null });
    }
    hits = out;
    if (cache.size >= VALUES_CACHED_PER_FIELD) cache.clear();
    cache.set(value, hits);
  }
  return hits;
}

/** Conditions matches made from the value cache: shared between hosts (recognition may key its own memos by them). */
const sharedMatches = new WeakSet<ConditionMatch>();

/** Whether `m` came from the value cache: the same object for every host offering its value, where and rule. */
export function isSharedMatch(m: ConditionMatch): boolean {
  return sharedMatches.has(m);
}

/** Hits' yields computed once per cached value hit (by its captures, which are its own). */
const valueHitYields = new WeakMap<Record<string, string>, HitYield>();

/**
 * The hits of `rules` on one observation, in the rules' order, each with its rule's position. A
 * hit's captures and condition matches may be shared with other hosts' hits (the value cache):
 * read them, never change them.
 */
export function matchRules(rules: readonly FingerprintRule[], obs: Observation): { hit: RuleHit; order: number }[] {
  const table = compiledTable(rules);
  const values = indexed(obs);
  const { conditions, firstBits } = table;
  const out: { hit: RuleHit; order: number }[] = [];
  // The rules of one text condition, value by value: per rule the first field (in the condition's
  // order) with a value that matches, and its first such value, as matchCompiled would find it.
  const best = new Map<number, { hit: ValueHit; observed: ObservedValue; field: FingerprintField }>();
  for (let f = 0; f < values.byField.length; f++) {
    const list = values.byField[f];
    if (!list || table.singles[f].length === 0) continue;
    for (const observed of list) {
      for (const hit of valueHitsOf(table, f, observed.value)) {
        const seen = best.get(hit.order);
        if (!seen || hit.fieldPos < seen.hit.fieldPos) best.set(hit.order, { hit, observed, field: FINGERPRINT_FIELDS[f] });
      }
    }
  }
  for (const [order, { hit, observed, field }] of best) {
    const matches = (hit.matches ??= new Map<string | null, ConditionMatch>());
    let m = matches.get(observed.where);
    if (!m) {
      m = { field, value: observed.value, where: observed.where, index: hit.index, length: hit.length };
      sharedMatches.add(m);
      matches.set(observed.where, m);
    }
    out.push({ hit: { rule: rules[order], captures: hit.captures, matched: [m], weight: Math.min(1, observed.weight) }, order });
  }
  for (const order of table.general) {
    if (firstBits[order] !== 0 && (firstBits[order] & values.bits) === 0) continue;
    const hit = matchCompiled(rules[order], conditions[order], obs, values);
    if (hit) out.push({ hit, order });
  }
  return out.sort((a, b) => a.order - b.order);
}

/** The named captures of a match, cleaned, into `captures` (a name already there stays). */
function capturesOf(groups: Record<string, string | undefined> | undefined, captures: Record<string, string>): Record<string, string> {
  if (groups) {
    for (const name in groups) {
      const cleaned = cleanCapture(groups[name]);
      if (cleaned && captures[name] === undefined) captures[name] = cleaned;
    }
  }
  return captures;
}

function matchCompiled(rule: FingerprintRule, conditions: readonly CompiledCondition[], obs: Observation, values: Indexed): RuleHit | null {
  const present = values.bits;
  // Most hosts answer few probes: give up before any work when a condition has nothing to read.
  for (const c of conditions) {
    if (c.kind === 'ports') {
      if (!obs.ports.has(c.keys[0])) return null;
    } else if ((c.bits & present) === 0) {
      return null;
    }
  }
  let captures: Record<string, string> | null = null;
  let matched: ConditionMatch[] | null = null;
  let weight = 1;
  for (const c of conditions) {
    let found: ConditionMatch | null = null;
    if (c.kind === 'ports') {
      for (const k of c.keys) if (!obs.ports.has(k)) return null;
      found = { field: 'ports', value: c.value, where: null, index: 0, length: c.value.length };
    } else {
      const { filter, pattern } = c;
      for (let f = 0; f < c.fields.length; f++) {
        const list = c.indexes[f] >= 0 ? values.byField[c.indexes[f]] : undefined;
        if (!list) continue;
        const field = c.fields[f];
        for (const observed of list) {
          // The literal the pattern needs first: a substring test, where a failing match costs a regex run.
          if (filter && !mayMatch(filter, filter.lowerCase ? (observed.lower ??= observed.value.toLowerCase()) : observed.value)) continue;
          const m = pattern.exec(observed.value);
          if (!m) continue;
          if (m.groups) {
            for (const name in m.groups) {
              const cleaned = cleanCapture(m.groups[name]);
              captures ??= {};
              if (cleaned && captures[name] === undefined) captures[name] = cleaned;
            }
          }
          weight = Math.min(weight, observed.weight);
          found = { field, value: observed.value, where: observed.where, index: m.index, length: m[0].length };
          break;
        }
        if (found) break;
      }
      if (!found) return null;
    }
    (matched ??= []).push(found);
  }
  return { rule, captures: captures ?? {}, matched: matched ?? [], weight };
}

function cleanCapture(text: string | undefined): string {
  const t = text ?? '';
  // Whitespace other than single spaces is rare: only then is it folded.
  return (/[^\S ]| {2}/.test(t) ? t.replace(/\s+/g, ' ') : t).trim().slice(0, 80);
}

/** What a hit yields, its placeholders filled; fields whose placeholder has no capture are left out. */
export interface HitYield {
  device_type: DeviceType | null;
  vendor: string | null;
  model: string | null;
  os_name: string | null;
  os_version: string | null;
  cpes: string[];
}

/** Each template split at its placeholders, once: text, name, text, name, …, text. */
const templateParts = new Map<string, readonly string[]>();

function partsOf(template: string): readonly string[] {
  let parts = templateParts.get(template);
  if (!parts) {
    parts = template.split(/\{(\w+)\}/);
    templateParts.set(template, parts);
  }
  return parts;
}

function fill(template: string | undefined, captures: Record<string, string>): string | null {
  if (template === undefined) return null;
  if (!template.includes('{')) return template;
  const parts = partsOf(template);
  let text = parts[0];
  for (let i = 1; i < parts.length; i += 2) {
    const value = captures[parts[i]];
    if (value === undefined) return null;
    text += value + parts[i + 1];
  }
  return text.trim() || null;
}

/** A CPE template as filling reads it: a whole captured CPE's name, or each `:`-separated part split at its placeholders. */
const cpeTemplates = new Map<string, { whole: string | null; parts: readonly (readonly string[])[] }>();

/** A CPE with its placeholders filled (CPE-escaped, lower case); a `:{name}` without capture is cut off there. */
function fillCpe(template: string, captures: Record<string, string>): string | null {
  if (!template.includes('{')) return template;
  let compiled = cpeTemplates.get(template);
  if (!compiled) {
    compiled = { whole: /^\{(\w+)\}$/.exec(template)?.[1] ?? null, parts: template.split(':').map((p) => p.split(/\{(\w+)\}/)) };
    cpeTemplates.set(template, compiled);
  }
  // A whole CPE captured as it was written (nmap's own).
  if (compiled.whole !== null) return captures[compiled.whole]?.toLowerCase() ?? null;
  const out: string[] = [];
  for (const parts of compiled.parts) {
    let missing = false;
    for (let i = 1; i < parts.length; i += 2) if (captures[parts[i]] === undefined) missing = true;
    if (missing) break;
    let text = parts[0];
    for (let i = 1; i < parts.length; i += 2) text += captures[parts[i]].toLowerCase().replace(/[^a-z0-9._~+-]/g, '_') + parts[i + 1];
    out.push(text);
  }
  // Part, vendor and product at least: `cpe:/h:synology` alone names nothing.
  return out.length >= 4 ? out.join(':') : null;
}

export function yieldOf(hit: RuleHit): HitYield {
  let y = valueHitYields.get(hit.captures);
  if (y === undefined) {
    // Without captures, a hit yields what its rule says: the same for every host.
    const bare = !hasCaptures(hit.captures);
    y = bare ? bareYields.get(hit.rule) : undefined;
    if (y === undefined) {
      y = yieldOnce(hit);
      // Only a cached value hit's captures are its own (never a host's): its yield is kept with them.
      if (bare) bareYields.set(hit.rule, y);
      else if (isSharedMatch(hit.matched[0])) valueHitYields.set(hit.captures, y);
    }
  }
  return y;
}

/** Each rule's yield on a hit without captures. */
const bareYields = new WeakMap<FingerprintRule, HitYield>();

function hasCaptures(captures: Record<string, string>): boolean {
  for (const _name in captures) return true;
  return false;
}

function yieldOnce(hit: RuleHit): HitYield {
  const { rule, captures } = hit;
  // A vendor taken from what the device said is named by its brand; a rule's own is as written.
  const filled = fill(rule.vendor, captures);
  const vendor = filled !== null && rule.vendor?.includes('{') ? cleanVendor(filled) : filled;
  const os = fill(rule.os, captures);
  return {
    device_type: rule.type ?? null,
    vendor,
    model: fill(rule.model, captures),
    os_name: os === null ? null : canonicalOs(os),
    os_version: fill(rule.osVersion, captures),
    cpes: (rule.cpes ?? []).map((c) => fillCpe(c, captures)).filter((c): c is string => c !== null),
  };
}

/** The confidence (0–100) a rule gives one of its fields. */
export function confidenceOf(rule: FingerprintRule, field: YieldField): number {
  return rule.confidences?.[field] ?? rule.confidence;
}

/**
 * Brands under the names the IEEE registry and UPnP descriptions give their makers: the MAC of a
 * MikroTik router says `Routerboard.com`, an Epson printer's `Seiko Epson Corporation`.
 */
const VENDOR_BRANDS: readonly [RegExp, string][] = [
  [/^Routerboard\.com\b|^Mikrotik/i, 'MikroTik'],
  [/^(?:Hangzhou |Prama )?Hikvision\b/i, 'Hikvision'],
  [/^Zhejiang Dahua Technology\b/i, 'Dahua'],
  [/^Seiko Epson\b|^Epson\b/i, 'Epson'],
  [/^Hewlett[- ]Packard\b(?! Enterprise)|^HP Inc\b|^HP$/i, 'HP'],
  [/^Hewlett Packard Enterprise\b/i, 'HPE'],
  [/^Philips Lighting\b|^Signify\b|^Royal Philips\b/i, 'Philips'],
  [/^Sony Interactive Entertainment\b/i, 'Sony'],
  [/^Nest Labs\b|^Google\b/i, 'Google'],
  [/^Shelly Europe\b|^Allterco\b/i, 'Shelly'],
  [/^AVM (?:Audiovisuelles|GmbH|Berlin|Computersysteme)\b|^AVM$/i, 'AVM'],
  [/^Kyocera Document Solutions\b/i, 'Kyocera'],
  [/^Samsung Electronics\b/i, 'Samsung'],
  [/^LG Electronics\b/i, 'LG'],
  [/^Amazon Technologies\b/i, 'Amazon'],
  [/^Apple,? Inc\b|^Apple$/i, 'Apple'],
  [/^TP-?LINK\b/i, 'TP-Link'],
  [/^NETGEAR\b/i, 'Netgear'],
  [/^Ubiquiti\b/i, 'Ubiquiti'],
  [/^Raspberry Pi\b/i, 'Raspberry Pi'],
  [/^Xiaomi\b/i, 'Xiaomi'],
  [/^Microsoft\b/i, 'Microsoft'],
  [/^Synology\b/i, 'Synology'],
  [/^QNAP\b/i, 'QNAP'],
  [/^Reolink\b/i, 'Reolink'],
  [/^Sonos\b/i, 'Sonos'],
  [/^Roku\b/i, 'Roku'],
  [/^Brother Industries\b/i, 'Brother'],
  [/^Lexmark\b/i, 'Lexmark'],
  [/^Ricoh\b/i, 'Ricoh'],
  [/^Xerox\b/i, 'Xerox'],
  [/^Nintendo\b/i, 'Nintendo'],
  [/^Cisco Meraki\b/i, 'Cisco Meraki'],
  [/^Cisco\b/i, 'Cisco'],
  [/^ASUSTek\b/i, 'ASUS'],
  [/^Huawei\b/i, 'Huawei'],
  [/^Zyxel\b/i, 'Zyxel'],
  [/^D-Link\b/i, 'D-Link'],
  [/^Dell\b/i, 'Dell'],
  [/^Lenovo\b|^LCFC\b/i, 'Lenovo'],
];

/** Operating systems under one name whichever source names them. */
const OS_NAMES: Readonly<Record<string, string>> = {
  'mac os x': 'macOS',
  'os x': 'macOS',
  macos: 'macOS',
  'diskstation manager': 'DSM',
  'synology dsm': 'DSM',
  ios: 'iOS',
  ipados: 'iPadOS',
  routeros: 'RouterOS',
  esxi: 'VMware ESXi',
  'vmware esxi': 'VMware ESXi',
  linux: 'Linux',
  windows: 'Windows',
  freebsd: 'FreeBSD',
  android: 'Android',
  junos: 'Junos',
  fortios: 'FortiOS',
};

/** An operating system name as recognition writes it (`Mac OS X` → `macOS`). */
export function canonicalOs(name: string): string {
  const key = name.trim().toLowerCase();
  // Own keys only: a name such as `constructor` must not find Object's prototype.
  return Object.hasOwn(OS_NAMES, key) ? OS_NAMES[key] : name.trim();
}

/**
 * A company name as a brand: a known maker's brand (`Routerboard.com` → `MikroTik`), else the name
 * without its legal form and trade words (`TP-LINK TECHNOLOGIES CO.,LTD.` → `TP-LINK`).
 */
export function cleanVendor(name: string): string {
  let brand = cleanVendors.get(name);
  if (brand === undefined) {
    brand = cleanVendorOnce(name);
    // Bounded: the same few makers recur on every network; this only guards against growth.
    if (cleanVendors.size >= 10_000) cleanVendors.clear();
    cleanVendors.set(name, brand);
  }
  return brand;
}

const cleanVendors = new Map<string, string>();

function cleanVendorOnce(name: string): string {
  for (const [pattern, brand] of VENDOR_BRANDS) if (pattern.test(name.trim())) return brand;
  const cleaned = name
    .replace(
      /[\s,.]+(?:(?:inc|incorporated|corporation|corp|co|company|ltd|limited|llc|gmbh|ag|s\.?a|b\.?v|sia|pte|plc|technologies|technology|electronics|systems|international|communications|industries|trading|foundation)\b\.?[\s,.]*)+$/i,
      '',
    )
    .replace(/\s+/g, ' ')
    .trim();
  return cleaned || name.trim();
}

/** An example as an observation (the tests use this to run each rule's examples). */
export function observationOfExample(rule: FingerprintRule, example: FingerprintExample): Observation {
  const values = new Map<FingerprintField, ObservedValue[]>();
  const add = (field: FingerprintField, value: string): void => {
    const list = values.get(field);
    if (list) list.push({ value, weight: 1, where: null });
    else values.set(field, [{ value, weight: 1, where: null }]);
  };
  let ports: readonly PortSpec[] = [];
  if (typeof example === 'string') {
    const first = rule.when[0];
    if ('ports' in first) throw new Error(`rule ${rule.id}: a string example needs a text condition first`);
    add(typeof first.field === 'string' ? first.field : first.field[0], example);
  } else {
    for (const [field, value] of Object.entries(example)) {
      if (field === 'ports') ports = value as readonly PortSpec[];
      else for (const v of typeof value === 'string' ? [value] : (value as readonly string[])) add(field as FingerprintField, v);
    }
  }
  return { values, ports: new Set(ports.map(portKey)) };
}

/* ------------------------------------------------------------------------------------------------
 * The table
 * --------------------------------------------------------------------------------------------- */

const WINDOWS = 'cpe:/o:microsoft:windows';
const LINUX_KERNEL = 'cpe:/o:linux:linux_kernel:{version}';
/** OUI vendors that make network chips and modules for other brands: their name says nothing of the device's maker. */
const MODULE_VENDORS =
  'espressif|tuya|realtek|intel|murata|azurewave|hon hai|foxconn|liteon|lite-on|universal global scientific|cloud network technology|wistron|pegatron|qualcomm|broadcom|mediatek|texas instruments|silicon laboratories|shenzhen|hui zhou gaoshengda|private|ieee registration';

export const FINGERPRINT_RULES: readonly FingerprintRule[] = [
  /* ------------------------------------------------------------------ NAS */
  {
    id: 'synology-snmp',
    label: 'Synology DSM',
    when: [{ field: 'snmp_sysdescr', pattern: /\bsynology_(?<platform>[a-z0-9]+)_(?<model>[\w+]+)|^Linux (?:DiskStation|RackStation)\b/i }],
    type: 'nas',
    vendor: 'Synology',
    os: 'DSM',
    cpes: ['cpe:/o:synology:diskstation_manager'],
    confidence: 90,
    examples: {
      match: [
        'Linux nas 4.4.302+ #72806 SMP Thu Sep 5 13:44:21 CST 2024 x86_64 GNU/Linux synology_geminilake_920+',
        'Linux DiskStation 4.4.180+ #42962 SMP',
      ],
      noMatch: ['Linux nas 5.15.0-91-generic #101-Ubuntu SMP x86_64'],
    },
  },
  {
    id: 'synology-upnp-nas',
    label: 'a Synology NAS',
    when: [
      { field: 'upnp_manufacturer', pattern: /^Synology\b/i },
      { field: 'upnp_model', pattern: /^(?<model>(?:DS|RS|DVA|FS|HD|SA|UC|NVR)\d[\w+-]*)/ },
    ],
    type: 'nas',
    vendor: 'Synology',
    model: '{model}',
    os: 'DSM',
    cpes: ['cpe:/o:synology:diskstation_manager', 'cpe:/h:synology:{model}'],
    confidence: 92,
    examples: {
      match: [{ upnp_manufacturer: 'Synology', upnp_model: 'DS920+' }],
      noMatch: [{ upnp_manufacturer: 'Synology', upnp_model: 'RT2600ac' }],
    },
  },
  {
    id: 'synology-upnp-router',
    label: 'a Synology router',
    when: [
      { field: 'upnp_manufacturer', pattern: /^Synology\b/i },
      { field: 'upnp_model', pattern: /^(?<model>(?:RT|MR|WRX)\d\w*)/ },
    ],
    type: 'router',
    vendor: 'Synology',
    model: '{model}',
    os: 'SRM',
    cpes: ['cpe:/o:synology:router_manager'],
    confidence: 92,
    examples: {
      match: [{ upnp_manufacturer: 'Synology Inc.', upnp_model: 'RT6600ax' }],
      noMatch: [{ upnp_manufacturer: 'Synology', upnp_model: 'DS220j' }],
    },
  },
  {
    id: 'synology-ssdp-server',
    label: 'Synology DSM',
    when: [{ field: 'upnp_server', pattern: /^Synology\/DSM\b/i }],
    type: 'nas',
    vendor: 'Synology',
    os: 'DSM',
    confidence: 85,
    examples: { match: ['Synology/DSM/192.168.1.20'], noMatch: ['Linux/5.10 UPnP/1.0 MiniUPnPd/2.3'] },
  },
  {
    id: 'synology-http-title',
    label: 'the Synology DSM web interface',
    when: [{ field: 'http_title', pattern: /Synology (?:DiskStation|RackStation)\b/i }],
    type: 'nas',
    vendor: 'Synology',
    os: 'DSM',
    confidence: 85,
    examples: { match: ['nas - Synology DiskStation', 'Synology RackStation'], noMatch: ['Synology Router Manager'] },
  },
  {
    id: 'synology-dsm-ports',
    label: 'Synology DSM on its own ports',
    when: [
      { field: 'ports', ports: [5000] },
      { field: 'http_title', pattern: /Synology|DiskStation|RackStation|^DSM\b/i },
    ],
    type: 'nas',
    vendor: 'Synology',
    os: 'DSM',
    confidence: 92,
    examples: { match: [{ ports: [5000, 5001], http_title: 'DSM 7.2' }], noMatch: [{ ports: [5000], http_title: 'AirPlay' }, { http_title: 'DSM' }] },
  },
  {
    id: 'synology-dsm-tls-ports',
    label: 'Synology DSM on its own ports',
    when: [
      { field: 'ports', ports: [5001] },
      { field: 'http_title', pattern: /Synology|DiskStation|RackStation|^DSM\b/i },
    ],
    type: 'nas',
    vendor: 'Synology',
    os: 'DSM',
    confidence: 92,
    examples: { match: [{ ports: [5001], http_title: 'Synology DiskStation' }], noMatch: [{ ports: [5001], http_title: 'Portainer' }] },
  },
  {
    id: 'synology-tls',
    label: "Synology's default certificate",
    when: [{ field: ['tls_issuer', 'tls_subject'], pattern: /Synology Inc\. CA|O=Synology\b/i }],
    type: 'nas',
    vendor: 'Synology',
    confidence: 75,
    examples: { match: ['CN=Synology Inc. CA, O=Synology Inc., C=TW'], noMatch: ["CN=R3, O=Let's Encrypt, C=US"] },
  },
  {
    id: 'synology-netbios',
    label: "Synology's default name",
    when: [{ field: ['netbios_name', 'hostname', 'mdns_name'], pattern: /^(?:DiskStation|RackStation)(?:\.|$)/i }],
    type: 'nas',
    vendor: 'Synology',
    confidence: 60,
    examples: { match: ['DISKSTATION', { mdns_name: 'diskstation.local' }], noMatch: ['MEDIASTATION'] },
  },
  {
    id: 'qnap-snmp',
    label: 'QNAP QTS',
    when: [{ field: 'snmp_sysdescr', pattern: /^Linux \S+ \d+\.\d+\.\d+-qnap\b/i }],
    type: 'nas',
    vendor: 'QNAP',
    os: 'QTS',
    cpes: ['cpe:/o:qnap:qts'],
    confidence: 88,
    examples: { match: ['Linux TS-453D 5.10.60-qnap #1 SMP Mon Jan 8 2024 x86_64'], noMatch: ['Linux TS-453D 5.10.60 #1 SMP x86_64'] },
  },
  {
    id: 'qnap-upnp',
    label: 'a QNAP NAS',
    when: [{ field: 'upnp_manufacturer', pattern: /^QNAP\b/i }],
    type: 'nas',
    vendor: 'QNAP',
    os: 'QTS',
    confidence: 88,
    examples: { match: ['QNAP Systems, Inc.'], noMatch: ['Synology'] },
  },
  {
    id: 'qnap-upnp-model',
    label: 'a QNAP NAS model',
    when: [
      { field: 'upnp_manufacturer', pattern: /^QNAP\b/i },
      { field: 'upnp_model', pattern: /^(?<model>(?:TS|TVS|TBS|HS|TES|TS-h)-?\w[\w+-]*)/i },
    ],
    vendor: 'QNAP',
    model: '{model}',
    confidence: 90,
    examples: { match: [{ upnp_manufacturer: 'QNAP', upnp_model: 'TS-453D' }], noMatch: [{ upnp_manufacturer: 'QNAP', upnp_model: 'QHora-301W' }] },
  },
  {
    id: 'qnap-http-title',
    label: 'the QNAP QTS web interface',
    when: [{ field: 'http_title', pattern: /\bQNAP\b|^QTS\b|^QuTS hero\b/i }],
    type: 'nas',
    vendor: 'QNAP',
    os: 'QTS',
    confidence: 80,
    examples: { match: ['QTS', 'QNAP Turbo NAS'], noMatch: ['QTest runner'] },
  },
  {
    id: 'qnap-tls',
    label: "QNAP's default certificate",
    when: [{ field: ['tls_subject', 'tls_issuer'], pattern: /CN=QNAP NAS|O=QNAP Systems/i }],
    type: 'nas',
    vendor: 'QNAP',
    confidence: 75,
    examples: { match: ['CN=QNAP NAS, OU=QTS, O=QNAP Systems Inc., C=TW'], noMatch: ['CN=nas.example.com'] },
  },
  {
    id: 'truenas-http-title',
    label: 'the TrueNAS web interface',
    when: [{ field: 'http_title', pattern: /^(?:TrueNAS|FreeNAS)\b/i }],
    type: 'nas',
    vendor: 'iXsystems',
    os: 'TrueNAS',
    cpes: ['cpe:/a:ixsystems:truenas'],
    confidence: 85,
    examples: { match: ['TrueNAS', 'FreeNAS - nas.local'], noMatch: ['OpenMediaVault'] },
  },
  {
    id: 'truenas-tls',
    label: "TrueNAS's default certificate",
    when: [{ field: ['tls_subject', 'tls_issuer'], pattern: /O=iXsystems\b/i }],
    type: 'nas',
    vendor: 'iXsystems',
    os: 'TrueNAS',
    confidence: 75,
    examples: { match: ['CN=localhost, O=iXsystems, L=Maryville, C=US'], noMatch: ['CN=localhost, O=Internet Widgits Pty Ltd'] },
  },
  {
    id: 'unraid-http-title',
    label: 'the Unraid web interface',
    when: [{ field: 'http_title', pattern: /\bUnraid\b/i }],
    type: 'nas',
    os: 'Unraid',
    confidence: 80,
    examples: { match: ['Tower/Dashboard - Unraid', 'Unraid'], noMatch: ['Unread messages'] },
  },
  {
    id: 'openmediavault-http-title',
    label: 'the openmediavault web interface',
    when: [{ field: 'http_title', pattern: /\bopenmediavault\b/i }],
    type: 'nas',
    os: 'openmediavault',
    confidence: 80,
    examples: { match: ['openmediavault control panel - nas.local'], noMatch: ['TrueNAS'] },
  },
  {
    id: 'nfs-smb-ports',
    label: 'a file server (NFS and SMB)',
    when: [{ field: 'ports', ports: [111, 2049, 445] }],
    type: 'nas',
    confidence: 35,
    examples: { match: [{ ports: [22, 111, 445, 2049] }], noMatch: [{ ports: [111, 2049] }] },
  },

  /* ------------------------------------------------------------------ routers, firewalls, access points */
  {
    id: 'mikrotik-snmp',
    label: 'MikroTik RouterOS',
    when: [{ field: 'snmp_sysdescr', pattern: /^RouterOS (?<model>\S+)/ }],
    type: 'router',
    vendor: 'MikroTik',
    model: '{model}',
    os: 'RouterOS',
    cpes: ['cpe:/o:mikrotik:routeros'],
    confidence: 92,
    examples: { match: ['RouterOS RB4011iGS+'], noMatch: ['Linux router 5.4.0'] },
  },
  {
    id: 'mikrotik-snmp-oid',
    label: 'a MikroTik device',
    when: [{ field: 'snmp_sysobjectid', pattern: /^1\.3\.6\.1\.4\.1\.14988\./ }],
    type: 'router',
    vendor: 'MikroTik',
    os: 'RouterOS',
    confidence: 88,
    examples: { match: ['1.3.6.1.4.1.14988.1'], noMatch: ['1.3.6.1.4.1.149880.1'] },
  },
  {
    id: 'mikrotik-ssh',
    label: 'MikroTik RouterOS',
    when: [{ field: 'ssh_banner', pattern: /^SSH-2\.0-ROSSSH\b/ }],
    type: 'router',
    vendor: 'MikroTik',
    os: 'RouterOS',
    cpes: ['cpe:/o:mikrotik:routeros'],
    confidence: 88,
    examples: { match: ['SSH-2.0-ROSSSH'], noMatch: ['SSH-2.0-OpenSSH_9.2p1'] },
  },
  {
    id: 'mikrotik-http-title',
    label: 'the MikroTik RouterOS web interface',
    when: [{ field: 'http_title', pattern: /\bRouterOS\b|^mikrotik\b/i }],
    type: 'router',
    vendor: 'MikroTik',
    os: 'RouterOS',
    confidence: 85,
    examples: { match: ['RouterOS router configuration page', 'MikroTik RouterOS > Webfig'], noMatch: ['Router login'] },
  },
  {
    id: 'mikrotik-winbox-port',
    label: 'MikroTik Winbox',
    when: [{ field: 'ports', ports: [8291] }],
    type: 'router',
    vendor: 'MikroTik',
    os: 'RouterOS',
    confidence: 75,
    examples: { match: [{ ports: [22, 80, 8291] }], noMatch: [{ ports: [8290, 8292] }] },
  },
  {
    id: 'mikrotik-product',
    label: 'a MikroTik RouterOS service',
    when: [{ field: 'port_product', pattern: /^MikroTik\b/i }],
    type: 'router',
    vendor: 'MikroTik',
    os: 'RouterOS',
    confidence: 85,
    examples: { match: ['MikroTik RouterOS sshd', 'MikroTik router ftpd'], noMatch: ['OpenSSH'] },
  },
  {
    id: 'openwrt-snmp',
    label: 'OpenWrt',
    when: [{ field: 'snmp_sysdescr', pattern: /^Linux OpenWrt (?<version>\d+\.\d+[\w.]*)/ }],
    type: 'router',
    os: 'OpenWrt',
    cpes: ['cpe:/o:openwrt:openwrt', LINUX_KERNEL],
    confidence: 80,
    examples: { match: ['Linux OpenWrt 5.15.137 #0 SMP Tue Nov 14 2023 mips'], noMatch: ['Linux openwrt-builder 6.1.0 #1 SMP'] },
  },
  {
    id: 'openwrt-http-title',
    label: 'the OpenWrt LuCI interface',
    when: [{ field: 'http_title', pattern: /\bOpenWrt\b|\bLuCI\b/ }],
    type: 'router',
    os: 'OpenWrt',
    cpes: ['cpe:/o:openwrt:openwrt'],
    confidence: 82,
    examples: { match: ['OpenWrt - LuCI', 'router - LuCI'], noMatch: ['Lucid dashboard'] },
  },
  {
    id: 'pfsense-snmp',
    label: 'pfSense',
    when: [{ field: 'snmp_sysdescr', pattern: /^pfSense \S+ (?<version>\d+\.\d+(?:\.\d+)?)/ }],
    type: 'firewall',
    vendor: 'Netgate',
    os: 'pfSense',
    osVersion: '{version}',
    cpes: ['cpe:/a:netgate:pfsense:{version}'],
    confidence: 92,
    examples: { match: ['pfSense pfsense.home.arpa 2.7.2-RELEASE FreeBSD 14.0-CURRENT amd64'], noMatch: ['FreeBSD gw 14.0-RELEASE amd64'] },
  },
  {
    id: 'pfsense-http-title',
    label: 'the pfSense web interface',
    when: [{ field: 'http_title', pattern: /\bpfSense\b/i }],
    type: 'firewall',
    vendor: 'Netgate',
    os: 'pfSense',
    cpes: ['cpe:/a:netgate:pfsense'],
    confidence: 88,
    examples: { match: ['pfSense - Login', 'Netgate pfSense Plus - Login'], noMatch: ['OPNsense'] },
  },
  {
    id: 'pfsense-tls',
    label: "pfSense's web certificate",
    when: [{ field: ['tls_subject', 'tls_issuer'], pattern: /pfSense webConfigurator/i }],
    type: 'firewall',
    vendor: 'Netgate',
    os: 'pfSense',
    confidence: 85,
    examples: { match: ['CN=pfSense-65a1b2c3d4e5f, O=pfSense webConfigurator Self-Signed Certificate'], noMatch: ['CN=fw.example.com'] },
  },
  {
    id: 'opnsense-http-title',
    label: 'the OPNsense web interface',
    when: [{ field: ['http_title', 'snmp_sysdescr'], pattern: /\bOPNsense\b/i }],
    type: 'firewall',
    vendor: 'Deciso',
    os: 'OPNsense',
    cpes: ['cpe:/a:opnsense:opnsense'],
    confidence: 88,
    examples: { match: ['Login | OPNsense', { snmp_sysdescr: 'OPNsense.localdomain 13.2-RELEASE FreeBSD amd64' }], noMatch: ['pfSense - Login'] },
  },
  {
    id: 'opnsense-tls',
    label: "OPNsense's web certificate",
    when: [{ field: ['tls_subject', 'tls_issuer'], pattern: /OPNsense self-signed web certificate/i }],
    type: 'firewall',
    vendor: 'Deciso',
    os: 'OPNsense',
    confidence: 85,
    examples: { match: ['CN=OPNsense.localdomain, O=OPNsense self-signed web certificate'], noMatch: ['CN=OPNsense.localdomain, O=Example'] },
  },
  {
    id: 'fortigate',
    label: 'a Fortinet FortiGate',
    when: [
      { field: ['tls_subject', 'tls_issuer', 'http_title', 'snmp_sysobjectid'], pattern: /\bFortiGate\b|O=Fortinet\b|^1\.3\.6\.1\.4\.1\.12356\./i },
    ],
    type: 'firewall',
    vendor: 'Fortinet',
    os: 'FortiOS',
    cpes: ['cpe:/o:fortinet:fortios'],
    confidence: 85,
    examples: { match: ['CN=FortiGate, O=Fortinet, C=US', { snmp_sysobjectid: '1.3.6.1.4.1.12356.101.1.1' }], noMatch: ['CN=fortune.example.com'] },
  },
  {
    id: 'fritzbox-upnp',
    label: 'an AVM FRITZ!Box',
    when: [{ field: ['upnp_model', 'upnp_friendly_name', 'http_title'], pattern: /FRITZ!Box(?: (?<model>\d{4}\w*(?: \w+)?))?/i }],
    type: 'router',
    vendor: 'AVM',
    model: 'FRITZ!Box {model}',
    os: 'FRITZ!OS',
    cpes: ['cpe:/o:avm:fritz!os'],
    confidence: 90,
    examples: { match: ['FRITZ!Box 7590', { http_title: 'FRITZ!Box' }], noMatch: ['FRITZ!Repeater 1200'] },
  },
  {
    id: 'fritzbox-ssdp-server',
    label: 'an AVM FRITZ!Box',
    when: [{ field: 'upnp_server', pattern: /AVM FRITZ!Box (?<model>\d{4}\w*(?: \w+)?) \d+\.(?<version>\d+\.\d+)/ }],
    type: 'router',
    vendor: 'AVM',
    model: 'FRITZ!Box {model}',
    os: 'FRITZ!OS',
    osVersion: '{version}',
    cpes: ['cpe:/o:avm:fritz!os:{version}'],
    confidence: 92,
    examples: { match: ['FRITZ!Box 7590 UPnP/1.0 AVM FRITZ!Box 7590 154.07.57'], noMatch: ['Linux/2.6 UPnP/1.0 AVM FRITZ!Repeater'] },
  },
  {
    id: 'fritzbox-name',
    label: "the FRITZ!Box's name",
    when: [{ field: ['hostname', 'tls_subject'], pattern: /^(?:CN=)?fritz\.box\b/i }],
    type: 'router',
    vendor: 'AVM',
    os: 'FRITZ!OS',
    confidence: 75,
    examples: { match: ['fritz.box', { tls_subject: 'CN=fritz.box' }], noMatch: ['fritz.example.com'] },
  },
  {
    id: 'fritzbox-tr064-port',
    label: "AVM's TR-064 port",
    when: [{ field: 'ports', ports: [49000, 80] }],
    type: 'router',
    vendor: 'AVM',
    confidence: 55,
    examples: { match: [{ ports: [53, 80, 443, 49000] }], noMatch: [{ ports: [49000] }] },
  },
  {
    id: 'unifi-ap-snmp',
    label: 'a UniFi access point',
    when: [{ field: 'snmp_sysdescr', pattern: /^(?<model>U(?:AP|6|7)[-\w]*)[ ,]+(?<version>\d+\.\d+\.\d+)/ }],
    type: 'access_point',
    vendor: 'Ubiquiti',
    model: '{model}',
    os: 'UniFi',
    osVersion: '{version}',
    confidence: 90,
    examples: { match: ['UAP-AC-Lite 6.5.28.14491', 'U6-Pro, 6.6.55.15189'], noMatch: ['USW-24-PoE, 6.6.61.15220, Linux 3.6.5'] },
  },
  {
    id: 'unifi-switch-snmp',
    label: 'a UniFi switch',
    when: [{ field: 'snmp_sysdescr', pattern: /^(?<model>USW?-[-\w]+)[ ,]+(?<version>\d+\.\d+\.\d+)/ }],
    type: 'switch',
    vendor: 'Ubiquiti',
    model: '{model}',
    os: 'UniFi',
    osVersion: '{version}',
    confidence: 90,
    examples: { match: ['USW-24-PoE, 6.6.61.15220, Linux 3.6.5'], noMatch: ['UAP-AC-Lite 6.5.28.14491'] },
  },
  {
    id: 'ubiquiti-snmp-oid',
    label: 'a Ubiquiti device',
    when: [{ field: 'snmp_sysobjectid', pattern: /^1\.3\.6\.1\.4\.1\.41112\./ }],
    vendor: 'Ubiquiti',
    confidence: 88,
    examples: { match: ['1.3.6.1.4.1.41112.1.6'], noMatch: ['1.3.6.1.4.1.4111.1'] },
  },
  {
    id: 'unifi-os-http-title',
    label: 'a UniFi OS console',
    when: [{ field: 'http_title', pattern: /^UniFi OS\b/i }],
    type: 'router',
    vendor: 'Ubiquiti',
    os: 'UniFi OS',
    confidence: 70,
    examples: { match: ['UniFi OS'], noMatch: ['UniFi Network'] },
  },
  {
    id: 'unifi-tls',
    label: "Ubiquiti's default certificate",
    when: [{ field: ['tls_subject', 'tls_issuer'], pattern: /O=Ubiquiti\b/i }],
    vendor: 'Ubiquiti',
    confidence: 70,
    examples: { match: ['CN=UniFi, OU=UniFi, O=Ubiquiti Inc., L=New York, C=US'], noMatch: ['CN=unifi.example.com'] },
  },
  {
    id: 'cisco-ios-snmp',
    label: 'Cisco IOS',
    when: [{ field: 'snmp_sysdescr', pattern: /^Cisco IOS(?: XE)? Software\b.*?Version (?<version>[\w.()]+)/ }],
    vendor: 'Cisco',
    os: 'IOS',
    osVersion: '{version}',
    cpes: ['cpe:/o:cisco:ios:{version}'],
    confidence: 90,
    examples: {
      match: ['Cisco IOS Software, C2960 Software (C2960-LANBASEK9-M), Version 15.0(2)SE11, RELEASE SOFTWARE (fc3)'],
      noMatch: ['Cisco Adaptive Security Appliance Version 9.8(4)'],
    },
  },
  {
    id: 'cisco-catalyst-snmp',
    label: 'a Cisco Catalyst switch',
    when: [{ field: 'snmp_sysdescr', pattern: /^Cisco IOS.*\b(?:Catalyst|C29\d\d|C3[5-8]\d\d|C9[2-5]00|CAT[39]K)/ }],
    type: 'switch',
    vendor: 'Cisco',
    confidence: 88,
    examples: {
      match: ['Cisco IOS Software, C2960 Software (C2960-LANBASEK9-M), Version 15.0(2)SE11'],
      noMatch: ['Cisco IOS Software, C1900 Software'],
    },
  },
  {
    id: 'cisco-snmp-oid',
    label: 'a Cisco device',
    when: [{ field: 'snmp_sysobjectid', pattern: /^1\.3\.6\.1\.4\.1\.9\.1\./ }],
    vendor: 'Cisco',
    confidence: 88,
    examples: { match: ['1.3.6.1.4.1.9.1.1208'], noMatch: ['1.3.6.1.4.1.99.1.1'] },
  },
  {
    id: 'juniper-snmp-oid',
    label: 'a Juniper device',
    when: [{ field: 'snmp_sysobjectid', pattern: /^1\.3\.6\.1\.4\.1\.2636\./ }],
    type: 'router',
    vendor: 'Juniper',
    os: 'Junos',
    cpes: ['cpe:/o:juniper:junos'],
    confidence: 85,
    examples: { match: ['1.3.6.1.4.1.2636.1.1.1.2.57'], noMatch: ['1.3.6.1.4.1.26360.1'] },
  },
  {
    id: 'tplink-snmp-oid',
    label: 'a TP-Link device',
    when: [{ field: 'snmp_sysobjectid', pattern: /^1\.3\.6\.1\.4\.1\.11863\./ }],
    vendor: 'TP-Link',
    confidence: 85,
    examples: { match: ['1.3.6.1.4.1.11863.1.1.3'], noMatch: ['1.3.6.1.4.1.1186.1'] },
  },
  {
    id: 'netgear-snmp-oid',
    label: 'a Netgear device',
    when: [{ field: 'snmp_sysobjectid', pattern: /^1\.3\.6\.1\.4\.1\.4526\./ }],
    vendor: 'Netgear',
    confidence: 85,
    examples: { match: ['1.3.6.1.4.1.4526.100.4.10'], noMatch: ['1.3.6.1.4.1.45260.1'] },
  },
  {
    id: 'router-http-title',
    label: 'a home router web interface',
    when: [
      {
        field: 'http_title',
        pattern: /^(?:TP-?LINK|NETGEAR|ASUS (?:Login|Wireless Router)|Linksys Smart Wi-?Fi|D-LINK|Speedport|Vodafone Station|Orbi)\b/i,
      },
    ],
    type: 'router',
    confidence: 60,
    examples: { match: ['ASUS Login', 'NETGEAR Router R7000'], noMatch: ['Asus ROG Ally game library'] },
  },
  {
    id: 'upnp-internet-gateway',
    label: 'a UPnP Internet gateway',
    when: [{ field: 'upnp_device_type', pattern: /:device:InternetGatewayDevice:/ }],
    type: 'router',
    confidence: 80,
    examples: { match: ['urn:schemas-upnp-org:device:InternetGatewayDevice:2'], noMatch: ['urn:schemas-upnp-org:device:MediaRenderer:1'] },
  },
  {
    id: 'upnp-wlan-ap',
    label: 'a UPnP wireless access point',
    when: [{ field: 'upnp_device_type', pattern: /:device:WLANAccessPointDevice:/ }],
    type: 'access_point',
    confidence: 75,
    examples: { match: ['urn:schemas-wifialliance-org:device:WLANAccessPointDevice:1'], noMatch: ['urn:schemas-upnp-org:device:WANDevice:1'] },
  },
  {
    id: 'miniupnpd-ssdp-server',
    label: 'MiniUPnPd (a router’s port forwarding service)',
    when: [{ field: 'upnp_server', pattern: /\bMiniUPnPd\/(?<version>[\d.]+)/i }],
    type: 'router',
    cpes: ['cpe:/a:miniupnp_project:miniupnpd:{version}'],
    confidence: 55,
    examples: { match: ['Linux/5.4 UPnP/1.1 MiniUPnPd/2.2.0'], noMatch: ['Linux/5.4 UPnP/1.0 Sonos/70.3-35220 (ZPS9)'] },
  },

  /* ------------------------------------------------------------------ hypervisors and virtual machines */
  {
    id: 'proxmox-http-title',
    label: 'the Proxmox VE web interface',
    when: [{ field: 'http_title', pattern: /Proxmox Virtual Environment/i }],
    type: 'hypervisor',
    vendor: 'Proxmox',
    os: 'Proxmox VE',
    cpes: ['cpe:/a:proxmox:virtual_environment'],
    confidence: 90,
    examples: { match: ['pve1 - Proxmox Virtual Environment'], noMatch: ['Proxmox Backup Server'] },
  },
  {
    id: 'proxmox-tls',
    label: "Proxmox VE's cluster certificate",
    when: [{ field: ['tls_issuer', 'tls_subject'], pattern: /PVE Cluster Manager CA|Proxmox Virtual Environment/i }],
    type: 'hypervisor',
    vendor: 'Proxmox',
    os: 'Proxmox VE',
    confidence: 88,
    examples: {
      match: ['CN=Proxmox Virtual Environment, OU=a1b2c3, O=PVE Cluster Manager CA'],
      noMatch: ['CN=pbs.example.com, O=Proxmox Backup Server'],
    },
  },
  {
    id: 'proxmox-server-header',
    label: 'the Proxmox VE API',
    when: [{ field: 'http_server', pattern: /^pve-api-daemon\b/i }],
    type: 'hypervisor',
    vendor: 'Proxmox',
    os: 'Proxmox VE',
    confidence: 88,
    examples: { match: ['pve-api-daemon/3.0'], noMatch: ['pbs-api-daemon/3.0'] },
  },
  {
    id: 'proxmox-port',
    label: "Proxmox VE's web port",
    when: [{ field: 'ports', ports: [8006, 22] }],
    type: 'hypervisor',
    os: 'Proxmox VE',
    confidence: 50,
    examples: { match: [{ ports: [22, 111, 3128, 8006] }], noMatch: [{ ports: [22, 8007] }] },
  },
  {
    id: 'esxi-snmp',
    label: 'VMware ESXi',
    when: [{ field: ['snmp_sysdescr', 'http_title', 'nmap_os_name'], pattern: /VMware ESXi?(?: (?<version>\d+\.\d+(?:\.\d+)?))?/i }],
    type: 'hypervisor',
    vendor: 'VMware',
    os: 'VMware ESXi',
    osVersion: '{version}',
    cpes: ['cpe:/o:vmware:esxi:{version}'],
    confidence: 90,
    examples: { match: ['VMware ESXi 7.0.3 build-21930508 VMware, Inc. x86_64', { http_title: 'VMware ESXi' }], noMatch: ['VMware vCenter Server'] },
  },
  {
    id: 'esxi-tls',
    label: "ESXi's default certificate",
    when: [{ field: ['tls_subject', 'tls_issuer'], pattern: /VMware ESX Server Default Certificate/i }],
    type: 'hypervisor',
    vendor: 'VMware',
    os: 'VMware ESXi',
    confidence: 80,
    examples: {
      match: ['C=US, ST=California, O=VMware, Inc., OU=VMware ESX Server Default Certificate, CN=esx01'],
      noMatch: ['O=VMware, Inc., CN=vcenter.example.com'],
    },
  },
  {
    id: 'esxi-ports',
    label: "VMware ESXi's management ports",
    when: [{ field: 'ports', ports: [443, 902] }],
    type: 'hypervisor',
    vendor: 'VMware',
    confidence: 55,
    examples: { match: [{ ports: [22, 80, 427, 443, 902] }], noMatch: [{ ports: [443] }] },
  },
  {
    id: 'vmware-product',
    label: 'a VMware host service',
    when: [{ field: 'port_product', pattern: /^VMware (?:ESXi|Authentication Daemon)/i }],
    type: 'hypervisor',
    vendor: 'VMware',
    os: 'VMware ESXi',
    confidence: 80,
    examples: { match: ['VMware Authentication Daemon', 'VMware ESXi SOAP API'], noMatch: ['VMware Workstation'] },
  },
  {
    id: 'vm-vmware-mac',
    label: 'a VMware virtual network card',
    when: [{ field: 'mac', pattern: /^(?:00:0C:29|00:50:56|00:05:69|00:1C:14):/i }],
    type: 'virtual_machine',
    vendor: 'VMware',
    confidence: 85,
    examples: { match: ['00:0C:29:4F:8E:35', '00:50:56:9A:01:02'], noMatch: ['00:0D:29:4F:8E:35'] },
  },
  {
    id: 'vm-virtualbox-mac',
    label: 'a VirtualBox virtual network card',
    when: [{ field: 'mac', pattern: /^(?:08|0A):00:27:/i }],
    type: 'virtual_machine',
    vendor: 'VirtualBox',
    confidence: 85,
    examples: { match: ['08:00:27:AB:CD:EF'], noMatch: ['08:00:28:AB:CD:EF'] },
  },
  {
    id: 'vm-qemu-mac',
    label: 'a QEMU/KVM virtual network card',
    when: [{ field: 'mac', pattern: /^52:54:00:/i }],
    type: 'virtual_machine',
    vendor: 'QEMU/KVM',
    confidence: 80,
    examples: { match: ['52:54:00:12:34:56'], noMatch: ['52:54:01:12:34:56'] },
  },
  {
    id: 'vm-proxmox-mac',
    label: 'a Proxmox VE virtual network card',
    when: [{ field: 'mac', pattern: /^BC:24:11:/i }],
    type: 'virtual_machine',
    vendor: 'Proxmox',
    confidence: 85,
    examples: { match: ['BC:24:11:5E:7A:01'], noMatch: ['BC:24:12:5E:7A:01'] },
  },
  {
    id: 'vm-hyperv-mac',
    label: 'a Hyper-V virtual network card',
    when: [{ field: 'mac', pattern: /^00:15:5D:/i }],
    type: 'virtual_machine',
    vendor: 'Microsoft Hyper-V',
    confidence: 85,
    examples: { match: ['00:15:5D:01:02:03'], noMatch: ['00:15:5E:01:02:03'] },
  },
  {
    id: 'vm-xen-mac',
    label: 'a Xen virtual network card',
    when: [{ field: 'mac', pattern: /^00:16:3E:/i }],
    type: 'virtual_machine',
    vendor: 'Xen',
    confidence: 85,
    examples: { match: ['00:16:3E:AA:BB:CC'], noMatch: ['00:16:3F:AA:BB:CC'] },
  },
  {
    id: 'vm-parallels-mac',
    label: 'a Parallels virtual network card',
    when: [{ field: 'mac', pattern: /^00:1C:42:/i }],
    type: 'virtual_machine',
    vendor: 'Parallels',
    confidence: 85,
    examples: { match: ['00:1C:42:00:00:08'], noMatch: ['00:1C:43:00:00:08'] },
  },
  {
    id: 'container-docker-mac',
    label: "Docker's default container MAC range",
    when: [{ field: 'mac', pattern: /^02:42:/i }],
    type: 'virtual_machine',
    vendor: 'Docker',
    confidence: 55,
    examples: { match: ['02:42:AC:11:00:02'], noMatch: ['02:43:AC:11:00:02'] },
  },

  /* ------------------------------------------------------------------ servers and computers */
  {
    id: 'windows-snmp',
    label: 'Microsoft Windows',
    when: [{ field: 'snmp_sysdescr', pattern: /Software: Windows\b/ }],
    vendor: 'Microsoft',
    os: 'Windows',
    cpes: [WINDOWS],
    confidence: 90,
    examples: {
      match: ['Hardware: Intel64 Family 6 Model 158 Stepping 10 AT/AT COMPATIBLE - Software: Windows Version 6.3 (Build 19045 Multiprocessor Free)'],
      noMatch: ['Linux win 5.10.0 #1 SMP'],
    },
  },
  {
    id: 'windows-server-snmp-oid',
    label: 'a Windows server',
    when: [{ field: 'snmp_sysobjectid', pattern: /^1\.3\.6\.1\.4\.1\.311\.1\.1\.3\.1\.[23]$/ }],
    type: 'server',
    os: 'Windows',
    cpes: [WINDOWS],
    confidence: 85,
    examples: { match: ['1.3.6.1.4.1.311.1.1.3.1.2'], noMatch: ['1.3.6.1.4.1.311.1.1.3.1.1'] },
  },
  {
    id: 'windows-workstation-snmp-oid',
    label: 'a Windows workstation',
    when: [{ field: 'snmp_sysobjectid', pattern: /^1\.3\.6\.1\.4\.1\.311\.1\.1\.3\.1\.1$/ }],
    type: 'workstation',
    os: 'Windows',
    cpes: [WINDOWS],
    confidence: 85,
    examples: { match: ['1.3.6.1.4.1.311.1.1.3.1.1'], noMatch: ['1.3.6.1.4.1.311.1.1.3.1.2'] },
  },
  {
    id: 'windows-desktop-name',
    label: "Windows' default computer name",
    when: [{ field: ['netbios_name', 'hostname', 'mdns_name'], pattern: /^DESKTOP-[A-Z0-9]{7}(?:\.|$)/i }],
    type: 'workstation',
    os: 'Windows',
    cpes: [WINDOWS],
    confidence: 75,
    examples: { match: ['DESKTOP-4F7Q2KD', { hostname: 'desktop-4f7q2kd.lan' }], noMatch: ['DESKTOP-ALICE'] },
  },
  {
    id: 'windows-laptop-name',
    label: "Windows' default laptop name",
    when: [{ field: ['netbios_name', 'hostname', 'mdns_name'], pattern: /^LAPTOP-[A-Z0-9]{7,8}(?:\.|$)/i }],
    type: 'laptop',
    os: 'Windows',
    cpes: [WINDOWS],
    confidence: 75,
    examples: { match: ['LAPTOP-8QH3KS1T'], noMatch: ['LAPTOP-BOB'] },
  },
  {
    id: 'windows-server-name',
    label: "Windows Server's default computer name",
    when: [{ field: ['netbios_name', 'hostname'], pattern: /^WIN-[A-Z0-9]{11}(?:\.|$)/i }],
    type: 'server',
    os: 'Windows',
    cpes: [WINDOWS],
    confidence: 70,
    examples: { match: ['WIN-3J5K8L2M9QP'], noMatch: ['WIN-DC01'] },
  },
  {
    id: 'windows-rpc-ports',
    label: 'Windows RPC, NetBIOS and SMB',
    when: [{ field: 'ports', ports: [135, 139, 445] }],
    os: 'Windows',
    cpes: [WINDOWS],
    confidence: 70,
    examples: { match: [{ ports: [135, 139, 445, 3389] }], noMatch: [{ ports: [139, 445] }] },
  },
  {
    id: 'windows-rdp-rpc-ports',
    label: 'Windows Remote Desktop with RPC',
    when: [{ field: 'ports', ports: [135, 3389] }],
    os: 'Windows',
    cpes: [WINDOWS],
    confidence: 70,
    examples: { match: [{ ports: [135, 3389] }], noMatch: [{ ports: [22, 3389] }] },
  },
  {
    id: 'windows-product',
    label: 'a Windows service',
    when: [
      { field: 'port_product', pattern: /^Microsoft Windows (?:RPC|netbios-ssn|Terminal Service|Remote Desktop)|^Microsoft Terminal Services/i },
    ],
    os: 'Windows',
    cpes: [WINDOWS],
    confidence: 80,
    examples: { match: ['Microsoft Windows RPC', 'Microsoft Terminal Services'], noMatch: ['Samba smbd'] },
  },
  {
    id: 'windows-http-server',
    label: "Microsoft's web server",
    when: [{ field: 'http_server', pattern: /^Microsoft-(?:IIS|HTTPAPI)\// }],
    os: 'Windows',
    cpes: [WINDOWS],
    confidence: 70,
    examples: { match: ['Microsoft-IIS/10.0', 'Microsoft-HTTPAPI/2.0'], noMatch: ['nginx/1.24.0'] },
  },
  {
    id: 'windows-ssh',
    label: 'OpenSSH for Windows',
    when: [{ field: 'ssh_banner', pattern: /^SSH-2\.0-OpenSSH_for_Windows/ }],
    os: 'Windows',
    cpes: [WINDOWS],
    confidence: 85,
    examples: { match: ['SSH-2.0-OpenSSH_for_Windows_8.1'], noMatch: ['SSH-2.0-OpenSSH_8.1'] },
  },
  {
    id: 'linux-snmp',
    label: 'a Linux kernel',
    when: [{ field: 'snmp_sysdescr', pattern: /^Linux \S+ (?<version>\d+\.\d+\.\d+)/ }],
    os: 'Linux',
    osVersion: '{version}',
    cpes: [LINUX_KERNEL],
    confidence: 75,
    examples: { match: ['Linux web01 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 x86_64'], noMatch: ['RouterOS RB750Gr3'] },
  },
  {
    id: 'netsnmp-linux-oid',
    label: 'Net-SNMP on Linux',
    when: [{ field: 'snmp_sysobjectid', pattern: /^1\.3\.6\.1\.4\.1\.8072\.3\.2\.10$/ }],
    os: 'Linux',
    confidence: 70,
    examples: { match: ['1.3.6.1.4.1.8072.3.2.10'], noMatch: ['1.3.6.1.4.1.8072.3.2.8'] },
  },
  {
    id: 'netsnmp-freebsd-oid',
    label: 'Net-SNMP on FreeBSD',
    when: [{ field: 'snmp_sysobjectid', pattern: /^1\.3\.6\.1\.4\.1\.8072\.3\.2\.8$/ }],
    os: 'FreeBSD',
    confidence: 70,
    examples: { match: ['1.3.6.1.4.1.8072.3.2.8'], noMatch: ['1.3.6.1.4.1.8072.3.2.10'] },
  },
  {
    id: 'freebsd-snmp',
    label: 'FreeBSD',
    when: [{ field: 'snmp_sysdescr', pattern: /\bFreeBSD (?<version>\d+\.\d+)/ }],
    os: 'FreeBSD',
    osVersion: '{version}',
    cpes: ['cpe:/o:freebsd:freebsd:{version}'],
    confidence: 70,
    examples: { match: ['FreeBSD gw 14.0-RELEASE FreeBSD 14.0-RELEASE amd64'], noMatch: ['Linux bsd 6.1.0'] },
  },
  {
    id: 'debian-ssh',
    label: "Debian's OpenSSH package",
    when: [{ field: 'ssh_banner', pattern: /^SSH-2\.0-OpenSSH_\S+ Debian-(?:\S*?\+deb(?<version>\d+)u\d+)?/ }],
    os: 'Debian',
    osVersion: '{version}',
    cpes: ['cpe:/o:debian:debian_linux:{version}'],
    confidence: 70,
    examples: {
      match: ['SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3', 'SSH-2.0-OpenSSH_7.4p1 Debian-10'],
      noMatch: ['SSH-2.0-OpenSSH_9.2p1 Raspbian-2+deb12u3'],
    },
  },
  {
    id: 'ubuntu-ssh',
    label: "Ubuntu's OpenSSH package",
    when: [{ field: 'ssh_banner', pattern: /^SSH-2\.0-OpenSSH_\S+ Ubuntu-/ }],
    os: 'Ubuntu',
    cpes: ['cpe:/o:canonical:ubuntu_linux'],
    confidence: 70,
    examples: { match: ['SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.6'], noMatch: ['SSH-2.0-OpenSSH_8.9p1 Debian-3'] },
  },
  {
    id: 'raspbian-ssh',
    label: "Raspberry Pi OS's OpenSSH package",
    when: [{ field: 'ssh_banner', pattern: /^SSH-2\.0-OpenSSH_\S+ Raspbian-(?:\S*?\+deb(?<version>\d+)u\d+)?/ }],
    os: 'Raspberry Pi OS',
    osVersion: '{version}',
    cpes: ['cpe:/o:debian:debian_linux:{version}'],
    confidence: 75,
    examples: { match: ['SSH-2.0-OpenSSH_9.2p1 Raspbian-2+deb12u2'], noMatch: ['SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u2'] },
  },
  {
    id: 'freebsd-ssh',
    label: "FreeBSD's OpenSSH",
    when: [{ field: 'ssh_banner', pattern: /^SSH-2\.0-OpenSSH_\S+ FreeBSD-/ }],
    os: 'FreeBSD',
    cpes: ['cpe:/o:freebsd:freebsd'],
    confidence: 70,
    examples: { match: ['SSH-2.0-OpenSSH_9.6 FreeBSD-20240104'], noMatch: ['SSH-2.0-OpenSSH_9.6'] },
  },
  {
    id: 'dropbear-ssh',
    label: 'Dropbear SSH (embedded Linux)',
    when: [{ field: 'ssh_banner', pattern: /^SSH-2\.0-dropbear(?:_(?<version>[\d.]+))?/i }],
    os: 'Linux',
    cpes: ['cpe:/a:dropbear_ssh_project:dropbear_ssh:{version}'],
    confidence: 40,
    examples: { match: ['SSH-2.0-dropbear_2022.83', 'SSH-2.0-dropbear'], noMatch: ['SSH-2.0-OpenSSH_9.6'] },
  },
  {
    id: 'pihole-http-title',
    label: 'the Pi-hole admin page',
    when: [{ field: ['http_title', 'hostname'], pattern: /\bPi-hole\b|^pi\.hole$/i }],
    type: 'server',
    confidence: 55,
    examples: { match: ['Pi-hole - raspberrypi', { hostname: 'pi.hole' }], noMatch: ['Pinhole camera'] },
  },
  {
    id: 'plex-server',
    label: 'Plex Media Server',
    when: [{ field: ['port_product', 'http_title', 'mdns_service'], pattern: /^Plex(?: Media Server|$)|^_plexmediasvr\._tcp$/i }],
    type: 'server',
    confidence: 45,
    examples: { match: ['Plex Media Server httpd', { http_title: 'Plex' }, { mdns_service: '_plexmediasvr._tcp' }], noMatch: ['Plexus'] },
  },
  {
    id: 'plex-port',
    label: "Plex Media Server's port",
    when: [{ field: 'ports', ports: [32400] }],
    type: 'server',
    confidence: 40,
    examples: { match: [{ ports: [22, 32400] }], noMatch: [{ ports: [32401] }] },
  },
  {
    id: 'linux-workstation-mdns',
    label: "Avahi's workstation announcement",
    when: [{ field: 'mdns_service', pattern: /^_workstation\._tcp$/ }],
    type: 'workstation',
    os: 'Linux',
    confidence: 35,
    examples: { match: ['_workstation._tcp'], noMatch: ['_ssh._tcp'] },
  },
  {
    id: 'raspberry-pi-oui',
    label: 'a Raspberry Pi network card',
    when: [{ field: 'oui_vendor', pattern: /^Raspberry Pi\b/i }],
    type: 'server',
    vendor: 'Raspberry Pi',
    model: 'Raspberry Pi',
    confidence: 90,
    confidences: { device_type: 30 },
    examples: { match: ['Raspberry Pi Trading Ltd', 'Raspberry Pi (Trading) Ltd'], noMatch: ['Raspberry Farm Ltd'] },
  },
  {
    id: 'raspberry-pi-name',
    label: "Raspberry Pi OS's default name",
    when: [{ field: ['hostname', 'mdns_name'], pattern: /^raspberrypi(?:\.|$)/i }],
    vendor: 'Raspberry Pi',
    os: 'Raspberry Pi OS',
    confidence: 45,
    examples: { match: ['raspberrypi', { mdns_name: 'raspberrypi.local' }], noMatch: ['raspberry'] },
  },

  /* ------------------------------------------------------------------ Apple */
  {
    id: 'apple-iphone-model',
    label: 'an iPhone model code',
    when: [{ field: 'mdns_txt', pattern: /^(?:model|rpmd)=(?<model>iPhone\d+,\d+)$/ }],
    type: 'phone',
    vendor: 'Apple',
    model: '{model}',
    os: 'iOS',
    cpes: ['cpe:/o:apple:iphone_os'],
    confidence: 95,
    examples: { match: ['model=iPhone14,2'], noMatch: ['model=iPad13,4'] },
  },
  {
    id: 'apple-ipad-model',
    label: 'an iPad model code',
    when: [{ field: 'mdns_txt', pattern: /^(?:model|rpmd)=(?<model>iPad\d+,\d+)$/ }],
    type: 'tablet',
    vendor: 'Apple',
    model: '{model}',
    os: 'iPadOS',
    cpes: ['cpe:/o:apple:ipados'],
    confidence: 95,
    examples: { match: ['model=iPad13,4'], noMatch: ['model=iPhone14,2'] },
  },
  {
    id: 'apple-tv-model',
    label: 'an Apple TV model code',
    when: [{ field: 'mdns_txt', pattern: /^(?:model|rpmd|am)=(?<model>AppleTV\d+,\d+)$/ }],
    type: 'media_player',
    vendor: 'Apple',
    model: '{model}',
    os: 'tvOS',
    cpes: ['cpe:/o:apple:tvos'],
    confidence: 95,
    examples: { match: ['model=AppleTV6,2', 'am=AppleTV11,1'], noMatch: ['model=AudioAccessory5,1'] },
  },
  {
    id: 'apple-homepod-model',
    label: 'a HomePod model code',
    when: [{ field: 'mdns_txt', pattern: /^(?:model|rpmd|am)=(?<model>AudioAccessory\d+,\d+)$/ }],
    type: 'speaker',
    vendor: 'Apple',
    model: '{model}',
    confidence: 95,
    examples: { match: ['model=AudioAccessory5,1'], noMatch: ['model=AppleTV6,2'] },
  },
  {
    id: 'apple-macbook-model',
    label: 'a MacBook model code',
    when: [{ field: 'mdns_txt', pattern: /^(?:model|rpmd)=(?<model>MacBook(?:Pro|Air)?\d+,\d+)$/ }],
    type: 'laptop',
    vendor: 'Apple',
    model: '{model}',
    os: 'macOS',
    cpes: ['cpe:/o:apple:macos'],
    confidence: 95,
    examples: { match: ['model=MacBookPro18,3', 'model=MacBookAir10,1'], noMatch: ['model=Macmini9,1'] },
  },
  {
    id: 'apple-mac-model',
    label: 'a Mac model code',
    when: [{ field: 'mdns_txt', pattern: /^(?:model|rpmd)=(?<model>(?:iMac|iMacPro|Macmini|MacPro|Mac)\d+,\d+)$/ }],
    type: 'workstation',
    vendor: 'Apple',
    model: '{model}',
    os: 'macOS',
    cpes: ['cpe:/o:apple:macos'],
    confidence: 90,
    examples: { match: ['model=Macmini9,1', 'model=Mac14,3', 'model=iMac21,1'], noMatch: ['model=MacBookPro18,3'] },
  },
  {
    id: 'apple-macos-version',
    label: "macOS's Darwin version",
    when: [{ field: 'mdns_txt', pattern: /^osxvers=(?<darwin>\d+)$/ }],
    vendor: 'Apple',
    os: 'macOS',
    confidence: 80,
    examples: { match: ['osxvers=23'], noMatch: ['osver=23'] },
  },
  {
    id: 'apple-mobile-mdns',
    label: "an Apple phone's or tablet's sync service",
    when: [{ field: 'mdns_service', pattern: /^_apple-mobdev2\._tcp$/ }],
    type: 'phone',
    vendor: 'Apple',
    confidence: 80,
    confidences: { device_type: 45 },
    examples: { match: ['_apple-mobdev2._tcp'], noMatch: ['_airplay._tcp'] },
  },
  {
    id: 'apple-companion-mdns',
    label: "Apple's companion link",
    when: [{ field: 'mdns_service', pattern: /^_companion-link\._tcp$/ }],
    vendor: 'Apple',
    confidence: 80,
    examples: { match: ['_companion-link._tcp'], noMatch: ['_hap._tcp'] },
  },
  {
    id: 'apple-iphone-sync-port',
    label: 'the iPhone/iPad sync port (62078)',
    when: [{ field: 'ports', ports: [62078] }],
    type: 'phone',
    vendor: 'Apple',
    confidence: 80,
    confidences: { device_type: 60 },
    examples: { match: [{ ports: [62078] }], noMatch: [{ ports: [62077, 5353] }] },
  },
  {
    id: 'apple-airplay-server',
    label: "Apple's AirPlay server",
    when: [{ field: ['http_server', 'port_product'], pattern: /^AirTunes\/|^Apple AirTunes\b/ }],
    vendor: 'Apple',
    confidence: 60,
    examples: { match: ['AirTunes/770.8.1', { port_product: 'Apple AirTunes rtspd' }], noMatch: ['AirServer/7.2'] },
  },
  {
    id: 'apple-iphone-name',
    label: "an iPhone's default name",
    when: [{ field: ['hostname', 'mdns_name'], pattern: /(?:^|-)iPhone(?:-\d+)?(?:\.|$)/i }],
    type: 'phone',
    vendor: 'Apple',
    os: 'iOS',
    confidence: 50,
    examples: { match: ['Johns-iPhone', { mdns_name: 'iphone-2.local' }], noMatch: ['Johns-iPad'] },
  },
  {
    id: 'apple-ipad-name',
    label: "an iPad's default name",
    when: [{ field: ['hostname', 'mdns_name'], pattern: /(?:^|-)iPad(?:-\d+)?(?:\.|$)/i }],
    type: 'tablet',
    vendor: 'Apple',
    confidence: 50,
    examples: { match: ['Annas-iPad'], noMatch: ['Annas-iPhone'] },
  },
  {
    id: 'apple-macbook-name',
    label: "a MacBook's default name",
    when: [{ field: ['hostname', 'mdns_name'], pattern: /(?:^|-)MacBook(?:-Pro|-Air)?(?:-\d+)?(?:\.|$)/i }],
    type: 'laptop',
    vendor: 'Apple',
    os: 'macOS',
    confidence: 50,
    examples: { match: ['Bobs-MacBook-Pro', { mdns_name: 'macbook-air.local' }], noMatch: ['macbookstore'] },
  },

  /* ------------------------------------------------------------------ phones (other) */
  {
    id: 'android-name',
    label: "Android's default host name",
    when: [{ field: ['hostname', 'mdns_name'], pattern: /^android-[0-9a-f]{12,16}(?:\.|$)/i }],
    type: 'phone',
    os: 'Android',
    cpes: ['cpe:/o:google:android'],
    confidence: 60,
    examples: { match: ['android-3f2a9c8d7e6b5a41'], noMatch: ['android-tv'] },
  },
  {
    id: 'samsung-galaxy-name',
    label: "a Samsung Galaxy's default name",
    when: [{ field: ['hostname', 'mdns_name'], pattern: /^Galaxy-(?<model>[A-Z]\d{1,2}\w*)(?:\.|$)/i }],
    type: 'phone',
    vendor: 'Samsung',
    model: 'Galaxy {model}',
    os: 'Android',
    confidence: 55,
    examples: { match: ['Galaxy-S21', 'Galaxy-A52s'], noMatch: ['galaxy-tab'] },
  },

  /* ------------------------------------------------------------------ media, TVs, speakers */
  {
    id: 'googlecast-mdns',
    label: 'Google Cast',
    when: [{ field: 'mdns_service', pattern: /^_googlecast\._tcp$/ }],
    type: 'media_player',
    confidence: 70,
    examples: { match: ['_googlecast._tcp'], noMatch: ['_googlezone._tcp'] },
  },
  {
    id: 'chromecast-txt',
    label: 'a Chromecast',
    when: [{ field: 'mdns_txt', pattern: /^md=(?<model>Chromecast(?: Ultra| HD)?|Google TV Streamer)$/ }],
    type: 'media_player',
    vendor: 'Google',
    model: '{model}',
    cpes: ['cpe:/h:google:chromecast'],
    confidence: 92,
    examples: { match: ['md=Chromecast', 'md=Chromecast Ultra'], noMatch: ['md=Google Nest Mini'] },
  },
  {
    id: 'google-speaker-txt',
    label: 'a Google/Nest speaker',
    when: [{ field: 'mdns_txt', pattern: /^md=(?<model>Google Home(?: Mini| Max)?|Google Nest (?:Mini|Audio)|Nest Audio|Nest Mini)$/ }],
    type: 'speaker',
    vendor: 'Google',
    model: '{model}',
    confidence: 92,
    examples: { match: ['md=Google Nest Mini', 'md=Google Home'], noMatch: ['md=Google Nest Hub'] },
  },
  {
    id: 'google-display-txt',
    label: 'a Google/Nest smart display',
    when: [{ field: 'mdns_txt', pattern: /^md=(?<model>Google Nest Hub(?: Max)?|Nest Hub(?: Max)?)$/ }],
    type: 'smart_home',
    vendor: 'Google',
    model: '{model}',
    confidence: 90,
    examples: { match: ['md=Google Nest Hub Max'], noMatch: ['md=Chromecast'] },
  },
  {
    id: 'chromecast-ports',
    label: "Google Cast's ports",
    when: [{ field: 'ports', ports: [8008, 8009] }],
    type: 'media_player',
    confidence: 55,
    examples: { match: [{ ports: [8008, 8009, 8443] }], noMatch: [{ ports: [8009, 8080] }] },
  },
  {
    id: 'chromecast-name',
    label: "a Chromecast's default name",
    when: [{ field: ['hostname', 'mdns_name'], pattern: /^Chromecast(?:-\w+)?(?:\.|$)/i }],
    type: 'media_player',
    vendor: 'Google',
    confidence: 55,
    examples: { match: ['Chromecast', 'chromecast-ultra.local'], noMatch: ['chromecastle'] },
  },
  {
    id: 'airplay-mdns',
    label: 'an AirPlay receiver',
    when: [{ field: 'mdns_service', pattern: /^_(?:airplay|raop)\._tcp$/ }],
    type: 'media_player',
    confidence: 40,
    examples: { match: ['_airplay._tcp', '_raop._tcp'], noMatch: ['_airport._tcp'] },
  },
  {
    id: 'sonos',
    label: 'a Sonos speaker',
    when: [{ field: ['upnp_manufacturer', 'mdns_service', 'upnp_device_type'], pattern: /^Sonos\b|^_sonos\._tcp$|:device:ZonePlayer:/i }],
    type: 'speaker',
    vendor: 'Sonos',
    confidence: 92,
    examples: {
      match: ['Sonos, Inc.', { mdns_service: '_sonos._tcp' }, { upnp_device_type: 'urn:schemas-upnp-org:device:ZonePlayer:1' }],
      noMatch: ['SonoSite'],
    },
  },
  {
    id: 'sonos-ssdp-server',
    label: "Sonos's UPnP server",
    when: [{ field: 'upnp_server', pattern: /\bSonos\/(?<version>[\d.]+)/ }],
    type: 'speaker',
    vendor: 'Sonos',
    os: 'Sonos',
    osVersion: '{version}',
    confidence: 92,
    examples: { match: ['Linux UPnP/1.0 Sonos/70.3-35220 (ZPS9)'], noMatch: ['Linux UPnP/1.0 Roku/9.4.0'] },
  },
  {
    id: 'sonos-ports',
    label: "Sonos's control ports",
    when: [{ field: 'ports', ports: [1400, 1443] }],
    type: 'speaker',
    vendor: 'Sonos',
    confidence: 60,
    examples: { match: [{ ports: [1400, 1443, 4444] }], noMatch: [{ ports: [1400] }] },
  },
  {
    id: 'roku',
    label: 'a Roku player',
    when: [{ field: ['upnp_manufacturer', 'upnp_server'], pattern: /^Roku\b|\bRoku\/(?<version>[\d.]+)/i }],
    type: 'media_player',
    vendor: 'Roku',
    os: 'Roku OS',
    osVersion: '{version}',
    confidence: 90,
    examples: { match: ['Roku', { upnp_server: 'Roku/9.4.0 UPnP/1.0 Roku/9.4.0' }], noMatch: ['Rokuyo Trading'] },
  },
  {
    id: 'amazon-fire-tv',
    label: 'an Amazon Fire TV',
    when: [{ field: 'mdns_service', pattern: /^_amzn-wplay\._tcp$/ }],
    type: 'media_player',
    vendor: 'Amazon',
    os: 'Fire OS',
    confidence: 80,
    examples: { match: ['_amzn-wplay._tcp'], noMatch: ['_amzn-alexa._tcp'] },
  },
  {
    id: 'android-tv',
    label: 'an Android TV remote service',
    when: [{ field: 'mdns_service', pattern: /^_androidtvremote2?\._tcp$/ }],
    type: 'media_player',
    os: 'Android',
    confidence: 70,
    examples: { match: ['_androidtvremote2._tcp'], noMatch: ['_android._tcp'] },
  },
  {
    id: 'samsung-tv-upnp',
    label: 'a Samsung TV',
    when: [{ field: 'upnp_friendly_name', pattern: /^\[TV\] ?Samsung\b|^Samsung .*\bTV\b/i }],
    type: 'tv',
    vendor: 'Samsung',
    os: 'Tizen',
    confidence: 85,
    examples: { match: ['[TV] Samsung 7 Series (55)', 'Samsung Q80 Series TV'], noMatch: ['Samsung Galaxy S21'] },
  },
  {
    id: 'lg-tv-upnp',
    label: 'an LG webOS TV',
    when: [{ field: ['upnp_friendly_name', 'upnp_model', 'hostname', 'mdns_name'], pattern: /\[LG\] webOS TV|^LG ?webOS ?TV|^LGwebOSTV(?:\.|$)/i }],
    type: 'tv',
    vendor: 'LG',
    os: 'webOS',
    confidence: 85,
    examples: { match: ['[LG] webOS TV OLED55C1', { hostname: 'LGwebOSTV' }], noMatch: ['LG Gram'] },
  },
  {
    id: 'upnp-media-renderer',
    label: 'a UPnP media renderer',
    when: [{ field: 'upnp_device_type', pattern: /:device:MediaRenderer:|^urn:dial-multiscreen-org:device:dial:/ }],
    type: 'media_player',
    confidence: 50,
    examples: {
      match: ['urn:schemas-upnp-org:device:MediaRenderer:1', 'urn:dial-multiscreen-org:device:dial:1'],
      noMatch: ['urn:schemas-upnp-org:device:MediaServer:1'],
    },
  },
  {
    id: 'upnp-media-server',
    label: 'a UPnP media server',
    when: [{ field: 'upnp_device_type', pattern: /:device:MediaServer:/ }],
    type: 'server',
    confidence: 35,
    examples: { match: ['urn:schemas-upnp-org:device:MediaServer:1'], noMatch: ['urn:schemas-upnp-org:device:MediaRenderer:1'] },
  },
  {
    id: 'spotify-connect',
    label: 'a Spotify Connect receiver',
    when: [{ field: 'mdns_service', pattern: /^_spotify-connect\._tcp$/ }],
    type: 'speaker',
    confidence: 35,
    examples: { match: ['_spotify-connect._tcp'], noMatch: ['_spotify._tcp'] },
  },

  /* ------------------------------------------------------------------ game consoles */
  {
    id: 'xbox',
    label: 'an Xbox',
    when: [
      {
        field: ['upnp_model', 'upnp_friendly_name', 'hostname', 'mdns_name'],
        pattern: /^(?<model>Xbox(?:[ -]?One|[ -]Series[ -][XS]|[ -]?360)?)(?:\b|$)/i,
      },
    ],
    type: 'game_console',
    vendor: 'Microsoft',
    model: '{model}',
    confidence: 80,
    examples: { match: ['Xbox Series X', { hostname: 'XboxOne' }], noMatch: ['MyXbox'] },
  },
  {
    id: 'playstation',
    label: 'a PlayStation',
    when: [{ field: ['upnp_model', 'upnp_friendly_name', 'hostname', 'mdns_name'], pattern: /^(?<model>PlayStation ?[345]|PS[345])(?:\b|-)/i }],
    type: 'game_console',
    vendor: 'Sony',
    model: '{model}',
    confidence: 80,
    examples: { match: ['PlayStation 4', { hostname: 'PS5-123' }], noMatch: ['PS2Linux'] },
  },
  {
    id: 'sony-playstation-oui',
    label: "Sony Interactive Entertainment's network cards",
    when: [{ field: 'oui_vendor', pattern: /^Sony Interactive Entertainment\b/i }],
    type: 'game_console',
    vendor: 'Sony',
    confidence: 90,
    confidences: { device_type: 75 },
    examples: { match: ['Sony Interactive Entertainment Inc.'], noMatch: ['Sony Corporation'] },
  },
  {
    id: 'nintendo-oui',
    label: "Nintendo's network cards",
    when: [{ field: 'oui_vendor', pattern: /^Nintendo\b/i }],
    type: 'game_console',
    vendor: 'Nintendo',
    confidence: 90,
    confidences: { device_type: 75 },
    examples: { match: ['Nintendo Co., Ltd.', 'Nintendo Co.,Ltd'], noMatch: ['Nintendu Ltd'] },
  },

  /* ------------------------------------------------------------------ cameras */
  {
    id: 'hikvision',
    label: 'a Hikvision camera or recorder',
    when: [
      {
        field: ['http_server', 'upnp_manufacturer', 'oui_vendor', 'port_product', 'tls_subject'],
        pattern: /^(?:App-webs\/|DNVRS-Webs|Hikvision-Webs|DVRDVS-Webs)|Hikvision/i,
      },
    ],
    type: 'camera',
    vendor: 'Hikvision',
    confidence: 85,
    confidences: { device_type: 75 },
    examples: {
      match: ['App-webs/', { upnp_manufacturer: 'Hikvision' }, { oui_vendor: 'Hangzhou Hikvision Digital Technology Co.,Ltd.' }],
      noMatch: ['webs'],
    },
  },
  {
    id: 'hikvision-snmp-oid',
    label: 'a Hikvision device',
    when: [{ field: 'snmp_sysobjectid', pattern: /^1\.3\.6\.1\.4\.1\.39165\./ }],
    type: 'camera',
    vendor: 'Hikvision',
    confidence: 85,
    examples: { match: ['1.3.6.1.4.1.39165.1.1'], noMatch: ['1.3.6.1.4.1.3916.1'] },
  },
  {
    id: 'dahua',
    label: 'a Dahua camera or recorder',
    when: [{ field: ['oui_vendor', 'upnp_manufacturer', 'http_title'], pattern: /^Zhejiang Dahua Technology|^Dahua\b/i }],
    type: 'camera',
    vendor: 'Dahua',
    confidence: 85,
    confidences: { device_type: 70 },
    examples: { match: ['Zhejiang Dahua Technology Co., Ltd.', { upnp_manufacturer: 'Dahua' }], noMatch: ['Shanghai Dahua Scale Factory'] },
  },
  {
    id: 'dahua-port',
    label: "Dahua's device protocol port",
    when: [{ field: 'ports', ports: [37777] }],
    type: 'camera',
    vendor: 'Dahua',
    confidence: 70,
    examples: { match: [{ ports: [80, 554, 37777] }], noMatch: [{ ports: [37778] }] },
  },
  {
    id: 'reolink',
    label: 'a Reolink camera',
    when: [{ field: ['oui_vendor', 'http_title', 'upnp_manufacturer'], pattern: /^Reolink\b/i }],
    type: 'camera',
    vendor: 'Reolink',
    confidence: 85,
    confidences: { device_type: 75 },
    examples: { match: ['Reolink Innovation Limited', { http_title: 'Reolink' }], noMatch: ['Relink Ltd'] },
  },
  {
    id: 'xiongmai-camera',
    label: 'a XiongMai camera/DVR',
    when: [{ field: 'http_server', pattern: /^uc-httpd\b/i }],
    type: 'camera',
    confidence: 70,
    examples: { match: ['uc-httpd 1.0.0'], noMatch: ['micro_httpd'] },
  },
  {
    id: 'axis-camera',
    label: 'an Axis camera',
    when: [{ field: ['mdns_service', 'upnp_manufacturer'], pattern: /^_axis-video\._tcp$|^AXIS\b/i }],
    type: 'camera',
    vendor: 'Axis',
    confidence: 88,
    examples: { match: ['_axis-video._tcp', { upnp_manufacturer: 'AXIS' }], noMatch: ['_axis._tcp'] },
  },
  {
    id: 'upnp-camera',
    label: 'a UPnP security camera',
    when: [{ field: 'upnp_device_type', pattern: /:device:DigitalSecurityCamera:/ }],
    type: 'camera',
    confidence: 75,
    examples: { match: ['urn:schemas-upnp-org:device:DigitalSecurityCamera:1'], noMatch: ['urn:schemas-upnp-org:device:Basic:1'] },
  },
  {
    id: 'rtsp-camera-ports',
    label: 'a camera’s streaming and SDK ports',
    when: [{ field: 'ports', ports: [554, 8000] }],
    type: 'camera',
    confidence: 45,
    examples: { match: [{ ports: [80, 554, 8000] }], noMatch: [{ ports: [554] }] },
  },

  /* ------------------------------------------------------------------ printers */
  {
    id: 'ipp-mdns',
    label: 'an IPP printer',
    when: [{ field: 'mdns_service', pattern: /^_(?:ipps?|pdl-datastream|printer)\._tcp$/ }],
    type: 'printer',
    confidence: 70,
    examples: { match: ['_ipp._tcp', '_pdl-datastream._tcp'], noMatch: ['_ippusb._tcp'] },
  },
  {
    id: 'scanner-mdns',
    label: 'a network scanner (a multi-function printer)',
    when: [{ field: 'mdns_service', pattern: /^_(?:uscans?|scanner)\._tcp$/ }],
    type: 'printer',
    confidence: 60,
    examples: { match: ['_uscan._tcp'], noMatch: ['_scan._udp'] },
  },
  {
    id: 'printer-ty-txt',
    label: "a printer's make and model",
    when: [{ field: 'mdns_txt', pattern: /^ty=(?<model>.+?)(?: series)?$/i }],
    type: 'printer',
    model: '{model}',
    confidence: 75,
    examples: { match: ['ty=Brother HL-L2350DW series'], noMatch: ['txtvers=1'] },
  },
  {
    id: 'hp-printer',
    label: 'an HP printer',
    when: [
      {
        field: ['mdns_txt', 'http_title', 'upnp_model', 'http_server', 'snmp_sysdescr'],
        pattern:
          /^(?:ty=|HP HTTP Server; )?(?:HP|Hewlett[- ]Packard) (?<model>(?:Color )?(?:LaserJet|OfficeJet|DeskJet|ENVY|PageWide|Smart Tank|DesignJet|Neverstop)\b[^;,]*?)(?: - \w+|;|,|$)|^HP ETHERNET MULTI-ENVIRONMENT/i,
      },
    ],
    type: 'printer',
    vendor: 'HP',
    model: 'HP {model}',
    confidence: 90,
    examples: {
      match: [
        'ty=HP LaserJet Pro M404dn',
        { http_server: 'HP HTTP Server; HP Color LaserJet MFP M283fdw - 7KW75A; Serial Number: VNB3' },
        { snmp_sysdescr: 'HP ETHERNET MULTI-ENVIRONMENT,ROM none,JETDIRECT' },
      ],
      noMatch: ['ty=HP EliteBook 840'],
    },
  },
  {
    id: 'hp-printer-snmp-oid',
    label: 'an HP printer',
    when: [{ field: 'snmp_sysobjectid', pattern: /^1\.3\.6\.1\.4\.1\.11\.2\.3\.9\./ }],
    type: 'printer',
    vendor: 'HP',
    confidence: 88,
    examples: { match: ['1.3.6.1.4.1.11.2.3.9.1'], noMatch: ['1.3.6.1.4.1.11.2.3.7.11'] },
  },
  {
    id: 'brother-printer',
    label: 'a Brother printer',
    when: [
      {
        field: ['mdns_txt', 'snmp_sysdescr', 'http_title', 'upnp_model'],
        pattern: /^(?:ty=)?Brother (?<model>(?:HL|MFC|DCP|ADS|QL|PT)-\w+)|^Brother NC-\w+/i,
      },
    ],
    type: 'printer',
    vendor: 'Brother',
    model: '{model}',
    confidence: 90,
    examples: {
      match: ['ty=Brother HL-L2350DW series', { snmp_sysdescr: 'Brother NC-8300w, Firmware Ver.1.21' }],
      noMatch: ['ty=Brotherhood Press'],
    },
  },
  {
    id: 'brother-snmp-oid',
    label: 'a Brother printer',
    when: [{ field: 'snmp_sysobjectid', pattern: /^1\.3\.6\.1\.4\.1\.2435\.2\./ }],
    type: 'printer',
    vendor: 'Brother',
    confidence: 88,
    examples: { match: ['1.3.6.1.4.1.2435.2.3.9.1'], noMatch: ['1.3.6.1.4.1.24350.2'] },
  },
  {
    id: 'brother-name',
    label: "a Brother printer's default name",
    when: [{ field: ['hostname', 'netbios_name', 'mdns_name'], pattern: /^BR[NW][0-9A-F]{12}(?:\.|$)/i }],
    type: 'printer',
    vendor: 'Brother',
    confidence: 80,
    examples: { match: ['BRN3C2AF4A1B2C3', { mdns_name: 'brw3c2af4a1b2c3.local' }], noMatch: ['BRN-printer'] },
  },
  {
    id: 'epson-printer',
    label: 'an Epson printer',
    when: [
      {
        field: ['mdns_txt', 'snmp_sysdescr', 'http_server', 'upnp_manufacturer'],
        pattern: /^(?:ty=)?EPSON (?<model>(?:ET|XP|WF|L|EW|SC|PX|EP)-?\w+)|^EPSON Built-in|^EPSON[-_](?:HTTP|Linux)|^Seiko Epson/i,
      },
    ],
    type: 'printer',
    vendor: 'Epson',
    model: '{model}',
    confidence: 88,
    examples: {
      match: ['ty=EPSON ET-2750 Series', { snmp_sysdescr: 'EPSON Built-in 11b/g/n Print Server' }, { http_server: 'EPSON-HTTP/1.0' }],
      noMatch: ['ty=EPSON projector'],
    },
  },
  {
    id: 'epson-snmp-oid',
    label: 'an Epson printer',
    when: [{ field: 'snmp_sysobjectid', pattern: /^1\.3\.6\.1\.4\.1\.1248\.1\./ }],
    type: 'printer',
    vendor: 'Epson',
    confidence: 85,
    examples: { match: ['1.3.6.1.4.1.1248.1.1.2.1.3.1'], noMatch: ['1.3.6.1.4.1.12480.1'] },
  },
  {
    id: 'canon-printer',
    label: 'a Canon printer',
    when: [
      {
        field: ['mdns_txt', 'snmp_sysdescr', 'upnp_model'],
        pattern: /^(?:ty=)?Canon (?<model>(?:MF|LBP|TS|TR|G|MG|MX|iR|imageCLASS|PIXMA|MAXIFY)[\w -]*?\w)(?: series| \/P)?$/i,
      },
    ],
    type: 'printer',
    vendor: 'Canon',
    model: '{model}',
    confidence: 88,
    examples: { match: ['ty=Canon MF743C', { snmp_sysdescr: 'Canon TS8300 series' }], noMatch: ['ty=Canon EOS R6'] },
  },
  {
    id: 'canon-snmp-oid',
    label: 'a Canon printer',
    when: [{ field: 'snmp_sysobjectid', pattern: /^1\.3\.6\.1\.4\.1\.1602\.4\./ }],
    type: 'printer',
    vendor: 'Canon',
    confidence: 80,
    examples: { match: ['1.3.6.1.4.1.1602.4.7'], noMatch: ['1.3.6.1.4.1.1602.1.1'] },
  },
  {
    id: 'printer-vendors-oui',
    label: "a printer maker's network cards",
    when: [{ field: 'oui_vendor', pattern: /^(?<vendor>Brother|Lexmark|Kyocera Document Solutions|Xerox|Ricoh|Seiko Epson|Konica Minolta)\b/i }],
    type: 'printer',
    vendor: '{vendor}',
    confidence: 85,
    confidences: { device_type: 60 },
    examples: { match: ['Brother Industries, LTD.', 'Lexmark International, Inc.'], noMatch: ['Kyocera Wireless Corp.'] },
  },
  {
    id: 'printer-ports',
    label: 'raw printing and LPD ports',
    when: [{ field: 'ports', ports: [9100, 515] }],
    type: 'printer',
    confidence: 70,
    examples: { match: [{ ports: [80, 515, 631, 9100] }], noMatch: [{ ports: [9100] }] },
  },
  {
    id: 'printer-ipp-ports',
    label: 'raw printing and IPP ports',
    when: [{ field: 'ports', ports: [9100, 631] }],
    type: 'printer',
    confidence: 60,
    examples: { match: [{ ports: [631, 9100] }], noMatch: [{ ports: [631] }] },
  },
  {
    id: 'printer-snmp',
    label: 'a printer or print server',
    when: [{ field: ['snmp_sysdescr', 'port_product'], pattern: /\b(?:printer|print server|JetDirect)\b/i }],
    type: 'printer',
    confidence: 65,
    examples: {
      match: ['Lexmark MS510dn version PP.02.068 kernel 2.6.28 All-N-1 network printer', { port_product: 'HP JetDirect' }],
      noMatch: ['print spooler host'],
    },
  },
  {
    id: 'upnp-printer',
    label: 'a UPnP printer',
    when: [{ field: 'upnp_device_type', pattern: /:device:Printer:/ }],
    type: 'printer',
    confidence: 80,
    examples: { match: ['urn:schemas-upnp-org:device:Printer:1'], noMatch: ['urn:schemas-upnp-org:device:Basic:1'] },
  },

  /* ------------------------------------------------------------------ smart home and IoT */
  {
    id: 'home-assistant',
    label: 'Home Assistant',
    when: [
      { field: ['mdns_service', 'http_title', 'hostname', 'mdns_name'], pattern: /^_home-assistant\._tcp$|^Home Assistant$|^homeassistant(?:\.|$)/i },
    ],
    type: 'smart_home',
    os: 'Home Assistant',
    confidence: 85,
    examples: { match: ['_home-assistant._tcp', { http_title: 'Home Assistant' }, { mdns_name: 'homeassistant.local' }], noMatch: ['_homekit._tcp'] },
  },
  {
    id: 'home-assistant-version',
    label: "Home Assistant's version",
    when: [
      { field: 'mdns_service', pattern: /^_home-assistant\._tcp$/ },
      { field: 'mdns_txt', pattern: /^version=(?<version>20\d\d\.\d+(?:\.\d+)?)$/ },
    ],
    os: 'Home Assistant',
    osVersion: '{version}',
    cpes: ['cpe:/a:home-assistant:home-assistant:{version}'],
    confidence: 90,
    examples: {
      match: [{ mdns_service: '_home-assistant._tcp', mdns_txt: 'version=2024.1.5' }],
      noMatch: [{ mdns_service: '_esphomelib._tcp', mdns_txt: 'version=2024.1.5' }],
    },
  },
  {
    id: 'home-assistant-port',
    label: "Home Assistant's port",
    when: [{ field: 'ports', ports: [8123] }],
    type: 'smart_home',
    os: 'Home Assistant',
    confidence: 55,
    examples: { match: [{ ports: [22, 8123] }], noMatch: [{ ports: [8124] }] },
  },
  {
    id: 'homekit-accessory',
    label: 'a HomeKit accessory',
    when: [{ field: 'mdns_service', pattern: /^_hap\._(?:tcp|udp)$/ }],
    type: 'smart_home',
    confidence: 60,
    examples: { match: ['_hap._tcp'], noMatch: ['_homekit._tcp'] },
  },
  {
    id: 'matter-device',
    label: 'a Matter device',
    when: [{ field: 'mdns_service', pattern: /^_matterc?\._(?:tcp|udp)$/ }],
    type: 'smart_home',
    confidence: 60,
    examples: { match: ['_matter._tcp', '_matterc._udp'], noMatch: ['_mattermost._tcp'] },
  },
  {
    id: 'philips-hue',
    label: 'a Philips Hue bridge',
    when: [{ field: ['mdns_service', 'upnp_model', 'http_title'], pattern: /^_hue\._tcp$|Philips hue bridge/i }],
    type: 'smart_home',
    vendor: 'Philips',
    model: 'Hue Bridge',
    confidence: 92,
    examples: { match: ['_hue._tcp', { upnp_model: 'Philips hue bridge 2015' }], noMatch: ['_hues._tcp'] },
  },
  {
    id: 'philips-hue-oui',
    label: "Signify's (Philips Hue) network cards",
    when: [{ field: 'oui_vendor', pattern: /^(?:Philips Lighting|Signify)\b/i }],
    type: 'smart_home',
    vendor: 'Philips',
    confidence: 85,
    confidences: { device_type: 70 },
    examples: { match: ['Philips Lighting BV', 'Signify B.V.'], noMatch: ['Philips Medical Systems'] },
  },
  {
    id: 'shelly',
    label: 'a Shelly device',
    when: [
      {
        field: ['mdns_service', 'mdns_name', 'hostname', 'oui_vendor'],
        pattern: /^_shelly\._tcp$|^shelly[\w-]*-[0-9a-f]{6,12}(?:\.|$)|^Shelly Europe\b|^Allterco\b/i,
      },
    ],
    type: 'smart_home',
    vendor: 'Shelly',
    confidence: 90,
    examples: {
      match: ['_shelly._tcp', { mdns_name: 'shellyplus1pm-a8032ab12345.local' }, { oui_vendor: 'Shelly Europe Ltd' }],
      noMatch: ['shellfish'],
    },
  },
  {
    id: 'shelly-model',
    label: "a Shelly device's app name",
    when: [
      { field: 'mdns_service', pattern: /^_shelly\._tcp$/ },
      { field: 'mdns_txt', pattern: /^app=(?<model>\w+)$/ },
    ],
    vendor: 'Shelly',
    model: 'Shelly {model}',
    confidence: 90,
    examples: {
      match: [{ mdns_service: '_shelly._tcp', mdns_txt: ['gen=2', 'app=Plus1PM'] }],
      noMatch: [{ mdns_service: '_http._tcp', mdns_txt: 'app=Plus1PM' }],
    },
  },
  {
    id: 'esphome',
    label: 'an ESPHome device',
    when: [{ field: 'mdns_service', pattern: /^_esphomelib\._tcp$/ }],
    type: 'iot',
    os: 'ESPHome',
    confidence: 88,
    examples: { match: ['_esphomelib._tcp'], noMatch: ['_esp._tcp'] },
  },
  {
    id: 'esphome-version',
    label: "ESPHome's version",
    when: [
      { field: 'mdns_service', pattern: /^_esphomelib\._tcp$/ },
      { field: 'mdns_txt', pattern: /^version=(?<version>20\d\d\.\d+\.\d+)$/ },
    ],
    os: 'ESPHome',
    osVersion: '{version}',
    confidence: 90,
    examples: {
      match: [{ mdns_service: '_esphomelib._tcp', mdns_txt: ['platform=ESP32', 'version=2024.2.0'] }],
      noMatch: [{ mdns_service: '_esphomelib._tcp', mdns_txt: 'platform=ESP32' }],
    },
  },
  {
    id: 'esphome-port',
    label: "ESPHome's native API port",
    when: [{ field: 'ports', ports: [6053] }],
    type: 'iot',
    os: 'ESPHome',
    confidence: 65,
    examples: { match: [{ ports: [80, 6053] }], noMatch: [{ ports: [6052] }] },
  },
  {
    id: 'tasmota',
    label: 'a Tasmota device',
    when: [{ field: ['hostname', 'mdns_name', 'http_title', 'http_server'], pattern: /^tasmota-[0-9a-f]{4,6}(?:-\d{1,4})?(?:\.|$)|\bTasmota\b/i }],
    type: 'iot',
    os: 'Tasmota',
    confidence: 80,
    examples: { match: ['tasmota-A1B2C3-4567', { http_title: 'Tasmota' }], noMatch: ['tasmania'] },
  },
  {
    id: 'espressif-oui',
    label: 'an Espressif Wi-Fi chip (ESP8266/ESP32)',
    when: [{ field: 'oui_vendor', pattern: /^Espressif\b/i }],
    type: 'iot',
    confidence: 55,
    examples: { match: ['Espressif Inc.', 'Espressif Systems (Singapore) Pte. Ltd'], noMatch: ['Expressif Ltd'] },
  },
  {
    id: 'tuya-oui',
    label: 'a Tuya smart device module',
    when: [{ field: 'oui_vendor', pattern: /^Tuya\b/i }],
    type: 'smart_home',
    confidence: 60,
    examples: { match: ['Tuya Smart Inc.'], noMatch: ['Tuyere Ltd'] },
  },
  {
    id: 'nest-oui',
    label: "Nest's network cards",
    when: [{ field: 'oui_vendor', pattern: /^Nest Labs\b/i }],
    type: 'smart_home',
    vendor: 'Google',
    confidence: 85,
    confidences: { device_type: 65 },
    examples: { match: ['Nest Labs Inc.'], noMatch: ['Nestle SA'] },
  },
  {
    id: 'octoprint',
    label: 'OctoPrint (a 3D printer host)',
    when: [{ field: ['mdns_service', 'http_title'], pattern: /^_octoprint\._tcp$|^OctoPrint\b/i }],
    type: 'iot',
    confidence: 75,
    examples: { match: ['_octoprint._tcp', { http_title: 'OctoPrint' }], noMatch: ['_printer._tcp'] },
  },
  {
    id: 'apc-ups',
    label: 'an APC UPS network card',
    when: [
      {
        field: ['snmp_sysdescr', 'snmp_sysobjectid'],
        pattern: /^APC Web\/SNMP Management Card\b(?:.*\bMN:(?<model>\w+))?|^1\.3\.6\.1\.4\.1\.318\.1\./,
      },
    ],
    type: 'iot',
    vendor: 'APC',
    model: '{model}',
    confidence: 88,
    examples: {
      match: [
        'APC Web/SNMP Management Card (MB:v4.1.0 PF:v6.8.2 PN:apc_hw05_aos_682.bin MN:AP9631 HR:05)',
        { snmp_sysobjectid: '1.3.6.1.4.1.318.1.3.27' },
      ],
      noMatch: ['APC Back-UPS driver on Linux'],
    },
  },

  /* ------------------------------------------------------------------ nmap OS detection */
  {
    id: 'nmap-os-family',
    label: "nmap's OS detection",
    when: [
      {
        field: 'nmap_os_class',
        pattern: /^[^|]*\|(?<os>(?!embedded\||specialized\||Mac OS X\||macOS\|)[^|]+)\|(?:(?<version>\d+(?:\.\d+)*)|[^|]*)\|/i,
      },
    ],
    os: '{os}',
    osVersion: '{version}',
    confidence: 75,
    examples: { match: ['Linux|Linux|5.X|general purpose', 'Microsoft|Windows|10|general purpose'], noMatch: ['Ubiquiti|embedded||WAP'] },
  },
  {
    id: 'nmap-os-cpe',
    label: "nmap's OS detection",
    when: [{ field: 'nmap_os_cpe', pattern: /^(?<cpe>cpe:\/[aoh]:[^:]+:[^:]+(?::[^:]+)?)$/ }],
    cpes: ['{cpe}'],
    confidence: 70,
    examples: { match: ['cpe:/o:linux:linux_kernel:5'], noMatch: ['linux kernel 5'] },
  },
  {
    id: 'nmap-type-router',
    label: "nmap's device class (router)",
    when: [{ field: 'nmap_os_class', pattern: /\|(?:broadband )?router$/i }],
    type: 'router',
    confidence: 75,
    examples: { match: ['MikroTik|RouterOS|6.X|router', 'AVM|embedded||broadband router'], noMatch: ['Linux|Linux|5.X|general purpose'] },
  },
  {
    id: 'nmap-type-firewall',
    label: "nmap's device class (firewall)",
    when: [{ field: 'nmap_os_class', pattern: /\|firewall$/i }],
    type: 'firewall',
    confidence: 75,
    examples: { match: ['FreeBSD|FreeBSD|12.X|firewall'], noMatch: ['FreeBSD|FreeBSD|12.X|general purpose'] },
  },
  {
    id: 'nmap-type-switch',
    label: "nmap's device class (switch)",
    when: [{ field: 'nmap_os_class', pattern: /\|switch$/i }],
    type: 'switch',
    confidence: 75,
    examples: { match: ['Cisco|IOS|15.X|switch'], noMatch: ['Cisco|IOS|15.X|router'] },
  },
  {
    id: 'nmap-type-wap',
    label: "nmap's device class (wireless access point)",
    when: [{ field: 'nmap_os_class', pattern: /\|WAP$/i }],
    type: 'access_point',
    confidence: 75,
    examples: { match: ['Ubiquiti|embedded||WAP'], noMatch: ['Ubiquiti|embedded||switch'] },
  },
  {
    id: 'nmap-type-printer',
    label: "nmap's device class (printer)",
    when: [{ field: 'nmap_os_class', pattern: /\|print(?:er| server)$/i }],
    type: 'printer',
    confidence: 75,
    examples: { match: ['HP|embedded||printer'], noMatch: ['HP|embedded||switch'] },
  },
  {
    id: 'nmap-type-camera',
    label: "nmap's device class (webcam)",
    when: [{ field: 'nmap_os_class', pattern: /\|webcam$/i }],
    type: 'camera',
    confidence: 75,
    examples: { match: ['Hikvision|embedded||webcam'], noMatch: ['Hikvision|embedded||storage-misc'] },
  },
  {
    id: 'nmap-type-media',
    label: "nmap's device class (media device)",
    when: [{ field: 'nmap_os_class', pattern: /\|media device$/i }],
    type: 'media_player',
    confidence: 65,
    examples: { match: ['Apple|tvOS|15.X|media device'], noMatch: ['Apple|iOS|15.X|phone'] },
  },
  {
    id: 'nmap-type-phone',
    label: "nmap's device class (phone)",
    when: [{ field: 'nmap_os_class', pattern: /\|phone$/i }],
    type: 'phone',
    confidence: 70,
    examples: { match: ['Apple|iOS|16.X|phone'], noMatch: ['Cisco|embedded||VoIP phone'] },
  },
  {
    id: 'nmap-type-storage',
    label: "nmap's device class (storage)",
    when: [{ field: 'nmap_os_class', pattern: /\|storage-misc$/i }],
    type: 'nas',
    confidence: 65,
    examples: { match: ['Synology|DiskStation Manager|7.X|storage-misc'], noMatch: ['Synology|Linux|4.X|general purpose'] },
  },
  {
    id: 'nmap-type-game-console',
    label: "nmap's device class (game console)",
    when: [{ field: 'nmap_os_class', pattern: /\|game console$/i }],
    type: 'game_console',
    confidence: 75,
    examples: { match: ['Sony|embedded||game console'], noMatch: ['Sony|embedded||media device'] },
  },
  {
    id: 'nmap-type-power',
    label: "nmap's device class (power device)",
    when: [{ field: 'nmap_os_class', pattern: /\|power-device$/i }],
    type: 'iot',
    confidence: 65,
    examples: { match: ['APC|AOS||power-device'], noMatch: ['APC|AOS||specialized'] },
  },
  {
    id: 'nmap-os-windows',
    label: "nmap's OS detection (Windows)",
    when: [{ field: 'nmap_os_name', pattern: /^Microsoft Windows (?<version>\d+|Server 20\d\d(?: R2)?|XP|7|8\.1)\b/ }],
    vendor: 'Microsoft',
    os: 'Windows',
    osVersion: '{version}',
    cpes: [WINDOWS],
    confidence: 75,
    confidences: { vendor: 40 },
    examples: { match: ['Microsoft Windows 10 1809 - 21H2', 'Microsoft Windows Server 2019'], noMatch: ['Microsoft Xbox One'] },
  },
  {
    id: 'nmap-os-macos',
    label: "nmap's OS detection (macOS)",
    when: [{ field: 'nmap_os_class', pattern: /^Apple\|(?:Mac OS X|macOS)\|/ }],
    vendor: 'Apple',
    os: 'macOS',
    confidence: 75,
    examples: { match: ['Apple|Mac OS X|10.14.X|general purpose', 'Apple|macOS|13.X|general purpose'], noMatch: ['Apple|iOS|16.X|phone'] },
  },

  /* ------------------------------------------------------------------ vendors named by the network card, UPnP or mDNS */
  {
    id: 'oui-synology-qnap-nas',
    label: "a NAS maker's network cards",
    when: [{ field: 'oui_vendor', pattern: /^(?:Synology|QNAP)\b/i }],
    type: 'nas',
    confidence: 50,
    examples: { match: ['QNAP Systems, Inc.'], noMatch: ['QNX Software Systems'] },
  },
  {
    id: 'oui-router-makers',
    label: "a router maker's network cards",
    when: [{ field: 'oui_vendor', pattern: /^(?:Routerboard\.com|AVM |Fortinet)/i }],
    type: 'router',
    confidence: 50,
    examples: { match: ['Routerboard.com', 'AVM Audiovisuelles Marketing und Computersysteme GmbH'], noMatch: ['Avmap srlu'] },
  },
  {
    id: 'oui-media-makers',
    label: "a media player maker's network cards",
    when: [{ field: 'oui_vendor', pattern: /^(?:Sonos|Roku)\b/i }],
    type: 'media_player',
    confidence: 60,
    examples: { match: ['Sonos, Inc.', 'Roku, Inc'], noMatch: ['Sonoscape'] },
  },
  {
    id: 'oui-vendor',
    label: 'the MAC vendor (IEEE registry)',
    when: [{ field: 'oui_vendor', pattern: new RegExp(`^(?!(?:${MODULE_VENDORS})\\b)(?<vendor>.+)$`, 'i') }],
    vendor: '{vendor}',
    confidence: 50,
    examples: { match: ['Apple, Inc.', 'Samsung Electronics Co.,Ltd'], noMatch: ['Espressif Inc.', 'Hon Hai Precision Ind. Co.,Ltd.'] },
  },
  {
    id: 'upnp-manufacturer',
    label: 'the UPnP description',
    when: [{ field: 'upnp_manufacturer', pattern: /^(?<vendor>(?!Linux\b|Microsoft\b|OpenWrt\b|Unknown\b)\S.*)$/i }],
    vendor: '{vendor}',
    confidence: 65,
    examples: { match: ['Samsung Electronics', 'Google Inc.'], noMatch: ['Microsoft Corporation', 'Linux'] },
  },
  {
    id: 'upnp-model-name',
    label: 'the UPnP description',
    when: [
      { field: 'upnp_manufacturer', pattern: /^(?<vendor>(?!Linux\b|Microsoft\b|OpenWrt\b|Unknown\b)\S.*)$/i },
      { field: 'upnp_model', pattern: /^(?<model>(?!Windows Media|UPnP|Linux\b)\S.{0,60})$/i },
    ],
    vendor: '{vendor}',
    model: '{model}',
    confidence: 55,
    examples: {
      match: [{ upnp_manufacturer: 'Samsung Electronics', upnp_model: 'UE55RU7400' }],
      noMatch: [{ upnp_manufacturer: 'Microsoft Corporation', upnp_model: 'Windows Media Player Sharing' }, { upnp_model: 'Sonos One' }],
    },
  },
  {
    id: 'mdns-model-txt',
    label: 'the mDNS device information',
    when: [{ field: 'mdns_txt', pattern: /^(?:model|md)=(?<model>\S.{0,60})$/ }],
    model: '{model}',
    confidence: 55,
    examples: { match: ['model=RMBP', 'md=SHIELD Android TV'], noMatch: ['manufacturer=NVIDIA'] },
  },
];
