/**
 * First-run set-up is not claimable from the network (issue 19 §4): from another machine
 * `POST /api/auth/setup` needs the one-time code the service printed at start-up; from this machine
 * itself it does not. Requests from another machine are made two ways: through the real socket
 * with a proxy's X-Forwarded-For (a reverse proxy on this host forwards from elsewhere), and through
 * Fastify's inject with a LAN peer address (the tests cannot open a socket from a non-loopback
 * address without sending traffic off this machine).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliDatastore, type ServeProcess, cliDatastores, client, startServe } from '../cli/helpers.js';
import { testDatabases } from '../helpers/databases.js';
import { waitFor } from '../helpers/wait.js';
import { ADMIN, readJson, startTestServer, type TestServer } from '../helpers/server.js';

describe.each(testDatabases())('the one-time set-up code ($kind)', (database) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(database);
  });
  afterAll(() => server?.close());

  const fromLan = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    server.app.inject({ method, url, payload: payload as Record<string, unknown>, remoteAddress: '192.168.1.50' });

  it('is required from another machine: without it or with another one, 403 saying where to find it, and no user', async () => {
    const code = server.app.services.setupCode.code!;
    expect(code).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}$/);

    // The status tells a client on the network that it must ask for the code.
    expect((await fromLan('GET', '/api/auth/status')).json()).toEqual({ setup_required: true, setup_code_required: true });
    // ... and one on this machine that it need not.
    expect(await readJson(await server.request('/api/auth/status'))).toEqual({ setup_required: true, setup_code_required: false });

    const missing = await fromLan('POST', '/api/auth/setup', ADMIN);
    expect(missing.statusCode).toBe(403);
    expect(missing.json().detail).toMatch(/^setup_code: required when setting up from another machine; .*printed it on its console and in its log/);
    const wrong = await fromLan('POST', '/api/auth/setup', { ...ADMIN, setup_code: 'AAAA-BBBB-CCCC' });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json().detail).toMatch(/^setup_code: does not match/);

    // A reverse proxy on this host forwards from elsewhere: loopback socket, but not a local request.
    const proxied = await server.request('/api/auth/setup', { method: 'POST', json: ADMIN, headers: { 'X-Forwarded-For': '203.0.113.9' } });
    expect(proxied.status).toBe(403);
    expect((await readJson(proxied)).detail).toMatch(/^setup_code: required/);
    const forwarded = await server.request('/api/auth/setup', { method: 'POST', json: ADMIN, headers: { Forwarded: 'for=203.0.113.9' } });
    expect(forwarded.status).toBe(403);

    expect(await readJson(await server.request('/api/auth/status'))).toMatchObject({ setup_required: true });
    expect(await server.store.users.count()).toBe(0);

    // With the code (case and dashes do not matter): 201, and the session works.
    const ok = await fromLan('POST', '/api/auth/setup', { ...ADMIN, setup_code: code.toLowerCase().replace(/-/g, ' ') });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json()).toEqual({ username: ADMIN.username });
    const cookie = ok.cookies.find((c) => c.name === 'netwarden_session')!;
    const me = await server.request('/api/auth/me', { cookie: `netwarden_session=${cookie.value}` });
    expect(me.status).toBe(200);

    // One time: afterwards set-up is complete for everyone, code or not.
    expect((await fromLan('POST', '/api/auth/setup', { ...ADMIN, setup_code: code })).statusCode).toBe(409);
    expect((await fromLan('GET', '/api/auth/status')).json()).toEqual({ setup_required: false, setup_code_required: false });
  });

  it('is documented in the OpenAPI document', async () => {
    const doc = await readJson(await server.request('/openapi.json'));
    const body = doc.paths['/api/auth/setup'].post.requestBody.content['application/json'].schema;
    expect(body.properties.setup_code).toBeDefined();
    expect(doc.paths['/api/auth/setup'].post.description).toContain('setup_code');
    expect(doc.paths['/api/auth/status'].get.responses['200'].content['application/json'].schema.properties.setup_code_required).toBeDefined();
  });
});

describe.each(testDatabases())('set-up from this machine ($kind)', (database) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(database);
  });
  afterAll(() => server?.close());

  it('needs no code from a loopback peer', async () => {
    const res = await server.request('/api/auth/setup', { method: 'POST', json: ADMIN });
    expect(res.status, await res.clone().text()).toBe(201);
  });
});

describe.each(cliDatastores())('netwarden serve prints the code ($kind)', ({ create }) => {
  let ds: CliDatastore;
  let serve: ServeProcess | undefined;
  beforeAll(async () => {
    ds = await create();
  });
  afterAll(async () => {
    await serve?.stop();
    await ds?.cleanup();
  });

  it('on the console at start-up while no user exists, and that code sets the service up', async () => {
    serve = await startServe(ds);
    await waitFor(
      'the set-up code on standard error',
      async () => /First-run set-up code: [A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}/.test(serve!.stderr()),
      10_000,
    );
    const code = /First-run set-up code: (\S+)/.exec(serve.stderr())![1];
    // From this machine it is not needed; a forwarded request needs it, and this one is accepted.
    const forwarded = (json: unknown) =>
      fetch(`${serve!.baseUrl}/api/auth/setup`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': '198.51.100.7' },
        body: JSON.stringify(json),
      });
    expect((await forwarded(ADMIN)).status).toBe(403);
    expect((await forwarded({ ...ADMIN, setup_code: code })).status).toBe(201);
    expect((await client(serve.baseUrl)('/api/auth/status')).status).toBe(200);
  });
});
