/**
 * What a device is, from everything a scan learned about it: the probes' answers, the MAC and its
 * vendor, the host name, the open ports and nmap's OS detection, read through the fingerprint table
 * (`fingerprints.ts`). Pure and deterministic: the same input gives the same answer, evidence in the
 * same order.
 *
 * How the hits of the rules are combined, per field (type, vendor, model, OS, OS version):
 *  - each hit offers a value with a confidence (the rule's, times the weight of what it matched:
 *    nmap's accuracy);
 *  - a value's support is every hit for it or for a broader value (a hit for `iot` supports
 *    `camera`; `Linux` supports `DSM`; a vendor `Hikvision` supports `Hikvision Digital`); hits of
 *    one source count once (their strongest), and independent sources add up as
 *    1 − Π(1 − c/100), so agreeing evidence raises the confidence;
 *  - the best-supported value wins (ties: the more specific, then the stronger single hit, then
 *    the earlier rule); the strongest value that contradicts it takes half its own support off the
 *    winner's confidence (never below 1, never above 99: nothing seen on a network is certain);
 *  - the model and the CPEs come only from hits that agree with the winning type, vendor and OS;
 *    the OS version only from hits that name the winning OS itself.
 * Every hit is kept as evidence with a sentence a person can read, including those that lost.
 */
import { DEVICE_TYPE_INFO, isFormOf, type DeviceType } from './device-types.js';
import {
  FIELD_INFO,
  FINGERPRINT_RULES,
  confidenceOf,
  isSharedMatch,
  matchRules,
  yieldOf,
  type ConditionMatch,
  type EvidenceSource,
  type FingerprintField,
  type FingerprintRule,
  type HitYield,
  type Observation,
  type ObservedValue,
  type RuleHit,
  type YieldField,
} from './fingerprints.js';
import { normalizeMac } from './mac.js';
import type { NmapOsMatch, ProbeResults } from './probe-results.js';

/** An open port as recognition reads it. */
export interface RecognitionPort {
  port: number;
  protocol: string;
  service: string | null;
  product: string | null;
  version: string | null;
}

export interface RecognitionInput {
  probes: ProbeResults;
  mac: string | null;
  /** The MAC's vendor in IEEE's registry (scan/oui.ts), when known. */
  ouiVendor: string | null;
  hostname: string | null;
  /** The host's open ports. */
  openPorts: readonly RecognitionPort[];
  /** nmap's OS matches, when they are kept apart from the probe results (else `probes.nmapOs`). */
  nmapOs?: readonly NmapOsMatch[];
}

export interface RecognitionEvidence {
  field: YieldField;
  value: string;
  source: EvidenceSource;
  /** A sentence a person reads: `SNMP sysDescr "Linux DiskStation 4.4.302+" matches Synology DSM`. */
  detail: string;
  /** 0–100: how much this hit alone says it. */
  confidence: number;
  /** The fingerprint rule that produced it. */
  rule: string;
}

export interface Recognition {
  device_type: DeviceType;
  /** 0–100; 0 when the type is `unknown`. */
  type_confidence: number;
  vendor: string | null;
  model: string | null;
  os_name: string | null;
  os_version: string | null;
  /** 0–100 per field; 0 where the field is null. */
  confidence: { vendor: number; model: number; os_name: number; os_version: number };
  /** CPE 2.2 URIs for CVE matching, the most specific first, without a version-less duplicate of a versioned one. */
  cpes: string[];
  evidence: RecognitionEvidence[];
}

/* ------------------------------------------------------------------------------------------------
 * Observation: the input as the rules read it
 * --------------------------------------------------------------------------------------------- */

function present(text: string | null | undefined): text is string {
  return typeof text === 'string' && text.trim() !== '';
}

/** The best of nmap's OS matches: the highest accuracy, the first on a tie. */
function bestNmapMatch(matches: readonly NmapOsMatch[] | undefined): NmapOsMatch | null {
  let best: NmapOsMatch | null = null;
  for (const m of matches ?? []) if (!best || m.accuracy > best.accuracy) best = m;
  return best;
}

export function observe(input: RecognitionInput): Observation {
  const values = new Map<FingerprintField, ObservedValue[]>();
  const add = (field: FingerprintField, value: string | null | undefined, where: string | null = null, weight = 1): void => {
    if (!present(value)) return;
    const v = value.trim();
    const list = values.get(field);
    if (!list) values.set(field, [{ value: v, weight, where }]);
    else if (!list.some((o) => o.value === v)) list.push({ value: v, weight, where });
  };
  const { snmp, ssdp, mdns, netbios, http, tls, ssh } = input.probes;
  if (snmp) {
    add('snmp_sysdescr', snmp.sysDescr);
    add('snmp_sysobjectid', snmp.sysObjectID?.replace(/^\./, ''));
  }
  if (ssdp) {
    add('upnp_manufacturer', ssdp.manufacturer);
    add('upnp_model', ssdp.modelName);
    add('upnp_device_type', ssdp.deviceType);
    add('upnp_friendly_name', ssdp.friendlyName);
    add('upnp_server', ssdp.server);
  }
  if (mdns) {
    for (const s of mdns.services) add('mdns_service', s);
    for (const [k, v] of Object.entries(mdns.txt).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) add('mdns_txt', `${k.toLowerCase()}=${v}`);
    for (const n of mdns.names) add('mdns_name', n);
  }
  for (const h of http ?? []) {
    add('http_title', h.title, `port ${h.port}`);
    add('http_server', h.server, `port ${h.port}`);
  }
  for (const t of tls ?? []) {
    add('tls_subject', t.subject, `port ${t.port}`);
    add('tls_issuer', t.issuer, `port ${t.port}`);
  }
  for (const s of ssh ?? []) add('ssh_banner', s.banner, `port ${s.port}`);
  if (netbios) add('netbios_name', netbios.name);
  const os = bestNmapMatch(input.nmapOs ?? input.probes.nmapOs);
  if (os) {
    const weight = Math.max(0, Math.min(100, os.accuracy)) / 100;
    const where = `accuracy ${Math.round(os.accuracy)}%`;
    add('nmap_os_name', os.name, where, weight);
    add('nmap_os_class', [os.vendor, os.family, os.generation, os.type].map((p) => (p ?? '').replace(/\|/g, ' ')).join('|'), where, weight);
    for (const c of os.cpe) add('nmap_os_cpe', c, where, weight);
  }
  add('oui_vendor', input.ouiVendor);
  add('mac', normalizeMac(input.mac));
  add('hostname', input.hostname);
  const ports = new Set<string>();
  for (const p of input.openPorts) {
    const protocol = p.protocol === 'udp' ? 'udp' : 'tcp';
    ports.add(`${p.port}/${protocol}`);
    add('port_product', p.product, `port ${p.port}/${protocol}`);
  }
  return { values, ports };
}

/* ------------------------------------------------------------------------------------------------
 * Agreement between values
 * --------------------------------------------------------------------------------------------- */

/** Operating systems built on others: evidence for the base supports them. */
const OS_BASES: Readonly<Record<string, readonly string[]>> = {
  DSM: ['Linux'],
  SRM: ['Linux'],
  QTS: ['Linux'],
  Debian: ['Linux'],
  Ubuntu: ['Linux'],
  'Raspberry Pi OS': ['Debian', 'Linux'],
  'Proxmox VE': ['Debian', 'Linux'],
  openmediavault: ['Debian', 'Linux'],
  Unraid: ['Linux'],
  OpenWrt: ['Linux'],
  Android: ['Linux'],
  'Fire OS': ['Android', 'Linux'],
  webOS: ['Linux'],
  Tizen: ['Linux'],
  'FRITZ!OS': ['Linux'],
  UniFi: ['Linux'],
  'UniFi OS': ['Linux'],
  RouterOS: ['Linux'],
  Sonos: ['Linux'],
  'Roku OS': ['Linux'],
  'Home Assistant': ['Linux'],
  pfSense: ['FreeBSD'],
  OPNsense: ['FreeBSD'],
  iPadOS: ['iOS'],
};

type ContestField = 'device_type' | 'vendor' | 'model' | 'os_name' | 'os_version';

const textKeys = new Map<string, string>();

/** A vendor's or model's letters and digits, lower case (memoised: the same few names recur on every host). */
function textKey(value: string): string {
  let key = textKeys.get(value);
  if (key === undefined) {
    key = value.toLowerCase().replace(/[^a-z0-9]/g, '');
    if (textKeys.size >= 10_000) textKeys.clear();
    textKeys.set(value, key);
  }
  return key;
}

/** True when a hit for `offered` supports `candidate`: the same, or broader than it. */
function supports(field: ContestField, offered: string, candidate: string): boolean {
  if (offered === candidate) return true;
  switch (field) {
    case 'device_type':
      return isFormOf(candidate as DeviceType, offered as DeviceType);
    case 'os_name':
      return (Object.hasOwn(OS_BASES, candidate) ? OS_BASES[candidate] : []).includes(offered);
    case 'vendor':
    case 'model': {
      const a = textKey(offered);
      const b = textKey(candidate);
      return a === b || (a.length >= 3 && b.includes(a));
    }
    case 'os_version':
      return textKey(offered) === textKey(candidate);
  }
}

function agree(field: ContestField, a: string, b: string): boolean {
  return supports(field, a, b) || supports(field, b, a);
}

/* ------------------------------------------------------------------------------------------------
 * The contest of one field
 * --------------------------------------------------------------------------------------------- */

interface Offer {
  value: string;
  source: EvidenceSource;
  confidence: number;
  order: number;
}

interface Outcome {
  value: string;
  confidence: number;
}

/** 1 − Π(1 − c/100) over sources, each source counted once at its strongest. */
function combined(offers: readonly Offer[]): number {
  const bySource = new Map<EvidenceSource, number>();
  for (const o of offers) bySource.set(o.source, Math.max(bySource.get(o.source) ?? 0, o.confidence));
  let miss = 1;
  for (const c of bySource.values()) miss *= 1 - c / 100;
  return 100 * (1 - miss);
}

function contest(field: ContestField, offers: readonly Offer[]): Outcome | null {
  const candidates = [...new Set(offers.map((o) => o.value))];
  if (candidates.length === 0) return null;
  const scored = candidates.map((value) => {
    const own = offers.filter((o) => o.value === value);
    return {
      value,
      score: combined(offers.filter((o) => supports(field, o.value, value))),
      strongest: Math.max(...own.map((o) => o.confidence)),
      order: Math.min(...own.map((o) => o.order)),
    };
  });
  scored.sort((a, b) => {
    if (Math.abs(a.score - b.score) > 1e-9) return b.score - a.score;
    // The more specific of two types or systems that agree: `camera` before `iot`, `DSM` before `Linux`.
    if ((field === 'device_type' || field === 'os_name') && supports(field, b.value, a.value) && !supports(field, a.value, b.value)) return -1;
    if ((field === 'device_type' || field === 'os_name') && supports(field, a.value, b.value) && !supports(field, b.value, a.value)) return 1;
    if (a.strongest !== b.strongest) return b.strongest - a.strongest;
    if (a.order !== b.order) return a.order - b.order;
    return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
  });
  const winner = scored[0];
  const rival = scored.find((s) => !agree(field, s.value, winner.value));
  const confidence = Math.round(winner.score - (rival ? rival.score / 2 : 0));
  return { value: winner.value, confidence: Math.max(1, Math.min(99, confidence)) };
}

/* ------------------------------------------------------------------------------------------------
 * Recognition
 * --------------------------------------------------------------------------------------------- */

interface Scored {
  hit: RuleHit;
  yields: HitYield;
  source: EvidenceSource;
  order: number;
}

function offersOf(scored: readonly Scored[], field: ContestField, valueOf: (y: HitYield) => string | null): Offer[] {
  const out: Offer[] = [];
  for (const s of scored) {
    const value = valueOf(s.yields);
    if (value === null) continue;
    out.push({ value, source: s.source, confidence: confidenceOf(s.hit.rule, field) * s.hit.weight, order: s.order });
  }
  return out;
}

/** The CPEs, a versioned one replacing the same product without a version. */
function tidyCpes(cpes: readonly string[]): string[] {
  const unique = [...new Set(cpes)];
  return unique.filter((c) => !unique.some((o) => o !== c && o.startsWith(`${c}:`)));
}

export function recognise(input: RecognitionInput, rules: readonly FingerprintRule[] = FINGERPRINT_RULES): Recognition {
  const obs = observe(input);
  const scored: Scored[] = matchRules(rules, obs).map(({ hit, order }) => ({
    hit,
    yields: yieldOf(hit),
    source: FIELD_INFO[hit.matched[0].field].source,
    order,
  }));
  // What the hits conclude depends only on which rules hit, what each yields, its source and its
  // weight: hosts of one model conclude alike, so the conclusion is worked out once per such set
  // (each host's own sentences, which quote its values, are filled in afterwards).
  let memo = conclusions.get(rules);
  if (!memo) conclusions.set(rules, (memo = new Map<string, Conclusion>()));
  const key = scored.map((s) => `${s.order}:${yieldId(s.yields)}:${s.source}:${s.hit.weight}`).join(' ');
  let c = memo.get(key);
  if (c === undefined) {
    c = conclude(scored);
    if (memo.size >= CONCLUSIONS_KEPT) memo.clear();
    memo.set(key, c);
  }
  const details: string[] = [];
  return {
    ...c.fields,
    confidence: { ...c.fields.confidence },
    cpes: [...c.fields.cpes],
    evidence: c.evidence.map(({ hit, field, value, confidence }) => ({
      field,
      value,
      source: scored[hit].source,
      detail: (details[hit] ??= detailOf(scored[hit].hit)),
      confidence,
      rule: scored[hit].hit.rule.id,
    })),
  };
}

/** Conclusions kept per table (bounded: cleared when full). */
const CONCLUSIONS_KEPT = 4096;

/** What a set of hits concludes: the fields, and the evidence in order, each naming its hit (its position in the hits). */
interface Conclusion {
  fields: Omit<Recognition, 'evidence'>;
  evidence: { hit: number; field: YieldField; value: string; confidence: number }[];
}

const conclusions = new WeakMap<readonly FingerprintRule[], Map<string, Conclusion>>();

/**
 * A number per distinct yield (by content: the same yield from another value or another host has
 * the same number). Numbers are never reused, so a yield keeps meaning one content.
 */
const yieldNumbers = new WeakMap<HitYield, number>();
const yieldByContent = new Map<string, number>();
let nextYieldNumber = 0;

function yieldId(y: HitYield): number {
  let n = yieldNumbers.get(y);
  if (n === undefined) {
    const content = JSON.stringify(y);
    n = yieldByContent.get(content);
    if (n === undefined) {
      n = nextYieldNumber++;
      if (yieldByContent.size >= 10_000) yieldByContent.clear();
      yieldByContent.set(content, n);
    }
    yieldNumbers.set(y, n);
  }
  return n;
}

function conclude(scored: readonly Scored[]): Conclusion {
  const type = contest(
    'device_type',
    offersOf(scored, 'device_type', (y) => y.device_type),
  );
  const vendor = contest(
    'vendor',
    offersOf(scored, 'vendor', (y) => y.vendor),
  );
  const os = contest(
    'os_name',
    offersOf(scored, 'os_name', (y) => y.os_name),
  );
  // Hits that agree with what won: only they may name the model and the CPEs.
  const consistent = scored.filter(
    ({ yields: y }) =>
      (!type || y.device_type === null || agree('device_type', y.device_type, type.value)) &&
      (!vendor || y.vendor === null || agree('vendor', y.vendor, vendor.value)) &&
      (!os || y.os_name === null || agree('os_name', y.os_name, os.value)),
  );
  const model = contest(
    'model',
    offersOf(consistent, 'model', (y) => y.model),
  );
  const osVersion = os
    ? contest(
        'os_version',
        offersOf(consistent, 'os_version', (y) => (y.os_name === os.value ? y.os_version : null)),
      )
    : null;
  const cpes = tidyCpes(
    [...consistent]
      .sort((a, b) => confidenceOf(b.hit.rule, 'cpe') * b.hit.weight - confidenceOf(a.hit.rule, 'cpe') * a.hit.weight || a.order - b.order)
      .flatMap((s) => s.yields.cpes),
  );

  return {
    fields: {
      device_type: type ? (type.value as DeviceType) : 'unknown',
      type_confidence: type?.confidence ?? 0,
      vendor: vendor?.value ?? null,
      model: model?.value ?? null,
      os_name: os?.value ?? null,
      os_version: osVersion?.value ?? null,
      confidence: {
        vendor: vendor?.confidence ?? 0,
        model: model?.confidence ?? 0,
        os_name: os?.confidence ?? 0,
        os_version: osVersion?.confidence ?? 0,
      },
      cpes,
    },
    evidence: evidenceOf(scored),
  };
}

/* ------------------------------------------------------------------------------------------------
 * Evidence and the short reason
 * --------------------------------------------------------------------------------------------- */

const EVIDENCE_FIELDS: readonly YieldField[] = ['device_type', 'vendor', 'model', 'os_name', 'os_version', 'cpe'];

/** The value in quotes; a long one cut to the part around what matched. */
function quote(m: ConditionMatch): string {
  const max = 80;
  const text = m.value.replace(/\s/g, ' ');
  if (text.length <= max) return `"${text.trim()}"`;
  const room = Math.max(0, max - m.length);
  let start = Math.max(0, m.index - Math.floor(room / 2));
  const end = Math.min(text.length, start + max);
  start = Math.max(0, end - max);
  return `"${start > 0 ? '...' : ''}${text.slice(start, end).trim()}${end < text.length ? '...' : ''}"`;
}

function describeCondition(m: ConditionMatch): string {
  if (m.field === 'ports') {
    const list = m.value.split(', ');
    return `${list.length === 1 ? 'open port' : 'open ports'} ${list.join(', ')}`;
  }
  return `${FIELD_INFO[m.field].label} ${quote(m)}${m.where ? ` (${m.where})` : ''}`;
}

/** `SNMP sysDescr "Linux DiskStation 4.4.302+" matches Synology DSM`. */
export function detailOf(hit: RuleHit): string {
  // A hit on a value many hosts offer has the same sentence on each: made once (fingerprints.ts isSharedMatch).
  const only = hit.matched.length === 1 && isSharedMatch(hit.matched[0]) ? hit.matched[0] : null;
  let detail = only && sharedDetails.get(only);
  if (!detail) {
    detail = detailOnce(hit);
    if (only) sharedDetails.set(only, detail);
  }
  return detail;
}

/** Sentences of hits on shared condition matches (each match is one rule's, on one value, at one `where`). */
const sharedDetails = new WeakMap<ConditionMatch, string>();

function detailOnce(hit: RuleHit): string {
  const parts = hit.matched.map(describeCondition);
  const plural = parts.length > 1 || (hit.matched[0].field === 'ports' && hit.matched[0].value.includes(','));
  const text = `${parts.join(' and ')} ${plural ? 'match' : 'matches'} ${hit.rule.label}`;
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The evidence of the hits in the order it is shown, each naming its hit (its position in `scored`); the sentences are the host's own. */
function evidenceOf(scored: readonly Scored[]): Conclusion['evidence'] {
  const out: (Conclusion['evidence'][number] & { order: number })[] = [];
  scored.forEach((s, hit) => {
    const push = (field: YieldField, value: string | null): void => {
      if (value === null) return;
      out.push({ hit, field, value, confidence: Math.round(confidenceOf(s.hit.rule, field) * s.hit.weight), order: s.order });
    };
    push('device_type', s.yields.device_type);
    push('vendor', s.yields.vendor);
    push('model', s.yields.model);
    push('os_name', s.yields.os_name);
    push('os_version', s.yields.os_version);
    for (const c of s.yields.cpes) push('cpe', c);
  });
  out.sort(
    (a, b) =>
      EVIDENCE_FIELDS.indexOf(a.field) - EVIDENCE_FIELDS.indexOf(b.field) ||
      b.confidence - a.confidence ||
      a.order - b.order ||
      (a.value < b.value ? -1 : a.value > b.value ? 1 : 0),
  );
  return out.map(({ order: _order, ...e }) => e);
}

/** How the short reason names each source. */
const SOURCE_WORDS: Readonly<Record<EvidenceSource, string>> = {
  snmp: 'SNMP',
  ssdp: 'UPnP',
  mdns: 'mDNS',
  netbios: 'NetBIOS',
  http_title: 'HTTP',
  http_server: 'HTTP',
  tls: 'TLS',
  ssh: 'SSH',
  nmap_os: 'nmap',
  oui: 'MAC vendor',
  ports: 'open ports',
  hostname: 'host name',
};

/** A type's label after a vendor or OS: `NAS`, `TV`, `IoT device` stay, others start lower-case. */
function typeWords(type: DeviceType): string {
  const label = DEVICE_TYPE_INFO[type].label;
  return /^[A-Z][a-z]/.test(label) && !/^IoT/.test(label) ? label.charAt(0).toLowerCase() + label.slice(1) : label;
}

/**
 * The short reason the device list shows: what it is and which sources said so, strongest first:
 * `Synology NAS (SNMP, mDNS)`, `Windows computer (NetBIOS, open ports)`, `Not recognised`.
 */
export function reasonOf(r: Recognition): string {
  const subject = r.vendor ?? r.os_name;
  let what: string;
  if (r.device_type !== 'unknown') what = subject ? `${subject} ${typeWords(r.device_type)}` : DEVICE_TYPE_INFO[r.device_type].label;
  else if (r.vendor) what = `${r.vendor} device`;
  else if (r.os_name) what = `${r.os_name} host`;
  else return 'Not recognised';
  const backing = r.evidence.filter(
    (e) =>
      (e.field === 'device_type' && r.device_type !== 'unknown' && supports('device_type', e.value, r.device_type)) ||
      (e.field === 'vendor' && r.vendor !== null && agree('vendor', e.value, r.vendor)) ||
      (e.field === 'os_name' && r.vendor === null && r.os_name !== null && supports('os_name', e.value, r.os_name)),
  );
  const best = new Map<string, number>();
  for (const e of backing) {
    const word = SOURCE_WORDS[e.source];
    best.set(word, Math.max(best.get(word) ?? 0, e.confidence));
  }
  const words = [...best.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, 3)
    .map(([w]) => w);
  return words.length > 0 ? `${what} (${words.join(', ')})` : what;
}
