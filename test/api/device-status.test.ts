/**
 * New devices, archiving, deleting, merging with undo and watching (CONTRACT §15, §17, §18) against
 * the real server over HTTP. Devices come from nmap reports imported through POST /api/scans/import
 * (real ones recorded on loopback, and host-discovery reports written here in nmap's format), so
 * they go through the same recording, presence and event path as a scan run here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVICE_TABLES } from '../../src/store/device-tables.js';
import { testDatabases } from '../helpers/databases.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { openSse, type SseStream } from '../helpers/sse.js';
import { startReceiver } from '../helpers/receivers.js';
import { waitFor } from '../helpers/wait.js';
import { dumpTables } from '../helpers/tables.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'nmap-import');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

let reports = 0;
/** A host-discovery report (`nmap -n -sn`) of `subnet` in which exactly `up` answered. */
function discoveryReport(subnet: string, up: string[]): string {
  const start = 1795656544 + ++reports * 60;
  const hosts = up
    .map(
      (ip) =>
        `<host><status state="up" reason="localhost-response" reason_ttl="0"/>\n<address addr="${ip}" addrtype="ipv4"/>\n<hostnames>\n</hostnames>\n</host>`,
    )
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE nmaprun>
<nmaprun scanner="nmap" args="nmap -n -sn -oX r.xml ${subnet}" start="${start}" version="7.93" xmloutputversion="1.05">
<verbose level="0"/>
<debugging level="0"/>
${hosts}
<runstats><finished time="${start}" elapsed="0.00" exit="success"/><hosts up="${up.length}" down="0" total="${up.length}"/>
</runstats>
</nmaprun>
`;
}

describe.each(testDatabases())('device status, delete, merge and watch ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let stream: SseStream;

  beforeAll(async () => {
    ({ server, key } = await startServerWithAdmin(database));
    stream = await openSse(`${server.baseUrl}/api/events`, { 'X-API-Key': key });
  });
  afterAll(async () => {
    await server?.close();
    await stream?.ended;
  });

  const call = (method: string, path: string, json?: unknown) => server.request(path, { method, key, ...(json === undefined ? {} : { json }) });
  const ok = async (method: string, path: string, json?: unknown): Promise<any> => {
    const res = await call(method, path, json);
    expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBe(200);
    return readJson(res);
  };
  const importReport = async (xml: string) => {
    const res = await server.request('/api/scans/import', { method: 'POST', key, body: xml, headers: { 'Content-Type': 'application/xml' } });
    expect(res.status, await res.clone().text()).toBe(201);
    return readJson(res);
  };
  const listAll = async (query = ''): Promise<any[]> => ok('GET', `/api/devices?limit=1000${query}`);
  const byIp = async (ip: string, query = '') => (await listAll(`${query}&q=${ip}`)).find((d) => d.ip_address === ip);
  const eventsNamed = (name: string) => stream.parsed().filter((e) => e.event === name);
  const auditOf = async (action: string): Promise<any[]> => ok('GET', `/api/audit-logs?action=${action}&limit=1000`);

  it('a device first seen is new, announced by device_new; acknowledging makes it known, one at a time or in bulk', async () => {
    const ips = ['127.0.0.40', '127.0.0.41', '127.0.0.42', '127.0.0.43'];
    await importReport(discoveryReport('127.0.0.40/30', ips));
    const devices = await Promise.all(ips.map((ip) => byIp(ip)));
    for (const d of devices) expect(d).toMatchObject({ status: 'new', watch: { offline: false, online: false } });
    await stream.until(() => ips.every((ip) => eventsNamed('device_new').some((e) => e.data.ip_address === ip)), 'device_new for each new device');
    expect(eventsNamed('device_new').find((e) => e.data.ip_address === ips[0])!.data).toMatchObject({ id: devices[0].id, status: 'new' });
    expect((await listAll('&status=new')).map((d) => d.id)).toEqual(expect.arrayContaining(devices.map((d) => d.id)));

    const acknowledged = await ok('POST', `/api/devices/${devices[0].id}/acknowledge`);
    expect(acknowledged).toMatchObject({ id: devices[0].id, status: 'known' });
    expect(acknowledged).toEqual(await ok('GET', `/api/devices/${devices[0].id}`));
    expect((await call('POST', '/api/devices/999999/acknowledge')).status).toBe(404);

    // Bulk: all or nothing.
    const rest = devices.slice(1).map((d) => d.id);
    const refused = await call('POST', '/api/devices/acknowledge', { device_ids: [...rest, 999999] });
    expect(refused.status).toBe(404);
    expect(await readJson(refused)).toMatchObject({ missing: [999999] });
    expect((await byIp(ips[1])).status).toBe('new');
    const bulk = await ok('POST', '/api/devices/acknowledge', { device_ids: [devices[0].id, ...rest] });
    expect(bulk.acknowledged).toBe(3);
    expect(bulk.devices.map((d: any) => d.status)).toEqual(['known', 'known', 'known', 'known']);
    expect((await call('POST', '/api/devices/acknowledge', { device_ids: [] })).status).toBe(400);

    const audited = await auditOf('device_acknowledged');
    expect(audited.filter((a) => devices.some((d) => String(d.id) === a.resource_id))).toHaveLength(4);
    // Seen again, a known device stays known and is not announced again.
    const announced = eventsNamed('device_new').length;
    await importReport(discoveryReport('127.0.0.40/30', ips));
    expect((await byIp(ips[2])).status).toBe('known');
    expect(eventsNamed('device_new')).toHaveLength(announced);
  });

  it('archived devices leave the default list, the stats and alerts, stay archived when seen again and stay in exports', async () => {
    const ips = ['127.0.0.44', '127.0.0.45'];
    await importReport(discoveryReport('127.0.0.44/30', ips));
    const [kept, archived] = await Promise.all(ips.map((ip) => byIp(ip)));
    const statsBefore = await ok('GET', '/api/stats');

    const bad = await call('PUT', `/api/devices/${archived.id}`, { status: 'new' });
    expect(bad.status).toBe(400);
    expect((await readJson(bad)).detail).toBe('status: must be one of known, archived');
    expect((await call('PUT', `/api/devices/${archived.id}`, { status: 'gone' })).status).toBe(400);

    const put = await ok('PUT', `/api/devices/${archived.id}`, { status: 'archived' });
    expect(put.status).toBe('archived');
    expect((await listAll()).map((d) => d.id)).not.toContain(archived.id);
    expect((await listAll()).map((d) => d.id)).toContain(kept.id);
    expect((await listAll('&status=archived')).map((d) => d.id)).toEqual([archived.id]);
    expect(await ok('GET', '/api/stats')).toMatchObject({
      total_devices: statsBefore.total_devices - 1,
      online_devices: statsBefore.online_devices - 1,
    });
    const updates = await auditOf('device_updated');
    expect(updates.find((a) => a.resource_id === String(archived.id))?.details.changes).toEqual({ status: { old: 'new', new: 'archived' } });

    const exported: any[] = await ok('GET', '/api/export/devices?format=json');
    expect(exported.find((d) => d.id === archived.id)).toMatchObject({ status: 'archived' });
    const csv = await (await call('GET', '/api/export/devices?format=csv')).text();
    expect(csv.split('\r\n')[0].split(',').at(-1)).toBe('status');
    expect(csv).toContain(',archived\r\n');

    // Seen again: still archived, and not announced.
    await importReport(discoveryReport('127.0.0.44/30', ips));
    expect((await ok('GET', `/api/devices/${archived.id}`)).status).toBe('archived');
    await ok('PUT', `/api/devices/${archived.id}`, { status: 'known' });
    expect((await listAll()).map((d) => d.id)).toContain(archived.id);
  });

  it('deleting a device removes it and its history; seen again it comes back as new', async () => {
    const ip = '127.0.0.49';
    // Absent from the first scan of its network, it is a change (device_added) of the second.
    await importReport(discoveryReport('127.0.0.48/30', ['127.0.0.50']));
    await importReport(discoveryReport('127.0.0.48/30', [ip, '127.0.0.50']));
    const device = await byIp(ip);
    await ok('POST', `/api/devices/${device.id}/acknowledge`);
    expect(await ok('GET', `/api/changes?device_id=${device.id}`)).not.toHaveLength(0);

    const deleted = await ok('DELETE', `/api/devices/${device.id}`);
    expect(deleted).toMatchObject({ id: device.id, ip_address: ip, status: 'known' });
    expect((await call('GET', `/api/devices/${device.id}`)).status).toBe(404);
    expect((await call('DELETE', `/api/devices/${device.id}`)).status).toBe(404);
    expect(await ok('GET', `/api/changes?device_id=${device.id}`)).toEqual([]);
    const dump = await dumpTables(server.store);
    for (const { table } of DEVICE_TABLES)
      expect(
        dump[table].filter((r) => r.device_id === device.id),
        table,
      ).toEqual([]);
    expect((await auditOf('device_deleted')).find((a) => a.resource_id === String(device.id))?.details).toMatchObject({
      ip_address: ip,
      status: 'known',
    });

    await importReport(discoveryReport('127.0.0.48/30', [ip, '127.0.0.50']));
    const again = await byIp(ip);
    expect(again.id).not.toBe(device.id);
    expect(again.status).toBe('new');
    await stream.until(() => eventsNamed('device_new').some((e) => e.data.id === again.id), 'device_new for the device seen again');
  });

  it('watched devices publish device_offline and device_online with how long they were away; unwatched and archived ones do not', async () => {
    const [stays, watched, unwatched, archived] = ['127.0.0.52', '127.0.0.53', '127.0.0.54', '127.0.0.55'];
    await importReport(discoveryReport('127.0.0.52/30', [stays, watched, unwatched, archived]));
    const w = await byIp(watched);
    const a = await byIp(archived);
    expect((await ok('PUT', `/api/devices/${w.id}`, { watch: { offline: true } })).watch).toEqual({ offline: true, online: false });
    expect((await ok('PUT', `/api/devices/${w.id}`, { watch: { online: true } })).watch).toEqual({ offline: true, online: true });
    expect((await call('PUT', `/api/devices/${w.id}`, { watch: {} })).status).toBe(400);
    expect((await call('PUT', `/api/devices/${w.id}`, { watch: { away: true } })).status).toBe(400);
    expect((await call('PUT', `/api/devices/${w.id}`, { watch: { online: 'yes' } })).status).toBe(400);
    await ok('PUT', `/api/devices/${a.id}`, { watch: { offline: true, online: true }, status: 'archived' });
    const presence = () => stream.parsed().filter((e) => e.event === 'device_offline' || e.event === 'device_online');
    /** Imports the report and waits for its scan_finished, which follows every other event of the scan. */
    const importAndWait = async (xml: string) => {
      const finished = eventsNamed('scan_finished').length;
      await importReport(xml);
      await stream.until(() => eventsNamed('scan_finished').length > finished, 'scan_finished');
    };

    const before = presence().length;
    await importAndWait(discoveryReport('127.0.0.52/30', [stays]));
    const offline = presence().slice(before);
    expect(offline.map((e) => [e.event, e.data.device.id])).toEqual([['device_offline', w.id]]);
    expect(offline[0].data.device).toMatchObject({ online: false, watch: { offline: true, online: true } });
    expect(offline[0].data.last_seen).toBe(w.last_seen);
    expect(offline[0].data.away_seconds).toBeGreaterThanOrEqual(0);

    const mid = presence().length;
    await importAndWait(discoveryReport('127.0.0.52/30', [stays, watched, unwatched, archived]));
    const online = presence().slice(mid);
    expect(online.map((e) => [e.event, e.data.device.id])).toEqual([['device_online', w.id]]);
    expect(online[0].data.device.online).toBe(true);
    expect(online[0].data.last_seen).toEqual(expect.any(String));
    expect(online[0].data.away_seconds).toBeGreaterThanOrEqual(0);
  });
  it('a device that can sleep (its own presence.offline_after_scans) stays online through fewer missed scans', async () => {
    const [stays, sleeper, phone] = ['127.0.0.64', '127.0.0.65', '127.0.0.66'];
    const subnet = '127.0.0.64/30';
    await importReport(discoveryReport(subnet, [stays, sleeper, phone]));
    const s = await byIp(sleeper);
    const p = await byIp(phone);
    expect(s.presence).toEqual({ offline_after_scans: null });
    const set = await ok('PUT', `/api/devices/${s.id}`, { presence: { offline_after_scans: 3 } });
    expect(set.presence).toEqual({ offline_after_scans: 3 });
    for (const bad of [{ offline_after_scans: 0 }, { offline_after_scans: 101 }, { offline_after_scans: 'two' }, { sleeps: true }]) {
      const res = await call('PUT', `/api/devices/${s.id}`, { presence: bad });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect((await readJson(res)).detail).toContain('presence');
    }
    const [update] = (await auditOf('device_updated')).filter((e) => e.resource_id === String(s.id) || e.resource_id === s.id);
    expect(update.details.changes.presence).toEqual({ old: { offline_after_scans: null }, new: { offline_after_scans: 3 } });

    // Missed twice: the phone (setting: 1) is offline after the first miss, the sleeper still online.
    await importReport(discoveryReport(subnet, [stays]));
    await importReport(discoveryReport(subnet, [stays]));
    expect(await byIp(phone)).toMatchObject({ online: false, missed_scans: 2 });
    expect(await byIp(sleeper)).toMatchObject({ online: true, missed_scans: 2 });
    // The third miss reaches its own threshold.
    await importReport(discoveryReport(subnet, [stays]));
    expect(await byIp(sleeper)).toMatchObject({ online: false, missed_scans: 3 });
    // null hands it back to the setting.
    expect((await ok('PUT', `/api/devices/${p.id}`, { presence: { offline_after_scans: null } })).presence).toEqual({ offline_after_scans: null });
    expect((await ok('GET', `/api/devices/${s.id}`)).presence).toEqual({ offline_after_scans: 3 });
  });

  it('channels get device.new, device.offline and device.online messages when filters.events names them', async () => {
    const wanted = await startReceiver();
    const scansOnly = await startReceiver();
    try {
      const channel = async (name: string, url: string, filters?: unknown) => {
        const res = await call('POST', '/api/notifications/channels', { name, type: 'webhook', config: { url }, ...(filters ? { filters } : {}) });
        expect(res.status, await res.clone().text()).toBe(201);
        return readJson(res);
      };
      const subscribed = await channel('devices', `${wanted.url}/hook`, { events: ['device.new', 'device.offline', 'device.online'] });
      expect(subscribed.filters.events).toEqual(['device.new', 'device.offline', 'device.online']);
      expect((await channel('scans', `${scansOnly.url}/hook`)).filters.events).toEqual([]);
      expect(
        (
          await call('POST', '/api/notifications/channels', {
            name: 'bad',
            type: 'webhook',
            config: { url: wanted.url },
            filters: { events: ['device.gone'] },
          })
        ).status,
      ).toBe(400);

      // The scan messages (scan.changes) go to both channels as before; device messages only where asked for.
      const deviceMessages = (receiver: typeof wanted) => receiver.requests.filter((r) => String(r.json().event).startsWith('device.'));
      const messages = (n: number) => waitFor(`${n} device messages`, async () => deviceMessages(wanted).length >= n && deviceMessages(wanted));
      const [first, second] = ['127.0.0.60', '127.0.0.61'];
      await importReport(discoveryReport('127.0.0.60/30', [first, second]));
      const news = (await messages(2)).map((r) => r.json());
      expect(news.map((m) => [m.event, m.device.device.ip_address]).sort()).toEqual([
        ['device.new', first],
        ['device.new', second],
      ]);
      expect(news[0]).toMatchObject({ scan: null, changes: [], device: { last_seen: null, away_seconds: null } });
      expect(news[0].summary).toMatch(/^New device 127\.0\.0\.6[01]/);

      const watched = await byIp(second);
      await ok('PUT', `/api/devices/${watched.id}`, { watch: { offline: true, online: true } });
      await importReport(discoveryReport('127.0.0.60/30', [first]));
      const [offline] = (await messages(3)).slice(2).map((r) => r.json());
      expect(offline).toMatchObject({ event: 'device.offline', device: { device: { id: watched.id, online: false } } });
      expect(offline.summary).toContain(`${second} went offline`);
      await importReport(discoveryReport('127.0.0.60/30', [first, second]));
      const onlineRequest = (await messages(4))[3];
      const online = onlineRequest.json();
      expect(online).toMatchObject({ event: 'device.online', device: { device: { id: watched.id, online: true } } });
      expect(online.device.away_seconds).toBeGreaterThanOrEqual(0);
      expect(onlineRequest.headers['x-netwarden-event']).toBe('device.online');
      // The default channel hears of the scans' changes only.
      await waitFor('the scan messages of the default channel', async () => scansOnly.requests.length >= 2);
      expect(deviceMessages(scansOnly)).toEqual([]);
      expect(deviceMessages(wanted)).toHaveLength(4);
    } finally {
      await wanted.close();
      await scansOnly.close();
    }
  });
});

describe.each(testDatabases())('merging devices and undoing it ($kind)', (database) => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    ({ server, key } = await startServerWithAdmin(database));
  });
  afterAll(() => server?.close());

  const call = (method: string, path: string, json?: unknown) => server.request(path, { method, key, ...(json === undefined ? {} : { json }) });
  const ok = async (method: string, path: string, json?: unknown): Promise<any> => {
    const res = await call(method, path, json);
    expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBe(200);
    return readJson(res);
  };
  const importReport = async (xml: string) => {
    const res = await server.request('/api/scans/import', { method: 'POST', key, body: xml, headers: { 'Content-Type': 'application/xml' } });
    expect(res.status, await res.clone().text()).toBe(201);
  };
  /** The devices and every device-owned table, as stored. */
  const inventory = async () => {
    const dump = await dumpTables(server.store);
    return Object.fromEntries(['devices', ...DEVICE_TABLES.map((t) => t.table)].map((t) => [t, dump[t]]));
  };

  it('moves history, labels and keys to the kept device, and the undo restores every row as it was', async () => {
    await importReport(fixture('loopback-sv-1.xml'));
    await importReport(fixture('loopback-sv-2.xml'));
    const devices: any[] = await ok('GET', '/api/devices');
    const [kept, a, b] = ['127.0.0.20', '127.0.0.21', '127.0.0.22'].map((ip) => devices.find((d) => d.ip_address === ip));
    await ok('PUT', `/api/devices/${a.id}`, { label: 'NAS second NIC', notes: 'eth1', watch: { offline: true } });
    await ok('PUT', `/api/devices/${b.id}`, { label: 'ignored: the first label wins', zone: 'Servers' });
    const details = await Promise.all([kept, a, b].map((d) => ok('GET', `/api/devices/${d.id}`)));
    const before = await inventory();

    // Refusals first: nothing changes.
    const self = await call('POST', `/api/devices/${kept.id}/merge`, { device_ids: [a.id, kept.id] });
    expect(self.status).toBe(400);
    expect((await readJson(self)).detail).toMatch(/^device_ids: /);
    const missing = await call('POST', `/api/devices/${kept.id}/merge`, { device_ids: [a.id, 999999] });
    expect(missing.status).toBe(404);
    expect(await readJson(missing)).toMatchObject({ missing: [999999] });
    expect((await call('POST', '/api/devices/999999/merge', { device_ids: [a.id] })).status).toBe(404);
    expect((await call('POST', `/api/devices/${kept.id}/merge`, { device_ids: [] })).status).toBe(400);
    expect(await inventory()).toEqual(before);

    const merged = await ok('POST', `/api/devices/${kept.id}/merge`, { device_ids: [a.id, b.id] });
    expect(merged.merge_id).toEqual(expect.any(Number));
    expect(merged.device).toMatchObject({
      id: kept.id,
      label: 'NAS second NIC',
      zone: 'Servers',
      notes: 'eth1',
      watch: { offline: true, online: false },
    });
    expect(merged.device.ip_history.map((h: any) => h.ip_address).sort()).toEqual(['127.0.0.20', '127.0.0.21', '127.0.0.22']);
    const ports = (d: any) => d.ports.map((p: any) => `${p.protocol}/${p.port}`);
    expect(ports(merged.device)).toEqual(expect.arrayContaining([...new Set([...ports(details[0]), ...ports(details[1]), ...ports(details[2])])]));
    for (const gone of [a, b]) expect((await call('GET', `/api/devices/${gone.id}`)).status).toBe(404);
    const changes: any[] = await ok('GET', `/api/changes?device_id=${kept.id}&limit=1000`);
    expect(changes.some((c) => c.device_ip === '127.0.0.21')).toBe(true);
    const audited: any[] = await ok('GET', '/api/audit-logs?action=devices_merged');
    expect(audited[0]).toMatchObject({ resource_id: String(kept.id), details: { merge_id: merged.merge_id } });

    const undone = await ok('POST', `/api/merges/${merged.merge_id}/undo`);
    expect(undone.devices.map((d: any) => d.id)).toEqual([a.id, b.id]);
    expect(undone.device).toEqual(details[0]);
    expect(await inventory()).toEqual(before);
    for (const [i, d] of [kept, a, b].entries()) expect(await ok('GET', `/api/devices/${d.id}`)).toEqual(details[i]);

    const twice = await call('POST', `/api/merges/${merged.merge_id}/undo`);
    expect(twice.status).toBe(409);
    expect((await readJson(twice)).detail).toMatch(/already undone/);
    expect((await call('POST', '/api/merges/999999/undo')).status).toBe(404);
    expect((await ok('GET', '/api/audit-logs?action=merge_undone'))[0]).toMatchObject({
      details: { merge_id: merged.merge_id, restored: [a.id, b.id] },
    });
  });

  it('an undo is refused while a device created since holds a merged device’s identity', async () => {
    await importReport(discoveryReport('127.0.0.56/30', ['127.0.0.57', '127.0.0.58']));
    const devices: any[] = await ok('GET', '/api/devices?q=127.0.0.5');
    const [kept, other] = ['127.0.0.57', '127.0.0.58'].map((ip) => devices.find((d) => d.ip_address === ip));
    const { merge_id } = await ok('POST', `/api/devices/${kept.id}/merge`, { device_ids: [other.id] });
    // The merged device's address answers again: with no other key to match, it is a device of its own.
    await importReport(discoveryReport('127.0.0.56/30', ['127.0.0.57', '127.0.0.58']));
    const recreated = ((await ok('GET', '/api/devices?q=127.0.0.58')) as any[]).find((d) => d.ip_address === '127.0.0.58');
    expect(recreated.id).not.toBe(other.id);
    const refused = await call('POST', `/api/merges/${merge_id}/undo`);
    expect(refused.status).toBe(409);
    expect(await readJson(refused)).toMatchObject({ conflicting_device_ids: [recreated.id] });
    await ok('DELETE', `/api/devices/${recreated.id}`);
    expect((await ok('POST', `/api/merges/${merge_id}/undo`)).devices.map((d: any) => d.id)).toEqual([other.id]);
  });
});
