import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itRejectsBadBodies } from '../helpers/bad-input.js';
import { testDatabases } from '../helpers/databases.js';
import { adminWithKey, readJson, startServerWithAdmin, startTestServer, type RequestOptions, type TestServer } from '../helpers/server.js';

const NOT_AUTHENTICATED = { detail: 'Not authenticated' };
const KEY_FORMAT = /^svc_[A-Za-z0-9_-]{43}$/;
const PAST = '2020-01-01T00:00:00.000Z';

interface CreatedKey {
  id: number;
  name: string;
  key: string;
  prefix: string;
  created_at: string;
  expires_at: string | null;
}

async function createKey(server: TestServer, cookie: string, body: Record<string, unknown>): Promise<CreatedKey> {
  const res = await server.request('/api/keys', { method: 'POST', cookie, json: body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as CreatedKey;
}

async function listKeys(server: TestServer, auth: RequestOptions) {
  const res = await server.request('/api/keys', auth);
  expect(res.status).toBe(200);
  return (await res.json()) as Array<Record<string, unknown>>;
}

async function auditLog(server: TestServer, auth: RequestOptions, query = '') {
  const res = await server.request(`/api/audit-logs?limit=1000${query}`, auth);
  expect(res.status).toBe(200);
  return (await res.json()) as Array<Record<string, unknown>>;
}

/**
 * Makes a key expired, as time passing would. The row is changed behind the service's back, as
 * another process would change it: the service notices such a change within about a second (its
 * key cache re-reads the keys' revocation and expiry at most that often), so wait for that.
 */
async function expireKey(server: TestServer, id: number, key: string): Promise<void> {
  await server.store.db.updateTable('api_keys').set({ expires_at: PAST }).where('id', '=', id).execute();
  await expect.poll(async () => (await server.request('/api/auth/me', { key })).status, { timeout: 10_000 }).toBe(401);
}

describe.each(testDatabases())('API keys ($kind)', (database) => {
  let server: TestServer;
  let cookie: string;
  let key: string;

  beforeAll(async () => {
    ({ server, cookie, key } = await startServerWithAdmin(database, { keyName: 'admin-key' }));
  });
  afterAll(() => server?.close());

  it('creates a key with a session: 201 with the key shown once', async () => {
    const res = await server.request('/api/keys', { method: 'POST', cookie, json: { name: 'home-assistant' } });
    expect(res.status).toBe(201);
    const body = await readJson(res);
    expect(Object.keys(body).sort()).toEqual(['created_at', 'expires_at', 'id', 'key', 'name', 'prefix']);
    expect(body.name).toBe('home-assistant');
    expect(Number.isInteger(body.id)).toBe(true);
    expect(body.key).toMatch(KEY_FORMAT);
    expect(body.key).toHaveLength(47);
    expect(body.key.startsWith(body.prefix)).toBe(true);
    expect(body.prefix.length).toBeLessThan(body.key.length / 2);
    expect(body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(body.expires_at).toBeNull();

    const me = await server.request('/api/auth/me', { key: body.key });
    expect(await me.json()).toEqual({ username: null, auth: 'api_key', key_name: 'home-assistant' });
  });

  it('generates a different key every time', async () => {
    const a = await createKey(server, cookie, { name: 'twin' });
    const b = await createKey(server, cookie, { name: 'twin' });
    expect(a.key).not.toBe(b.key);
    expect(a.id).not.toBe(b.id);
  });

  it('refuses to create a key with an API key (403) or without credentials (401)', async () => {
    const withKey = await server.request('/api/keys', { method: 'POST', key, json: { name: 'from-a-key' } });
    expect(withKey.status).toBe(403);
    expect((await readJson(withKey)).detail).toMatch(/session/);
    const anonymous = await server.request('/api/keys', { method: 'POST', json: { name: 'anonymous' } });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual(NOT_AUTHENTICATED);
    const names = (await listKeys(server, { key })).map((k) => k.name);
    expect(names).not.toContain('from-a-key');
    expect(names).not.toContain('anonymous');
  });

  it('lists keys with a session or a key, with their fields and never the key value', async () => {
    const created = await createKey(server, cookie, { name: 'listed' });
    for (const auth of [{ cookie }, { key }]) {
      const res = await server.request('/api/keys', auth);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).not.toContain(created.key);
      expect(text).not.toContain(key);
      const list = JSON.parse(text) as Array<Record<string, unknown>>;
      const entry = list.find((k) => k.id === created.id);
      expect(entry).toEqual({
        id: created.id,
        name: 'listed',
        prefix: created.prefix,
        created_at: created.created_at,
        last_used_at: null,
        expires_at: null,
        revoked_at: null,
        status: 'active',
      });
    }
  });

  it('never writes the key value to the audit log', async () => {
    const created = await createKey(server, cookie, { name: 'audited' });
    const res = await server.request('/api/audit-logs?limit=1000', { key });
    const text = await res.text();
    expect(text).not.toContain(created.key);
    expect(text).not.toContain(key);
    const entry = (JSON.parse(text) as Array<Record<string, unknown>>).find(
      (e) => e.action === 'api_key_created' && e.resource_id === String(created.id),
    );
    expect(entry).toMatchObject({ actor: 'admin', actor_type: 'user', success: true, details: { name: 'audited', prefix: created.prefix } });
  });

  it('sets expires_at from expires_in_days', async () => {
    const created = await createKey(server, cookie, { name: 'temporary', expires_in_days: 30 });
    expect(created.expires_at).not.toBeNull();
    expect(Date.parse(created.expires_at!) - Date.parse(created.created_at)).toBe(30 * 86_400_000);
    const entry = (await listKeys(server, { key })).find((k) => k.id === created.id);
    expect(entry).toMatchObject({ expires_at: created.expires_at, status: 'active' });
    expect((await server.request('/api/auth/me', { key: created.key })).status).toBe(200);
  });

  it('refuses an expired key with 401 and lists it as expired', async () => {
    const created = await createKey(server, cookie, { name: 'expiring', expires_in_days: 1 });
    expect((await server.request('/api/auth/me', { key: created.key })).status).toBe(200);
    await expireKey(server, created.id, created.key);
    const res = await server.request('/api/auth/me', { key: created.key });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(NOT_AUTHENTICATED);
    const entry = (await listKeys(server, { key })).find((k) => k.id === created.id);
    expect(entry).toMatchObject({ status: 'expired', expires_at: PAST, revoked_at: null });
  });

  it('revokes a key: 200, then the key gets 401 on its very next request', async () => {
    const created = await createKey(server, cookie, { name: 'to-revoke' });
    // Used once, so any per-key caching would have had a chance to happen.
    expect((await server.request('/api/stats', { key: created.key })).status).toBe(200);

    const res = await server.request(`/api/keys/${created.id}`, { method: 'DELETE', cookie });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'revoked', id: created.id, name: 'to-revoke' });

    const after = await server.request('/api/stats', { key: created.key });
    expect(after.status).toBe(401);
    expect(await after.json()).toEqual(NOT_AUTHENTICATED);
    const bearer = await server.request('/api/stats', { headers: { Authorization: `Bearer ${created.key}` } });
    expect(bearer.status).toBe(401);
    expect(await bearer.json()).toEqual(NOT_AUTHENTICATED);

    const entry = (await listKeys(server, { key })).find((k) => k.id === created.id);
    expect(entry?.status).toBe('revoked');
    expect(typeof entry?.revoked_at).toBe('string');
  });

  it('revoking twice answers 200 and changes nothing', async () => {
    const created = await createKey(server, cookie, { name: 'twice' });
    expect((await server.request(`/api/keys/${created.id}`, { method: 'DELETE', key })).status).toBe(200);
    const first = (await listKeys(server, { key })).find((k) => k.id === created.id);

    const again = await server.request(`/api/keys/${created.id}`, { method: 'DELETE', key });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ status: 'revoked', id: created.id, name: 'twice' });
    const second = (await listKeys(server, { key })).find((k) => k.id === created.id);
    expect(second).toEqual(first);

    const revocations = (await auditLog(server, { key }, '&action=api_key_revoked')).filter((e) => e.resource_id === String(created.id));
    expect(revocations).toHaveLength(1);
    expect(revocations[0]).toMatchObject({ actor: 'admin-key', actor_type: 'api_key', success: true, details: { name: 'twice' } });
  });

  it('lets a key revoke itself, after which it is refused', async () => {
    const created = await createKey(server, cookie, { name: 'self-revoking' });
    const res = await server.request(`/api/keys/${created.id}`, { method: 'DELETE', key: created.key });
    expect(res.status).toBe(200);
    expect((await server.request('/api/keys', { key: created.key })).status).toBe(401);
  });

  it('answers 404 for an unknown key id and 400 for a malformed one', async () => {
    const unknown = await server.request('/api/keys/999999', { method: 'DELETE', key });
    expect(unknown.status).toBe(404);
    expect((await readJson(unknown)).detail).toMatch(/not found/i);
    for (const id of ['abc', '1.5', '0', '-3', '99999999999999999999']) {
      const res = await server.request(`/api/keys/${id}`, { method: 'DELETE', key });
      expect(res.status, id).toBe(400);
      expect((await readJson(res)).detail).toMatch(/^key_id: /);
    }
  });

  it('lets X-API-Key win over Authorization: Bearer when both are sent', async () => {
    const revoked = await createKey(server, cookie, { name: 'revoked-for-precedence' });
    await server.request(`/api/keys/${revoked.id}`, { method: 'DELETE', cookie });

    const goodHeader = await server.request('/api/auth/me', { key, headers: { Authorization: `Bearer ${revoked.key}` } });
    expect(goodHeader.status).toBe(200);
    expect((await readJson(goodHeader)).key_name).toBe('admin-key');

    const badHeader = await server.request('/api/auth/me', { key: revoked.key, headers: { Authorization: `Bearer ${key}` } });
    expect(badHeader.status).toBe(401);
    expect(await badHeader.json()).toEqual(NOT_AUTHENTICATED);
  });

  it('accepts the key as a bearer token whatever the case of the scheme and surrounding spaces', async () => {
    for (const authorization of [`Bearer ${key}`, `bearer ${key}`, `BEARER   ${key}  `]) {
      const res = await server.request('/api/auth/me', { headers: { Authorization: authorization } });
      expect(res.status, authorization).toBe(200);
    }
    expect((await server.request('/api/auth/me', { headers: { 'X-API-Key': `  ${key} ` } })).status).toBe(200);
  });

  it('lets an API key win over a session cookie: a bad key is refused even with a good cookie', async () => {
    const res = await server.request('/api/auth/me', { cookie, headers: { 'X-API-Key': 'svc_not-a-real-key' } });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(NOT_AUTHENTICATED);
  });

  it('refuses invalid keys with 401, never 429, however many are tried', async () => {
    const almost = key.slice(0, -4) + (key.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    const candidates = ['garbage', '', 'svc_', `svc_${'A'.repeat(43)}`, almost, key.toUpperCase(), `${key}x`, 'x'.repeat(4000)];
    for (let round = 0; round < 5; round++) {
      for (const candidate of candidates) {
        const res = await server.request('/api/stats', { headers: { 'X-API-Key': candidate } });
        expect(res.status, `${round}: ${candidate.slice(0, 20)}`).toBe(401);
        expect(await res.json()).toEqual(NOT_AUTHENTICATED);
      }
    }
    for (const authorization of ['Bearer garbage', 'Basic YWRtaW46cGFzc3dvcmQ=', 'Bearer', `Token ${key}`]) {
      const res = await server.request('/api/stats', { headers: { Authorization: authorization } });
      expect(res.status, authorization).toBe(401);
      expect(await res.json()).toEqual(NOT_AUTHENTICATED);
    }
    // The real key still works.
    expect((await server.request('/api/stats', { key })).status).toBe(200);
  });

  it('records last_used_at once a key has been used', async () => {
    const created = await createKey(server, cookie, { name: 'usage' });
    expect((await listKeys(server, { key })).find((k) => k.id === created.id)?.last_used_at).toBeNull();
    expect((await server.request('/api/zones', { key: created.key })).status).toBe(200);
    // The use is recorded alongside the request, not before the answer: poll briefly.
    await expect
      .poll(async () => (await listKeys(server, { key })).find((k) => k.id === created.id)?.last_used_at, { timeout: 5000 })
      .toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
  });

  it('validates the key name and expiry', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{}, /^name: is required$/],
      [{ name: '' }, /^name: /],
      [{ name: '    ' }, /^name: must not be blank$/],
      [{ name: 'n'.repeat(101) }, /^name: /],
      [{ name: 'ok', expires_in_days: 0 }, /^expires_in_days: /],
      [{ name: 'ok', expires_in_days: -1 }, /^expires_in_days: /],
      [{ name: 'ok', expires_in_days: 3651 }, /^expires_in_days: /],
      [{ name: 'ok', expires_in_days: 1.5 }, /^expires_in_days: /],
    ];
    for (const [body, detail] of cases) {
      const res = await server.request('/api/keys', { method: 'POST', cookie, json: body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await readJson(res)).detail).toMatch(detail);
    }
    expect((await listKeys(server, { key })).map((k) => k.name)).not.toContain('ok');
  });

  it('answers 405 with Allow for a method the keys collection does not have', async () => {
    const res = await server.request('/api/keys', { method: 'PUT', key, json: { name: 'x' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
  });

  it('refuses every key endpoint without credentials with the seed 401 body', async () => {
    for (const [method, path] of [
      ['GET', '/api/keys'],
      ['POST', '/api/keys'],
      ['DELETE', '/api/keys/1'],
    ]) {
      const res = await server.request(path, { method });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(await res.json()).toEqual(NOT_AUTHENTICATED);
    }
  });

  itRejectsBadBodies({
    context: () => ({ server, auth: { cookie } }),
    method: 'POST',
    path: '/api/keys',
    valid: { name: 'valid-name' },
    wrongTypes: [
      { body: { name: 42 }, field: 'name' },
      { body: { name: ['a'] }, field: 'name' },
      { body: { name: 'x', expires_in_days: '30' }, field: 'expires_in_days' },
      { body: { name: 'x', expires_in_days: true }, field: 'expires_in_days' },
    ],
  });
});

describe.each(testDatabases())('failed API key attempts in the audit log ($kind)', (database) => {
  let server: TestServer;
  let cookie: string;
  let key: string;

  beforeAll(async () => {
    ({ server, cookie, key } = await startServerWithAdmin(database, { keyName: 'reader' }));
  });
  afterAll(() => server?.close());

  it('audits the first rejected key of a client as api_key_rejected, naming a known key', async () => {
    const revoked = await createKey(server, cookie, { name: 'old-integration' });
    await server.request(`/api/keys/${revoked.id}`, { method: 'DELETE', cookie });

    const res = await server.request('/api/devices', { key: revoked.key, headers: { 'User-Agent': 'old-integration/2.1' } });
    expect(res.status).toBe(401);

    const entries = await auditLog(server, { key }, '&action=api_key_rejected');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      action: 'api_key_rejected',
      actor: 'old-integration',
      actor_type: 'api_key',
      resource_type: 'api_key',
      resource_id: String(revoked.id),
      ip_address: '127.0.0.1',
      user_agent: 'old-integration/2.1',
      success: false,
      details: { status: 'revoked', path: '/api/devices' },
    });
    expect(JSON.stringify(entries)).not.toContain(revoked.key);
  });

  it('writes at most one entry a minute per client, however many bad keys it sends', async () => {
    for (let i = 0; i < 40; i++) {
      const res = await server.request('/api/stats', { headers: { 'X-API-Key': `svc_${String(i).padStart(43, 'x')}` } });
      expect(res.status).toBe(401);
    }
    const entries = await auditLog(server, { key }, '&action=api_key_rejected');
    expect(entries).toHaveLength(1);
    const all = await auditLog(server, { key });
    expect(all.length).toBeLessThan(10);
  });
});

describe.each(testDatabases())('an expired key in the audit log ($kind)', (database) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(database);
  });
  afterAll(() => server?.close());

  it('audits a refused expired key with its status', async () => {
    const { cookie, key } = await adminWithKey(server, 'reader');
    const created = await createKey(server, cookie, { name: 'short-lived', expires_in_days: 1 });
    await expireKey(server, created.id, created.key);
    expect((await server.request('/api/stats', { key: created.key })).status).toBe(401);
    const entries = await auditLog(server, { key }, '&action=api_key_rejected');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actor: 'short-lived', resource_id: String(created.id), details: { status: 'expired' } });
  });
});
