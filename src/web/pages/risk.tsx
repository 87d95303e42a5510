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
  product: string | null;
  title: string;
  findings: PriorityFinding[];
  cves: number;
  devices: number;
  kev: PriorityFinding['kev'];
  epss: PriorityFinding['epss'];
}

/**
 * The findings grouped by product (those without one by title), in the order of each group's most
 * urgent finding: the list comes in priority order, so a group's place is its first finding's.
 */
export function groupFindings(findings: PriorityFinding[]): FixGroup[] {
  const groups = new Map<string, PriorityFinding[]>();
  for (const f of findings) {
    const key = f.product ? `product:${f.product}` : `title:${f.title}`;
    const list = groups.get(key);
    if (list) list.push(f);
    else groups.set(key, [f]);
  }
  return [...groups.entries()].map(([key, list]) => {
    const first = list[0];
    const withEpss = list.filter((f) => f.epss).sort((a, b) => (b.epss?.score ?? 0) - (a.epss?.score ?? 0));
    return {
      key,
      product: first.product,
      title: first.title,
      findings: list,
      cves: new Set(list.map((f) => f.cve_id).filter(Boolean)).size,
      devices: new Set(list.map((f) => f.device_id)).size,
      kev: list.find((f) => f.kev)?.kev ?? null,
      epss: withEpss[0]?.epss ?? null,
    };
  });
}

function groupHeading(g: FixGroup): string {
  const on = `on ${plural(g.devices, 'device')}`;
  if (g.product && g.cves > 0) return `Upgrade ${g.product}: fixes ${plural(g.cves, 'CVE')} ${on}`;
  if (g.product) return `${g.product}: ${plural(g.findings.length, 'finding')} ${on}`;
  return `${g.title} ${on}`;
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
