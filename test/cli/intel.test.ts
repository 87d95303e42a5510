/**
 * `netwarden intel import` and `intel status` (CONTRACT §17, §18) as a user runs them: the real
 * program over a throw-away datastore (both stores), with the real-format KEV and EPSS files of
 * test/fixtures/intel (the EPSS one also gzip-compressed, detected by content, not by name).
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliDatastores, openDatastore, runCli, type CliDatastore } from './helpers.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'intel');

describe.each(cliDatastores())('netwarden intel ($kind)', ({ create }) => {
  let ds: CliDatastore;
  let dir: string;

  beforeAll(async () => {
    ds = await create();
    dir = mkdtempSync(join(tmpdir(), 'netwarden-intel-'));
    copyFileSync(join(FIXTURES, 'known_exploited_vulnerabilities.json'), join(dir, 'kev.json'));
    // A gzip file whose name does not say so: the content decides.
    copyFileSync(join(FIXTURES, 'epss_scores-2026-11-26.csv.gz'), join(dir, 'epss-latest.csv'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await ds?.cleanup();
  });

  it('shows both sources as never imported at first', async () => {
    const status = await runCli(ds, ['intel', 'status']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^SOURCE\s+IMPORTED\s+DATA OF\s+AGE\s+ENTRIES\n/);
    expect(status.stdout).toMatch(/KEV\s+never imported/);
    expect(status.stdout).toMatch(/EPSS\s+never imported/);
  });

  it('imports the KEV catalogue and gzip EPSS scores offline, and shows their age', async () => {
    const result = await runCli(ds, ['intel', 'import', join(dir, 'kev.json'), join(dir, 'epss-latest.csv')]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      'kev.json: KEV catalogue catalog 2026.11.25, 3 known exploited CVEs.\nepss-latest.csv: EPSS scores of 2026-11-26, 5 CVEs.\n',
    );
    const store = await openDatastore(ds);
    try {
      const facts = await store.intel.factsOf(['CVE-2021-41773', 'CVE-2021-42013', 'CVE-2011-2523', 'CVE-2099-0001']);
      expect(facts.kev.get('CVE-2021-41773')).toEqual({ date_added: '2021-11-03', ransomware: true, due_date: '2021-11-17' });
      expect(facts.kev.get('CVE-2021-42013')).toEqual({ date_added: '2021-11-03', ransomware: false, due_date: '2021-11-17' });
      expect(facts.kev.has('CVE-2011-2523')).toBe(false);
      expect(facts.epss.get('CVE-2011-2523')).toEqual({ score: 0.93142, percentile: 0.99794, as_of: '2026-11-26' });
      expect(facts.epss.has('CVE-2099-0001')).toBe(false);
    } finally {
      await store.close();
    }
    const status = await runCli(ds, ['intel', 'status']);
    expect(status.code).toBe(0);
    const age = (day: string) => Math.floor((Date.now() - Date.parse(`${day}T00:00:00Z`)) / 86_400_000);
    expect(status.stdout).toMatch(new RegExp(`KEV\\s+\\S+Z\\s+2026-11-25\\s+${age('2026-11-25')} days?\\s+3\\n`));
    expect(status.stdout).toMatch(new RegExp(`EPSS\\s+\\S+Z\\s+2026-11-26\\s+${age('2026-11-26')} days?\\s+5\\n`));
  });

  it('keeps the scores of CVEs a newer EPSS file leaves out, with their own date', async () => {
    writeFileSync(
      join(dir, 'newer.csv'),
      '#model_version:v2025.03.14,score_date:2026-11-27T12:55:00Z\ncve,epss,percentile\nCVE-2021-41773,0.95000,0.99990\n',
    );
    const result = await runCli(ds, ['intel', 'import', join(dir, 'newer.csv')]);
    expect(result.code, result.stderr).toBe(0);
    const store = await openDatastore(ds);
    try {
      const { epss } = await store.intel.factsOf(['CVE-2021-41773', 'CVE-2011-2523']);
      expect(epss.get('CVE-2021-41773')).toEqual({ score: 0.95, percentile: 0.9999, as_of: '2026-11-27' });
      expect(epss.get('CVE-2011-2523')).toEqual({ score: 0.93142, percentile: 0.99794, as_of: '2026-11-26' });
    } finally {
      await store.close();
    }
  });

  it('refuses a file of another kind or a broken one, naming it, importing nothing', async () => {
    writeFileSync(join(dir, 'notes.txt'), 'hello\n');
    writeFileSync(join(dir, 'bad.csv'), 'cve,epss,percentile\nCVE-2021-41773,high,0.9\n');
    writeFileSync(join(dir, 'bad.json'), '{"vulnerabilities":[{"cveID":"not-a-cve"}]}');
    for (const [file, message] of [
      ['notes.txt', /notes\.txt: neither CISA's KEV catalogue/],
      ['bad.csv', /bad\.csv: line 2: epss and percentile must be numbers from 0 to 1; nothing was imported/],
      ['bad.json', /bad\.json: vulnerabilities\[0\]\.cveID must be a CVE id/],
      ['missing.json', /missing\.json: cannot read it/],
    ] as const) {
      const result = await runCli(ds, ['intel', 'import', join(dir, 'kev.json'), join(dir, file)]);
      expect(result.code, file).not.toBe(0);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).toBe('');
    }
  });
});
