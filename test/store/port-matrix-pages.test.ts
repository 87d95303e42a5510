/**
 * The port matrix's device pages (store/port-matrix.ts): read a page ahead, with larger pages and
 * one array parameter on PostgreSQL. However the pages are cut, the devices come in address order
 * (then id), each once, with their open ports; devices without an open port and archived ones are
 * left out. Both stores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ipv4ToInt } from '../../src/core/net.js';
import { PortMatrixReader, type MatrixDeviceRow, type PortMatrixFilters } from '../../src/store/port-matrix.js';
import type { Store } from '../../src/store/index.js';
import { testDatabases, type TestDatabase } from '../helpers/databases.js';

describe.each(testDatabases())('port matrix pages ($kind)', (database: TestDatabase) => {
  let store: Store;
  let opened: Awaited<ReturnType<TestDatabase['open']>>;

  beforeAll(async () => {
    opened = await database.open();
    store = opened.store;
    const now = new Date().toISOString();
    const devices = [];
    // Two devices on some addresses (a page may end between them), in an order unlike their ids.
    for (let i = 0; i < 40; i++) {
      const ip = `10.93.0.${(i * 7) % 30}`;
      devices.push({
        identity: `pages:${i}`,
        ip_address: ip,
        ip_sort: ipv4ToInt(ip),
        first_seen: now,
        last_seen: now,
        zone: i % 2 === 0 ? 'iot' : null,
        status: i === 5 ? 'archived' : 'known',
      });
    }
    await store.db.insertInto('devices').values(devices).execute();
    const ids = await store.db.selectFrom('devices').select(['id', 'identity']).where('identity', 'like', 'pages:%').execute();
    const ports = [];
    for (const { id, identity } of ids) {
      const i = Number(identity.split(':')[1]);
      if (i % 4 === 3) continue;
      for (const port of [22, 80, 443].slice(0, 1 + (i % 3)))
        ports.push({
          device_id: id,
          port,
          protocol: 'tcp',
          state: i % 5 === 0 && port === 80 ? 'closed' : 'open',
          service: null,
          product: null,
          version: null,
          extra_info: null,
          cpe: '[]',
          first_seen: now,
          last_seen: now,
        });
    }
    await store.db.insertInto('ports').values(ports).execute();
  });
  afterAll(async () => {
    await opened?.cleanup();
  });

  const read = async (filters: PortMatrixFilters, pageSize: number) => {
    const out: MatrixDeviceRow[] = [];
    const sizes: number[] = [];
    for await (const page of new PortMatrixReader(store.db, store.dialect).pages(filters, pageSize)) {
      out.push(...page);
      sizes.push(page.length);
    }
    return { out, sizes };
  };

  it('gives the same devices in the same order however the pages are cut, each with its open ports', async () => {
    for (const filters of [{}, { zone: 'iot' }, { range: { low: ipv4ToInt('10.93.0.5'), high: ipv4ToInt('10.93.0.20') } }] as PortMatrixFilters[]) {
      const whole = (await read(filters, 1000)).out;
      expect(whole.length).toBeGreaterThan(5);
      const keys = whole.map((d) => [ipv4ToInt(d.ip_address), d.id]);
      expect(keys).toEqual([...keys].sort((a, b) => a[0] - b[0] || a[1] - b[1]));
      expect(new Set(whole.map((d) => d.id)).size).toBe(whole.length);
      for (const d of whole) expect(d.ports.length).toBeGreaterThan(0);
      for (const size of [1, 2, 3, 7]) {
        const { out, sizes } = await read(filters, size);
        expect(out, `pages of ${size}`).toEqual(whole);
        expect(Math.max(...sizes)).toBeLessThanOrEqual(size);
      }
    }
    const all = (await read({}, 1000)).out;
    // 40 devices: one archived, a quarter without ports (i % 4 === 3); closed ports are not listed.
    expect(all.length).toBe(29);
    expect(all.flatMap((d) => d.ports).every((p) => [22, 80, 443].includes(p.port))).toBe(true);
  });
});
