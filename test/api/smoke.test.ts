import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

describe.each(testDatabases())('health and authentication basics ($kind)', (database) => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    ({ server, key } = await startServerWithAdmin(database));
  });
  afterAll(() => server?.close());

  it('answers the public health probe', async () => {
    const res = await server.request('/health');
    expect(res.status).toBe(200);
    const body = await readJson(res);
    expect(body).toMatchObject({ status: 'healthy', database: 'ok', version: '0.0.0-test' });
    expect(Date.parse(body.timestamp)).not.toBeNaN();
  });

  it('refuses an unauthenticated request with the seed body', async () => {
    const res = await server.request('/api/stats');
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ detail: 'Not authenticated' });
  });

  it('serves stats to an API key, by either header', async () => {
    for (const headers of [{ 'X-API-Key': key }, { Authorization: `Bearer ${key}` }] as Record<string, string>[]) {
      const res = await server.request('/api/stats', { headers });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ total_devices: 0, devices_at_risk: 0, last_scan: null });
    }
  });
});
