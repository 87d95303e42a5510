import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';

const BIN = new URL('../../bin/netwarden.js', import.meta.url).pathname;
const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'nmap-import');

function run(args: string[], env: Record<string, string>, input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    child.stdin?.end(input ?? '');
  });
}

describe('netwarden import', () => {
  let dir: string;
  let env: Record<string, string>;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'netwarden-cli-import-'));
    env = { NETWARDEN_DATA_DIR: dir };
    for (const name of ['loopback-sv-1.xml', 'loopback-sv-2.xml', 'mixed-ipv6.xml']) copyFileSync(join(FIXTURES, name), join(dir, name));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('imports a report and prints the scan id, devices found and changes', async () => {
    const first = await run(['import', join(dir, 'loopback-sv-1.xml')], env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('scan 1: imported normal scan of 127.0.0.20/30: 4 device(s) found; 0 change(s) since the previous scan\n');

    const second = await run(['import', join(dir, 'loopback-sv-2.xml')], env);
    expect(second.code).toBe(0);
    const lines = second.stdout.trim().split('\n');
    expect(lines[0]).toBe('scan 2: imported normal scan of 127.0.0.20/30: 4 device(s) found; 2 change(s) since the previous scan');
    expect(lines.slice(1).sort()).toEqual([expect.stringMatching(/^ {2}\[\w+\] .*8081/), expect.stringMatching(/^ {2}\[\w+\] .*8081/)]);
  });

  it('reads standard input with -, prints JSON with --json, and names skipped IPv6 hosts', async () => {
    const result = await run(['import', '--json', '-'], env, readFileSync(join(dir, 'mixed-ipv6.xml'), 'utf8'));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const record = JSON.parse(result.stdout);
    expect(record).toMatchObject({ scan_id: 3, status: 'completed', triggered_by: 'import', profile: 'quick', devices_found: 4 });
    expect(record.warnings).toEqual(['Skipped IPv6 host ::1 (up): Netwarden records IPv4 devices only']);
  });

  it('refuses a truncated report, a DTD and a missing file with a usage error, recording nothing', async () => {
    const xml = readFileSync(join(dir, 'loopback-sv-1.xml'), 'utf8');
    writeFileSync(join(dir, 'cut.xml'), xml.slice(0, 1500));
    writeFileSync(join(dir, 'dtd.xml'), xml.replace('<!DOCTYPE nmaprun>', '<!DOCTYPE nmaprun [<!ENTITY x SYSTEM "file:///etc/passwd">]>'));
    const cut = await run(['import', join(dir, 'cut.xml')], env);
    expect(cut.code).toBe(2);
    expect(cut.stderr).toMatch(/^netwarden: .*cut\.xml: not well-formed XML at line \d+/);
    const dtd = await run(['import', join(dir, 'dtd.xml')], env);
    expect(dtd.code).toBe(2);
    expect(dtd.stderr).toMatch(/internal DTD subset/);
    const missing = await run(['import', join(dir, 'nope.xml')], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read .*nope\.xml/);

    const store = await openStore({ url: join(dir, 'netwarden.db') });
    try {
      const { total, rows } = await store.scans.list(10, 0);
      expect(total).toBe(3);
      expect(rows.every((r) => r.triggered_by === 'import' && r.status === 'completed')).toBe(true);
      const audit = await store.audit.list({ action: 'scan_imported', limit: 10, offset: 0 });
      expect(audit.rows.map((r) => r.actor)).toEqual(['cli', 'cli', 'cli']);
    } finally {
      await store.close();
    }
  });
});
