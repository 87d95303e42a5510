/**
 * GET /metrics (CONTRACT §11) against the real server after a real scan of loopback listeners
 * (nmap, which the server always runs with -n, when installed; else the native engine): the
 * scrape is parsed and its values compared with what the API says; authentication and
 * metrics.public; the per-route HTTP histogram; a second registry over the same database agrees.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/api/metrics.js';
import { nmapVersion } from '../../src/engines/nmap.js';
import { testDatabases } from '../helpers/databases.js';
import { bannerListener, httpListener, type Listener } from '../helpers/listeners.js';
import { startReceiver, type Receiver } from '../helpers/receivers.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

const hasNmap = (await nmapVersion()) !== null;
const engine = hasNmap ? 'nmap' : 'native';
if (!hasNmap) console.warn('nmap is not installed: the metrics test scans with the native engine');

// An address and ports no other test uses.
const HOST = '127.0.0.217';
const SSH_PORT = 41_022;
const WEB_PORT = 41_080;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A small parser of the Prometheus text format 0.0.4: samples, and the TYPE of each family. */
function parseMetrics(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = line.match(/^# TYPE (\S+) (\S+)$/);
    if (type) types.set(type[1], type[2]);
    if (line.startsWith('#')) continue;
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1]] = l[2].replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    }
    const value = number(m[3]);
    if (Number.isNaN(value) && m[3].toLowerCase() !== 'nan') throw new Error(`bad value in: ${line}`);
    samples.push({ name: m[1], labels, value });
  }
  return { samples, types };
}

/** A sample value or `le` bound: a float, `+Inf`, `-Inf` or NaN (prom-client writes `Nan`). */
function number(text: string): number {
  return text === '+Inf' ? Infinity : text === '-Inf' ? -Infinity : Number(text);
}

/** The value of the one sample of `name` with exactly these labels. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter(
    (s) =>
      s.name === name && Object.keys(s.labels).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  expect(found, `${name}${JSON.stringify(labels)}`).toHaveLength(1);
  return found[0].value;
}

const sum = (samples: Sample[], name: string) => samples.filter((s) => s.name === name).reduce((n, s) => n + s.value, 0);

describe.each(testDatabases())(`metrics after a real ${engine} scan ($kind)`, (database) => {
  let server: TestServer;
  let key: string;
  let cookie: string;
  let ssh: Listener;
  let web: Listener;
  let receiver: Receiver;

  beforeAll(async () => {
    ssh = await bannerListener(HOST, 'SSH-2.0-OpenSSH_7.4\r\n', SSH_PORT);
    web = await httpListener(HOST, 'Apache/2.4.49 (Unix)', WEB_PORT);
    receiver = await startReceiver();
    ({ server, key, cookie } = await startServerWithAdmin(database, {
      settings: { scanning: { engine, port_range: '41000-41100', host_timeout_seconds: 120, os_detection: false } },
    }));
    const channel = await server.request('/api/notifications/channels', {
      method: 'POST',
      cookie,
      json: {
        name: 'hook',
        type: 'webhook',
        config: { url: `${receiver.url}/hook` },
        filters: { min_severity: 'info', scan_events: ['completed', 'failed'] },
      },
    });
    expect(channel.status, await channel.clone().text()).toBe(201);
    // Two scans: the second sees the web server gone, so there are changes to count.
    const first = await waitForScan(server, key, (await triggerScan(server, key, { subnet: `${HOST}/32`, profile: 'normal' })).scan_id, 240_000);
    expect(first).toMatchObject({ status: 'completed', devices_found: 1 });
    await web.close();
    const second = await waitForScan(server, key, (await triggerScan(server, key, { subnet: `${HOST}/32`, profile: 'normal' })).scan_id, 240_000);
    expect(second).toMatchObject({ status: 'completed', devices_found: 1 });
    // The webhook got its message, and the delivery is recorded as sent.
    await receiver.waitFor(2);
    for (let i = 0; i < 100; i++) {
      const res = await server.request('/api/notifications/deliveries?status=sent', { key });
      if (Number(res.headers.get('x-total-count')) >= 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 300_000);

  afterAll(async () => {
    await server?.close();
    await Promise.all([ssh?.close(), web?.close(), receiver?.close()]);
  });

  async function scrape(init: { key?: string; cookie?: string } = { key }) {
    const res = await server.request('/metrics', init);
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return { text, ...parseMetrics(text) };
  }

  it('reports the inventory as the API does', async () => {
    const { samples, types } = await scrape();
    const stats = await readJson(await server.request('/api/stats', { key }));
    expect(stats.total_devices).toBe(1);
    expect(stats.open_ports).toBe(1);
    for (const level of ['critical', 'high', 'medium', 'low'] as const) {
      expect(valueOf(samples, 'netwarden_devices', { risk_level: level }), level).toBe(stats[level]);
    }
    expect(valueOf(samples, 'netwarden_devices', { risk_level: 'none' })).toBe(
      stats.total_devices - stats.critical - stats.high - stats.medium - stats.low,
    );
    expect(sum(samples, 'netwarden_devices')).toBe(stats.total_devices);
    const [device] = await readJson(await server.request('/api/devices', { key }));
    expect(valueOf(samples, 'netwarden_devices', { risk_level: device.risk_level })).toBe(1);
    expect(valueOf(samples, 'netwarden_devices_online')).toBe(stats.online_devices);
    expect(valueOf(samples, 'netwarden_open_ports')).toBe(stats.open_ports);
    expect(types.get('netwarden_devices')).toBe('gauge');
    expect(types.get('netwarden_devices_online')).toBe('gauge');
    expect(types.get('netwarden_open_ports')).toBe('gauge');
  });

  it('counts scans and their durations as the scan records say', async () => {
    const { samples, types } = await scrape();
    const scans = await server.request('/api/scans', { key });
    const records = (await readJson(scans)) as { status: string; duration_seconds: number | null }[];
    expect(sum(samples, 'netwarden_scans_total')).toBe(Number(scans.headers.get('x-total-count')));
    for (const status of ['queued', 'running', 'completed', 'failed', 'cancelled']) {
      expect(valueOf(samples, 'netwarden_scans_total', { status }), status).toBe(records.filter((s) => s.status === status).length);
    }
    expect(types.get('netwarden_scans_total')).toBe('counter');
    expect(types.get('netwarden_scan_duration_seconds')).toBe('histogram');
    const completed = records.filter((s) => s.status === 'completed');
    expect(valueOf(samples, 'netwarden_scan_duration_seconds_count')).toBe(completed.length);
    const total = completed.reduce((n, s) => n + (s.duration_seconds ?? 0), 0);
    expect(valueOf(samples, 'netwarden_scan_duration_seconds_sum')).toBeCloseTo(total, 3);
    const buckets = samples.filter((s) => s.name === 'netwarden_scan_duration_seconds_bucket');
    const bounds = buckets.map((b) => number(b.labels.le));
    expect(bounds).toEqual([...bounds].sort((a, b) => a - b));
    expect(bounds.at(-1)).toBe(Infinity);
    for (const b of buckets) {
      expect(b.value, `le=${b.labels.le}`).toBe(completed.filter((s) => (s.duration_seconds ?? 0) <= number(b.labels.le)).length);
    }
  });

  it('counts changes by type and severity, and notification deliveries by channel type and status', async () => {
    const { samples, types } = await scrape();
    const changes = (await readJson(await server.request('/api/changes?limit=1000', { key }))) as { change_type: string; severity: string }[];
    expect(changes.length).toBeGreaterThan(0);
    expect(sum(samples, 'netwarden_changes_total')).toBe(changes.length);
    for (const c of changes) {
      expect(valueOf(samples, 'netwarden_changes_total', { change_type: c.change_type, severity: c.severity })).toBe(
        changes.filter((o) => o.change_type === c.change_type && o.severity === c.severity).length,
      );
    }
    expect(types.get('netwarden_changes_total')).toBe('counter');
    const deliveries = (await readJson(await server.request('/api/notifications/deliveries', { key }))) as { status: string }[];
    expect(deliveries.filter((d) => d.status === 'sent').length).toBeGreaterThan(0);
    for (const status of ['pending', 'sent', 'failed']) {
      expect(valueOf(samples, 'netwarden_notifications_total', { type: 'webhook', status }), status).toBe(
        deliveries.filter((d) => d.status === status).length,
      );
    }
    expect(valueOf(samples, 'netwarden_notifications_total', { type: 'email', status: 'sent' })).toBe(0);
  });

  it('has process metrics and request durations per route pattern, method and status code', async () => {
    const [device] = await readJson(await server.request('/api/devices', { key }));
    await server.request(`/api/devices/${device.id}`, { key });
    await server.request(`/api/devices/${device.id}`, { key });
    await server.request('/api/devices/999999', { key });
    await server.request('/api/no-such-thing', { key });
    const { samples, types, text } = await scrape();
    expect(types.get('process_cpu_user_seconds_total')).toBe('counter');
    expect(valueOf(samples, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(samples.some((s) => s.name === 'nodejs_heap_size_used_bytes')).toBe(true);
    expect(types.get('netwarden_http_request_duration_seconds')).toBe('histogram');
    const count = (labels: Record<string, string>) => valueOf(samples, 'netwarden_http_request_duration_seconds_count', labels);
    expect(count({ method: 'GET', route: '/api/devices/:device_id', status_code: '200' })).toBe(2);
    expect(count({ method: 'GET', route: '/api/devices/:device_id', status_code: '404' })).toBe(1);
    expect(count({ method: 'GET', route: '(unmatched)', status_code: '404' })).toBeGreaterThanOrEqual(1);
    expect(count({ method: 'GET', route: '/api/devices', status_code: '200' })).toBeGreaterThanOrEqual(1);
    // Never the raw URL.
    expect(text).not.toContain(`/api/devices/${device.id}"`);
    expect(text).not.toContain('no-such-thing');
  });

  it('gives the same database values from another registry over the same database (another instance)', async () => {
    const other = new Metrics(server.store);
    const dbFamilies = /^netwarden_(devices|devices_online|open_ports|scans_total|scan_duration_seconds_\w+|changes_total|notifications_total)$/;
    const pick = (samples: Sample[]) => samples.filter((s) => dbFamilies.test(s.name));
    const mine = pick((await scrape()).samples);
    const theirs = pick(parseMetrics(await other.scrape()).samples);
    expect(theirs).toEqual(mine);
    expect(mine.length).toBeGreaterThan(40);
  });

  it('has every metric the Grafana dashboard (docs/grafana/netwarden.json) asks for', async () => {
    const dashboard = JSON.parse(readFileSync(new URL('../../docs/grafana/netwarden.json', import.meta.url), 'utf8'));
    expect(dashboard.templating.list.find((v: { name: string }) => v.name === 'datasource')).toMatchObject({
      type: 'datasource',
      query: 'prometheus',
    });
    const exprs: string[] = dashboard.panels.flatMap((p: { targets?: { expr: string; datasource: { uid: string } }[] }) =>
      (p.targets ?? []).map((t) => {
        expect(t.datasource.uid).toBe('${datasource}');
        return t.expr;
      }),
    );
    const names = new Set(exprs.flatMap((e) => [...e.matchAll(/\b((?:netwarden|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1])));
    expect(names.size).toBeGreaterThan(10);
    const { samples } = await scrape();
    const present = new Set(samples.map((s) => s.name));
    for (const name of names) expect(present.has(name), name).toBe(true);
  });

  it('needs an API key or a session unless metrics.public is true', async () => {
    const anonymous = await server.request('/metrics');
    expect(anonymous.status).toBe(401);
    expect(await readJson(anonymous)).toEqual({ detail: 'Not authenticated' });
    expect((await server.request('/metrics', { key: `svc_${'B'.repeat(43)}` })).status).toBe(401);
    expect((await server.request('/metrics', { headers: { Authorization: `Bearer ${key}` } })).status).toBe(200);
    await scrape({ cookie });

    const open = await server.request('/api/config', { method: 'PUT', key, json: { metrics: { public: true } } });
    expect(open.status, await open.clone().text()).toBe(200);
    expect((await readJson(open)).metrics).toEqual({ public: true });
    const { samples } = await scrape({});
    expect(valueOf(samples, 'netwarden_devices_online')).toBe(1);

    const bad = await server.request('/api/config', { method: 'PUT', key, json: { metrics: { public: 'yes' } } });
    expect(bad.status).toBe(400);
    expect((await readJson(bad)).detail).toMatch(/^metrics\.public: /);

    await server.request('/api/config', { method: 'PUT', key, json: { metrics: { public: false } } });
    expect((await server.request('/metrics')).status).toBe(401);
  });
});
