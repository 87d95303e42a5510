/**
 * The whole network map kept between answers (issue 22): GET /api/visualization/topology without
 * filters is brought up to date from what changed since the last answer, re-writing only the
 * devices a write touched. After writes of every kind (a scan, a rename, a zone change, an
 * archive, a delete, a merge, a switch placing a client, a write straight into the database) its
 * answer must be byte for byte the one a fresh server builds from the store, on both stores.
 * GET /api/devices?subnet= (what the Map's Find asks under a subnet filter) is checked here too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/api/app.js';
import { ipv4ToInt } from '../../src/core/net.js';
import { createLogger } from '../../src/logger.js';
import { testDatabases } from '../helpers/databases.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

let reports = 0;
/** An imported nmap report (a scan of 127.0.0.0/8 addresses, recorded as a scan is) with these hosts up and 22 open on each. */
function report(hosts: string[]): string {
  const start = 1795656544 + ++reports * 60;
  const body = hosts
    .map(
      (ip) => `<host starttime="${start}" endtime="${start}"><status state="up" reason="localhost-response" reason_ttl="0"/>
<address addr="${ip}" addrtype="ipv4"/>
<hostnames><hostname name="host-${ip.replaceAll('.', '-')}.lan" type="PTR"/></hostnames>
<ports><port protocol="tcp" portid="22"><state state="open" reason="syn-ack" reason_ttl="64"/><service name="ssh" method="probed" conf="10"/></port>
</ports>
</host>`,
    )
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE nmaprun>
<nmaprun scanner="nmap" args="nmap -n -sV -p 22 -oX r.xml 127.0.7.0/24" start="${start}" version="7.93" xmloutputversion="1.05">
<scaninfo type="syn" protocol="tcp" numservices="1" services="22"/>
<verbose level="0"/>
<debugging level="0"/>
${body}
<runstats><finished time="${start}" elapsed="1.00" exit="success"/><hosts up="${hosts.length}" down="0" total="${hosts.length}"/>
</runstats>
</nmaprun>
`;
}

describe.each(testDatabases())('the whole map kept between answers ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  const fresh: App[] = [];

  beforeAll(async () => {
    ({ server, key } = await startServerWithAdmin(database));
    const now = new Date().toISOString();
    const rows = [];
    // More than one block of kept ids (2048) and more than one page of the store (2000).
    for (let i = 0; i < 2300; i++) {
      const ip = `10.91.${i >> 8}.${i & 255}`;
      rows.push({
        identity: `kept:${i}`,
        ip_address: ip,
        ip_sort: ipv4ToInt(ip),
        first_seen: now,
        last_seen: now,
        online: i % 3 === 0 ? 0 : 1,
        device_type: i === 7 ? 'router' : i % 50 === 0 ? 'switch' : null,
        label: i % 7 === 0 ? `Device "${i}" \\ é` : null,
        zone: i % 5 === 0 ? 'office' : null,
        risk_level: (['none', 'low', 'medium', 'high', 'critical'] as const)[i % 5],
      });
    }
    for (let i = 0; i < rows.length; i += 200)
      await server.store.db
        .insertInto('devices')
        .values(rows.slice(i, i + 200))
        .execute();
    await server.store.devices.update((await idOf('10.91.0.1'))!, { notes: 'written through the store' });
  });
  afterAll(async () => {
    for (const app of fresh) await app.close();
    await server?.close();
  });

  async function idOf(ip: string): Promise<number | undefined> {
    const row = await server.store.db.selectFrom('devices').select('id').where('ip_address', '=', ip).orderBy('id').executeTakeFirst();
    return row?.id;
  }

  /** The filtered answers and the overview, also drawn from the kept devices. */
  const FILTERED = ['?detail=subnets', '?zone=office', '?subnet=10.91.1.0/24', '?subnet=127.0.7.0/24', '?detail=subnets&zone=office'];

  /** The kept server's answer and a fresh server's (a new app over the same services: nothing kept), as text. */
  async function both(query = ''): Promise<{ kept: string; built: string }> {
    const res = await server.request(`/api/visualization/topology${query}`, { key });
    expect(res.status).toBe(200);
    const kept = await res.text();
    const app = await buildApp({ services: server.app.services, logger: createLogger('silent') });
    fresh.push(app);
    const built = await app.inject({ method: 'GET', url: `/api/visualization/topology${query}`, headers: { 'x-api-key': key } });
    expect(built.statusCode).toBe(200);
    return { kept, built: built.body };
  }

  async function expectSame(what: string): Promise<string> {
    for (const query of FILTERED) {
      const { kept, built } = await both(query);
      expect(kept === built, `${what} ${query}`).toBe(true);
    }
    const { kept, built } = await both();
    expect(kept.length, what).toBe(built.length);
    expect(kept === built, what).toBe(true);
    return kept;
  }

  it('answers, after every kind of write, exactly what a fresh build answers', async () => {
    const first = await expectSame('first answer');
    expect(JSON.parse(first).nodes.length).toBeGreaterThan(2300);
    // Asked again unchanged: the same. Then after a write that changes nothing drawn (the answer kept is sent again).
    await expectSame('unchanged');
    await server.store.devices.update((await idOf('10.91.0.1'))!, { notes: 'nothing the map draws' });
    expect(await expectSame('after a write of nothing drawn')).toBe(first);

    // A scan: new devices, host names and ports.
    const scanned = await server.request('/api/scans/import', {
      method: 'POST',
      key,
      body: report(['127.0.7.10', '127.0.7.11', '127.0.7.12']),
      headers: { 'Content-Type': 'application/xml' },
    });
    expect(scanned.status, await scanned.clone().text()).toBe(201);
    const afterScan = await expectSame('after a scan');
    expect(afterScan).toContain('host-127-0-7-11.lan');

    // A rename and a zone change through the API.
    const renamed = (await idOf('10.91.1.3'))!;
    expect((await server.request(`/api/devices/${renamed}`, { method: 'PUT', key, json: { label: 'Renamed one' } })).status).toBe(200);
    expect((await expectSame('after a rename')).includes('"label":"Renamed one"')).toBe(true);
    const zoned = (await idOf('10.91.2.4'))!;
    expect((await server.request(`/api/devices/${zoned}`, { method: 'PUT', key, json: { zone: 'office' } })).status).toBe(200);
    await expectSame('after a zone change');

    // Archived, then deleted.
    const archived = (await idOf('10.91.3.5'))!;
    expect((await server.request(`/api/devices/${archived}`, { method: 'PUT', key, json: { status: 'archived' } })).status).toBe(200);
    expect((await expectSame('after an archive')).includes(`"device:${archived}"`)).toBe(false);
    const deleted = (await idOf('10.91.4.6'))!;
    expect((await server.request(`/api/devices/${deleted}`, { method: 'DELETE', key })).status).toBe(200);
    expect((await expectSame('after a delete')).includes(`"device:${deleted}"`)).toBe(false);

    // A merge: two devices gone, the kept one changed.
    const keptId = (await idOf('127.0.7.10'))!;
    const merged = [(await idOf('127.0.7.11'))!, (await idOf('10.91.5.9'))!];
    const merge = await server.request(`/api/devices/${keptId}/merge`, { method: 'POST', key, json: { device_ids: merged } });
    expect(merge.status, await merge.clone().text()).toBe(200);
    const afterMerge = await expectSame('after a merge');
    for (const id of merged) expect(afterMerge.includes(`"device:${id}"`)).toBe(false);

    // A router's type taken away (the gateway of its subnet goes) and a new one written straight into the database
    // (as another process would: no data version of this process moves until it reads the shared one again).
    await server.store.devices.update((await idOf('10.91.0.7'))!, { device_type: 'laptop' });
    await expectSame('after a gateway change');
    const now = new Date().toISOString();
    await server.store.db
      .insertInto('devices')
      .values({ identity: 'straight:1', ip_address: '10.91.0.200', ip_sort: ipv4ToInt('10.91.0.200'), first_seen: now, last_seen: now, online: 1 })
      .execute();
    await server.store.db.deleteFrom('devices').where('identity', '=', 'kept:9').execute();
    await server.store.devices.update((await idOf('10.91.0.2'))!, { label: 'bump' });
    const straight = await expectSame('after writes straight into the database');
    expect(straight).toContain('10.91.0.200');
    const body = JSON.parse(straight);
    expect(body.nodes.filter((n: { kind: string }) => n.kind === 'device').length).toBeGreaterThan(2290);
  });

  it("lists the devices of a subnet (the Map's Find asks with its filter) and refuses a bad one", async () => {
    const res = await server.request('/api/devices?subnet=10.91.1.0/24&limit=1000', { key });
    expect(res.status).toBe(200);
    const list: { ip_address: string }[] = await readJson(res);
    expect(list.length).toBeGreaterThan(250);
    expect(list.every((d) => d.ip_address.startsWith('10.91.1.'))).toBe(true);
    expect(Number(res.headers.get('x-total-count'))).toBe(list.length);
    const found: { ip_address: string }[] = await readJson(await server.request('/api/devices?subnet=10.91.2.0/24&q=office&limit=5', { key }));
    expect(found.length).toBe(5);
    expect(found.every((d) => d.ip_address.startsWith('10.91.2.'))).toBe(true);
    for (const subnet of ['banana', '10.91.1.5', '10.91.1.0/33']) {
      const bad = await server.request(`/api/devices?subnet=${encodeURIComponent(subnet)}`, { key });
      expect(bad.status).toBe(400);
      expect((await readJson(bad)).detail).toMatch(/^subnet: must be an IPv4 CIDR network/);
    }
  });
});
