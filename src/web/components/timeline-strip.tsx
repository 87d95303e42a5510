import { useState } from 'preact/hooks';
import { answer, api } from '../api';
import { formatDuration, plural } from '../format';
import { useResource } from '../hooks';
import type { Timeline } from '../types';
import { PeriodCardHeader } from './period-select';
import { ErrorMessage, Loading } from './ui';

/**
 * A device's timeline (GET /api/devices/{id}/timeline) as one strip: online (green) and offline
 * (grey) bars from the scans that looked for it, a mark at each change; the lists under it say the
 * same in words for screen readers and for exact times.
 */
export function TimelineCard({ deviceId, version }: { deviceId: number; version: number }) {
  const [days, setDays] = useState<number>(30);
  const timeline = useResource(
    (signal) => answer(api.GET('/api/devices/{device_id}/timeline', { params: { path: { device_id: deviceId }, query: { days } }, signal })),
    [deviceId, days, version],
  );
  return (
    <section class="card timeline-card" aria-label="Timeline">
      <PeriodCardHeader title="Timeline" days={days} onChange={setDays} />
      <ErrorMessage error={timeline.error} onRetry={timeline.reload} />
      {timeline.loading && !timeline.data && <Loading />}
      {timeline.data && <Strip timeline={timeline.data} />}
    </section>
  );
}

function Strip({ timeline: t }: { timeline: Timeline }) {
  const start = Date.parse(t.from);
  const end = Date.parse(t.to);
  const span = Math.max(1, end - start);
  const at = (iso: string) => Math.min(100, Math.max(0, ((Date.parse(iso) - start) / span) * 100));
  const seen = t.scans.filter((s) => s.seen).length;
  return (
    <>
      <div class="timeline-strip" role="img" aria-label={`Presence over the last ${t.days} days: ${describe(t)}`}>
        {t.presence.map((p, i) => {
          const left = at(p.from);
          const right = p.to === null ? 100 : at(p.to);
          return (
            <span
              key={i}
              class={`presence ${p.state}`}
              style={{ left: `${left}%`, width: `${Math.max(0.5, right - left)}%` }}
              title={`${p.state} from ${new Date(p.from).toLocaleString()} for ${formatDuration(p.duration_seconds)}`}
            />
          );
        })}
        {t.changes.map((c) => (
          <span
            key={c.id}
            class="mark"
            style={{ left: `${at(c.detected_at)}%` }}
            title={`${new Date(c.detected_at).toLocaleString()}: ${c.description}`}
          />
        ))}
      </div>
      <div class="timeline-axis" aria-hidden="true">
        <span>{new Date(t.from).toLocaleDateString()}</span>
        <span>now</span>
      </div>
      <p class="small muted">
        Seen by {seen} of {plural(t.scans.length, 'scan')} of its network in this period; {plural(t.changes.length, 'change')}.
      </p>
      {t.presence.length > 0 && (
        <ul class="detail-list compact-list" aria-label="Presence intervals">
          {[...t.presence].reverse().map((p, i) => (
            <li key={i}>
              <strong>{p.state === 'online' ? 'Online' : 'Offline'}</strong> since {new Date(p.from).toLocaleString()}
              {p.to ? ` until ${new Date(p.to).toLocaleString()}` : ' (now)'} · {formatDuration(p.duration_seconds)}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function describe(t: Timeline): string {
  if (t.presence.length === 0) return 'no scan of its network in this period';
  return t.presence.map((p) => `${p.state} ${formatDuration(p.duration_seconds)}`).join(', ');
}
