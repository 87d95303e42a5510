/** Reading a release feed document and comparing release versions. Pure. */
import { isObject } from '../util/is-object.js';

export interface Release {
  version: string;
  url: string | null;
  notes: string | null;
  published_at: string | null;
}

/**
 * Accepts a GitHub "latest release" object (`tag_name`, `html_url`, `body`, `published_at`),
 * an array of them (the first non-draft, non-prerelease wins) or a plain
 * `{version, url, notes, published_at}` document.
 */
export function parseReleaseFeed(doc: unknown): Release | { error: string } {
  const candidate: unknown = Array.isArray(doc) ? doc.find((r) => isObject(r) && !r.draft && !r.prerelease) : doc;
  if (!isObject(candidate)) return { error: 'the release feed did not contain a release' };
  const rawVersion = str(candidate.tag_name) ?? str(candidate.version) ?? str(candidate.name);
  if (!rawVersion) return { error: 'the release feed did not name a version' };
  const version = rawVersion.replace(/^v/i, '').trim();
  if (!parseSemver(version)) return { error: `the release feed names an unrecognised version '${rawVersion.slice(0, 50)}'` };
  return {
    version,
    url: safeUrl(str(candidate.html_url) ?? str(candidate.url)),
    notes: (str(candidate.body) ?? str(candidate.notes) ?? null)?.slice(0, 20_000) ?? null,
    published_at: str(candidate.published_at) ?? null,
  };
}

type Semver = { core: number[]; pre: string[] };

export function parseSemver(text: string): Semver | null {
  const m = text
    .trim()
    .replace(/^v/i, '')
    .match(/^(\d+)\.(\d+)(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/);
  if (!m) return null;
  return { core: [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)], pre: m[4] ? m[4].split('.') : [] };
}

/** Negative when a < b, positive when a > b, 0 when equal (semantic versioning precedence). */
export function compareSemver(a: string, b: string): number {
  const x = parseSemver(a);
  const y = parseSemver(b);
  if (!x || !y) return 0;
  for (let i = 0; i < 3; i++) if (x.core[i] !== y.core[i]) return x.core[i] - y.core[i];
  if (x.pre.length === 0 || y.pre.length === 0) return y.pre.length - x.pre.length;
  for (let i = 0; i < Math.max(x.pre.length, y.pre.length); i++) {
    const p = x.pre[i];
    const q = y.pre[i];
    if (p === undefined) return -1;
    if (q === undefined) return 1;
    const pn = /^\d+$/.test(p);
    const qn = /^\d+$/.test(q);
    if (pn && qn && Number(p) !== Number(q)) return Number(p) - Number(q);
    if (pn !== qn) return pn ? -1 : 1;
    if (p !== q) return p < q ? -1 : 1;
  }
  return 0;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v : undefined;
}

/** Only http(s) links are passed on to clients (a feed could carry `javascript:` URLs). */
function safeUrl(v: string | undefined): string | null {
  if (!v) return null;
  try {
    const url = new URL(v);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.toString() : null;
  } catch {
    return null;
  }
}
