/**
 * Backup and restore at the store level, on every configured store: round trips (also from one
 * store kind into the other), consistency while the service writes, and refusal of every kind of
 * file that is not a complete backup this version can restore, leaving the data untouched.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { openBackup } from '../../src/store/backup.js';
import { migrateThrough } from '../../src/store/backup-tables.js';
import { openDatabase } from '../../src/store/db.js';
import { BackupFileError, restoreBackup } from '../../src/store/restore.js';
import type { Store } from '../../src/store/index.js';
import { testDatabases, type TestDatabase } from '../helpers/databases.js';
import { SCAN_KEYS, startSeededServer, type Seed } from '../helpers/seed.js';
import { readJson, type TestServer } from '../helpers/server.js';
import { counts, dumpTables, nextIds, tableNames, type TableDump } from '../helpers/tables.js';

type Opened = Awaited<ReturnType<TestDatabase['open']>>;

const AUDIT = { actor: 'test', actorType: 'system' as const };

/** The whole backup file as bytes. */
async function takeBackup(store: Store): Promise<Buffer> {
  const backup = await openBackup(store.handle, { version: '0.0.0-test' });
  const chunks: Buffer[] = [];
  for await (const chunk of backup.stream) chunks.push(chunk as Buffer);
  await backup.finished;
  return Buffer.concat(chunks);
}

function restore(store: Store, file: Buffer) {
  return restoreBackup(store.handle, Readable.from([file]), { audit: AUDIT });
}

/** The decompressed lines of a backup. */
function linesOf(file: Buffer): string[] {
  return gunzipSync(file).toString('utf8').trimEnd().split('\n');
}

function fileOf(lines: string[]): Buffer {
  return gzipSync(`${lines.join('\n')}\n`);
}

/** `fileOf` with the last line's checksum made to match the lines (as a tool that edits backups, or a forger, could). */
function resealed(lines: string[]): Buffer {
  const body = lines.slice(0, -1);
  const trailer = JSON.parse(lines.at(-1) as string);
  const sha256 = createHash('sha256')
    .update(`${body.join('\n')}\n`)
    .digest('hex');
  return fileOf([...body, JSON.stringify({ ...trailer, sha256 })]);
}

/** The line of `table`'s first row whose value in `column` passes `match`, and the column's index. */
function rowOf(lines: string[], table: string, column: string, match: (value: unknown) => boolean = () => true): { line: number; index: number } {
  const section = lines.findIndex((l) => l.startsWith(`{"table":${JSON.stringify(table)},`));
  const index = (JSON.parse(lines[section]) as { columns: string[] }).columns.indexOf(column);
  for (let line = section + 1; lines[line]?.startsWith('['); line++) if (match(JSON.parse(lines[line])[index])) return { line, index };
  throw new Error(`no row of ${table} in the backup`);
}

/** `lines` with `column` of the row at `at` set to `value`. */
function withValue(lines: string[], at: { line: number; index: number }, value: unknown): string[] {
  const row = JSON.parse(lines[at.line]) as unknown[];
  row[at.index] = value;
  const copy = [...lines];
  copy[at.line] = JSON.stringify(row);
  return copy;
}

/** A restore's result without its own audit entry, which is the newest one. */
function withoutRestoreEntry(dump: TableDump): TableDump {
  const audit = dump.audit_logs;
  expect(audit.at(-1)).toMatchObject({ action: 'restore_completed', actor: 'test', actor_type: 'system' });
  return { ...dump, audit_logs: audit.slice(0, -1) };
}

const databases = testDatabases();

describe.each(databases)('backup and restore in the store ($kind)', (database) => {
  let server: TestServer;
  let seed: Seed;
  let file: Buffer;
  let source: TableDump;
  const targets: Opened[] = [];

  const freshTarget = async () => {
    const opened = await database.open();
    targets.push(opened);
    return opened.store;
  };

  beforeAll(async () => {
    let cookie: string;
    ({ server, seed, cookie } = await startSeededServer(database));
    const res = await server.request('/api/config', {
      method: 'PUT',
      cookie,
      json: { network: { subnet: '192.168.50.0/24' }, scanning: { port_range: '1-2000' } },
    });
    expect(res.status, JSON.stringify(await readJson(res.clone()))).toBe(200);
    await server.request('/api/keys', { method: 'POST', cookie, json: { name: 'second key', expires_in_days: 30 } });
    file = await takeBackup(server.store);
    source = await dumpTables(server.store);
  });
  afterAll(async () => {
    await server?.close();
    for (const t of targets) await t.cleanup();
  });

  it('writes a self-describing file: header, one section per table, a final line with the row counts', () => {
    const lines = linesOf(file);
    const header = JSON.parse(lines[0]);
    expect(header).toMatchObject({ format: 'netwarden-backup', format_version: 2, dialect: database.kind, version: '0.0.0-test' });
    expect(header.migrations[0]).toBe('001_initial');
    expect(Date.parse(header.created_at)).not.toBeNaN();
    expect([...header.tables].sort()).toEqual(Object.keys(source).sort());
    // Parents come before the tables that reference them.
    expect(header.tables.indexOf('users')).toBeLessThan(header.tables.indexOf('sessions'));
    expect(header.tables.indexOf('scans')).toBeLessThan(header.tables.indexOf('devices'));
    expect(header.tables.indexOf('devices')).toBeLessThan(header.tables.indexOf('device_snapshots'));

    const sections = lines.filter((l) => l.startsWith('{"table"')).map((l) => JSON.parse(l).table);
    expect(sections).toEqual(header.tables);
    // The checksum covers every line before the last, as written.
    const sha256 = createHash('sha256')
      .update(`${lines.slice(0, -1).join('\n')}\n`)
      .digest('hex');
    expect(JSON.parse(lines.at(-1) as string)).toEqual({ end: true, rows: counts(source), sha256 });
    expect(lines.filter((l) => l.startsWith('[')).length).toBe(Object.values(counts(source)).reduce((a, b) => a + b, 0));
  });

  it('restores into an empty database exactly what was backed up, id counters included', async () => {
    const target = await freshTarget();
    const summary = await restore(target, file);
    expect(summary.rows).toEqual(counts(source));
    expect(summary.upgradedWith).toEqual([]);
    expect(withoutRestoreEntry(await dumpTables(target))).toEqual(source);

    const withIds = ['users', 'api_keys', 'scans', 'devices', 'changes'];
    expect(await nextIds(target, withIds)).toEqual(await nextIds(server.store, withIds));
    // The store works on the restored data, and a new row gets the next id.
    const scan = await target.scans.create({ status: 'queued', profile: 'quick', subnet: '10.0.0.0/24', scan_type: 'network' });
    expect(scan.id).toBe(Math.max(...Object.values(seed.scans).map((s) => s.id)) + 1);
  });

  it('replaces everything in a database that holds other data', async () => {
    const target = await freshTarget();
    await target.scans.create({ status: 'completed', profile: 'quick', subnet: '10.9.9.0/24', scan_type: 'network' });
    await target.users.create('someone-else', 'not-a-real-hash');
    await target.settings.get();
    await restore(target, file);
    expect(withoutRestoreEntry(await dumpTables(target))).toEqual(source);
  });

  it('keeps ids from being reused: counters past the highest remaining id survive', async () => {
    // Delete the newest scan; its id must not be handed out again after a restore.
    const store = await freshTarget();
    await restore(store, file);
    const newest = seed.scans[SCAN_KEYS[SCAN_KEYS.length - 1]].id;
    await store.db.deleteFrom('scans').where('id', '=', newest).execute();
    const second = await takeBackup(store);
    const target = await freshTarget();
    await restore(target, second);
    const scan = await target.scans.create({ status: 'queued', profile: 'quick', subnet: '10.0.0.0/24', scan_type: 'network' });
    expect(scan.id).toBe(newest + 1);
  });

  it('takes a consistent snapshot while the service writes', async () => {
    const store = await freshTarget();
    await restore(store, file);
    const filler = Array.from({ length: 4000 }, (_, i) => ({
      timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      action: 'login_success',
      actor: `user-${i}`,
      actor_type: 'user',
      details: JSON.stringify({ note: `filler entry ${i} ${'x'.repeat(i % 97)}` }),
      ip_address: `10.${i % 250}.${i % 200}.${i % 100}`,
      success: 1,
    }));
    for (let i = 0; i < filler.length; i += 500)
      await store.db
        .insertInto('audit_logs')
        .values(filler.slice(i, i + 500))
        .execute();
    // Each transaction adds a scan and an audit entry naming it: tables read at different moments
    // would hold one without the other.
    let stop = false;
    let committed = 0;
    const writer = (async () => {
      for (let pair = 1; !stop; pair++) {
        await store.db.transaction().execute(async (trx) => {
          await trx
            .insertInto('scans')
            .values({
              status: 'queued',
              profile: 'quick',
              subnet: '10.77.0.0/24',
              scan_type: 'network',
              created_at: new Date().toISOString(),
              triggered_by: `writer-${pair}`,
            })
            .execute();
          await trx
            .insertInto('audit_logs')
            .values({
              timestamp: new Date().toISOString(),
              action: 'scan_started',
              actor: 'writer',
              actor_type: 'system',
              details: JSON.stringify({ pair }),
              success: 1,
            })
            .execute();
        });
        committed = pair;
        // SQLite answers synchronously: without this the loop would never let the backup run.
        await new Promise((r) => setImmediate(r));
      }
    })();
    const commits = async (n: number) => {
      const goal = committed + n;
      while (committed < goal) await new Promise((r) => setImmediate(r));
    };
    await commits(3);
    const before = committed;
    // The backup stalls on its first chunk (the consumer does not read on) while more pairs are
    // committed; the audit log is large enough that it is still being read when that happens.
    const backup = await openBackup(store.handle, { version: '0.0.0-test' });
    const chunks: Buffer[] = [];
    for await (const chunk of backup.stream) {
      if (!chunks.length) await commits(5);
      chunks.push(chunk as Buffer);
    }
    await backup.finished;
    const after = committed;
    stop = true;
    await writer;
    const during = Buffer.concat(chunks);

    const target = await freshTarget();
    await restore(target, during);
    const audited = (await target.audit.list({ actor: 'writer', limit: 1000, offset: 0 })).rows
      .map((r) => (r.details as { pair: number }).pair)
      .sort((a, b) => a - b);
    const scanned = (await target.db.selectFrom('scans').select('triggered_by').where('triggered_by', 'like', 'writer-%').execute())
      .map((r) => Number((r.triggered_by as string).slice('writer-'.length)))
      .sort((a, b) => a - b);
    expect(scanned).toEqual(audited);
    expect(audited).toEqual(Array.from({ length: audited.length }, (_, i) => i + 1));
    expect(audited.length).toBeGreaterThanOrEqual(before);
    expect(audited.length).toBeLessThanOrEqual(after);
  });

  it('restores a backup of format 1 (no checksum), checking every row, and says it has no checksum', async () => {
    const lines = linesOf(file);
    const { sha256: _sha256, ...trailer } = JSON.parse(lines.at(-1) as string);
    const header = JSON.parse(lines[0]);
    const old = fileOf([JSON.stringify({ ...header, format_version: 1 }), ...lines.slice(1, -1), JSON.stringify(trailer)]);
    const target = await freshTarget();
    const summary = await restore(target, old);
    expect(summary.checksum).toBe('absent');
    expect(withoutRestoreEntry(await dumpTables(target))).toEqual(source);
    expect((await restore(target, file)).checksum).toBe('verified');
  });

  it('restores a backup with one 16 MB row whole', { timeout: 120_000 }, async () => {
    // A row far larger than any read chunk: its line is assembled from many pieces. How the time
    // grows with the row's size (linearly: an earlier reader searched the whole line again per
    // chunk, about 19 s for 20 MB) is measured by bench/restore-bench.mjs, not timed here.
    const big = await freshTarget();
    const text = 'x'.repeat(16 * 1024 * 1024);
    await big.audit.write({ action: 'backup_created', actor: 'big', actorType: 'system', success: true, details: { blob: text } });
    const bigFile = await takeBackup(big);
    const target = await freshTarget();
    await restore(target, bigFile);
    const { rows } = await target.audit.list({ action: 'backup_created', limit: 10, offset: 0 });
    expect(rows.find((r) => r.actor === 'big')?.details?.blob === text).toBe(true);
  });

  describe('refuses a file it cannot restore, and changes nothing', () => {
    let target: Store;
    let before: TableDump;
    beforeAll(async () => {
      target = await freshTarget();
      await restore(target, file);
      before = await dumpTables(target);
    });

    const refused = async (bytes: Buffer, message: RegExp) => {
      const error = await restore(target, bytes).then(
        () => null,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(BackupFileError);
      expect((error as Error).message).toMatch(message);
      expect(await dumpTables(target)).toEqual(before);
    };

    it('random bytes, text, other JSON, an empty file', async () => {
      const random = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256));
      await refused(random, /is not a Netwarden backup/);
      await refused(Buffer.from('name,ip\nrouter,192.168.1.1\n'), /is not a Netwarden backup \(its first line is not JSON\)/);
      await refused(gzipSync('{"hello":"world"}\n'), /is not a Netwarden backup \(its first line does not say "format":"netwarden-backup"\)/);
      await refused(Buffer.from([0x1f, 0x8b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), /not a Netwarden backup|damaged/);
      await refused(Buffer.alloc(0), /is empty/);
    });

    it('a truncated file: cut inside the compressed data, or at a line', async () => {
      await refused(file.subarray(0, Math.floor(file.length / 2)), /is damaged or incomplete/);
      const lines = linesOf(file);
      await refused(fileOf(lines.slice(0, -1)), /is incomplete: it ends at line \d+, in table \w+ after \d+ rows, without its final line/);
      await refused(fileOf(lines.slice(0, Math.floor(lines.length / 2))), /is incomplete/);
      // A row dropped from the middle: the final line's counts give it away.
      const firstRow = lines.findIndex((l) => l.startsWith('['));
      await refused(
        fileOf([...lines.slice(0, firstRow), ...lines.slice(firstRow + 1)]),
        /is incomplete: table \w+ should have \d+ rows but \d+ were found/,
      );
    });

    it('a backup made by a newer schema or format, naming what to upgrade to', async () => {
      const lines = linesOf(file);
      const header = JSON.parse(lines[0]);
      const newer = { ...header, version: '9.9.9', migrations: [...header.migrations, '999_agents'] };
      await refused(
        fileOf([JSON.stringify(newer), ...lines.slice(1)]),
        /was made by a newer Netwarden \(9\.9\.9\) whose database has migration.*999_agents.*upgrade Netwarden to 9\.9\.9 or later/,
      );
      const format3 = { ...header, format_version: 3, version: '9.9.9' };
      await refused(
        fileOf([JSON.stringify(format3), ...lines.slice(1)]),
        /uses backup format version 3 \(written by Netwarden 9\.9\.9\); this Netwarden reads version 2/,
      );
    });

    it('damaged content: a wrong row, an unknown table or column, a broken header', async () => {
      const lines = linesOf(file);
      const firstRow = lines.findIndex((l) => l.startsWith('['));
      const shortRow = [...lines];
      shortRow[firstRow] = '[1]';
      await refused(fileOf(shortRow), new RegExp(`line ${firstRow + 1} has 1 values for the \\d+ columns of \\w+`));
      const notJson = [...lines];
      notJson[firstRow] = '[1, "unterminated';
      await refused(fileOf(notJson), new RegExp(`line ${firstRow + 1} is not valid JSON`));

      const section = lines.findIndex((l) => l.startsWith('{"table"'));
      const table = JSON.parse(lines[section]);
      const renamed = [...lines];
      renamed[section] = JSON.stringify({ ...table, columns: [...table.columns.slice(0, -1), 'colour'] });
      await refused(fileOf(renamed), /do not match its schema; unknown: colour; missing: /);
      const unknownTable = [...lines];
      unknownTable[section] = JSON.stringify({ ...table, table: 'wishes' });
      await refused(fileOf(unknownTable), /starts table wishes, which its migrations do not create/);

      const header = JSON.parse(lines[0]);
      await refused(
        fileOf([JSON.stringify({ ...header, tables: header.tables.slice(1) }), ...lines.slice(1)]),
        /has a damaged header: it lists the tables/,
      );
      await refused(fileOf([JSON.stringify({ ...header, dialect: 'oracle' }), ...lines.slice(1)]), /has a damaged header \(\/dialect/);
    });

    it('a row whose content does not fit its column, even with a matching checksum', async () => {
      const lines = linesOf(file);
      const setting = rowOf(lines, 'settings', 'value');
      const where = `line ${setting.line + 1}`;
      await refused(
        resealed(withValue(lines, setting, '{"scanning": {"port_range": "1-1000"')),
        new RegExp(`is damaged: ${where}: settings.value is not valid JSON`),
      );
      await refused(resealed(withValue(lines, setting, null)), new RegExp(`${where}: settings.value is null, but the column requires a value`));
      await refused(resealed(withValue(lines, setting, 42)), new RegExp(`${where}: settings.value must be text, not the number 42`));
      // Other JSON columns, and integers: SQLite would store the text without a word.
      await refused(resealed(withValue(lines, rowOf(lines, 'ports', 'cpe'), 'cpe:/a:openbsd:openssh')), /ports.cpe is not valid JSON/);
      await refused(
        resealed(withValue(lines, rowOf(lines, 'devices', 'risk_score'), 'high')),
        /devices.risk_score must be a whole number, not the text "high"/,
      );
      await refused(
        resealed(withValue(lines, rowOf(lines, 'devices', 'risk_score'), 2.5)),
        /devices.risk_score must be a whole number, not the number 2.5/,
      );
      await refused(resealed(withValue(lines, rowOf(lines, 'devices', 'ip_address'), 7)), /devices.ip_address must be text/);
    });

    it('a backup changed after it was written: its checksum does not match', async () => {
      const lines = linesOf(file);
      // A value that is perfectly valid, only not what was backed up.
      const device = rowOf(lines, 'devices', 'hostname', (v) => typeof v === 'string');
      await refused(
        fileOf(withValue(lines, device, 'evil.example')),
        /is damaged or was modified: its content does not match the checksum on its last line/,
      );
      // A line added, or the checksum itself changed.
      const added = [...lines];
      added.splice(device.line + 1, 0, lines[device.line]);
      await refused(fileOf(added), /is damaged: rows of devices up to line \d+ break its constraints/);
      const trailer = JSON.parse(lines.at(-1) as string);
      await refused(fileOf([...lines.slice(0, -1), JSON.stringify({ ...trailer, sha256: '0'.repeat(64) })]), /does not match the checksum/);
      // Format 2 always has one: taking it away is damage too.
      await refused(
        fileOf([...lines.slice(0, -1), JSON.stringify({ end: true, rows: trailer.rows })]),
        /has no checksum, which backup format 2 always has/,
      );
    });
  });
});

// Needs both stores (TEST_DATABASE_URL set).
if (databases.length === 2)
  describe('backup from one store kind restored into the other', () => {
    const opened: Opened[] = [];
    afterAll(async () => {
      for (const o of opened) await o.cleanup();
    });

    it.each([
      [databases[0], databases[1]],
      [databases[1], databases[0]],
    ])('$kind → other', async (from, to) => {
      const { server, cookie } = await startSeededServer(from);
      try {
        await server.request('/api/keys', { method: 'POST', cookie, json: { name: 'migration key' } });
        const file = await takeBackup(server.store);
        const source = await dumpTables(server.store);
        const target = await to.open();
        opened.push(target);
        const summary = await restore(target.store, file);
        expect(summary.header.dialect).toBe(from.kind);
        expect(await tableNames(target.store)).toEqual(Object.keys(source).sort());
        expect(withoutRestoreEntry(await dumpTables(target.store))).toEqual(source);
        // The service runs on the migrated data: the admin's key still authenticates.
        expect(await target.store.apiKeys.list()).toHaveLength(2);
      } finally {
        await server.close();
      }
    });
  });

describe.each(databases)('a backup made by an older schema ($kind)', (database) => {
  it('restores into the current schema and applies the newer migrations', async () => {
    // A database as the first release left it: only 001_initial applied.
    const dir = mkdtempSync(join(tmpdir(), 'netwarden-old-schema-'));
    const old = openDatabase({ url: join(dir, 'old.db') });
    const target = await database.open();
    try {
      await migrateThrough(old.db as Kysely<unknown>, 'sqlite', ['001_initial']);
      await old.db
        .insertInto('scans')
        .values({
          status: 'completed',
          profile: 'quick',
          subnet: '192.168.1.0/24',
          scan_type: 'network',
          created_at: '2026-01-01T00:00:00.000Z',
          devices_found: 3,
        })
        .execute();
      const backup = await openBackup(old, { version: '0.1.0' });
      const chunks: Buffer[] = [];
      for await (const chunk of backup.stream) chunks.push(chunk as Buffer);
      await backup.finished;
      const file = Buffer.concat(chunks);
      expect(JSON.parse(linesOf(file)[0]).migrations).toEqual(['001_initial']);

      await restore(target.store, file);
      const scans = await target.store.db.selectFrom('scans').selectAll().execute();
      expect(scans).toHaveLength(1);
      // The newer migration's columns exist and start empty; its tables exist too.
      expect(scans[0]).toMatchObject({ subnet: '192.168.1.0/24', devices_found: 3, active_slot: null, owner_id: null });
      expect(await target.store.db.selectFrom('login_failures').selectAll().execute()).toEqual([]);
    } finally {
      await old.close();
      await target.cleanup();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
