/**
 * Presence through the real server and scan manager (CONTRACT §8, docs/scanning.md): which scans
 * count, when a device goes offline and is reported removed, when it is reported added again.
 * The engine is scripted (each discovery answers what the test says, or fails, or waits to be
 * cancelled), so a device can be absent on demand; it sends no packet. Addresses are loopback.
 */
import { describe, expect, it } from 'vitest';
import type { DiscoveredHost } from '../../src/core/model.js';
import { EngineSelector } from '../../src/engines/engines.js';
import { ScanAbortedError, type DiscoveryRequest, type ScanEngine } from '../../src/engines/types.js';
import { testDatabases } from '../helpers/databases.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

const SUBNET = '127.77.0.0/29';
const A = '127.77.0.1';
const B = '127.77.0.2';

type Step = string[] | 'fail' | 'hang';

/** Discovery answers the next scripted step: these addresses up, a failure, or nothing until cancelled. */
class ScriptedEngine implements ScanEngine {
  readonly name = 'native' as const;
  readonly steps: Step[] = [];
  /** Resolves when a discovery is waiting to be cancelled. */
  hanging: Promise<void> = Promise.resolve();
  private markHanging: () => void = () => {};

  next(step: Step): void {
    this.steps.push(step);
    if (step === 'hang') this.hanging = new Promise((resolve) => (this.markHanging = resolve));
  }

  async discover(request: DiscoveryRequest): Promise<DiscoveredHost[]> {
    const step = this.steps.shift();
    if (step === undefined) throw new Error('no scripted step left');
    if (step === 'fail') throw new Error('scripted failure');
    if (step === 'hang') {
      return new Promise((_, reject) => {
        request.signal.addEventListener('abort', () => reject(new ScanAbortedError()));
        this.markHanging();
      });
    }
    return step.map((ip) => ({ ip, mac: null, vendor: null, hostname: null }));
  }

  async scanPorts(): Promise<never> {
    throw new Error('the presence tests run quick scans only');
  }
}

describe.each(testDatabases())('presence ($kind)', (database) => {
  async function start(offlineAfterScans: number) {
    const engine = new ScriptedEngine();
    const { server, key } = await startServerWithAdmin(database, {
      engines: new EngineSelector('/nonexistent/nmap', async () => engine),
      settings: { scanning: { engine: 'native' }, presence: { offline_after_scans: offlineAfterScans } },
    });
    return { server, key, engine };
  }

  /** Runs a quick network scan of SUBNET (or a device scan of `device`) with the engine answering `step`; returns the final record. */
  async function scan(server: TestServer, key: string, engine: ScriptedEngine, step: Step, device?: string): Promise<any> {
    engine.next(step);
    if (device) {
      const res = await server.request(`/api/scan/device/${device}?profile=quick`, { method: 'POST', key });
      expect(res.status).toBe(200);
      return waitForScan(server, key, (await readJson(res)).scan_id);
    }
    const { scan_id } = await triggerScan(server, key, { subnet: SUBNET, profile: 'quick' });
    if (step === 'hang') {
      await engine.hanging;
      expect((await server.request(`/api/scans/${scan_id}/cancel`, { method: 'POST', key })).status).toBe(200);
    }
    return waitForScan(server, key, scan_id);
  }

  const changesOf = async (server: TestServer, key: string, scanId: number) =>
    (await readJson(await server.request(`/api/changes?scan_id=${scanId}`, { key }))).map((c: any) => [c.change_type, c.device_ip]).reverse();

  const presenceOf = async (server: TestServer, key: string, ip: string) => {
    const list = await readJson(await server.request(`/api/devices?q=${ip}`, { key }));
    const device = list.find((d: any) => d.ip_address === ip);
    const detail = await readJson(await server.request(`/api/devices/${device.id}`, { key }));
    expect(detail).toMatchObject({ online: device.online, missed_scans: device.missed_scans });
    return { online: device.online, missed_scans: device.missed_scans };
  };

  it('with the default of 1 scan: removed in the first scan that misses it, added when it is back', async () => {
    const { server, key, engine } = await start(1);
    try {
      const first = await scan(server, key, engine, [A, B]);
      expect(first.status).toBe('completed');
      expect(await changesOf(server, key, first.scan_id)).toEqual([]);
      expect(await presenceOf(server, key, B)).toEqual({ online: true, missed_scans: 0 });

      const missed = await scan(server, key, engine, [A]);
      expect(await changesOf(server, key, missed.scan_id)).toEqual([['device_removed', B]]);
      expect(await presenceOf(server, key, B)).toEqual({ online: false, missed_scans: 1 });
      expect(await presenceOf(server, key, A)).toEqual({ online: true, missed_scans: 0 });

      const again = await scan(server, key, engine, [A]);
      expect(await changesOf(server, key, again.scan_id)).toEqual([]);
      expect(await presenceOf(server, key, B)).toEqual({ online: false, missed_scans: 2 });

      const back = await scan(server, key, engine, [A, B]);
      expect(await changesOf(server, key, back.scan_id)).toEqual([['device_added', B]]);
      expect(await presenceOf(server, key, B)).toEqual({ online: true, missed_scans: 0 });

      const steady = await scan(server, key, engine, [A, B]);
      expect(await changesOf(server, key, steady.scan_id)).toEqual([]);
    } finally {
      await server.close();
    }
  }, 120_000);

  it('with 3 scans: online and silent through two misses, removed in the third, failed and cancelled scans not counted', async () => {
    const { server, key, engine } = await start(3);
    try {
      await scan(server, key, engine, [A, B]);

      // Missing once, then back: nothing reported, the count starts again.
      let s = await scan(server, key, engine, [A]);
      expect(await changesOf(server, key, s.scan_id)).toEqual([]);
      expect(await presenceOf(server, key, B)).toEqual({ online: true, missed_scans: 1 });
      s = await scan(server, key, engine, [A, B]);
      expect(await changesOf(server, key, s.scan_id)).toEqual([]);
      expect(await presenceOf(server, key, B)).toEqual({ online: true, missed_scans: 0 });

      s = await scan(server, key, engine, [A]);
      expect(await presenceOf(server, key, B)).toEqual({ online: true, missed_scans: 1 });

      // A failed and a cancelled scan change nothing.
      expect((await scan(server, key, engine, 'fail')).status).toBe('failed');
      expect((await scan(server, key, engine, 'hang')).status).toBe('cancelled');
      expect(await presenceOf(server, key, B)).toEqual({ online: true, missed_scans: 1 });

      s = await scan(server, key, engine, [A]);
      expect(await changesOf(server, key, s.scan_id)).toEqual([]);
      expect(await presenceOf(server, key, B)).toEqual({ online: true, missed_scans: 2 });

      // The third consecutive completed scan without it: removed in that scan.
      s = await scan(server, key, engine, [A]);
      expect(await changesOf(server, key, s.scan_id)).toEqual([['device_removed', B]]);
      expect(await presenceOf(server, key, B)).toEqual({ online: false, missed_scans: 3 });
      const [removed] = await readJson(await server.request(`/api/changes?scan_id=${s.scan_id}`, { key }));
      expect(removed.description).toBe(`Device ${B} was not found in the last 3 scans`);

      s = await scan(server, key, engine, [A]);
      expect(await changesOf(server, key, s.scan_id)).toEqual([]);
      expect(await presenceOf(server, key, B)).toEqual({ online: false, missed_scans: 4 });

      s = await scan(server, key, engine, [A, B]);
      expect(await changesOf(server, key, s.scan_id)).toEqual([['device_added', B]]);
      expect(await presenceOf(server, key, B)).toEqual({ online: true, missed_scans: 0 });

      s = await scan(server, key, engine, [A, B]);
      expect(await changesOf(server, key, s.scan_id)).toEqual([]);
    } finally {
      await server.close();
    }
  }, 180_000);

  it('device scans count sightings, never misses: back online (and added) when seen, untouched when not', async () => {
    const { server, key, engine } = await start(1);
    try {
      await scan(server, key, engine, [A, B]);
      await scan(server, key, engine, [A]);
      expect(await presenceOf(server, key, B)).toEqual({ online: false, missed_scans: 1 });

      // A device scan that does not find the device changes nothing of its presence.
      let s = await scan(server, key, engine, [], B);
      expect(s).toMatchObject({ status: 'completed', scan_type: 'device' });
      expect(await changesOf(server, key, s.scan_id)).toEqual([]);
      expect(await presenceOf(server, key, B)).toEqual({ online: false, missed_scans: 1 });
      s = await scan(server, key, engine, [], A);
      expect(await changesOf(server, key, s.scan_id)).toEqual([]);
      expect(await presenceOf(server, key, A)).toEqual({ online: true, missed_scans: 0 });

      // One that finds it brings it back, and reports it added, once.
      s = await scan(server, key, engine, [B], B);
      expect(await changesOf(server, key, s.scan_id)).toEqual([['device_added', B]]);
      expect(await presenceOf(server, key, B)).toEqual({ online: true, missed_scans: 0 });
      s = await scan(server, key, engine, [A, B]);
      expect(await changesOf(server, key, s.scan_id)).toEqual([]);
    } finally {
      await server.close();
    }
  }, 120_000);

  it('leaves devices in network.exclude alone', async () => {
    const { server, key, engine } = await start(1);
    try {
      await scan(server, key, engine, [A, B]);
      const res = await server.request('/api/config', { method: 'PUT', key, json: { network: { exclude: [`${B}/32`] } } });
      expect(res.status).toBe(200);
      const s = await scan(server, key, engine, [A]);
      expect(await changesOf(server, key, s.scan_id)).toEqual([]);
      expect(await presenceOf(server, key, B)).toEqual({ online: true, missed_scans: 0 });
    } finally {
      await server.close();
    }
  }, 120_000);

  it('refuses presence.offline_after_scans outside 1–100 (400 naming it)', async () => {
    const { server, key } = await start(1);
    try {
      for (const value of [0, 101, 2.5, '3', null]) {
        const res = await server.request('/api/config', { method: 'PUT', key, json: { presence: { offline_after_scans: value } } });
        if (value === null) {
          // null resets to the default.
          expect(res.status).toBe(200);
          expect((await readJson(res)).presence).toEqual({ offline_after_scans: 1 });
          continue;
        }
        expect(res.status, String(value)).toBe(400);
        expect((await readJson(res)).detail).toMatch(/^presence\.offline_after_scans: /);
      }
      const ok = await server.request('/api/config', { method: 'PUT', key, json: { presence: { offline_after_scans: 100 } } });
      expect((await readJson(ok)).presence).toEqual({ offline_after_scans: 100 });
    } finally {
      await server.close();
    }
  });
});
