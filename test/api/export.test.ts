/**
 * GET /api/export/devices and /api/export/changes (CONTRACT §11, §13) against the real server:
 * the seeded inventory (written as scans write it) and, for streaming over many pages, thousands
 * of generated devices and changes. Expected values come from the list endpoints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedInventory as seedManyDevices } from '../../bench/inventory.mjs';
import { EXPORT_PAGE_SIZE } from '../../src/core/limits.js';
import { testDatabases } from '../helpers/databases.js';
import { parseCsv } from '../helpers/csv.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { startSeededServer, type Seed } from '../helpers/seed.js';

const DEVICE_COLUMNS = [
  'id',
  'ip_address',
  'mac_address',
  'hostname',
  'vendor',
  'device_type',
  'os_name',
  'label',
  'zone',
  'is_trusted',
  'notes',
  'risk_level',
  'risk_score',
  'open_ports',
  'first_seen',
  'last_seen',
  'last_scan_id',
  'online',
  'mac_randomized',
  'missed_scans',
  'ports_examined',
  'ports_examined_at',
  'stale_ports',
  'name',
  'type_confidence',
  'model',
  'os_version',
  'status',
];
const CHANGE_COLUMNS = [
  'id',
  'scan_id',
  'change_type',
  'severity',
  'device_id',
  'device_ip',
  'device_mac',
  'port',
  'protocol',
  'old_value',
  'new_value',
  'description',
  'detected_at',
];

/** A value as the CSV should show it: written out independently of src/core/csv.ts. */
function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.join(' ');
  if (typeof value === 'string') {
    // A formula character at the start, or right after a separator (, ; tab CR LF) inside the text, gets a ' before it.
    let out = '';
    for (const [i, ch] of [...value].entries()) {
      if ('=+-@\t\r'.includes(ch) && (i === 0 || ',;\t\r\n'.includes(value[i - 1]))) out += "'";
      out += ch;
    }
    return out;
  }
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
}

const rowsOf = (items: Record<string, unknown>[], columns: string[]) => items.map((item) => columns.map((c) => cell(item[c])));

describe.each(testDatabases())('export API ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let cookie: string;
  let seed: Seed;

  beforeAll(async () => {
    ({ server, key, cookie, seed } = await startSeededServer(database));
  });
  afterAll(() => server?.close());

  async function list(path: string): Promise<Record<string, unknown>[]> {
    const res = await server.request(path, { key });
    expect(res.status, await res.clone().text()).toBe(200);
    return readJson(res);
  }

  async function exported(path: string): Promise<{ res: Response; text: string }> {
    const res = await server.request(path, { key });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    return { res, text };
  }

  it('exports every device as one JSON array by default, as an attachment', async () => {
    const { res, text } = await exported('/api/export/devices');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="netwarden-devices-\d{8}T\d{6}Z\.json"$/);
    const body = JSON.parse(text);
    expect(body).toEqual(await list('/api/devices?limit=1000'));
    expect(body.length).toBe(Object.keys(seed.devices).length);
  });

  it('exports devices as RFC 4180 CSV with CRLF, a header row and the summary fields in contract order', async () => {
    const { res, text } = await exported('/api/export/devices?format=csv');
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="netwarden-devices-\d{8}T\d{6}Z\.csv"$/);
    expect(text.endsWith('\r\n')).toBe(true);
    expect(text.replace(/\r\n/g, '')).not.toMatch(/\n/);
    const [header, ...rows] = parseCsv(text);
    expect(header).toEqual(DEVICE_COLUMNS);
    const devices = await list('/api/devices?limit=1000');
    // Every field of the summary has its column, but `watch` and `presence` (objects: in the JSON export only).
    expect(
      Object.keys(devices[0])
        .filter((k) => k !== 'watch' && k !== 'presence')
        .sort(),
    ).toEqual([...DEVICE_COLUMNS].sort());
    expect(rows).toEqual(rowsOf(devices, DEVICE_COLUMNS));
    // open_ports joined with spaces.
    const withPorts = devices.find((d) => (d.open_ports as number[]).length > 1)!;
    expect(rows.find((r) => r[0] === String(withPorts.id))![13]).toBe((withPorts.open_ports as number[]).join(' '));
  });

  it('exports changes newest first, JSON and CSV', async () => {
    const changes = await list('/api/changes?limit=1000');
    expect(changes.length).toBe(seed.changes.length);
    expect(JSON.parse((await exported('/api/export/changes')).text)).toEqual(changes);
    const { res, text } = await exported('/api/export/changes?format=csv');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="netwarden-changes-\d{8}T\d{6}Z\.csv"$/);
    const [header, ...rows] = parseCsv(text);
    expect(header).toEqual(CHANGE_COLUMNS);
    expect(rows).toEqual(rowsOf(changes, CHANGE_COLUMNS));
  });

  it('honours the device list filters', async () => {
    const scanId = seed.scans.first.id;
    const queries = [
      'risk_level=high',
      'risk_level=none',
      'is_trusted=true',
      'is_trusted=false',
      'online=false',
      'online=true',
      'q=nas',
      'q=22',
      `scan_id=${scanId}`,
      `scan_id=${scanId}&online=true`,
    ];
    let narrowed = 0;
    for (const query of queries) {
      const want = await list(`/api/devices?limit=1000&${query}`);
      if (want.length < Object.keys(seed.devices).length) narrowed++;
      expect(JSON.parse((await exported(`/api/export/devices?${query}`)).text), query).toEqual(want);
      const [, ...rows] = parseCsv((await exported(`/api/export/devices?format=csv&${query}`)).text);
      expect(rows, query).toEqual(rowsOf(want, DEVICE_COLUMNS));
    }
    expect(narrowed).toBeGreaterThan(5);
  });

  it('honours the change list filters', async () => {
    const some = seed.changes.find((c) => c.device_id !== null)!;
    const queries = [
      `scan_id=${seed.scans.second.id}`,
      'change_type=port_opened',
      'severity=high',
      `device_id=${some.device_id}`,
      `scan_id=${seed.scans.second.id}&severity=info`,
    ];
    for (const query of queries) {
      const want = await list(`/api/changes?limit=1000&${query}`);
      expect(want.length, query).toBeLessThan(seed.changes.length);
      expect(JSON.parse((await exported(`/api/export/changes?${query}`)).text), query).toEqual(want);
      const [, ...rows] = parseCsv((await exported(`/api/export/changes?format=csv&${query}`)).text);
      expect(rows, query).toEqual(rowsOf(want, CHANGE_COLUMNS));
    }
  });

  it('quotes and defuses cells a spreadsheet would misread', async () => {
    const device = seed.devices.nas;
    const label = '=HYPERLINK("http://evil.example","click"),1';
    const notes = 'line one\r\nline "two", with comma\n+SUM(1)';
    const res = await server.request(`/api/devices/${device.id}`, { method: 'PUT', key, json: { label, notes } });
    expect(res.status).toBe(200);
    const { text } = await exported(`/api/export/devices?format=csv&q=${encodeURIComponent('HYPERLINK')}`);
    // The raw text: the quote doubled, the whole field quoted, the formula prefixed.
    expect(text).toContain(`"'=HYPERLINK(""http://evil.example"",""click""),1"`);
    // A formula after a line break is defused too: a parser that splits there would start a cell with it.
    expect(text).toContain(`"line one\r\nline ""two"", with comma\n'+SUM(1)"`);
    const [, row] = parseCsv(text);
    expect(row[DEVICE_COLUMNS.indexOf('label')]).toBe(`'${label}`);
    expect(row[DEVICE_COLUMNS.indexOf('notes')]).toBe(notes.replace('\n+', "\n'+"));
    // After a separator (a spreadsheet splitting on ';' would start a cell there): quoted and defused.
    await server.request(`/api/devices/${device.id}`, { method: 'PUT', key, json: { label: 'x;=1+1', notes: 'a,@SUM(A1)\t-2' } });
    const split = await exported(`/api/export/devices?format=csv&q=${encodeURIComponent(device.ip_address)}`);
    expect(split.text).toContain(`"x;'=1+1"`);
    expect(split.text).toContain(`"a,'@SUM(A1)\t'-2"`);
    for (const start of ['-2+3', '@SUM(A1)', '+1', '\tcmd']) {
      await server.request(`/api/devices/${device.id}`, { method: 'PUT', key, json: { label: start, notes: null } });
      const rows = parseCsv((await exported(`/api/export/devices?format=csv&q=${encodeURIComponent(device.ip_address)}`)).text);
      const row = rows.find((r) => r[0] === String(device.id))!;
      expect(row[DEVICE_COLUMNS.indexOf('label')], start).toBe(`'${start}`);
    }
    // JSON keeps the values as they are.
    const json = JSON.parse((await exported(`/api/export/devices?q=${encodeURIComponent(device.ip_address)}`)).text);
    expect(json.find((d: { id: number }) => d.id === device.id).label).toBe('\tcmd');
    await server.request(`/api/devices/${device.id}`, { method: 'PUT', key, json: { label: null, notes: null } });
  });

  it('refuses formats and parameters it does not know, and unknown scans', async () => {
    for (const path of ['/api/export/devices?format=xml', '/api/export/changes?format=xml', '/api/export/devices?format=']) {
      const res = await server.request(path, { key });
      expect(res.status, path).toBe(400);
      expect((await readJson(res)).detail).toMatch(/^format: must be one of csv, json/);
    }
    for (const path of [
      '/api/export/devices?limit=5',
      '/api/export/devices?risk_level=severe',
      '/api/export/devices?is_trusted=yes',
      '/api/export/changes?change_type=port_moved',
      '/api/export/changes?device_id=0',
    ]) {
      const res = await server.request(path, { key });
      expect(res.status, path).toBe(400);
      expect((await readJson(res)).detail, path).toMatch(/^[a-z_]+: /);
    }
    const res = await server.request('/api/export/devices?scan_id=999999', { key });
    expect(res.status).toBe(404);
    expect(await readJson(res)).toEqual({ detail: expect.stringMatching(/Scan/), code: 'NW_SCAN_NOT_FOUND' });
  });

  it('needs a session or an API key', async () => {
    for (const path of ['/api/export/devices', '/api/export/changes?format=csv']) {
      const anonymous = await server.request(path);
      expect(anonymous.status, path).toBe(401);
      expect(await readJson(anonymous)).toEqual({ detail: 'Not authenticated' });
      const badKey = await server.request(path, { key: 'svc_' + 'A'.repeat(43) });
      expect(badKey.status).toBe(401);
      expect((await server.request(path, { cookie })).status).toBe(200);
      expect((await server.request(path, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(200);
    }
  });
});

describe.each(testDatabases())('export streams many pages ($kind)', (database) => {
  const COUNT = EXPORT_PAGE_SIZE * 2 + 537;
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    ({ server, key } = await startServerWithAdmin(database));
    await seedManyDevices(server.store, COUNT, 11);
  }, 120_000);
  afterAll(() => server?.close());

  /** The whole device list through the paged list endpoint. */
  async function listAll(path: string): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    for (let offset = 0; ; offset += 1000) {
      const res = await server.request(`${path}${path.includes('?') ? '&' : '?'}limit=1000&offset=${offset}`, { key });
      const page = (await readJson(res)) as Record<string, unknown>[];
      out.push(...page);
      if (page.length < 1000) return out;
    }
  }

  it('sends every device of a multi-page inventory, in IP order, as JSON and as CSV', async () => {
    const want = await listAll('/api/devices');
    expect(want.length).toBe(COUNT);
    const json = await server.request('/api/export/devices', { key });
    expect(json.headers.get('content-length')).toBeNull();
    const body = JSON.parse(await json.text());
    expect(body.length).toBe(COUNT);
    expect(body).toEqual(want);
    const csv = await server.request('/api/export/devices?format=csv', { key });
    const [header, ...rows] = parseCsv(await csv.text());
    expect(header).toEqual(DEVICE_COLUMNS);
    expect(rows).toEqual(rowsOf(want, DEVICE_COLUMNS));
    expect(new Set(rows.map((r) => r[0])).size).toBe(COUNT);
  });

  it('keeps a filter across pages', async () => {
    for (const query of ['risk_level=low', 'q=raspberry', 'zone=iot', 'q=22']) {
      const want = await listAll(`/api/devices?${query}`);
      expect(want.length, query).toBeGreaterThan(0);
      const body = JSON.parse(await (await server.request(`/api/export/devices?${query}`, { key })).text());
      expect(body, query).toEqual(want);
    }
    const many = await listAll('/api/devices?risk_level=none');
    expect(many.length).toBeGreaterThan(EXPORT_PAGE_SIZE);
  });

  it('sends every change of a multi-page change log, newest first', async () => {
    const [device] = (await readJson(await server.request('/api/devices?limit=1', { key }))) as { id: number; ip_address: string }[];
    const scanId = (await readJson(await server.request('/api/scans?limit=1', { key })))[0].scan_id as number;
    const n = EXPORT_PAGE_SIZE + 250;
    await server.store.changes.insertMany(
      Array.from({ length: n }, (_, i) => ({
        scan_id: scanId,
        change_type: i % 2 ? 'port_opened' : 'port_closed',
        severity: i % 3 ? 'low' : 'high',
        device_id: device.id,
        device_ip: device.ip_address,
        device_mac: null,
        port: 1000 + i,
        protocol: 'tcp',
        old_value: i % 5 === 0 ? '=1+1' : null,
        new_value: 'open',
        description: `Port ${1000 + i}/tcp, "quoted", changed`,
        detected_at: new Date(Date.UTC(2026, 10, 1, 0, 0, i)).toISOString(),
      })),
    );
    const want: Record<string, unknown>[] = [];
    for (let offset = 0; ; offset += 1000) {
      const page = (await readJson(await server.request(`/api/changes?limit=1000&offset=${offset}`, { key }))) as Record<string, unknown>[];
      want.push(...page);
      if (page.length < 1000) break;
    }
    expect(want.length).toBe(n);
    const body = JSON.parse(await (await server.request('/api/export/changes', { key })).text());
    expect(body).toEqual(want);
    const [, ...rows] = parseCsv(await (await server.request('/api/export/changes?format=csv', { key })).text());
    expect(rows).toEqual(rowsOf(want, CHANGE_COLUMNS));
    const high = JSON.parse(await (await server.request('/api/export/changes?severity=high&change_type=port_closed', { key })).text());
    expect(high).toEqual(want.filter((c) => c.severity === 'high' && c.change_type === 'port_closed'));
  });
});
