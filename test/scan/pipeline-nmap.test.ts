/**
 * The overlapped scan (src/engines/pipeline.ts) with the real nmap engine against loopback listeners,
 * through the real server: it records the same devices, ports and changes as the same scans run
 * one phase after the other, and a cancel in the middle leaves no nmap running.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiscoveredHost, ScannedHost } from '../../src/core/model.js';
import { EngineSelector } from '../../src/engines/engines.js';
import { NmapEngine, nmapVersion } from '../../src/engines/nmap.js';
import type { DiscoveryRequest, PortScanRequest, ProcessListener, ScanEngine } from '../../src/engines/types.js';
import { testDatabases } from '../helpers/databases.js';
import { bannerListener, closedPort, httpListener, silentListener, type Listener } from '../helpers/listeners.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

const hasNmap = (await nmapVersion()) !== null;
if (!hasNmap) console.warn('nmap is not installed: skipping the nmap pipeline tests (apt-get install nmap; .ci/run installs it)');

/** The nmap engine, run overlapped or one phase after the other, noting every process group it starts. */
class RecordingNmap implements ScanEngine {
  readonly name = 'nmap' as const;
  readonly processes: number[] = [];
  readonly portRuns: { hosts: string[]; verifyUp: boolean }[] = [];
  private readonly nmap = new NmapEngine();
  private portRunStarted: () => void = () => {};

  constructor(readonly concurrent: boolean) {}

  /** Resolves when the next port run's nmap has started. */
  nextPortRun(): Promise<void> {
    return new Promise((resolve) => (this.portRunStarted = resolve));
  }

  discover(request: DiscoveryRequest): Promise<DiscoveredHost[]> {
    return this.nmap.discover({ ...request, onProcess: this.track(request.onProcess) });
  }

  scanPorts(request: PortScanRequest): Promise<ScannedHost[]> {
    this.portRuns.push({ hosts: request.hosts, verifyUp: request.verifyUp === true });
    return this.nmap.scanPorts({ ...request, onProcess: this.track(request.onProcess, () => this.portRunStarted()) });
  }

  private track(listener: ProcessListener | undefined, started?: () => void): ProcessListener {
    return (pgid) => {
      if (pgid !== null) this.processes.push(pgid);
      listener?.(pgid);
      if (pgid !== null) started?.();
    };
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** What a user sees of a record, without ids and times (which differ between two servers). */
function strip(record: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (key === 'id' || key.endsWith('_id') || key.endsWith('_at') || key.endsWith('_seen') || key === 'seen') continue;
    out[key] = value;
  }
  return out;
}

describe.skipIf(!hasNmap).each(testDatabases())('nmap scans overlapped and one phase after the other ($kind)', (database) => {
  const SUBNET = '127.0.0.40/30';
  const listeners: Listener[] = [];
  const servers: { server: TestServer; key: string; engine: RecordingNmap }[] = [];
  let http: Listener;
  let ports: string;
  let laterPort: number;

  beforeAll(async () => {
    const ssh = await bannerListener('127.0.0.41', 'SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.10\r\n');
    http = await httpListener('127.0.0.42', 'nginx/1.18.0');
    listeners.push(ssh, http);
    const closed = await closedPort('127.0.0.41');
    laterPort = await closedPort('127.0.0.43');
    ports = `${ssh.port},${http.port},${closed},${laterPort}`;
    for (const concurrent of [false, true]) {
      const engine = new RecordingNmap(concurrent);
      const { server, key } = await startServerWithAdmin(database, {
        engines: new EngineSelector('nmap', async () => engine),
        settings: { scanning: { engine: 'native', port_range: ports, host_timeout_seconds: 60, os_detection: false }, recognition: { probes: [] } }, // probes: test/api/device-identity.test.ts
      });
      servers.push({ server, key, engine });
    }
  });
  afterAll(async () => {
    for (const { server } of servers) await server.close();
    await Promise.all(listeners.map((l) => l.close()));
  });

  /** One normal scan of SUBNET on a server; what it recorded, as the API shows it. */
  async function scan({ server, key }: { server: TestServer; key: string }) {
    const started = await triggerScan(server, key, { subnet: SUBNET, profile: 'normal' });
    const record = await waitForScan(server, key, started.scan_id);
    expect(record).toMatchObject({ status: 'completed', error: null });
    const devices = await readJson(await server.request('/api/devices', { key }));
    const details = [];
    for (const d of devices) details.push(await readJson(await server.request(`/api/devices/${d.id}`, { key })));
    const changes = await readJson(await server.request(`/api/changes?scan_id=${started.scan_id}`, { key }));
    const perScan = await readJson(await server.request(`/api/scans/${started.scan_id}/devices`, { key }));
    return {
      devices_found: record.devices_found,
      devices: devices.map(strip) as Record<string, unknown>[],
      ports: details.map((d: { ip_address: string; ports: Record<string, unknown>[] }) => ({ ip: d.ip_address, ports: d.ports.map(strip) })),
      changes: changes.map(strip).sort((a: object, b: object) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
      snapshots: perScan.map(strip),
    };
  }

  it('records the same devices, ports and changes, scanning every host discovery found once', { timeout: 90_000 }, async () => {
    const [sequential, overlapped] = servers;
    // First scan: nothing known yet; the overlapped one port-scans what discovery reports.
    const first = await scan(sequential);
    expect(await scan(overlapped)).toEqual(first);
    expect(first.devices.map((d) => d.ip_address)).toEqual(['127.0.0.40', '127.0.0.41', '127.0.0.42', '127.0.0.43']);
    expect(first.devices.find((d) => d.ip_address === '127.0.0.42')?.open_ports).toEqual([http.port]);

    // Then a service appears on one host and one goes away on another.
    const ftp = await bannerListener('127.0.0.43', '220 (vsFTPd 3.0.5)\r\n', laterPort);
    listeners.push(ftp);
    await http.close();
    const second = await scan(sequential);
    overlapped.engine.portRuns.length = 0;
    expect(await scan(overlapped)).toEqual(second);
    expect(second.devices.find((d) => d.ip_address === '127.0.0.43')?.open_ports).toEqual([laterPort]);
    expect(second.changes.map((c: { change_type: string; device_ip: string }) => [c.change_type, c.device_ip])).toEqual(
      expect.arrayContaining([
        ['port_opened', '127.0.0.43'],
        ['port_closed', '127.0.0.42'],
      ]),
    );
    // The second overlapped scan port-scanned the hosts online before from the start, with the
    // check that they still answer, and no host twice.
    expect(overlapped.engine.portRuns).toEqual([{ hosts: ['127.0.0.40', '127.0.0.41', '127.0.0.42', '127.0.0.43'], verifyUp: true }]);
    expect(sequential.engine.portRuns.at(-1)).toEqual({ hosts: ['127.0.0.40', '127.0.0.41', '127.0.0.42', '127.0.0.43'], verifyUp: false });
  });

  it('leaves no nmap running when a scan is cancelled while its port scan runs', async () => {
    const { server, key, engine } = servers[1];
    // A listener that never answers keeps version detection busy well past the cancel.
    const silent = await silentListener('127.0.0.45');
    listeners.push(silent);
    const target = '127.0.0.44/30';
    const quick = await triggerScan(server, key, { subnet: target, profile: 'quick' });
    expect(await waitForScan(server, key, quick.scan_id)).toMatchObject({ status: 'completed' });
    const res = await server.request('/api/config', { method: 'PUT', key, json: { scanning: { port_range: String(silent.port) } } });
    expect(res.status).toBe(200);

    const before = engine.processes.length;
    const portRun = engine.nextPortRun();
    const started = await triggerScan(server, key, { subnet: target, profile: 'normal' });
    await portRun;
    expect((await server.request(`/api/scans/${started.scan_id}/cancel`, { method: 'POST', key })).status).toBe(200);
    expect(await waitForScan(server, key, started.scan_id)).toMatchObject({ status: 'cancelled' });

    const started_ = engine.processes.slice(before);
    expect(started_.length).toBeGreaterThanOrEqual(2);
    // Killed with SIGTERM, then SIGKILL two seconds later if still there.
    const deadline = Date.now() + 15_000;
    while (started_.some(groupAlive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(started_.filter(groupAlive)).toEqual([]);
  });
});
