/**
 * The matcher: which CVEs of an indexed dataset the open ports of a scan are exposed to, and how
 * sure that is. See `index.ts` for the confidence rules.
 */
import { isOpenPort, type ScannedPort } from '../model.js';
import { TupleMemo } from '../memo.js';
import { severityFromCvss, type Severity } from '../severity.js';
import { compileRange, distroIn, parseVersionSpec, specInRange, type CompiledRange, type VersionSpec } from '../versions.js';
import type { CveAffected, CveEntry } from './entry.js';
import { parseCpe } from './cpe.js';
import { WINDOWS_KEY, canonicalProductKey, identify, isWindowsHost, labelFor, type Identity } from './products.js';
import { windowsReleasesIn } from './windows.js';

export type CveConfidence = 'confirmed' | 'likely';

/** A CVE found on a port: the device's `cves` record of the API (see /openapi.json) plus what explains it. */
export interface CveMatch {
  id: string;
  severity: Severity;
  cvss_score: number | null;
  description: string;
  remediation: string | null;
  references: string[];
  confidence: CveConfidence;
  /** The port whose software matched; null for a match on the device itself (a recognised OS or firmware CPE). */
  port: number | null;
  matched_product: string | null;
  matched_version: string | null;
  /** The port's protocol; null with `port`. */
  protocol: 'tcp' | 'udp' | null;
  cvss_vector: string | null;
  kev: boolean;
  /** Why the confidence is what it is, in words. */
  confidence_reason: string;
  /**
   * Where the product and version came from when not from a port's own service: recognition's
   * CPE and the evidence that produced it (absent: the port's service said it).
   */
  identified_by?: string | null;
}

/**
 * A CPE recognition produced for the device (core/recognition.ts, from the probes' answers), with
 * the evidence that produced it: `source` as the identity record names it (`snmp`, `ssdp`, …) and
 * the sentence a person reads (`UPnP SERVER "Linux UPnP/1.1 MiniUPnPd/2.1" matches MiniUPnPd`).
 */
export interface HostCpe {
  cpe: string;
  source: string;
  detail: string;
}

/** What the host tells beyond its ports (optional). */
export interface HostContext {
  os_name?: string | null;
  /**
   * Recognition's CPEs. One with a version is matched where no open port already says that
   * product with a version: on the port whose service names the product without a version, else
   * on the device itself. Such a match is `likely` at most (the version is what the device says
   * of itself, not the service's own answer), and says where the CPE came from (`identified_by`).
   */
  cpes?: readonly HostCpe[];
}

/** One affected product of an entry, with its version range compiled once. */
interface IndexedAffected {
  entry: CveEntry;
  affected: CveAffected;
  range: CompiledRange | null;
}

interface MatchTemplate {
  entry: CveEntry;
  confidence: CveConfidence;
  reason: string;
  remediation: string | null;
}

export interface CveIndex {
  readonly size: number;
  readonly entries: ReadonlyMap<string, CveEntry>;
  /** Affected entries by canonical product key. */
  readonly byProduct: ReadonlyMap<string, readonly IndexedAffected[]>;
  /** Entries whose ranges could not be read (skipped, with the reason). */
  readonly rejected: readonly { id: string; reason: string }[];
  /** Memo of match results by product, version and evidence (many devices run the same software). */
  readonly memo: Map<string, MatchTemplate[]>;
  /** Memo of resolved port descriptions (service, product, version, extra info's distribution, CPEs, host OS). */
  readonly portMemo: TupleMemo<ResolvedMatch[]>;
}

const MEMO_LIMIT = 100_000;

/** Indexes a dataset by product once; reuse the index for every scan. */
export function buildCveIndex(entries: Iterable<CveEntry>): CveIndex {
  const byId = new Map<string, CveEntry>();
  for (const entry of entries) byId.set(entry.id, entry);
  const byProduct = new Map<string, IndexedAffected[]>();
  const rejected: { id: string; reason: string }[] = [];
  for (const entry of byId.values()) {
    for (const affected of entry.affected) {
      let range: CompiledRange | null = null;
      try {
        if (!affected.versionIndependent) range = compileRange(affected);
      } catch (err) {
        rejected.push({ id: entry.id, reason: `${affected.cpe}: ${(err as Error).message}` });
        continue;
      }
      const key = canonicalProductKey(affected.cpe);
      const list = byProduct.get(key);
      const item = { entry, affected, range };
      if (list) list.push(item);
      else byProduct.set(key, [item]);
    }
  }
  return { size: byId.size, entries: byId, byProduct, rejected, memo: new Map(), portMemo: new TupleMemo(MEMO_LIMIT) };
}

function serviceName(service: string | null): string {
  return (service ?? '').toLowerCase().replace(/^(?:ssl|tls)\//, '');
}

const OS_DISTRO_CPE =
  /cpe:\/o:(?:canonical|debian|redhat|centos|fedoraproject|suse|opensuse|novell|alpinelinux|amazon|freebsd|netbsd|rocky|almalinux|raspberrypi|gentoo|mageia)\b/i;

/** Which distribution packaged this service, from the version suffix, nmap's extra info or an OS CPE. */
function distroEvidence(port: ScannedPort, version: string | null, extraDistro: string | null): string | null {
  const fromVersion = version ? (version.match(/^\s*[vV]?\d[0-9A-Za-z.]*(.*)$/s)?.[1] ?? '') : '';
  const named = distroIn(fromVersion) ?? extraDistro;
  if (named) return named;
  const os = port.cpe.find((c) => OS_DISTRO_CPE.test(c));
  if (!os) return null;
  return distroIn(os.replace(/_/g, ' ')) ?? (/canonical/i.test(os) ? 'Ubuntu' : 'the operating system vendor');
}

/**
 * The CVEs each port is exposed to. `index` is built once by buildCveIndex (an array is indexed
 * on the fly, which is slow for repeated calls). Ports that are not open are skipped. Each CVE is
 * reported once per port, with the highest confidence any affected entry gives.
 */
export function matchCves(ports: readonly ScannedPort[], index: CveIndex | readonly CveEntry[], host: HostContext = {}): CveMatch[] {
  const idx = isIndex(index) ? index : buildCveIndex(index);
  const out: CveMatch[] = [];
  const os = host.os_name ?? '';
  for (const port of ports) {
    if (!isOpenPort(port)) continue;
    // Many devices run identical software: resolve each distinct port description once.
    // nmap's extra info counts only for the distribution it names (host names, workgroups vary per device).
    const extraDistro = distroIn(port.extra_info);
    // Everything resolvePort reads, as it is: a version '' and none resolve differently (identify
    // falls back to the CPE's version only for none), so the memo must not take one for the other.
    const signature = [port.service, port.product, port.version, extraDistro, os, ...port.cpe];
    let resolved = idx.portMemo.get(signature);
    if (!resolved) {
      resolved = resolvePort(port, idx, os, extraDistro);
      idx.portMemo.set(signature, resolved);
    }
    for (const r of resolved) out.push(toMatch(r.template, port, r.identity));
  }
  if (host.cpes && host.cpes.length > 0) out.push(...matchHostCpes(ports, idx, os, host.cpes, out));
  return out;
}

/** Source words for `identified_by` (the evidence `source` of core/fingerprints.ts). */
const SOURCE_WORDS: Readonly<Record<string, string>> = {
  snmp: 'SNMP',
  ssdp: 'UPnP',
  mdns: 'mDNS',
  netbios: 'NetBIOS',
  http_title: 'the HTTP page title',
  http_server: 'the HTTP Server header',
  tls: 'the TLS certificate',
  ssh: 'the SSH banner',
  nmap_os: "nmap's OS detection",
  oui: 'the MAC vendor',
  ports: 'the open ports',
  hostname: 'the host name',
};

/**
 * The CVEs recognition's versioned CPEs add (see HostContext.cpes): a product a port already says
 * with a version is left to that port; a CVE already matched on the device is not repeated.
 */
function matchHostCpes(ports: readonly ScannedPort[], idx: CveIndex, os: string, cpes: readonly HostCpe[], already: readonly CveMatch[]): CveMatch[] {
  const out: CveMatch[] = [];
  const seen = new Set(already.map((m) => m.id));
  const done = new Set<string>();
  for (const hostCpe of cpes) {
    const cpe = parseCpe(hostCpe.cpe);
    if (!cpe || !cpe.version) continue;
    const key = canonicalProductKey(`${cpe.vendor}:${cpe.product}`);
    if (key === WINDOWS_KEY || done.has(key)) continue;
    const candidates = idx.byProduct.get(key);
    if (!candidates) continue;
    done.add(key);
    // Where a port already names the product: with a version, the port's reading stands; without, the match goes on that port.
    let port: ScannedPort | null = null;
    let versioned = false;
    for (const p of ports) {
      if (!isOpenPort(p)) continue;
      const own = identify(p, serviceName(p.service), isWindowsHost(p, os)).find((i) => i.key === key);
      if (!own) continue;
      if (own.version) versioned = true;
      else port ??= p;
    }
    if (versioned) continue;
    const version = cpe.version.replace(/_/g, ' ');
    const identity: Identity = { key, version };
    const memoKey = `${key}\u0000${version}\u0000\u0000\u0000`;
    let templates = idx.memo.get(memoKey);
    if (!templates) {
      templates = evaluate(candidates, identity, '', null, new Set());
      if (idx.memo.size >= MEMO_LIMIT) idx.memo.clear();
      idx.memo.set(memoKey, templates);
    }
    const words = SOURCE_WORDS[hostCpe.source] ?? hostCpe.source;
    const identifiedBy = `${hostCpe.cpe}, recognised from ${words}: ${hostCpe.detail}`;
    for (const template of templates) {
      if (seen.has(template.entry.id)) continue;
      seen.add(template.entry.id);
      const reason =
        `The version comes from recognition (${words}), not from the service's own answer: ` +
        (template.confidence === 'confirmed' ? 'it is in the affected range, but check it on the device.' : template.reason);
      out.push({
        ...toMatch({ ...template, confidence: 'likely', reason }, port, identity),
        matched_product: port?.product ?? labelFor(key),
        matched_version: version,
        identified_by: identifiedBy,
      });
    }
  }
  return out;
}

interface ResolvedMatch {
  template: MatchTemplate;
  identity: Identity;
}

/** The CVEs one port description matches, each once, with the highest confidence found. */
function resolvePort(port: ScannedPort, idx: CveIndex, os: string, extraDistro: string | null): ResolvedMatch[] {
  const service = serviceName(port.service);
  const identities = identify(port, service, isWindowsHost(port, os));
  const out: ResolvedMatch[] = [];
  const seen = new Map<string, number>();
  for (const identity of identities) {
    const candidates = idx.byProduct.get(identity.key);
    if (!candidates) continue;
    const isWindows = identity.key === WINDOWS_KEY;
    const distro = isWindows ? null : distroEvidence(port, identity.version, extraDistro);
    const windows = isWindows ? windowsReleasesIn([port.product, os, ...port.cpe]) : new Set<string>();
    const memoKey = `${identity.key}\u0000${identity.version ?? ''}\u0000${service}\u0000${distro ?? ''}\u0000${[...windows].sort().join(',')}`;
    let templates = idx.memo.get(memoKey);
    if (!templates) {
      templates = evaluate(candidates, identity, service, distro, windows);
      if (idx.memo.size >= MEMO_LIMIT) idx.memo.clear();
      idx.memo.set(memoKey, templates);
    }
    for (const template of templates) {
      const at = seen.get(template.entry.id);
      if (at !== undefined) {
        if (out[at].template.confidence === 'likely' && template.confidence === 'confirmed') out[at] = { template, identity };
        continue;
      }
      seen.set(template.entry.id, out.length);
      out.push({ template, identity });
    }
  }
  return out;
}

function isIndex(value: CveIndex | readonly CveEntry[]): value is CveIndex {
  return !Array.isArray(value) && (value as CveIndex).byProduct instanceof Map;
}

const versionSpecs = new Map<string, VersionSpec>();

function specOf(version: string | null): VersionSpec {
  if (!version) return { kind: 'unknown' };
  let spec = versionSpecs.get(version);
  if (!spec) {
    spec = parseVersionSpec(version);
    if (versionSpecs.size > 50_000) versionSpecs.clear();
    versionSpecs.set(version, spec);
  }
  return spec;
}

function evaluate(
  candidates: readonly IndexedAffected[],
  identity: Identity,
  service: string,
  distro: string | null,
  windows: Set<string>,
): MatchTemplate[] {
  const best = new Map<string, MatchTemplate>();
  const spec = specOf(identity.version);
  for (const { entry, affected, range } of candidates) {
    if (affected.services && !affected.services.includes(service)) continue;
    if (affected.requiresDistro && !(distro && affected.requiresDistro.includes(distro.toLowerCase()))) continue;
    if (affected.windowsReleases && windows.size > 0 && !affected.windowsReleases.some((r) => windows.has(r))) continue;
    let confidence: CveConfidence;
    let reason: string;
    let note: string | null = null;
    if (affected.versionIndependent || !range) {
      confidence = 'likely';
      reason = affected.requiresDistro
        ? `The product matches and the scan shows a package from ${distro}, which this CVE concerns; the scan cannot see whether the fix is installed.`
        : 'The product matches a version-independent entry: the scan cannot see the patch level, so check that the fix is installed.';
    } else {
      if (specInRange(spec, range) !== 'yes') continue;
      if (distro) {
        confidence = 'likely';
        reason = `The upstream version is in the affected range, but the service is packaged by ${distro}: distributions backport security fixes without changing the upstream version.`;
        note = `Note: this service is packaged by ${distro}, which may have backported the fix without changing the version; check the installed package against ${distro}'s security advisory before upgrading.`;
      } else if (affected.maxConfidence === 'likely') {
        confidence = 'likely';
        reason = 'The version is in the affected range, but it does not reveal the patch level: check that the update is installed.';
      } else {
        confidence = 'confirmed';
        reason = 'The product and version match an affected range.';
      }
    }
    const previous = best.get(entry.id);
    if (previous && (previous.confidence === 'confirmed' || confidence === 'likely')) continue;
    const remediation = note ? [entry.remediation, note].filter(Boolean).join(' ') : entry.remediation;
    best.set(entry.id, { entry, confidence, reason, remediation });
  }
  return [...best.values()];
}

function toMatch(t: MatchTemplate, port: ScannedPort | null, identity: Identity): CveMatch {
  const e = t.entry;
  return {
    id: e.id,
    severity: severityFromCvss(e.cvss_score),
    cvss_score: e.cvss_score,
    description: e.description,
    remediation: t.remediation,
    references: e.references,
    confidence: t.confidence,
    port: port?.port ?? null,
    matched_product: port?.product ?? labelFor(identity.key),
    matched_version: identity.key === WINDOWS_KEY ? (port?.version ?? null) : identity.version,
    protocol: port?.protocol ?? null,
    cvss_vector: e.cvss_vector,
    kev: e.kev,
    confidence_reason: t.reason,
  };
}

/** Orders matches for display: by port (the device's own last), then most severe first (known exploited first on ties), then id. */
export function sortCveMatches(matches: CveMatch[]): CveMatch[] {
  return matches.sort(
    (a, b) =>
      (a.port ?? Number.MAX_SAFE_INTEGER) - (b.port ?? Number.MAX_SAFE_INTEGER) ||
      (b.cvss_score ?? -1) - (a.cvss_score ?? -1) ||
      Number(b.kev) - Number(a.kev) ||
      a.id.localeCompare(b.id),
  );
}
