/**
 * A malformed NETWARDEN_DATABASE_URL (or database_url in the config file) is reported as one
 * line naming the setting, by `serve` and by the datastore commands alike, without a stack trace
 * and without repeating the password.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hasStackTrace, runCli, sqliteDatastore, type CliDatastore, type CliResult } from './helpers.js';

const BAD_URL = 'postgres://user:pa ss@host:notaport/db';

function expectConfigError(result: CliResult, setting: RegExp): void {
  expect(result.code, `stderr: ${result.stderr}`).toBe(2);
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^netwarden: /);
  expect(lines[0]).toMatch(setting);
  expect(lines[0]).toMatch(/not a valid PostgreSQL URL/);
  expect(hasStackTrace(result.stderr)).toBe(false);
  expect(result.stderr + result.stdout).not.toContain('pa ss');
}

describe('a malformed PostgreSQL URL', () => {
  let ds: CliDatastore;

  beforeEach(() => {
    ds = sqliteDatastore();
  });
  afterEach(() => ds.cleanup());

  it('stops serve with one line naming NETWARDEN_DATABASE_URL, the space and the port', async () => {
    const result = await runCli(ds, ['serve'], { env: { NETWARDEN_DATABASE_URL: BAD_URL, NETWARDEN_PORT: '0', NETWARDEN_HOST: '127.0.0.1' } });
    expectConfigError(result, /NETWARDEN_DATABASE_URL/);
    expect(result.stderr).toMatch(/space/);
    expect(result.stderr).toMatch(/port 'notaport' is not a number/);
    expect(result.stdout).toBe('');
  });

  it('stops the datastore commands the same way', async () => {
    expectConfigError(await runCli(ds, ['keys', 'list'], { env: { NETWARDEN_DATABASE_URL: BAD_URL } }), /NETWARDEN_DATABASE_URL/);
    expectConfigError(
      await runCli(ds, ['user', 'create', 'someone', '--password-stdin'], {
        input: 'a long enough password\n',
        env: { NETWARDEN_DATABASE_URL: 'postgres://u:p%zz@127.0.0.1/db' },
      }),
      /percent-encoding/,
    );
  });

  it('names the config file setting when the URL comes from there', async () => {
    const file = join(ds.env.NETWARDEN_DATA_DIR, 'netwarden.json');
    writeFileSync(file, JSON.stringify({ database_url: BAD_URL }));
    expectConfigError(
      await runCli(ds, ['serve'], { env: { NETWARDEN_PORT: '0', NETWARDEN_HOST: '127.0.0.1' } }),
      /config file .*netwarden\.json: "database_url"/,
    );
  });
});
