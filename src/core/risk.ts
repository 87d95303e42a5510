/**
 * Risk scoring of one device from its open ports and CVE matches. Pure: plain data in, plain data
 * out; the shell stores the result as the device's `risk_details` (`GET /api/devices/{id}`, described in /openapi.json).
 *
 * Findings
 * - Rule findings: every open port (state `open`; `open|filtered` and the rest never count) is
 *   matched against the rule table (`risk-rules.ts` plus the user's `scanning.risk_rules`). A rule
 *   matches by service on any port, or by port when the service on it was not identified (or was
 *   identified only as something the rule allows there); see `risk-rules.ts`. A port that several
 *   rules match gives one finding per rule, except that generic rules give way to specific ones.
 * - CVE findings: the device's CVE matches grouped by port, one finding per port (and one for
 *   matches without a port), severity = the worst CVE severity, `cve_ids` worst first.
 *
 * User rules (`scanning.risk_rules`), applied in order by id:
 * - `enabled: false` removes the rule with that id (built-in or added earlier).
 * - Same id as an existing rule: overrides it. `severity` and `title` replace the built-in's;
 *   `description` and `recommendation` replace them when given; `port` replaces the ports,
 *   `service` replaces the service names (and the product patterns), `protocol` restricts it.
 *   Other matching details of the built-in rule are kept.
 * - A new id adds a rule matching `service` on any port and/or `port`. A rule with a port and no
 *   service matches any open port with that number, whatever runs there (nothing to contradict);
 *   a rule with neither never matches.
 *
 * Score (0–100) and level
 * - Findings are ordered worst first (severity, then port, rule findings before CVE findings).
 * - The level is the worst finding's severity, `none` without findings.
 * - The first finding adds its severity's base points (critical 70, high 40, medium 15, low 5),
 *   each further finding adds its severity's increment (critical 15, high 8, medium 4, low 1), and
 *   the total is capped at the top of the level's band; a finding that would exceed it adds only
 *   what is left (possibly 0). Each finding's `score` is what it added, so they sum to the score.
 * - Bands: none 0, low 1–14, medium 15–39, high 40–69, critical 70–100. The score is always inside
 *   the level's band: a device whose worst finding is medium scores 15–39 and is never critical,
 *   a device with a critical finding is critical and scores at least 70.
 */
import { TLS_WRAPPED_NAMES, wellKnownService } from './ports.js';
import { udpPortName } from './udp-probes.js';
import { BUILTIN_RISK_RULES, type RiskRule, type RulePortView } from './risk-rules.js';
import {
  RISK_SCORE_BANDS,
  SEVERITY_RANK,
  asFindingSeverity,
  severityFromCvss,
  worstFirst,
  type FindingSeverity,
  type RiskLevel,
} from './severity.js';
import { isOpenPort } from './model.js';
import { TupleMemo, type MemoKeyPart } from './memo.js';
import type { RiskRuleSetting } from './settings.js';
import { policyBreaches, portLabel, type ZonePolicy } from './policies.js';

export { BUILTIN_RISK_RULES } from './risk-rules.js';
export type { RiskRule, RulePortView } from './risk-rules.js';

/** A scanned port: `ScannedPort`, a stored port record and the change detector's port state all fit. */
export interface RiskPortInput {
  port: number;
  protocol: string;
  state: string;
  service: string | null;
  product?: string | null;
  version?: string | null;
  extra_info?: string | null;
  cpe?: readonly string[];
}

/** One CVE matched on the device (from the CVE matcher). */
export interface RiskCveInput {
  id: string;
  /** critical, high, medium or low (anything else is derived from `cvss_score`). */
  severity: string;
  cvss_score: number | null;
  /** The port whose software matched; null for a match on the host (e.g. its OS). */
  port: number | null;
  /** `confirmed` (product and version match) or `likely` (product matches a version-independent entry). */
  confidence: string;
  /** Listed in CISA's Known Exploited Vulnerabilities catalogue. */
  kev?: boolean;
  remediation?: string | null;
  matched_product?: string | null;
  matched_version?: string | null;
  /** Where the product and version came from when not from a port's service (recognition's CPE and its evidence). */
  identified_by?: string | null;
}

/** Where a finding comes from: a risk rule, a CVE, or the device's zone policy. */
export type FindingKind = 'rule' | 'cve' | 'policy';
export const FINDING_KINDS: readonly FindingKind[] = ['rule', 'cve', 'policy'];

export interface RiskFinding {
  /** Stable across scans (CONTRACT §18): `rule:<id>:<port>`, `cve:<CVE id>:<port>`, `policy:<zone>:<port>`; `/udp` for UDP, `-` without port. */
  finding_key: string;
  kind: FindingKind;
  port: number | null;
  protocol: string | null;
  severity: FindingSeverity;
  /** Points this finding added to the device's score. */
  score: number;
  service: string | null;
  title: string;
  description: string;
  recommendation: string;
  cve_ids: string[];
  /** The CVE's CVSS base score (CVE findings); null otherwise. */
  cvss_score: number | null;
  /** Accepted (CONTRACT §17): listed, but counts toward neither level nor score (its `score` is 0). */
  accepted?: boolean;
}

export interface RiskAssessment {
  level: RiskLevel;
  score: number;
  summary: string;
  /** The worst finding's recommendation; null without findings. */
  top_recommendation: string | null;
  /** Worst first. */
  findings: RiskFinding[];
}

/** Points the worst finding adds (the bottom of its level's band). */
export const FIRST_FINDING_POINTS: Readonly<Record<FindingSeverity, number>> = { critical: 70, high: 40, medium: 15, low: 5 };
/** Points each further finding adds, up to the top of the level's band. */
export const FURTHER_FINDING_POINTS: Readonly<Record<FindingSeverity, number>> = { critical: 15, high: 8, medium: 4, low: 1 };

const NO_FINDINGS_SUMMARY = 'No risky services or known vulnerabilities found';
const DEFAULT_USER_RECOMMENDATION =
  'Check whether this service needs to be reachable; turn it off or allow it only from the machines that need it (host firewall or VLAN rules).';

/* ------------------------------------------------------------------------------------------------
 * Rule sets
 * --------------------------------------------------------------------------------------------- */

interface RuleHit {
  id: string;
  /** A template: copied into each assessment, its score is set there. */
  finding: RiskFinding;
  /** `rule id|port|protocol`: a device reports a rule once per port (built once, not per device). */
  dedupeKey: string;
}

/** Distinct port descriptions remembered per rule set (a network repeats the same services). */
const CACHE_LIMIT = 50_000;
/** Distinct CVE groups (and CVE variants) remembered before that memo starts over. */
const CVE_FINDING_LIMIT = 10_000;

/**
 * The effective rules (built-in plus user rules), indexed for matching. Build once, use for many
 * devices: it remembers the findings of each distinct port description it has seen.
 */
export class RiskRuleSet {
  readonly rules: readonly RiskRule[];
  private readonly byPort = new Map<number, RiskRule[]>();
  private readonly byService = new Map<string, RiskRule[]>();
  private readonly byPattern: RiskRule[] = [];
  private readonly serviceSets = new Map<RiskRule, ReadonlySet<string>>();
  private readonly cache = new TupleMemo<readonly RuleHit[]>(CACHE_LIMIT);

  constructor(rules: readonly RiskRule[]) {
    this.rules = rules;
    const add = <K>(map: Map<K, RiskRule[]>, key: K, rule: RiskRule) => {
      const list = map.get(key);
      if (!list) map.set(key, [rule]);
      else if (!list.includes(rule)) list.push(rule);
    };
    for (const rule of rules) {
      const names = new Set((rule.services ?? []).map((s) => s.toLowerCase()));
      this.serviceSets.set(rule, names);
      for (const name of names) add(this.byService, name, rule);
      for (const port of rule.ports ?? []) add(this.byPort, port, rule);
      if (rule.product || rule.extraInfo) this.byPattern.push(rule);
    }
  }

  /** @internal Rules that could match the port (the order does not matter: findings are sorted later). */
  candidates(view: PortView): RiskRule[] {
    const found: RiskRule[] = [];
    const add = (list: readonly RiskRule[] | undefined) => {
      if (list) for (const r of list) if (!found.includes(r)) found.push(r);
    };
    if (view.service !== null) add(this.byService.get(view.service));
    add(this.byPort.get(view.port));
    if (view.product !== null || view.extraInfo !== null) add(this.byPattern);
    return found;
  }

  /** @internal Rule findings (score not set) of a port; remembered by everything that decides the match. */
  findingsFor(port: RiskPortInput): readonly RuleHit[] {
    // What viewPort reads (text() reads null and '' alike).
    const key = [
      port.port,
      port.protocol,
      port.service ?? '',
      port.product ?? '',
      port.version ?? '',
      port.extra_info ?? '',
      port.cpe !== undefined && port.cpe.length > 0,
    ];
    let hits = this.cache.get(key);
    if (!hits) {
      const v = viewPort(port);
      hits = matchView(this, v).map(({ rule, how }) => {
        const finding = ruleFinding(rule, how, port, v);
        return { id: rule.id, finding, dedupeKey: `${rule.id}|${finding.port}|${finding.protocol}` };
      });
      this.cache.set(key, hits);
    }
    return hits;
  }

  /** @internal */
  servicesOf(rule: RiskRule): ReadonlySet<string> {
    return this.serviceSets.get(rule) ?? new Set();
  }
}

/** Built-in rules with the user's rules applied (see the module comment for the override rules). */
export function compileRiskRules(userRules: readonly RiskRuleSetting[] = []): RiskRuleSet {
  const rules = new Map<string, RiskRule>(BUILTIN_RISK_RULES.map((r) => [r.id, r]));
  for (const user of userRules) {
    if (user.enabled === false) {
      rules.delete(user.id);
      continue;
    }
    const base = rules.get(user.id);
    const service = user.service?.trim().toLowerCase();
    if (base) {
      const merged: RiskRule = {
        ...base,
        severity: user.severity ?? base.severity,
        title: user.title ?? base.title,
        description: user.description?.trim() || base.description,
        recommendation: user.recommendation?.trim() || base.recommendation,
      };
      if (user.port !== undefined) merged.ports = [user.port];
      if (service) {
        merged.services = [service];
        merged.product = undefined;
        merged.extraInfo = undefined;
      }
      if (user.protocol) merged.protocol = user.protocol;
      rules.set(user.id, merged);
    } else if (user.severity && user.title) {
      // validateSettings guarantees both for a rule that is not a built-in override.
      rules.set(user.id, {
        id: user.id,
        severity: user.severity,
        title: user.title,
        description: user.description?.trim() || `User-defined rule "${user.id}": ${user.title}.`,
        recommendation: user.recommendation?.trim() || DEFAULT_USER_RECOMMENDATION,
        ports: user.port !== undefined ? [user.port] : undefined,
        services: service ? [service] : undefined,
        protocol: user.protocol,
      });
    }
  }
  return new RiskRuleSet([...rules.values()]);
}

let builtinSet: RiskRuleSet | null = null;
const compiledCache = new WeakMap<readonly RiskRuleSetting[], RiskRuleSet>();

/**
 * A rule set from a compiled set or the user's rules. An array is compiled once and remembered by
 * identity: pass the settings' array as loaded, and a new array when the settings change.
 */
export function resolveRiskRules(rules: RiskRuleSet | readonly RiskRuleSetting[] = []): RiskRuleSet {
  if (rules instanceof RiskRuleSet) return rules;
  if (rules.length === 0) return (builtinSet ??= compileRiskRules([]));
  let set = compiledCache.get(rules);
  if (!set) {
    set = compileRiskRules(rules);
    compiledCache.set(rules, set);
  }
  return set;
}

/* ------------------------------------------------------------------------------------------------
 * Matching
 * --------------------------------------------------------------------------------------------- */

interface PortView extends RulePortView {
  /** The service was identified by the engine (not absent, not just the port-table guess). */
  identified: boolean;
  /** The service name as the engine reported it. */
  reportedService: string | null;
}

/** Names that mean "not identified". */
const UNIDENTIFIED = new Set(['unknown', 'tcpwrapped', 'ssl', 'tls']);

function text(value: string | null | undefined): string | null {
  const t = value?.trim();
  return t ? t : null;
}

function viewPort(p: RiskPortInput): PortView {
  let name = text(p.service)?.toLowerCase() ?? null;
  let tls = false;
  if (name?.startsWith('ssl/') || name?.startsWith('tls/')) {
    tls = true;
    name = text(name.slice(4));
  }
  if (name !== null && TLS_WRAPPED_NAMES.has(name)) tls = true;
  const service = name === null || UNIDENTIFIED.has(name) ? null : name;
  const product = text(p.product);
  const version = text(p.version);
  const extraInfo = text(p.extra_info);
  const protocol = p.protocol.toLowerCase();
  const bare = product === null && version === null && extraInfo === null && !(p.cpe && p.cpe.length > 0);
  // Only a name, and the one the port table gives for this port: that is a guess, not a detection
  // (nmap names UDP ports from its table: its UDP run has no version detection).
  const usual = protocol === 'tcp' ? wellKnownService(p.port) : protocol === 'udp' ? udpPortName(p.port) : null;
  const guess = bare && service !== null && usual?.toLowerCase() === service;
  return {
    port: p.port,
    protocol,
    service,
    product,
    version,
    extraInfo,
    tls,
    identified: service !== null && !guess,
    reportedService: text(p.service),
  };
}

/** How a rule matched: the detected service (or product), or the port number. */
export type MatchKind = 'service' | 'port';

function matchRule(set: RiskRuleSet, rule: RiskRule, v: PortView): MatchKind | null {
  if (rule.protocol && rule.protocol !== v.protocol) return null;
  const services = set.servicesOf(rule);
  let how: MatchKind | null = null;
  if (v.service !== null && services.has(v.service)) how = v.identified ? 'service' : 'port';
  else if (rule.product && v.product !== null && rule.product.test(v.product)) how = 'service';
  else if (rule.extraInfo && v.extraInfo !== null && rule.extraInfo.test(v.extraInfo)) how = 'service';
  else if (rule.ports?.includes(v.port)) {
    const identifiesService = services.size > 0 || rule.product !== undefined || rule.extraInfo !== undefined;
    if (!identifiesService || !v.identified) how = 'port';
    else if (
      v.service !== null &&
      rule.portNames?.includes(v.service) &&
      (v.product === null || (rule.portProduct !== undefined && rule.portProduct.test(v.product)))
    ) {
      how = 'port';
    }
  }
  if (how === null) return null;
  if (rule.transport) {
    const tls = v.tls || (rule.tlsPorts?.includes(v.port) ?? false);
    if ((rule.transport === 'plain') === tls) return null;
  }
  const checked: RulePortView = {
    port: v.port,
    protocol: v.protocol,
    service: v.service,
    product: v.product,
    version: v.version,
    extraInfo: v.extraInfo,
    tls: v.tls,
  };
  if (rule.when && !rule.when(checked, how)) return null;
  return how;
}

/** The rules an open port matches (generic rules dropped when a specific one matched), with how. */
export function matchPortRules(port: RiskPortInput, rules: RiskRuleSet | readonly RiskRuleSetting[] = []): { rule: RiskRule; how: MatchKind }[] {
  if (!isOpenPort(port)) return [];
  return matchView(resolveRiskRules(rules), viewPort(port));
}

function matchView(set: RiskRuleSet, v: PortView): { rule: RiskRule; how: MatchKind }[] {
  const matches: { rule: RiskRule; how: MatchKind }[] = [];
  for (const rule of set.candidates(v)) {
    const how = matchRule(set, rule, v);
    if (how) matches.push({ rule, how });
  }
  if (matches.some((m) => !m.rule.generic)) return matches.filter((m) => !m.rule.generic);
  return matches;
}

/** Severity of the worst rule an open port matches, or null (for change detection: a risky port opening). */
export function portRiskSeverity(port: RiskPortInput, rules: RiskRuleSet | readonly RiskRuleSetting[] = []): FindingSeverity | null {
  if (!isOpenPort(port)) return null;
  // The rule set's remembered hits are matchPortRules' rules (each finding has its rule's severity):
  // change detection asks this for every port of every new device, which repeat the same services.
  let worst: FindingSeverity | null = null;
  for (const { finding } of resolveRiskRules(rules).findingsFor(port)) {
    if (worst === null || SEVERITY_RANK[finding.severity] > SEVERITY_RANK[worst]) worst = finding.severity;
  }
  return worst;
}

function detected(v: PortView): string | null {
  if (v.product === null) return null;
  return v.version ? `${v.product} ${v.version}` : v.product;
}

function ruleFinding(rule: RiskRule, how: MatchKind, port: RiskPortInput, v: PortView): RiskFinding {
  const notes: string[] = [];
  const software = detected(v);
  if (how === 'port') {
    notes.push(
      v.identified && v.service !== null
        ? `Matched by port ${v.port}/${v.protocol}: the service answered only as generic "${v.service}".`
        : `Matched by port ${v.port}/${v.protocol} only: the service on it was not identified.`,
    );
  } else if (rule.ports && rule.ports.length > 0 && !rule.ports.includes(v.port)) {
    notes.push(`Found on non-standard port ${v.port}/${v.protocol}.`);
  }
  if (software) notes.push(`Detected: ${software}.`);
  return {
    finding_key: `rule:${rule.id}:${portLabel(port.port, v.protocol)}`,
    kind: 'rule',
    port: port.port,
    protocol: v.protocol,
    severity: rule.severity,
    score: 0,
    service: v.reportedService,
    title: rule.title,
    description: notes.length > 0 ? `${rule.description} ${notes.join(' ')}` : rule.description,
    recommendation: rule.recommendation,
    cve_ids: [],
    cvss_score: null,
  };
}

/* ------------------------------------------------------------------------------------------------
 * CVE findings
 * --------------------------------------------------------------------------------------------- */

/** A CVE's severity as a finding severity (NVD names, else from the CVSS score; unknown → medium). */
export function cveSeverity(cve: Pick<RiskCveInput, 'severity' | 'cvss_score'>): FindingSeverity {
  const s = cve.severity?.trim().toLowerCase();
  if (s === 'critical' || s === 'high' || s === 'medium' || s === 'low') return s;
  if (s === 'important') return 'high';
  if (s === 'moderate') return 'medium';
  if (s === 'none' || s === 'info' || s === 'informational') return 'low';
  return asFindingSeverity(severityFromCvss(cve.cvss_score));
}

function cveFindings(cves: readonly RiskCveInput[], ports: readonly RiskPortInput[]): RiskFinding[] {
  const groups = new Map<number | null, Map<string, RiskCveInput>>();
  for (const cve of cves) {
    const id = cve.id.trim();
    if (!id) continue;
    const key = typeof cve.port === 'number' ? cve.port : null;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = new Map<string, RiskCveInput>()));
    const seen = group.get(id);
    // The same CVE twice on a port (several CPEs): keep the stronger evidence.
    if (!seen || (seen.confidence !== 'confirmed' && cve.confidence === 'confirmed') || (!seen.kev && cve.kev)) {
      group.set(
        id,
        seen
          ? {
              ...cve,
              kev: Boolean(seen.kev || cve.kev),
              confidence: seen.confidence === 'confirmed' ? 'confirmed' : cve.confidence,
              remediation: cve.remediation ?? seen.remediation,
              matched_product: cve.matched_product ?? seen.matched_product,
              matched_version: cve.matched_version ?? seen.matched_version,
              identified_by: cve.identified_by ?? seen.identified_by,
            }
          : cve,
      );
    }
  }
  const findings: RiskFinding[] = [];
  for (const [portNumber, byId] of groups) {
    const port = portNumber === null ? undefined : pickPort(ports, portNumber);
    // One finding per CVE (CONTRACT §18). Devices running the same software repeat the same
    // CVEs: each finding's text is built once (see cveFindingMemo).
    for (const cve of byId.values()) {
      clearCveFindingMemoIfFull();
      const key = cveGroupKey([cve], portNumber, port);
      let template = cveFindingMemo.findings.get(key);
      if (!template) {
        template = cveFinding([cve], portNumber, port);
        cveFindingMemo.findings.set(key, template);
      }
      // A fresh copy: scoreFindings sets `score` on it, and the caller owns its arrays.
      findings.push({ ...template, cve_ids: template.cve_ids.slice() });
    }
  }
  return findings;
}

/**
 * CVE findings remembered by what they are built from. A network runs the same software on many
 * devices, so the same port with the same CVEs comes back device after device; building the text
 * (sorting, counting, numbers to text, sentences) was most of assessRisk's time. The memo is
 * process-wide: a finding depends on nothing but its key (cveGroupKey), whatever the rule set.
 *
 * The key is made for every port with CVEs of every device, so it must be cheap: each CVE stands in
 * it as a number for the fields of it that the finding reads (`cves`: by id, then a short list of
 * variants compared field by field). The numbers stay valid while `cves` is kept, so `findings` is
 * cleared with it (it may also start over on its own when full).
 */
const cveFindingMemo = { findings: new TupleMemo<RiskFinding>(CVE_FINDING_LIMIT), cves: new Map<string, CveVariant[]>(), variants: 0 };

/** A CVE as cveFinding reads it, apart from the product and version it matched (see cveGroupKey). */
interface CveVariant {
  severity: string;
  cvss_score: number | null | undefined;
  kev: boolean;
  confirmed: boolean;
  remediation: string | null | undefined;
  n: number;
}

function clearCveFindingMemoIfFull(): void {
  if (cveFindingMemo.variants < CVE_FINDING_LIMIT) return;
  cveFindingMemo.findings.clear();
  cveFindingMemo.cves.clear();
  cveFindingMemo.variants = 0;
}

/** The number of a CVE's variant: equal numbers, equal id, severity, score, KEV flag, confidence and remediation. */
function cveVariant(c: RiskCveInput): number {
  const kev = Boolean(c.kev);
  const confirmed = c.confidence === 'confirmed';
  let variants = cveFindingMemo.cves.get(c.id);
  if (!variants) cveFindingMemo.cves.set(c.id, (variants = []));
  for (const v of variants) {
    if (
      v.severity === c.severity &&
      Object.is(v.cvss_score, c.cvss_score) &&
      v.kev === kev &&
      v.confirmed === confirmed &&
      v.remediation === c.remediation
    ) {
      return v.n;
    }
  }
  const n = cveFindingMemo.variants++;
  variants.push({ severity: c.severity, cvss_score: c.cvss_score, kev, confirmed, remediation: c.remediation, n });
  return n;
}

/**
 * Everything cveFinding reads, in the group's order: the port's number and the fields of its
 * description it shows (null and '' read the same there), each CVE's variant number, and the
 * product and version each CVE matched, which are read only when the port names no product.
 * Two groups with the same key give the same finding.
 */
function cveGroupKey(group: readonly RiskCveInput[], portNumber: number | null, port: RiskPortInput | undefined): MemoKeyPart[] {
  const key: MemoKeyPart[] = port
    ? [portNumber, true, port.protocol, port.service ?? '', port.product ?? '', port.version ?? '']
    : [portNumber, false];
  const productShown = port !== undefined && text(port.product) !== null;
  for (const c of group) {
    key.push(cveVariant(c));
    if (!productShown) key.push(c.matched_product ?? '', c.matched_version ?? '');
    key.push(c.identified_by ?? '');
  }
  return key;
}

/** The finding of one port's CVEs (or the host's, `portNumber` null), with its score not set. */
function cveFinding(group: readonly RiskCveInput[], portNumber: number | null, port: RiskPortInput | undefined): RiskFinding {
  const rank = new Map(group.map((c) => [c, SEVERITY_RANK[cveSeverity(c)]]));
  const list = [...group].sort(
    (a, b) =>
      rank.get(b)! - rank.get(a)! ||
      Number(Boolean(b.kev)) - Number(Boolean(a.kev)) ||
      (b.cvss_score ?? -1) - (a.cvss_score ?? -1) ||
      a.id.localeCompare(b.id),
  );
  const worst = list[0];
  const severity = cveSeverity(worst);
  const v = port ? viewPort(port) : null;
  const protocol = port ? port.protocol.toLowerCase() : portNumber === null ? null : 'tcp';
  const named = list.find((c) => text(c.matched_product) !== null);
  const software =
    (v && detected(v)) ?? (named ? `${text(named.matched_product)}${text(named.matched_version) ? ` ${text(named.matched_version)}` : ''}` : null);
  const where = portNumber === null ? 'this device' : `port ${portNumber}/${protocol}`;
  const what = software ? `${software}${portNumber === null ? '' : ` on ${where}`}` : `the software on ${where}`;
  const kev = list.filter((c) => c.kev);
  const likely = list.filter((c) => c.confidence !== 'confirmed');
  const n = list.length;
  const identifiedBy = list.map((c) => text(c.identified_by)).find((t) => t !== null) ?? null;

  const shown = list.slice(0, 10).map((c) => {
    const parts: string[] = [cveSeverity(c)];
    if (typeof c.cvss_score === 'number') parts.push(`CVSS ${c.cvss_score.toFixed(1)}`);
    if (c.kev) parts.push('known exploited');
    if (c.confidence !== 'confirmed') parts.push('likely');
    return `${c.id} (${parts.join(', ')})`;
  });
  const description = [
    `${n === 1 ? 'A known vulnerability affects' : `${n} known vulnerabilities affect`} ${what}: ${shown.join(', ')}${n > 10 ? `, and ${n - 10} more` : ''}.`,
    kev.length > 0
      ? `${kev.length === 1 ? `${kev[0].id} is` : `${kev.length} of them are`} in CISA's Known Exploited Vulnerabilities catalogue: attackers are using ${kev.length === 1 ? 'it' : 'them'}.`
      : null,
    severity === 'critical' ? 'Critical severity: exploitation can give an attacker control of the service or the host.' : null,
    likely.length === 0
      ? 'Matched on the detected product and version.'
      : likely.length === n
        ? 'Matched on the product only (these entries affect every version, or the version could not be confirmed).'
        : `${likely.length} of them matched on the product only (the version could not be confirmed).`,
    identifiedBy ? `The product and version come from recognition, not from a port's service: ${identifiedBy}.` : null,
  ]
    .filter((s): s is string => s !== null)
    .join(' ');
  const fix = text(worst.remediation) ?? `Update ${what} to the latest release from the vendor or your distribution's security updates`;
  const recommendation = [
    kev.length > 0 ? `Do this first, ${kev.length === 1 ? 'this flaw is' : 'these flaws are'} exploited in the wild:` : null,
    /[.!]$/.test(fix) ? fix : `${fix}.`,
    portNumber !== null ? `Until it is updated, allow port ${portNumber} only from the machines that need it.` : null,
  ]
    .filter((s): s is string => s !== null)
    .join(' ');
  return {
    finding_key: `cve:${worst.id.trim()}:${portLabel(portNumber, protocol)}`,
    kind: 'cve',
    port: portNumber,
    protocol,
    severity,
    score: 0,
    service: v?.reportedService ?? null,
    title: `${n === 1 ? `${worst.id}` : `${n} known vulnerabilities`} in ${software ?? (portNumber === null ? 'this device' : `the service on port ${portNumber}`)}${kev.length > 0 ? ' (actively exploited)' : ''}`,
    description,
    recommendation,
    cve_ids: list.map((c) => c.id.trim()),
    cvss_score: typeof worst.cvss_score === 'number' ? worst.cvss_score : null,
  };
}

/** The scanned port a CVE's port number refers to: an open one first, TCP before UDP. */
function pickPort(ports: readonly RiskPortInput[], port: number): RiskPortInput | undefined {
  let best: RiskPortInput | undefined;
  for (const p of ports) {
    if (p.port !== port) continue;
    const rank = (x: RiskPortInput) => (isOpenPort(x) ? 2 : 0) + (x.protocol.toLowerCase() === 'tcp' ? 1 : 0);
    if (!best || rank(p) > rank(best)) best = p;
  }
  return best;
}

/* ------------------------------------------------------------------------------------------------
 * Assessment
 * --------------------------------------------------------------------------------------------- */

/** Worst first: severity, then port (host-level last), protocol, rule findings before CVE findings, title. */
function compareFindings(a: RiskFinding, b: RiskFinding): number {
  return (
    worstFirst(a.severity, b.severity) ||
    (a.port ?? 65_536) - (b.port ?? 65_536) ||
    (a.protocol ?? '').localeCompare(b.protocol ?? '') ||
    Number(a.cve_ids.length > 0) - Number(b.cve_ids.length > 0) ||
    a.title.localeCompare(b.title)
  );
}

/**
 * Scores ordered findings in place (see the module comment) and returns the level and total.
 * Accepted findings (their key in `accepted`) stay in the list, marked, with score 0, and count
 * toward neither level nor score.
 */
function scoreFindings(findings: RiskFinding[], accepted: ReadonlySet<string> = NONE_ACCEPTED): { level: RiskLevel; score: number } {
  findings.sort(compareFindings);
  let level: RiskLevel = 'none';
  let total = 0;
  let counted = 0;
  for (const f of findings) {
    if (accepted.has(f.finding_key)) {
      f.accepted = true;
      f.score = 0;
      continue;
    }
    delete f.accepted;
    if (counted === 0) level = f.severity;
    const cap = RISK_SCORE_BANDS[level].max;
    const points = counted === 0 ? FIRST_FINDING_POINTS[f.severity] : FURTHER_FINDING_POINTS[f.severity];
    f.score = Math.max(0, Math.min(points, cap - total));
    total += f.score;
    counted++;
  }
  return { level, score: total };
}

const NONE_ACCEPTED: ReadonlySet<string> = new Set();

/**
 * Level, score, summary and top recommendation of findings already built (a stored assessment),
 * with the accepted ones left out of the count: what accepting a finding, or its acceptance
 * ending, changes without assessing the device again. Sorts and scores `findings` in place.
 */
export function rescoreFindings(findings: RiskFinding[], accepted: ReadonlySet<string>): RiskAssessment {
  const { level, score } = scoreFindings(findings, accepted);
  const open = findings.filter((f) => !f.accepted);
  const acceptedCount = findings.length - open.length;
  return {
    level,
    score,
    summary:
      acceptedCount === 0
        ? summarizeFindings(open)
        : `${open.length === 0 ? 'No open findings' : summarizeFindings(open)} (${acceptedCount} accepted)`,
    top_recommendation: open[0]?.recommendation ?? null,
    findings,
  };
}

/** One line: "3 findings: Telnet remote login exposed (critical), FTP (unencrypted file transfer) (medium, ×2)". */
export function summarizeFindings(findings: readonly RiskFinding[]): string {
  if (findings.length === 0) return NO_FINDINGS_SUMMARY;
  const groups: { title: string; severity: FindingSeverity; count: number }[] = [];
  for (const f of findings) {
    const g = groups.find((x) => x.title === f.title && x.severity === f.severity);
    if (g) g.count += 1;
    else groups.push({ title: f.title, severity: f.severity, count: 1 });
  }
  const shown = groups.slice(0, 3).map((g) => `${g.title} (${g.severity}${g.count > 1 ? `, ×${g.count}` : ''})`);
  const rest = groups.length - shown.length;
  const n = findings.length;
  return `${n} finding${n === 1 ? '' : 's'}: ${shown.join(', ')}${rest > 0 ? `, and ${rest} more` : ''}`;
}

/** What besides ports, CVEs and rules a device's assessment depends on. */
export interface AssessOptions {
  /** The device's zone and that zone's policy (core/policies.ts): its breaches are findings. */
  policy?: { zone: string; policy: ZonePolicy } | null;
  /** Keys of the device's findings accepted now: listed, not counted. */
  accepted?: ReadonlySet<string>;
}

/**
 * A device's risk from its ports (only open ones count), its CVE matches, the rules (a compiled
 * `RiskRuleSet`, or the user's `scanning.risk_rules`, compiled once per array), its zone's policy
 * and its accepted findings.
 */
export function assessRisk(
  ports: readonly RiskPortInput[],
  cves: readonly RiskCveInput[] = [],
  rules: RiskRuleSet | readonly RiskRuleSetting[] = [],
  options: AssessOptions = {},
): RiskAssessment {
  const set = resolveRiskRules(rules);
  const findings: RiskFinding[] = [];
  const seen = new Set<string>();
  for (const port of ports) {
    if (!isOpenPort(port)) continue;
    for (const { finding, dedupeKey } of set.findingsFor(port)) {
      if (seen.has(dedupeKey)) continue;
      seen.add(dedupeKey);
      findings.push({ ...finding, cve_ids: [] });
    }
  }
  findings.push(...cveFindings(cves, ports));
  if (options.policy) findings.push(...policyFindings(options.policy.zone, options.policy.policy, ports));
  return rescoreFindings(findings, options.accepted ?? NONE_ACCEPTED);
}

/** The findings of a zone policy's breaches: one per open port that breaks it, with the zone's severity. */
export function policyFindings(zone: string, policy: ZonePolicy, ports: readonly RiskPortInput[]): RiskFinding[] {
  return policyBreaches(policy, ports).map((b) => ({
    finding_key: `policy:${zone}:${portLabel(b.port, b.protocol)}`,
    kind: 'policy' as const,
    port: b.port,
    protocol: b.protocol,
    severity: policy.severity,
    score: 0,
    service: b.service,
    title: `Zone policy of ${zone} broken: port ${portLabel(b.port, b.protocol)} open`,
    description: `Devices in the ${zone} zone must not expose this: ${b.reasons.join('; ')}.`,
    recommendation: `Close port ${portLabel(b.port, b.protocol)} on this device, move the device to another zone, or change the ${zone} zone's policy.`,
    cve_ids: [],
    cvss_score: null,
  }));
}
