import { useLocation } from 'preact-iso';
import { useMemo, useState } from 'preact/hooks';
import { answer, api, withQuery } from '../api';
import { EmptyState, ErrorMessage, Field, Loading, PageHeader, Pager, RiskBadge } from '../components/ui';
import { formatNumber, plural } from '../format';
import { useResource, useTitle } from '../hooks';
import { isIpv4Network } from '../lists';
import { useRefreshOn } from '../live';
import type { MatrixDevice, MatrixPort } from '../types';
import './ports.css';

/** Devices shown per page: paging keeps 10,000 devices as quick as 100 (the matrix itself is loaded once). */
export const DEVICES_PER_PAGE = 100;

const DEVICE_SORTS = {
  ip: { label: 'Address', compare: (a: MatrixDevice, b: MatrixDevice) => ipValue(a.ip_address) - ipValue(b.ip_address) },
  name: {
    label: 'Name',
    compare: (a: MatrixDevice, b: MatrixDevice) =>
      (a.name ?? '\uffff').localeCompare(b.name ?? '\uffff') || ipValue(a.ip_address) - ipValue(b.ip_address),
  },
  ports: {
    label: 'Open ports',
    compare: (a: MatrixDevice, b: MatrixDevice) => a.ports.length - b.ports.length || ipValue(b.ip_address) - ipValue(a.ip_address),
  },
  risk: {
    label: 'Risk',
    compare: (a: MatrixDevice, b: MatrixDevice) => a.risk_score - b.risk_score || ipValue(b.ip_address) - ipValue(a.ip_address),
  },
} as const;
type DeviceSort = keyof typeof DEVICE_SORTS;

const PORT_SORTS = {
  port: { label: 'Port', compare: (a: MatrixPort, b: MatrixPort) => a.port - b.port || a.protocol.localeCompare(b.protocol) },
  devices: { label: 'Devices', compare: (a: MatrixPort, b: MatrixPort) => a.devices - b.devices || b.port - a.port },
} as const;
type PortSort = keyof typeof PORT_SORTS;

function ipValue(ip: string): number {
  return ip.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

const portKey = (p: { port: number; protocol: string }) => `${p.port}/${p.protocol}`;

/**
 * The port matrix (GET /api/visualization/port-matrix): every open port with how many devices have
 * it, forbidden and rare ones marked; then the devices with their open ports, sortable and paged.
 * Filters live in the address bar: `zone`, `subnet` (sent to the server), `port` (`22/tcp`) and
 * `only` (`forbidden` or `rare`) applied here, `sort`/`order` and `ports_sort` for the two tables.
 */
export function PortsPage() {
  useTitle('Ports');
  const { query, path, route } = useLocation();
  const zone = query.zone || undefined;
  const subnet = query.subnet || undefined;
  const only = query.only === 'forbidden' || query.only === 'rare' ? query.only : undefined;
  const port = query.port || undefined;
  const sort: DeviceSort = query.sort && query.sort in DEVICE_SORTS ? (query.sort as DeviceSort) : 'ip';
  const descending = query.order === 'desc';
  const portSort: PortSort = query.ports_sort === 'port' ? 'port' : 'devices';
  const offset = Math.max(0, Number.parseInt(query.offset ?? '0', 10) || 0);

  const update = (changes: Record<string, string | undefined>) => {
    const next: Record<string, string | undefined> = { ...query, offset: undefined, ...changes };
    route(withQuery(path, next), true);
  };

  const zones = useResource((signal) => answer(api.GET('/api/zones', { signal })), []);
  const matrix = useResource(
    (signal) => answer(api.GET('/api/visualization/port-matrix', { params: { query: { zone, subnet } }, signal })),
    [zone, subnet],
  );
  // A finished scan may have opened or closed ports: load again (a burst of events costs one load).
  useRefreshOn(['scan_finished'], matrix.reload);

  const data = matrix.data;
  const portInfo = useMemo(() => new Map((data?.ports ?? []).map((p) => [portKey(p), p])), [data]);
  const ports = useMemo(() => {
    const list = (data?.ports ?? []).filter((p) => (only === 'forbidden' ? p.forbidden : only === 'rare' ? p.rare : true));
    return list.sort((a, b) => (portSort === 'port' ? PORT_SORTS.port.compare(a, b) : -PORT_SORTS.devices.compare(a, b)));
  }, [data, only, portSort]);
  const devices = useMemo(() => {
    let list = data?.devices ?? [];
    if (port) list = list.filter((d) => d.ports.some((p) => portKey(p) === port));
    if (only === 'forbidden') list = list.filter((d) => d.ports.some((p) => p.forbidden));
    if (only === 'rare') list = list.filter((d) => d.ports.some((p) => portInfo.get(portKey(p))?.rare));
    const compare = DEVICE_SORTS[sort].compare;
    return [...list].sort((a, b) => (descending ? -compare(a, b) : compare(a, b)));
  }, [data, port, only, sort, descending, portInfo]);

  const shown = devices.slice(offset, offset + DEVICES_PER_PAGE);
  const onSort = (key: DeviceSort) => {
    const first = key === 'ports' || key === 'risk' ? 'desc' : 'asc';
    const order = sort === key ? (descending ? 'asc' : 'desc') : first;
    update({ sort: key === 'ip' ? undefined : key, order: order === 'asc' ? undefined : 'desc' });
  };

  return (
    <>
      <PageHeader title="Ports" />
      <p class="muted small lead">
        Every open port in the inventory and the devices it is open on. Offline devices count with their last known ports; archived devices are left
        out. <span class="port-flag forbidden">Forbidden</span> ports break a zone policy on at least one device;{' '}
        <span class="port-flag rare">Rare</span> ports are {data ? data.rare_rule : 'open on few devices'}.
      </p>
      <Filters zones={zones.data ?? []} zone={zone} subnet={subnet} only={only} port={port} ports={data?.ports ?? []} update={update} />
      <ErrorMessage error={zones.error} onRetry={zones.reload} />
      <ErrorMessage error={matrix.error} onRetry={matrix.reload} />
      {matrix.loading && !data && <Loading label="Loading the port matrix…" />}
      {data && data.devices.length === 0 && (
        <EmptyState title="No open ports">
          {zone || subnet
            ? 'No device matching these filters has an open port.'
            : 'No device has an open port yet. Run a normal scan to examine ports.'}
        </EmptyState>
      )}
      {data && data.devices.length > 0 && (
        <>
          <PortTable ports={ports} total={data.total_devices} sort={portSort} selected={port} update={update} />
          <section class="card" aria-label="Devices and their open ports">
            <h2>
              Devices{' '}
              <span class="muted small">
                ({formatNumber(devices.length)}
                {port ? ` with ${port} open` : ''}
                {only ? `, with a ${only} port` : ''})
              </span>
              {port && (
                <button type="button" class="button-link small" onClick={() => update({ port: undefined })}>
                  Show all ports
                </button>
              )}
            </h2>
            <DeviceTable
              devices={shown}
              sort={sort}
              descending={descending}
              onSort={onSort}
              portInfo={portInfo}
              onPort={(p) => update({ port: p })}
            />
            <Pager total={devices.length} limit={DEVICES_PER_PAGE} offset={offset} onChange={(o) => update({ offset: o ? String(o) : undefined })} />
          </section>
        </>
      )}
    </>
  );
}

function Filters(props: {
  zones: string[];
  zone: string | undefined;
  subnet: string | undefined;
  only: string | undefined;
  port: string | undefined;
  ports: MatrixPort[];
  update: (changes: Record<string, string | undefined>) => void;
}) {
  const { zones, zone, subnet, only, port, ports, update } = props;
  const [typed, setTyped] = useState(subnet ?? '');
  const [invalid, setInvalid] = useState(false);
  const apply = (e: Event) => {
    e.preventDefault();
    const text = typed.trim();
    if (text && !isIpv4Network(text)) {
      setInvalid(true);
      return;
    }
    setInvalid(false);
    update({ subnet: text || undefined });
  };
  const zoneOptions = zone && !zones.includes(zone) ? [...zones, zone] : zones;
  return (
    <form class="filters port-filters" role="search" aria-label="Filter the port matrix" onSubmit={apply}>
      <Field label="Zone">
        <select value={zone ?? ''} onChange={(e) => update({ zone: e.currentTarget.value || undefined })}>
          <option value="">All</option>
          {zoneOptions.map((z) => (
            <option key={z} value={z}>
              {z}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Subnet" hint={invalid ? 'An IPv4 network such as 192.168.1.0/24' : undefined}>
        <input
          value={typed}
          placeholder="192.168.1.0/24"
          aria-invalid={invalid || undefined}
          onInput={(e) => setTyped(e.currentTarget.value)}
          onBlur={(e) => apply(e)}
        />
      </Field>
      <Field label="Port">
        <select value={port ?? ''} onChange={(e) => update({ port: e.currentTarget.value || undefined })}>
          <option value="">All</option>
          {port && !ports.some((p) => portKey(p) === port) && <option value={port}>{port}</option>}
          {ports.map((p) => (
            <option key={portKey(p)} value={portKey(p)}>
              {portKey(p)} {p.service ?? ''}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Show">
        <select value={only ?? ''} onChange={(e) => update({ only: e.currentTarget.value || undefined })}>
          <option value="">All ports</option>
          <option value="forbidden">Forbidden only</option>
          <option value="rare">Rare only</option>
        </select>
      </Field>
      <button type="submit">Apply</button>
    </form>
  );
}

function PortTable({
  ports,
  total,
  sort,
  selected,
  update,
}: {
  ports: MatrixPort[];
  total: number;
  sort: PortSort;
  selected: string | undefined;
  update: (changes: Record<string, string | undefined>) => void;
}) {
  return (
    <section class="card" aria-label="Open ports">
      <h2>
        Open ports{' '}
        <span class="muted small">
          ({formatNumber(ports.length)} on {plural(total, 'device')})
        </span>
      </h2>
      <div class="table-wrap port-table-wrap">
        <table class="port-table" aria-label="Open ports">
          <thead>
            <tr>
              {(Object.keys(PORT_SORTS) as PortSort[]).map((key) => (
                <th
                  key={key}
                  aria-sort={sort === key ? (key === 'port' ? 'ascending' : 'descending') : undefined}
                  class={key === 'devices' ? 'num' : undefined}
                >
                  <button type="button" class="sort" onClick={() => update({ ports_sort: key === 'devices' ? undefined : key })}>
                    {PORT_SORTS[key].label}
                    {sort === key && <span aria-hidden="true">{key === 'port' ? ' ▲' : ' ▼'}</span>}
                  </button>
                </th>
              ))}
              <th>Service</th>
              <th class="hide-narrow">Share</th>
            </tr>
          </thead>
          <tbody>
            {ports.map((p) => (
              <tr key={portKey(p)} class={[p.forbidden ? 'forbidden' : '', selected === portKey(p) ? 'selected' : ''].join(' ').trim() || undefined}>
                <td class="nowrap">
                  <button
                    type="button"
                    class="button-link mono"
                    aria-label={`Devices with ${portKey(p)} open`}
                    onClick={() => update({ port: selected === portKey(p) ? undefined : portKey(p) })}
                  >
                    {portKey(p)}
                  </button>
                  <PortFlags port={p} />
                </td>
                <td class="num">{formatNumber(p.devices)}</td>
                <td>{p.service ?? <span class="muted">—</span>}</td>
                <td class="hide-narrow share">
                  <span
                    class="share-bar"
                    style={{ width: `${Math.max(2, Math.round((p.devices / Math.max(1, total)) * 100))}%` }}
                    aria-hidden="true"
                  />
                  <span class="small muted">{Math.round((p.devices / Math.max(1, total)) * 1000) / 10} %</span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function PortFlags({ port }: { port: MatrixPort }) {
  return (
    <>
      {port.forbidden && (
        <span class="port-flag forbidden" title={`Breaks the zone policy of ${plural(port.forbidden_devices, 'device')}`}>
          Forbidden
        </span>
      )}
      {port.rare && (
        <span class="port-flag rare" title={`Open on only ${plural(port.devices, 'device')}`}>
          Rare
        </span>
      )}
    </>
  );
}

function DeviceTable({
  devices,
  sort,
  descending,
  onSort,
  portInfo,
  onPort,
}: {
  devices: MatrixDevice[];
  sort: DeviceSort;
  descending: boolean;
  onSort: (key: DeviceSort) => void;
  portInfo: Map<string, MatrixPort>;
  onPort: (port: string) => void;
}) {
  const header = (key: DeviceSort, className?: string) => (
    <th class={className} aria-sort={sort === key ? (descending ? 'descending' : 'ascending') : undefined}>
      <button type="button" class="sort" onClick={() => onSort(key)}>
        {DEVICE_SORTS[key].label}
        {sort === key && <span aria-hidden="true">{descending ? ' ▼' : ' ▲'}</span>}
      </button>
    </th>
  );
  return (
    <div class="table-wrap">
      <table class="matrix-table" aria-label="Devices and their open ports">
        <thead>
          <tr>
            {header('ip')}
            {header('name', 'hide-narrow')}
            {header('risk', 'hide-narrow')}
            {header('ports')}
          </tr>
        </thead>
        <tbody>
          {devices.map((d) => (
            <tr key={d.device_id}>
              <td class="device-cell">
                <span class={`status-dot${d.online ? ' online' : ''}`} role="img" aria-label={d.online ? 'Online' : 'Offline'} />
                <a class="mono" href={`/devices/${d.device_id}`}>
                  {d.ip_address}
                </a>
                <div class="small show-narrow">{d.name ?? ''}</div>
                {d.zone && <div class="muted small">{d.zone}</div>}
              </td>
              <td class="hide-narrow device-name">{d.name ?? <span class="muted">—</span>}</td>
              <td class="hide-narrow">
                <RiskBadge level={d.risk_level} score={d.risk_score} />
              </td>
              <td>
                <ul class="port-chips" aria-label={`Open ports of ${d.ip_address}`}>
                  {d.ports.map((p) => {
                    const info = portInfo.get(portKey(p));
                    const flags = [p.forbidden ? 'forbidden by its zone policy' : '', info?.rare ? 'rare' : ''].filter(Boolean);
                    return (
                      <li key={portKey(p)} class={`port-chip${p.forbidden ? ' forbidden' : ''}${info?.rare ? ' rare' : ''}`}>
                        <button
                          type="button"
                          title={flags.length ? `${portKey(p)}: ${flags.join(', ')}` : portKey(p)}
                          onClick={() => onPort(portKey(p))}
                        >
                          <span class="mono">{p.protocol === 'tcp' ? p.port : portKey(p)}</span>
                          {p.service && <span class="svc"> {p.service}</span>}
                          {flags.length > 0 && <span class="visually-hidden"> ({flags.join(', ')})</span>}
                          {info?.rare && (
                            <span class="rare-mark" aria-hidden="true">
                              ◆
                            </span>
                          )}
                        </button>
                      </li>
                    );
                  })}
                </ul>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
