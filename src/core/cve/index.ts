/**
 * Offline CVE matching: which known vulnerabilities the services a scan found are exposed to.
 * Pure functions, no I/O: the shell (src/cve/) loads the shipped dataset and imported data, this
 * module indexes it once and matches scan results against it. Import it from here, not from the
 * modules behind it:
 * - `entry.ts`: the dataset record (TypeBox schema, types) and its validation;
 * - `cvss.ts`: CVSS base scores from vectors; `cpe.ts`: CPE names;
 * - `products.ts`: product aliases, canonical product keys, what products a port is;
 * - `windows.ts`: the Windows releases a scan names;
 * - `match.ts`: the index and the matcher.
 *
 * A port is identified by the CPEs nmap reports (`cpe:/a:openbsd:openssh:8.9p1`) and by its product
 * name (`OpenSSH`, `Apache httpd`, `Microsoft IIS httpd`…), both mapped through an alias table to
 * the CPE vendor:product names the dataset (and NVD) uses. Confidence:
 * - `confirmed`: product and version match an affected range;
 * - `likely`: the entry is version-independent (the scan cannot see the patch level, e.g. SMB on
 *   Windows), or the version carries a distribution suffix (the distribution may have backported
 *   the fix), or the entry says the version does not reveal the patch level.
 * A versioned entry never matches a port whose version is unknown: no guessing, no flood.
 */
export { cvssBaseScore } from './cvss.js';
export { parseCpe, splitCpe23, type ParsedCpe } from './cpe.js';
export { PRODUCT_ALIASES, WINDOWS_KEY, canonicalProductKey, productKeyForName } from './products.js';
export { windowsReleasesIn } from './windows.js';
export { detectionOf, fixedIn, type Detection } from './fixes.js';
export {
  CVE_ID_PATTERN,
  CVSS_VERSIONS,
  CveAffectedSchema,
  CveEntrySchema,
  validateCveEntry,
  type CveAffected,
  type CveEntry,
  type CveEntryCheckOptions,
} from './entry.js';
export {
  buildCveIndex,
  matchCves,
  sortCveMatches,
  type CveConfidence,
  type CveIndex,
  type CveMatch,
  type HostContext,
  type HostCpe,
} from './match.js';
