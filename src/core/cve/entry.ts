/**
 * One CVE record of the dataset (shipped with the release or imported from NVD), and the check the
 * loader, the importer and the tests run on every record.
 */
import { compareParsed, compileRange, type VersionRange } from '../versions.js';
import { cvssBaseScore } from './cvss.js';
import { WINDOWS_ORDER } from './windows.js';

/** One affected product of a CVE: a CPE vendor:product with NVD-style version bounds. */
export interface CveAffected extends VersionRange {
  /** CPE vendor:product as NVD names it, e.g. `openbsd:openssh`, `apache:http_server`. */
  cpe: string;
  /** The product alone matches (no version check); confidence is at most `likely`. */
  versionIndependent?: boolean;
  /** The version says which release runs but not its patch level (Windows components): at most `likely`. */
  maxConfidence?: 'likely';
  /** Only on ports whose service is one of these (nmap names: `microsoft-ds`, `ms-wbt-server`…). */
  services?: string[];
  /** Only when the port shows one of these distributions (lower case: `debian`, `ubuntu`). */
  requiresDistro?: string[];
  /**
   * Windows releases affected (`xp`, `2003`, `vista`, `2008`, `7`, `2008r2`, `8`, `2012`, `8.1`,
   * `2012r2`, `10`, `2016`, `2019`, `2022`, `11`): a match is dropped when the scan names only other releases.
   */
  windowsReleases?: string[];
}

/** One CVE as the dataset stores it. */
export interface CveEntry {
  id: string;
  /** CVSS base score (v3.x; v2 only where no v3 exists). */
  cvss_score: number | null;
  cvss_vector: string | null;
  /** `3.1`, `3.0`, `2.0` (or `4.0` for imported records that have nothing else). */
  cvss_version: string | null;
  description: string;
  remediation: string | null;
  references: string[];
  /** Listed in CISA's Known Exploited Vulnerabilities catalog. */
  kev: boolean;
  published?: string | null;
  /** When the source last changed the record (NVD's lastModified), for imported records. */
  last_modified?: string | null;
  affected: CveAffected[];
}

const RANGE_FIELDS = ['version', 'versionStartIncluding', 'versionStartExcluding', 'versionEndIncluding', 'versionEndExcluding'] as const;
const AFFECTED_FIELDS = new Set<string>([...RANGE_FIELDS, 'cpe', 'versionIndependent', 'maxConfidence', 'services', 'requiresDistro', 'windowsReleases']);
const ENTRY_FIELDS = new Set<string>(['id', 'cvss_score', 'cvss_vector', 'cvss_version', 'description', 'remediation', 'references', 'kev', 'published', 'last_modified', 'affected']);

export const CVE_ID_PATTERN = /^CVE-\d{4}-\d{4,}$/;

/**
 * Checks one dataset record and returns the problems found (empty when valid). Unknown fields,
 * wrong types, an unreadable range or a bad CVE id are problems; so is a score that disagrees with
 * its vector, unless `checkScore` is false (imported records keep the score their source gives).
 */
export function validateCveEntry(value: unknown, options: { allowEmptyAffected?: boolean; checkScore?: boolean } = {}): string[] {
  const problems: string[] = [];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return ['not an object'];
  const e = value as Record<string, unknown>;
  const id = typeof e.id === 'string' ? e.id : '?';
  const p = (msg: string): void => void problems.push(`${id}: ${msg}`);
  for (const k of Object.keys(e)) if (!ENTRY_FIELDS.has(k)) p(`unknown field '${k}'`);
  if (typeof e.id !== 'string' || !CVE_ID_PATTERN.test(e.id)) p('id must look like CVE-2024-6387');
  if (e.cvss_score !== null && (typeof e.cvss_score !== 'number' || e.cvss_score < 0 || e.cvss_score > 10)) p('cvss_score must be 0-10 or null');
  if (e.cvss_vector !== null && typeof e.cvss_vector !== 'string') p('cvss_vector must be a string or null');
  if (e.cvss_version !== null && !['2.0', '3.0', '3.1', '4.0'].includes(e.cvss_version as string)) p('cvss_version must be 2.0, 3.0, 3.1, 4.0 or null');
  if (options.checkScore !== false && typeof e.cvss_vector === 'string' && typeof e.cvss_score === 'number' && e.cvss_version !== '4.0') {
    const computed = cvssBaseScore(e.cvss_vector);
    if (computed === null) p(`cvss_vector '${e.cvss_vector}' is not a CVSS v2/v3 vector`);
    else if (Math.abs(computed - e.cvss_score) > 0.05) p(`cvss_score ${e.cvss_score} disagrees with its vector (${computed})`);
    const v = e.cvss_vector.match(/^CVSS:(3\.[01])\//)?.[1] ?? '2.0';
    if (e.cvss_version !== v) p(`cvss_version ${String(e.cvss_version)} disagrees with the vector (${v})`);
  }
  if (typeof e.description !== 'string' || e.description.trim() === '') p('description must be a non-empty string');
  if (e.remediation !== null && typeof e.remediation !== 'string') p('remediation must be a string or null');
  if (!Array.isArray(e.references) || e.references.some((r) => typeof r !== 'string' || !/^https?:\/\//.test(r))) p('references must be an array of URLs');
  if (typeof e.kev !== 'boolean') p('kev must be true or false');
  if (e.published !== undefined && e.published !== null && (typeof e.published !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(e.published))) {
    p('published must be a date (YYYY-MM-DD)');
  }
  if (e.last_modified !== undefined && e.last_modified !== null && typeof e.last_modified !== 'string') p('last_modified must be a string');
  if (!Array.isArray(e.affected) || (e.affected.length === 0 && !options.allowEmptyAffected)) {
    p('affected must be a non-empty array');
    return problems;
  }
  for (const a of e.affected as unknown[]) {
    if (typeof a !== 'object' || a === null) {
      p('affected item must be an object');
      continue;
    }
    const item = a as Record<string, unknown>;
    for (const k of Object.keys(item)) if (!AFFECTED_FIELDS.has(k)) p(`affected: unknown field '${k}'`);
    if (typeof item.cpe !== 'string' || !/^[^\sA-Z:]+:[^\sA-Z:]+$/.test(item.cpe)) p(`affected cpe '${String(item.cpe)}' must be vendor:product in lower case`);
    for (const f of RANGE_FIELDS) if (item[f] !== undefined && typeof item[f] !== 'string') p(`affected ${f} must be a string`);
    for (const f of ['services', 'requiresDistro', 'windowsReleases']) {
      if (item[f] !== undefined && (!Array.isArray(item[f]) || (item[f] as unknown[]).some((s) => typeof s !== 'string'))) p(`affected ${f} must be an array of strings`);
    }
    if (item.windowsReleases !== undefined && Array.isArray(item.windowsReleases)) {
      for (const r of item.windowsReleases as string[]) if (!WINDOWS_ORDER.includes(r)) p(`unknown Windows release '${r}'`);
    }
    if (item.versionIndependent !== undefined && item.versionIndependent !== true) p('versionIndependent must be true when given');
    if (item.maxConfidence !== undefined && item.maxConfidence !== 'likely') p("maxConfidence must be 'likely' when given");
    const hasRange = RANGE_FIELDS.some((f) => item[f] !== undefined);
    if (item.versionIndependent && hasRange) p('a version-independent entry cannot have version bounds');
    if (!item.versionIndependent) {
      try {
        const r = compileRange(item as VersionRange);
        const start = r.startIncluding ?? r.startExcluding;
        const end = r.endIncluding ?? r.endExcluding;
        if (start && end) {
          const c = compareParsed(start, end);
          if (c > 0 || (c === 0 && !(r.startIncluding && r.endIncluding))) p(`range start ${start.raw} is not below its end ${end.raw}`);
        }
      } catch (err) {
        p(`affected ${String(item.cpe)}: ${(err as Error).message}`);
      }
    }
  }
  return problems;
}
