/**
 * What the settings pages and the set-up wizard read (issue 23 §5): the user list, the settings an
 * environment variable locks, the subnet check made as the subnet is typed, and /health naming a
 * missing nmap as degraded. Both stores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineSelector } from '../../src/engines/engines.js';
import { testDatabases } from '../helpers/databases.js';
import { ADMIN, readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

describe.each(testDatabases())('settings and wizard API ($kind)', (database) => {
  let server: TestServer;
  let cookie: string;
  let key: string;

  beforeAll(async () => {
    ({ server, cookie, key } = await startServerWithAdmin(database, {
      scanAllow: ['127.0.0.0/8', '10.66.0.0/24'],
      settings: { scanning: { max_hosts: 1024 } },
    }));
  });
  afterAll(() => server?.close());

  const get = async (path: string, auth: { cookie?: string; key?: string } = { cookie }) => {
    const res = await server.request(path, auth);
    return { status: res.status, body: await readJson(res) };
  };

  it('lists the users, never their password hashes, marking the session’s own', async () => {
    await server.store.users.create('second-admin', 'not-a-real-hash');
    const { status, body } = await get('/api/users');
    expect(status).toBe(200);
    expect(body.map((u: any) => u.username)).toEqual([ADMIN.username, 'second-admin']);
    expect(body[0]).toEqual({
      id: expect.any(Number),
      username: ADMIN.username,
      created_at: expect.stringMatching(/Z$/),
      password_changed_at: expect.stringMatching(/Z$/),
      current: true,
    });
    expect(body[1].current).toBe(false);
    expect(JSON.stringify(body)).not.toContain('hash');
    // An API key sees the list, and is nobody in it.
    const byKey = await get('/api/users', { key });
    expect(byKey.status).toBe(200);
    expect(byKey.body.every((u: any) => u.current === false)).toBe(true);
    expect((await server.request('/api/users')).status).toBe(401);
  });

  it('names the settings environment variables lock', async () => {
    const { status, body } = await get('/api/config/locked');
    expect(status).toBe(200);
    expect(body).toEqual([{ path: 'scanning.allowed_targets', variable: 'NETWARDEN_SCAN_ALLOW' }]);
    expect((await server.request('/api/config/locked')).status).toBe(401);
  });

  it('checks a subnet against the size limit and the allowed targets, in plain words', async () => {
    const check = async (subnet: string) => {
      const res = await get(`/api/network/check?subnet=${encodeURIComponent(subnet)}`);
      expect(res.status).toBe(200);
      return res.body;
    };
    expect(await check('10.66.0.7/24')).toEqual({
      subnet: '10.66.0.7/24',
      network: '10.66.0.0/24',
      addresses: 256,
      ok: true,
      problem: null,
      detail: null,
    });
    const large = await check('127.0.0.0/16');
    expect(large).toMatchObject({ ok: false, problem: 'too_large', network: '127.0.0.0/16', addresses: 65536 });
    expect(large.detail).toBe(
      '127.0.0.0/16 has 65,536 addresses, more than this server scans at once (1,024). Use a smaller block, such as a /24 with 256 addresses.',
    );
    const outside = await check('192.168.1.0/24');
    expect(outside).toMatchObject({ ok: false, problem: 'not_allowed', network: '192.168.1.0/24' });
    expect(outside.detail).toContain('outside the networks this server may scan (127.0.0.0/8, 10.66.0.0/24)');
    expect(outside.detail).toContain('NETWARDEN_SCAN_ALLOW');
    const banana = await check('banana');
    expect(banana).toMatchObject({ ok: false, problem: 'malformed', network: null, addresses: null });
    expect(banana.detail).toMatch(/^This is not a network/);
    // Every message is free of setting paths such as scanning.max_hosts.
    for (const body of [large, outside, banana]) expect(body.detail).not.toMatch(/[a-z_]+\.[a-z_]+:/);
    // The same rules as a scan: what the check refuses, the trigger refuses.
    const trigger = await server.request('/api/scan/trigger?subnet=192.168.1.0%2F24', { method: 'POST', key });
    expect(trigger.status).toBe(400);
    expect((await server.request('/api/network/check', { cookie })).status).toBe(400);
    expect((await server.request('/api/network/check?subnet=10.66.0.0/24')).status).toBe(401);
  });

  it('suggests a subnet the rules accept for the wizard: an allowed target while the default is outside them, then the configured one', async () => {
    const before = await get('/api/network/suggestion');
    expect(before.status).toBe(200);
    // The default 192.168.1.0/24 is outside NETWARDEN_SCAN_ALLOW: never suggested.
    expect(before.body.subnet).not.toBe('192.168.1.0/24');
    if (before.body.source === 'allowed_targets') {
      // 127.0.0.0/8 is over the 1,024-address limit; 10.66.0.0/24 is the first that fits.
      expect(before.body).toEqual({
        subnet: '10.66.0.0/24',
        source: 'allowed_targets',
        detail: 'The first of the allowed scan targets (NETWARDEN_SCAN_ALLOW).',
      });
    } else {
      expect(before.body.source).toBe('detected');
    }
    expect((await get(`/api/network/check?subnet=${encodeURIComponent(before.body.subnet)}`)).body.ok).toBe(true);
    const previous = (await server.store.settings.get()).network.subnet;
    try {
      expect((await server.request('/api/config', { method: 'PUT', cookie, json: { network: { subnet: '10.66.0.0/25' } } })).status).toBe(200);
      expect((await get('/api/network/suggestion')).body).toEqual({ subnet: '10.66.0.0/25', source: 'configured', detail: 'The configured subnet.' });
    } finally {
      await server.request('/api/config', { method: 'PUT', cookie, json: { network: { subnet: previous } } });
    }
    expect((await server.request('/api/network/suggestion')).status).toBe(401);
  });

  it('reports healthy with the nmap version when nmap is installed (or the engine is native)', async () => {
    const res = await server.request('/health');
    expect(res.status).toBe(200);
    const body = await readJson(res);
    expect(['healthy', 'degraded']).toContain(body.status);
    if (body.nmap === null) expect(body.status).toBe('degraded');
    else expect(body).toMatchObject({ status: 'healthy', nmap: expect.any(String) });
    expect(body).not.toHaveProperty('detail');
  });
});

describe.each(testDatabases())('/health without nmap ($kind)', (database) => {
  let server: TestServer;
  let cookie: string;

  beforeAll(async () => {
    ({ server, cookie } = await startServerWithAdmin(database, {
      engines: new EngineSelector('/nonexistent/netwarden-test/nmap'),
      settings: { scanning: { engine: 'nmap' } },
    }));
  });
  afterAll(() => server?.close());

  const health = async () => {
    const res = await server.request('/health');
    expect(res.status).toBe(200);
    return readJson(res);
  };

  it('is degraded, still 200, and says what a missing nmap means for each engine setting', async () => {
    const nmap = await health();
    expect(nmap).toMatchObject({ status: 'degraded', database: 'ok', engine: 'nmap', nmap: null, timestamp: expect.any(String) });
    expect(nmap.detail).toMatch(/^nmap is not installed, and scanning\.engine is "nmap": every scan fails/);

    const put = await server.request('/api/config', { method: 'PUT', cookie, json: { scanning: { engine: 'auto' } } });
    expect(put.status).toBe(200);
    const auto = await health();
    expect(auto).toMatchObject({ status: 'degraded', engine: 'native', nmap: null });
    expect(auto.detail).toMatch(/^nmap is not installed: scans use the built-in engine/);

    // Chosen on purpose, the built-in engine is not a degradation.
    await server.request('/api/config', { method: 'PUT', cookie, json: { scanning: { engine: 'native' } } });
    const native = await health();
    expect(native).toMatchObject({ status: 'healthy', engine: 'native', nmap: null });
    expect(native).not.toHaveProperty('detail');
  });
});
