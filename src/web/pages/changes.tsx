import { useLocation } from 'preact-iso';
import { api, idParam, page, withQuery } from '../api';
import { ChangeList } from '../components/change-list';
import { HumanizedOptions } from '../components/form-parts';
import { EmptyState, ErrorMessage, Field, Loading, PageHeader, Pager, SeverityBadge, Time } from '../components/ui';
import { formatDateTime, humanize } from '../format';
import { NARROW_QUERY, useMediaQuery, useResource, useTitle } from '../hooks';
import { useRefreshOn } from '../live';
import { ExportLinks } from '../components/export-links';
import { NetworkTimeline } from '../components/network-timeline';
import { CHANGE_TYPES, SEVERITIES, isOneOf, type Change, type ChangeType, type Severity } from '../types';

const PAGE_SIZE = 50;
/** Scans offered in the scan filter; older ones stay reachable through links that carry scan_id. */
const SCANS_OFFERED = 100;

type Filters = { scan_id: string; device_id: string; change_type: ChangeType | ''; severity: Severity | ''; offset: number };

function filtersOf(query: Record<string, string>): Filters {
  const offset = Number(query.offset);
  return {
    scan_id: /^\d+$/.test(query.scan_id ?? '') ? query.scan_id : '',
    device_id: /^\d+$/.test(query.device_id ?? '') ? query.device_id : '',
    change_type: isOneOf(CHANGE_TYPES, query.change_type) ? query.change_type : '',
    severity: isOneOf(SEVERITIES, query.severity) ? query.severity : '',
    offset: Number.isInteger(offset) && offset > 0 ? offset : 0,
  };
}

/** What changed between scans, filtered by scan, type and severity; the filters live in the URL. */
export function ChangesPage() {
  useTitle('Changes');
  const { query, path, route } = useLocation();
  const filters = filtersOf(query);
  // What is chosen goes to the address bar as it is; filtersOf reads it back from there.
  const setFilters = (next: Partial<Record<keyof Filters, string | number>>) => {
    const merged = { ...filters, offset: 0, ...next };
    route(withQuery(path, { ...merged, offset: merged.offset || undefined }), true);
  };

  const scans = useResource((signal) => page(api.GET('/api/scans', { params: { query: { limit: SCANS_OFFERED } }, signal })), []);
  const changes = useResource(
    (signal) =>
      page(
        api.GET('/api/changes', {
          params: {
            query: {
              scan_id: idParam(filters.scan_id),
              device_id: idParam(filters.device_id),
              change_type: filters.change_type || undefined,
              severity: filters.severity || undefined,
              limit: PAGE_SIZE,
              offset: filters.offset,
            },
          },
          signal,
        }),
      ),
    [filters.scan_id, filters.device_id, filters.change_type, filters.severity, filters.offset],
  );
  // New changes appear on the first page as scans find them; later pages stay put while read.
  useRefreshOn(['change'], changes.reload, () => filters.offset === 0);
  // A phone has no room for the table's columns: the compact list keeps "what changed" in view.
  const narrow = useMediaQuery(NARROW_QUERY);
  const filtered = Boolean(filters.scan_id || filters.device_id || filters.change_type || filters.severity);

  return (
    <>
      <PageHeader title="Changes">
        <a class="button" href={filters.scan_id ? `/compare?current=${filters.scan_id}` : '/compare'}>
          Compare scans
        </a>
        <ExportLinks
          kind="changes"
          filters={{ scan_id: filters.scan_id, device_id: filters.device_id, change_type: filters.change_type, severity: filters.severity }}
        />
      </PageHeader>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <Field label="Scan">
          <select value={filters.scan_id} onChange={(e) => setFilters({ scan_id: e.currentTarget.value })}>
            <option value="">All scans</option>
            {filters.scan_id && !scans.data?.items.some((s) => String(s.scan_id) === filters.scan_id) && (
              <option value={filters.scan_id}>Scan #{filters.scan_id}</option>
            )}
            {scans.data?.items.map((s) => (
              <option key={s.scan_id} value={String(s.scan_id)}>
                #{s.scan_id} · {formatDateTime(s.started_at)} · {s.target ?? s.subnet}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Type">
          <select value={filters.change_type} onChange={(e) => setFilters({ change_type: e.currentTarget.value })}>
            <option value="">All types</option>
            <HumanizedOptions values={CHANGE_TYPES} />
          </select>
        </Field>
        <Field label="Severity">
          <select value={filters.severity} onChange={(e) => setFilters({ severity: e.currentTarget.value })}>
            <option value="">All severities</option>
            <HumanizedOptions values={SEVERITIES} />
          </select>
        </Field>
        {filtered && (
          <button type="button" onClick={() => setFilters({ scan_id: '', device_id: '', change_type: '', severity: '' })}>
            Clear filters
          </button>
        )}
      </form>
      {filters.device_id && (
        <p class="small">
          Showing the changes of <a href={`/devices/${filters.device_id}`}>device #{filters.device_id}</a> only.{' '}
          <button type="button" class="button-link" onClick={() => setFilters({ device_id: '' })}>
            Show every device
          </button>
        </p>
      )}
      <ErrorMessage error={scans.error} onRetry={scans.reload} />
      <ErrorMessage error={changes.error} onRetry={changes.reload} />
      {changes.loading && !changes.data && <Loading />}
      {changes.data?.total === 0 &&
        (filtered ? (
          <EmptyState title="No changes match these filters">Choose another scan, type or severity, or clear the filters.</EmptyState>
        ) : (
          <EmptyState title="No changes yet">
            Netwarden compares each scan with the one before. <a href="/scans">Run a scan</a> again later to see devices come and go and ports open or
            close.
          </EmptyState>
        ))}
      {changes.data && changes.data.items.length > 0 && narrow && <ChangeList changes={changes.data.items} showScan />}
      {changes.data && changes.data.items.length > 0 && !narrow && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Detected</th>
                <th>Severity</th>
                <th>Type</th>
                <th>Device</th>
                <th>What changed</th>
                <th class="hide-narrow">Scan</th>
              </tr>
            </thead>
            <tbody>
              {changes.data.items.map((c) => (
                <ChangeRow key={c.id} change={c} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {changes.data && <Pager total={changes.data.total} limit={PAGE_SIZE} offset={filters.offset} onChange={(offset) => setFilters({ offset })} />}
      <NetworkTimeline />
    </>
  );
}

function ChangeRow({ change: c }: { change: Change }) {
  return (
    <tr>
      <td>
        <Time iso={c.detected_at} />
      </td>
      <td>
        <SeverityBadge severity={c.severity} />
      </td>
      <td>{humanize(c.change_type)}</td>
      <td class="mono">{c.device_id !== null ? <a href={`/devices/${c.device_id}`}>{c.device_ip ?? `#${c.device_id}`}</a> : (c.device_ip ?? '—')}</td>
      <td class="wrap">{c.description}</td>
      <td class="hide-narrow">
        <a href={withQuery('/changes', { scan_id: c.scan_id })}>#{c.scan_id}</a>
      </td>
    </tr>
  );
}
