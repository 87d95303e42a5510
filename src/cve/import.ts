/**
 * Refreshing the CVE data without a new release: NVD's JSON 2.0 feed files (and API 2.0 answers)
 * and CISA's Known Exploited Vulnerabilities catalog, converted to the dataset's format and stored
 * in `<data dir>/cve-imported.json`, which the loader merges over the shipped dataset.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { gunzipSync } from 'node:zlib';
import {
  CVE_ID_PATTERN,
  PRODUCT_ALIASES,
  canonicalProductKey,
  cvssBaseScore,
  splitCpe23,
  validateCveEntry,
  type CveAffected,
  type CveEntry,
} from '../core/cve/index.js';
import { compileRange, type VersionRange } from '../core/versions.js';
import {
  emptyImportedFile,
  importedFilePath,
  loadShippedCves,
  mergeCveData,
  readImportedFile,
  SHIPPED_CVE_DIR,
  type ImportedCveFile,
  type KevRecord,
} from './dataset.js';
import { isObject } from '../util/is-object.js';
import { NetwardenError } from '../util/errors.js';

export class FeedFormatError extends NetwardenError {
  readonly code = 'NW_CVE_FEED_INVALID';
}

export type FeedKind = 'nvd' | 'kev';

const NEITHER =
  'neither an NVD JSON 2.0 feed ({"format":"NVD_CVE","vulnerabilities":[{"cve":{…}}]}) nor CISA\'s known_exploited_vulnerabilities.json ({"vulnerabilities":[{"cveID":…}]})';

/** Which feed a parsed JSON document is, or null when it is neither. */
export function detectFeedType(json: unknown): FeedKind | null {
  if (!isObject(json)) return null;
  if (typeof json.id === 'string' && CVE_ID_PATTERN.test(json.id) && ('configurations' in json || 'descriptions' in json)) return 'nvd';
  const list = json.vulnerabilities;
  if (!Array.isArray(list)) return null;
  if (json.format === 'NVD_CVE') return 'nvd';
  if (typeof json.catalogVersion === 'string' || (typeof json.title === 'string' && /known exploited/i.test(json.title))) return 'kev';
  const first = list.find(isObject);
  if (!first) return null;
  if (isObject(first.cve) && typeof first.cve.id === 'string') return 'nvd';
  if (typeof first.cveID === 'string') return 'kev';
  return null;
}

/* ------------------------------------------------------------------------------------------------
 * NVD JSON 2.0
 * --------------------------------------------------------------------------------------------- */

export interface NvdImportResult {
  kind: 'nvd';
  /** CVE records in the feed. */
  read: number;
  /** Converted records; `affected` is empty when NVD names no application CPE (operating systems only, or not analysed yet). */
  records: CveEntry[];
  /** Records left out: rejected CVEs and malformed records. */
  skipped: { id: string; reason: string }[];
  /** Affected-product lines dropped (unreadable versions). */
  warnings: string[];
}

/**
 * Converts an NVD JSON 2.0 feed file (`nvdcve-2.0-2024.json`), an NVD API 2.0 answer, or a single
 * NVD CVE object to dataset records. Throws FeedFormatError when the document is not one of those.
 */
export function importNvdFeed(json: unknown): NvdImportResult {
  if (isObject(json) && Array.isArray(json.CVE_Items)) {
    throw new FeedFormatError('this is a retired NVD 1.1 feed (CVE_Items); download the JSON 2.0 feed (nvdcve-2.0-*.json) instead');
  }
  let items: unknown[];
  if (isObject(json) && typeof json.id === 'string' && CVE_ID_PATTERN.test(json.id)) items = [{ cve: json }];
  else if (isObject(json) && Array.isArray(json.vulnerabilities) && detectFeedType(json) === 'nvd') items = json.vulnerabilities;
  else throw new FeedFormatError(`not an NVD JSON 2.0 feed: ${NEITHER}`);

  const result: NvdImportResult = { kind: 'nvd', read: 0, records: [], skipped: [], warnings: [] };
  for (const item of items) {
    result.read++;
    const cve = isObject(item) && isObject(item.cve) ? item.cve : null;
    const id = cve && typeof cve.id === 'string' ? cve.id : null;
    if (!cve || !id || !CVE_ID_PATTERN.test(id)) {
      result.skipped.push({ id: id ?? `#${result.read}`, reason: 'no valid CVE id' });
      continue;
    }
    const converted = convertNvdCve(id, cve, result.warnings);
    if ('skip' in converted) {
      result.skipped.push({ id, reason: converted.skip });
      continue;
    }
    const problems = validateCveEntry(converted.entry, { allowEmptyAffected: true, checkScore: false });
    if (problems.length) result.skipped.push({ id, reason: problems.join('; ') });
    else result.records.push(converted.entry);
  }
  return result;
}

function convertNvdCve(id: string, cve: Record<string, unknown>, warnings: string[]): { entry: CveEntry } | { skip: string } {
  const descriptions = Array.isArray(cve.descriptions) ? cve.descriptions.filter(isObject) : [];
  const text = descriptions.find((d) => d.lang === 'en')?.value ?? descriptions[0]?.value;
  const description = typeof text === 'string' ? text.trim() : '';
  if (cve.vulnStatus === 'Rejected' || /^\*\* ?REJECT/i.test(description)) return { skip: 'rejected' };

  const metric = pickMetric(cve.metrics);
  const affected = nvdAffected(id, cve.configurations, warnings);
  const nvdLink = `https://nvd.nist.gov/vuln/detail/${id}`;
  const refs = (Array.isArray(cve.references) ? cve.references : [])
    .filter(isObject)
    .map((r) => r.url)
    .filter((u): u is string => typeof u === 'string' && /^https?:\/\//.test(u));
  const kev = typeof cve.cisaExploitAdd === 'string' && cve.cisaExploitAdd !== '';
  const action = typeof cve.cisaRequiredAction === 'string' && cve.cisaRequiredAction ? cve.cisaRequiredAction : null;
  return {
    entry: {
      id,
      cvss_score: metric?.score ?? null,
      cvss_vector: metric?.vector ?? null,
      // The feed's own version string; validateCveEntry refuses one the dataset does not know.
      cvss_version: (metric?.version ?? null) as CveEntry['cvss_version'],
      description: description || `${id} (no description in the feed)`,
      remediation: remediationFor(affected) ?? action,
      references: [nvdLink, ...new Set(refs.filter((u) => u !== nvdLink))].slice(0, 10),
      kev,
      published: typeof cve.published === 'string' ? cve.published.slice(0, 10) : null,
      last_modified: typeof cve.lastModified === 'string' ? cve.lastModified : null,
      affected,
    },
  };
}

interface Metric {
  score: number;
  vector: string;
  version: string;
}

/** CVSS v3.1, else v3.0, else v4.0, else v2; NVD's own (Primary) assessment before a CNA's. */
function pickMetric(metrics: unknown): Metric | null {
  if (!isObject(metrics)) return null;
  for (const key of ['cvssMetricV31', 'cvssMetricV30', 'cvssMetricV40', 'cvssMetricV2']) {
    const list = Array.isArray(metrics[key]) ? (metrics[key] as unknown[]).filter(isObject) : [];
    const chosen = list.find((m) => m.type === 'Primary') ?? list[0];
    const data = chosen && isObject(chosen.cvssData) ? chosen.cvssData : null;
    if (!data || typeof data.vectorString !== 'string') continue;
    const vector = data.vectorString;
    const score = typeof data.baseScore === 'number' ? data.baseScore : cvssBaseScore(vector);
    if (score === null || score < 0 || score > 10) continue;
    const version =
      typeof data.version === 'string'
        ? data.version
        : key === 'cvssMetricV2'
          ? '2.0'
          : key.endsWith('31')
            ? '3.1'
            : key.endsWith('30')
              ? '3.0'
              : '4.0';
    return { score, vector, version: version === '2' ? '2.0' : version };
  }
  return null;
}

/** The vulnerable application CPEs of NVD's configurations, as dataset affected entries. */
function nvdAffected(id: string, configurations: unknown, warnings: string[]): CveAffected[] {
  const out: CveAffected[] = [];
  const seen = new Set<string>();
  const visit = (node: unknown): void => {
    if (!isObject(node)) return;
    for (const m of Array.isArray(node.cpeMatch) ? node.cpeMatch : []) {
      if (!isObject(m) || m.vulnerable !== true || typeof m.criteria !== 'string') continue;
      const a = affectedFromCpeMatch(m);
      if (!a) continue;
      try {
        compileRange(a);
      } catch (err) {
        warnings.push(`${id}: ${m.criteria}: ${(err as Error).message}`);
        continue;
      }
      const key = JSON.stringify(a);
      if (!seen.has(key)) {
        seen.add(key);
        out.push(a);
      }
    }
    for (const child of Array.isArray(node.children) ? node.children : []) visit(child);
    for (const child of Array.isArray(node.nodes) ? node.nodes : []) visit(child);
  };
  for (const config of Array.isArray(configurations) ? configurations : []) visit(config);
  return out;
}

function affectedFromCpeMatch(m: Record<string, unknown>): CveAffected | null {
  const criteria = String(m.criteria);
  if (!/^cpe:2\.3:/i.test(criteria)) return null;
  const [part, vendor, product, version = '*', update = '*'] = splitCpe23(criteria.slice(8));
  // Operating systems and hardware cannot be recognised from a port's service: left out.
  if (part !== 'a' || !vendor || !product) return null;
  const cpe = `${vendor}:${product}`.toLowerCase();
  const bounds: VersionRange = {};
  for (const f of ['versionStartIncluding', 'versionStartExcluding', 'versionEndIncluding', 'versionEndExcluding'] as const) {
    if (typeof m[f] === 'string' && m[f] !== '') bounds[f] = m[f];
  }
  if (version !== '*' && version !== '-') {
    // NVD splits `8.5p1` into version 8.5 and update p1, `1.3.5a` into 1.3.5 and a.
    const exact = update !== '*' && update !== '-' && /^[a-z]+\d*$/i.test(update) ? `${version}${update}` : version;
    return { cpe, version: exact };
  }
  if (version === '-') return null;
  // `openssh:*:p2` with versionEndIncluding 7.2 means "up to 7.2p2".
  if (update !== '*' && update !== '-' && /^[a-z]+\d*$/i.test(update) && bounds.versionEndIncluding) {
    bounds.versionEndIncluding += update;
  }
  return { cpe, ...bounds };
}

function labelOf(cpe: string): string {
  const key = canonicalProductKey(cpe);
  const alias = PRODUCT_ALIASES.find((a) => a.id === key);
  if (alias) return alias.label;
  const product = cpe.split(':')[1] ?? cpe;
  return product.replace(/_/g, ' ');
}

/** "Upgrade OpenSSH to 9.8p1 or later." from the ranges' upper bounds. */
export function remediationFor(affected: readonly CveAffected[]): string | null {
  const byProduct = new Map<string, { fixed: Set<string>; after: Set<string>; exact: boolean }>();
  for (const a of affected) {
    const label = labelOf(a.cpe);
    const p = byProduct.get(label) ?? { fixed: new Set<string>(), after: new Set<string>(), exact: false };
    if (a.versionEndExcluding) p.fixed.add(a.versionEndExcluding);
    else if (a.versionEndIncluding) p.after.add(a.versionEndIncluding);
    else p.exact = true;
    byProduct.set(label, p);
  }
  const parts: string[] = [];
  for (const [label, p] of byProduct) {
    if (p.fixed.size) {
      const list = [...p.fixed];
      parts.push(
        `Upgrade ${label} to ${list.length === 1 ? `${list[0]} or later` : `a fixed release (${list.join(', ')} or later in the matching branch)`}.`,
      );
    } else if (p.after.size) {
      parts.push(`Upgrade ${label} to a release newer than ${[...p.after].join(' / ')}.`);
    } else if (p.exact) {
      parts.push(`Upgrade ${label} to a current release that is not affected.`);
    }
  }
  return parts.length ? parts.join(' ') : null;
}

/* ------------------------------------------------------------------------------------------------
 * CISA KEV
 * --------------------------------------------------------------------------------------------- */

export interface KevImportResult {
  kind: 'kev';
  catalogVersion: string | null;
  read: number;
  entries: Map<string, KevRecord>;
  skipped: { id: string; reason: string }[];
}

/** Reads CISA's known_exploited_vulnerabilities.json. Throws FeedFormatError when it is not that catalog. */
export function importKev(json: unknown): KevImportResult {
  if (!isObject(json) || !Array.isArray(json.vulnerabilities) || detectFeedType(json) !== 'kev') {
    throw new FeedFormatError(`not CISA's KEV catalog: ${NEITHER}`);
  }
  const result: KevImportResult = {
    kind: 'kev',
    catalogVersion: typeof json.catalogVersion === 'string' ? json.catalogVersion : null,
    read: 0,
    entries: new Map(),
    skipped: [],
  };
  const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);
  for (const item of json.vulnerabilities) {
    result.read++;
    const id = isObject(item) ? str(item.cveID) : null;
    if (!isObject(item) || !id || !CVE_ID_PATTERN.test(id)) {
      result.skipped.push({ id: id ?? `#${result.read}`, reason: 'no valid cveID' });
      continue;
    }
    result.entries.set(id, {
      date_added: str(item.dateAdded),
      due_date: str(item.dueDate),
      required_action: str(item.requiredAction),
      vendor_project: str(item.vendorProject),
      product: str(item.product),
      vulnerability_name: str(item.vulnerabilityName),
      known_ransomware_campaign_use: str(item.knownRansomwareCampaignUse),
    });
  }
  return result;
}

/* ------------------------------------------------------------------------------------------------
 * Applying imports to the stored file
 * --------------------------------------------------------------------------------------------- */

export interface FileImportReport {
  file: string;
  kind: FeedKind;
  /** NVD: records read; KEV: catalog entries read. */
  read: number;
  /** CVEs that were not in the dataset before. */
  added: number;
  /** CVEs already in the dataset (shipped or imported earlier) whose record was refreshed. */
  updated: number;
  /** NVD records without an application CPE for a CVE the dataset does not have (nothing to match on). */
  unmatchable: number;
  skipped: number;
  /** CVEs whose KEV flag this import turned on. */
  kevFlagsSet: number;
  /** KEV entries for CVEs not in the dataset (kept; they apply once those CVEs are imported). */
  kevWithoutRecord: number;
  catalogVersion: string | null;
  warnings: string[];
}

export interface ImportSummary {
  files: FileImportReport[];
  path: string;
  totalImported: number;
  totalKev: number;
}

/** Parses a feed file's bytes (plain JSON or gzip-compressed JSON). */
export function parseFeedBytes(bytes: Buffer, name: string): unknown {
  let data = bytes;
  if (data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b) {
    try {
      data = gunzipSync(data);
    } catch (err) {
      throw new FeedFormatError(`${name}: cannot decompress: ${(err as Error).message}`);
    }
  } else if (data.length >= 4 && data[0] === 0x50 && data[1] === 0x4b) {
    throw new FeedFormatError(`${name}: a zip archive; unzip it and import the .json file inside`);
  }
  try {
    return JSON.parse(data.toString('utf8'));
  } catch (err) {
    throw new FeedFormatError(`${name}: not JSON (${(err as Error).message})`);
  }
}

type Parsed = { file: string; result: NvdImportResult | KevImportResult };

/** Reads and converts one feed document; throws FeedFormatError with the file name when it is neither kind. */
export function convertFeed(json: unknown, name: string): NvdImportResult | KevImportResult {
  if (isObject(json) && Array.isArray(json.CVE_Items)) {
    throw new FeedFormatError(`${name}: a retired NVD 1.1 feed (CVE_Items); download the JSON 2.0 feed (nvdcve-2.0-*.json) instead`);
  }
  const kind = detectFeedType(json);
  if (kind === 'nvd') return importNvdFeed(json);
  if (kind === 'kev') return importKev(json);
  throw new FeedFormatError(`${name}: ${NEITHER}`);
}

/**
 * Applies converted feeds to an imported-data document (in memory) and reports what changed.
 * `shipped` is the shipped dataset (to tell added from updated and to count KEV flags).
 */
export function applyImports(file: ImportedCveFile, parsed: readonly Parsed[], shipped: readonly CveEntry[], now: string): FileImportReport[] {
  const reports: FileImportReport[] = [];
  const shippedIds = new Set(shipped.map((e) => e.id));
  for (const { file: name, result } of parsed) {
    const before = kevSet(mergeCveData(shipped, file));
    const report: FileImportReport = {
      file: name,
      kind: result.kind,
      read: result.read,
      added: 0,
      updated: 0,
      unmatchable: 0,
      skipped: result.skipped.length,
      kevFlagsSet: 0,
      kevWithoutRecord: 0,
      catalogVersion: result.kind === 'kev' ? result.catalogVersion : null,
      warnings: result.kind === 'nvd' ? result.warnings : [],
    };
    if (result.kind === 'nvd') {
      const index = new Map(file.cves.map((e, i) => [e.id, i]));
      for (const rec of result.records) {
        const at = index.get(rec.id);
        const known = shippedIds.has(rec.id) || (at !== undefined && file.cves[at].affected.length > 0);
        if (rec.affected.length === 0 && !shippedIds.has(rec.id)) {
          // Nothing to match on and nothing to refresh; keep an earlier record with products if there is one.
          report.unmatchable++;
          continue;
        }
        if (at !== undefined) {
          const old = file.cves[at];
          if (old.last_modified && rec.last_modified && old.last_modified > rec.last_modified) {
            report.updated++;
            continue; // an older feed must not undo a newer one
          }
          file.cves[at] = rec;
        } else {
          index.set(rec.id, file.cves.length);
          file.cves.push(rec);
        }
        if (known) report.updated++;
        else report.added++;
      }
      file.sources.push({ file: name, kind: 'nvd', imported_at: now, detail: `${result.read} records` });
    } else {
      const datasetIds = new Set([...shippedIds, ...file.cves.filter((e) => e.affected.length > 0).map((e) => e.id)]);
      for (const [id, kev] of result.entries) {
        file.kev[id] = kev;
        if (!datasetIds.has(id)) report.kevWithoutRecord++;
      }
      file.sources.push({ file: name, kind: 'kev', imported_at: now, detail: result.catalogVersion ? `catalog ${result.catalogVersion}` : null });
    }
    const after = kevSet(mergeCveData(shipped, file));
    for (const id of after) if (!before.has(id)) report.kevFlagsSet++;
    reports.push(report);
  }
  file.updated_at = now;
  if (file.sources.length > 50) file.sources = file.sources.slice(-50);
  return reports;
}

function kevSet(entries: CveEntry[]): Set<string> {
  return new Set(entries.filter((e) => e.kev).map((e) => e.id));
}

/**
 * `netwarden cve import FILE...`: reads and validates every file first (nothing is written when
 * one is unreadable or of an unknown kind), then stores the result in `<data dir>/cve-imported.json`
 * (written to a temporary file and renamed, so readers never see half a file).
 */
export function importCveFiles(paths: readonly string[], dataDir: string, options: { shippedDir?: string; now?: string } = {}): ImportSummary {
  const parsed: Parsed[] = [];
  for (const path of paths) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (err) {
      throw new FeedFormatError(`${path}: cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    const json = parseFeedBytes(bytes, path);
    try {
      parsed.push({ file: basename(path), result: convertFeed(json, path) });
    } catch (err) {
      if (err instanceof FeedFormatError && !err.message.startsWith(path)) throw new FeedFormatError(`${path}: ${err.message}`);
      throw err;
    }
  }
  const target = importedFilePath(dataDir);
  const file = readImportedFile(dataDir) ?? emptyImportedFile();
  const shipped = loadShippedCves(options.shippedDir ?? SHIPPED_CVE_DIR);
  const reports = applyImports(file, parsed, shipped, options.now ?? new Date().toISOString());
  writeJsonAtomically(target, file);
  return { files: reports, path: target, totalImported: file.cves.length, totalKev: Object.keys(file.kev).length };
}

function writeJsonAtomically(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(value)}\n`, { mode: 0o644 });
  renameSync(tmp, path);
}
