import { NetwardenError } from '../util/errors.js';
/**
 * Version strings as network services announce them, compared the way their authors mean them.
 * Pure functions, no I/O.
 *
 * - Release numbers compare numerically, missing parts count as zero: `1.18.0` < `1.20.1`, `9.3` = `9.3.0`.
 * - Pre-releases sort before their release: `1.3.5rc2` < `1.3.5`, `2.0b3` < `2.0`, `1.00-pre7` < `1.00`.
 *   Order among them: dev/snapshot < alpha < beta < pre < rc.
 * - Post-releases sort after it: OpenSSH portable patches `9.3` < `9.3p1` < `9.3p2`, ProFTPD letter
 *   releases `1.3.5` < `1.3.5a` < `1.3.5b`.
 * - What follows the upstream version is kept aside, not compared: a distribution's packaging
 *   (`8.9p1 Ubuntu 3ubuntu0.10`, `10.3.39-MariaDB-0+deb12u1`, `9.2p1 Debian-2+deb12u3`), a build tag
 *   (`5.7.44-log`) or a date (`2.25b 29dec2003`). A distribution suffix is recorded because
 *   distributions backport security fixes without changing the upstream number.
 */

export type PreReleaseTag = 'dev' | 'alpha' | 'beta' | 'pre' | 'rc';

/** One qualifier after the release numbers: a pre-release (rank < 0) or a post-release (rank > 0). */
export interface VersionQualifier {
  /** -5 dev/snapshot, -4 alpha, -3 beta, -2 pre, -1 rc; 1 post-release (patch level or letter). */
  rank: number;
  /** For letter post-releases the letter's position (a = 1); 0 otherwise. */
  letter: number;
  /** The number that follows the tag (`rc2` → 2, `p1` → 1), 0 when none. */
  num: number;
  /** The tag as written, lower case (`rc`, `p`, `a`). */
  tag: string;
}

export interface ParsedVersion {
  /** The string as given (trimmed). */
  raw: string;
  /** The upstream version compared: `8.9p1` for `8.9p1 Ubuntu 3ubuntu0.10`. */
  upstream: string;
  /** Numeric release parts: `[8, 9]`. */
  release: number[];
  qualifiers: VersionQualifier[];
  /** Everything after the upstream version that is not a pre-release marker, trimmed; null when none. */
  suffix: string | null;
  /** The distribution named by the suffix (`Ubuntu`, `Debian`, `Red Hat`…), or null. */
  distro: string | null;
}

const PRE_TAGS: Record<string, number> = {
  dev: -5,
  snapshot: -5,
  alpha: -4,
  beta: -3,
  pre: -2,
  preview: -2,
  rc: -1,
  cr: -1,
};

/** Distribution markers in version suffixes and free text, with the distribution they mean. */
const DISTRO_PATTERNS: [RegExp, string][] = [
  [/ubuntu|\b(?:trusty|xenial|bionic|focal|jammy|noble)\b/i, 'Ubuntu'],
  [/raspbian/i, 'Raspbian'],
  [/debian|[+~]deb\d|\bdeb\d+u\d+|\bbpo\d|\b(?:jessie|stretch|buster|bullseye|bookworm|trixie)\b/i, 'Debian'],
  [/centos/i, 'CentOS'],
  [/rocky/i, 'Rocky Linux'],
  [/almalinux/i, 'AlmaLinux'],
  [/red ?hat|\brhel\b|\.el\d|\bel\d+(?:_\d+)?\b/i, 'Red Hat'],
  [/fedora|\.fc\d+/i, 'Fedora'],
  [/suse|\bsles\b/i, 'SUSE'],
  [/amzn|amazon linux/i, 'Amazon Linux'],
  [/alpine/i, 'Alpine'],
  [/gentoo/i, 'Gentoo'],
  [/mageia|\.mga\d/i, 'Mageia'],
  [/freebsd/i, 'FreeBSD'],
  [/netbsd/i, 'NetBSD'],
  [/openwrt/i, 'OpenWrt'],
];

/** Any of the patterns above, tested first: most text names no distribution. */
const ANY_DISTRO = new RegExp(DISTRO_PATTERNS.map(([p]) => p.source).join('|'), 'i');

/** The distribution a piece of text names (a version suffix, nmap's extra info, an OS name), or null. */
export function distroIn(text: string | null | undefined): string | null {
  if (!text || !ANY_DISTRO.test(text)) return null;
  for (const [pattern, name] of DISTRO_PATTERNS) if (pattern.test(text)) return name;
  return null;
}

const MAX_LENGTH = 120;

/**
 * Parses a version string; null when it does not start with a version number (after an optional
 * `v`, or an epoch `1:`), or is a wildcard/range form such as `3.X - 4.X` (see parseVersionSpec).
 */
export function parseVersion(input: string | null | undefined): ParsedVersion | null {
  if (input === null || input === undefined) return null;
  const raw = input.trim();
  if (raw === '' || raw.length > MAX_LENGTH) return null;
  // Optional `v`/`V` prefix (Exim's `V4.92`), optional Debian-style epoch `1:`.
  const m = raw.match(/^(?:[vV](?=\d))?(?:\d+:(?=\d))?(\d[0-9A-Za-z.]*)(.*)$/s);
  if (!m) return null;
  let core = m[1].replace(/\.+$/, '');
  let rest = m[2];
  // `3.X` and `4.x` are wildcards, not letter releases.
  if (/(^|\.)[xX](\.|$)/.test(core)) return null;

  const release: number[] = [];
  const qualifiers: VersionQualifier[] = [];
  // Tokens: runs of digits or letters; dots only separate.
  const tokens = core.match(/\d+|[A-Za-z]+|\./g) ?? [];
  let i = 0;
  let inRelease = true;
  while (i < tokens.length) {
    const t = tokens[i];
    if (t === '.') {
      i++;
      continue;
    }
    if (/^\d/.test(t)) {
      if (inRelease) release.push(toNumber(t));
      else qualifiers.push({ rank: 0, letter: 0, num: toNumber(t), tag: '' });
      i++;
      continue;
    }
    // A letter run; a number directly after it (no dot) belongs to it.
    inRelease = false;
    const next = tokens[i + 1];
    const hasNum = next !== undefined && /^\d/.test(next);
    qualifiers.push(qualifierOf(t.toLowerCase(), hasNum ? toNumber(next) : null));
    i += hasNum ? 2 : 1;
  }
  if (release.length === 0) return null;

  // A pre-release marker after a separator belongs to the version: `1.0.0-rc1`, `1.00-pre7`, `2.0 beta 3`.
  const pre = rest.match(/^[-_~. ]?(dev|snapshot|alpha|beta|pre|preview|rc)[-_. ]?(\d*)(?=$|[^A-Za-z])/i);
  if (pre) {
    const tag = pre[1].toLowerCase();
    qualifiers.push({ rank: PRE_TAGS[tag], letter: 0, num: pre[2] ? toNumber(pre[2]) : 0, tag });
    core += rest.slice(0, pre[0].length);
    rest = rest.slice(pre[0].length);
  }
  // Trailing neutral qualifiers carry no order information (`9.4.44.v20210927` = `9.4.44`).
  while (qualifiers.length && qualifiers[qualifiers.length - 1].rank === 0) qualifiers.pop();

  const suffix = rest.replace(/^[\s\-_+~:]+/, '').trim() || null;
  return { raw, upstream: core, release, qualifiers, suffix, distro: distroIn(suffix) };
}

function qualifierOf(tag: string, num: number | null): VersionQualifier {
  if (tag in PRE_TAGS) return { rank: PRE_TAGS[tag], letter: 0, num: num ?? 0, tag };
  // `a1`/`b2` are alpha/beta numbers; a lone letter is a post-release (ProFTPD 1.3.5a, thttpd 2.25b).
  if ((tag === 'a' || tag === 'b') && num !== null) return { rank: tag === 'a' ? -4 : -3, letter: 0, num, tag };
  if (tag === 'p' || tag === 'pl' || tag === 'patch' || tag === 'post' || tag === 'r' || tag === 'u') {
    return { rank: 1, letter: 0, num: num ?? 0, tag };
  }
  if (tag.length === 1 && num === null) return { rank: 1, letter: tag.charCodeAt(0) - 96, num: 0, tag };
  // Unknown words and letters with numbers (`v20210927` in Jetty's `9.4.44.v20210927`, `final`, `ga`) carry no order.
  return { rank: 0, letter: 0, num: num ?? 0, tag };
}

function toNumber(digits: string): number {
  // Dates such as 20210927 fit; absurdly long runs are clamped rather than lost to Infinity.
  return digits.length > 15 ? Number.MAX_SAFE_INTEGER : Number(digits);
}

const NONE: VersionQualifier = { rank: 0, letter: 0, num: 0, tag: '' };

/** Compares two parsed versions: -1, 0 or 1. Suffixes (distribution, build tags) are ignored. */
export function compareParsed(a: ParsedVersion, b: ParsedVersion): -1 | 0 | 1 {
  const n = Math.max(a.release.length, b.release.length);
  for (let i = 0; i < n; i++) {
    const x = a.release[i] ?? 0;
    const y = b.release[i] ?? 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  const q = Math.max(a.qualifiers.length, b.qualifiers.length);
  for (let i = 0; i < q; i++) {
    const x = a.qualifiers[i] ?? NONE;
    const y = b.qualifiers[i] ?? NONE;
    if (x.rank !== y.rank) return x.rank < y.rank ? -1 : 1;
    if (x.letter !== y.letter) return x.letter < y.letter ? -1 : 1;
    if (x.num !== y.num) return x.num < y.num ? -1 : 1;
  }
  return 0;
}

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/**
 * Compares two version strings (or parsed versions): -1 when a < b, 0 when equal, 1 when a > b.
 * Strings that are not versions at all fall back to a numeric-aware text comparison, so the
 * order is still total and deterministic.
 */
export function compareVersions(a: string | ParsedVersion, b: string | ParsedVersion): -1 | 0 | 1 {
  const pa = typeof a === 'string' ? parseVersion(a) : a;
  const pb = typeof b === 'string' ? parseVersion(b) : b;
  if (pa && pb) return compareParsed(pa, pb);
  const c = collator.compare(typeof a === 'string' ? a : a.raw, typeof b === 'string' ? b : b.raw);
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

/** NVD's ways of naming affected versions: one exact version, or bounds (none given = every version). */
export interface VersionRange {
  version?: string;
  versionStartIncluding?: string;
  versionStartExcluding?: string;
  versionEndIncluding?: string;
  versionEndExcluding?: string;
}

/** A range with its bounds parsed once (for matching many versions against it). */
export interface CompiledRange {
  exact: ParsedVersion | null;
  startIncluding: ParsedVersion | null;
  startExcluding: ParsedVersion | null;
  endIncluding: ParsedVersion | null;
  endExcluding: ParsedVersion | null;
}

export class InvalidVersionRangeError extends NetwardenError {
  readonly code = 'NW_INVALID_VERSION_RANGE';
}

export function compileRange(range: VersionRange): CompiledRange {
  const parse = (field: keyof VersionRange): ParsedVersion | null => {
    const value = range[field];
    if (value === undefined || value === null) return null;
    const parsed = parseVersion(value);
    if (!parsed) throw new InvalidVersionRangeError(`${field} '${value}' is not a version`);
    return parsed;
  };
  const compiled: CompiledRange = {
    exact: parse('version'),
    startIncluding: parse('versionStartIncluding'),
    startExcluding: parse('versionStartExcluding'),
    endIncluding: parse('versionEndIncluding'),
    endExcluding: parse('versionEndExcluding'),
  };
  if (compiled.exact && (compiled.startIncluding || compiled.startExcluding || compiled.endIncluding || compiled.endExcluding)) {
    throw new InvalidVersionRangeError('an exact version cannot be combined with bounds');
  }
  if (compiled.startIncluding && compiled.startExcluding) throw new InvalidVersionRangeError('two start bounds');
  if (compiled.endIncluding && compiled.endExcluding) throw new InvalidVersionRangeError('two end bounds');
  return compiled;
}

/** True when the parsed version lies in the compiled range. */
export function inCompiledRange(v: ParsedVersion, r: CompiledRange): boolean {
  if (r.exact) return compareParsed(v, r.exact) === 0;
  if (r.startIncluding && compareParsed(v, r.startIncluding) < 0) return false;
  if (r.startExcluding && compareParsed(v, r.startExcluding) <= 0) return false;
  if (r.endIncluding && compareParsed(v, r.endIncluding) > 0) return false;
  if (r.endExcluding && compareParsed(v, r.endExcluding) >= 0) return false;
  return true;
}

/**
 * Whether a version lies in a range: true/false, or null when the version cannot be read (so it
 * can be neither confirmed nor ruled out).
 */
export function inRange(version: string | ParsedVersion | null | undefined, range: VersionRange | CompiledRange): boolean | null {
  const v = typeof version === 'string' || version === null || version === undefined ? parseVersion(version) : version;
  if (!v) return null;
  const compiled = 'exact' in range || 'startIncluding' in range ? (range as CompiledRange) : compileRange(range);
  return inCompiledRange(v, compiled);
}

/**
 * What a scanner reported as a version, read as a set of possible versions. nmap sometimes
 * reports ranges (`9.6.7 - 9.6.12`), wildcards (`3.X - 4.X`) or lower bounds (`2.0.8 or later`).
 */
export type VersionSpec =
  { kind: 'exact'; version: ParsedVersion } | { kind: 'between'; low: ParsedVersion; high: ParsedVersion } | { kind: 'unknown' };

export function parseVersionSpec(input: string | null | undefined): VersionSpec {
  if (input === null || input === undefined) return { kind: 'unknown' };
  const text = input.trim();
  if (text === '') return { kind: 'unknown' };
  if (/\bor (?:later|earlier|newer|older)\b|\bor\b.*\d/i.test(text) || /[<>]/.test(text)) return { kind: 'unknown' };
  const between = text.match(/^(\S+)\s+-\s+(\S+)$/);
  if (between) {
    const low = parseVersion(between[1]);
    const high = parseVersion(between[2]);
    if (!low || !high || low.suffix || high.suffix) return { kind: 'unknown' };
    if (compareParsed(low, high) === 0) return { kind: 'exact', version: low };
    return compareParsed(low, high) < 0 ? { kind: 'between', low, high } : { kind: 'between', low: high, high: low };
  }
  const version = parseVersion(text);
  return version ? { kind: 'exact', version } : { kind: 'unknown' };
}

/**
 * Whether every version a spec allows lies in the range: 'yes', 'no', or 'unknown' (the spec is
 * unreadable, or a reported range only partly overlaps the affected one).
 */
export function specInRange(spec: VersionSpec, range: CompiledRange): 'yes' | 'no' | 'unknown' {
  if (spec.kind === 'unknown') return 'unknown';
  if (spec.kind === 'exact') return inCompiledRange(spec.version, range) ? 'yes' : 'no';
  const low = inCompiledRange(spec.low, range);
  const high = inCompiledRange(spec.high, range);
  if (low && high && !range.exact) return 'yes';
  if (!low && !high) {
    // Both ends outside: no overlap unless the affected range lies strictly inside the reported one.
    const inside = range.exact ? compareParsed(spec.low, range.exact) < 0 && compareParsed(range.exact, spec.high) < 0 : boundsInside(spec, range);
    return inside ? 'unknown' : 'no';
  }
  return 'unknown';
}

function boundsInside(spec: { low: ParsedVersion; high: ParsedVersion }, range: CompiledRange): boolean {
  // Neither end of the reported range is affected: they overlap only when the affected range is
  // bounded on both sides and lies between them.
  const start = range.startIncluding ?? range.startExcluding;
  const end = range.endIncluding ?? range.endExcluding;
  if (!start || !end) return false;
  return compareParsed(spec.low, start) < 0 && compareParsed(end, spec.high) < 0;
}
