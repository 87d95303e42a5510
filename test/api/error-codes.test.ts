/**
 * The code on the wire (#20 §3) over HTTP against the real server: every error answer is
 * `{"detail","code", ...}` with the status STATUS_OF_CODE gives its code, Retry-After comes from
 * the error, and a 401 stays exactly `{"detail"}`. The scan engine is the gated stand-in
 * (test/helpers/gated-engine.ts), so a scan is running exactly as long as the test needs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATUS_OF_CODE } from '../../src/api/errors.js';
import { LOGIN_LIMITS } from '../../src/auth/throttle.js';
import { ERROR_CODES, type ErrorCode } from '../../src/util/errors.js';
import { FixedEngineSelector } from '../fuzz/inert-services.js';
import { testDatabases } from '../helpers/databases.js';
import { GatedEngine } from '../helpers/gated-engine.js';
import { triggerScan } from '../helpers/scans.js';
import { ADMIN, readJson, startServerWithAdmin, type RequestOptions, type TestServer } from '../helpers/server.js';

describe.each(testDatabases())('error codes on the wire ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let cookie: string;
  let engine: GatedEngine;

  beforeAll(async () => {
    engine = new GatedEngine();
    ({ server, key, cookie } = await startServerWithAdmin(database, { engines: new FixedEngineSelector(engine) }));
  });
  afterAll(() => server?.close());

  /** The answer to `path`, checked to carry `code` with the status STATUS_OF_CODE gives it. */
  async function expectCode(path: string, init: RequestOptions, code: ErrorCode): Promise<{ res: Response; body: any }> {
    const res = await server.request(path, { key, ...init });
    const body = await readJson(res);
    expect({ status: res.status, code: body.code }, `${init.method ?? 'GET'} ${path}`).toEqual({ status: STATUS_OF_CODE[code], code });
    expect(body.detail).toEqual(expect.any(String));
    expect(ERROR_CODES[code]).toBeDefined();
    return { res, body };
  }

  it('answers schema violations 400 NW_VALIDATION, naming the parameter', async () => {
    const { body } = await expectCode('/api/devices?limit=0', {}, 'NW_VALIDATION');
    expect(body.detail).toMatch(/^limit: /);
    const nul = await expectCode('/api/keys', { method: 'POST', json: { name: 'a\u0000b' } }, 'NW_VALIDATION');
    expect(nul.body).toEqual({ detail: 'name: must not contain the NUL character', code: 'NW_VALIDATION' });
  });

  it('answers a body that is not JSON 400 NW_MALFORMED_BODY, and a foreign media type 415', async () => {
    const { body } = await expectCode('/api/config', { method: 'PUT', json: '{"scanning": ' }, 'NW_MALFORMED_BODY');
    expect(Object.keys(body)).toEqual(['detail', 'code']);
    await expectCode(
      '/api/config',
      { method: 'PUT', body: '{}', headers: { 'Content-Type': 'application/json; charset=latin1' } },
      'NW_UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it("answers the scan layer's refusals with their own codes", async () => {
    const invalid = await expectCode('/api/scan/trigger?subnet=300.1.2.0/24', { method: 'POST' }, 'NW_INVALID_TARGET');
    expect(invalid.body.detail).toMatch(/^subnet: /);
    await expectCode('/api/scan/trigger?subnet=192.0.2.0/30', { method: 'POST' }, 'NW_TARGET_NOT_ALLOWED');
  });

  it('answers 404 with the code of what is missing', async () => {
    expect((await expectCode('/api/scans/999999', {}, 'NW_SCAN_NOT_FOUND')).body).toEqual({ detail: 'Scan not found', code: 'NW_SCAN_NOT_FOUND' });
    await expectCode('/api/devices/999999', {}, 'NW_DEVICE_NOT_FOUND');
    await expectCode('/api/schedules/999999', {}, 'NW_SCHEDULE_NOT_FOUND');
    const bulk = await expectCode('/api/devices/bulk', { method: 'POST', json: { device_ids: [999991], is_trusted: true } }, 'NW_DEVICE_NOT_FOUND');
    expect(bulk.body).toEqual({ detail: 'Devices not found: 999991', code: 'NW_DEVICE_NOT_FOUND', missing: [999991] });
    expect((await expectCode('/api/nope', {}, 'NW_ROUTE_NOT_FOUND')).body).toEqual({
      detail: 'Not found: GET /api/nope',
      code: 'NW_ROUTE_NOT_FOUND',
    });
  });

  it('answers a wrong method 405 NW_METHOD_NOT_ALLOWED with Allow', async () => {
    const { res } = await expectCode('/api/config', { method: 'DELETE' }, 'NW_METHOD_NOT_ALLOWED');
    expect(res.headers.get('allow')).toBe('GET, HEAD, PUT');
  });

  it('answers 403 with the reason as a code', async () => {
    await expectCode('/api/auth/password', { method: 'POST', json: { current_password: 'x', new_password: 'y'.repeat(12) } }, 'NW_SESSION_REQUIRED');
    await expectCode(
      '/api/keys',
      { method: 'POST', key: undefined, cookie, headers: { Origin: 'https://elsewhere.example' }, json: { name: 'x' } },
      'NW_CROSS_ORIGIN',
    );
  });

  it('answers 409 NW_SCAN_BUSY naming the running scan, and NW_SETUP_COMPLETE', async () => {
    engine.hold('127.0.5.0/30');
    const running = await triggerScan(server, key, { subnet: '127.0.5.0/30', profile: 'quick' });
    try {
      const { body } = await expectCode('/api/scan/trigger?subnet=127.0.7.0/30', { method: 'POST' }, 'NW_SCAN_BUSY');
      expect(body).toEqual({ detail: 'A scan is already running', code: 'NW_SCAN_BUSY', scan_id: running.scan_id });
    } finally {
      engine.release('127.0.5.0/30');
    }
    const setup = await expectCode(
      '/api/auth/setup',
      { method: 'POST', key: undefined, json: { username: 'other', password: ADMIN.password } },
      'NW_SETUP_COMPLETE',
    );
    expect(setup.body).toEqual({ detail: 'Set-up is already complete; log in instead', code: 'NW_SETUP_COMPLETE' });
  });

  it('keeps every 401 body exactly {"detail"}', async () => {
    const anonymous = await server.request('/api/stats');
    expect({ status: anonymous.status, body: await readJson(anonymous) }).toEqual({ status: 401, body: { detail: 'Not authenticated' } });
    const unknownPath = await server.request('/api/nope');
    expect({ status: unknownPath.status, body: await readJson(unknownPath) }).toEqual({ status: 401, body: { detail: 'Not authenticated' } });
    const wrong = await server.request('/api/auth/login', { method: 'POST', json: { username: 'admin', password: 'wrong password!' } });
    expect({ status: wrong.status, body: await readJson(wrong) }).toEqual({ status: 401, body: { detail: 'Invalid username or password' } });
  });

  it('answers repeated failed logins 429 NW_TOO_MANY_ATTEMPTS with Retry-After from the error', async () => {
    const login = () => server.request('/api/auth/login', { method: 'POST', json: { username: 'throttled', password: 'not the password' } });
    for (let i = 0; i < LOGIN_LIMITS.user.limit; i++) expect((await login()).status).toBe(401);
    const res = await login();
    const body = await readJson(res);
    expect(res.status).toBe(429);
    const wait = Number(res.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(0);
    expect(body).toEqual({ detail: `Too many failed logins; try again in ${wait} seconds`, code: 'NW_TOO_MANY_ATTEMPTS', retry_after: wait });
  });
});
