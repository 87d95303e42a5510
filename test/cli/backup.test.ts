/**
 * `netwarden backup` and `netwarden restore` as an operator runs them, next to a real
 * `netwarden serve` on the same datastore: realistic data made through the API and the store,
 * backups over HTTP and from the CLI while the service runs, a restore that gives back every row
 * of every table, and the refusals.
 */
import { createHash } from 'node:crypto';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { ADMIN } from '../helpers/server.js';
import { seedInventory } from '../helpers/seed.js';
import { dumpTables, type TableDump } from '../helpers/tables.js';
import {
  BIN,
  baseEnv,
  bodyOf,
  cliDatastores,
  client,
  expectRefused as expectCliRefused,
  runCli,
  sessionCookieOf,
  startServe,
  startServeWithAdmin,
  type CliDatastore,
  type CliResult,
  type ServeProcess,
} from './helpers.js';

/** `netwarden backup -`: standard output as bytes (runCli collects it as text). */
function backupToStdout(ds: CliDatastore): Promise<Buffer> {
  const env = { ...baseEnv(), ...ds.env };
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [BIN, 'backup', '-'],
      { env, encoding: 'buffer', maxBuffer: 64 * 1024 * 1024, timeout: 25_000 },
      (error, stdout, stderr) => (error ? reject(new Error(`backup - failed: ${stderr.toString()}`)) : resolve(stdout)),
    );
  });
}

/** A refusal: the given exit status, one readable line on stderr, nothing on stdout, no stack. */
/** Every refusal of backup and restore is a single line. */
function expectRefused(result: CliResult, code: number, message: RegExp): void {
  expectCliRefused(result, code, message, { oneLine: true });
}

function expectOk(result: CliResult): void {
  expect(result.code, `stderr: ${result.stderr}`).toBe(0);
}

/** The dump with the newest audit entries of the given actions removed from the end, oldest last. */
function withoutTrailingAudit(dump: TableDump, ...actions: string[]): TableDump {
  const audit = [...dump.audit_logs];
  for (const action of actions.reverse()) {
    expect(audit.at(-1), `newest audit entry should be ${action}`).toMatchObject({ action });
    audit.pop();
  }
  return { ...dump, audit_logs: audit };
}

/** Gzip'd lines with the last line's checksum made to match them. */
function resealed(lines: string[]): Buffer {
  const body = lines.slice(0, -1);
  const sha256 = createHash('sha256')
    .update(`${body.join('\n')}\n`)
    .digest('hex');
  return gzipSync(`${[...body, JSON.stringify({ ...JSON.parse(lines.at(-1) as string), sha256 })].join('\n')}\n`);
}

describe.each(cliDatastores())('netwarden backup and restore ($kind)', ({ kind, create }) => {
  let ds: CliDatastore;
  let serve: ServeProcess | null = null;
  let http: ReturnType<typeof client>;
  let dir: string;
  let httpBackup: string;
  let httpState: TableDump;
  let cliBackup: string;
  let cliState: TableDump;

  /** The datastore the CLI and the server use, opened by the test (closed again at once). */
  const withStore = async <T>(fn: (store: Store) => Promise<T>): Promise<T> => {
    const url = ds.env.NETWARDEN_DATABASE_URL ?? join(ds.env.NETWARDEN_DATA_DIR, 'netwarden.db');
    const store = await openStore({ url, poolSize: 1 });
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  };
  const dump = () => withStore(dumpTables);

  beforeAll(async () => {
    ds = await create();
    dir = mkdtempSync(join(tmpdir(), 'netwarden-backups-'));
    let cookie: string;
    ({ serve, http, cookie } = await startServeWithAdmin(ds));
    expect((await http('/api/keys', { method: 'POST', cookie, json: { name: 'grafana', expires_in_days: 90 } })).status).toBe(201);
    expect(
      (await http('/api/config', { method: 'PUT', cookie, json: { network: { subnet: '192.168.50.0/24' }, scanning: { port_range: '1-1024' } } }))
        .status,
    ).toBe(200);
    await withStore((store) => seedInventory(store));
  });
  afterAll(async () => {
    await serve?.stop();
    await ds?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('backs up over HTTP and from the CLI while the service runs', async () => {
    const login = await http('/api/auth/login', { method: 'POST', json: ADMIN });
    const cookie = sessionCookieOf(login);
    httpState = await dump();
    const res = await http('/api/backup', { cookie });
    expect(res.status).toBe(200);
    httpBackup = join(dir, 'from-http.jsonl.gz');
    writeFileSync(httpBackup, Buffer.from(await res.arrayBuffer()));

    cliBackup = join(dir, 'from-cli.jsonl.gz');
    const result = await runCli(ds, ['backup', cliBackup]);
    expectOk(result);
    expect(result.stdout).toMatch(new RegExp(`^Backup of \\S+ written to ${cliBackup}: \\d+ tables, \\d+ rows\\.\\n$`));
    expect(statSync(cliBackup).mode & 0o777).toBe(0o600);
    expect(existsSync(`${cliBackup}.partial`)).toBe(false);
    // What the backup holds: everything up to (not including) its own audit entry.
    cliState = withoutTrailingAudit(await dump(), 'backup_created');

    const audit = await bodyOf(await http('/api/audit-logs?action=backup_created', { cookie }));
    expect(audit.map((e: { actor: string }) => e.actor)).toEqual(['cli', ADMIN.username]);
    expect(audit[0]).toMatchObject({ actor_type: 'system', resource_type: 'backup', success: true, details: { file: cliBackup } });
    const header = JSON.parse(gunzipSync(readFileSync(cliBackup)).toString('utf8').split('\n')[0]);
    expect(header).toMatchObject({ format: 'netwarden-backup', dialect: kind, migrations: expect.arrayContaining(['001_initial']) });
  });

  it('refuses to restore while the service runs, and changes nothing', async () => {
    const before = await dump();
    expectRefused(
      await runCli(ds, ['restore', cliBackup]),
      1,
      /cannot restore now: Netwarden is running on the data directory .*: netwarden serve \(pid \d+, since /,
    );
    expect(await dump()).toEqual(before);
  });

  // PostgreSQL only: there another host's service shares the database but not the data directory.
  if (kind === 'postgres')
    it('on PostgreSQL, also refuses while a service on another host (another data directory) is connected', async () => {
      const elsewhere = mkdtempSync(join(tmpdir(), 'netwarden-elsewhere-'));
      try {
        expectRefused(
          await runCli(ds, ['restore', cliBackup], { env: { NETWARDEN_DATA_DIR: elsewhere } }),
          1,
          /cannot restore now: another Netwarden process is connected to this database schema \(\d+ connections?: .*netwarden.*\); stop every `netwarden serve`/,
        );
      } finally {
        rmSync(elsewhere, { recursive: true, force: true });
      }
    });

  it('restores every table exactly, keeping the data it replaced for undo', async () => {
    await serve?.stop();
    serve = null;
    // Change things: a key and a user from the CLI, devices and configuration in the store.
    expectOk(await runCli(ds, ['keys', 'create', 'after-backup']));
    expectOk(await runCli(ds, ['user', 'create', 'bob', '--password-stdin'], { input: 'correct horse battery\n' }));
    await withStore(async (store) => {
      await store.db.deleteFrom('devices').where('hostname', '=', 'nas.lan').execute();
      await store.db.updateTable('settings').set({ value: '"changed"' }).where('key', '=', 'network').execute();
    });
    const changed = await dump();
    expect(changed).not.toEqual(cliState);

    const result = await runCli(ds, ['restore', cliBackup]);
    expectOk(result);
    expect(result.stdout).toMatch(
      new RegExp(`^Restored ${cliBackup} into \\S+: \\d+ tables, \\d+ rows \\(backup of a ${kind} database made by Netwarden \\S+ at \\S+\\)\\.\\n`),
    );
    const safety = /The previous data was saved to (\S+); restore that file to undo\./.exec(result.stdout)?.[1];
    expect(safety).toMatch(new RegExp(`^${ds.env.NETWARDEN_DATA_DIR}/netwarden-pre-restore-\\d{8}T\\d{6}Z\\.jsonl\\.gz$`));

    const restored = await dump();
    expect(withoutTrailingAudit(restored, 'restore_completed')).toEqual(cliState);
    expect(restored.audit_logs.at(-1)).toMatchObject({ actor: 'cli', actor_type: 'system', resource_type: 'backup', success: 1 });
    expect(JSON.parse(restored.audit_logs.at(-1)?.details as string)).toMatchObject({
      file: cliBackup,
      safety_backup: safety,
      rows: expect.any(Number),
    });

    // Undo: the safety copy brings back the changed data.
    expectOk(await runCli(ds, ['restore', safety as string, '--no-safety-backup']));
    expect(withoutTrailingAudit(await dump(), 'restore_completed')).toEqual(changed);
  });

  it('restores the backup downloaded over HTTP, and the service runs on it', async () => {
    const result = await runCli(ds, ['restore', httpBackup, '--no-safety-backup']);
    expectOk(result);
    expect(result.stdout).not.toMatch(/previous data was saved/);
    // The backup holds the state before the download, then the download's own audit entry was written.
    expect(withoutTrailingAudit(await dump(), 'restore_completed')).toEqual(httpState);

    serve = await startServe(ds);
    http = client(serve.baseUrl);
    const login = await http('/api/auth/login', { method: 'POST', json: ADMIN });
    expect(login.status).toBe(200);
    const cookie = sessionCookieOf(login);
    const devices = await bodyOf(await http('/api/devices', { cookie }));
    expect(devices.map((d: { hostname: string | null }) => d.hostname)).toContain('nas.lan');
    const restoredEntry = await bodyOf(await http('/api/audit-logs?action=restore_completed', { cookie }));
    expect(restoredEntry).toHaveLength(1);
    await serve.stop();
    serve = null;
  });

  it('ignores the marker of a process that has died, and trusts none from another host', async () => {
    const run = join(ds.env.NETWARDEN_DATA_DIR, 'run');
    mkdirSync(run, { recursive: true });
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    const marker = (host: string, pid: number) =>
      JSON.stringify({ pid, hostname: host, command: 'serve', database: 'x', started_at: '2026-01-01T00:00:00.000Z' });
    const stale = join(run, `${hostname()}.${dead}.json`);
    writeFileSync(stale, marker(hostname(), dead));
    const foreign = join(run, `nas-2.4242.json`);
    writeFileSync(foreign, marker('nas-2', 4242));

    expectRefused(
      await runCli(ds, ['restore', cliBackup, '--no-safety-backup']),
      1,
      new RegExp(`netwarden serve on host nas-2 \\(pid 4242, since .*cannot be checked from here, marker ${foreign}\\).*may be deleted: ${foreign}`),
    );
    expect(existsSync(stale)).toBe(false);
    rmSync(foreign);
    expectOk(await runCli(ds, ['restore', httpBackup, '--no-safety-backup']));
  });

  it('restores onto a new machine: an empty data directory or schema', async () => {
    const fresh = await create();
    try {
      const result = await runCli(fresh, ['restore', cliBackup]);
      expectOk(result);
      expect(result.stdout).not.toMatch(/previous data was saved/);
      const url = fresh.env.NETWARDEN_DATABASE_URL ?? join(fresh.env.NETWARDEN_DATA_DIR, 'netwarden.db');
      const store = await openStore({ url, poolSize: 1 });
      try {
        expect(withoutTrailingAudit(await dumpTables(store), 'restore_completed')).toEqual(cliState);
      } finally {
        await store.close();
      }
    } finally {
      await fresh.cleanup();
    }
  });

  it('refuses files that are not complete backups it can restore, and changes nothing', async () => {
    const before = await dump();
    const write = (name: string, bytes: Buffer | string) => {
      const path = join(dir, name);
      writeFileSync(path, bytes);
      return path;
    };
    const lines = gunzipSync(readFileSync(cliBackup)).toString('utf8').trimEnd().split('\n');
    const header = JSON.parse(lines[0]);

    const cases: Array<[string, RegExp]> = [
      [
        write('random.bin', Buffer.from(Array.from({ length: 2048 }, (_, i) => (i * 31 + 7) % 256))),
        /random\.bin is not a Netwarden backup .*; nothing was changed/,
      ],
      [write('devices.csv', 'ip,mac\n192.168.1.1,aa:bb:cc:dd:ee:ff\n'), /devices\.csv is not a Netwarden backup \(its first line is not JSON\)/],
      [write('truncated.jsonl.gz', readFileSync(cliBackup).subarray(0, 400)), /truncated\.jsonl\.gz is damaged or incomplete/],
      [
        write('cut.jsonl.gz', gzipSync(`${lines.slice(0, -3).join('\n')}\n`)),
        /cut\.jsonl\.gz is incomplete: it ends at line \d+, in table \w+ after \d+ rows, without its final line/,
      ],
      [
        write(
          'newer.jsonl.gz',
          gzipSync(
            `${[JSON.stringify({ ...header, version: '7.0.0', migrations: [...header.migrations, '042_agents'] }), ...lines.slice(1)].join('\n')}\n`,
          ),
        ),
        /newer\.jsonl\.gz was made by a newer Netwarden \(7\.0\.0\) whose database has migration.* \(042_agents\): upgrade Netwarden to 7\.0\.0 or later to restore it/,
      ],
      [
        // One value changed after the backup was written (a valid one: only the checksum can tell).
        write('modified.jsonl.gz', gzipSync(`${lines.map((l) => l.replace('"192.168.50.0/24"', '"10.0.0.0/8"')).join('\n')}\n`)),
        /modified\.jsonl\.gz is damaged or was modified: its content does not match the checksum on its last line; nothing was changed/,
      ],
      [
        // A setting that is not JSON, with the checksum made to match: the row check refuses it.
        write(
          'bad-setting.jsonl.gz',
          resealed(lines.map((l) => (l.startsWith('["config",') ? JSON.stringify(['config', '{"network":', JSON.parse(l)[2]]) : l))),
        ),
        /bad-setting\.jsonl\.gz is damaged: line \d+: settings\.value is not valid JSON; nothing was changed/,
      ],
    ];
    expect(lines.join('\n')).toContain('"192.168.50.0/24"');
    expect(lines.some((l) => l.startsWith('["config",'))).toBe(true);
    for (const [path, message] of cases) expectRefused(await runCli(ds, ['restore', path]), 1, message);
    expectRefused(await runCli(ds, ['restore', join(dir, 'missing.jsonl.gz')]), 1, /cannot read .*missing\.jsonl\.gz: no such file/);
    expectRefused(await runCli(ds, ['restore', dir]), 1, /cannot read .*: not a file/);
    const usage = await runCli(ds, ['restore']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/missing required argument 'file'/);

    expect(await dump()).toEqual(before);
    // No safety copy is taken for a file that was refused.
    expect(readdirSync(ds.env.NETWARDEN_DATA_DIR).filter((n) => n.startsWith('netwarden-pre-restore-'))).toHaveLength(1);
    // About ten CLI processes, each opening the datastore: 15–20 s on a quiet machine, past 30 s under CI load.
  }, 90_000);

  it('writes into a directory or to standard output, and refuses a directory that does not exist', async () => {
    const into = mkdtempSync(join(dir, 'nightly-'));
    const result = await runCli(ds, ['backup', into]);
    expectOk(result);
    const [name] = readdirSync(into);
    expect(name).toMatch(/^netwarden-backup-\d{8}T\d{6}Z\.jsonl\.gz$/);
    expect(result.stdout).toContain(join(into, name));

    const piped = await backupToStdout(ds);
    expect(JSON.parse(gunzipSync(piped).toString('utf8').split('\n')[0])).toMatchObject({ format: 'netwarden-backup', dialect: kind });

    expectRefused(await runCli(ds, ['backup', join(dir, 'no', 'such', 'dir', 'x.jsonl.gz')]), 2, /the directory .*no\/such\/dir does not exist/);
  });
});
