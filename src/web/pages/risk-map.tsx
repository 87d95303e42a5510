import { useLocation } from 'preact-iso';
import { useMemo, useState } from 'preact/hooks';
import { answer, api, page, withQuery } from '../api';
import { EmptyState, ErrorMessage, Field, Loading, PageHeader, RiskBadge } from '../components/ui';
import { formatNumber, humanize, plural } from '../format';
import { useResource, useTitle } from '../hooks';
import { useRefreshOn } from '../live';
import { RISK_LEVELS, type DeviceSummary, type RiskLevel } from '../types';
import './ports.css';

/** Squares drawn per group before "show all": 10,000 devices stay quick to draw and to scroll. */
export const CELLS_PER_GROUP = 300;
/** Scans whose subnets group the devices (newest first). */
const SCANS_READ = 200;

const MIN_CELL_PX = 10;
const MAX_CELL_PX = 36;

/** A square's side: from MIN_CELL_PX at score 0 to MAX_CELL_PX at 100. */
export function cellSize(score: number): number {
  return Math.round(MIN_CELL_PX + (Math.min(100, Math.max(0, score)) / 100) * (MAX_CELL_PX - MIN_CELL_PX));
}

interface Group {
  key: string;
  label: string;
  devices: DeviceSummary[];
  score: number;
  worst: RiskLevel;
  atRisk: number;
}

function ipValue(ip: string): number {
  return ip.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

/** Networks `a.b.c.d/n` as address ranges, narrowest first. */
function networks(cidrs: string[]): { cidr: string; low: number; high: number }[] {
  const out = new Map<string, { cidr: string; low: number; high: number }>();
  for (const cidr of cidrs) {
    const [address, prefixText] = cidr.split('/');
    const prefix = prefixText === undefined ? 32 : Number(prefixText);
    if (!/^\d+\.\d+\.\d+\.\d+$/.test(address) || !(prefix >= 0 && prefix <= 32)) continue;
    const size = 2 ** (32 - prefix);
    const low = Math.floor(ipValue(address) / size) * size;
    out.set(`${low}/${prefix}`, { cidr: `${address}/${prefix}`, low, high: low + size - 1 });
  }
  return [...out.values()].sort((a, b) => a.high - a.low - (b.high - b.low));
}

/** The narrowest scanned network holding `ip`, else its /24. */
function subnetOf(ip: string, scanned: { cidr: string; low: number; high: number }[]): string {
  const value = ipValue(ip);
  const hit = scanned.find((n) => value >= n.low && value <= n.high);
  if (hit) return hit.cidr;
  return `${ip.split('.').slice(0, 3).join('.')}.0/24`;
}

const LEVEL_RANK: Record<RiskLevel, number> = { critical: 4, high: 3, medium: 2, low: 1, none: 0 };

/**
 * The risk heat map: every device (archived ones left out) as a square sized and coloured by its
 * risk score, grouped by zone or by subnet (the narrowest network a scan covered, else its /24);
 * the riskiest groups first, the riskiest devices first in each. A square links to its device.
 * `?group=subnet` and `?at_risk=true` live in the address bar.
 */
export function RiskMapPage() {
  useTitle('Risk map');
  const { query, path, route } = useLocation();
  const by = query.group === 'subnet' ? 'subnet' : 'zone';
  const atRiskOnly = query.at_risk === 'true';
  const update = (changes: Record<string, string | undefined>) => route(withQuery(path, { ...query, ...changes }), true);

  // Every device in one streamed answer (the export), rather than pages of 1,000.
  const devices = useResource((signal) => answer(api.GET('/api/export/devices', { params: { query: { format: 'json' } }, signal })), []);
  const scans = useResource((signal) => page(api.GET('/api/scans', { params: { query: { limit: SCANS_READ } }, signal })), []);
  useRefreshOn(['scan_finished'], devices.reload);

  const groups = useMemo(() => {
    const list = ((devices.data ?? []) as DeviceSummary[]).filter((d) => d.status !== 'archived' && (!atRiskOnly || d.risk_score > 0));
    const scanned = networks((scans.data?.items ?? []).map((s) => s.subnet));
    const byKey = new Map<string, Group>();
    for (const d of list) {
      const key = by === 'zone' ? (d.zone ?? '') : subnetOf(d.ip_address, scanned);
      let g = byKey.get(key);
      if (!g) {
        g = { key, label: by === 'zone' ? (d.zone ?? 'No zone') : key, devices: [], score: 0, worst: 'none', atRisk: 0 };
        byKey.set(key, g);
      }
      g.devices.push(d);
      g.score += d.risk_score;
      if (d.risk_score > 0) g.atRisk++;
      if (LEVEL_RANK[d.risk_level] > LEVEL_RANK[g.worst]) g.worst = d.risk_level;
    }
    for (const g of byKey.values()) g.devices.sort((a, b) => b.risk_score - a.risk_score || ipValue(a.ip_address) - ipValue(b.ip_address));
    return [...byKey.values()].sort((a, b) => b.score - a.score || a.label.localeCompare(b.label));
  }, [devices.data, scans.data, by, atRiskOnly]);

  return (
    <>
      <PageHeader title="Risk map" />
      <p class="muted small lead">
        Each square is a device, sized and coloured by its risk score; the riskiest groups and devices come first. Offline devices are faded. Select a
        square to open its device.
      </p>
      <form class="filters" aria-label="Risk map options" onSubmit={(e) => e.preventDefault()}>
        <Field label="Group by">
          <select value={by} onChange={(e) => update({ group: e.currentTarget.value === 'subnet' ? 'subnet' : undefined })}>
            <option value="zone">Zone</option>
            <option value="subnet">Subnet</option>
          </select>
        </Field>
        <label class="checkbox">
          <input type="checkbox" checked={atRiskOnly} onChange={(e) => update({ at_risk: e.currentTarget.checked ? 'true' : undefined })} /> Only
          devices at risk
        </label>
      </form>
      <Legend />
      <ErrorMessage error={devices.error} onRetry={devices.reload} />
      {devices.loading && !devices.data && <Loading label="Loading the devices…" />}
      {devices.data && groups.length === 0 && (
        <EmptyState title={atRiskOnly ? 'No device at risk' : 'No devices yet'}>
          {atRiskOnly ? 'No device has a risk finding.' : 'Run a scan to fill the inventory.'}
        </EmptyState>
      )}
      <div class="heat-groups">
        {groups.map((g) => (
          <HeatGroup key={g.key} group={g} by={by} />
        ))}
      </div>
    </>
  );
}

function Legend() {
  return (
    <p class="heat-legend" aria-label="Legend">
      {RISK_LEVELS.map((level) => (
        <span key={level}>
          <span class={`heat-cell risk-${level}`} aria-hidden="true" />
          {level === 'none' ? 'No risk' : humanize(level)}
        </span>
      ))}
      <span class="muted">Larger: higher score</span>
    </p>
  );
}

function HeatGroup({ group: g, by }: { group: Group; by: 'zone' | 'subnet' }) {
  const [all, setAll] = useState(false);
  const shown = all ? g.devices : g.devices.slice(0, CELLS_PER_GROUP);
  const more = g.devices.length - shown.length;
  return (
    <section class="card heat-group" aria-label={`${by === 'zone' ? 'Zone' : 'Subnet'} ${g.label}`}>
      <h2>
        <span class={by === 'subnet' ? 'mono' : undefined}>{g.label}</span>
        <RiskBadge level={g.worst} />
        <span class="muted small">
          {plural(g.devices.length, 'device')}, {formatNumber(g.atRisk)} at risk
        </span>
      </h2>
      <div class="heat-cells">
        {shown.map((d) => {
          const size = cellSize(d.risk_score);
          const name = d.name || d.hostname;
          const text = `${d.ip_address}${name ? ` ${name}` : ''}: ${d.risk_level === 'none' ? 'no risk' : `${d.risk_level} risk, score ${d.risk_score}`}${d.online ? '' : ', offline'}`;
          return (
            <a
              key={d.id}
              href={`/devices/${d.id}`}
              class={`heat-cell risk-${d.risk_level}${d.online ? '' : ' offline'}`}
              style={{ width: `${size}px`, height: `${size}px` }}
              title={text}
              aria-label={text}
            />
          );
        })}
      </div>
      {more > 0 && (
        <button type="button" class="button-link small heat-more" onClick={() => setAll(true)}>
          Show all {formatNumber(g.devices.length)} ({formatNumber(more)} more)
        </button>
      )}
    </section>
  );
}
