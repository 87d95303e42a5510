// How a scan's state looks wherever it shows: history, dashboard, scan result, device page.
import { humanize } from '../format';
import type { Scan, ScanProgress, ScanStatus } from '../types';

const STATUS_TEXT: Record<ScanStatus, string> = {
  queued: 'Queued',
  running: 'Running',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

/**
 * A scan's status as a badge. Cancelled is neutral (grey), not an error: someone chose to stop
 * it. Only `failed` is red.
 */
export function ScanStatusBadge({ status }: { status: ScanStatus }) {
  return <span class={`badge status-${status}`}>{STATUS_TEXT[status] ?? humanize(status)}</span>;
}

/** Whether the scan has not ended yet. */
export const isActive = (scan: Pick<Scan, 'status'>) => scan.status === 'queued' || scan.status === 'running';

/**
 * The error worth showing for a scan: a failure's message. A cancelled scan's "Cancelled" adds
 * nothing to its badge, so it is not repeated (and never shown as an error).
 */
export function scanFailure(scan: Pick<Scan, 'status' | 'error'>): string | null {
  return scan.status === 'failed' ? (scan.error ?? 'The scan failed.') : null;
}

/** One bar for the whole scan; the percentage beside it. */
export function ProgressBar({ progress }: { progress: ScanProgress | null | undefined }) {
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
