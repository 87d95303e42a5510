import type { Change } from '../types';
import { SeverityBadge, Time } from './ui';

/**
 * A compact list of changes, newest first: the dashboard's recent changes, and the Changes page
 * on narrow screens, where a table would hide what changed behind sideways scrolling.
 */
export function ChangeList({ changes, showScan = false }: { changes: Change[]; showScan?: boolean }) {
  return (
    <ul class="change-list" aria-label="Changes">
      {changes.map((c) => (
        <li key={c.id}>
          <SeverityBadge severity={c.severity} />
          <span class="change-text">{c.description}</span>
          <span class="change-meta small muted">
            {c.device_id !== null ? <a href={`/devices/${c.device_id}`}>{c.device_ip ?? 'device'}</a> : c.device_ip}
            <Time iso={c.detected_at} />
            {showScan && <a href={`/changes?scan_id=${c.scan_id}`}>scan #{c.scan_id}</a>}
          </span>
        </li>
      ))}
    </ul>
  );
}
