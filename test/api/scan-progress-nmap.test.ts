/**
 * Honest progress of a real nmap scan (issue 23 §5): while nmap works through its host groups and
 * its service detection, GET /api/scans/{id} shows devices done going up before the scan
 * completes, a bar that never goes back and a time left that changes. Real server over HTTP, real
 * nmap (-n) against real loopback listeners, both stores.
 */
import { createServer, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { bannerListener, listen, type Listener } from '../helpers/listeners.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { triggerScan } from '../helpers/scans.js';
import { nmapVersion } from '../../src/engines/nmap.js';

/** 32 addresses, every one up on loopback: two host groups of 16 (a network of 16 or fewer is one group). */
const NETWORK = '127.0.23.0/27';
const hasNmap = (await nmapVersion()) !== null;

/** A service that answers nothing and hangs up after a while: nmap's service detection waits on it. */
function silentListener(host: string, port: number): Promise<Listener> {
  const server = createServer((socket: Socket) => {
    socket.on('error', () => {});
    socket.on('data', () => {});
    setTimeout(() => socket.destroy(), 1500);
  });
  return listen(server, host, port);
}

describe.skipIf(!hasNmap).each(testDatabases())('progress of a real nmap scan ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  const listeners: Listener[] = [];

  beforeEach(async () => {
    ({ server, key } = await startServerWithAdmin(database, {
      settings: { scanning: { engine: 'nmap', os_detection: false, port_range: '1-1100,7023,8023' } },
    }));
  });
  afterEach(async () => {
    await Promise.all(listeners.splice(0).map((l) => l.close()));
    await server?.close();
  });

  it('shows devices done rising before completion, a bar that never goes back and a time left that moves', async () => {
    listeners.push(await bannerListener('127.0.23.2', 'SSH-2.0-OpenSSH_9.6\r\n', 8023));
    // Silent services in both groups (.0–.15 and .16–.31): the second still waits on its own when the first is written.
    for (const ip of ['127.0.23.3', '127.0.23.21', '127.0.23.22']) listeners.push(await silentListener(ip, 7023));
    const started = await triggerScan(server, key, { subnet: NETWORK, profile: 'normal' });
    const seen: any[] = [];
    let final: any;
    for (;;) {
      final = await readJson(await server.request(`/api/scans/${started.scan_id}`, { key }));
      if (final.status !== 'running' && final.status !== 'queued') break;
      if (final.progress) seen.push(final.progress);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(final.status).toBe('completed');
    const scanning = seen.filter((p) => p.phase === 'ports' || p.phase === 'services' || p.phase === 'os');
    expect(scanning.length, 'progress seen while the devices were scanned').toBeGreaterThan(0);
    // Devices done went up while the scan still ran, and the total is the devices, not the addresses.
    const done = scanning.map((p) => p.hosts_done);
    expect(
      done.some((d) => d > 0),
      `hosts_done seen: ${done.join(',')}`,
    ).toBe(true);
    expect(done).toEqual([...done].sort((a, b) => a - b));
    for (const p of scanning) expect(p.hosts_done).toBeLessThanOrEqual(p.hosts_total);
    // The bar never goes back; the time left is not stuck at one value.
    const percents = seen.map((p) => p.percent);
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    const etas = new Set(seen.map((p) => p.eta_seconds).filter((e) => e !== null));
    expect(etas.size, `time left seen: ${[...etas].join(',')}`).toBeGreaterThan(1);
    expect(new Set(scanning.map((p) => p.phase)).has('services')).toBe(true);
  });
});
