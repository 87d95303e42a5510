// Daily risk work (CONTRACT §17, §18): "Fix first" lists the open findings of the whole inventory
// in priority order (known exploited first, then EPSS, then severity and CVSS), grouped by the
// software that has them, so one upgrade reads as one task; "Accepted" lists the acceptances of
// risk in force, with who accepted what, why and until when, and removes them.
import { useState } from 'preact/hooks';
import { answer, api, page } from '../api';
import { Dialog, EmptyState, ErrorMessage, Loading, PageHeader, SeverityBadge, Time } from '../components/ui';
import { formatDateTime, plural } from '../format';
import { useAction, useResource, useTitle } from '../hooks';
import { useRefreshOn } from '../live';
import { SEVERITIES, isOneOf, type Acceptance, type PriorityFinding, type Severity } from '../types';
import './devices.css';
import './risk.css';

/** Findings the Fix first page reads: the API's largest page. */
const FIX_FIRST_LIMIT = 1000;
/** Findings of a group shown at once; the rest behind "N more findings". */
const FINDINGS_SHOWN = 5;

const severityOf = (text: string | null): Severity => (text && isOneOf(SEVERITIES, text) ? text : 'info');
const deviceName = (f: { device_name: string | null; device_ip: string }) => f.device_name || f.device_ip;

/** "Known exploited" (CISA KEV), with ransomware use and the date added in words and on hover. */
export function KevBadge({ kev }: { kev: PriorityFinding['kev'] }) {
  if (!kev) return null;
  const title = [
    "In CISA's Known Exploited Vulnerabilities catalogue",
    kev.date_added ? `since ${kev.date_added}` : '',
    kev.ransomware ? '; used in ransomware campaigns' : '',
  ].join(' ');
  return (
    <span class="badge kev" title={title.replace(' ;', ';')}>
      Known exploited{kev.ransomware ? ' · ransomware' : ''}
    </span>
  );
}

/** The EPSS score as a percentage: the chance of exploitation in the next 30 days. */
export function EpssBadge({ epss }: { epss: PriorityFinding['epss'] }) {
  if (!epss) return null;
  const percent = epss.score * 100;
  const text = percent >= 10 ? percent.toFixed(0) : percent >= 1 ? percent.toFixed(1) : percent.toFixed(2);
  return (
    <span
      class={`badge epss${epss.score >= 0.1 ? ' epss-high' : ''}`}
      title={`EPSS ${epss.as_of}: ${text}% chance of exploitation in the next 30 days (higher than ${(epss.percentile * 100).toFixed(0)}% of CVEs)`}
    >
      EPSS {text}%
    </span>
  );
}

interface FixGroup {
  key: string;
  /** The software without its version ("OpenSSH"); null for findings not tied to one. */
  product: string | null;
  title: string;
  findings: PriorityFinding[];
  cves: number;
  devices: number;
  kev: PriorityFinding['kev'];
  epss: PriorityFinding['epss'];
  /** The lowest version that fixes every CVE of the group, when the CVE data gives one for each. */
  fixedIn: string | null;
  /** CVEs whose fixed version the data gives, and the highest of those versions. */
  fixKnown: number;
  fixKnownVersion: string | null;
  /** CVE findings whose detection is only `likely` (a banner's version, back-ports possible). */
  likely: number;
}

const compareVersions = new Intl.Collator('en', { numeric: true }).compare;
const highest = (versions: string[]) => (versions.length === 0 ? null : versions.reduce((a, b) => (compareVersions(b, a) > 0 ? b : a)));

/**
 * The findings grouped by software (those without one by title), in the order of each group's most
 * urgent finding: the list comes in priority order, so a group's place is its first finding's.
 */
export function groupFindings(findings: PriorityFinding[]): FixGroup[] {
  const groups = new Map<string, PriorityFinding[]>();
  for (const f of findings) {
    const product = f.product_name ?? f.product;
    const key = product ? `product:${product}` : `title:${f.title}`;
    const list = groups.get(key);
    if (list) list.push(f);
    else groups.set(key, [f]);
  }
  return [...groups.entries()].map(([key, list]) => {
    const first = list[0];
    const withEpss = list.filter((f) => f.epss).sort((a, b) => (b.epss?.score ?? 0) - (a.epss?.score ?? 0));
    // One CVE on many devices is one CVE: its fix is the highest version any of them needs.
    const fixes = new Map<string, string | null>();
    for (const f of list) {
      if (!f.cve_id) continue;
      const before = fixes.get(f.cve_id);
      fixes.set(f.cve_id, before === undefined ? f.fixed_in : before === null || f.fixed_in === null ? null : highest([before, f.fixed_in]));
    }
    const known = [...fixes.values()].filter((v): v is string => v !== null);
    return {
      key,
      product: first.product_name ?? first.product,
      title: first.title,
      findings: list,
      cves: fixes.size,
      devices: new Set(list.map((f) => f.device_id)).size,
      kev: list.find((f) => f.kev)?.kev ?? null,
      epss: withEpss[0]?.epss ?? null,
      fixedIn: fixes.size > 0 && known.length === fixes.size ? highest(known) : null,
      fixKnown: known.length,
      fixKnownVersion: highest(known),
      likely: list.filter((f) => f.confidence === 'likely').length,
    };
  });
}

/** "Upgrade OpenSSH to 9.8: fixes 11 CVEs on 3 devices", or what is known when the data names no fixed version for some. */
export function groupHeading(g: FixGroup): string {
  const on = `on ${plural(g.devices, 'device')}`;
  if (g.product && g.cves > 0) {
    return g.fixedIn
      ? `Upgrade ${g.product} to ${g.fixedIn}: fixes ${plural(g.cves, 'CVE')} ${on}`
      : `Upgrade ${g.product}: ${plural(g.cves, 'CVE')} ${on}`;
  }
  if (g.product) return `${g.product}: ${plural(g.findings.length, 'finding')} ${on}`;
  return `${g.title} ${on}`;
}

/** What the CVE data says about the fix when it does not cover the whole group, and how sure the detection is. */
export function groupNotes(g: FixGroup): string[] {
  const notes: string[] = [];
  if (g.cves > 0 && !g.fixedIn) {
    notes.push(
      g.fixKnown > 0
        ? `${g.fixKnownVersion} fixes ${g.fixKnown} of the ${g.cves}; the CVE data names no fixed version for the other ${g.cves - g.fixKnown}: check the vendor's advisories.`
        : "The CVE data names no fixed version: upgrade to the vendor's current release and check its advisories.",
    );
  }
  if (g.likely > 0) {
    notes.push(
      `${g.likely === g.findings.length ? 'All' : `${g.likely} of ${g.findings.length}`} detected with likely confidence: the version came only from the service's banner, and distribution packages back-port fixes without changing it.`,
    );
  }
  return notes;
}

/** "Likely": the detection rests on a banner's version (back-ported fixes possible) or on the product alone; the reason on hover. */
export function ConfidenceBadge({ finding }: { finding: Pick<PriorityFinding, 'confidence' | 'confidence_reason'> }) {
  if (finding.confidence !== 'likely') return null;
  return (
    <span class="badge confidence" title={finding.confidence_reason ?? undefined}>
      Likely
    </span>
  );
}

function FindingList({ findings }: { findings: PriorityFinding[] }) {
  return (
    <ul class="detail-list compact-list">
      {findings.map((f) => (
        <li key={`${f.device_id} ${f.finding_key}`} class="fix-finding">
          <div class="detail-head">
            <SeverityBadge severity={severityOf(f.severity)} />
            <span class={f.cve_id ? 'mono' : undefined}>{f.cve_id ?? f.title}</span>
            <KevBadge kev={f.kev} />
            <EpssBadge epss={f.epss} />
            {f.cvss_score !== null && <span class="small muted">CVSS {f.cvss_score}</span>}
            <ConfidenceBadge finding={f} />
          </div>
          <p class="small">
            <a href={`/devices/${f.device_id}#findings`}>{deviceName(f)}</a>
            {f.port !== null && (
              <span class="muted mono">
                {' '}
                port {f.port}/{f.protocol ?? 'tcp'}
              </span>
            )}
          </p>
        </li>
      ))}
    </ul>
  );
}

export function FixFirstPage() {
  useTitle('Fix first');
  const findings = useResource(
    (signal) => page(api.GET('/api/findings', { params: { query: { order: 'priority', limit: FIX_FIRST_LIMIT } }, signal })),
    [],
  );
  // A scan or an acceptance that changes a device's risk changes this list.
  useRefreshOn(['risk_changed', 'scan_finished'], findings.reload);
  const groups = findings.data ? groupFindings(findings.data.items) : [];
  return (
    <div class="fix-first">
      <PageHeader title="Fix first" />
      <p class="muted">
        Open findings of every device, most urgent first: known exploited vulnerabilities (CISA KEV), then the likeliest to be exploited (EPSS), then
        severity. Findings of the same software are one task. Accepted findings are on the <a href="/accepted">Accepted</a> page.
      </p>
      <ErrorMessage error={findings.error} onRetry={findings.reload} />
      {!findings.data && !findings.error && <Loading label="Loading findings…" />}
      {findings.data && findings.data.items.length === 0 && (
        <EmptyState title="Nothing to fix">No device has an open finding. Scans with service detection find the software to check.</EmptyState>
      )}
      {findings.data && findings.data.total > findings.data.items.length && (
        <p class="small muted">
          The {FIX_FIRST_LIMIT} most urgent of {findings.data.total} findings.
        </p>
      )}
      <ol class="fix-groups">
        {groups.map((g) => (
          <li key={g.key} class="card fix-group">
            <div class="detail-head">
              <h2 class="fix-title">{groupHeading(g)}</h2>
              <KevBadge kev={g.kev} />
              <EpssBadge epss={g.epss} />
            </div>
            {groupNotes(g).map((note) => (
              <p key={note} class="small muted fix-note">
                {note}
              </p>
            ))}
            <FindingList findings={g.findings.slice(0, FINDINGS_SHOWN)} />
            {g.findings.length > FINDINGS_SHOWN && (
              <details class="fix-more">
                <summary>{plural(g.findings.length - FINDINGS_SHOWN, 'more finding')}</summary>
                <FindingList findings={g.findings.slice(FINDINGS_SHOWN)} />
              </details>
            )}
          </li>
        ))}
      </ol>
    </div>
  );
}

export function AcceptedPage() {
  useTitle('Accepted risk');
  const list = useResource((signal) => answer(api.GET('/api/acceptances', { signal })), []);
  useRefreshOn(['risk_changed'], list.reload);
  const [removing, setRemoving] = useState<Acceptance | null>(null);
  return (
    <div class="accepted">
      <PageHeader title="Accepted risk" />
      <p class="muted">
        Findings someone accepted: they stay listed on their device but count toward neither its risk level nor its score. When an acceptance expires
        or is removed, the finding counts again.
      </p>
      <ErrorMessage error={list.error} onRetry={list.reload} />
      {!list.data && !list.error && <Loading label="Loading acceptances…" />}
      {list.data && list.data.length === 0 && (
        <EmptyState title="No accepted risk">
          Accept a finding from its device's page (Accept… beside the finding) when it cannot or need not be fixed.
        </EmptyState>
      )}
      {list.data && list.data.length > 0 && (
        <section class="card" aria-label="Acceptances">
          <ul class="detail-list acceptance-list">
            {list.data.map((a) => (
              <li key={a.id} class="acceptance">
                <div class="detail-head">
                  {a.severity && <SeverityBadge severity={severityOf(a.severity)} />}
                  <strong>{a.title ?? a.finding_key}</strong>
                  <a href={`/devices/${a.device_id}#findings`}>{deviceName(a)}</a>
                </div>
                <p>
                  <span class="muted">Why: </span>
                  {a.reason}
                </p>
                <p class="small">
                  <span class="muted">By </span>
                  {a.by} <Time iso={a.created_at} />
                  <span class="muted"> · </span>
                  {a.expires_at ? <span title={formatDateTime(a.expires_at)}>Until {formatDateTime(a.expires_at)}</span> : 'No expiry'}
                </p>
                {a.title === null && <p class="small muted">The device no longer has this finding ({a.finding_key}).</p>}
                <div class="button-row">
                  <button
                    type="button"
                    class="small-button"
                    onClick={() => setRemoving(a)}
                    aria-label={`Remove acceptance of ${a.title ?? a.finding_key} on ${deviceName(a)}`}
                  >
                    Remove
                  </button>
                </div>
              </li>
            ))}
          </ul>
        </section>
      )}
      <RemoveDialog acceptance={removing} onClose={() => setRemoving(null)} onRemoved={list.reload} />
    </div>
  );
}

function RemoveDialog({ acceptance, onClose, onRemoved }: { acceptance: Acceptance | null; onClose: () => void; onRemoved: () => void }) {
  const remove = useAction(async () => {
    if (!acceptance) return;
    await api.DELETE('/api/acceptances/{id}', { params: { path: { id: acceptance.id } } });
    onClose();
    onRemoved();
  });
  return (
    <Dialog open={acceptance !== null} title="Remove acceptance" onClose={onClose}>
      <p>
        “{acceptance?.title ?? acceptance?.finding_key}” on {acceptance ? deviceName(acceptance) : ''} will count toward the device's risk again.
      </p>
      <ErrorMessage error={remove.error} />
      <div class="button-row">
        <button type="button" class="danger" disabled={remove.busy} onClick={() => void remove.run()}>
          {remove.busy ? 'Removing…' : 'Remove acceptance'}
        </button>
        <button type="button" autoFocus onClick={onClose}>
          Cancel
        </button>
      </div>
    </Dialog>
  );
}
