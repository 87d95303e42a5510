/**
 * No scanner outlives its service (issue 19 §5): `netwarden serve` runs as the leader of its own
 * process group, as under systemd or in a container; a scan's nmap holds connections to a loopback
 * listener that accepts and never answers (version detection waits on it); then the whole group
 * gets SIGKILL. Within 2 s no nmap of that run is left and the listener holds no connection.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { nmapVersion } from '../../src/engines/nmap.js';
import type { Store } from '../../src/store/index.js';
import { type CliDatastore, type ServeProcess, bodyOf, cliDatastores, client, openDatastore, sessionCookieOf, startServe } from '../cli/helpers.js';
import { ADMIN } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const hasNmap = (await nmapVersion()) !== null;
if (!hasNmap) console.warn('skipping the engine-death test: nmap is not installed (apt-get install nmap)');

/** An address of its own on loopback, so no other test's scan touches the listener. */
const HOST = '127.0.19.5';

/** A listener that accepts and stays silent, counting the connections it holds open. */
async function silentCountingListener(): Promise<{ port: number; open: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, HOST, resolve);
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no TCP address');
  return {
    port: address.port,
    open: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A live (not zombie) process's parent pid and argv[0], or null when it is gone. */
function processInfo(pid: number): { ppid: number; argv0: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After "pid (comm) ": state, ppid, … (comm may hold spaces and parentheses).
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z' || state === 'X') return null;
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    return { ppid: Number(ppid), argv0 };
  } catch {
    return null;
  }
}

/** The nmap processes that are children of `parent`. */
function nmapChildrenOf(parent: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const info = processInfo(Number(name));
    if (info?.ppid === parent && /(^|\/)nmap$/.test(info.argv0)) found.push(Number(name));
  }
  return found;
}

describe.skipIf(!hasNmap).each(cliDatastores())('SIGKILL of the service process group during a scan ($kind)', ({ create }) => {
  let ds: CliDatastore | undefined;
  let serve: ServeProcess | undefined;
  let listener: Awaited<ReturnType<typeof silentCountingListener>> | undefined;
  let store: Store | undefined;
  const engines: number[] = [];

  afterEach(async () => {
    // Whatever the outcome, nothing this test started keeps running.
    for (const pid of engines.splice(0)) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await serve?.kill();
    serve = undefined;
    await store?.close();
    store = undefined;
    await listener?.close();
    listener = undefined;
    await ds?.cleanup();
    ds = undefined;
  });

  it('leaves no nmap running and no connection to the scanned port within 2 s', async () => {
    ds = await create();
    listener = await silentCountingListener();
    serve = await startServe(ds, {}, ['serve'], { processGroup: true });
    const http = client(serve.baseUrl);
    const cookie = sessionCookieOf(await http('/api/auth/setup', { method: 'POST', json: ADMIN }));
    const config = await http('/api/config', {
      method: 'PUT',
      cookie,
      json: { scanning: { engine: 'nmap', os_detection: false, port_range: String(listener.port), host_timeout_seconds: 600 } },
    });
    expect(config.status).toBe(200);
    const trigger = await http(`/api/scan/device/${HOST}?profile=normal`, { method: 'POST', cookie });
    expect(trigger.status).toBe(200);
    const scanId: number = (await bodyOf(trigger)).scan_id;

    // Version detection has connected to the silent port and waits for it to speak.
    const serverPid = serve.child.pid as number;
    await waitFor('nmap to hold a connection to the silent listener', async () => {
      for (const pid of nmapChildrenOf(serverPid)) if (!engines.includes(pid)) engines.push(pid);
      return listener!.open() > 0 && engines.length > 0;
    });
    store = await openDatastore(ds);
    const scan = await store.scans.get(scanId);
    expect(scan?.status).toBe('running');
    expect(engines).toContain(scan?.engine_pgid);

    await serve.killGroup();
    // nmap leads a process group of its own: the group's SIGKILL does not reach it, its parent's death must.
    await waitFor(
      'every nmap of the run to be gone and the scanned port to hold no connection',
      async () => {
        return engines.every((pid) => processInfo(pid) === null) && listener!.open() === 0;
      },
      2000,
    );
  });
});
