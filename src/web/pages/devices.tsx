import { useLocation } from 'preact-iso';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, answer, api, page } from '../api';
import { DEVICE_SEARCH_MAX_LENGTH } from '../../core/limits.js';
import { DEVICE_STATUSES, type DeviceStatus } from '../../core/device-status.js';
import { EmptyState, ErrorMessage, Field, Loading, Notice, PageHeader, Pager, RiskBadge, StaleMarker, Time } from '../components/ui';
import { formatNumber, humanize, missingText, plural, presenceText } from '../format';
import { coverageOf } from '../coverage';
import { ExportLinks } from '../components/export-links';
import { useAction, useResource, useTitle } from '../hooks';
import { useRefreshOn } from '../live';
import { TypeIcon } from '../components/type-icon';
import { RISK_LEVELS, everyValue, isOneOf, type DeviceSort, type DeviceSummary, type RiskLevel } from '../types';
import './devices.css';

/** Rows per page; the API would give up to 1000, but one screen of rows keeps the page light. */
const PAGE_SIZE = 50;
const SEARCH_DELAY_MS = 300;
const PORTS_SHOWN = 4;

const SORT_KEYS = everyValue<DeviceSort>()(['ip_address', 'hostname', 'label', 'vendor', 'zone', 'risk_score', 'first_seen', 'last_seen']);
type Order = 'asc' | 'desc';

/** The sortable columns, and the direction a first click sorts in. */
const SORTABLE: Record<string, { key: DeviceSort; first: Order }> = {
  IP: { key: 'ip_address', first: 'asc' },
  Name: { key: 'hostname', first: 'asc' },
  Vendor: { key: 'vendor', first: 'asc' },
  Zone: { key: 'zone', first: 'asc' },
  Risk: { key: 'risk_score', first: 'desc' },
  'Last seen': { key: 'last_seen', first: 'desc' },
};

/** The list's state as it lives in the address bar; names match the API's query parameters. */
interface ListQuery {
  q: string;
  risk_level?: RiskLevel;
  zone?: string;
  is_trusted?: 'true' | 'false';
  online?: 'true' | 'false';
  status?: DeviceStatus;
  sort: DeviceSort;
  order: Order;
  offset: number;
  scan_id?: number;
}

const FILTER_PARAMS = ['q', 'risk_level', 'zone', 'is_trusted', 'online', 'status'] as const;

/** Reads the query string, dropping values the API would refuse (a hand-edited URL must not break the page). */
function readQuery(query: Record<string, string>): ListQuery {
  const bool = (value: string | undefined) => (value === 'true' || value === 'false' ? value : undefined);
  const offset = Number(query.offset);
  const scanId = Number(query.scan_id);
  return {
    q: query.q ?? '',
    risk_level: isOneOf(RISK_LEVELS, query.risk_level) ? query.risk_level : undefined,
    zone: query.zone || undefined,
    is_trusted: bool(query.is_trusted),
    online: bool(query.online),
    status: isOneOf(DEVICE_STATUSES, query.status) ? query.status : undefined,
    sort: isOneOf(SORT_KEYS, query.sort) ? query.sort : 'ip_address',
    order: query.order === 'desc' ? 'desc' : 'asc',
    offset: Number.isInteger(offset) && offset > 0 ? offset : 0,
    scan_id: Number.isInteger(scanId) && scanId > 0 ? scanId : undefined,
  };
}

/** A yes/no filter of the address bar as the API takes it. */
function yesNo(value: 'true' | 'false' | undefined): boolean | undefined {
  return value === undefined ? undefined : value === 'true';
}

/**
 * Changes some query parameters in place (history.replaceState), starting from the address bar as
 * it is now, so a late debounced search never undoes a sort clicked in the meantime. Any change
 * other than the page itself goes back to the first page.
 */
function useQueryUpdate() {
  const { path, route } = useLocation();
  return useCallback(
    (changes: Record<string, string | undefined>) => {
      const params = new URLSearchParams(window.location.search);
      for (const [name, value] of Object.entries(changes)) {
        if (value) params.set(name, value);
        else params.delete(name);
      }
      if (!('offset' in changes)) params.delete('offset');
      const text = params.toString();
      route(text ? `${path}?${text}` : path, true);
    },
    [path, route],
  );
}

/** The device inventory: filters, sorting and paging on the server, bulk trust and zone changes. */
export function DevicesPage() {
  useTitle('Devices');
  const location = useLocation();
  const query = readQuery(location.query);
  const update = useQueryUpdate();

  const apiQuery = {
    q: query.q.trim(),
    risk_level: query.risk_level,
    zone: query.zone,
    is_trusted: yesNo(query.is_trusted),
    online: yesNo(query.online),
    status: query.status,
    scan_id: query.scan_id,
    sort: query.sort === 'ip_address' ? undefined : query.sort,
    order: query.order === 'asc' ? undefined : query.order,
    limit: PAGE_SIZE,
    offset: query.offset,
    with_reasons: true,
  };
  const listKey = JSON.stringify(apiQuery);
  const list = useResource((signal) => page(api.GET('/api/devices', { params: { query: apiQuery }, signal })), [listKey]);
  // New devices and changed ones appear without a reload: the page on screen is asked for again,
  // with its filters and position, and replaced without dimming (a quiet refresh).
  const [quiet, setQuiet] = useState(false);
  useRefreshOn(['device_updated', 'scan_finished'], () => {
    setQuiet(true);
    list.reload();
  });
  useEffect(() => {
    if (!list.loading) setQuiet(false);
  }, [list.loading]);
  const zones = useResource((signal) => answer(api.GET('/api/zones', { signal })), []);

  const [selected, setSelected] = useState<Map<number, string>>(new Map());
  const [notice, setNotice] = useState<string | null>(null);
  // A selection and a bulk result belong to the rows on screen: another page or filter starts afresh.
  useEffect(() => {
    setSelected(new Map());
    setNotice(null);
  }, [listKey]);

  const filtered = FILTER_PARAMS.some((name) => (name === 'q' ? query.q.trim() !== '' : query[name] !== undefined));
  const clearFilters = () => update(Object.fromEntries(FILTER_PARAMS.map((name) => [name, undefined])));

  const sortBy = (key: DeviceSort, first: Order) => {
    const order: Order = query.sort === key ? (query.order === 'asc' ? 'desc' : 'asc') : first;
    const isDefault = key === 'ip_address' && order === 'asc';
    update({ sort: isDefault ? undefined : key, order: isDefault || order === 'asc' ? undefined : order });
  };

  // After a failed request the old rows would no longer match the filters shown: only the error stays.
  const listed = list.error ? undefined : list.data;
  const rows = listed?.items ?? [];
  const total = listed?.total ?? 0;

  return (
    <>
      <PageHeader title="Devices">
        <ExportLinks
          kind="devices"
          filters={{
            q: query.q.trim() || undefined,
            risk_level: query.risk_level,
            zone: query.zone,
            is_trusted: query.is_trusted,
            online: query.online,
            status: query.status,
            scan_id: query.scan_id,
          }}
        />
      </PageHeader>
      {query.scan_id !== undefined && <ScanFilterNote scanId={query.scan_id} listFailed={Boolean(list.error)} />}
      <Filters query={query} zones={zones.data ?? []} update={update} />
      <ErrorMessage error={zones.error} onRetry={zones.reload} />
      <ErrorMessage error={explainListError(list.error, query.scan_id)} onRetry={list.reload} />
      {notice && <Notice kind="success">{notice}</Notice>}
      {selected.size > 0 && (
        <BulkBar
          selected={selected}
          zones={zones.data ?? []}
          onClear={() => setSelected(new Map())}
          onDone={(message) => {
            setNotice(message);
            setSelected(new Map());
            list.reload();
          }}
        />
      )}
      {list.loading && !listed && <Loading label="Loading devices…" />}
      {listed && rows.length === 0 && (
        <NoRows
          total={total}
          offset={query.offset}
          filtered={filtered}
          scanId={query.scan_id}
          onClear={clearFilters}
          onFirstPage={() => update({ offset: undefined })}
        />
      )}
      {rows.length > 0 && (
        <DeviceTable
          rows={rows}
          stale={list.loading && !quiet}
          sort={query.sort}
          order={query.order}
          onSort={sortBy}
          selected={selected}
          onSelect={setSelected}
        />
      )}
      {listed && total > 0 && (
        <Pager
          total={total}
          limit={PAGE_SIZE}
          offset={query.offset}
          busy={list.loading && !quiet}
          onChange={(offset) => update({ offset: offset > 0 ? String(offset) : undefined })}
        />
      )}
    </>
  );
}

/** The list's 404 only ever means an unknown scan_id: say which. */
function explainListError(error: unknown, scanId: number | undefined): unknown {
  if (error instanceof ApiError && error.status === 404 && scanId !== undefined) {
    return new ApiError(404, `There is no scan #${scanId}; it may have been removed. Show all devices instead.`);
  }
  return error;
}

function ScanFilterNote({ scanId, listFailed }: { scanId: number; listFailed: boolean }) {
  const scan = useResource((signal) => answer(api.GET('/api/scans/{scan_id}', { params: { path: { scan_id: scanId } }, signal })), [scanId]);
  const s = scan.data;
  return (
    <>
      <Notice>
        <span>
          Showing only the devices seen by scan #{scanId}
          {s && (
            <>
              {' '}
              of <span class="mono">{s.target ?? s.subnet}</span>, <Time iso={s.started_at} />
            </>
          )}
          , with what is known about them now.
        </span>
        <a href="/devices">Show all devices</a>
      </Notice>
      {/* When the scan is unknown the list says so already. */}
      {!listFailed && <ErrorMessage error={scan.error} onRetry={scan.reload} />}
    </>
  );
}

function Filters({ query, zones, update }: { query: ListQuery; zones: string[]; update: (changes: Record<string, string | undefined>) => void }) {
  // A zone in the address bar that is no longer configured still shows as chosen.
  const zoneOptions = query.zone && !zones.includes(query.zone) ? [...zones, query.zone] : zones;
  return (
    <div class="filters device-filters" role="search" aria-label="Filter devices">
      <Field label="Search">
        <SearchInput value={query.q} onSearch={(q) => update({ q })} />
      </Field>
      <Field label="Risk">
        <select value={query.risk_level ?? ''} onChange={(e) => update({ risk_level: e.currentTarget.value })}>
          <option value="">All</option>
          {RISK_LEVELS.map((level) => (
            <option key={level} value={level}>
              {level === 'none' ? 'No risk' : humanize(level)}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Zone">
        <select value={query.zone ?? ''} onChange={(e) => update({ zone: e.currentTarget.value })}>
          <option value="">All</option>
          {zoneOptions.map((zone) => (
            <option key={zone} value={zone}>
              {zone}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Trust">
        <select value={query.is_trusted ?? ''} onChange={(e) => update({ is_trusted: e.currentTarget.value })}>
          <option value="">All</option>
          <option value="true">Trusted</option>
          <option value="false">Untrusted</option>
        </select>
      </Field>
      <Field label="Status">
        <select value={query.online ?? ''} onChange={(e) => update({ online: e.currentTarget.value })}>
          <option value="">All</option>
          <option value="true">Online</option>
          <option value="false">Offline</option>
        </select>
      </Field>
      <Field label="Inventory">
        <select value={query.status ?? ''} onChange={(e) => update({ status: e.currentTarget.value })}>
          <option value="">New and known</option>
          <option value="new">New</option>
          <option value="known">Known</option>
          <option value="archived">Archived</option>
        </select>
      </Field>
    </div>
  );
}

/**
 * Free-text search, sent 300 ms after the last keystroke (Enter sends at once). `value` is what
 * the address bar holds; it replaces the typed text only when it changes from elsewhere (back
 * button, "Clear filters").
 */
function SearchInput({ value, onSearch, ...rest }: { value: string; onSearch: (q: string) => void; id?: string; 'aria-describedby'?: string }) {
  const [text, setText] = useState(value);
  const sent = useRef(value);
  useEffect(() => {
    if (value !== sent.current) {
      sent.current = value;
      setText(value);
    }
  }, [value]);

  const send = (now: string) => {
    const q = now.trim();
    if (q === sent.current.trim()) return;
    sent.current = q;
    onSearch(q);
  };
  useEffect(() => {
    const timer = setTimeout(() => send(text), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the timer restarts on a keystroke only; `send` is a new function each render
  }, [text]);

  return (
    <input
      {...rest}
      type="search"
      value={text}
      placeholder="IP, name, MAC, vendor, port…"
      autocomplete="off"
      spellcheck={false}
      maxLength={DEVICE_SEARCH_MAX_LENGTH}
      onInput={(e) => setText(e.currentTarget.value)}
      onKeyDown={(e) => e.key === 'Enter' && send(e.currentTarget.value)}
    />
  );
}

function NoRows(props: { total: number; offset: number; filtered: boolean; scanId?: number; onClear: () => void; onFirstPage: () => void }) {
  if (props.total > 0 && props.offset > 0) {
    return (
      <EmptyState title="This page is past the end of the list">
        <button type="button" onClick={props.onFirstPage}>
          Go to the first page
        </button>
      </EmptyState>
    );
  }
  if (props.filtered) {
    return (
      <EmptyState title="No devices match these filters">
        <p>Try a shorter search or fewer filters.</p>
        <button type="button" onClick={props.onClear}>
          Clear filters
        </button>
      </EmptyState>
    );
  }
  if (props.scanId !== undefined) {
    return (
      <EmptyState title="This scan found no devices">
        <a href="/devices">Show all devices</a>
      </EmptyState>
    );
  }
  return (
    <EmptyState title="No devices yet">
      Netwarden fills its inventory from scans. <a href="/scans">Run a scan</a> of your network to see your devices here.
    </EmptyState>
  );
}

interface TableProps {
  rows: DeviceSummary[];
  stale: boolean;
  sort: DeviceSort;
  order: Order;
  onSort: (key: DeviceSort, first: Order) => void;
  selected: Map<number, string>;
  onSelect: (selected: Map<number, string>) => void;
}

function DeviceTable({ rows, stale, sort, order, onSort, selected, onSelect }: TableProps) {
  const chosen = rows.filter((d) => selected.has(d.id)).length;
  const toggleAll = (on: boolean) => onSelect(new Map(on ? rows.map((d) => [d.id, d.ip_address]) : []));
  const toggle = (device: DeviceSummary, on: boolean) => {
    const next = new Map(selected);
    if (on) next.set(device.id, device.ip_address);
    else next.delete(device.id);
    onSelect(next);
  };
  const header = (label: string, className?: string) => (
    <SortHeader
      label={label}
      className={className}
      active={sort === SORTABLE[label].key}
      order={order}
      onSort={() => onSort(SORTABLE[label].key, SORTABLE[label].first)}
    />
  );
  return (
    <div class="table-wrap">
      <table class={`device-table${stale ? ' stale' : ''}`} aria-busy={stale} aria-label="Devices">
        <thead>
          <tr>
            <th class="check">
              <input
                type="checkbox"
                aria-label="Select all on this page"
                checked={chosen === rows.length}
                indeterminate={chosen > 0 && chosen < rows.length}
                onChange={(e) => toggleAll(e.currentTarget.checked)}
              />
            </th>
            {header('IP')}
            {header('Name')}
            {header('Vendor', 'hide-narrow')}
            {header('Zone', 'hide-narrow')}
            {header('Risk')}
            <th class="hide-narrow">Open ports</th>
            {header('Last seen', 'hide-narrow')}
          </tr>
        </thead>
        <tbody>
          {rows.map((device) => (
            <DeviceRow key={device.id} device={device} checked={selected.has(device.id)} onCheck={(on) => toggle(device, on)} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function SortHeader({
  label,
  className,
  active,
  order,
  onSort,
}: {
  label: string;
  className?: string;
  active: boolean;
  order: Order;
  onSort: () => void;
}) {
  return (
    <th class={className} aria-sort={active ? (order === 'asc' ? 'ascending' : 'descending') : undefined}>
      <button type="button" class="sort" onClick={onSort}>
        {label}
        {active && <span aria-hidden="true">{order === 'asc' ? ' ▲' : ' ▼'}</span>}
      </button>
    </th>
  );
}

function DeviceRow({ device: d, checked, onCheck }: { device: DeviceSummary; checked: boolean; onCheck: (on: boolean) => void }) {
  const name = d.name || d.hostname;
  return (
    <tr class={checked ? 'selected' : undefined}>
      <td class="check">
        <input type="checkbox" aria-label={`Select ${d.ip_address}`} checked={checked} onChange={(e) => onCheck(e.currentTarget.checked)} />
      </td>
      <td class="nowrap">
        <span class={`status-dot${d.online ? ' online' : ''}`} role="img" aria-label={presenceText(d)} title={presenceText(d)} />
        <a class="mono" href={`/devices/${d.id}`}>
          {d.ip_address}
        </a>
      </td>
      <td class="device-name">
        <TypeIcon type={d.device_type} confidence={d.type_confidence} /> {name ? <span>{name}</span> : <span class="muted">—</span>}
        {d.status === 'new' && <span class="badge new">New</span>}
        {d.status === 'archived' && <span class="badge archived">Archived</span>}
        {d.is_trusted && <span class="badge trusted">Trusted</span>}
        {d.name && d.hostname && d.name !== d.hostname && <div class="muted small">{d.hostname}</div>}
        {d.missed_scans > 0 && (
          <div class={`small presence-missing${d.online ? '' : ' offline'}`}>
            {d.online ? 'Online, ' : 'Offline, '}
            {missingText(d.missed_scans)}
          </div>
        )}
      </td>
      <td class="hide-narrow">
        {d.vendor ?? <span class="muted">—</span>}
        {d.model && <div class="muted small">{d.model}</div>}
      </td>
      <td class="hide-narrow">{d.zone ?? <span class="muted">—</span>}</td>
      <td>
        {/* Compact: the ports and when they were examined are in the title and on the device page. */}
        <RiskBadge level={d.risk_level} score={d.risk_score} coverage={coverageOf(d)} compact />
        <StaleMarker count={d.stale_ports} />
        {d.risk_reason && <div class="small muted risk-reason">{d.risk_reason}</div>}
      </td>
      <td class="hide-narrow mono small">
        <PortList ports={d.open_ports} />
      </td>
      <td class="hide-narrow nowrap">
        <Time iso={d.last_seen} />
      </td>
    </tr>
  );
}

function PortList({ ports }: { ports: number[] }) {
  if (ports.length === 0) return <span class="muted">none</span>;
  const more = ports.length - PORTS_SHOWN;
  return (
    <span title={more > 0 ? ports.join(', ') : undefined}>
      {ports.slice(0, PORTS_SHOWN).join(', ')}
      {more > 0 && <span class="muted"> +{more}</span>}
    </span>
  );
}

/** Sentinel for "clear the zone" in the bulk zone menu (an empty value means nothing chosen yet). */
const NO_ZONE = '\u0000none';

function BulkBar({
  selected,
  zones,
  onClear,
  onDone,
}: {
  selected: Map<number, string>;
  zones: string[];
  onClear: () => void;
  onDone: (message: string) => void;
}) {
  const [zone, setZone] = useState('');
  const bulk = useAction(async (fields: { is_trusted?: boolean; zone?: string | null }) => {
    const ids = [...selected.keys()];
    const result = await answer(api.POST('/api/devices/bulk', { body: { device_ids: ids, ...fields } }));
    const unchanged = ids.length - result.updated;
    onDone(`Updated ${plural(result.updated, 'device')}.${unchanged > 0 ? ` ${plural(unchanged, 'device')} already had that setting.` : ''}`);
  });
  const acknowledge = useAction(async () => {
    const ids = [...selected.keys()];
    const result = await answer(api.POST('/api/devices/acknowledge', { body: { device_ids: ids } }));
    onDone(`Acknowledged ${plural(result.acknowledged, 'new device')}.`);
  });
  const { busy, error } = bulk;
  const apply = (fields: { is_trusted?: boolean; zone?: string | null }) => void bulk.run(fields);

  return (
    <section class="bulk-bar" aria-label="Change selected devices">
      <p class="bulk-count">
        <strong>{formatNumber(selected.size)} selected</strong>{' '}
        <button type="button" class="button-link" onClick={onClear}>
          Clear selection
        </button>
      </p>
      <div class="button-row">
        <button type="button" disabled={busy || acknowledge.busy} onClick={() => void acknowledge.run()}>
          Acknowledge selected
        </button>
        <button type="button" disabled={busy} onClick={() => apply({ is_trusted: true })}>
          Trust selected
        </button>
        <button type="button" disabled={busy} onClick={() => apply({ is_trusted: false })}>
          Untrust selected
        </button>
      </div>
      <div class="button-row bulk-zone">
        <Field label="Set zone">
          <select value={zone} onChange={(e) => setZone(e.currentTarget.value)}>
            <option value="">Choose…</option>
            {zones.map((z) => (
              <option key={z} value={z}>
                {z}
              </option>
            ))}
            <option value={NO_ZONE}>No zone</option>
          </select>
        </Field>
        <button type="button" disabled={busy || zone === ''} onClick={() => apply({ zone: zone === NO_ZONE ? null : zone })}>
          Apply zone
        </button>
      </div>
      <ErrorMessage error={error ?? acknowledge.error} />
    </section>
  );
}
