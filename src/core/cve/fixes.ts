/**
 * Which version fixes a CVE for a port (the Fix first page's "upgrade OpenSSH to 9.8"): the upper
 * bound (`versionEndExcluding`) of the affected ranges of the matched product that the detected
 * version lies in. Pure.
 * Unknown (null) when the version cannot be read, when no affected range contains it, or when a
 * range that contains it gives no exclusive upper bound (`versionEndIncluding`, an exact version,
 * no bound, or a version-independent entry): the data then does not say which release fixes it.
 */
import { compareVersions, distroIn, inRange, parseVersion } from '../versions.js';
import type { CveAffected } from './entry.js';
import { canonicalProductKey, productKeyForName } from './products.js';

export function fixedIn(affected: readonly CveAffected[], version: string | null | undefined, product?: string | null): string | null {
  if (!parseVersion(version)) return null;
  // Only the ranges of the product that matched: a CVE naming several products (Terrapin: OpenSSH,
  // Dropbear, libssh…) has ranges whose versions mean nothing for the others.
  const key = productKeyForName(product);
  const own = key === null ? [] : affected.filter((a) => canonicalProductKey(a.cpe) === key);
  let best: string | null = null;
  let unknown = false;
  for (const a of own.length > 0 ? own : affected) {
    if (a.versionIndependent) continue;
    let contains: boolean | null;
    try {
      contains = inRange(version, a);
    } catch {
      continue;
    }
    if (!contains) continue;
    if (!a.versionEndExcluding) {
      unknown = true;
      continue;
    }
    if (best === null || compareVersions(a.versionEndExcluding, best) > 0) best = a.versionEndExcluding;
  }
  return unknown ? null : best;
}

export interface Detection {
  confidence: 'confirmed' | 'likely';
  reason: string;
}

/**
 * How sure a CVE match is, in words for the findings list: the stored confidence (match.ts), and
 * why. A `likely` match whose port shows a distribution (in its version or extra info) had its
 * version only from the service's banner, which a distribution's back-ported fix does not change.
 */
export function detectionOf(confidence: string, port: { version: string | null; extra_info: string | null }): Detection {
  if (confidence === 'confirmed') return { confidence, reason: 'The product and version read from the service match an affected range.' };
  const distro = distroIn(port.version) ?? distroIn(port.extra_info);
  return {
    confidence: 'likely',
    reason: distro
      ? `The version comes only from the service's banner and the package is ${distro}'s, which back-ports fixes without changing the version: check the installed package against ${distro}'s advisory.`
      : 'The scan cannot see the patch level (the product matches, or the version names the release only): check that the fix is installed.',
  };
}
