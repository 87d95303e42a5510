import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { ADMIN, readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

interface AuditRecord {
  id: number;
  timestamp: string;
  action: string;
  actor: string | null;
  actor_type: string;
  resource_type: string | null;
  resource_id: string | null;
  details: Record<string, unknown> | null;
  ip_address: string | null;
  user_agent: string | null;
  success: boolean;
}

describe.each(testDatabases())('audit log ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let cookie: string;

  beforeAll(async () => {
    ({ server, key, cookie } = await startServerWithAdmin(database, { keyName: 'auditor' }));
    // A varied history, written through the API as a user would cause it.
    const login = (password: string) => server.request('/api/auth/login', { method: 'POST', json: { username: ADMIN.username, password } });
    await login('wrong password one');
    await login('wrong password two');
    await login(ADMIN.password);
    await server.request('/api/config', { method: 'PUT', key, json: { scanning: { port_range: '1-2000' } } });
    const created = await readJson(await server.request('/api/keys', { method: 'POST', cookie, json: { name: 'short-lived' } }));
    await server.request(`/api/keys/${created.id}`, { method: 'DELETE', cookie });
    await server.request('/api/stats', { key: created.key });
  });
  afterAll(() => server?.close());

  const list = async (query = '') => {
    const res = await server.request(`/api/audit-logs${query}`, { key });
    expect(res.status, await res.clone().text()).toBe(200);
    return { rows: (await res.json()) as AuditRecord[], total: Number(res.headers.get('x-total-count')) };
  };

  it('lists entries newest first with every field', async () => {
    const { rows, total } = await list();
    expect(rows.length).toBe(total);
    expect(rows.map((r) => r.action)).toEqual([
      'api_key_rejected',
      'api_key_revoked',
      'api_key_created',
      'config_updated',
      'login_success',
      'login_failed',
      'login_failed',
      'api_key_created',
      'setup_completed',
    ]);
    const ids = rows.map((r) => r.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const times = rows.map((r) => Date.parse(r.timestamp));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    for (const row of rows) {
      expect(Object.keys(row).sort()).toEqual(
        ['action', 'actor', 'actor_type', 'details', 'id', 'ip_address', 'resource_id', 'resource_type', 'success', 'timestamp', 'user_agent'].sort(),
      );
      expect(row.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(['user', 'api_key', 'system']).toContain(row.actor_type);
      expect(typeof row.success).toBe('boolean');
      expect(row.ip_address).toBe('127.0.0.1');
    }
    expect(rows.find((r) => r.action === 'login_success')).toMatchObject({ actor: 'admin', success: true, resource_type: 'user' });
    expect(rows.find((r) => r.action === 'api_key_rejected')).toMatchObject({ actor: 'short-lived', success: false });
  });

  it('filters by action', async () => {
    const { rows, total } = await list('?action=login_failed');
    expect(total).toBe(2);
    expect(rows).toHaveLength(2);
    for (const row of rows)
      expect(row).toMatchObject({ action: 'login_failed', actor: 'admin', success: false, details: { reason: 'wrong password' } });
    const none = await list('?action=device_updated');
    expect(none).toEqual({ rows: [], total: 0 });
  });

  it('filters by actor, and by action and actor together', async () => {
    const byKey = await list('?actor=auditor');
    expect(byKey.rows.map((r) => r.action)).toEqual(['config_updated']);
    const both = await list('?actor=admin&action=api_key_created');
    expect(both.total).toBe(2);
    expect(both.rows.every((r) => r.actor === 'admin' && r.action === 'api_key_created')).toBe(true);
  });

  it('refuses an unknown action with 400 listing the known ones', async () => {
    const res = await server.request('/api/audit-logs?action=login_fail', { key });
    expect(res.status).toBe(400);
    const { detail } = await readJson(res);
    expect(detail).toMatch(/^action: must be one of .*login_failed/);
  });

  it('pages with limit and offset and reports the total in X-Total-Count', async () => {
    const all = await list();
    const first = await list('?limit=1');
    expect(first.rows).toEqual(all.rows.slice(0, 1));
    expect(first.total).toBe(all.total);
    const middle = await list('?limit=3&offset=2');
    expect(middle.rows).toEqual(all.rows.slice(2, 5));
    expect(middle.total).toBe(all.total);
    const past = await list(`?offset=${all.total + 10}`);
    expect(past).toEqual({ rows: [], total: all.total });
    expect((await list('?limit=1000')).rows).toHaveLength(all.total);
  });

  it('refuses out-of-range or non-integer limit and offset with 400 naming the parameter', async () => {
    const cases: Array<[string, string]> = [
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=abc', 'offset'],
      ['offset=0.5', 'offset'],
    ];
    for (const [query, name] of cases) {
      const res = await server.request(`/api/audit-logs?${query}`, { key });
      expect(res.status, query).toBe(400);
      expect((await readJson(res)).detail).toMatch(new RegExp(`^${name}: `));
    }
  });

  it('refuses an unknown query parameter', async () => {
    const res = await server.request('/api/audit-logs?acton=login_failed', { key });
    expect(res.status).toBe(400);
    expect((await readJson(res)).detail).toMatch(/acton/);
  });

  it('lists every action name, including login_failed and every action seen in the log', async () => {
    const res = await server.request('/api/audit-logs/actions', { key });
    expect(res.status).toBe(200);
    const actions = (await res.json()) as string[];
    expect(actions).toContain('login_failed');
    const seen = new Set((await list('?limit=1000')).rows.map((r) => r.action));
    for (const action of seen) expect(actions).toContain(action);
    // Everything the issue asks to be audited.
    for (const action of [
      'setup_completed',
      'login_success',
      'logout',
      'password_changed',
      'api_key_created',
      'api_key_revoked',
      'api_key_rejected',
      'config_updated',
      'device_updated',
    ]) {
      expect(actions).toContain(action);
    }
    // Every listed name is accepted as a filter.
    for (const action of actions) {
      expect((await server.request(`/api/audit-logs?action=${action}&limit=1`, { key })).status, action).toBe(200);
    }
  });

  it('is readable with a session too, and refused without credentials', async () => {
    expect((await server.request('/api/audit-logs', { cookie })).status).toBe(200);
    for (const path of ['/api/audit-logs', '/api/audit-logs/actions']) {
      const res = await server.request(path);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ detail: 'Not authenticated' });
    }
  });

  it('is read-only: writing to it answers 405', async () => {
    const res = await server.request('/api/audit-logs', { method: 'DELETE', key });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });
});
