import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { startSeededServer } from '../helpers/seed.js';
import { ADMIN, readJson, sessionCookie, type TestServer } from '../helpers/server.js';
import { counts, dumpTables, tableNames } from '../helpers/tables.js';

const FILE_NAME = /^attachment; filename="(netwarden-backup-(\d{8}T\d{6}Z)\.jsonl\.gz)"$/;

describe.each(testDatabases())('GET /api/backup ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let cookie: string;

  beforeAll(async () => {
    ({ server, key, cookie } = await startSeededServer(database));
  });
  afterAll(() => server?.close());

  const auditOf = async (action: string) => readJson(await server.request(`/api/audit-logs?action=${action}`, { cookie }));

  it('needs a session: 401 without credentials, 403 with an API key, and no backup is taken', async () => {
    const anonymous = await server.request('/api/backup');
    expect(anonymous.status).toBe(401);
    expect(await readJson(anonymous)).toEqual({ detail: 'Not authenticated' });

    for (const init of [{ key }, { headers: { Authorization: `Bearer ${key}` } }]) {
      const res = await server.request('/api/backup', init);
      expect(res.status).toBe(403);
      expect(res.headers.get('content-disposition')).toBeNull();
      expect((await readJson(res)).detail).toBe('Downloading a backup needs a logged-in session; an API key cannot do this');
    }
    // Another site cannot make the browser download it with the user's session either.
    for (const headers of [{ Origin: 'http://elsewhere.example' }, { 'Sec-Fetch-Site': 'cross-site' }] as Record<string, string>[]) {
      const res = await server.request('/api/backup', { cookie, headers });
      expect(res.status).toBe(403);
      expect(res.headers.get('content-disposition')).toBeNull();
      expect((await readJson(res)).detail).toMatch(/^Downloading a backup from another site is refused/);
    }
    expect(await auditOf('backup_created')).toEqual([]);
  });

  it('downloads the whole database as a gzip attachment and audits it', async () => {
    // A fresh session: nothing touches it while the backup is taken, so the dump below is what it holds.
    const login = await server.request('/api/auth/login', { method: 'POST', json: ADMIN });
    const session = sessionCookie(login);
    const before = await dumpTables(server.store);

    const res = await server.request('/api/backup', { cookie: session });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/gzip');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const disposition = FILE_NAME.exec(res.headers.get('content-disposition') ?? '');
    expect(disposition, res.headers.get('content-disposition') ?? 'no Content-Disposition').not.toBeNull();
    const [, fileName, stamp] = disposition as RegExpExecArray;

    const lines = gunzipSync(Buffer.from(await res.arrayBuffer()))
      .toString('utf8')
      .trimEnd()
      .split('\n');
    const header = JSON.parse(lines[0]);
    expect(header).toMatchObject({ format: 'netwarden-backup', format_version: 2, dialect: database.kind, version: '0.0.0-test' });
    expect(header.migrations).toContain('001_initial');
    expect(header.created_at.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')).toBe(stamp);
    expect([...header.tables].sort()).toEqual(await tableNames(server.store));
    expect(JSON.parse(lines.at(-1) as string)).toEqual({ end: true, rows: counts(before), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    // The admin's session hash and the devices are in it.
    const rows = lines.filter((l) => l.startsWith('[')).join('\n');
    for (const device of before.devices) expect(rows).toContain(JSON.stringify(device.identity));

    // Written before the download's last bytes.
    const entries = await auditOf('backup_created');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      actor: ADMIN.username,
      actor_type: 'user',
      resource_type: 'backup',
      success: true,
      details: { file: fileName, tables: header.tables.length, rows: lines.filter((l) => l.startsWith('[')).length, migrations: header.migrations },
    });
  });

  it('does not take a backup for a HEAD request', async () => {
    const res = await server.request('/api/backup', { method: 'HEAD', cookie });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expect(await auditOf('backup_created')).toHaveLength(1);
  });

  it('is described in the OpenAPI document', async () => {
    const doc = await readJson(await server.request('/openapi.json'));
    const op = doc.paths['/api/backup'].get;
    expect(op.summary).toMatch(/backup of the whole database/i);
    expect(op.description).toMatch(/netwarden restore/);
    expect(op.description).toMatch(/API key gets 403/);
    expect(op.security).toEqual([{ sessionCookie: [] }]);
    expect(Object.keys(op.responses).sort()).toEqual(['200', '401', '403']);
    expect(op.responses['200'].content).toHaveProperty('application/gzip');
    expect(doc.paths['/api/backup'].head).toBeUndefined();
  });

  it('lists the backup and restore audit actions', async () => {
    const actions = await readJson(await server.request('/api/audit-logs/actions', { cookie }));
    expect(actions).toEqual(expect.arrayContaining(['backup_created', 'restore_completed']));
  });
});
