import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { api, apiPage, withQuery } from '../api';
import { ProfileSelect } from '../components/profile-select';
import { ProgressBar, ScanStatusBadge, isActive, scanFailure } from '../components/scan-status';
import { EmptyState, ErrorMessage, Field, Loading, PageHeader, Pager, Time } from '../components/ui';
import { formatDuration, formatNumber, humanize, plural } from '../format';
import { useAction, useInterval, useResource, useTitle, type Resource } from '../hooks';
import { useRefreshOn, useScanState } from '../live';
import type { Config, Scan, ScanProfile, ScanProgress, ScanStarted, ScanState } from '../types';

const PAGE_SIZE = 25;
/** How often the history is asked for while a scan is queued or running and the event stream is down. */
const HISTORY_POLL_MS = 2000;

/**
 * Scans in one place: start one (or follow and cancel the running one) at the top, the result of
 * the scan just watched, and the history below with queued scans and their cancel buttons.
 * `?scan=<id>` shows that scan's result (the set-up wizard links here after the first scan).
 */
export function ScansPage() {
  useTitle('Scans');
  const { query, path, route } = useLocation();
  const offset = /^\d+$/.test(query.offset ?? '') ? Number(query.offset) : 0;
  const linked = /^\d+$/.test(query.scan ?? '') ? Number(query.scan) : null;
  const [resultId, setResultId] = useState<number | null>(linked);
  useEffect(() => setResultId(linked), [linked]);

  const config = useResource((signal) => api<Config>('/api/config', { signal }), []);
  const history = useResource((signal) => apiPage<Scan>('/api/scans', { limit: PAGE_SIZE, offset }, signal), [offset]);
  const scan = useScanState((id) => {
    setResultId(id);
    history.reload();
  });
  const { live } = useRefreshOn(['scan_queued', 'scan_started', 'scan_finished'], history.reload);
  const anyActive = history.data?.items.some(isActive) ?? false;
  useInterval(history.reload, HISTORY_POLL_MS, !live && anyActive);

  const running = scan.state?.scanning ?? false;
  const setOffset = (next: number) => route(withQuery(path, { offset: next || undefined }), true);

  return (
    <>
      <PageHeader title="Scans" />
      <ErrorMessage error={scan.error} onRetry={scan.reload} />
      {running && scan.state ? (
        // Live, the scan_finished event ends it; without the stream, ask at once.
        <RunningScan state={scan.state} onCancelled={scan.live ? undefined : scan.reload} />
      ) : (
        <StartForm
          config={config.data}
          configError={config.error}
          onStarted={(started) => {
            setResultId(null);
            scan.started(started.scan_id, started.subnet, started.profile);
            history.reload();
          }}
        />
      )}
      {!running && resultId !== null && <ScanResult scanId={resultId} />}
      <History history={history} offset={offset} onPage={setOffset} running={scan.state} />
    </>
  );
}

function StartForm({ config, configError, onStarted }: { config?: Config; configError: unknown; onStarted: (started: ScanStarted) => void }) {
  const [profile, setProfile] = useState<ScanProfile | null>(null);
  const [subnet, setSubnet] = useState('');
  const chosen = profile ?? config?.scanning.default_profile ?? 'normal';

  const start = useAction(async () => {
    const started = await api<ScanStarted>('/api/scan/trigger', { method: 'POST', query: { profile: chosen, subnet: subnet.trim() || undefined } });
    onStarted(started);
  });
  const submit = (event: Event) => {
    event.preventDefault();
    void start.run();
  };

  return (
    <form class="card" onSubmit={submit} aria-label="Start a scan">
      <h2>Start a scan</h2>
      <ErrorMessage error={configError} />
      <ErrorMessage error={start.error} />
      <div class="grid-2">
        <ProfileSelect value={chosen} onChange={setProfile} />
        <Field
          label="Subnet"
          hint={
            config ? (
              <>
                Leave empty to scan <span class="mono">{config.network.subnet}</span> (from <a href="/settings">Settings</a>). A CIDR such as
                192.168.1.0/24 or one address.
              </>
            ) : (
              'A CIDR such as 192.168.1.0/24 or one address.'
            )
          }
        >
          <input
            name="subnet"
            value={subnet}
            placeholder={config?.network.subnet ?? '192.168.1.0/24'}
            onInput={(e) => setSubnet(e.currentTarget.value)}
          />
        </Field>
      </div>
      <button type="submit" class="primary" disabled={start.busy}>
        {start.busy ? 'Starting…' : 'Start scan'}
      </button>
    </form>
  );
}

function RunningScan({ state, onCancelled }: { state: ScanState; onCancelled?: () => void }) {
  const progress = state.progress;
  const cancel = useAction(async () => {
    if (state.scan_id === null) return;
    await api(`/api/scans/${state.scan_id}/cancel`, { method: 'POST' });
    onCancelled?.();
  });

  return (
    <section class="card" aria-live="polite" aria-label="Running scan">
      <h2>
        Scanning <span class="mono">{state.subnet}</span>
      </h2>
      <ErrorMessage error={cancel.error} />
      <ProgressBar progress={progress} />
      <dl class="facts">
        <dt>Profile</dt>
        <dd>{state.profile}</dd>
        <dt>Phase</dt>
        <dd>{progress ? humanize(progress.phase) : 'Starting'}</dd>
        <dt>Hosts</dt>
        <dd>{hostsText(progress)}</dd>
        {progress?.current_host && (
          <>
            <dt>Now checking</dt>
            <dd class="mono">{progress.current_host}</dd>
          </>
        )}
        <dt>Elapsed</dt>
        <dd>{formatDuration(progress?.elapsed_seconds)}</dd>
        <dt>Time left</dt>
        <dd>
          {progress?.eta_seconds === null || progress?.eta_seconds === undefined ? 'estimating…' : `about ${formatDuration(progress.eta_seconds)}`}
        </dd>
      </dl>
      <button type="button" class="danger" disabled={cancel.busy} onClick={() => void cancel.run()}>
        {cancel.busy ? 'Cancelling…' : 'Cancel scan'}
      </button>
    </section>
  );
}

function hostsText(progress: ScanProgress | null): string {
  if (!progress) return '—';
  const found = plural(progress.hosts_found, 'device') + ' found';
  if (progress.hosts_total === null) return found;
  return `${formatNumber(progress.hosts_done)} of ${plural(progress.hosts_total, 'address', 'addresses')} done, ${found}`;
}

/** The outcome of the scan just watched (or linked to), with where to look next. */
function ScanResult({ scanId }: { scanId: number }) {
  const scan = useResource((signal) => api<Scan>(`/api/scans/${scanId}`, { signal }), [scanId]);
  if (scan.error) return <ErrorMessage error={scan.error} onRetry={scan.reload} />;
  if (!scan.data) return <Loading />;
  const s = scan.data;
  const failure = scanFailure(s);
  return (
    <section class="card" aria-label="Scan result">
      <h2>Scan #{s.scan_id}</h2>
      <p>
        The {s.scan_type === 'device' ? 'device' : 'network'} scan of <span class="mono">{s.target ?? s.subnet}</span>{' '}
        <ScanStatusBadge status={s.status} /> <Time iso={s.completed_at ?? s.started_at} />.
      </p>
      {failure && <ErrorMessage error={new Error(failure)} />}
      <dl class="facts">
        <dt>Profile</dt>
        <dd>{s.profile}</dd>
        <dt>Duration</dt>
        <dd>{formatDuration(s.duration_seconds)}</dd>
        <dt>Devices found</dt>
        <dd>{formatNumber(s.devices_found)}</dd>
        <dt>Started by</dt>
        <dd>{s.triggered_by ?? '—'}</dd>
      </dl>
      <div class="button-row">
        <a class="button" href={`/devices?scan_id=${s.scan_id}`}>
          View devices
        </a>
        <a class="button" href={`/changes?scan_id=${s.scan_id}`}>
          View changes
        </a>
      </div>
    </section>
  );
}

interface HistoryProps {
  history: Resource<{ items: Scan[]; total: number }>;
  offset: number;
  onPage: (offset: number) => void;
  /** The running scan as events report it: fresher progress than the list's. */
  running: ScanState | undefined;
}

function History({ history, offset, onPage, running }: HistoryProps) {
  const data = history.data;
  return (
    <section class="card" aria-labelledby="scan-history">
      <h2 id="scan-history">History</h2>
      <ErrorMessage error={history.error} onRetry={history.reload} />
      {history.loading && !data && <Loading />}
      {data?.total === 0 && (
        <EmptyState title="No scans yet">
          Start a scan above to find the devices on your network. Every scan is listed here with its result.
        </EmptyState>
      )}
      {data && data.items.length > 0 && (
        <div class="table-wrap">
          <table aria-label="Scan history">
            <thead>
              <tr>
                <th class="num">#</th>
                <th>Started</th>
                <th>Target</th>
                <th>Status</th>
                <th class="hide-narrow">Profile</th>
                <th class="hide-narrow">Started by</th>
                <th class="num hide-narrow">Duration</th>
                <th class="num">Devices</th>
                <th>Details</th>
              </tr>
            </thead>
            <tbody>
              {data.items.map((s) => (
                <ScanRow
                  key={s.scan_id}
                  scan={s}
                  progress={running?.scanning && running.scan_id === s.scan_id ? running.progress : s.progress}
                  onCancelled={history.reload}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {data && <Pager total={data.total} limit={PAGE_SIZE} offset={offset} onChange={onPage} />}
    </section>
  );
}

function ScanRow({ scan, progress, onCancelled }: { scan: Scan; progress: ScanProgress | null; onCancelled: () => void }) {
  const active = isActive(scan);
  const failure = scanFailure(scan);
  const cancel = useAction(async () => {
    await api(`/api/scans/${scan.scan_id}/cancel`, { method: 'POST' });
    onCancelled();
  });
  return (
    <tr>
      <td class="num">{scan.scan_id}</td>
      <td>{scan.status === 'queued' ? <span class="muted">waiting</span> : <Time iso={scan.started_at} />}</td>
      <td>
        <span class="mono">{scan.target ?? scan.subnet}</span>
        {scan.scan_type === 'device' && <span class="muted small"> (one device)</span>}
      </td>
      <td>
        <ScanStatusBadge status={scan.status} />
        {scan.status === 'running' && progress && <span class="small muted"> {Math.round(progress.percent)}%</span>}
        {failure && <div class="small error-text">{failure}</div>}
      </td>
      <td class="hide-narrow">{scan.profile}</td>
      <td class="hide-narrow">{scan.triggered_by ?? '—'}</td>
      <td class="num hide-narrow">{formatDuration(scan.duration_seconds)}</td>
      <td class="num">{active ? '—' : formatNumber(scan.devices_found)}</td>
      <td>
        <span class="button-row">
          {active ? (
            <button
              type="button"
              class="small-button"
              aria-label={`Cancel scan #${scan.scan_id}`}
              disabled={cancel.busy}
              onClick={() => void cancel.run()}
            >
              {cancel.busy ? 'Cancelling…' : 'Cancel'}
            </button>
          ) : (
            <>
              <a href={`/devices?scan_id=${scan.scan_id}`}>Devices</a>
              <a href={`/changes?scan_id=${scan.scan_id}`}>Changes</a>
            </>
          )}
        </span>
        <ErrorMessage error={cancel.error} />
      </td>
    </tr>
  );
}

/** `/scan` (the old Scan page, in bookmarks and old links) is now the top of `/scans`. */
export function ScanRedirect() {
  const { route, query } = useLocation();
  useEffect(() => route(withQuery('/scans', query), true), [route, query]);
  return null;
}
