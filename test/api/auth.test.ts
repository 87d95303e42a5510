import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/auth/tokens.js';
import { createLogger } from '../../src/logger.js';
import { initialise } from '../../src/services.js';
import { itRejectsBadBodies } from '../helpers/bad-input.js';
import { testDatabases } from '../helpers/databases.js';
import { ADMIN, readJson, sessionCookie, startServerWithAdmin, startTestServer, type RequestOptions, type TestServer } from '../helpers/server.js';

const INVALID_LOGIN = { detail: 'Invalid username or password' };
const NOT_AUTHENTICATED = { detail: 'Not authenticated' };

/** The attributes of the session cookie set by a response, lower-cased names. */
function sessionCookieAttributes(res: Response): Map<string, string> {
  const header = res.headers.getSetCookie().find((c) => c.startsWith('netwarden_session='));
  expect(header, 'a netwarden_session cookie is set').toBeDefined();
  const attributes = new Map<string, string>();
  for (const part of header!.split(';').slice(1)) {
    const [name, ...value] = part.trim().split('=');
    attributes.set(name.toLowerCase(), value.join('='));
  }
  return attributes;
}

function login(server: TestServer, body: unknown, init: RequestOptions = {}) {
  return server.request('/api/auth/login', { method: 'POST', json: body, ...init });
}

async function auditEntries(server: TestServer, auth: RequestOptions, action: string) {
  const res = await server.request(`/api/audit-logs?action=${action}&limit=1000`, auth);
  expect(res.status).toBe(200);
  return (await readJson(res)) as Array<Record<string, unknown>>;
}

describe.each(testDatabases())('first-run set-up ($kind)', (database) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(database);
  });
  afterAll(() => server?.close());

  it('reports that set-up is required while no user exists', async () => {
    const res = await server.request('/api/auth/status');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ setup_required: true, setup_code_required: false });
  });

  it('refuses protected endpoints before set-up with the seed 401 body', async () => {
    const res = await server.request('/api/auth/me');
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(NOT_AUTHENTICATED);
  });

  it('rejects a bad username with a 400 naming the field', async () => {
    for (const username of ['ab', 'has space', 'semi;colon', 'x'.repeat(65), '']) {
      const res = await server.request('/api/auth/setup', { method: 'POST', json: { username, password: ADMIN.password } });
      expect(res.status, username).toBe(400);
      expect((await readJson(res)).detail).toMatch(/^username: /);
    }
  });

  it('rejects a short password, or one equal to the username, with a 400 naming the field', async () => {
    const short = await server.request('/api/auth/setup', { method: 'POST', json: { username: 'admin', password: 'short' } });
    expect(short.status).toBe(400);
    expect((await readJson(short)).detail).toMatch(/^password: .*10 characters/);

    const same = await server.request('/api/auth/setup', { method: 'POST', json: { username: 'administrator', password: 'Administrator' } });
    expect(same.status).toBe(400);
    expect((await readJson(same)).detail).toMatch(/^password: /);

    const missing = await server.request('/api/auth/setup', { method: 'POST', json: { username: 'admin' } });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ detail: 'password: is required', code: 'NW_VALIDATION' });

    // None of these created a user.
    expect(await (await server.request('/api/auth/status')).json()).toEqual({ setup_required: true, setup_code_required: false });
  });

  it('creates the administrator: 201, the username and an HttpOnly SameSite=Lax session cookie for /', async () => {
    const res = await server.request('/api/auth/setup', { method: 'POST', json: ADMIN });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ username: ADMIN.username });
    const attributes = sessionCookieAttributes(res);
    expect(attributes.has('httponly')).toBe(true);
    expect(attributes.get('samesite')?.toLowerCase()).toBe('lax');
    expect(attributes.get('path')).toBe('/');
    // Served over plain HTTP and not configured otherwise: not Secure, or the browser would drop it.
    expect(attributes.has('secure')).toBe(false);

    const me = await server.request('/api/auth/me', { cookie: sessionCookie(res) });
    expect(me.status).toBe(200);
    expect(await me.json()).toEqual({ username: ADMIN.username, auth: 'session' });
  });

  it('reports set-up as done afterwards', async () => {
    expect(await (await server.request('/api/auth/status')).json()).toEqual({ setup_required: false, setup_code_required: false });
  });

  it('answers 409 to a second set-up, even with other credentials, and does not replace the admin', async () => {
    const again = await server.request('/api/auth/setup', { method: 'POST', json: ADMIN });
    expect(again.status).toBe(409);
    expect(again.headers.getSetCookie()).toEqual([]);
    expect((await readJson(again)).detail).toMatch(/already/);

    const other = await server.request('/api/auth/setup', { method: 'POST', json: { username: 'intruder', password: 'another long password' } });
    expect(other.status).toBe(409);
    expect((await login(server, { username: 'intruder', password: 'another long password' })).status).toBe(401);
  });

  it('records the set-up in the audit log', async () => {
    const cookie = sessionCookie(await login(server, ADMIN));
    const entries = await auditEntries(server, { cookie }, 'setup_completed');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      action: 'setup_completed',
      actor: ADMIN.username,
      actor_type: 'user',
      success: true,
      ip_address: '127.0.0.1',
    });
  });

  itRejectsBadBodies({
    context: () => ({ server, auth: {} }),
    method: 'POST',
    path: '/api/auth/setup',
    valid: { username: 'second', password: 'a long enough password' },
    wrongTypes: [
      { body: { username: 123, password: 'a long enough password' }, field: 'username' },
      { body: { username: 'second', password: ['a long enough password'] }, field: 'password' },
      { body: { username: 'second', password: 'a long enough password', remember: 'yes' }, field: 'remember' },
    ],
  });
});

describe.each(testDatabases())('concurrent first-run set-ups ($kind)', (database) => {
  it('lets exactly one of several simultaneous set-ups win; the others get 409', async () => {
    const server = await startTestServer(database);
    try {
      const statuses = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          server
            .request('/api/auth/setup', { method: 'POST', json: { username: `racer${i}`, password: 'a long enough password' } })
            .then((r) => r.status),
        ),
      );
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(5);
      expect(await server.store.users.count()).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('creates one first user even when the store is asked at exactly the same time', async () => {
    // The HTTP race above depends on timing; this is the same race without the password hashing.
    const opened = await database.open();
    try {
      const created = await Promise.all(Array.from({ length: 6 }, (_, i) => opened.store.users.createFirst(`racer${i}`, 'not-a-real-hash')));
      expect(created.filter(Boolean)).toHaveLength(1);
      expect(await opened.store.users.count()).toBe(1);
    } finally {
      await opened.cleanup();
    }
  });
});

describe.each(testDatabases())('administrator from the environment ($kind)', (database) => {
  const bootstrap = { username: 'ops-admin', password: 'bootstrap password 1' };
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(database, { admin: bootstrap });
  });
  afterAll(() => server?.close());

  it('exists at start-up, so set-up is not required and the set-up endpoint answers 409', async () => {
    expect(await (await server.request('/api/auth/status')).json()).toEqual({ setup_required: false, setup_code_required: false });
    const res = await server.request('/api/auth/setup', { method: 'POST', json: ADMIN });
    expect(res.status).toBe(409);
  });

  it('logs in with the configured credentials and the creation is audited as a system action', async () => {
    const res = await login(server, bootstrap);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ username: bootstrap.username });
    const entries = await auditEntries(server, { cookie: sessionCookie(res) }, 'setup_completed');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actor: bootstrap.username, actor_type: 'system', success: true, details: { method: 'environment' } });
  });

  it('does not replace the admin when started again with other environment credentials', async () => {
    // What a restart with changed NETWARDEN_ADMIN_* variables does to the existing database.
    await initialise(server.store, { settingsSeed: {}, admin: { username: 'other-admin', password: 'other password 123' } }, createLogger('silent'));
    expect((await login(server, { username: 'other-admin', password: 'other password 123' })).status).toBe(401);
    expect((await login(server, bootstrap)).status).toBe(200);
  });
});

describe.each(testDatabases())('login, logout and me ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let cookie: string;

  beforeAll(async () => {
    ({ server, key, cookie } = await startServerWithAdmin(database, { keyName: 'cli-key' }));
  });
  afterAll(() => server?.close());

  it('logs in: 200 with the username and an HttpOnly SameSite=Lax session cookie for /', async () => {
    const res = await login(server, ADMIN);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ username: ADMIN.username });
    const attributes = sessionCookieAttributes(res);
    expect(attributes.has('httponly')).toBe(true);
    expect(attributes.get('samesite')?.toLowerCase()).toBe('lax');
    expect(attributes.get('path')).toBe('/');
    // Without "remember" it is a browser-session cookie.
    expect(attributes.has('max-age')).toBe(false);
    expect(attributes.has('expires')).toBe(false);
    const me = await server.request('/api/auth/me', { cookie: sessionCookie(res) });
    expect(await me.json()).toEqual({ username: ADMIN.username, auth: 'session' });
  });

  it('keeps a "remember me" session cookie across browser restarts', async () => {
    const res = await login(server, { ...ADMIN, remember: true });
    expect(res.status).toBe(200);
    const maxAge = Number(sessionCookieAttributes(res).get('max-age'));
    // The default remember_days is 30.
    expect(maxAge).toBe(30 * 86_400);
  });

  it('answers a wrong password with 401 and the generic message, and sets no cookie', async () => {
    const res = await login(server, { username: ADMIN.username, password: 'not the password' });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(INVALID_LOGIN);
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  it('answers an unknown user exactly like a wrong password', async () => {
    const res = await login(server, { username: 'nobody-here', password: 'not the password' });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(INVALID_LOGIN);
  });

  it('treats usernames as exact: another capitalisation does not log in', async () => {
    const res = await login(server, { username: ADMIN.username.toUpperCase(), password: ADMIN.password });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(INVALID_LOGIN);
  });

  it('audits a failed login with the client address, user agent and reason (never the password)', async () => {
    const res = await login(
      server,
      { username: 'mallory', password: 'guess-number-one' },
      { headers: { 'User-Agent': 'netwarden-test-agent/1.0', 'X-Forwarded-For': '198.51.100.9' } },
    );
    expect(res.status).toBe(401);
    const logRes = await server.request('/api/audit-logs?action=login_failed&limit=1000', { key });
    const entries = await readJson(logRes);
    const entry = entries.find((e: { actor: string }) => e.actor === 'mallory');
    expect(entry).toMatchObject({
      action: 'login_failed',
      actor: 'mallory',
      actor_type: 'user',
      success: false,
      // X-Forwarded-For is ignored unless server.trust_proxy is configured.
      ip_address: '127.0.0.1',
      user_agent: 'netwarden-test-agent/1.0',
      details: { reason: 'unknown user' },
    });
    expect(JSON.stringify(entries)).not.toContain('guess-number-one');
  });

  it('audits a successful login', async () => {
    await login(server, ADMIN, { headers: { 'User-Agent': 'browser-for-login-success' } });
    const entries = await auditEntries(server, { key }, 'login_success');
    expect(entries.find((e) => e.user_agent === 'browser-for-login-success')).toMatchObject({
      actor: ADMIN.username,
      actor_type: 'user',
      success: true,
      ip_address: '127.0.0.1',
    });
  });

  it('tells an API key who it is', async () => {
    const res = await server.request('/api/auth/me', { key });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ username: null, auth: 'api_key', key_name: 'cli-key' });
  });

  it('refuses a forged or unknown session cookie with the seed 401 body', async () => {
    for (const value of ['forged', 'A'.repeat(43), 'x'.repeat(5000)]) {
      const res = await server.request('/api/auth/me', { cookie: `netwarden_session=${value}` });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual(NOT_AUTHENTICATED);
    }
  });

  it('refuses an expired session with the seed 401 body', async () => {
    const session = sessionCookie(await login(server, ADMIN));
    expect((await server.request('/api/auth/me', { cookie: session })).status).toBe(200);
    // As if session_hours had passed for this session (the store keeps only the token's SHA-256).
    const token = session.slice('netwarden_session='.length);
    await server.store.db.updateTable('sessions').set({ expires_at: '2020-01-01T00:00:00.000Z' }).where('id', '=', sha256Hex(token)).execute();
    const res = await server.request('/api/auth/me', { cookie: session });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(NOT_AUTHENTICATED);
    expect((await server.request('/api/auth/me', { cookie })).status).toBe(200);
  });

  it('logs out: the session ends server side, the cookie is cleared and then gets 401', async () => {
    const session = sessionCookie(await login(server, ADMIN));
    const res = await server.request('/api/auth/logout', { method: 'POST', cookie: session });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'logged_out' });
    const cleared = res.headers.getSetCookie().find((c) => c.startsWith('netwarden_session='));
    expect(cleared).toMatch(/netwarden_session=;/);
    expect(cleared).toMatch(/Expires=Thu, 01 Jan 1970|Max-Age=0/);

    // A client that kept the old cookie is refused.
    const after = await server.request('/api/auth/me', { cookie: session });
    expect(after.status).toBe(401);
    expect(await after.json()).toEqual(NOT_AUTHENTICATED);
    // The other session of the same user is unaffected.
    expect((await server.request('/api/auth/me', { cookie })).status).toBe(200);

    const entries = await auditEntries(server, { key }, 'logout');
    expect(entries[0]).toMatchObject({ action: 'logout', actor: ADMIN.username, success: true });
  });

  it('refuses logout without a session (401) and for an API key (403)', async () => {
    const anonymous = await server.request('/api/auth/logout', { method: 'POST' });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual(NOT_AUTHENTICATED);
    const withKey = await server.request('/api/auth/logout', { method: 'POST', key });
    expect(withKey.status).toBe(403);
    expect((await readJson(withKey)).detail).toMatch(/session/);
  });

  it('validates the login body', async () => {
    const missing = await login(server, { username: ADMIN.username });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ detail: 'password: is required', code: 'NW_VALIDATION' });
    const empty = await login(server, { username: '', password: ADMIN.password });
    expect(empty.status).toBe(400);
    expect((await readJson(empty)).detail).toMatch(/^username: /);
  });

  itRejectsBadBodies({
    context: () => ({ server, auth: {} }),
    method: 'POST',
    path: '/api/auth/login',
    valid: ADMIN,
    wrongTypes: [
      { body: { username: 42, password: ADMIN.password }, field: 'username' },
      { body: { username: ADMIN.username, password: true }, field: 'password' },
      { body: { ...ADMIN, remember: 'true' }, field: 'remember' },
    ],
  });
});

describe.each(testDatabases())('login throttling ($kind)', (database) => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    ({ server, key } = await startServerWithAdmin(database));
  });
  afterAll(() => server?.close());

  it('answers 429 with Retry-After after 5 failures for a username, even to the correct password', async () => {
    for (let i = 0; i < 5; i++) {
      // Changing X-Forwarded-For does not help: it is not trusted by default.
      const res = await login(
        server,
        { username: ADMIN.username, password: `wrong password ${i}` },
        { headers: { 'X-Forwarded-For': `203.0.113.${i}` } },
      );
      expect(res.status, `attempt ${i + 1}`).toBe(401);
    }
    const throttled = await login(server, { username: ADMIN.username, password: 'wrong password 6' });
    expect(throttled.status).toBe(429);
    const retryAfter = Number(throttled.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    expect((await readJson(throttled)).detail).toMatch(/Too many failed logins/);

    const correct = await login(server, ADMIN);
    expect(correct.status).toBe(429);
    expect(correct.headers.get('retry-after')).not.toBeNull();
    expect(correct.headers.getSetCookie()).toEqual([]);
  });

  it('throttles per username: another user from the same client still gets an answer', async () => {
    const res = await login(server, { username: 'someone-else', password: 'wrong password' });
    expect(res.status).toBe(401);
  });

  it('audits throttled attempts as login_throttled, once a minute per client with a count of the rest', async () => {
    // Two attempts were refused above; a flood must not write one entry each.
    for (let i = 0; i < 5; i++) expect((await login(server, ADMIN)).status).toBe(429);
    const entries = await auditEntries(server, { key }, 'login_throttled');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actor: ADMIN.username, success: false, ip_address: '127.0.0.1', details: { refused_since_last_entry: 0 } });
    const failed = await auditEntries(server, { key }, 'login_failed');
    expect(failed.filter((e) => e.actor === ADMIN.username)).toHaveLength(5);
  });

  it('keeps existing sessions and API keys working while logins are throttled', async () => {
    expect((await server.request('/api/auth/me', { key })).status).toBe(200);
  });
});

describe.each(testDatabases())('login throttling per client ($kind)', (database) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(database, { admin: ADMIN });
  });
  afterAll(() => server?.close());

  it('answers 429 once one client has failed 20 times, whatever usernames it tries', async () => {
    for (let i = 0; i < 20; i++) {
      const res = await login(server, { username: `guess${i}`, password: 'wrong password' }, { headers: { 'X-Forwarded-For': `192.0.2.${i}` } });
      expect(res.status, `attempt ${i + 1}`).toBe(401);
    }
    const res = await login(server, { username: 'guess-fresh', password: 'wrong password' });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await login(server, ADMIN)).status).toBe(429);
  });
});

describe.each(testDatabases())('client address behind a trusted proxy ($kind)', (database) => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    ({ server, key } = await startServerWithAdmin(database));
  });
  afterAll(() => server?.close());

  it('records X-Forwarded-For as the client address only once server.trust_proxy names the proxy', async () => {
    await login(server, { username: 'before-trust', password: 'wrong password' }, { headers: { 'X-Forwarded-For': '203.0.113.7' } });
    const put = await server.request('/api/config', { method: 'PUT', key, json: { server: { trust_proxy: ['127.0.0.1'] } } });
    expect(put.status).toBe(200);
    await login(server, { username: 'after-trust', password: 'wrong password' }, { headers: { 'X-Forwarded-For': '203.0.113.7' } });

    const entries = await auditEntries(server, { key }, 'login_failed');
    expect(entries.find((e) => e.actor === 'before-trust')?.ip_address).toBe('127.0.0.1');
    expect(entries.find((e) => e.actor === 'after-trust')?.ip_address).toBe('203.0.113.7');
  });
});

describe.each(testDatabases())('Secure session cookie ($kind)', (database) => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    ({ server, key } = await startServerWithAdmin(database));
  });
  afterAll(() => server?.close());

  it('marks the cookie Secure when the request came over HTTPS through a trusted proxy', async () => {
    const direct = await login(server, ADMIN, { headers: { 'X-Forwarded-Proto': 'https' } });
    // Not trusted yet: the header is ignored.
    expect(sessionCookieAttributes(direct).has('secure')).toBe(false);
    await server.request('/api/config', { method: 'PUT', key, json: { server: { trust_proxy: ['127.0.0.1'] } } });
    const proxied = await login(server, ADMIN, { headers: { 'X-Forwarded-Proto': 'https' } });
    expect(sessionCookieAttributes(proxied).has('secure')).toBe(true);
  });

  it('marks the cookie Secure when server.secure_cookies is set', async () => {
    await server.request('/api/config', { method: 'PUT', key, json: { server: { trust_proxy: false, secure_cookies: true } } });
    const res = await login(server, ADMIN);
    expect(sessionCookieAttributes(res).has('secure')).toBe(true);
  });
});

describe.each(testDatabases())('password change ($kind)', (database) => {
  const newPassword = 'a brand new passphrase';
  let server: TestServer;
  let current: string;
  let other: string;
  let key: string;

  beforeAll(async () => {
    ({ server, cookie: current, key } = await startServerWithAdmin(database));
    other = sessionCookie(await login(server, ADMIN));
  });
  afterAll(() => server?.close());

  const change = (body: unknown, init: RequestOptions = { cookie: current }) =>
    server.request('/api/auth/password', { method: 'POST', json: body, ...init });

  it('refuses a wrong current password with 400 naming current_password', async () => {
    const res = await change({ current_password: 'not my password', new_password: newPassword });
    expect(res.status).toBe(400);
    expect((await readJson(res)).detail).toMatch(/^current_password: /);
    expect((await login(server, ADMIN)).status).toBe(200);
  });

  it('refuses a short new password, or the same password, with 400 naming new_password', async () => {
    const short = await change({ current_password: ADMIN.password, new_password: 'short' });
    expect(short.status).toBe(400);
    expect((await readJson(short)).detail).toMatch(/^new_password: .*10 characters/);
    const same = await change({ current_password: ADMIN.password, new_password: ADMIN.password });
    expect(same.status).toBe(400);
    expect((await readJson(same)).detail).toMatch(/^new_password: /);
    const missing = await change({ current_password: ADMIN.password });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ detail: 'new_password: is required', code: 'NW_VALIDATION' });
  });

  it('needs a session: an API key gets 403, nobody gets 401', async () => {
    const withKey = await change({ current_password: ADMIN.password, new_password: newPassword }, { key });
    expect(withKey.status).toBe(403);
    const anonymous = await change({ current_password: ADMIN.password, new_password: newPassword }, {});
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual(NOT_AUTHENTICATED);
  });

  it('changes the password, ends the other sessions and keeps the current one', async () => {
    const res = await change({ current_password: ADMIN.password, new_password: newPassword });
    expect(res.status).toBe(200);
    const body = await readJson(res);
    expect(body.status).toBe('password_changed');
    // `other` plus the session of the successful login in the first test.
    expect(body.sessions_ended).toBe(2);

    expect((await server.request('/api/auth/me', { cookie: current })).status).toBe(200);
    const ended = await server.request('/api/auth/me', { cookie: other });
    expect(ended.status).toBe(401);
    expect(await ended.json()).toEqual(NOT_AUTHENTICATED);
    // API keys are not sessions: they keep working.
    expect((await server.request('/api/auth/me', { key })).status).toBe(200);
  });

  it('the old password no longer logs in; the new one does', async () => {
    const old = await login(server, ADMIN);
    expect(old.status).toBe(401);
    expect(await old.json()).toEqual(INVALID_LOGIN);
    expect((await login(server, { username: ADMIN.username, password: newPassword })).status).toBe(200);
  });

  it('audits the failed and the successful change', async () => {
    const entries = await auditEntries(server, { key }, 'password_changed');
    expect(entries.map((e) => e.success)).toEqual([true, false]);
    expect(entries[0]).toMatchObject({ actor: ADMIN.username, details: { other_sessions_ended: 2 } });
    expect(JSON.stringify(entries)).not.toContain(newPassword);
  });

  itRejectsBadBodies({
    context: () => ({ server, auth: { cookie: current } }),
    method: 'POST',
    path: '/api/auth/password',
    valid: { current_password: newPassword, new_password: 'yet another passphrase' },
    wrongTypes: [
      { body: { current_password: 1234567890, new_password: 'yet another passphrase' }, field: 'current_password' },
      { body: { current_password: newPassword, new_password: null }, field: 'new_password' },
    ],
  });
});

describe.each(testDatabases())('Origin check on cookie-authenticated writes ($kind)', (database) => {
  let server: TestServer;
  let cookie: string;
  let key: string;

  beforeAll(async () => {
    ({ server, cookie, key } = await startServerWithAdmin(database));
  });
  afterAll(() => server?.close());

  const foreign = { Origin: 'http://evil.example' };

  it('refuses a POST, PUT or DELETE with a foreign Origin (403) and changes nothing', async () => {
    const created = await readJson(await server.request('/api/keys', { method: 'POST', cookie, json: { name: 'victim' } }));

    const post = await server.request('/api/keys', { method: 'POST', cookie, json: { name: 'csrf' }, headers: foreign });
    expect(post.status).toBe(403);
    expect((await readJson(post)).detail).toMatch(/Origin/);

    const put = await server.request('/api/config', { method: 'PUT', cookie, json: { scanning: { port_range: '1-10' } }, headers: foreign });
    expect(put.status).toBe(403);

    const del = await server.request(`/api/keys/${created.id}`, { method: 'DELETE', cookie, headers: foreign });
    expect(del.status).toBe(403);

    const logout = await server.request('/api/auth/logout', { method: 'POST', cookie, headers: foreign });
    expect(logout.status).toBe(403);

    const keys = await readJson(await server.request('/api/keys', { cookie }));
    expect(keys.map((k: { name: string }) => k.name)).not.toContain('csrf');
    expect(keys.find((k: { id: number }) => k.id === created.id).status).toBe('active');
    const config = await readJson(await server.request('/api/config', { cookie }));
    expect(config.scanning.port_range).toBe('1-1000');
    expect((await server.request('/api/auth/me', { cookie })).status).toBe(200);
  });

  it('refuses an unparseable Origin and a browser-declared cross-site request without Origin', async () => {
    const nullOrigin = await server.request('/api/keys', { method: 'POST', cookie, json: { name: 'x' }, headers: { Origin: 'null' } });
    expect(nullOrigin.status).toBe(403);
    const crossSite = await server.request('/api/keys', { method: 'POST', cookie, json: { name: 'x' }, headers: { 'Sec-Fetch-Site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    // Same port on another host is another origin.
    const otherHost = await server.request('/api/keys', {
      method: 'POST',
      cookie,
      json: { name: 'x' },
      headers: { Origin: server.baseUrl.replace('127.0.0.1', 'localhost') },
    });
    expect(otherHost.status).toBe(403);
  });

  it('accepts the same origin, and no Origin at all (curl)', async () => {
    const same = await server.request('/api/keys', { method: 'POST', cookie, json: { name: 'same-origin' }, headers: { Origin: server.baseUrl } });
    expect(same.status).toBe(201);
    const none = await server.request('/api/keys', { method: 'POST', cookie, json: { name: 'no-origin' } });
    expect(none.status).toBe(201);
    const sameSite = await server.request('/api/config', {
      method: 'PUT',
      cookie,
      json: { scanning: { port_range: '1-2000' } },
      headers: { Origin: server.baseUrl, 'Sec-Fetch-Site': 'same-origin' },
    });
    expect(sameSite.status).toBe(200);
  });

  it('does not apply to safe methods: a GET with a foreign Origin is answered', async () => {
    const res = await server.request('/api/keys', { cookie, headers: foreign });
    expect(res.status).toBe(200);
  });

  it('does not apply to API keys', async () => {
    const put = await server.request('/api/config', { method: 'PUT', key, json: { scanning: { port_range: '1-3000' } }, headers: foreign });
    expect(put.status).toBe(200);
    const keys = await readJson(await server.request('/api/keys', { key }));
    const target = keys.find((k: { name: string }) => k.name === 'no-origin');
    const del = await server.request(`/api/keys/${target.id}`, { method: 'DELETE', key, headers: foreign });
    expect(del.status).toBe(200);
  });
});
