import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itRejectsBadBodies } from '../helpers/bad-input.js';
import { testDatabases } from '../helpers/databases.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

const DEFAULT_ZONES = ['Servers', 'Network', 'Workstations', 'IoT', 'DMZ', 'Guest'];
/** startTestServer points the feed at a closed loopback port. */
const TEST_FEED = 'http://127.0.0.1:9/releases/latest';

describe.each(testDatabases())('configuration ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let cookie: string;

  beforeAll(async () => {
    ({ server, key, cookie } = await startServerWithAdmin(database));
  });
  afterAll(() => server?.close());

  const getConfig = async () => {
    const res = await server.request('/api/config', { key });
    expect(res.status).toBe(200);
    return readJson(res);
  };
  const putConfig = (json: unknown) => server.request('/api/config', { method: 'PUT', key, json });

  /** PUTs an invalid patch and checks the 400 names the path and nothing was stored. */
  const expectRejected = async (patch: unknown, path: string) => {
    const before = await getConfig();
    const res = await putConfig(patch);
    const body = await readJson(res);
    expect(res.status, `${JSON.stringify(patch)} → ${JSON.stringify(body)}`).toBe(400);
    expect(body.detail.startsWith(`${path}: `), `${body.detail} names ${path}`).toBe(true);
    expect(await getConfig()).toEqual(before);
  };

  it('returns the whole configuration with its defaults', async () => {
    const config = await getConfig();
    expect(Object.keys(config).sort()).toEqual([
      'metrics',
      'name_sources',
      'network',
      'presence',
      'recognition',
      'retention',
      'scanning',
      'server',
      'updates',
      'zones',
    ]);
    expect(config.retention).toEqual({ days: 365 });
    expect(config.name_sources.pihole).toEqual({ enabled: false, url: '', password: '' });
    expect(config.presence).toEqual({ offline_after_scans: 1 });
    // SNMP communities are secrets: masked one by one, the default `public` too.
    expect(config.recognition).toEqual({ probes: ['mdns', 'ssdp', 'netbios', 'snmp', 'http', 'tls', 'ssh'], snmp_communities: ['********'] });
    // The tests run with NETWARDEN_SCAN_ALLOW (vitest.config.ts): the enforced list is shown.
    expect(config.scanning.allowed_targets).toEqual(['127.0.0.0/8', '10.66.0.0/24']);
    expect(config.network).toEqual({ subnet: '192.168.1.0/24', exclude: [], resolve_hostnames: false });
    expect(config.scanning).toMatchObject({ port_range: '1-1000', engine: 'auto', default_profile: 'normal', risk_rules: [] });
    expect(config.scanning.port_range).toMatch(/^\d+-\d+$/);
    expect(config.zones).toEqual(DEFAULT_ZONES);
    expect(config.updates).toEqual({ enabled: true, feed_url: TEST_FEED, cache_minutes: 360, token: '' });
    expect(config.server).toMatchObject({ trust_proxy: false, secure_cookies: false });
  });

  it('is readable with a session as well as a key, and refused without credentials', async () => {
    expect((await server.request('/api/config', { cookie })).status).toBe(200);
    const res = await server.request('/api/config');
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ detail: 'Not authenticated' });
  });

  it('deep-merges a partial update: changing scanning.port_range keeps every other key', async () => {
    const before = await getConfig();
    const res = await putConfig({ scanning: { port_range: '20-1024' } });
    expect(res.status).toBe(200);
    const body = await readJson(res);
    expect(body).toEqual({ ...before, scanning: { ...before.scanning, port_range: '20-1024' } });
    // Persisted: a later read sees it.
    expect(await getConfig()).toEqual(body);
  });

  it('stores the configuration in the database', async () => {
    await putConfig({ network: { subnet: '10.20.0.0/24' } });
    const row = await server.store.db.selectFrom('settings').select('value').where('key', '=', 'config').executeTakeFirstOrThrow();
    expect(JSON.parse(row.value).network.subnet).toBe('10.20.0.0/24');
  });

  it('accepts a comma list of ports and ranges', async () => {
    const res = await putConfig({ scanning: { port_range: '22,80,443,8000-8100' } });
    expect(res.status).toBe(200);
    expect((await readJson(res)).scanning.port_range).toBe('22,80,443,8000-8100');
  });

  it('normalises a subnet given with host bits to its network address', async () => {
    const res = await putConfig({ network: { subnet: '10.1.2.3/24' } });
    expect(res.status).toBe(200);
    expect((await readJson(res)).network.subnet).toBe('10.1.2.0/24');
  });

  it('replaces arrays rather than merging them', async () => {
    const res = await putConfig({ zones: ['Lab', 'Home'] });
    expect(res.status).toBe(200);
    expect((await readJson(res)).zones).toEqual(['Lab', 'Home']);
    // The zone list follows the configuration.
    expect(await readJson(await server.request('/api/zones', { key }))).toEqual(['Lab', 'Home']);
  });

  it('resets a key to its default when sent null, and a whole section too', async () => {
    await putConfig({ scanning: { port_range: '1-10', engine: 'native' } });
    const one = await readJson(await putConfig({ scanning: { port_range: null } }));
    expect(one.scanning.port_range).toBe('1-1000');
    expect(one.scanning.engine).toBe('native');

    const section = await readJson(await putConfig({ scanning: null, zones: null }));
    expect(section.scanning).toMatchObject({ port_range: '1-1000', engine: 'auto' });
    expect(section.zones).toEqual(DEFAULT_ZONES);
  });

  it('refuses unknown keys with 400 naming the path', async () => {
    await expectRejected({ scanning: { port_rnage: '1-100' } }, 'scanning.port_rnage');
    await expectRejected({ scannning: { port_range: '1-100' } }, 'scannning');
    await expectRejected({ network: { subnet: '10.0.0.0/24', vlan: 4 } }, 'network.vlan');
  });

  it('refuses null for an unknown key, even one named like an Object method, as an unknown key', async () => {
    // Found by test/fuzz: `null` resets a key to its default, and `toString` found Object.prototype's (a 500).
    for (const [patch, path] of [
      [{ scanning: { toString: null } }, 'scanning.toString'],
      [{ constructor: null }, 'constructor'],
      [{ network: { hasOwnProperty: null } }, 'network.hasOwnProperty'],
      [{ scanning: { port_rnage: null } }, 'scanning.port_rnage'],
    ] as const) {
      await expectRejected(patch, path);
      const res = await putConfig(patch);
      expect((await readJson(res)).detail).toBe(`${path}: is not a known configuration key`);
    }
  });

  it('refuses an invalid network.subnet with 400 naming it', async () => {
    for (const subnet of ['not-a-subnet', '10.0.0.0/33', '300.1.1.0/24', '10.0.0/24', 'fe80::/64', '', ' 10.0.0.0/24 x']) {
      await expectRejected({ network: { subnet } }, 'network.subnet');
    }
    // Larger than scanning.max_hosts (default 65,536 addresses).
    await expectRejected({ network: { subnet: '10.0.0.0/8' } }, 'network.subnet');
    await expectRejected({ network: { subnet: 24 } }, 'network.subnet');
  });

  it('refuses an invalid scanning.port_range with 400 naming it', async () => {
    for (const port_range of ['0-100', '100-50', '1-65536', 'abc', '', '1-', '-5', '22,,80', '1-100-200']) {
      await expectRejected({ scanning: { port_range } }, 'scanning.port_range');
    }
    await expectRejected({ scanning: { port_range: 1000 } }, 'scanning.port_range');
  });

  it('refuses an unknown scanning.engine or profile, naming the allowed values', async () => {
    const res = await putConfig({ scanning: { engine: 'masscan' } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ detail: 'scanning.engine: must be one of auto, nmap, native', code: 'NW_INVALID_INPUT' });
    await expectRejected({ scanning: { default_profile: 'stealth' } }, 'scanning.default_profile');
  });

  it('refuses invalid zones with 400 naming them', async () => {
    await expectRejected({ zones: [] }, 'zones');
    await expectRejected({ zones: 'Servers' }, 'zones');
    await expectRejected({ zones: ['Lab', 'Lab'] }, 'zones');
    await expectRejected({ zones: ['Lab', ''] }, 'zones.1');
    await expectRejected({ zones: ['Lab', 7] }, 'zones.1');
    await expectRejected({ zones: [' padded '] }, 'zones.0');
  });

  it('refuses an invalid updates.feed_url with 400 naming it', async () => {
    for (const feed_url of ['not a url', 'ftp://example.com/feed', 'file:///etc/passwd', 'javascript:alert(1)', '']) {
      await expectRejected({ updates: { feed_url } }, 'updates.feed_url');
    }
  });

  it('refuses values of the wrong type or out of range with 400 naming the path', async () => {
    await expectRejected({ scanning: { max_hosts: '100' } }, 'scanning.max_hosts');
    await expectRejected({ scanning: { max_hosts: 0 } }, 'scanning.max_hosts');
    await expectRejected({ scanning: { os_detection: 'yes' } }, 'scanning.os_detection');
    await expectRejected({ network: { exclude: ['10.0.0.1', 'nope'] } }, 'network.exclude.1');
    await expectRejected({ network: 'home' }, 'network');
    await expectRejected({ server: { trust_proxy: ['not-an-address'] } }, 'server.trust_proxy.0');
    await expectRejected({ updates: { cache_minutes: 1.5 } }, 'updates.cache_minutes');
  });

  it('masks the updates.token secret and keeps it when the mask is sent back', async () => {
    const secret = 'ghp_very-secret-token-value';
    const set = await putConfig({ updates: { token: secret } });
    expect(set.status).toBe(200);
    const setText = await set.text();
    expect(setText).not.toContain(secret);
    expect(JSON.parse(setText).updates.token).toBe('********');

    const readText = await (await server.request('/api/config', { key })).text();
    expect(readText).not.toContain(secret);
    expect(JSON.parse(readText).updates.token).toBe('********');

    // A client that PUTs back what it read must not overwrite the secret with the mask.
    const echoed = JSON.parse(readText);
    const back = await putConfig({ updates: { ...echoed.updates, cache_minutes: 5 } });
    expect(back.status).toBe(200);
    expect((await readJson(back)).updates).toMatchObject({ token: '********', cache_minutes: 5 });
    expect((await server.store.settings.get()).updates.token).toBe(secret);

    // The audit log does not carry the secret either.
    const audit = await (await server.request('/api/audit-logs?action=config_updated&limit=1000', { key })).text();
    expect(audit).not.toContain(secret);

    // An empty token clears it; the mask is then not shown.
    const cleared = await readJson(await putConfig({ updates: { token: '' } }));
    expect(cleared.updates.token).toBe('');
    expect((await server.store.settings.get()).updates.token).toBe('');
  });

  it('masks recognition.snmp_communities one by one and keeps each when its mask is sent back', async () => {
    const [first, second] = ['n0t-public-c0mmunity', 'second-secret-community'];
    const set = await putConfig({ recognition: { snmp_communities: [first, second] } });
    expect(set.status).toBe(200);
    const setText = await set.text();
    expect(setText).not.toContain(first);
    expect(JSON.parse(setText).recognition.snmp_communities).toEqual(['********', '********']);
    const readText = await (await server.request('/api/config', { key })).text();
    expect(readText).not.toContain(second);
    const echoed = JSON.parse(readText);
    expect(echoed.recognition.snmp_communities).toEqual(['********', '********']);

    // What was read, PUT back with another change: both communities stay as stored.
    const back = await putConfig({ recognition: { ...echoed.recognition, probes: ['snmp'] } });
    expect(back.status, await back.clone().text()).toBe(200);
    expect((await readJson(back)).recognition).toEqual({ probes: ['snmp'], snmp_communities: ['********', '********'] });
    expect((await server.store.settings.get()).recognition.snmp_communities).toEqual([first, second]);

    // The mask keeps the community at its place; a new value replaces only its own.
    const replaced = await putConfig({ recognition: { snmp_communities: ['********', 'third-one'] } });
    expect(replaced.status).toBe(200);
    expect((await server.store.settings.get()).recognition.snmp_communities).toEqual([first, 'third-one']);
    // A mask where nothing was stored is refused, naming the place; nothing changes.
    await expectRejected({ recognition: { snmp_communities: ['********', '********', '********'] } }, 'recognition.snmp_communities.2');
    expect((await server.store.settings.get()).recognition.snmp_communities).toEqual([first, 'third-one']);

    // The audit log says a community was replaced, never which.
    const audit = await (await server.request('/api/audit-logs?action=config_updated&limit=1000', { key })).text();
    for (const secret of [first, second, 'third-one']) expect(audit).not.toContain(secret);
    const [latest] = await readJson(await server.request('/api/audit-logs?action=config_updated&limit=1', { key }));
    expect(latest.details.changes['recognition.snmp_communities']).toEqual({
      old: ['********', '********'],
      new: ['********', '******** (replaced)'],
    });

    const reset = await readJson(await putConfig({ recognition: null }));
    expect(reset.recognition.snmp_communities).toEqual(['********']);
    expect((await server.store.settings.get()).recognition.snmp_communities).toEqual(['public']);
  });

  it('audits config_updated with the old and new values of the changed keys', async () => {
    await putConfig({ scanning: { port_range: '1-1000' } });
    const res = await server.request('/api/config', { method: 'PUT', cookie, json: { scanning: { port_range: '1-2048' } } });
    expect(res.status).toBe(200);
    const entries = await readJson(await server.request('/api/audit-logs?action=config_updated&limit=1', { key }));
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      action: 'config_updated',
      actor: 'admin',
      actor_type: 'user',
      resource_type: 'config',
      success: true,
      ip_address: '127.0.0.1',
      details: { changes: { 'scanning.port_range': { old: '1-1000', new: '1-2048' } } },
    });
    expect(Object.keys(entries[0].details.changes)).toEqual(['scanning.port_range']);
  });

  it('names the API key as the actor of a change made with a key', async () => {
    await putConfig({ scanning: { host_timeout_seconds: 120 } });
    const [entry] = await readJson(await server.request('/api/audit-logs?action=config_updated&limit=1', { key }));
    expect(entry).toMatchObject({
      actor: 'test-key',
      actor_type: 'api_key',
      details: { changes: { 'scanning.host_timeout_seconds': { new: 120 } } },
    });
  });

  it('refuses an empty object', async () => {
    const res = await putConfig({});
    expect(res.status).toBe(400);
    expect((await readJson(res)).detail).toMatch(/^body: /);
  });

  it('refuses a PUT without credentials and changes nothing', async () => {
    const before = await getConfig();
    const res = await server.request('/api/config', { method: 'PUT', json: { scanning: { port_range: '1-5' } } });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ detail: 'Not authenticated' });
    expect(await getConfig()).toEqual(before);
  });

  itRejectsBadBodies({
    context: () => ({ server, auth: { key } }),
    method: 'PUT',
    path: '/api/config',
    valid: { scanning: { port_range: '1-1000' } },
    wrongTypes: [
      { body: { scanning: { max_hosts: '100' } }, field: 'scanning.max_hosts' },
      { body: { network: { resolve_hostnames: 'yes' } }, field: 'network.resolve_hostnames' },
      { body: { updates: { enabled: 1 } }, field: 'updates.enabled' },
      { body: { scanning: 'fast' }, field: 'scanning' },
      { body: { zones: { a: 1 } }, field: 'zones' },
    ],
  });
});
