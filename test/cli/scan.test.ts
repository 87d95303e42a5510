import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nmapVersion } from '../../src/engines/nmap.js';
import { bannerListener, type Listener } from '../helpers/listeners.js';

const BIN = new URL('../../bin/netwarden.js', import.meta.url).pathname;
const hasNmap = (await nmapVersion()) !== null;

function run(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('netwarden scan', () => {
  let dir: string;
  let ftp: Listener;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netwarden-cli-scan-'));
    ftp = await bannerListener('127.0.0.21', '220 (vsFTPd 2.3.4)\r\n');
    writeFileSync(
      join(dir, 'netwarden.json'),
      JSON.stringify({ settings: { scanning: { port_range: String(ftp.port), os_detection: false, engine: hasNmap ? 'nmap' : 'native' } } }),
    );
  });
  afterAll(async () => {
    await ftp?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('scans through the engine and prints a summary table with ports and risk', async () => {
    const result = await run(['scan', '--profile', 'normal', '--subnet', '127.0.0.21', '--no-progress'], { NETWARDEN_DATA_DIR: dir });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const row = result.stdout.split('\n').find((l) => l.startsWith('127.0.0.21'));
    expect(row).toContain(String(ftp.port));
    // The vsftpd 2.3.4 backdoor (CVE-2011-2523) makes the device critical.
    expect(row).toMatch(/critical \(\d+\)/);
    expect(result.stdout).toMatch(/scan 1: normal scan of 127\.0\.0\.21\/32 found 1 device\(s\)/);
  });

  it('refuses a bad profile or an oversized subnet with a usage error', async () => {
    const bad = await run(['scan', '--profile', 'deep'], { NETWARDEN_DATA_DIR: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--profile must be one of quick, normal, intensive');
    const big = await run(['scan', '--subnet', '10.0.0.0/8'], { NETWARDEN_DATA_DIR: dir });
    expect(big.code).toBe(2);
    expect(big.stderr).toContain('scanning.max_hosts');
  });
});
