import { useState } from 'preact/hooks';
import { apiPage } from '../api';
import { EmptyState, ErrorMessage, Loading, PageHeader, Pager, Time } from '../components/ui';
import { formatDuration, formatNumber } from '../format';
import { useInterval, useResource, useTitle } from '../hooks';
import type { Scan } from '../types';

const PAGE_SIZE = 50;

/** Every scan, newest first, with where to look at its devices and changes. */
export function ScansPage() {
  useTitle('Scan history');
  const [offset, setOffset] = useState(0);
  const scans = useResource((signal) => apiPage<Scan>('/api/scans', { limit: PAGE_SIZE, offset }, signal), [offset]);
  const active = scans.data?.items.some((s) => s.status === 'running' || s.status === 'queued') ?? false;
  useInterval(scans.reload, 2000, active);

  return (
    <>
      <PageHeader title="Scan history">
        <a class="button primary" href="/scan">
          Run a scan
        </a>
      </PageHeader>
      <ErrorMessage error={scans.error} onRetry={scans.reload} />
      {scans.loading && !scans.data && <Loading />}
      {scans.data?.total === 0 && (
        <EmptyState title="No scans yet">
          <a href="/scan">Start a scan</a> to find the devices on your network. Every scan is listed here with its result.
        </EmptyState>
      )}
      {scans.data && scans.data.items.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th class="num">#</th>
                <th>Started</th>
                <th>Target</th>
                <th>Status</th>
                <th class="hide-narrow">Profile</th>
                <th class="num hide-narrow">Duration</th>
                <th class="num">Devices</th>
                <th>Details</th>
              </tr>
            </thead>
            <tbody>
              {scans.data.items.map((s) => (
                <ScanRow key={s.scan_id} scan={s} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {scans.data && <Pager total={scans.data.total} limit={PAGE_SIZE} offset={offset} onChange={setOffset} />}
    </>
  );
}

function ScanRow({ scan }: { scan: Scan }) {
  const running = scan.status === 'running' || scan.status === 'queued';
  return (
    <tr>
      <td class="num">{scan.scan_id}</td>
      <td>
        <Time iso={scan.started_at} />
      </td>
      <td>
        <span class="mono">{scan.target ?? scan.subnet}</span>
        {scan.scan_type === 'device' && <span class="muted small"> (one device)</span>}
      </td>
      <td>
        <span class={`badge status-${scan.status}`}>{scan.status}</span>
        {running && scan.progress && <span class="small muted"> {Math.round(scan.progress.percent)}%</span>}
        {scan.error && <div class="small muted">{scan.error}</div>}
      </td>
      <td class="hide-narrow">{scan.profile}</td>
      <td class="num hide-narrow">{formatDuration(scan.duration_seconds)}</td>
      <td class="num">{formatNumber(scan.devices_found)}</td>
      <td>
        <span class="button-row">
          {running ? (
            <a href="/scan">Follow</a>
          ) : (
            <>
              <a href={`/devices?scan_id=${scan.scan_id}`}>Devices</a>
              <a href={`/changes?scan_id=${scan.scan_id}`}>Changes</a>
            </>
          )}
        </span>
      </td>
    </tr>
  );
}
