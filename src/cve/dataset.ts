/**
 * Where the CVE data comes from: the curated dataset shipped in the repository (data/cve/*.json)
 * and what users imported from NVD and CISA feeds (`<data dir>/cve-imported.json`), merged by CVE
 * id. The matcher itself is pure (src/core/cve/); this module only reads files.
 *
 * The imported file sits directly in the data directory, not in a `cve/` folder: with the default
 * data directory (`./data`) that folder would be the shipped dataset's own.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCveIndex, canonicalProductKey, validateCveEntry, type CveEntry, type CveIndex } from '../core/cve/index.js';
import { NetwardenError } from '../util/errors.js';

/** data/cve/ in the repository (works from src/ under vitest and from dist/ once built). */
export const SHIPPED_CVE_DIR = fileURLToPath(new URL('../../data/cve/', import.meta.url));

export const IMPORTED_FORMAT = 'netwarden-cve-import';

/** What CISA's catalog says about one CVE (kept even before the CVE itself is in the dataset). */
export interface KevRecord {
  date_added: string | null;
  due_date: string | null;
  required_action: string | null;
  vendor_project: string | null;
  product: string | null;
  vulnerability_name: string | null;
  known_ransomware_campaign_use: string | null;
}

/** `<data dir>/cve-imported.json`. */
export interface ImportedCveFile {
  format: typeof IMPORTED_FORMAT;
  version: 1;
  updated_at: string | null;
  /** Records converted from NVD feeds; `affected` may be empty for a CVE the shipped dataset already covers. */
  cves: CveEntry[];
  kev: Record<string, KevRecord>;
  /** Catalog versions and feed names imported, newest last (for `cve status`). */
  sources: { file: string; kind: 'nvd' | 'kev'; imported_at: string; detail: string | null }[];
}

export class CveDataError extends NetwardenError {
  readonly code = 'NW_CVE_DATA_INVALID';
}

export function emptyImportedFile(): ImportedCveFile {
  return { format: IMPORTED_FORMAT, version: 1, updated_at: null, cves: [], kev: {}, sources: [] };
}

export function importedFilePath(dataDir: string): string {
  return join(dataDir, 'cve-imported.json');
}

interface ShippedFile {
  family: string;
  description?: string;
  cves: CveEntry[];
}

let shippedCache: { dir: string; entries: CveEntry[]; families: Map<string, number> } | null = null;

/**
 * Reads every data/cve/*.json file. Throws CveDataError naming the file and record when the data
 * is malformed or a CVE id appears twice: the shipped dataset is checked by the tests, so this
 * only fires on a damaged installation.
 */
export function loadShippedCves(dir: string = SHIPPED_CVE_DIR): CveEntry[] {
  return loadShipped(dir).entries;
}

/** Number of shipped CVEs per product family (file), for reports. */
export function shippedFamilies(dir: string = SHIPPED_CVE_DIR): Map<string, number> {
  return loadShipped(dir).families;
}

function loadShipped(dir: string): { entries: CveEntry[]; families: Map<string, number> } {
  if (shippedCache && shippedCache.dir === dir) return shippedCache;
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();
  const entries: CveEntry[] = [];
  const seen = new Map<string, string>();
  const families = new Map<string, number>();
  for (const file of files) {
    const path = join(dir, file);
    let parsed: ShippedFile;
    try {
      parsed = JSON.parse(readFileSync(path, 'utf8')) as ShippedFile;
    } catch (err) {
      throw new CveDataError(`${path}: ${(err as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || !Array.isArray(parsed.cves) || typeof parsed.family !== 'string') {
      throw new CveDataError(`${path}: expected {"family": "...", "cves": [...]}`);
    }
    for (const entry of parsed.cves) {
      const problems = validateCveEntry(entry);
      if (problems.length) throw new CveDataError(`${path}: ${problems.join('; ')}`);
      const other = seen.get(entry.id);
      if (other) throw new CveDataError(`${path}: ${entry.id} is also in ${other}`);
      seen.set(entry.id, file);
      entries.push(entry);
    }
    families.set(parsed.family, (families.get(parsed.family) ?? 0) + parsed.cves.length);
  }
  shippedCache = { dir, entries, families };
  return shippedCache;
}

/**
 * Reads the imported data, or null when nothing was imported yet. Throws CveDataError when the file
 * is damaged; records that are invalid on their own are left out and reported through `onProblem`.
 */
export function readImportedFile(dataDir: string, onProblem?: (problem: string) => void): ImportedCveFile | null {
  const path = importedFilePath(dataDir);
  if (!existsSync(path)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new CveDataError(`${path}: ${(err as Error).message}`);
  }
  const file = parsed as ImportedCveFile;
  if (typeof file !== 'object' || file === null || file.format !== IMPORTED_FORMAT || !Array.isArray(file.cves) || typeof file.kev !== 'object') {
    throw new CveDataError(`${path}: not a Netwarden CVE import file`);
  }
  file.cves = file.cves.filter((entry) => {
    const problems = validateCveEntry(entry, { allowEmptyAffected: true, checkScore: false });
    if (problems.length) onProblem?.(`${path}: record left out: ${problems.join('; ')}`);
    return problems.length === 0;
  });
  file.sources ??= [];
  return file;
}

/**
 * The dataset the matcher uses: shipped records, with imported records merged over them by CVE id,
 * then CISA KEV flags applied.
 *
 * For a CVE in both, the imported record brings the score, vector, references, KEV flag and its
 * affected products: for each product it names, its ranges replace the shipped ones; shipped
 * entries for products it does not name (such as the version-independent Windows SMB entries)
 * stay. The curated description and remediation stay when present.
 */
export function mergeCveData(shipped: readonly CveEntry[], imported: ImportedCveFile | null): CveEntry[] {
  const byId = new Map<string, CveEntry>();
  for (const e of shipped) byId.set(e.id, e);
  if (!imported) return [...byId.values()];
  for (const rec of imported.cves) {
    const base = byId.get(rec.id);
    if (!base) {
      if (rec.affected.length > 0) byId.set(rec.id, rec);
      continue;
    }
    const replaced = new Set(rec.affected.map((a) => canonicalProductKey(a.cpe)));
    const hasScore = rec.cvss_score !== null;
    byId.set(rec.id, {
      ...base,
      cvss_score: hasScore ? rec.cvss_score : base.cvss_score,
      cvss_vector: hasScore ? rec.cvss_vector : base.cvss_vector,
      cvss_version: hasScore ? rec.cvss_version : base.cvss_version,
      description: base.description || rec.description,
      remediation: base.remediation ?? rec.remediation,
      references: unique([...base.references, ...rec.references]).slice(0, 12),
      kev: base.kev || rec.kev,
      published: base.published ?? rec.published ?? null,
      last_modified: rec.last_modified ?? base.last_modified ?? null,
      affected: [...base.affected.filter((a) => !replaced.has(canonicalProductKey(a.cpe))), ...rec.affected],
    });
  }
  for (const [id, kev] of Object.entries(imported.kev)) {
    const e = byId.get(id);
    if (!e) continue;
    if (e.kev && e.remediation) continue;
    byId.set(id, { ...e, kev: true, remediation: e.remediation ?? kevRemediation(kev) });
  }
  return [...byId.values()];
}

export function kevRemediation(kev: KevRecord): string | null {
  if (!kev.required_action) return null;
  return kev.due_date ? `${kev.required_action} (CISA due date for US federal agencies: ${kev.due_date}.)` : kev.required_action;
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}

/** Shipped plus imported data, merged (see mergeCveData). */
export function loadCveDataset(dataDir: string | null, shippedDir: string = SHIPPED_CVE_DIR): CveEntry[] {
  return mergeCveData(loadShippedCves(shippedDir), dataDir ? readImportedFile(dataDir) : null);
}

/** One dataset's loaded state, shared by every CveDatabase over the same folders (the scan evaluator, the re-evaluator, the API). */
interface LoadedDataset {
  index: CveIndex | null;
  stamp: string;
  fingerprint: string;
  lastError: string | null;
}
const loaded = new Map<string, LoadedDataset>();

/**
 * The index the service matches with, rebuilt when the imported file changes (so data imported
 * with `netwarden cve import` is used from the next evaluation on, without a restart). If the
 * imported file turns out damaged, the previous index (or the shipped data alone) stays in use and
 * `lastError` says why. Instances over the same folders share one loaded index.
 */
export class CveDatabase {
  private readonly state: LoadedDataset;

  constructor(
    private readonly dataDir: string | null,
    private readonly shippedDir: string = SHIPPED_CVE_DIR,
  ) {
    const key = `${dataDir ?? ''}\u0000${shippedDir}`;
    let state = loaded.get(key);
    if (!state) loaded.set(key, (state = { index: null, stamp: '', fingerprint: '', lastError: null }));
    this.state = state;
  }

  get lastError(): string | null {
    return this.state.lastError;
  }

  index(): CveIndex {
    const state = this.state;
    const stamp = this.currentStamp();
    if (state.index && stamp === state.stamp) return state.index;
    let imported: ImportedCveFile | null = null;
    try {
      const problems: string[] = [];
      imported = this.dataDir ? readImportedFile(this.dataDir, (p) => problems.push(p)) : null;
      state.lastError = problems.length ? `${problems.length} imported record(s) left out, e.g. ${problems[0]}` : null;
    } catch (err) {
      state.lastError = (err as Error).message;
      if (state.index) {
        state.stamp = stamp;
        return state.index;
      }
    }
    const entries = mergeCveData(loadShippedCves(this.shippedDir), imported);
    state.index = buildCveIndex(entries);
    state.fingerprint = createHash('sha256').update(JSON.stringify(entries)).digest('base64url').slice(0, 22);
    state.stamp = stamp;
    return state.index;
  }

  /** A hash of the dataset in use (changes when an import changes any record): part of the evaluation fingerprint. */
  fingerprint(): string {
    this.index();
    return this.state.fingerprint;
  }

  /** The dataset's record of a CVE, or undefined when the dataset (no longer) has it. */
  entry(id: string): CveEntry | undefined {
    return this.index().entries.get(id);
  }

  private currentStamp(): string {
    if (!this.dataDir) return 'none';
    try {
      const s = statSync(importedFilePath(this.dataDir));
      return `${s.mtimeMs}:${s.size}:${s.ino}`;
    } catch {
      return 'none';
    }
  }
}
