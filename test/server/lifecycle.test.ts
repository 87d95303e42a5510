import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';

const BIN = new URL('../../bin/netwarden.js', import.meta.url).pathname;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function waitForHealth(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      const res = await fetch(`${url}/health`);
      if (res.ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server did not become healthy');
}

describe('the server process', () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  async function start(dataDir: string) {
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, 'serve'], {
      env: { ...process.env, NETWARDEN_DATA_DIR: dataDir, NETWARDEN_PORT: String(port), NETWARDEN_HOST: '127.0.0.1', NETWARDEN_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout?.on('data', (d) => (output += d));
    child.stderr?.on('data', (d) => (output += d));
    const url = `http://127.0.0.1:${port}`;
    await waitForHealth(url, child);
    return { child, url, output: () => output };
  }

  it('stops cleanly on SIGTERM and keeps its data', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'netwarden-life-'));
    dirs.push(dataDir);
    const first = await start(dataDir);
    const setup = await fetch(`${first.url}/api/auth/setup`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'correct horse battery' }),
    });
    expect(setup.status).toBe(201);
    const exited = new Promise<number | null>((resolve) => first.child.once('exit', (code) => resolve(code)));
    first.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(first.output()).toContain('"msg":"stopped"');
    // Logs carry request ids and no secrets.
    expect(first.output()).not.toContain('correct horse battery');
    expect(first.output()).not.toMatch(/netwarden_session=/);

    const second = await start(dataDir);
    const status = await (await fetch(`${second.url}/api/auth/status`)).json();
    expect(status).toEqual({ setup_required: false, setup_code_required: false });
  });

  it('marks a scan left running by a crash as failed at the next start', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'netwarden-life-'));
    dirs.push(dataDir);
    const store = await openStore({ url: join(dataDir, 'netwarden.db') });
    const scan = await store.scans.create({
      status: 'running',
      profile: 'normal',
      subnet: '127.0.0.0/30',
      scan_type: 'network',
      started_at: new Date().toISOString(),
    });
    await store.close();

    await start(dataDir);
    const after = await openStore({ url: join(dataDir, 'netwarden.db') });
    const row = await after.scans.get(scan.id);
    await after.close();
    expect(row?.status).toBe('failed');
    expect(row?.error).toMatch(/Interrupted/);
  });
});
