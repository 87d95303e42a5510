/**
 * CVSS base scores from vector strings (v3.0, v3.1 and v2), by the formulas of the FIRST
 * specifications. The severity a score means is `core/severity.ts`'s business, not this module's.
 */

/**
 * The base score a CVSS v3.x or v2 vector string gives, or null when the string is not a
 * complete vector. Used to check the dataset (score and vector must agree) and to fill in a
 * score an imported record lacks.
 */
export function cvssBaseScore(vector: string): number | null {
  const parts = new Map<string, string>();
  for (const item of vector.trim().split('/')) {
    const [k, v] = item.split(':');
    if (!k || v === undefined) return null;
    parts.set(k, v);
  }
  const version = parts.get('CVSS');
  if (version === '3.0' || version === '3.1') return cvss3Score(parts);
  // v2 vectors carry no version prefix; `Au` (authentication) is theirs alone.
  if (version === undefined && parts.has('Au')) return cvss2Score(parts);
  return null;
}

const roundUp1 = (x: number): number => {
  // CVSS 3.1's Roundup: the smallest one-decimal number >= x, robust to floating point.
  const i = Math.round(x * 100000);
  return i % 10000 === 0 ? i / 100000 : (Math.floor(i / 10000) + 1) / 10;
};

const V3_WEIGHTS: Record<string, Record<string, number>> = {
  AV: { N: 0.85, A: 0.62, L: 0.55, P: 0.2 },
  AC: { L: 0.77, H: 0.44 },
  UI: { N: 0.85, R: 0.62 },
  C: { H: 0.56, L: 0.22, N: 0 },
  I: { H: 0.56, L: 0.22, N: 0 },
  A: { H: 0.56, L: 0.22, N: 0 },
};
/** Privileges Required weighs more when the scope changes. */
const V3_PR_UNCHANGED: Record<string, number> = { N: 0.85, L: 0.62, H: 0.27 };
const V3_PR_CHANGED: Record<string, number> = { N: 0.85, L: 0.68, H: 0.5 };

function cvss3Score(parts: ReadonlyMap<string, string>): number | null {
  const scope = parts.get('S');
  const pr = parts.get('PR');
  const PR = scope === 'C' ? V3_PR_CHANGED : V3_PR_UNCHANGED;
  const get = (k: string): number | undefined => V3_WEIGHTS[k][parts.get(k) ?? ''];
  const av = get('AV'),
    ac = get('AC'),
    ui = get('UI'),
    c = get('C'),
    i = get('I'),
    a = get('A');
  const prW = pr ? PR[pr] : undefined;
  if ([av, ac, ui, c, i, a, prW].some((x) => x === undefined) || (scope !== 'U' && scope !== 'C')) return null;
  const iss = 1 - (1 - c!) * (1 - i!) * (1 - a!);
  const impact = scope === 'U' ? 6.42 * iss : 7.52 * (iss - 0.029) - 3.25 * Math.pow(iss - 0.02, 15);
  const exploitability = 8.22 * av! * ac! * prW! * ui!;
  if (impact <= 0) return 0;
  return scope === 'U' ? roundUp1(Math.min(impact + exploitability, 10)) : roundUp1(Math.min(1.08 * (impact + exploitability), 10));
}

const V2_WEIGHTS: Record<string, Record<string, number>> = {
  AV: { L: 0.395, A: 0.646, N: 1.0 },
  AC: { H: 0.35, M: 0.61, L: 0.71 },
  Au: { M: 0.45, S: 0.56, N: 0.704 },
  C: { N: 0, P: 0.275, C: 0.66 },
  I: { N: 0, P: 0.275, C: 0.66 },
  A: { N: 0, P: 0.275, C: 0.66 },
};

function cvss2Score(parts: ReadonlyMap<string, string>): number | null {
  const v: Record<string, number> = {};
  for (const k of Object.keys(V2_WEIGHTS)) {
    const w = V2_WEIGHTS[k][parts.get(k) ?? ''];
    if (w === undefined) return null;
    v[k] = w;
  }
  const impact = 10.41 * (1 - (1 - v.C) * (1 - v.I) * (1 - v.A));
  const exploitability = 20 * v.AV * v.AC * v.Au;
  const f = impact === 0 ? 0 : 1.176;
  return Math.round((0.6 * impact + 0.4 * exploitability - 1.5) * f * 10) / 10;
}
