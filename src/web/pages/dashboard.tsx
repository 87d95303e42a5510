import { useState } from 'preact/hooks';
import { answer, api, page } from '../api';
import { ChangeList } from '../components/change-list';
import { NewDevicesInbox } from '../components/new-devices';
import { LineChart } from '../components/chart';
import { PeriodSelect } from '../components/period-select';
import { ProgressBar, ScanStatusBadge, scanFailure } from '../components/scan-status';
import { EmptyState, ErrorMessage, Field, Loading, PageHeader, RiskBadge, Time } from '../components/ui';
import { formatDuration, formatNumber, humanize } from '../format';
import { useResource, useTitle } from '../hooks';
import { useRefreshOn, useScanState } from '../live';
import type { Scan, Stats, Trends } from '../types';
import './devices.css';

const AT_RISK_SHOWN = 8;
const CHANGES_SHOWN = 8;

/** The daily overview: counts, trends, what changed, what needs attention, the last scan. */
export function DashboardPage() {
  useTitle('Dashboard');
  const stats = useResource((signal) => answer(api.GET('/api/stats', { signal })), []);
  // Live: the counts follow scans and changes as they happen. Without the stream, they are
  // loaded again when the scan this page watched ends (below).
  const { live } = useRefreshOn(['scan_finished', 'change'], stats.reload);
  return (
    <>
      <PageHeader title="Dashboard">
        <a class="button primary" href="/scans">
          Run a scan
        </a>
      </PageHeader>
      <ErrorMessage error={stats.error} onRetry={stats.reload} />
      {stats.data ? <Tiles stats={stats.data} /> : !stats.error && <Loading />}
      {stats.data?.total_devices === 0 && (
        <EmptyState title="No devices yet">
          Netwarden fills its inventory from scans. <a href="/scans">Run a scan</a> of your network to see your devices here, or set the subnet first
          in <a href="/settings/network">Settings</a>.
        </EmptyState>
      )}
      <NewDevicesInbox />
      <ScanStatusCard onFinished={live ? undefined : stats.reload} />
      <div class="grid-2">
        <Trends />
        <AtRisk />
      </div>
      <RecentChanges />
    </>
  );
}

function Tiles({ stats }: { stats: Stats }) {
  const tiles: { label: string; value: number; href: string; className?: string }[] = [
    { label: 'Devices', value: stats.total_devices, href: '/devices' },
    { label: 'Online', value: stats.online_devices, href: '/devices?online=true' },
    { label: 'Devices at risk', value: stats.devices_at_risk, href: '/devices?sort=risk_score&order=desc' },
    { label: 'Critical', value: stats.critical, href: '/devices?risk_level=critical', className: 'critical' },
    { label: 'High', value: stats.high, href: '/devices?risk_level=high', className: 'high' },
    { label: 'Open ports', value: stats.open_ports, href: '/ports' },
  ];
  return (
    <section class="tiles" aria-label="Summary">
      {tiles.map((tile) => (
        <a key={tile.label} class={`tile ${tile.className ?? ''}`} href={tile.href}>
          <span class="value">{formatNumber(tile.value)}</span>
          <span class="label">{tile.label}</span>
        </a>
      ))}
    </section>
  );
}

/** The running scan with its progress, or the last finished one. */
function ScanStatusCard({ onFinished }: { onFinished?: () => void }) {
  const last = useResource((signal) => page(api.GET('/api/scans', { params: { query: { limit: 1 } }, signal })), []);
  const scan = useScanState(() => {
    last.reload();
    onFinished?.();
  });
  const running = scan.state?.scanning ?? false;
  const lastScan = last.data?.items[0];
  const progress = scan.state?.progress;
  return (
    <section class="card">
      <h2>{running ? 'Scan running' : 'Last scan'}</h2>
      <ErrorMessage
        error={scan.error ?? last.error}
        onRetry={() => {
          scan.reload();
          last.reload();
        }}
      />
      {running && scan.state ? (
        <div>
          <p>
            Scanning <span class="mono">{scan.state.subnet}</span> ({scan.state.profile}): {progress ? humanize(progress.phase) : 'starting'}.{' '}
            <a href="/scans">Follow the scan</a>
          </p>
          <ProgressBar progress={progress} />
        </div>
      ) : lastScan ? (
        <LastScan scan={lastScan} />
      ) : last.loading ? (
        <Loading />
      ) : (
        <p class="muted">
          No scan has run yet. <a href="/scans">Start the first scan</a>.
        </p>
      )}
    </section>
  );
}

function LastScan({ scan }: { scan: Scan }) {
  return (
    <dl class="facts">
      <dt>Status</dt>
      <dd>
        <ScanStatusBadge status={scan.status} />
        {scanFailure(scan) && <span class="error-text"> {scanFailure(scan)}</span>}
      </dd>
      <dt>Target</dt>
      <dd class="mono">{scan.target ?? scan.subnet}</dd>
      <dt>Finished</dt>
      <dd>
        <Time iso={scan.completed_at ?? scan.started_at} />
      </dd>
      <dt>Duration</dt>
      <dd>{formatDuration(scan.duration_seconds)}</dd>
      <dt>Devices found</dt>
      <dd>
        <a href={`/devices?scan_id=${scan.scan_id}`}>{formatNumber(scan.devices_found)}</a> · <a href={`/changes?scan_id=${scan.scan_id}`}>changes</a>
      </dd>
    </dl>
  );
}

function Trends() {
  const [days, setDays] = useState(30);
  const trends = useResource((signal) => answer(api.GET('/api/trends', { params: { query: { days } }, signal })), [days]);
  useRefreshOn(['scan_finished'], trends.reload);
  const points = trends.data?.points ?? [];
  const labels = axisLabels(points.map((p) => p.timestamp));
  return (
    <section class="card">
      <div class="card-header">
        <h2>Trends</h2>
        <Field label="Period">
          <PeriodSelect days={days} onChange={setDays} />
        </Field>
      </div>
      <ErrorMessage error={trends.error} onRetry={trends.reload} />
      {trends.loading && !trends.data && <Loading />}
      {trends.data && points.length < 2 && (
        <EmptyState title="Not enough scans yet">
          Trends appear once two network scans have completed. <a href="/scans">Run a scan</a> to add a point.
        </EmptyState>
      )}
      {points.length >= 2 && (
        <>
          <LineChart
            title="Devices"
            labels={labels}
            series={[
              { name: 'All', values: points.map((p) => p.devices), className: 'series-a' },
              { name: 'At risk', values: points.map((p) => p.at_risk), className: 'series-b' },
              { name: 'Critical or high', values: points.map((p) => p.critical + p.high), className: 'series-c' },
            ]}
          />
          <LineChart
            title="Open ports and changes"
            labels={labels}
            series={[
              { name: 'Open ports', values: points.map((p) => p.open_ports), className: 'series-a' },
              { name: 'Changes', values: points.map((p) => p.changes), className: 'series-d' },
            ]}
          />
        </>
      )}
    </section>
  );
}

/** Dates along the axis; times of day when all the points fall within two days. */
function axisLabels(timestamps: string[]): string[] {
  const times = timestamps.map((t) => new Date(t).getTime());
  const withinTwoDays = times.length > 0 && Math.max(...times) - Math.min(...times) < 2 * 86_400_000;
  const options: Intl.DateTimeFormatOptions = withinTwoDays ? { hour: '2-digit', minute: '2-digit' } : { month: 'short', day: 'numeric' };
  return times.map((t) => new Date(t).toLocaleString(undefined, options));
}

function AtRisk() {
  const devices = useResource(
    (signal) => page(api.GET('/api/devices', { params: { query: { sort: 'risk_score', order: 'desc', limit: AT_RISK_SHOWN } }, signal })),
    [],
  );
  useRefreshOn(['scan_finished', 'device_updated'], devices.reload);
  const atRisk = (devices.data?.items ?? []).filter((d) => d.risk_level === 'critical' || d.risk_level === 'high' || d.risk_level === 'medium');
  return (
    <section class="card">
      <h2>Devices at risk</h2>
      <ErrorMessage error={devices.error} onRetry={devices.reload} />
      {devices.loading && !devices.data && <Loading />}
      {devices.data && atRisk.length === 0 && (
        <EmptyState title="Nothing at medium risk or above">
          {devices.data.total === 0 ? 'Run a scan to assess your devices.' : 'Every known device is at low risk or none. Keep scanning to stay sure.'}
        </EmptyState>
      )}
      {atRisk.length > 0 && (
        <ul class="risk-list">
          {atRisk.map((d) => (
            <li key={d.id}>
              <RiskBadge level={d.risk_level} score={d.risk_score} />
              <a href={`/devices/${d.id}`}>{d.label ?? d.hostname ?? d.ip_address}</a>
              {(d.label ?? d.hostname) && <span class="muted mono small">{d.ip_address}</span>}
            </li>
          ))}
        </ul>
      )}
      {atRisk.length > 0 && (
        <p class="small">
          <a href="/devices?sort=risk_score&order=desc">All devices by risk →</a> · <a href="/risk-map">Risk map →</a>
        </p>
      )}
    </section>
  );
}

function RecentChanges() {
  const changes = useResource((signal) => page(api.GET('/api/changes', { params: { query: { limit: CHANGES_SHOWN } }, signal })), []);
  useRefreshOn(['change'], changes.reload);
  return (
    <section class="card">
      <h2>Recent changes</h2>
      <ErrorMessage error={changes.error} onRetry={changes.reload} />
      {changes.loading && !changes.data && <Loading />}
      {changes.data?.items.length === 0 && (
        <EmptyState title="No changes yet">
          Each scan is compared with the one before; new and vanished devices, opened and closed ports and changed services show up here.
        </EmptyState>
      )}
      {changes.data && changes.data.items.length > 0 && <ChangeList changes={changes.data.items} />}
      {changes.data && changes.data.total > CHANGES_SHOWN && (
        <p class="small">
          <a href="/changes">All {formatNumber(changes.data.total)} changes →</a>
        </p>
      )}
    </section>
  );
}
