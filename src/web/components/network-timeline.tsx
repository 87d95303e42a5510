import { useState } from 'preact/hooks';
import { answer, api } from '../api';
import { plural } from '../format';
import { useResource } from '../hooks';
import { useRefreshOn } from '../live';
import { PeriodCardHeader } from './period-select';
import { ErrorMessage, Loading } from './ui';

/**
 * The network's timeline on the Changes page: per day with a completed network scan, how many scans
 * ran and how many changes they found (from GET /api/trends?days=, one point per scan), as bars.
 */
export function NetworkTimeline() {
  const [days, setDays] = useState<number>(30);
  const trends = useResource((signal) => answer(api.GET('/api/trends', { params: { query: { days } }, signal })), [days]);
  useRefreshOn(['scan_finished'], trends.reload);
  const byDay = new Map<string, { scans: number; changes: number }>();
  for (const p of trends.data?.points ?? []) {
    const day = p.timestamp.slice(0, 10);
    const entry = byDay.get(day) ?? { scans: 0, changes: 0 };
    entry.scans += 1;
    entry.changes += p.changes;
    byDay.set(day, entry);
  }
  const entries = [...byDay.entries()];
  const most = Math.max(1, ...entries.map(([, e]) => e.changes));
  const totalChanges = entries.reduce((n, [, e]) => n + e.changes, 0);
  const totalScans = entries.reduce((n, [, e]) => n + e.scans, 0);
  return (
    <section class="card" aria-label="Network timeline">
      <PeriodCardHeader title="Network timeline" days={days} onChange={setDays} />
      <ErrorMessage error={trends.error} onRetry={trends.reload} />
      {trends.loading && !trends.data && <Loading />}
      {trends.data && (
        <>
          <div
            class="day-bars"
            role="img"
            aria-label={`${plural(totalScans, 'scan')} and ${plural(totalChanges, 'change')} over ${plural(entries.length, 'day')} with scans in the last ${days} days`}
          >
            {entries.map(([day, e]) => (
              <span key={day} class="day-bar" title={`${day}: ${plural(e.scans, 'scan')}, ${plural(e.changes, 'change')}`}>
                <span class="day-bar-fill" style={{ height: `${Math.max(4, (e.changes / most) * 100)}%` }} />
              </span>
            ))}
          </div>
          <p class="small muted">
            {entries.length === 0
              ? `No completed network scan in the last ${days} days.`
              : `${plural(totalScans, 'scan')} on ${plural(entries.length, 'day')}, ${plural(totalChanges, 'change')}; each bar is a day, its height the changes found that day.`}
          </p>
        </>
      )}
    </section>
  );
}
