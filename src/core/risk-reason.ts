/**
 * The few words beside a device's risk badge in the list (issue 23 §5): why it has its level,
 * "Telnet remote login exposed", "27 CVEs · 3 exploited", or both. Pure: the API passes the
 * device's open (not accepted) findings and how many of its CVEs are known exploited.
 */
import { SEVERITY_RANK, type Severity } from './severity.js';

export interface ReasonFinding {
  kind: string | null;
  title: string;
  severity: string;
  cve_id: string | null;
}

const rank = (s: string) => SEVERITY_RANK[s as Severity] ?? 0;

/**
 * The worst rule or policy finding's title (with "+N" for the other ones), and the count of
 * distinct CVEs with the known exploited among them; the part with the worse severity first.
 * Null without open findings.
 */
export function riskReason(findings: readonly ReasonFinding[], exploited: ReadonlySet<string>): string | null {
  const cves = new Set<string>();
  let worstCve = 0;
  const others: ReasonFinding[] = [];
  for (const f of findings) {
    if (f.kind === 'cve' && f.cve_id) {
      cves.add(f.cve_id);
      worstCve = Math.max(worstCve, rank(f.severity));
    } else others.push(f);
  }
  const parts: { text: string; rank: number }[] = [];
  if (others.length > 0) {
    const worst = others.reduce((a, b) => (rank(b.severity) > rank(a.severity) ? b : a));
    const more = new Set(others.map((f) => f.title)).size - 1;
    parts.push({ text: more > 0 ? `${worst.title} +${more}` : worst.title, rank: rank(worst.severity) });
  }
  if (cves.size > 0) {
    const known = [...cves].filter((id) => exploited.has(id)).length;
    const text = `${cves.size} CVE${cves.size === 1 ? '' : 's'}${known > 0 ? ` · ${known} exploited` : ''}`;
    parts.push({ text, rank: known > 0 ? 5 : worstCve });
  }
  if (parts.length === 0) return null;
  return parts
    .sort((a, b) => b.rank - a.rank)
    .map((p) => p.text)
    .join(' · ');
}
