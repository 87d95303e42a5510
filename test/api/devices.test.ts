import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noFindingStatement } from '../../src/core/coverage.js';
import { fixedIn } from '../../src/core/cve/index.js';
import { loadShippedCves } from '../../src/cve/dataset.js';
import { describePort } from '../../src/core/services.js';
import { testDatabases } from '../helpers/databases.js';
import { ADMIN, readJson, type TestServer } from '../helpers/server.js';
import { DEVICE_KEYS, compareIp, openPorts, startSeededServer, type DeviceKey, type Seed } from '../helpers/seed.js';

/** The device summary fields of the API (docs in /openapi.json), plus `mac_randomized` which the service adds. */
const SUMMARY_KEYS = [
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
  'missed_scans',
  'ports_examined',
  'ports_examined_at',
  'stale_ports',
  'name',
  'type_confidence',
  'model',
  'os_version',
  'status',
  'watch',
  'presence',
];

const SEVERITY_RANK: Record<string, number> = { critical: 0, high: 1, medium: 2, low: 3, info: 4 };

/** The summary the API must return for a seeded device, built from the seed alone. */
function expectedSummary(seed: Seed, key: DeviceKey) {
  const d = seed.devices[key];
  return {
    id: d.id,
    ip_address: d.ip_address,
    mac_address: d.mac_address,
    mac_randomized: d.mac_randomized === 1,
    hostname: d.hostname,
    vendor: d.vendor,
    name: d.label ?? d.discovered_name,
    device_type: d.device_type,
    type_confidence: d.type_confidence,
    model: d.model,
    os_name: d.os_name,
    os_version: d.os_version,
    label: d.label,
    zone: d.zone,
    is_trusted: d.is_trusted === 1,
    notes: d.notes,
    risk_level: seed.assessments[key].risk.level,
    risk_score: seed.assessments[key].risk.score,
    open_ports: openPorts(seed.ports[key]),
    first_seen: d.first_seen,
    last_seen: d.last_seen,
    last_scan_id: d.last_scan_id,
    online: seed.presence[key].online,
    missed_scans: seed.presence[key].missed_scans,
    // The seed writes ports as test fixtures do, outside any scan: no coverage is recorded (test/api/coverage.test.ts has it).
    ports_examined: null,
    ports_examined_at: null,
    stale_ports: 0,
    // Written by the inventory writer (as a scan writes), so first seen and not yet acknowledged.
    status: d.status,
    watch: { offline: d.watch_offline === 1, online: d.watch_online === 1 },
    presence: { offline_after_scans: null },
  };
}

/** A seeded device's risk level, as the real risk code assesses its ports. */
const levelOf = (seed: Seed, key: DeviceKey) => seed.assessments[key].risk.level;

/** Seeded device keys matching `keep`, ordered by IP numerically. */
function expectedIds(seed: Seed, keep: (key: DeviceKey) => boolean = () => true): number[] {
  return DEVICE_KEYS.filter(keep)
    .sort((a, b) => compareIp(seed.devices[a].ip_address, seed.devices[b].ip_address))
    .map((k) => seed.devices[k].id);
}

describe.each(testDatabases())('device API ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let seed: Seed;

  beforeAll(async () => {
    ({ server, key, seed } = await startSeededServer(database));
  });
  afterAll(() => server?.close());

  const get = (path: string) => server.request(path, { key });

  async function listIds(query: string): Promise<{ ids: number[]; total: string | null }> {
    const res = await get(`/api/devices${query}`);
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await readJson(res)) as { id: number }[];
    return { ids: body.map((d) => d.id), total: res.headers.get('x-total-count') };
  }

  describe('GET /api/devices', () => {
    it('lists every device ordered by IP address numerically, with the total in X-Total-Count', async () => {
      const res = await get('/api/devices');
      expect(res.status).toBe(200);
      const body = await readJson(res);
      expect(body.map((d: { id: number }) => d.id)).toEqual(expectedIds(seed));
      expect(res.headers.get('x-total-count')).toBe(String(DEVICE_KEYS.length));
      // .2 < .9 < .10 < .100 < .200: text ordering would put .10 and .100 before .2 and .9.
      const ips = body.map((d: { ip_address: string }) => d.ip_address);
      expect(ips.indexOf(seed.devices.printer.ip_address)).toBeLessThan(ips.indexOf(seed.devices.camera.ip_address));
      expect(ips.indexOf(seed.devices.camera.ip_address)).toBeLessThan(ips.indexOf(seed.devices.nas.ip_address));
      expect(ips.indexOf(seed.devices.nas.ip_address)).toBeLessThan(ips.indexOf(seed.devices.laptop.ip_address));
    });

    it('returns each summary exactly as the API describes, open_ports sorted and unique', async () => {
      const body = await readJson(await get('/api/devices'));
      for (const device of body) {
        expect(Object.keys(device).sort()).toEqual([...SUMMARY_KEYS, 'mac_randomized'].sort());
        const k = DEVICE_KEYS.find((x) => seed.devices[x].id === device.id) as DeviceKey;
        expect(device).toEqual(expectedSummary(seed, k));
      }
      // The router has 53 open on TCP and UDP (listed once) and 22 filtered, reported out of order.
      const router = body.find((d: { id: number }) => d.id === seed.devices.router.id);
      expect(seed.ports.router.filter((x) => x.port === 53 && x.state === 'open')).toHaveLength(2);
      expect(router.open_ports.filter((x: number) => x === 53)).toHaveLength(1);
      expect(seed.ports.router.find((x) => x.port === 22)?.state).toBe('filtered');
      expect(router.open_ports).not.toContain(22);
      const nas = body.find((d: { id: number }) => d.id === seed.devices.nas.id);
      expect(seed.ports.nas.find((x) => x.port === 139)?.state).toBe('closed');
      expect(nas.open_ports).not.toContain(139);
    });

    it('filters by risk_level', async () => {
      for (const level of ['critical', 'high', 'medium', 'low', 'none']) {
        const expected = expectedIds(seed, (k) => levelOf(seed, k) === level);
        // The seed's ports give every level at least one device, so no case passes by being empty.
        expect(expected.length, level).toBeGreaterThan(0);
        const { ids, total } = await listIds(`?risk_level=${level}`);
        expect(ids, level).toEqual(expected);
        expect(total).toBe(String(expected.length));
      }
    });

    it('filters by is_trusted', async () => {
      for (const value of [true, false]) {
        const expected = expectedIds(seed, (k) => (seed.devices[k].is_trusted === 1) === value);
        expect(expected.length).toBeGreaterThan(0);
        const { ids, total } = await listIds(`?is_trusted=${value}`);
        expect(ids).toEqual(expected);
        expect(total).toBe(String(expected.length));
      }
    });

    it('filters by zone, including a zone that is not configured', async () => {
      for (const zone of ['Servers', 'IoT', 'Lab', 'Guest']) {
        const expected = expectedIds(seed, (k) => seed.devices[k].zone === zone);
        const { ids, total } = await listIds(`?zone=${encodeURIComponent(zone)}`);
        expect(ids, zone).toEqual(expected);
        expect(total).toBe(String(expected.length));
      }
    });

    it('filters by scan_id: the devices that scan saw', async () => {
      for (const scanKey of ['old', 'first', 'second', 'device'] as const) {
        const seen = new Set(seed.snapshots[scanKey].map((s) => s.device));
        const { ids, total } = await listIds(`?scan_id=${seed.scans[scanKey].id}`);
        expect(ids, scanKey).toEqual(expectedIds(seed, (k) => seen.has(k)));
        expect(total).toBe(String(seen.size));
      }
      // A scan that exists but saw nothing is an empty list, not a 404.
      const failed = await listIds(`?scan_id=${seed.scans.failed.id}`);
      expect(failed).toEqual({ ids: [], total: '0' });
    });

    it('combines filters with AND', async () => {
      const first = new Set(seed.snapshots.first.map((s) => s.device));
      const cases: [string, (k: DeviceKey) => boolean][] = [
        ['risk_level=high&is_trusted=false', (k) => levelOf(seed, k) === 'high' && seed.devices[k].is_trusted === 0],
        ['zone=Servers&risk_level=critical', (k) => seed.devices[k].zone === 'Servers' && levelOf(seed, k) === 'critical'],
        ['zone=Servers&risk_level=low', (k) => seed.devices[k].zone === 'Servers' && levelOf(seed, k) === 'low'],
        ['is_trusted=true&risk_level=low', (k) => seed.devices[k].is_trusted === 1 && levelOf(seed, k) === 'low'],
        [`scan_id=${seed.scans.first.id}&is_trusted=true`, (k) => first.has(k) && seed.devices[k].is_trusted === 1],
        [
          `scan_id=${seed.scans.first.id}&is_trusted=false&risk_level=high&zone=IoT`,
          (k) => first.has(k) && seed.devices[k].is_trusted === 0 && levelOf(seed, k) === 'high' && seed.devices[k].zone === 'IoT',
        ],
      ];
      let nonEmpty = 0;
      let empty = 0;
      for (const [query, keep] of cases) {
        const expected = expectedIds(seed, keep);
        if (expected.length) nonEmpty++;
        else empty++;
        const { ids, total } = await listIds(`?${query}`);
        expect(ids, query).toEqual(expected);
        expect(total, query).toBe(String(expected.length));
      }
      // The cases exercise both outcomes, and combining narrows the single filters.
      expect(nonEmpty).toBeGreaterThan(0);
      expect(empty).toBeGreaterThan(0);
      const trustedOnly = await listIds('?is_trusted=true');
      const trustedLow = await listIds('?is_trusted=true&risk_level=low');
      expect(trustedLow.ids.length).toBeLessThan(trustedOnly.ids.length);
    });

    it('pages with limit and offset while X-Total-Count keeps the full count', async () => {
      const all = expectedIds(seed);
      expect(await listIds('?limit=2')).toEqual({ ids: all.slice(0, 2), total: String(all.length) });
      expect(await listIds('?limit=2&offset=2')).toEqual({ ids: all.slice(2, 4), total: String(all.length) });
      expect(await listIds('?offset=5')).toEqual({ ids: all.slice(5), total: String(all.length) });
      expect(await listIds(`?offset=${all.length + 10}`)).toEqual({ ids: [], total: String(all.length) });
      expect(await listIds('?limit=1000')).toEqual({ ids: all, total: String(all.length) });
      const untrusted = expectedIds(seed, (k) => seed.devices[k].is_trusted === 0);
      expect(await listIds('?is_trusted=false&limit=1&offset=1')).toEqual({ ids: untrusted.slice(1, 2), total: String(untrusted.length) });
    });

    it('searches free text case-insensitively across IP, MAC, names, vendor, label and notes', async () => {
      const text = (k: DeviceKey) => {
        const d = seed.devices[k];
        return [d.ip_address, d.mac_address, d.hostname, d.vendor, d.label, d.notes, d.os_name, d.device_type, d.zone]
          .filter((v): v is string => v !== null)
          .map((v) => v.toLowerCase());
      };
      for (const term of ['LAN', 'synology', 'upstairs', "anna's", seed.devices.camera.ip_address, 'qemu']) {
        const expected = expectedIds(seed, (k) => text(k).some((v) => v.includes(term.toLowerCase())));
        expect(expected.length, term).toBeGreaterThan(0);
        const { ids, total } = await listIds(`?q=${encodeURIComponent(term)}`);
        expect(ids, term).toEqual(expected);
        expect(total, term).toBe(String(expected.length));
      }
      // LIKE wildcards are taken literally, and a search combines with the other filters.
      expect((await listIds('?q=%25')).ids).toEqual([]);
      expect((await listIds('?q=_')).ids).toEqual([]);
      expect((await listIds('?q=lan&is_trusted=false')).ids).toEqual(
        expectedIds(seed, (k) => text(k).some((v) => v.includes('lan')) && seed.devices[k].is_trusted === 0),
      );
    });

    it('finds devices with an open port when the search is a port number', async () => {
      const port = seed.ports.nas.find((p) => p.state === 'open')!.port;
      const expected = expectedIds(seed, (k) => openPorts(seed.ports[k]).includes(port) || seed.devices[k].ip_address.includes(String(port)));
      expect((await listIds(`?q=${port}`)).ids).toEqual(expected);
    });

    it('sorts by a field in either direction, empty values last and ties in IP order', async () => {
      const all = DEVICE_KEYS.map((k) => seed.devices[k]);
      const byIp = (a: (typeof all)[number], b: (typeof all)[number]) => compareIp(a.ip_address, b.ip_address);
      const score = (d: (typeof all)[number]) => seed.assessments[DEVICE_KEYS.find((k) => seed.devices[k].id === d.id)!].risk.score;
      const scoreDesc = [...all].sort((a, b) => score(b) - score(a) || byIp(a, b)).map((d) => d.id);
      expect((await listIds('?sort=risk_score&order=desc')).ids).toEqual(scoreDesc);
      const labelled = all.filter((d) => d.label !== null);
      const labelAsc = [
        ...labelled.sort((a, b) => (a.label! < b.label! ? -1 : a.label! > b.label! ? 1 : byIp(a, b))),
        ...all.filter((d) => d.label === null).sort(byIp),
      ];
      expect((await listIds('?sort=label')).ids).toEqual(labelAsc.map((d) => d.id));
      expect((await listIds('?sort=ip_address&order=desc')).ids).toEqual(expectedIds(seed).reverse());
      expect((await listIds('?sort=risk_score&order=desc&limit=2&offset=1')).ids).toEqual(scoreDesc.slice(1, 3));
    });

    it('filters by online', async () => {
      for (const online of [true, false]) {
        expect((await listIds(`?online=${online}`)).ids).toEqual(expectedIds(seed, (k) => seed.presence[k].online === online));
      }
    });

    it('answers 404 for an unknown scan_id', async () => {
      const res = await get('/api/devices?scan_id=999999');
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ detail: 'Scan not found', code: 'NW_SCAN_NOT_FOUND' });
    });

    it.each([
      ['risk_level=bad', 'risk_level'],
      ['risk_level=HIGH', 'risk_level'],
      ['risk_level=', 'risk_level'],
      ['is_trusted=yes', 'is_trusted'],
      ['is_trusted=1', 'is_trusted'],
      ['is_trusted=', 'is_trusted'],
      ['scan_id=abc', 'scan_id'],
      ['scan_id=0', 'scan_id'],
      ['scan_id=-1', 'scan_id'],
      ['scan_id=1.5', 'scan_id'],
      ['scan_id=99999999999', 'scan_id'],
      ['zone=', 'zone'],
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=abc', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=x', 'offset'],
      ['colour=red', 'colour'],
      ['risk_level=high&risk_level=low', 'risk_level'],
      ['sort=colour', 'sort'],
      ['order=up', 'order'],
      ['online=maybe', 'online'],
      [`q=${'x'.repeat(201)}`, 'q'],
    ])('answers 400 naming the parameter for %s', async (query, name) => {
      const res = await get(`/api/devices?${query}`);
      expect(res.status).toBe(400);
      const body = await readJson(res);
      expect(Object.keys(body)).toContain('detail');
      expect(body.detail).toMatch(new RegExp(`^${name}\\b`));
    });
  });

  describe('GET /api/devices/{device_id}', () => {
    it('returns the device with ports, risk details, CVEs and IP history', async () => {
      const nas = seed.devices.nas;
      const res = await get(`/api/devices/${nas.id}`);
      expect(res.status).toBe(200);
      const body = await readJson(res);
      const { ports, risk_details, cves, ip_history, hostname_source, mac_source, coverage, ...summary } = body;
      expect(coverage).toEqual([]);
      expect(summary).toEqual(expectedSummary(seed, 'nas'));
      // Both seen by the seed's scans (name sources: test/api/name-sources.test.ts).
      expect({ hostname_source, mac_source }).toEqual({ hostname_source: 'scan', mac_source: 'scan' });

      // The ports the last scan reported, without the closed one: closed ports are not inventory.
      const byPort = (a: { port: number; protocol: string }, b: { port: number; protocol: string }) =>
        a.port - b.port || a.protocol.localeCompare(b.protocol);
      const kept = seed.ports.nas.filter((x) => x.state !== 'closed');
      expect(kept.length).toBeLessThan(seed.ports.nas.length);
      expect([...ports].sort(byPort)).toEqual(
        [...kept]
          .sort(byPort)
          .map((p) => ({ ...p, last_verified_at: nas.last_seen, verified_by_scan_id: null, stale: false, description: describePort(p) })),
      );
      expect(ports.find((p: { port: number }) => p.port === 445)?.description).toBe('SMB file sharing (Samba smbd 4.15.13)');

      // The risk the real rules and the shipped CVE data give those ports, findings worst first
      // (by severity, then by the points each added).
      const { risk, cves: matches } = seed.assessments.nas;
      // As the API shows them: with their acceptance (none here); the CVSS score is the CVE's (listed in `cves`).
      const expectedFindings = [...risk.findings]
        .sort((a, b) => SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] || b.score - a.score)
        .map(({ cvss_score: _cvss, ...f }) => ({ ...f, acceptance: null }));
      expect(risk_details).toEqual({
        level: risk.level,
        score: risk.score,
        summary: risk.summary,
        top_recommendation: expectedFindings[0].recommendation,
        findings: expectedFindings,
      });
      // Both kinds of finding are there, and their points add up to the device's score.
      const findings: { cve_ids: string[]; score: number }[] = risk_details.findings;
      expect(findings.some((f) => f.cve_ids.length > 0)).toBe(true);
      expect(findings.some((f) => f.cve_ids.length === 0)).toBe(true);
      expect(findings.reduce((n, f) => n + f.score, 0)).toBe(risk_details.score);

      // The CVEs matched on the open ports, highest CVSS first.
      const shipped = new Map(loadShippedCves().map((e) => [e.id, e]));
      const expectedCves = [...matches]
        .sort((a, b) => (b.cvss_score ?? -1) - (a.cvss_score ?? -1) || a.id.localeCompare(b.id))
        .map((c) => ({
          id: c.id,
          severity: c.severity,
          cvss_score: c.cvss_score,
          description: c.description,
          remediation: c.remediation,
          references: c.references,
          confidence: c.confidence,
          port: c.port,
          matched_product: c.matched_product,
          matched_version: c.matched_version,
          // The version that fixes it: the shipped data's exclusive upper bound of the range the version is in.
          fixed_in: fixedIn(shipped.get(c.id)!.affected, c.matched_version, c.matched_product),
          // No KEV catalogue or EPSS file imported: the shipped dataset's KEV flag, dates unknown.
          kev: c.kev ? { date_added: null, ransomware: false, due_date: null } : null,
          epss: null,
        }));
      expect(expectedCves.length).toBeGreaterThan(1);
      expect(cves).toEqual(expectedCves);

      // Most recent address first; the earlier address keeps its own first and last sighting.
      const expectedHistory = [...seed.ipHistory.nas].sort((a, b) => b.last_seen.localeCompare(a.last_seen));
      expect(ip_history).toEqual(expectedHistory);
      expect(ip_history.map((h: { ip_address: string }) => h.ip_address)).toEqual(['192.168.50.10', '192.168.50.7']);
      expect(ip_history[0].first_seen).not.toBe(ip_history[0].last_seen);
    });

    it('returns empty collections and a null recommendation for a device with no findings', async () => {
      const laptop = seed.devices.laptop;
      const body = await readJson(await get(`/api/devices/${laptop.id}`));
      expect(body.ports).toEqual([]);
      expect(body.cves).toEqual([]);
      const { risk } = seed.assessments.laptop;
      // Without finding, the summary says what was examined; written outside any scan, nothing was.
      expect(risk.summary).toBe('No risky services or known vulnerabilities found');
      expect(body.risk_details).toEqual({ level: 'none', score: 0, summary: noFindingStatement([]), top_recommendation: null, findings: [] });
      expect(body.ip_history).toEqual(seed.ipHistory.laptop);
      expect(body.online).toBe(false);
      expect(body.missed_scans).toBe(1);
    });

    it('answers 404 for an unknown device and 400 for a non-numeric id', async () => {
      const missing = await get('/api/devices/999999');
      expect(missing.status).toBe(404);
      expect(await missing.json()).toEqual({ detail: 'Device not found', code: 'NW_DEVICE_NOT_FOUND' });
      for (const bad of ['abc', '0', '-3', '1.5']) {
        const res = await get(`/api/devices/${bad}`);
        expect(res.status, bad).toBe(400);
        expect((await readJson(res)).detail, bad).toMatch(/^device_id\b/);
      }
    });
  });
});

describe.each(testDatabases())('device updates and zones ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let cookie: string;
  let seed: Seed;

  beforeAll(async () => {
    ({ server, key, cookie, seed } = await startSeededServer(database));
  });
  afterAll(() => server?.close());

  const get = async (path: string) => readJson(await server.request(path, { key }));
  const put = (id: number, json: unknown, init: { headers?: Record<string, string> } = {}) =>
    server.request(`/api/devices/${id}`, { method: 'PUT', key, json, ...init });

  async function deviceUpdatedEntries(): Promise<{ resource_id: string; actor: string; actor_type: string; success: boolean; details: any }[]> {
    const res = await server.request('/api/audit-logs?action=device_updated', { key });
    expect(res.status).toBe(200);
    return readJson(res);
  }

  it('lists the configured zones, then other zones still assigned to a device', async () => {
    const config = await get('/api/config');
    const configured: string[] = config.zones;
    const assigned = [...new Set(DEVICE_KEYS.map((k) => seed.devices[k].zone).filter((z): z is string => z !== null))];
    const extra = assigned.filter((z) => !configured.includes(z)).sort();
    expect(extra).toEqual(['Lab']);
    expect(await get('/api/zones')).toEqual([...configured, ...extra]);
  });

  it('changes only the fields given and returns the full device', async () => {
    const id = seed.devices.router.id;
    const before = await get(`/api/devices/${id}`);
    const res = await put(id, { label: 'Core router' });
    expect(res.status).toBe(200);
    const body = await readJson(res);
    // The label is the device's name (CONTRACT §15).
    const named = { label: 'Core router', name: 'Core router' };
    expect(body).toEqual({ ...before, ...named });
    expect(await get(`/api/devices/${id}`)).toEqual(body);

    const res2 = await put(id, { is_trusted: false });
    expect(res2.status).toBe(200);
    expect(await readJson(res2)).toEqual({ ...before, ...named, is_trusted: false });

    const res3 = await put(id, { zone: 'DMZ', notes: 'moved to the DMZ rack' });
    expect(await readJson(res3)).toEqual({ ...before, ...named, is_trusted: false, zone: 'DMZ', notes: 'moved to the DMZ rack' });
  });

  it('lists a page again as it is after a change, whatever order its parameters came in', async () => {
    const id = seed.devices.router.id;
    const first = await server.request('/api/devices?limit=3&order=asc&sort=ip_address', { key });
    const again = await server.request('/api/devices?sort=ip_address&limit=3&order=asc', { key });
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(again.headers.get('x-total-count')).toBe(first.headers.get('x-total-count'));
    const page = await readJson(first);
    expect(await readJson(again)).toEqual(page);
    // A write changes the data version: the page kept before it is not sent again.
    const routerOf = (list: { id: number; notes: string | null }[]) => list.find((d) => d.id === id)!;
    const notes = routerOf(await get('/api/devices?limit=500')).notes;
    expect((await put(id, { notes: 'page cache check' })).status).toBe(200);
    expect(routerOf(await get('/api/devices?limit=500')).notes).toBe('page cache check');
    const paged = await get('/api/devices?order=asc&limit=3&sort=ip_address');
    expect(paged.map((d: { id: number }) => d.id)).toEqual(page.map((d: { id: number }) => d.id));
    expect((await put(id, { notes })).status).toBe(200);
    expect(routerOf(await get('/api/devices?limit=500')).notes).toBe(notes);
  });

  it('clears label, zone and notes with null or an empty string', async () => {
    const id = seed.devices.nas.id;
    const before = await get(`/api/devices/${id}`);
    expect(before.label).not.toBeNull();
    expect(before.zone).not.toBeNull();
    await put(id, { notes: 'temporary note' });

    const res = await put(id, { label: null, zone: '' });
    expect(res.status).toBe(200);
    // Without a label, the name is the discovered one (none in the seed).
    expect(await readJson(res)).toEqual({ ...before, label: null, name: null, zone: null, notes: 'temporary note' });

    const res2 = await put(id, { notes: '' });
    expect((await readJson(res2)).notes).toBeNull();
    const res3 = await put(id, { label: 'NAS', notes: 'x' });
    expect(await readJson(res3)).toMatchObject({ label: 'NAS', notes: 'x' });
    const res4 = await put(id, { notes: null });
    expect(await readJson(res4)).toMatchObject({ label: 'NAS', notes: null, is_trusted: before.is_trusted });
  });

  it('accepts only zones listed by GET /api/zones and names them in the error', async () => {
    const id = seed.devices.camera.id;
    const before = await get(`/api/devices/${id}`);
    const zones: string[] = await get('/api/zones');
    for (const zone of ['Kitchen', 'servers', ' Servers']) {
      const res = await put(id, { zone });
      expect(res.status, zone).toBe(400);
      const body = await readJson(res);
      expect(body.detail).toMatch(/^zone\b/);
      for (const z of zones) expect(body.detail).toContain(z);
    }
    expect(await get(`/api/devices/${id}`)).toEqual(before);

    for (const zone of zones) {
      const res = await put(id, { zone });
      expect(res.status, zone).toBe(200);
      expect((await readJson(res)).zone).toBe(zone);
    }
    expect((await put(id, { zone: before.zone })).status).toBe(200);
  });

  it('drops an unconfigured zone from the list once no device has it, and then refuses it', async () => {
    const lab = seed.devices.lab;
    expect(await get('/api/zones')).toContain('Lab');
    // Still assigned, so still allowed.
    expect((await put(seed.devices.printer.id, { zone: 'Lab' })).status).toBe(200);
    expect((await put(seed.devices.printer.id, { zone: null })).status).toBe(200);
    expect(await get('/api/zones')).toContain('Lab');
    expect((await put(lab.id, { zone: null })).status).toBe(200);
    expect(await get('/api/zones')).not.toContain('Lab');
    const res = await put(lab.id, { zone: 'Lab' });
    expect(res.status).toBe(400);
    expect((await get(`/api/devices/${lab.id}`)).zone).toBeNull();
  });

  it.each([
    ['is_trusted as a string', { is_trusted: 'true' }, 'is_trusted'],
    ['is_trusted as a number', { is_trusted: 1 }, 'is_trusted'],
    ['is_trusted null', { is_trusted: null }, 'is_trusted'],
    ['an unknown field', { hostname: 'evil' }, 'hostname'],
    ['an unknown field beside a valid one', { label: 'ok', risk_level: 'none' }, 'risk_level'],
    ['an empty body', {}, 'body'],
    ['a label that is not a string', { label: 42 }, 'label'],
    ['an over-long label', { label: 'x'.repeat(201) }, 'label'],
    ['a JSON array', [{ label: 'x' }], 'body'],
  ])('answers 400 for %s and changes nothing', async (_name, json, field) => {
    const id = seed.devices.laptop.id;
    const before = await get(`/api/devices/${id}`);
    const res = await put(id, json);
    expect(res.status).toBe(400);
    expect((await readJson(res)).detail).toMatch(new RegExp(`^${field}\\b`));
    expect(await get(`/api/devices/${id}`)).toEqual(before);
  });

  it('answers 400 for malformed JSON, 415 for another content type, 404 for an unknown device', async () => {
    const id = seed.devices.laptop.id;
    const malformed = await put(id, '{"label": ');
    expect(malformed.status).toBe(400);
    expect((await readJson(malformed)).detail).toMatch(/^body\b/);
    const text = await server.request(`/api/devices/${id}`, { method: 'PUT', key, body: 'label=x', headers: { 'Content-Type': 'text/plain' } });
    expect(text.status).toBe(415);
    const missing = await put(999999, { label: 'x' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ detail: 'Device not found', code: 'NW_DEVICE_NOT_FOUND' });
    expect((await put(0, { label: 'x' })).status).toBe(400);
  });

  describe('POST /api/devices/bulk', () => {
    const bulk = (json: unknown) => server.request('/api/devices/bulk', { method: 'POST', key, json });

    it('sets trust and zone on every listed device and audits each one that changed', async () => {
      const ids = [seed.devices.camera.id, seed.devices.printer.id];
      const auditBefore = (await deviceUpdatedEntries()).length;
      const res = await bulk({ device_ids: ids, is_trusted: true, zone: 'IoT' });
      expect(res.status).toBe(200);
      const body = await readJson(res);
      expect(body.devices.map((d: { id: number }) => d.id)).toEqual([...ids].sort((a, b) => a - b));
      for (const id of ids) {
        const device = await get(`/api/devices/${id}`);
        expect([device.is_trusted, device.zone]).toEqual([true, 'IoT']);
      }
      const entries = await deviceUpdatedEntries();
      expect(entries.length - auditBefore).toBe(body.updated);
      expect(body.updated).toBeGreaterThan(0);
      expect(entries[0].details.bulk).toBe(true);

      // Sending the same change again changes nothing and writes no audit entry.
      const again = await readJson(await bulk({ device_ids: ids, is_trusted: true, zone: 'IoT' }));
      expect(again.updated).toBe(0);
      expect((await deviceUpdatedEntries()).length).toBe(entries.length);

      // A null zone clears it.
      await bulk({ device_ids: ids, zone: null });
      for (const id of ids) expect((await get(`/api/devices/${id}`)).zone).toBeNull();
    });

    it('changes nothing and lists the missing ids when one does not exist', async () => {
      const id = seed.devices.laptop.id;
      const before = await get(`/api/devices/${id}`);
      const res = await bulk({ device_ids: [id, 999991], is_trusted: !before.is_trusted });
      expect(res.status).toBe(404);
      expect(await readJson(res)).toEqual({ detail: 'Devices not found: 999991', code: 'NW_DEVICE_NOT_FOUND', missing: [999991] });
      expect(await get(`/api/devices/${id}`)).toEqual(before);
    });

    it.each([
      [{ device_ids: [1] }, /^body: give is_trusted/],
      [{ device_ids: [], is_trusted: true }, /^device_ids\b/],
      [{ device_ids: [1, 1], is_trusted: true }, /^device_ids\b/],
      [{ device_ids: ['a'], is_trusted: true }, /^device_ids\b/],
      [{ device_ids: [1], is_trusted: 'yes' }, /^is_trusted\b/],
      [{ device_ids: [1], zone: 'Moon' }, /^zone: must be one of /],
      [{ device_ids: [1], label: 'x' }, /label/],
      [{ is_trusted: true }, /device_ids/],
    ])('answers 400 for %j', async (json, detail) => {
      const res = await bulk(json);
      expect(res.status).toBe(400);
      expect((await readJson(res)).detail).toMatch(detail);
    });
  });

  it('stores text verbatim: markup comes back exactly as sent', async () => {
    const id = seed.devices.printer.id;
    const label = '<script>alert("x")</script> & <b>bold</b>';
    const notes = "line 1\nline 2 'quoted' \u00e9\u4e2d";
    const res = await put(id, { label, notes });
    expect(res.status).toBe(200);
    expect(await readJson(res)).toMatchObject({ label, notes });
    expect(await get(`/api/devices/${id}`)).toMatchObject({ label, notes });
    const list = await get('/api/devices');
    expect(list.find((d: { id: number }) => d.id === id)).toMatchObject({ label, notes });
  });

  it('writes a device_updated audit entry with old and new values of the changed fields', async () => {
    const device = seed.devices.camera;
    const before = await get(`/api/devices/${device.id}`);
    const countBefore = (await deviceUpdatedEntries()).length;

    const res = await put(device.id, { label: 'Front door camera', is_trusted: !before.is_trusted, notes: before.notes });
    expect(res.status).toBe(200);
    const entries = await deviceUpdatedEntries();
    expect(entries.length).toBe(countBefore + 1);
    const entry = entries[0];
    expect(entry).toMatchObject({ resource_id: String(device.id), actor: 'test-key', actor_type: 'api_key', success: true });
    // Only what changed: notes was sent with its current value.
    expect(entry.details.changes).toEqual({
      label: { old: before.label, new: 'Front door camera' },
      is_trusted: { old: before.is_trusted, new: !before.is_trusted },
    });
    expect(entry.details.ip_address).toBe(device.ip_address);

    // A request that changes nothing writes no entry.
    expect((await put(device.id, { label: 'Front door camera' })).status).toBe(200);
    expect((await deviceUpdatedEntries()).length).toBe(countBefore + 1);
  });

  it('records the user as the actor of an update made with a session', async () => {
    const device = seed.devices.lab;
    const before = await get(`/api/devices/${device.id}`);
    const res = await server.request(`/api/devices/${device.id}`, { method: 'PUT', cookie, json: { notes: null } });
    expect(res.status).toBe(200);
    expect((await readJson(res)).notes).toBeNull();
    const [entry] = await deviceUpdatedEntries();
    expect(entry).toMatchObject({ resource_id: String(device.id), actor: ADMIN.username, actor_type: 'user', success: true });
    expect(entry.details.changes).toEqual({ notes: { old: before.notes, new: null } });
    expect(before.notes).not.toBeNull();
  });
});
