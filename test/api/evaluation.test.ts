/**
 * The background re-evaluation after a risk rule change, seen through the API: a new rule in
 * `scanning.risk_rules` has every device assessed again without a scan, GET
 * /api/evaluation/status shows the pass, and the devices show the rule's finding afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isOpenPort } from '../../src/core/model.js';
import { testDatabases } from '../helpers/databases.js';
import { seedInventory, type Seed } from '../helpers/seed.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

const RULE_TITLE = 'Flagged by the evaluation test rule';

describe.each(testDatabases())('background re-evaluation ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let seed: Seed;

  beforeAll(async () => {
    ({ server, key } = await startServerWithAdmin(database));
    seed = await seedInventory(server.store);
  });
  afterAll(() => server?.close());

  const status = async () => {
    const res = await server.request('/api/evaluation/status', { key });
    expect(res.status).toBe(200);
    return readJson(res);
  };

  /** Waits (polling, not timing) until a pass other than `previous` has finished. */
  const nextFinishedPass = async (previous: string | null) => {
    for (;;) {
      const s = await status();
      if (s.state === 'idle' && s.finished_at !== null && s.finished_at !== previous) return s;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  it('answers only authenticated requests', async () => {
    expect((await server.request('/api/evaluation/status')).status).toBe(401);
    expect(Object.keys(await status()).sort()).toEqual(['devices_done', 'devices_total', 'finished_at', 'started_at', 'state']);
  });

  it('re-assesses every device once after a rule change, and the devices show the new finding', async () => {
    // The pass every start runs (devices seeded after it were assessed by their scans).
    const settled = await nextFinishedPass(null);
    const port = seed.ports.nas.find(isOpenPort)!.port;
    const devicesWithPort = Object.entries(seed.ports)
      .filter(([, ports]) => ports.some((p) => p.port === port && isOpenPort(p)))
      .map(([name]) => seed.devices[name as keyof Seed['devices']].id);
    const before = await readJson(await server.request(`/api/devices/${seed.devices.nas.id}`, { key }));
    expect(before.risk_details.findings.map((f: { title: string }) => f.title)).not.toContain(RULE_TITLE);

    const res = await server.request('/api/config', {
      method: 'PUT',
      key,
      json: { scanning: { risk_rules: [{ id: 'evaluation-test', port, severity: 'critical', title: RULE_TITLE }] } },
    });
    expect(res.status).toBe(200);

    const pass = await nextFinishedPass(settled.finished_at);
    const total = (await server.store.db.selectFrom('devices').select('id').execute()).length;
    expect(pass).toMatchObject({ state: 'idle', devices_total: total, devices_done: total });
    expect(pass.started_at <= pass.finished_at).toBe(true);

    for (const id of devicesWithPort) {
      const device = await readJson(await server.request(`/api/devices/${id}`, { key }));
      expect(device.risk_level).toBe('critical');
      expect(device.risk_details.findings).toContainEqual(expect.objectContaining({ title: RULE_TITLE, port, severity: 'critical' }));
    }
    // Once: the next checks find nothing left to do.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(await status()).toEqual(pass);
  });
});
