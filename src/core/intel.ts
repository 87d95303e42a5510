/**
 * Exploit intelligence files read offline (CONTRACT §17, §18): CISA's Known Exploited
 * Vulnerabilities catalogue (JSON, CC0) and FIRST's EPSS scores (CSV). Pure: text in, facts out;
 * `netwarden intel import` reads the files (gzip or plain) and stores the result.
 */
import { InvalidInputError, type ErrorCode } from '../util/errors.js';

/** A file that is not the KEV catalogue or an EPSS CSV it claims to be; the message names the place. */
export class IntelFormatError extends InvalidInputError {
  override readonly code: ErrorCode = 'NW_INTEL_FORMAT';
}

export interface KevEntry {
  cve_id: string;
  date_added: string | null;
  due_date: string | null;
  ransomware: boolean;
}

export interface KevCatalog {
  kind: 'kev';
  /** `catalogVersion` */
  version: string | null;
  /** `dateReleased`, as a day. */
  released: string | null;
  entries: KevEntry[];
}

export interface EpssEntry {
  cve_id: string;
  score: number;
  percentile: number;
}

export interface EpssFile {
  kind: 'epss';
  model_version: string | null;
  /** The score date (`score_date` of the header), as a day; null when the file does not say. */
  as_of: string | null;
  entries: EpssEntry[];
}

const CVE_ID = /^CVE-\d{4}-\d{4,}$/;
const DAY = /^(\d{4}-\d{2}-\d{2})/;

const day = (value: unknown): string | null => {
  if (typeof value !== 'string') return null;
  const m = DAY.exec(value.trim());
  return m ? m[1] : null;
};

/** Which kind of file `text` is: the KEV catalogue (JSON object with `vulnerabilities`), an EPSS CSV, or null. */
export function detectIntelKind(text: string): 'kev' | 'epss' | null {
  const start = text.replace(/^\uFEFF/, '').trimStart();
  if (start.startsWith('{')) return 'kev';
  if (/^(#model_version|cve,epss)/i.test(start)) return 'epss';
  return null;
}

/** The KEV catalogue's entries; IntelFormatError naming what is wrong. */
export function parseKev(text: string, name = 'file'): KevCatalog {
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    throw new IntelFormatError(`${name}: not valid JSON`);
  }
  if (typeof json !== 'object' || json === null || !Array.isArray((json as { vulnerabilities?: unknown }).vulnerabilities)) {
    throw new IntelFormatError(`${name}: not CISA's Known Exploited Vulnerabilities catalogue (no "vulnerabilities" list)`);
  }
  const doc = json as { vulnerabilities: unknown[]; catalogVersion?: unknown; dateReleased?: unknown };
  const entries: KevEntry[] = [];
  for (const [i, v] of doc.vulnerabilities.entries()) {
    if (typeof v !== 'object' || v === null) throw new IntelFormatError(`${name}: vulnerabilities[${i}] is not an object`);
    const r = v as Record<string, unknown>;
    const id = typeof r.cveID === 'string' ? r.cveID.trim().toUpperCase() : '';
    if (!CVE_ID.test(id)) throw new IntelFormatError(`${name}: vulnerabilities[${i}].cveID must be a CVE id such as CVE-2024-3400`);
    entries.push({
      cve_id: id,
      date_added: day(r.dateAdded),
      due_date: day(r.dueDate),
      ransomware: typeof r.knownRansomwareCampaignUse === 'string' && r.knownRansomwareCampaignUse.trim().toLowerCase() === 'known',
    });
  }
  return {
    kind: 'kev',
    version: typeof doc.catalogVersion === 'string' ? doc.catalogVersion : null,
    released: day(doc.dateReleased),
    entries,
  };
}

/** An EPSS CSV (`#model_version:…,score_date:…` then `cve,epss,percentile`); IntelFormatError naming the line. */
export function parseEpss(text: string, name = 'file'): EpssFile {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  let model: string | null = null;
  let asOf: string | null = null;
  let i = 0;
  for (; i < lines.length && lines[i].startsWith('#'); i++) {
    for (const part of lines[i].slice(1).split(',')) {
      const [k, ...rest] = part.split(':');
      const value = rest.join(':').trim();
      if (k.trim() === 'model_version') model = value || null;
      if (k.trim() === 'score_date') asOf = day(value);
    }
  }
  const header = (lines[i] ?? '').split(',').map((h) => h.trim().toLowerCase());
  const [ci, ei, pi] = ['cve', 'epss', 'percentile'].map((h) => header.indexOf(h));
  if (ci < 0 || ei < 0 || pi < 0) throw new IntelFormatError(`${name}: line ${i + 1}: expected the EPSS header "cve,epss,percentile"`);
  const entries: EpssEntry[] = [];
  for (i++; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    const cells = line.split(',');
    const id = (cells[ci] ?? '').trim().toUpperCase();
    const score = Number(cells[ei]);
    const percentile = Number(cells[pi]);
    if (!CVE_ID.test(id)) throw new IntelFormatError(`${name}: line ${i + 1}: "${id.slice(0, 40)}" is not a CVE id`);
    if (!(score >= 0 && score <= 1) || !(percentile >= 0 && percentile <= 1) || cells[ei].trim() === '' || cells[pi].trim() === '') {
      throw new IntelFormatError(`${name}: line ${i + 1}: epss and percentile must be numbers from 0 to 1`);
    }
    entries.push({ cve_id: id, score, percentile });
  }
  return { kind: 'epss', model_version: model, as_of: asOf, entries };
}

/** KEV as the API shows it (CONTRACT §18): the imported catalogue's record, else the dataset's flag with unknown dates, else null. */
export function kevOf(
  imported: { date_added: string | null; ransomware: boolean; due_date: string | null } | undefined,
  datasetKev: boolean | undefined,
): { date_added: string | null; ransomware: boolean; due_date: string | null } | null {
  if (imported) return { date_added: imported.date_added, ransomware: imported.ransomware, due_date: imported.due_date };
  return datasetKev ? { date_added: null, ransomware: false, due_date: null } : null;
}

/** What the findings list orders by. */
export interface PriorityFacts {
  kev: object | null;
  epss: { score: number } | null;
  severity: 'critical' | 'high' | 'medium' | 'low';
  cvss_score: number | null;
}

const RANK = { critical: 4, high: 3, medium: 2, low: 1 } as const;

/** Fix-first order (CONTRACT §18): known exploited first, then EPSS score (none last), then severity, then CVSS. */
export function comparePriority(a: PriorityFacts, b: PriorityFacts): number {
  return (
    Number(b.kev !== null) - Number(a.kev !== null) ||
    (b.epss?.score ?? -1) - (a.epss?.score ?? -1) ||
    RANK[b.severity] - RANK[a.severity] ||
    (b.cvss_score ?? -1) - (a.cvss_score ?? -1)
  );
}

/** Severity order: severity, then CVSS, then known exploited, then EPSS. */
export function compareSeverity(a: PriorityFacts, b: PriorityFacts): number {
  return (
    RANK[b.severity] - RANK[a.severity] ||
    (b.cvss_score ?? -1) - (a.cvss_score ?? -1) ||
    Number(b.kev !== null) - Number(a.kev !== null) ||
    (b.epss?.score ?? -1) - (a.epss?.score ?? -1)
  );
}

/** Whole days from `from` (a day or a timestamp) to `now`; null without a date. */
export function ageInDays(from: string | null, now: Date): number | null {
  if (!from) return null;
  const t = Date.parse(from.length === 10 ? `${from}T00:00:00Z` : from);
  if (!Number.isFinite(t)) return null;
  return Math.max(0, Math.floor((now.getTime() - t) / 86_400_000));
}
