/**
 * `netwarden compare A B` (issue 22 §1): the real program against a throw-away datastore, after
 * two nmap reports imported with `netwarden import`; the same comparison as the API's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIRST, MAC, SECOND } from '../helpers/compare-reports.js';
import { runCli, sqliteDatastore, type CliDatastore } from './helpers.js';

describe('netwarden compare', () => {
  let datastore: CliDatastore;

  beforeAll(async () => {
    datastore = sqliteDatastore();
    for (const report of [FIRST, SECOND]) {
      const result = await runCli(datastore, ['import', '-'], { input: report });
      expect(result.code, result.stderr).toBe(0);
    }
  }, 60_000);
  afterAll(async () => {
    await datastore?.cleanup();
  });

  it('prints the summary and the devices that differ', async () => {
    const result = await runCli(datastore, ['compare', '2', '1']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(
      'scan 2 (10.66.0.0/28) compared with scan 1 (10.66.0.0/28): 1 added, 1 removed, 1 moved, 2 changed; ' +
        '2 port(s) opened, 1 closed, 1 service(s) changed; risk changed on 1 device(s)',
    );
    expect(lines.slice(1, 4)).toEqual(['  added     10.66.0.7', '  removed   10.66.0.4', '  moved     10.66.0.5 -> 10.66.0.9: +80/tcp']);
    expect(lines[4]).toBe('  changed   10.66.0.2: 22/tcp: ssh OpenSSH 8.0 -> ssh OpenSSH 8.2');
    expect(lines[5]).toMatch(/^ {2}changed {3}10\.66\.0\.3: \+22\/tcp, -80\/tcp/);
  });

  it('prints the ndiff-style text and the JSON', async () => {
    const text = await runCli(datastore, ['compare', '2', '1', '--format', 'text']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`-10.66.0.5 (${MAC(4)}):\n+10.66.0.9 (${MAC(4)}):`);
    const json = await runCli(datastore, ['compare', '2', '1', '--format', 'json', '--all']);
    expect(json.code).toBe(0);
    const body = JSON.parse(json.stdout);
    expect(body.summary.devices_moved).toBe(1);
    expect(body.devices).toHaveLength(5);
  });

  it('refuses what cannot be compared, with the exit code of a usage error or a failure', async () => {
    const same = await runCli(datastore, ['compare', '2', '2']);
    expect(same.code).toBe(2);
    expect(same.stderr).toMatch(/^netwarden: previous_id: a scan cannot be compared with itself/);
    const unknown = await runCli(datastore, ['compare', '2', '99']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/Scan not found/);
    const bad = await runCli(datastore, ['compare', 'x', '1']);
    expect(bad.code).toBe(2);
    expect((await runCli(datastore, ['compare', '2', '1', '--format', 'xml'])).code).toBe(2);
  });
});
