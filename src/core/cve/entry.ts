/**
 * One CVE record of the dataset (shipped with the release or imported from NVD) as a TypeBox
 * schema, and the check the loader, the importer and the tests run on every record: the schema
 * field by field, each failure named the way a dataset maintainer can act on, then what a schema
 * cannot say (a score that disagrees with its vector, version bounds out of order).
 */
import { KindGuard, Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { compareParsed, compileRange } from '../versions.js';
import { cvssBaseScore } from './cvss.js';
import { WINDOWS_ORDER } from './windows.js';

export const CVE_ID_PATTERN = /^CVE-\d{4}-\d{4,}$/;

export const CVSS_VERSIONS = ['2.0', '3.0', '3.1', '4.0'] as const;

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const StringList = Type.Array(Type.String());

const RANGE_FIELDS = ['version', 'versionStartIncluding', 'versionStartExcluding', 'versionEndIncluding', 'versionEndExcluding'] as const;

/** One affected product of a CVE: a CPE vendor:product with NVD-style version bounds (see `VersionRange`). */
export const CveAffectedSchema = Type.Object(
  {
    /** CPE vendor:product as NVD names it, e.g. `openbsd:openssh`, `apache:http_server`. */
    cpe: Type.String({ pattern: '^[^\\sA-Z:]+:[^\\sA-Z:]+$' }),
    version: Type.Optional(Type.String()),
    versionStartIncluding: Type.Optional(Type.String()),
    versionStartExcluding: Type.Optional(Type.String()),
    versionEndIncluding: Type.Optional(Type.String()),
    versionEndExcluding: Type.Optional(Type.String()),
    /** Only on ports whose service is one of these (nmap names: `microsoft-ds`, `ms-wbt-server`…). */
    services: Type.Optional(StringList),
    /** Only when the port shows one of these distributions (lower case: `debian`, `ubuntu`). */
    requiresDistro: Type.Optional(StringList),
    /**
     * Windows releases affected (`xp`, `2003`, `vista`, `2008`, `7`, `2008r2`, `8`, `2012`, `8.1`,
     * `2012r2`, `10`, `2016`, `2019`, `2022`, `11`): a match is dropped when the scan names only other releases.
     */
    windowsReleases: Type.Optional(StringList),
    /** The product alone matches (no version check); confidence is at most `likely`. */
    versionIndependent: Type.Optional(Type.Literal(true)),
    /** The version says which release runs but not its patch level (Windows components): at most `likely`. */
    maxConfidence: Type.Optional(Type.Literal('likely')),
  },
  { additionalProperties: false },
);

/** One CVE as the dataset stores it. */
export const CveEntrySchema = Type.Object(
  {
    id: Type.String({ pattern: CVE_ID_PATTERN.source }),
    /** CVSS base score (v3.x; v2 only where no v3 exists). */
    cvss_score: Nullable(Type.Number({ minimum: 0, maximum: 10 })),
    cvss_vector: Nullable(Type.String()),
    /** `3.1`, `3.0`, `2.0` (or `4.0` for imported records that have nothing else). */
    cvss_version: Nullable(Type.Union(CVSS_VERSIONS.map((v) => Type.Literal(v)))),
    description: Type.String({ pattern: '\\S' }),
    remediation: Nullable(Type.String()),
    references: Type.Array(Type.String({ pattern: '^https?://' })),
    /** Listed in CISA's Known Exploited Vulnerabilities catalog. */
    kev: Type.Boolean(),
    published: Type.Optional(Nullable(Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}' }))),
    /** When the source last changed the record (NVD's lastModified), for imported records. */
    last_modified: Type.Optional(Nullable(Type.String())),
    /** Non-empty in the shipped dataset; an imported record may name no product a scan can see. */
    affected: Type.Array(CveAffectedSchema),
  },
  { additionalProperties: false },
);

export type CveAffected = Static<typeof CveAffectedSchema>;
export type CveEntry = Static<typeof CveEntrySchema>;

export interface CveEntryCheckOptions {
  /** Accept a record with no affected product (imported records). */
  allowEmptyAffected?: boolean;
  /** Check the score against its vector (default); imported records keep the score their source gives. */
  checkScore?: boolean;
}

type Fields = Record<string, unknown>;
/** One check of a record: the problems it finds, in words (without the record's id). */
type Check = (record: Fields, options: CveEntryCheckOptions) => string[];

/** Every field the schema does not know, by name. */
function knownFields(schema: TObject, prefix: string): Check {
  return (record) =>
    Object.keys(record)
      .filter((k) => !Object.hasOwn(schema.properties, k))
      .map((k) => `${prefix}unknown field '${k}'`);
}

/** The field against its schema (an optional field may be absent); `problem` says what it must be. */
function field(schema: TObject, name: string, problem: string | ((value: unknown) => string)): Check {
  const property = schema.properties[name];
  const optional = KindGuard.IsOptional(property);
  return (record) => {
    const value = record[name];
    if ((optional && value === undefined) || Value.Check(property, value)) return [];
    return [typeof problem === 'string' ? problem : problem(value)];
  };
}

/** A CVSS v2/v3 score must be the one its vector gives, and the version the vector's. */
const scoreAgreesWithVector: Check = (e, options) => {
  if (options.checkScore === false || typeof e.cvss_vector !== 'string' || typeof e.cvss_score !== 'number' || e.cvss_version === '4.0') return [];
  const problems: string[] = [];
  const computed = cvssBaseScore(e.cvss_vector);
  if (computed === null) problems.push(`cvss_vector '${e.cvss_vector}' is not a CVSS v2/v3 vector`);
  else if (Math.abs(computed - e.cvss_score) > 0.05) problems.push(`cvss_score ${e.cvss_score} disagrees with its vector (${computed})`);
  const v = e.cvss_vector.match(/^CVSS:(3\.[01])\//)?.[1] ?? '2.0';
  if (e.cvss_version !== v) problems.push(`cvss_version ${String(e.cvss_version)} disagrees with the vector (${v})`);
  return problems;
};

const affectedField = (name: string, problem: string | ((value: unknown) => string)): Check => field(CveAffectedSchema, name, problem);

/** Windows releases are named as `windowsReleasesIn` names them. */
const knownWindowsReleases: Check = (item) =>
  Array.isArray(item.windowsReleases)
    ? (item.windowsReleases as unknown[]).filter((r) => !WINDOWS_ORDER.includes(r as string)).map((r) => `unknown Windows release '${String(r)}'`)
    : [];

const noBoundsWhenVersionIndependent: Check = (item) =>
  item.versionIndependent && RANGE_FIELDS.some((f) => item[f] !== undefined) ? ['a version-independent entry cannot have version bounds'] : [];

/** The bounds must be versions the matcher reads, the start below the end. */
const readableRange: Check = (item) => {
  if (item.versionIndependent) return [];
  try {
    const r = compileRange(item);
    const start = r.startIncluding ?? r.startExcluding;
    const end = r.endIncluding ?? r.endExcluding;
    if (start && end) {
      const c = compareParsed(start, end);
      if (c > 0 || (c === 0 && !(r.startIncluding && r.endIncluding))) return [`range start ${start.raw} is not below its end ${end.raw}`];
    }
    return [];
  } catch (err) {
    return [`affected ${String(item.cpe)}: ${(err as Error).message}`];
  }
};

/** What is checked on a record, in the order problems are reported. */
const ENTRY_CHECKS: readonly Check[] = [
  knownFields(CveEntrySchema, ''),
  field(CveEntrySchema, 'id', 'id must look like CVE-2024-6387'),
  field(CveEntrySchema, 'cvss_score', 'cvss_score must be 0-10 or null'),
  field(CveEntrySchema, 'cvss_vector', 'cvss_vector must be a string or null'),
  field(CveEntrySchema, 'cvss_version', `cvss_version must be ${CVSS_VERSIONS.join(', ')} or null`),
  scoreAgreesWithVector,
  field(CveEntrySchema, 'description', 'description must be a non-empty string'),
  field(CveEntrySchema, 'remediation', 'remediation must be a string or null'),
  field(CveEntrySchema, 'references', 'references must be an array of URLs'),
  field(CveEntrySchema, 'kev', 'kev must be true or false'),
  field(CveEntrySchema, 'published', 'published must be a date (YYYY-MM-DD)'),
  field(CveEntrySchema, 'last_modified', 'last_modified must be a string'),
];

/** What is checked on each affected product, in the order problems are reported. */
const AFFECTED_CHECKS: readonly Check[] = [
  knownFields(CveAffectedSchema, 'affected: '),
  affectedField('cpe', (cpe) => `affected cpe '${String(cpe)}' must be vendor:product in lower case`),
  ...RANGE_FIELDS.map((f) => affectedField(f, `affected ${f} must be a string`)),
  ...['services', 'requiresDistro', 'windowsReleases'].map((f) => affectedField(f, `affected ${f} must be an array of strings`)),
  knownWindowsReleases,
  affectedField('versionIndependent', 'versionIndependent must be true when given'),
  affectedField('maxConfidence', "maxConfidence must be 'likely' when given"),
  noBoundsWhenVersionIndependent,
  readableRange,
];

/**
 * Checks one dataset record and returns the problems found (empty when valid), each prefixed with
 * the record's id. Unknown fields, wrong types, an unreadable range or a bad CVE id are problems;
 * so is a score that disagrees with its vector, unless `checkScore` is false.
 */
export function validateCveEntry(value: unknown, options: CveEntryCheckOptions = {}): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return ['not an object'];
  const e = value as Fields;
  const id = typeof e.id === 'string' ? e.id : '?';
  const problems = ENTRY_CHECKS.flatMap((check) => check(e, options));
  if (!Array.isArray(e.affected) || (e.affected.length === 0 && !options.allowEmptyAffected)) {
    problems.push('affected must be a non-empty array');
  } else {
    for (const item of e.affected as unknown[]) {
      // An array counts as an object here: its indices are reported as unknown fields.
      if (typeof item !== 'object' || item === null) problems.push('affected item must be an object');
      else problems.push(...AFFECTED_CHECKS.flatMap((check) => check(item as Fields, options)));
    }
  }
  return problems.map((p) => `${id}: ${p}`);
}
