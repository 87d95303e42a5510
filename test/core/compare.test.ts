import { describe, expect, it } from 'vitest';
import { comparabilityProblem, compareScans, formatCompareText, type ComparedDevice, type ComparedScan } from '../../src/core/compare.js';
import { parseCoverage } from '../../src/core/coverage.js';
import { presenceIntervals } from '../../src/core/timeline.js';

const coverage = (text: string) => {
  const parsed = parseCoverage(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
};
// 10.0.0.0/24
const scan = (id: number, extra: Partial<ComparedScan> = {}): ComparedScan => ({
  id,
  status: 'completed',
  subnet: '10.0.0.0/24',
  profile: 'normal',
  completedAt: '2026-11-26T10:00:00.000Z',
  low: 167772160,
  high: 167772415,
  portsExamined: '1-1000',
  ...extra,
});
const port = (n: number, version: string | null = null) => ({ port: n, protocol: 'tcp', state: 'open', service: 'svc', product: null, version });
const device = (
  id: number,
  ip: string,
  ports: ReturnType<typeof port>[],
  examined = '1-1000',
  extra: Partial<ComparedDevice> = {},
): ComparedDevice => ({
  deviceId: id,
  ip,
  mac: null,
  hostname: null,
  label: null,
  ports,
  riskLevel: 'none',
  riskScore: 0,
  examined: coverage(examined),
  ...extra,
});

describe('compareScans', () => {
  it('matches by identity: a device at another address is moved, with its port changes', () => {
    const result = compareScans(
      { scan: scan(2), devices: [device(1, '10.0.0.9', [port(22), port(80)])] },
      { scan: scan(1), devices: [device(1, '10.0.0.5', [port(22)])] },
    );
    expect(result.summary).toMatchObject({ devices_moved: 1, devices_added: 0, devices_removed: 0, ports_opened: 1 });
    expect(result.devices[0]).toMatchObject({
      status: 'moved',
      ip_before: '10.0.0.5',
      ip_after: '10.0.0.9',
      ports_opened: [{ port: 80, protocol: 'tcp' }],
    });
  });

  it('counts a port only where both scans examined it', () => {
    // The current scan examined only 22: 3306 (kept as last known, or gone) is neither opened nor closed.
    const result = compareScans(
      { scan: scan(2), devices: [device(1, '10.0.0.5', [port(22, '2')], '22')] },
      { scan: scan(1), devices: [device(1, '10.0.0.5', [port(22, '1'), port(3306)], '1-1000,3306')] },
    );
    expect(result.devices[0]).toMatchObject({
      status: 'changed',
      ports_closed: [],
      services_changed: [{ port: 22, before: 'svc 1', after: 'svc 2' }],
    });
    // Found open outside what the previous scan examined: no opening anyone could have seen.
    const wider = compareScans(
      { scan: scan(2), devices: [device(1, '10.0.0.5', [port(22), port(8080)], '1-10000')] },
      { scan: scan(1), devices: [device(1, '10.0.0.5', [port(22)], '1-1000')] },
    );
    expect(wider.devices[0].status).toBe('unchanged');
    expect(wider.summary.ports_opened).toBe(0);
  });

  it("added and removed only inside the other scan's target; their ports do not count; risk changes", () => {
    const narrow = scan(1, { subnet: '10.0.0.0/25', high: 167772287 });
    const result = compareScans(
      {
        scan: scan(2),
        devices: [
          device(2, '10.0.0.7', [port(22)]),
          device(3, '10.0.0.200', [port(22)]),
          device(4, '10.0.0.8', [], '1-1000', { riskLevel: 'high', riskScore: 40 }),
        ],
      },
      { scan: narrow, devices: [device(1, '10.0.0.6', [port(80)]), device(4, '10.0.0.8', [])] },
    );
    expect(result.devices.map((d) => [d.device_id, d.status])).toEqual([
      [2, 'added'],
      [1, 'removed'],
      [4, 'changed'],
    ]);
    expect(result.summary).toMatchObject({
      devices_added: 1,
      devices_removed: 1,
      devices_changed: 1,
      ports_opened: 0,
      ports_closed: 0,
      risk_changed: 1,
    });
    expect(result.devices[2]).toMatchObject({ risk_before: { level: 'none', score: 0 }, risk_after: { level: 'high', score: 40 } });
  });

  it('says why two scans cannot be compared', () => {
    expect(comparabilityProblem(scan(1), scan(1))?.kind).toBe('invalid');
    expect(comparabilityProblem(scan(2), scan(1, { status: 'running' }))).toMatchObject({
      kind: 'conflict',
      message: expect.stringMatching(/^previous_id: scan 1 is running/),
    });
    expect(comparabilityProblem(scan(2), scan(1, { subnet: '10.0.1.0/24', low: 167772416, high: 167772671 }))?.message).toMatch(/disjoint/);
    expect(comparabilityProblem(scan(2), scan(1))).toBeNull();
  });

  it('writes an ndiff-style text', () => {
    const record = (id: number) => ({
      scan_id: id,
      subnet: '10.0.0.0/24',
      profile: 'normal',
      completed_at: '2026-11-26T10:00:00.000Z',
      ports_examined: '1-1000',
    });
    const result = compareScans(
      { scan: scan(2), devices: [device(1, '10.0.0.9', [port(22), port(80)], '1-1000', { label: 'nas' })] },
      { scan: scan(1), devices: [device(1, '10.0.0.5', [port(22)], '1-1000', { label: 'nas' })] },
    );
    const text = formatCompareText({ current: record(2), previous: record(1), ...result });
    expect(text).toContain('-10.0.0.5 (nas):\n+10.0.0.9 (nas):\n PORT STATE SERVICE\n+80/tcp open\n');
    expect(text.startsWith('-Scan #1 of 10.0.0.0/24 (normal), completed 2026-11-26 10:00 UTC; ports examined: 1-1000\n+Scan #2')).toBe(true);
  });
});

describe('presenceIntervals', () => {
  const at = (minute: number) => `2026-11-26T10:${String(minute).padStart(2, '0')}:00.000Z`;
  const now = at(59);

  it('goes offline at the scan that makes the threshold of misses; the last interval is open', () => {
    const scans = [
      { scan_id: 1, at: at(0), seen: true },
      { scan_id: 2, at: at(10), seen: false },
      { scan_id: 3, at: at(20), seen: false },
      { scan_id: 4, at: at(30), seen: true },
    ];
    expect(presenceIntervals(scans, { firstSeen: at(0), offlineAfterScans: 2, now })).toEqual([
      { state: 'online', from: at(0), to: at(20), duration_seconds: 1200 },
      { state: 'offline', from: at(20), to: at(30), duration_seconds: 600 },
      { state: 'online', from: at(30), to: null, duration_seconds: 29 * 60 },
    ]);
    expect(presenceIntervals(scans, { firstSeen: at(0), offlineAfterScans: 1, now }).map((i) => i.from)).toEqual([at(0), at(10), at(30)]);
  });

  it('leaves out misses before the device was known; none without scans', () => {
    const scans = [
      { scan_id: 2, at: at(10), seen: true },
      { scan_id: 1, at: at(0), seen: false },
    ];
    expect(presenceIntervals(scans, { firstSeen: at(5), offlineAfterScans: 1, now })).toEqual([
      { state: 'online', from: at(10), to: null, duration_seconds: 49 * 60 },
    ]);
    expect(presenceIntervals([], { firstSeen: at(5), offlineAfterScans: 1, now })).toEqual([]);
  });
});
