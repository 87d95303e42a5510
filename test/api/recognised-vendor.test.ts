/**
 * A quiet rescan of a recognised device records nothing new (issue 21, CONTRACT §15 field
 * provenance): the MAC registry's name of its vendor (`Hewlett Packard`, as nmap reports it) does
 * not replace the vendor recognition set (`HP`), so the second of two identical nmap reports
 * imported changes no vendor and records no decision. Over HTTP against the real server, both stores.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

/** A recorded lab report; its first host's MAC is made an HP one, as nmap names that vendor. */
const REPORT = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'nmap-import', 'lab-sv.xml'), 'utf8').replaceAll(
  'addr="B8:27:EB:66:00:01" addrtype="mac" vendor="Raspberry Pi Foundation"',
  'addr="3C:52:82:66:00:01" addrtype="mac" vendor="Hewlett Packard"',
);

describe.each(testDatabases())('recognised vendor across rescans ($kind)', (database) => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    ({ server, key } = await startServerWithAdmin(database));
  });
  afterAll(() => server?.close());

  const get = async (path: string) => {
    const res = await server.request(path, { key });
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    return readJson(res);
  };
  const importReport = async () => {
    const res = await server.request('/api/scans/import', { method: 'POST', body: REPORT, headers: { 'Content-Type': 'application/xml' }, key });
    expect(res.status, await res.clone().text()).toBe(201);
    return readJson(res);
  };

  it('two identical scans: the second changes no vendor and records no decision', async () => {
    const first = await importReport();
    const [device] = (await get(`/api/devices?scan_id=${first.scan_id}`)).filter((d: any) => d.mac_address === '3C:52:82:66:00:01');
    expect(device).toMatchObject({ ip_address: '10.66.0.11', vendor: 'HP' });
    const before = await get(`/api/devices/${device.id}/identity`);
    expect(before.evidence).toContainEqual(expect.objectContaining({ field: 'vendor', value: 'HP', source: 'oui' }));
    expect(before.decisions.map((d: any) => d.rule).sort()).toEqual(['new_device', 'recognition']);
    const decisionsOfAll = async () => {
      const all = await get('/api/devices?limit=1000');
      return Promise.all(all.map(async (d: any) => [d.id, d.vendor, (await get(`/api/devices/${d.id}/identity`)).decisions.length]));
    };
    const afterFirst = await decisionsOfAll();

    const second = await importReport();
    expect(second.status).toBe('completed');
    const again = await get(`/api/devices/${device.id}`);
    expect(again.vendor).toBe('HP');
    const after = await get(`/api/devices/${device.id}/identity`);
    expect(after.decisions).toEqual(before.decisions);
    // No device of the report got a new vendor or a new decision.
    expect(await decisionsOfAll()).toEqual(afterFirst);
    // Search finds it by the recognised vendor only: the registry's name was never written back.
    expect((await get('/api/devices?q=HP')).map((d: any) => d.id)).toContain(device.id);
    expect(await get('/api/devices?q=Hewlett')).toEqual([]);
  });
});
