import { useEffect, useState } from 'preact/hooks';
import { api, apiPage } from '../api';
import { ProfileSelect } from '../components/profile-select';
import { ErrorMessage, Field, Loading, Notice, PageHeader, Time } from '../components/ui';
import { formatDuration, formatNumber, humanize, plural } from '../format';
import { useAction, useInterval, useResource, useTitle } from '../hooks';
import type { Config, Scan, ScanProfile, ScanProgress, ScanStarted, ScanState } from '../types';

const POLL_MS = 1000;

/** Start a scan and follow it live; when none runs, the last scan's result. */
export function ScanPage() {
  useTitle('Scan');
  const config = useResource((signal) => api<Config>('/api/config', { signal }), []);
  const status = useResource((signal) => api<ScanState>('/api/scan/status', { signal }), []);
  // The scan to report on: the one started or watched here, else the latest.
  const [watchedId, setWatchedId] = useState<number | null>(null);
  const running = status.data?.scanning ?? false;
  useInterval(status.reload, POLL_MS, running);

  useEffect(() => {
    if (status.data?.scan_id) setWatchedId(status.data.scan_id);
  }, [status.data?.scan_id]);

  return (
    <>
      <PageHeader title="Scan" />
      <ErrorMessage error={status.error} onRetry={status.reload} />
      {running && status.data ? (
        <RunningScan state={status.data} onCancelled={status.reload} />
      ) : (
        <StartForm
          config={config.data}
          configError={config.error}
          onStarted={(id) => {
            setWatchedId(id);
            status.reload();
          }}
        />
      )}
      {!running && status.data && <ScanResult scanId={watchedId} />}
    </>
  );
}

function StartForm({ config, configError, onStarted }: { config?: Config; configError: unknown; onStarted: (scanId: number) => void }) {
  const [profile, setProfile] = useState<ScanProfile | null>(null);
  const [subnet, setSubnet] = useState('');
  const chosen = profile ?? config?.scanning.default_profile ?? 'normal';

  const start = useAction(async () => {
    const started = await api<ScanStarted>('/api/scan/trigger', { method: 'POST', query: { profile: chosen, subnet: subnet.trim() || undefined } });
    onStarted(started.scan_id);
  });
  const submit = (event: Event) => {
    event.preventDefault();
    void start.run();
  };

  return (
    <form class="card" onSubmit={submit}>
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

function RunningScan({ state, onCancelled }: { state: ScanState; onCancelled: () => void }) {
  const progress = state.progress;
  const cancel = useAction(async () => {
    if (state.scan_id === null) return;
    await api(`/api/scans/${state.scan_id}/cancel`, { method: 'POST' });
    onCancelled();
  });

  return (
    <section class="card" aria-live="polite">
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

function ProgressBar({ progress }: { progress: ScanProgress | null }) {
  const percent = Math.round(progress?.percent ?? 0);
  return (
    <div class="progress-row">
      <div class="progress" role="progressbar" aria-label="Scan progress" aria-valuemin={0} aria-valuemax={100} aria-valuenow={percent}>
        <div style={{ width: `${percent}%` }} />
      </div>
      <span class="progress-percent">{percent}%</span>
    </div>
  );
}

function hostsText(progress: ScanProgress | null): string {
  if (!progress) return '—';
  const found = plural(progress.hosts_found, 'device') + ' found';
  if (progress.hosts_total === null) return found;
  return `${formatNumber(progress.hosts_done)} of ${plural(progress.hosts_total, 'address', 'addresses')} done, ${found}`;
}

/** The outcome of one scan (or of the latest, when `scanId` is null), with where to look next. */
function ScanResult({ scanId }: { scanId: number | null }) {
  const scan = useResource(
    async (signal) =>
      scanId === null ? ((await apiPage<Scan>('/api/scans', { limit: 1 }, signal)).items[0] ?? null) : api<Scan>(`/api/scans/${scanId}`, { signal }),
    [scanId],
  );
  if (scan.error) return <ErrorMessage error={scan.error} onRetry={scan.reload} />;
  if (scan.data === undefined) return <Loading />;
  if (scan.data === null) return <Notice>No scan has run yet. Choose a profile and start the first one above.</Notice>;
  const s = scan.data;
  return (
    <section class="card">
      <h2>{scanId === null ? 'Last scan' : `Scan #${s.scan_id}`}</h2>
      <p>
        The {s.scan_type === 'device' ? 'device' : 'network'} scan of <span class="mono">{s.target ?? s.subnet}</span>{' '}
        <span class={`badge status-${s.status}`}>{s.status}</span> <Time iso={s.completed_at ?? s.started_at} />.
      </p>
      {s.error && <ErrorMessage error={new Error(s.error)} />}
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
