/**
 * The one severity scale: its levels in order, their rank, the CVSS mapping and the risk-score
 * bands. Changes, CVEs, risk findings, device risk levels and notification filters all use it.
 */

/** Severity of a change or a CVE, worst first. */
export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Severity of a risk finding: a finding always matters, so never merely `info`. */
export const FINDING_SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
export type FindingSeverity = (typeof FINDING_SEVERITIES)[number];

/** A device's risk level: its worst finding's severity, or `none` without findings. */
export const RISK_LEVELS = ['critical', 'high', 'medium', 'low', 'none'] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

/** Risk levels a device counts as "at risk" with (stats, dashboards). */
export const AT_RISK_LEVELS = ['critical', 'high', 'medium'] as const satisfies readonly RiskLevel[];

/** Higher is worse. `info` and `none` both mean nothing to act on. */
export const SEVERITY_RANK: Readonly<Record<Severity | RiskLevel, number>> = { none: 0, info: 0, low: 1, medium: 2, high: 3, critical: 4 };

/** The worse of two severities (the first on a tie). */
export function worse<T extends Severity | RiskLevel>(a: T, b: T): T {
  return SEVERITY_RANK[a] >= SEVERITY_RANK[b] ? a : b;
}

/** Sort comparator: worst first. */
export function worstFirst(a: Severity | RiskLevel, b: Severity | RiskLevel): number {
  return SEVERITY_RANK[b] - SEVERITY_RANK[a];
}

/**
 * NVD's qualitative rating of a CVSS base score: critical ≥ 9.0, high ≥ 7.0, medium ≥ 4.0,
 * low > 0, info (NVD's "none") = 0. An unscored CVE counts as medium: unknown is not harmless.
 */
export function severityFromCvss(score: number | null | undefined): Severity {
  if (score === null || score === undefined || !Number.isFinite(score)) return 'medium';
  if (score >= 9) return 'critical';
  if (score >= 7) return 'high';
  if (score >= 4) return 'medium';
  if (score > 0) return 'low';
  return 'info';
}

/** A severity as a finding's: `info` becomes `low` (a finding about it is still worth a look). */
export function asFindingSeverity(severity: Severity): FindingSeverity {
  return severity === 'info' ? 'low' : severity;
}

/** Inclusive risk-score range of each level. */
export const RISK_SCORE_BANDS: Readonly<Record<RiskLevel, { readonly min: number; readonly max: number }>> = {
  none: { min: 0, max: 0 },
  low: { min: 1, max: 14 },
  medium: { min: 15, max: 39 },
  high: { min: 40, max: 69 },
  critical: { min: 70, max: 100 },
};

export function isSeverity(text: string): text is Severity {
  return (SEVERITIES as readonly string[]).includes(text);
}
