/**
 * The environment's one description (config/environment.ts): the variables the code reads, their
 * defaults as the deployment settings apply them, and the table in docs/configuration.md.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIGURATION_DOC, withEnvironmentTable } from '../../scripts/generate-env-table.mjs';
import { ENVIRONMENT, environmentTable, loadServerConfig, readEnvironment } from '../../src/config/environment.js';

const SRC = join(import.meta.dirname, '..', '..', 'src');

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (/\.tsx?$/.test(entry.name)) yield path;
  }
}

describe('the environment', () => {
  it('docs/configuration.md lists every variable as ENVIRONMENT describes it (node scripts/generate-env-table.mjs)', () => {
    const doc = readFileSync(CONFIGURATION_DOC, 'utf8');
    expect(doc).toBe(withEnvironmentTable(doc, environmentTable()));
  });

  it('describes every NETWARDEN_ variable the code names', () => {
    const named = new Set<string>();
    for (const file of sources(SRC)) for (const m of readFileSync(file, 'utf8').matchAll(/\bNETWARDEN_[A-Z_]*[A-Z]\b/g)) named.add(m[0]);
    const described = Object.keys(ENVIRONMENT.properties);
    expect([...named].filter((name) => !described.includes(name)).sort()).toEqual([]);
  });

  it('reads only the variables it describes', () => {
    expect(readEnvironment({ NETWARDEN_PORT: '9000', HOME: '/root', NETWARDEN_UNKNOWN: 'x' })).toEqual({ NETWARDEN_PORT: '9000' });
  });

  it('applies the defaults of the description when neither a variable nor the config file sets a value', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'netwarden-env-'));
    try {
      const config = loadServerConfig({}, cwd);
      expect(config).toMatchObject({
        port: 8080,
        host: '0.0.0.0',
        dataDir: join(cwd, 'data'),
        databaseUrl: join(cwd, 'data', 'netwarden.db'),
        logLevel: 'info',
        configFile: null,
        admin: null,
        scanAllow: null,
        nmap: { binary: 'nmap', dataDir: null },
      });
      expect(loadServerConfig({ NETWARDEN_NMAP_PATH: '/opt/nmap/bin/nmap', NMAPDIR: '/opt/nmap/share' }, cwd).nmap).toEqual({
        binary: '/opt/nmap/bin/nmap',
        dataDir: '/opt/nmap/share',
      });
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
