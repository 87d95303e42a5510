import { describe, expect, it } from 'vitest';
import { detectChanges, type DeviceState, type PortState } from '../../src/core/changes.js';
import { parseCoverage, type PortCoverage } from '../../src/core/coverage.js';

/** A port list (`1-1000,8080`) as a coverage. */
const ports = (text: string): PortCoverage => {
  const parsed = parseCoverage(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
};

const port = (p: number, service: string | null, product: string | null = null, version: string | null = null, state = 'open'): PortState => ({
  port: p,
  protocol: 'tcp',
  state,
  service,
  product,
  version,
});

const device = (id: number, ip: string, ports: PortState[], extra: Partial<DeviceState> = {}): DeviceState => ({
  deviceId: id,
  ip,
  mac: `02:00:00:00:00:${String(id).padStart(2, '0')}`,
  trusted: false,
  ports,
  ...extra,
});

const risky: Record<number, 'critical' | 'high' | 'medium' | 'low'> = { 23: 'critical', 21: 'medium', 3389: 'high' };
const base = {
  portsScanned: true,
  examinedOn: () => ports('1-65535'),
  portRisk: (p: PortState) => risky[p.port] ?? null,
  presence: { arrived: [], removed: [] },
};

/**
 * What presence decides with presence.offline_after_scans = 1 when every device was online before
 * and the baseline covers the target: devices not in the baseline arrived, devices it had that
 * this scan lacks are gone.
 */
const presenceOf = (baseline: readonly DeviceState[], current: readonly DeviceState[]) => ({
  arrived: current.filter((d) => !baseline.some((b) => b.deviceId === d.deviceId)).map((d) => d.deviceId),
  removed: baseline.filter((b) => !current.some((d) => d.deviceId === b.deviceId)).map((d) => ({ ...d, missedScans: 1 })),
});

describe('detectChanges', () => {
  it('reports nothing without a baseline (the first scan is the baseline)', () => {
    expect(detectChanges({ ...base, baseline: null, current: [device(1, '10.0.0.1', [port(22, 'ssh')])] })).toEqual([]);
  });

  it('reports nothing when nothing changed', () => {
    const d = device(1, '10.0.0.1', [port(22, 'ssh', 'OpenSSH', '9.2p1')]);
    expect(detectChanges({ ...base, baseline: [d], current: [structuredClone(d)] })).toEqual([]);
  });

  it.each([
    // [case, baseline, current, expected [type, severity, port]]
    ['new untrusted device', [], [device(2, '10.0.0.2', [])], [['device_added', 'medium', null]]],
    ['new trusted device', [], [device(2, '10.0.0.2', [], { trusted: true })], [['device_added', 'low', null]]],
    ['new device exposing telnet', [], [device(2, '10.0.0.2', [port(23, 'telnet')])], [['device_added', 'critical', null]]],
    ['device gone', [device(3, '10.0.0.3', [])], [], [['device_removed', 'low', null]]],
    ['trusted device gone', [device(3, '10.0.0.3', [], { trusted: true })], [], [['device_removed', 'info', null]]],
    ['harmless port opened', [device(1, '10.0.0.1', [])], [device(1, '10.0.0.1', [port(8080, 'http')])], [['port_opened', 'low', 8080]]],
    ['telnet opened', [device(1, '10.0.0.1', [])], [device(1, '10.0.0.1', [port(23, 'telnet')])], [['port_opened', 'critical', 23]]],
    ['RDP opened', [device(1, '10.0.0.1', [])], [device(1, '10.0.0.1', [port(3389, 'ms-wbt-server')])], [['port_opened', 'high', 3389]]],
    ['port closed', [device(1, '10.0.0.1', [port(80, 'http')])], [device(1, '10.0.0.1', [])], [['port_closed', 'info', 80]]],
    [
      'port now filtered counts as closed',
      [device(1, '10.0.0.1', [port(80, 'http')])],
      [device(1, '10.0.0.1', [port(80, 'http', null, null, 'filtered')])],
      [['port_closed', 'info', 80]],
    ],
    [
      'version changed',
      [device(1, '10.0.0.1', [port(22, 'ssh', 'OpenSSH', '8.9p1')])],
      [device(1, '10.0.0.1', [port(22, 'ssh', 'OpenSSH', '9.6p1')])],
      [['service_changed', 'low', 22]],
    ],
    [
      'different software on the port',
      [device(1, '10.0.0.1', [port(80, 'http', 'nginx', '1.18.0')])],
      [device(1, '10.0.0.1', [port(80, 'http', 'Apache httpd', '2.4.57')])],
      [['service_changed', 'medium', 80]],
    ],
    [
      'IP change of a known MAC is neither added nor removed',
      [device(1, '10.0.0.1', [port(22, 'ssh')])],
      [device(1, '10.0.0.9', [port(22, 'ssh')])],
      [],
    ],
  ] as const)('%s', (_name, baseline, current, expected) => {
    const changes = detectChanges({ ...base, baseline: [...baseline], current: [...current], presence: presenceOf(baseline, current) });
    expect(changes.map((c) => [c.change_type, c.severity, c.port])).toEqual(expected);
  });

  it('reports devices added and removed as presence decided, not by the baseline alone', () => {
    const back = device(1, '10.0.0.1', [port(22, 'ssh')]);
    const missedOnce = device(2, '10.0.0.2', [port(80, 'http')]);
    const gone = { ...device(3, '10.0.0.3', []), missedScans: 3 };
    const changes = detectChanges({
      ...base,
      // The baseline lacks 1 (it was offline) and 2 (it missed that scan but was not gone yet).
      baseline: [],
      current: [back, missedOnce],
      presence: { arrived: [1], removed: [gone] },
    });
    expect(changes.map((c) => [c.change_type, c.device_id])).toEqual([
      ['device_added', 1],
      ['device_removed', 3],
    ]);
    expect(changes[1].description).toBe('Device 10.0.0.3 (02:00:00:00:00:03) was not found in the last 3 scans');
  });

  it('reports a device that arrived as added even when the baseline had it (it was removed since)', () => {
    const d = device(1, '10.0.0.1', [port(22, 'ssh')]);
    const changes = detectChanges({ ...base, baseline: [d], current: [d], presence: { arrived: [1], removed: [] } });
    expect(changes.map((c) => c.change_type)).toEqual(['device_added']);
  });

  it('reports no arrival or removal without a baseline (the first scan of a target is the baseline)', () => {
    const changes = detectChanges({
      ...base,
      baseline: null,
      current: [device(1, '10.0.0.1', [])],
      presence: { arrived: [1], removed: [{ ...device(2, '10.0.0.2', []), missedScans: 1 }] },
    });
    expect(changes).toEqual([]);
  });

  it('never reports ports closed (or opened) after a discovery-only scan', () => {
    const changes = detectChanges({
      ...base,
      portsScanned: false,
      baseline: [device(1, '10.0.0.1', [port(80, 'http')])],
      current: [device(1, '10.0.0.1', [])],
    });
    expect(changes).toEqual([]);
  });

  it('does not report a port closed when it was outside this scan’s port list', () => {
    const changes = detectChanges({
      ...base,
      examinedOn: () => ports('1-1000'),
      baseline: [device(1, '10.0.0.1', [port(8443, 'https')])],
      current: [device(1, '10.0.0.1', [])],
    });
    expect(changes).toEqual([]);
  });

  it('describes changes in words, with the device and service', () => {
    const [opened] = detectChanges({
      ...base,
      baseline: [device(1, '10.0.0.1', [])],
      current: [device(1, '10.0.0.1', [port(23, 'telnet', 'BusyBox telnetd')], { label: 'Camera', vendor: 'Hikvision' })],
    });
    expect(opened).toMatchObject({
      device_ip: '10.0.0.1',
      device_mac: '02:00:00:00:00:01',
      new_value: 'telnet BusyBox telnetd',
      old_value: null,
    });
    expect(opened.description).toBe(
      'Port 23/tcp (telnet BusyBox telnetd) opened on 10.0.0.1 "Camera" (Hikvision, 02:00:00:00:00:01); it is a critical-risk service',
    );
  });

  it('handles ten thousand devices with ten ports each', () => {
    const make = (shift: number) =>
      Array.from({ length: 10_000 }, (_, i) =>
        device(
          i + 1,
          `10.${i >> 8}.${i & 255}.1`,
          Array.from({ length: 10 }, (_, j) => port(1000 + j + (i % 7 === 0 ? shift : 0), 'http')),
        ),
      );
    const changes = detectChanges({ ...base, baseline: make(0), current: make(1) });
    // Devices with i % 7 === 0 shifted their ports by one: one port closed and one opened each.
    const shifted = Math.ceil(10_000 / 7);
    expect(changes.filter((c) => c.change_type === 'port_opened')).toHaveLength(shifted);
    expect(changes.filter((c) => c.change_type === 'port_closed')).toHaveLength(shifted);
  });
});

describe('detectChanges with port lists that differ between the scans', () => {
  // The device's ports were known on 1-1000; this scan examined 1-1000 plus 3389 and 8080 (scanning.top_ports).
  const before = (list: PortState[], coverage: PortCoverage | null = ports('1-1000')) => device(1, '10.0.0.1', list, { coverage });
  const now = (list: PortState[]) => device(1, '10.0.0.1', list);
  const options = { ...base, examinedOn: () => ports('1-1000,3389,8080') };

  it('does not report a port opened that was never examined before', () => {
    const changes = detectChanges({ ...options, baseline: [before([port(22, 'ssh')])], current: [now([port(22, 'ssh'), port(8080, 'http')])] });
    expect(changes).toEqual([]);
  });

  it('still reports a port opened that was known closed', () => {
    const changes = detectChanges({ ...options, baseline: [before([])], current: [now([port(80, 'http'), port(3389, 'ms-wbt-server')])] });
    expect(changes.map((c) => [c.change_type, c.port])).toEqual([['port_opened', 80]]);
  });

  it('never reports a port this scan did not examine, whatever the state', () => {
    const baseline = [before([port(9000, 'cslistener'), port(5000, 'upnp'), port(443, 'https')], ports('1-1000,5000,9000'))];
    const changes = detectChanges({ ...options, baseline, current: [now([port(9000, 'cslistener'), port(5000, 'upnp')])] });
    // 9000 and 5000: outside this scan's list (kept as they were); 443: examined, found closed.
    expect(changes.map((c) => [c.change_type, c.port])).toEqual([['port_closed', 443]]);
  });

  it('reports closed, once, a port known open that the baseline scan itself did not examine', () => {
    // Scan 1 examined 1-1000 and found 22 and 306 open; scan 2 examined only 22, so its snapshot
    // still holds 306 (last known open). This scan examines both and finds 306 closed.
    const baseline = [before([port(22, 'ssh'), port(306, 'mysql')], ports('1-1000'))];
    const changes = detectChanges({ ...base, baseline, current: [now([port(22, 'ssh')])] });
    expect(changes.map((c) => [c.change_type, c.port])).toEqual([['port_closed', 306]]);
    // The next scan, with 306 still closed, has nothing to report.
    expect(detectChanges({ ...base, baseline: [before([port(22, 'ssh')])], current: [now([port(22, 'ssh')])] })).toEqual([]);
  });

  it('reports nothing for a device whose ports this scan did not examine', () => {
    const changes = detectChanges({ ...options, examinedOn: () => null, baseline: [before([port(443, 'https')])], current: [now([])] });
    expect(changes).toEqual([]);
  });

  it('compares every port when the baseline coverage is unknown (older snapshots)', () => {
    const baseline = [before([port(443, 'https')], null)];
    const changes = detectChanges({ ...options, baseline, current: [now([port(8080, 'http')])] });
    expect(changes.map((c) => [c.change_type, c.port])).toEqual([
      ['port_opened', 8080],
      ['port_closed', 443],
    ]);
  });

  it('reports a service change on a port examined now', () => {
    const changes = detectChanges({
      ...options,
      baseline: [before([port(8080, 'http', 'nginx')], ports('1-1000,8080'))],
      current: [now([port(8080, 'http', 'Apache httpd')])],
    });
    expect(changes.map((c) => [c.change_type, c.port])).toEqual([['service_changed', 8080]]);
  });

  it('keeps UDP and TCP apart', () => {
    const udp = (p: number, service: string): PortState => ({ ...port(p, service), protocol: 'udp' });
    const baseline = [before([udp(53, 'domain'), port(53, 'domain')], ports('1-1000,udp:53'))];
    // A TCP-only scan finds TCP 53 closed: UDP 53 is not its to report.
    const changes = detectChanges({ ...base, baseline, current: [now([udp(53, 'domain')])] });
    expect(changes.map((c) => [c.change_type, c.port, c.protocol])).toEqual([['port_closed', 53, 'tcp']]);
  });
});
