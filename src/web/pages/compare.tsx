import { useLocation } from 'preact-iso';
import { answer, api, idParam, page, withQuery } from '../api';
import { EmptyState, ErrorMessage, Field, Loading, Notice, PageHeader, Time } from '../components/ui';
import { formatNumber, plural } from '../format';
import { useResource, useTitle } from '../hooks';
import { useRefreshOn } from '../live';
import type { Comparison, DeviceComparison, Scan } from '../types';

/** Completed scans offered in the pickers; older ones stay reachable through links that carry their ids. */
const SCANS_OFFERED = 200;

const GROUPS = [
  { status: 'added', title: 'Added', hint: 'seen now, not before' },
  { status: 'removed', title: 'Removed', hint: 'seen before, not now' },
  { status: 'moved', title: 'Moved', hint: 'the same device at another address' },
  { status: 'changed', title: 'Changed', hint: 'ports, services or risk differ' },
  { status: 'unchanged', title: 'Unchanged', hint: 'as before' },
] as const;

/**
 * Two completed scans compared (GET /api/scans/{current}/compare/{previous}): `?current=&previous=`
 * in the URL; without them, the latest two completed scans of the latest scan's subnet.
 * Live: the scan list is loaded again when a scan finishes, so a compare of "the latest two" moves
 * to the new scans by itself; a compare pinned to a scan (`current` in the URL) stays, with a notice
 * that a newer scan of its subnet exists and a link to compare that one.
 */
export function ComparePage() {
  useTitle('Compare scans');
  const { query, path, route } = useLocation();
  const scans = useResource((signal) => page(api.GET('/api/scans', { params: { query: { limit: SCANS_OFFERED } }, signal })), []);
  useRefreshOn(['scan_finished'], scans.reload);
  const completed = (scans.data?.items ?? []).filter((s) => s.status === 'completed');
  const current = idParam(query.current ?? '') ?? completed[0]?.scan_id;
  const previous = idParam(query.previous ?? '') ?? previousOf(completed, current)?.scan_id;
  const all = query.all === 'true';
  const pinned = idParam(query.current ?? '') !== undefined;
  const newer = pinned ? newerScanOf(completed, current) : undefined;
  const set = (next: Record<string, string | undefined>) =>
    route(
      withQuery(path, {
        current: current ? String(current) : undefined,
        previous: previous ? String(previous) : undefined,
        all: all ? 'true' : undefined,
        ...next,
      }),
      true,
    );

  return (
    <>
      <PageHeader title="Compare scans">
        {current && previous && current !== previous && (
          <a class="button" href={`/api/scans/${current}/compare/${previous}?format=text`} download={`netwarden-compare-${current}-${previous}.txt`}>
            Text (ndiff)
          </a>
        )}
      </PageHeader>
      <ErrorMessage error={scans.error} onRetry={scans.reload} />
      <form class="filters" aria-label="Scans to compare" onSubmit={(e) => e.preventDefault()}>
        <ScanPicker label="Before" value={previous} scans={completed} onChange={(id) => set({ previous: id })} />
        <ScanPicker label="After" value={current} scans={completed} onChange={(id) => set({ current: id })} />
        <label class="checkbox">
          <input type="checkbox" checked={all} onChange={(e) => set({ all: e.currentTarget.checked ? 'true' : undefined })} /> Show unchanged devices
        </label>
      </form>
      {newer && current !== undefined && (
        <Notice>
          <span>
            A newer scan exists: #{newer.scan_id} of <span class="mono">{newer.target ?? newer.subnet}</span> (<Time iso={newer.completed_at} />
            ).{' '}
            <a href={withQuery(path, { current: String(newer.scan_id), previous: String(current), all: all ? 'true' : undefined })}>
              Compare it with scan #{current}
            </a>{' '}
            or <a href={withQuery(path, { all: all ? 'true' : undefined })}>follow the latest scans</a>.
          </span>
        </Notice>
      )}
      {scans.loading && !scans.data && <Loading />}
      {scans.data && (!current || !previous) && (
        <EmptyState title="Two completed scans are needed">Run or import a second scan of a network to see what changed between them.</EmptyState>
      )}
      {current && previous && <ComparisonView current={current} previous={previous} all={all} />}
    </>
  );
}

/** The newest completed scan of `current`'s subnet that is newer than it (`completed` is newest first), if any. */
function newerScanOf(completed: Scan[], current: number | undefined): Scan | undefined {
  if (current === undefined) return undefined;
  const of = completed.find((s) => s.scan_id === current);
  if (!of) return undefined;
  return completed.find((s) => s.scan_id > current && s.subnet === of.subnet);
}

/** The completed scan before `current` of the same subnet, else the one before it at all (`completed` is newest first). */
function previousOf(completed: Scan[], current: number | undefined): Scan | undefined {
  if (current === undefined) return undefined;
  const of = completed.find((s) => s.scan_id === current);
  const older = completed.filter((s) => s.scan_id < current);
  return older.find((s) => s.subnet === of?.subnet) ?? older[0];
}

function ScanPicker({ label, value, scans, onChange }: { label: string; value: number | undefined; scans: Scan[]; onChange: (id: string) => void }) {
  return (
    <Field label={label}>
      <select value={value ? String(value) : ''} onChange={(e) => onChange(e.currentTarget.value)}>
        {value !== undefined && !scans.some((s) => s.scan_id === value) && <option value={String(value)}>Scan #{value}</option>}
        {scans.map((s) => (
          <option key={s.scan_id} value={String(s.scan_id)}>
            #{s.scan_id} {s.target ?? s.subnet} · {s.completed_at ? new Date(s.completed_at).toLocaleString() : s.status}
          </option>
        ))}
      </select>
    </Field>
  );
}

function ComparisonView({ current, previous, all }: { current: number; previous: number; all: boolean }) {
  const result = useResource(
    (signal) =>
      answer(
        api.GET('/api/scans/{current_id}/compare/{previous_id}', {
          params: { path: { current_id: current, previous_id: previous }, query: { include_unchanged: all || undefined } },
          signal,
          // The JSON answer (the route also answers text/plain with format=text, not asked for here).
        }),
      ) as Promise<Comparison>,
    [current, previous, all],
  );
  if (result.error) return <ErrorMessage error={result.error} onRetry={result.reload} />;
  if (!result.data) return <Loading />;
  const c = result.data;
  return (
    <>
      <Summary comparison={c} />
      {c.devices.length === 0 && (
        <EmptyState title="No differences">Both scans saw the same devices at the same addresses, with the same ports, services and risk.</EmptyState>
      )}
      {GROUPS.map((g) => {
        const devices = c.devices.filter((d) => d.status === g.status);
        if (devices.length === 0) return null;
        return (
          <section class="card compare-group" key={g.status} aria-label={`${g.title} devices`}>
            <h2>
              {g.title}{' '}
              <span class="muted small">
                ({formatNumber(devices.length)}: {g.hint})
              </span>
            </h2>
            <ul class="compare-list">
              {devices.map((d) => (
                <DeviceItem key={d.device_id} device={d} />
              ))}
            </ul>
          </section>
        );
      })}
    </>
  );
}

function Summary({ comparison: c }: { comparison: Comparison }) {
  const s = c.summary;
  const items: [string, number][] = [
    ['Added', s.devices_added],
    ['Removed', s.devices_removed],
    ['Moved', s.devices_moved],
    ['Changed', s.devices_changed],
    ['Ports opened', s.ports_opened],
    ['Ports closed', s.ports_closed],
    ['Services changed', s.services_changed],
    ['Risk changed', s.risk_changed],
  ];
  return (
    <section class="card" aria-label="Comparison summary">
      <p>
        Scan <a href={`/scans?scan=${c.previous.scan_id}`}>#{c.previous.scan_id}</a> of{' '}
        <span class="mono">{c.previous.target ?? c.previous.subnet}</span> (<Time iso={c.previous.completed_at} />) → scan{' '}
        <a href={`/scans?scan=${c.current.scan_id}`}>#{c.current.scan_id}</a> of <span class="mono">{c.current.target ?? c.current.subnet}</span> (
        <Time iso={c.current.completed_at} />
        ).
      </p>
      <p class="small muted">
        Ports are compared only where both scans examined them (before: {c.previous.ports_examined ?? 'discovery only'}; after:{' '}
        {c.current.ports_examined ?? 'discovery only'}).
      </p>
      <dl class="compare-counts">
        {items.map(([label, n]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{formatNumber(n)}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

function DeviceItem({ device: d }: { device: DeviceComparison }) {
  const where = d.status === 'moved' ? `${d.ip_before} → ${d.ip_after}` : (d.ip_after ?? d.ip_before ?? '');
  const changes = d.ports_opened.length + d.ports_closed.length + d.services_changed.length;
  return (
    <li>
      <details>
        <summary>
          <span class="mono">{where}</span> {d.name && <strong>{d.name}</strong>}{' '}
          <span class="muted small">{changes > 0 ? plural(changes, 'port change') : (d.mac_address ?? '')}</span>
        </summary>
        <dl class="facts">
          <dt>Device</dt>
          <dd>
            <a href={`/devices/${d.device_id}`}>#{d.device_id}</a> {d.mac_address && <span class="mono">{d.mac_address}</span>}
          </dd>
          <dt>Risk</dt>
          <dd>
            {riskText(d.risk_before)} → {riskText(d.risk_after)}
          </dd>
          {d.ports_opened.length > 0 && (
            <>
              <dt>Opened</dt>
              <dd class="mono">{d.ports_opened.map((p) => `${p.port}/${p.protocol}`).join(', ')}</dd>
            </>
          )}
          {d.ports_closed.length > 0 && (
            <>
              <dt>Closed</dt>
              <dd class="mono">{d.ports_closed.map((p) => `${p.port}/${p.protocol}`).join(', ')}</dd>
            </>
          )}
          {d.services_changed.map((s) => (
            <>
              <dt key={`${s.protocol}${s.port}`}>
                {s.port}/{s.protocol}
              </dt>
              <dd>
                {s.before} → {s.after}
              </dd>
            </>
          ))}
        </dl>
      </details>
    </li>
  );
}

function riskText(r: DeviceComparison['risk_before']): string {
  return r ? `${r.level} (${r.score})` : 'absent';
}
