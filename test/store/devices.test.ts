import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ipv4ToInt } from '../../src/core/net.js';
import type { ScannedPort } from '../../src/core/model.js';
import type { RiskFinding } from '../../src/core/risk.js';
import type { FindingSeverity } from '../../src/core/severity.js';
import type { DeviceAssessment, StoredCveMatch } from '../../src/store/evaluation.js';
import type { Store } from '../../src/store/index.js';
import { InventoryWriter } from '../../src/store/inventory.js';
import { testDatabases, type TestDatabase } from '../helpers/databases.js';

type Opened = Awaited<ReturnType<TestDatabase['open']>>;

const AT = '2026-01-05T10:00:00.000Z';

async function addDevice(store: Store, ip: string, fields: { zone?: string | null; is_trusted?: number; risk_level?: string } = {}) {
  return store.devices.insert({
    identity: `ip:${ip}`,
    ip_address: ip,
    ip_sort: ipv4ToInt(ip),
    mac_randomized: 0,
    is_trusted: fields.is_trusted ?? 0,
    zone: fields.zone ?? null,
    risk_level: fields.risk_level ?? 'none',
    risk_score: 0,
    online: 1,
    first_seen: AT,
    last_seen: AT,
  });
}

describe.each(testDatabases())('device store ($kind)', (database) => {
  let db: Opened;
  let store: Store;

  beforeAll(async () => {
    db = await database.open();
    store = db.store;
  });
  afterAll(() => db?.cleanup());

  it('orders devices and snapshots by IP numerically, across the whole IPv4 range', async () => {
    // Inserted out of order; text ordering would give 10.0.0.10 < 10.0.0.9 and 10.0.1.1 < 9.x.
    const ips = ['10.0.1.1', '255.255.255.255', '10.0.0.10', '9.255.255.255', '10.0.0.9', '0.0.0.1', '128.0.0.1', '10.0.0.100'];
    const scan = await store.scans.create({
      status: 'completed',
      profile: 'normal',
      subnet: '0.0.0.0/0',
      scan_type: 'network',
      devices_found: ips.length,
    });
    for (const ip of ips) {
      const device = await addDevice(store, ip);
      await store.devices.insertSnapshot({
        scan_id: scan.id,
        device_id: device.id,
        ip_address: ip,
        ip_sort: ipv4ToInt(ip),
        ports: '[]',
        open_port_count: 0,
        risk_level: 'none',
        risk_score: 0,
      });
    }
    const want = ['0.0.0.1', '9.255.255.255', '10.0.0.9', '10.0.0.10', '10.0.0.100', '10.0.1.1', '128.0.0.1', '255.255.255.255'];
    const { rows, total } = await store.devices.list({ limit: 100, offset: 0 });
    expect(rows.map((r) => r.ip_address)).toEqual(want);
    expect(total).toBe(ips.length);
    expect(typeof total).toBe('number');
    expect((await store.devices.list({ limit: 3, offset: 2 })).rows.map((r) => r.ip_address)).toEqual(want.slice(2, 5));
    expect((await store.devices.scanDevices(scan.id)).map((r) => r.ip_address)).toEqual(want);
    const row = await store.devices.getRow(rows[rows.length - 1].id);
    // ip_sort above 2^31 survives the round trip as a number (bigint on PostgreSQL).
    expect(row?.ip_sort).toBe(4_294_967_295);
  });

  it('returns integer ids and counts as numbers, not strings', async () => {
    const { rows, total } = await store.devices.list({ limit: 1, offset: 0 });
    expect(typeof total).toBe('number');
    expect(typeof rows[0].id).toBe('number');
    expect(typeof rows[0].risk_score).toBe('number');
    const scans = await store.scans.list(10, 0);
    expect(typeof scans.total).toBe('number');
    expect(typeof scans.rows[0].id).toBe('number');
    const changes = await store.changes.list({ limit: 10, offset: 0 });
    expect(changes.total).toBe(0);
  });

  it('reports assigned zones once each, sorted, without nulls', async () => {
    await addDevice(store, '172.16.0.1', { zone: 'Lab' });
    await addDevice(store, '172.16.0.2', { zone: 'Lab' });
    await addDevice(store, '172.16.0.3', { zone: 'Attic' });
    expect(await store.devices.assignedZones()).toEqual(['Attic', 'Lab']);
  });

  it('updates only the user fields given, clearing with null or an empty string', async () => {
    const device = await addDevice(store, '172.16.1.1', { zone: 'Lab', is_trusted: 1 });
    await store.devices.updateUserFields(device.id, { label: 'printer', notes: 'n' });
    expect(await store.devices.getRow(device.id)).toMatchObject({ label: 'printer', notes: 'n', zone: 'Lab', is_trusted: 1 });
    await store.devices.updateUserFields(device.id, { label: '', zone: null, is_trusted: false });
    expect(await store.devices.getRow(device.id)).toMatchObject({ label: null, notes: 'n', zone: null, is_trusted: 0 });
  });

  it('keeps the first sighting of an address and moves its last one', async () => {
    const inventory = new InventoryWriter(store.db, () => store.touch());
    const scan = await store.scans.create({ status: 'running', profile: 'quick', subnet: '172.16.2.0/24', scan_type: 'network', devices_found: 0 });
    const host = (ip: string) => ({ ip, mac: '00:16:3E:00:02:01', vendor: null, hostname: null });
    await inventory.recordDiscovery(scan.id, [host('172.16.2.1')], '2026-01-01T00:00:00.000Z');
    await inventory.recordDiscovery(scan.id, [host('172.16.2.9')], '2026-01-02T00:00:00.000Z');
    const { seen } = await inventory.recordDiscovery(scan.id, [host('172.16.2.1')], '2026-01-03T00:00:00.000Z');
    const detail = await store.devices.get(seen[0].deviceId);
    expect(detail?.ip_history).toEqual([
      { ip_address: '172.16.2.1', first_seen: '2026-01-01T00:00:00.000Z', last_seen: '2026-01-03T00:00:00.000Z' },
      { ip_address: '172.16.2.9', first_seen: '2026-01-02T00:00:00.000Z', last_seen: '2026-01-02T00:00:00.000Z' },
    ]);
  });

  it('replaces ports, findings and CVEs instead of adding to them, and serves them worst first', async () => {
    const inventory = new InventoryWriter(store.db, () => store.touch());
    const device = await addDevice(store, '172.16.3.1');
    const scan = await store.scans.create({ status: 'running', profile: 'normal', subnet: '172.16.3.1/32', scan_type: 'device', devices_found: 0 });
    const port = (n: number, state = 'open'): ScannedPort => ({
      port: n,
      protocol: 'tcp',
      state,
      service: null,
      product: null,
      version: null,
      extra_info: null,
      cpe: [],
    });
    const host = (ports: ScannedPort[]) => ({ ip: '172.16.3.1', mac: null, vendor: null, hostname: null, os_name: null, device_type: null, ports });
    await inventory.recordPorts([{ deviceId: device.id, host: host([port(80), port(22)]) }], AT);
    await inventory.recordPorts([{ deviceId: device.id, host: host([port(443), port(8443, 'filtered')]) }], AT);

    const finding = (title: string, severity: FindingSeverity, score: number): RiskFinding => ({
      finding_key: `rule:${title}:-`,
      kind: 'rule',
      cvss_score: null,
      port: null,
      protocol: null,
      severity,
      score,
      service: null,
      title,
      description: 'd',
      recommendation: `fix ${title}`,
      cve_ids: [],
    });
    const cve = (id: string, cvss_score: number | null): StoredCveMatch => ({
      id,
      severity: 'high',
      cvss_score,
      remediation: null,
      confidence: 'likely',
      port: 443,
      matched_product: null,
      matched_version: null,
    });
    const assessment = (level: FindingSeverity, findings: RiskFinding[], cves: StoredCveMatch[]): DeviceAssessment => ({
      deviceId: device.id,
      risk: { level, score: findings.reduce((n, f) => n + f.score, 0), summary: `${level} risk`, findings },
      cves,
    });
    await store.evaluation.replaceAssessments(scan.id, [
      assessment('high', [finding('a', 'high', 40), finding('b', 'low', 1)], [cve('CVE-2020-0001', 5)]),
    ]);
    // Written out of order: a low finding before a medium one, and a medium one with fewer points first.
    await store.evaluation.replaceAssessments(scan.id, [
      assessment(
        'medium',
        [finding('c', 'low', 1), finding('d', 'medium', 4), finding('e', 'medium', 15)],
        [cve('CVE-2021-0002', null), cve('CVE-2021-0003', 7.5), cve('CVE-2021-0001', 7.5)],
      ),
    ]);
    const detail = await store.devices.get(device.id);
    expect(detail?.ports.map((p) => p.port)).toEqual([443, 8443]);
    expect(detail?.open_ports).toEqual([443]);
    expect(detail?.risk_details).toMatchObject({ level: 'medium', score: 20, summary: 'medium risk', top_recommendation: 'fix e' });
    // Worst severity first, the finding that added more points first within a severity.
    expect(detail?.risk_details.findings.map((f) => f.title)).toEqual(['e', 'd', 'c']);
    // Highest score first, ties by CVE id, unscored last on both databases.
    expect(detail?.cves.map((c) => c.id)).toEqual(['CVE-2021-0001', 'CVE-2021-0003', 'CVE-2021-0002']);
  });

  it('stores a text many findings share once, and reads findings written before that with their own texts', async () => {
    const devices = [await addDevice(store, '172.16.4.1'), await addDevice(store, '172.16.4.2')];
    const scan = await store.scans.create({ status: 'running', profile: 'normal', subnet: '172.16.4.0/24', scan_type: 'network', devices_found: 0 });
    const finding = (title: string, port: number): RiskFinding => ({
      finding_key: `rule:${title}:${port}`,
      kind: 'rule',
      cvss_score: null,
      port,
      protocol: 'tcp',
      severity: 'medium',
      score: 4,
      service: 'telnet',
      title,
      description: `Cleartext "${title}" on the wire`,
      recommendation: `Turn ${title} off`,
      cve_ids: [],
    });
    const texts = async () => (await store.db.selectFrom('finding_texts').select('id').execute()).length;
    const before = await texts();
    await store.evaluation.replaceAssessments(
      scan.id,
      devices.map((d) => ({
        deviceId: d.id,
        risk: { level: 'medium', score: 8, summary: 'medium risk', findings: [finding('Telnet', 23), finding('Telnet', 2323)] },
        cves: [],
      })),
    );
    // Four findings, one text; assessed again, the same text is found, not added.
    expect(await texts()).toBe(before + 1);
    await store.evaluation.replaceAssessments(scan.id, [
      { deviceId: devices[0].id, risk: { level: 'medium', score: 4, summary: 'medium risk', findings: [finding('Telnet', 23)] }, cves: [] },
    ]);
    expect(await texts()).toBe(before + 1);
    // A row from before migration 024 (or a restored older backup): its own texts, no text_id.
    await store.db
      .insertInto('risk_findings')
      .values({
        device_id: devices[1].id,
        scan_id: scan.id,
        port: 21,
        protocol: 'tcp',
        severity: 'low',
        score: 1,
        service: 'ftp',
        title: 'FTP',
        description: 'Old row',
        recommendation: 'Old advice',
        cve_ids: '[]',
        finding_key: 'rule:FTP:21',
        kind: 'rule',
        cvss_score: null,
      })
      .execute();
    const shown = (id: number) =>
      store.devices.get(id).then((d) => d?.risk_details.findings.map((f) => [f.port, f.title, f.description, f.recommendation]));
    expect(await shown(devices[0].id)).toEqual([[23, 'Telnet', 'Cleartext "Telnet" on the wire', 'Turn Telnet off']]);
    expect(await shown(devices[1].id)).toEqual([
      [23, 'Telnet', 'Cleartext "Telnet" on the wire', 'Turn Telnet off'],
      [2323, 'Telnet', 'Cleartext "Telnet" on the wire', 'Turn Telnet off'],
      [21, 'FTP', 'Old row', 'Old advice'],
    ]);
    expect((await store.findings.ofDevices([devices[1].id])).map((f) => f.title)).toEqual(['Telnet', 'Telnet', 'FTP']);
    expect((await store.evaluation.findingsOf(devices[1].id)).map((f) => [f.title, f.recommendation])).toEqual([
      ['Telnet', 'Turn Telnet off'],
      ['Telnet', 'Turn Telnet off'],
      ['FTP', 'Old advice'],
    ]);
  });
});

describe.each(testDatabases())('device search ($kind)', (database) => {
  let db: Opened;
  let store: Store;

  beforeAll(async () => {
    db = await database.open();
    store = db.store;
  });
  afterAll(() => db?.cleanup());

  it('searches each column on its own: a term never matches across two columns, and counts stay right for every page', async () => {
    const a = await addDevice(store, '10.77.0.1');
    await store.devices.updateUserFields(a.id, { label: 'Kitchen', notes: 'Shelf' });
    const b = await addDevice(store, '10.77.0.2');
    await store.devices.updateUserFields(b.id, { label: 'KITCHEN shelf' });
    // "kitchen shelf" only where it is one text; the label/notes pair of a does not join up.
    expect((await store.devices.list({ search: 'kitchen shelf', limit: 10, offset: 0 })).rows.map((d) => d.id)).toEqual([b.id]);
    expect((await store.devices.list({ search: 'nshelf', limit: 10, offset: 0 })).total).toBe(0);
    // A term holding the character the search joins columns with is still answered (column by column).
    expect((await store.devices.list({ search: 'kitchen\u001fshelf', limit: 10, offset: 0 })).total).toBe(0);
    // Case-insensitive, and the count is the same on a page past the end as on the first.
    const first = await store.devices.list({ search: 'KITCHEN', limit: 1, offset: 0 });
    expect(first).toMatchObject({ total: 2, rows: [{ id: a.id }] });
    expect(await store.devices.list({ search: 'kitchen', limit: 1, offset: 5 })).toEqual({ rows: [], total: 2 });
    // A write through the store is seen by the next count at once.
    await store.devices.updateUserFields(a.id, { label: null });
    expect((await store.devices.list({ search: 'kitchen', limit: 1, offset: 0 })).total).toBe(1);
  });
});
