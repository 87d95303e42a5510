/**
 * `netwarden devices list | search | show` (issue 23 §5): the real program against a throw-away
 * datastore filled by `netwarden import` of a real recorded nmap report (loopback-sv-1.xml:
 * OpenSSH 7.4 and Apache 2.4.49 on 127.0.0.21, vsftpd 2.3.4 and nginx 1.18.0 on 127.0.0.22).
 * Few processes: each costs about a second.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatastore, runCli, sqliteDatastore, type CliDatastore } from './helpers.js';

const REPORT = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'nmap-import', 'loopback-sv-1.xml'), 'utf8');

describe('netwarden devices', () => {
  let datastore: CliDatastore;

  beforeAll(async () => {
    datastore = sqliteDatastore();
    const imported = await runCli(datastore, ['import', '-'], { input: REPORT });
    expect(imported.code, imported.stderr).toBe(0);
    // One device archived: left out of the default list, listed with --status archived.
    const store = await openDatastore(datastore);
    try {
      const { rows } = await store.devices.list({ search: '127.0.0.23', limit: 10, offset: 0 });
      const archived = rows.find((d) => d.ip_address === '127.0.0.23')!;
      await store.devices.updateUserFieldsMany([archived.id], { status: 'archived', label: 'old printer' });
    } finally {
      await store.close();
    }
  }, 60_000);
  afterAll(async () => {
    await datastore?.cleanup();
  });

  it('lists the new and known devices as a table and searches them (archived ones when asked for)', async () => {
    const listed = await runCli(datastore, ['devices', 'list']);
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +IP +NAME +TYPE +STATUS +RISK +PORTS +LAST SEEN$/);
    const ssh = lines.find((l) => l.includes(' 127.0.0.21 '))!;
    expect(ssh).toMatch(/ new +\S+ \d+ +2222,8080 +\d{4}-\d\d-\d\d \d\d:\d\dZ$/);
    expect(listed.stdout).not.toContain('127.0.0.23');

    const found = await runCli(datastore, ['devices', 'search', 'printer', '--status', 'all', '--json']);
    expect(found.code, found.stderr).toBe(0);
    const rows = JSON.parse(found.stdout);
    expect(rows.map((d: any) => [d.ip_address, d.status, d.label])).toEqual([['127.0.0.23', 'archived', 'old printer']]);
  });

  it('shows one device by address with its ports and findings, and by id as JSON', async () => {
    const shown = await runCli(datastore, ['devices', 'show', '127.0.0.22']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^Device +\d+\n/);
    expect(shown.stdout).toMatch(/\nIP address +127\.0\.0\.22\n/);
    expect(shown.stdout).toMatch(/\nStatus +new\n/);
    expect(shown.stdout).toContain('\nOpen ports:\n  2121/tcp   ftp vsftpd 2.3.4\n  8081/tcp   http nginx 1.18.0\n');
    expect(shown.stdout).toMatch(/\nFindings \(\d+\):\n {2}(critical|high|medium|low) /);
    expect(shown.stdout).toMatch(/\nCVEs: \d+/);
    const id = Number(/^Device +(\d+)/.exec(shown.stdout)![1]);

    const json = await runCli(datastore, ['devices', 'show', String(id), '--json']);
    expect(json.code, json.stderr).toBe(0);
    const device = JSON.parse(json.stdout);
    expect(device).toMatchObject({ id, ip_address: '127.0.0.22', status: 'new', presence: { offline_after_scans: null } });
    expect(device.ports.filter((p: any) => p.state === 'open').map((p: any) => p.port)).toEqual([2121, 8081]);
  });

  it('refuses bad arguments with the usage exit code and an unknown device with a failure', async () => {
    const unknown = await runCli(datastore, ['devices', 'show', '127.0.0.99']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no device has the address 127\.0\.0\.99/);
    const bad = await runCli(datastore, ['devices', 'list', '--status', 'lost']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--status must be one of new, known, archived, all/);
  });
});
