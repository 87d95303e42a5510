import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bodyOf,
  cliDatastores,
  oneCliDatastore,
  client,
  expectRefused,
  hasStackTrace,
  runCli,
  sessionCookieOf,
  sqliteDatastore,
  startServe,
  type CliDatastore,
  type ServeProcess,
} from './helpers.js';

const KEY_LINE = /^svc_[A-Za-z0-9_-]{43}\n$/;

describe.each(oneCliDatastore('sqlite'))('netwarden CLI against a running server ($kind)', ({ create }) => {
  let ds: CliDatastore;
  let serve: ServeProcess;
  let http: ReturnType<typeof client>;
  let key: string;
  let keyId: number;
  let adminCookie: string;

  const login = (username: string, password: string) => http('/api/auth/login', { method: 'POST', json: { username, password } });

  beforeAll(async () => {
    ds = await create();
    serve = await startServe(ds);
    http = client(serve.baseUrl);
  });
  afterAll(async () => {
    await serve?.stop();
    await ds?.cleanup();
  });

  it('creates a user (password from stdin) who can then log in over HTTP', async () => {
    expect(await bodyOf(await http('/api/auth/status'))).toEqual({ setup_required: true, setup_code_required: false });
    const result = await runCli(ds, ['user', 'create', 'alice', '--password-stdin'], { input: 'correct horse battery\n' });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Created user 'alice'/);

    expect(await bodyOf(await http('/api/auth/status'))).toEqual({ setup_required: false, setup_code_required: false });
    const res = await login('alice', 'correct horse battery');
    expect(res.status).toBe(200);
    expect(await bodyOf(res)).toEqual({ username: 'alice' });
    adminCookie = sessionCookieOf(res);

    const audit = await bodyOf(await http('/api/audit-logs?action=user_created', { cookie: adminCookie }));
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: 'cli', actor_type: 'system', resource_type: 'user', success: true, details: { username: 'alice' } });
  });

  it('takes the password from NETWARDEN_PASSWORD, keeping spaces and everything but the line end', async () => {
    const result = await runCli(ds, ['user', 'create', 'bob.ops'], { env: { NETWARDEN_PASSWORD: ' spaced out pass ' } });
    expect(result.code, result.stderr).toBe(0);
    expect((await login('bob.ops', ' spaced out pass ')).status).toBe(200);

    const crlf = await runCli(ds, ['user', 'create', 'carol', '--password-stdin'], { input: 'windows-line-end\r\nsecond line ignored\n' });
    expect(crlf.code, crlf.stderr).toBe(0);
    expect((await login('carol', 'windows-line-end')).status).toBe(200);
  });

  it('refuses bad user input with a readable message and a non-zero status', async () => {
    expectRefused(
      await runCli(ds, ['user', 'create', 'alice', '--password-stdin'], { input: 'another good password\n' }),
      1,
      /netwarden: a user named 'alice' already exists/,
    );
    expectRefused(
      await runCli(ds, ['user', 'create', 'no spaces!', '--password-stdin'], { input: 'correct horse battery\n' }),
      2,
      /username: must be 3-64 characters/,
    );
    expectRefused(await runCli(ds, ['user', 'create', 'ab', '--password-stdin'], { input: 'correct horse battery\n' }), 2, /username: must be 3-64/);
    expectRefused(
      await runCli(ds, ['user', 'create', 'dave', '--password-stdin'], { input: 'short\n' }),
      2,
      /password: must be at least 10 characters/,
    );
    expectRefused(
      await runCli(ds, ['user', 'create', 'davedavedave', '--password-stdin'], { input: 'DaveDaveDave\n' }),
      2,
      /password: must not be the username/,
    );
    expectRefused(await runCli(ds, ['user', 'create', 'dave', '--password-stdin'], { input: '' }), 2, /no password on standard input/);
    // Standard input is a pipe, not a terminal, and no variable is set: nothing to prompt with.
    expectRefused(await runCli(ds, ['user', 'create', 'dave']), 2, /no password given: use --password-stdin, set NETWARDEN_PASSWORD/);
    expectRefused(
      await runCli(ds, ['user', 'reset-password', 'nobody', '--password-stdin'], { input: 'correct horse battery\n' }),
      1,
      /no user named 'nobody'/,
    );
    expect((await login('dave', 'short')).status).toBe(401);
  });

  it('creates an API key: only the key on stdout, and the server accepts it', async () => {
    const result = await runCli(ds, ['keys', 'create', 'grafana']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(KEY_LINE);
    expect(result.stderr).toMatch(/Created API key \d+ 'grafana'/);
    expect(result.stderr).toMatch(/shown only this once/);
    key = result.stdout.trim();

    const stats = await http('/api/stats', { key });
    expect(stats.status).toBe(200);
    expect(await bodyOf(stats)).toMatchObject({ total_devices: 0, last_scan: null });
    expect(await bodyOf(await http('/api/auth/me', { key }))).toEqual({ username: null, auth: 'api_key', key_name: 'grafana' });
  });

  it('lists keys as a table and as the JSON of GET /api/keys', async () => {
    const table = await runCli(ds, ['keys', 'list']);
    expect(table.code, table.stderr).toBe(0);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header.split(/\s{2,}/)).toEqual(['ID', 'NAME', 'PREFIX', 'STATUS', 'CREATED', 'LAST USED', 'EXPIRES']);
    const row = rows.find((r) => r.includes('grafana'));
    expect(row).toBeDefined();
    expect(row).toContain(key.slice(0, 12));
    expect(row).toContain('active');
    expect(table.stdout).not.toContain(key);

    const json = await runCli(ds, ['keys', 'list', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const records = JSON.parse(json.stdout);
    const record = records.find((r: { name: string }) => r.name === 'grafana');
    expect(record).toMatchObject({ name: 'grafana', prefix: key.slice(0, 12), status: 'active', expires_at: null, revoked_at: null });
    expect(Object.keys(record).sort()).toEqual(['created_at', 'expires_at', 'id', 'last_used_at', 'name', 'prefix', 'revoked_at', 'status']);
    expect(json.stdout).not.toContain(key);
    keyId = record.id;

    const api = await http('/api/keys', { cookie: adminCookie });
    expect(await bodyOf(api)).toEqual(records);
  });

  it('sets an expiry with --expires-in-days and refuses bad values', async () => {
    const result = await runCli(ds, ['keys', 'create', 'nightly backup', '--expires-in-days', '30']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(KEY_LINE);
    const records = JSON.parse((await runCli(ds, ['keys', 'list', '--json'])).stdout);
    const record = records.find((r: { name: string }) => r.name === 'nightly backup');
    expect(Date.parse(record.expires_at) - Date.parse(record.created_at)).toBe(30 * 86_400_000);
    expect((await http('/api/stats', { key: result.stdout.trim() })).status).toBe(200);

    for (const days of ['0', '3651', '1.5']) {
      expectRefused(
        await runCli(ds, ['keys', 'create', 'bad', '--expires-in-days', days]),
        2,
        /--expires-in-days must be a whole number from 1 to 3650/,
      );
    }
    expectRefused(await runCli(ds, ['keys', 'create', '   ']), 2, /name: must not be blank/);
    expectRefused(await runCli(ds, ['keys', 'create', 'x'.repeat(101)]), 2, /name: must be at most 100 characters/);
    expectRefused(await runCli(ds, ['keys', 'create']), 2, /missing required argument 'name'/);
  });

  it('revokes a key: the running service refuses it within about a second; revoking again changes nothing', async () => {
    const result = await runCli(ds, ['keys', 'revoke', String(keyId)]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`Revoked API key ${keyId} 'grafana'`));

    // The service holds verified keys in memory and re-reads revocations at most once a second.
    await expect.poll(async () => (await http('/api/stats', { key })).status, { timeout: 10_000, interval: 100 }).toBe(401);
    const res = await http('/api/stats', { key });
    expect(res.status).toBe(401);
    expect(await bodyOf(res)).toEqual({ detail: 'Not authenticated' });

    const again = await runCli(ds, ['keys', 'revoke', String(keyId)]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/was already revoked/);

    const records = JSON.parse((await runCli(ds, ['keys', 'list', '--json'])).stdout);
    expect(records.find((r: { id: number }) => r.id === keyId)).toMatchObject({ status: 'revoked' });
    expect((await runCli(ds, ['keys', 'list'])).stdout).toMatch(/grafana\s+svc_\S+\s+revoked/);

    const audit = await bodyOf(await http('/api/audit-logs?actor=cli', { cookie: adminCookie }));
    const forKey = audit.filter(
      (e: { resource_type: string; resource_id: string }) => e.resource_type === 'api_key' && e.resource_id === String(keyId),
    );
    expect(forKey.map((e: { action: string }) => e.action)).toEqual(['api_key_revoked', 'api_key_created']);
    for (const entry of forKey) expect(entry).toMatchObject({ actor: 'cli', actor_type: 'system', success: true, details: { name: 'grafana' } });
  });

  it('refuses unknown and malformed key ids', async () => {
    expectRefused(await runCli(ds, ['keys', 'revoke', '999999']), 1, /no API key with id 999999/);
    for (const id of ['abc', '0', '-1', '1e3']) {
      expectRefused(await runCli(ds, ['keys', 'revoke', id]), 2, /key id must be a positive whole number/);
    }
  });

  it('resets a password and ends every session of that user', async () => {
    const before = await login('alice', 'correct horse battery');
    expect(before.status).toBe(200);
    const cookie = sessionCookieOf(before);
    expect((await http('/api/auth/me', { cookie })).status).toBe(200);

    expectRefused(
      await runCli(ds, ['user', 'reset-password', 'alice', '--password-stdin'], { input: 'too short\n' }),
      2,
      /password: must be at least 10 characters/,
    );
    const result = await runCli(ds, ['user', 'reset-password', 'alice', '--password-stdin'], { input: 'a brand new passphrase\n' });
    expect(result.code, result.stderr).toBe(0);
    // The session from the first test and the one just opened.
    expect(result.stdout).toMatch(/Password of 'alice' reset; 2 sessions ended/);

    const me = await http('/api/auth/me', { cookie });
    expect(me.status).toBe(401);
    expect(await bodyOf(me)).toEqual({ detail: 'Not authenticated' });
    expect((await login('alice', 'correct horse battery')).status).toBe(401);
    const after = await login('alice', 'a brand new passphrase');
    expect(after.status).toBe(200);

    const audit = await bodyOf(await http('/api/audit-logs?action=password_reset', { cookie: sessionCookieOf(after) }));
    expect(audit[0]).toMatchObject({ actor: 'cli', actor_type: 'system', resource_type: 'user', details: { username: 'alice', sessions_ended: 2 } });
  });
});

describe.each(cliDatastores())('netwarden db migrate ($kind)', ({ create }) => {
  let ds: CliDatastore;
  beforeAll(async () => {
    ds = await create();
  });
  afterAll(() => ds?.cleanup());

  it('applies the migrations on a fresh datastore, then reports it up to date', async () => {
    const first = await runCli(ds, ['db', 'migrate']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^Applied migration 001_initial$/m);
    expect(first.stdout).toMatch(/up to date \(\d+ migrations? applied\)/);

    const second = await runCli(ds, ['db', 'migrate']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).not.toMatch(/Applied/);
    expect(second.stdout).toMatch(/is up to date\.\n$/);
    // Never prints a password from the connection string.
    expect(second.stdout).not.toMatch(/:[^/@]*@/);
  });

  it('keys commands work on the datastore db migrate prepared', async () => {
    const created = await runCli(ds, ['keys', 'create', 'first-key']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(KEY_LINE);
    const records = JSON.parse((await runCli(ds, ['keys', 'list', '--json'])).stdout);
    expect(records).toEqual([expect.objectContaining({ name: 'first-key', prefix: created.stdout.slice(0, 12), status: 'active' })]);
  });
});

describe('netwarden CLI usage and configuration errors', () => {
  let ds: CliDatastore;
  beforeAll(() => {
    ds = sqliteDatastore();
  });
  afterAll(() => ds?.cleanup());

  it('prints an empty key list helpfully', async () => {
    const table = await runCli(ds, ['keys', 'list']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/No API keys/);
    expect((await runCli(ds, ['keys', 'list', '--json'])).stdout.trim()).toBe('[]');
  });

  it('exits 2 on usage errors and 0 for help', async () => {
    for (const args of [['bogus'], ['keys'], ['keys', 'frobnicate'], ['user', 'create'], ['keys', 'list', '--yaml']]) {
      const result = await runCli(ds, args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(hasStackTrace(result.stderr)).toBe(false);
    }
    const help = await runCli(ds, ['keys', 'create', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--expires-in-days/);
  });

  it('reports a bad configuration or an unusable data directory without a stack trace', async () => {
    expectRefused(await runCli(ds, ['keys', 'list'], { env: { NETWARDEN_LOG_LEVEL: 'loud' } }), 2, /log level 'loud'/);
    const configFile = join(ds.env.NETWARDEN_DATA_DIR, 'broken.json');
    writeFileSync(configFile, '{"port": 8080, "colour": "blue"}');
    expectRefused(await runCli(ds, ['db', 'migrate'], { env: { NETWARDEN_CONFIG: configFile } }), 2, /unknown key\(s\) colour/);

    // The data directory is a file: the database cannot be created there.
    const notADir = join(ds.env.NETWARDEN_DATA_DIR, 'plain-file');
    writeFileSync(notADir, '');
    for (const args of [
      ['keys', 'list'],
      ['db', 'migrate'],
    ]) {
      expectRefused(await runCli(ds, args, { env: { NETWARDEN_DATA_DIR: notADir } }), 1, /cannot open the database/);
    }
  });

  it('uses the database file named in the config file, as serve does', async () => {
    const configFile = join(ds.env.NETWARDEN_DATA_DIR, 'netwarden.json');
    const dbFile = join(ds.env.NETWARDEN_DATA_DIR, 'elsewhere.db');
    writeFileSync(configFile, JSON.stringify({ database_url: dbFile }));
    const created = await runCli(ds, ['keys', 'create', 'from-config']);
    expect(created.code, created.stderr).toBe(0);
    const listed = JSON.parse((await runCli(ds, ['keys', 'list', '--json'], { env: { NETWARDEN_DATABASE_URL: dbFile } })).stdout);
    expect(listed.map((r: { name: string }) => r.name)).toEqual(['from-config']);
  });
});
