import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { startServe, type ServeProcess } from '../cli/helpers.js';

describe('the server process', () => {
  const dirs: string[] = [];
  const servers: ServeProcess[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.kill();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** `netwarden serve` over the SQLite database in `dataDir` (the shared helper: a free port, waited for until healthy). */
  async function start(dataDir: string): Promise<ServeProcess> {
    const server = await startServe({ kind: 'sqlite', env: { NETWARDEN_DATA_DIR: dataDir }, cleanup: async () => {} });
    servers.push(server);
    return server;
  }

  it('stops cleanly on SIGTERM and keeps its data', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'netwarden-life-'));
    dirs.push(dataDir);
    const first = await start(dataDir);
    const setup = await fetch(`${first.baseUrl}/api/auth/setup`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'correct horse battery' }),
    });
    expect(setup.status).toBe(201);
    await first.stop();
    expect(first.child.exitCode).toBe(0);
    expect(first.output()).toContain('"msg":"stopped"');
    // Logs carry request ids and no secrets.
    expect(first.output()).not.toContain('correct horse battery');
    expect(first.output()).not.toMatch(/netwarden_session=/);

    const second = await start(dataDir);
    const status = await (await fetch(`${second.baseUrl}/api/auth/status`)).json();
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
