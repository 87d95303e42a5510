/**
 * Counts are cached per instance (GET /api/stats, the device list's X-Total-Count) until the data
 * changes; a change made through another process on the same database reaches them within about
 * a second through the shared data version. Two real `netwarden serve` processes on one database
 * (SQLite file, and PostgreSQL when TEST_DATABASE_URL is set). Polled, never timed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ipv4ToInt } from '../../src/core/net.js';
import type { Store } from '../../src/store/index.js';
import { type CliDatastore, type ServeProcess, bodyOf, cliDatastores, client, openDatastore, sessionCookieOf, startServe } from '../cli/helpers.js';

const ADMIN = { username: 'admin', password: 'correct horse battery' };
const AT = '2026-01-05T10:00:00.000Z';

describe.each(cliDatastores())('cached counts with two server processes on one database ($kind)', ({ create }) => {
  let ds: CliDatastore;
  let a: ServeProcess;
  let b: ServeProcess;
  let key: string;
  let store: Store;

  beforeAll(async () => {
    ds = await create();
    a = await startServe(ds);
    const setup = await client(a.baseUrl)('/api/auth/setup', { method: 'POST', json: ADMIN });
    expect(setup.status).toBe(201);
    const created = await client(a.baseUrl)('/api/keys', { method: 'POST', cookie: sessionCookieOf(setup), json: { name: 'ops' } });
    key = (await bodyOf(created)).key;
    b = await startServe(ds);
    // A third process writing, as `netwarden scan` would.
    store = (await openDatastore(ds)).shareWrites();
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    await a?.stop();
    await b?.stop();
    await ds?.cleanup();
  });

  const totalDevices = async (server: ServeProcess) => (await bodyOf(await client(server.baseUrl)('/api/stats', { key }))).total_devices;
  const trustedCount = async (server: ServeProcess) =>
    Number((await client(server.baseUrl)('/api/devices?is_trusted=true', { key })).headers.get('x-total-count'));

  it('shows devices written by another process in /api/stats on both instances', async () => {
    expect(await totalDevices(a)).toBe(0);
    expect(await totalDevices(b)).toBe(0);
    for (const ip of ['10.66.0.21', '10.66.0.22']) {
      await store.devices.insert({
        identity: `ip:${ip}`,
        ip_address: ip,
        ip_sort: ipv4ToInt(ip),
        risk_level: 'none',
        risk_score: 0,
        online: 1,
        first_seen: AT,
        last_seen: AT,
      });
    }
    await expect.poll(() => totalDevices(a), { timeout: 10_000, interval: 100 }).toBe(2);
    await expect.poll(() => totalDevices(b), { timeout: 10_000, interval: 100 }).toBe(2);
  });

  it('counts a device changed through instance A in the list totals of instance B', async () => {
    expect(await trustedCount(a)).toBe(0);
    expect(await trustedCount(b)).toBe(0);
    const [device] = await bodyOf(await client(a.baseUrl)('/api/devices?limit=1', { key }));
    expect((await client(a.baseUrl)(`/api/devices/${device.id}`, { method: 'PUT', key, json: { is_trusted: true } })).status).toBe(200);
    // At once on A, which made the change; within about a second on B.
    expect(await trustedCount(a)).toBe(1);
    await expect.poll(() => trustedCount(b), { timeout: 10_000, interval: 100 }).toBe(1);
  });
});
