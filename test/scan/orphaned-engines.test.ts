/**
 * Crash recovery ends every nmap a scan left behind: a scan overlaps discovery with port runs
 * (src/engines/pipeline.ts), so its record lists several process groups. Real nmap processes, each
 * in its own group, scanning only 127.0.0.1 with -n and a scan delay that keeps them running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { nmapVersion } from '../../src/engines/nmap.js';
import { endOrphanedEngines, newOwner } from '../../src/scan/owner.js';

const hasNmap = (await nmapVersion()) !== null;
if (!hasNmap) console.warn('skipping the orphaned-engine test: nmap is not installed (apt-get install nmap)');

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!hasNmap)('endOrphanedEngines', () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) if (child.pid && alive(child.pid)) process.kill(-child.pid, 'SIGKILL');
  });

  /** A long-running nmap in its own process group, as the engine starts it. */
  const longNmap = (): number => {
    const child = spawn('nmap', ['-n', '-Pn', '-sT', '--scan-delay', '1s', '-p', '1-200', '127.0.0.1'], { detached: true, stdio: 'ignore' });
    children.push(child);
    return child.pid as number;
  };

  it('ends the newest group and every group of the recorded list, only on the owner host', async () => {
    const [a, b, c] = [longNmap(), longNmap(), longNmap()];
    const me = newOwner();

    // Another host's scan: nothing here is its to end.
    expect(endOrphanedEngines({ owner_host: 'elsewhere', engine_pgid: a, engine_pgids: JSON.stringify([a, b]) }, me)).toEqual([]);
    expect([a, b, c].every(alive)).toBe(true);

    const killed = endOrphanedEngines({ owner_host: me.host, engine_pgid: c, engine_pgids: JSON.stringify([a, c]) }, me);
    expect(killed).toEqual([a, c].sort((x, y) => x - y));
    await until('the recorded groups to end', () => !alive(a) && !alive(c));
    expect(alive(b)).toBe(true);

    // A list that is not one, or a group whose leader is not nmap (this test's own process), is left alone.
    expect(endOrphanedEngines({ owner_host: me.host, engine_pgid: null, engine_pgids: 'not json' }, me)).toEqual([]);
    expect(endOrphanedEngines({ owner_host: me.host, engine_pgid: null, engine_pgids: JSON.stringify([process.pid]) }, me)).toEqual([]);
    expect(alive(b)).toBe(true);
  });
});
