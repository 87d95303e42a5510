/** The lines `netwarden watch` prints for each kind of event (src/cli/watch.ts EventPrinter). */
import { describe, expect, it } from 'vitest';
import { EventPrinter } from '../../src/cli/watch.js';

function printer(json = false) {
  const lines: string[] = [];
  let clock = Date.UTC(2026, 10, 22, 14, 2, 11);
  const p = new EventPrinter(
    json,
    (l) => lines.push(l),
    () => new Date(clock),
  );
  const send = (event: string, data: unknown, id = 1) => p.print({ id: String(id), event, data: JSON.stringify(data) });
  return { lines, send, advance: (ms: number) => (clock += ms) };
}

describe('netwarden watch lines', () => {
  it('describes scans, changes and devices in one line each', () => {
    const { lines, send } = printer();
    send('scan_started', { scan_id: 12, subnet: '192.168.1.0/24', profile: 'normal', scan_type: 'network' });
    send('change', {
      severity: 'high',
      change_type: 'port_opened',
      device_ip: '10.0.0.5',
      port: 3389,
      protocol: 'tcp',
      description: 'Port 3389/tcp (ms-wbt-server) opened on 10.0.0.5; it is a high-risk service',
    });
    send('change', {
      severity: 'low',
      change_type: 'device_removed',
      device_ip: '10.0.0.7',
      port: null,
      protocol: null,
      description: 'Device 10.0.0.7 was not found in this scan',
    });
    send('device_updated', {
      id: 7,
      ip_address: '10.0.0.7',
      label: 'NAS',
      online: false,
      missed_scans: 2,
      risk_level: 'low',
      risk_score: 5,
      open_ports: [22, 80],
    });
    send('scan_finished', { scan_id: 12, status: 'failed', subnet: '192.168.1.0/24', error: 'Scan engine nmap failed: boom\u001b[31m' });
    send('scan_finished', { scan_id: 13, status: 'cancelled', subnet: '10.0.0.5/32', error: 'Cancelled' });
    send('something_new', { a: 1 });
    // Times are local: only the format is fixed.
    expect(lines.every((l) => /^\d\d:\d\d:\d\d /.test(l))).toBe(true);
    expect(lines.map((l) => l.slice(9))).toEqual([
      'scan 12 started 192.168.1.0/24 (normal)',
      'change high port_opened 10.0.0.5 3389/tcp Port 3389/tcp (ms-wbt-server) opened on 10.0.0.5; it is a high-risk service',
      'change low device_removed 10.0.0.7 Device 10.0.0.7 was not found in this scan',
      'device 7 10.0.0.7 "NAS" offline (missed 2 scans), risk low (5), open ports 22,80',
      // Control characters from the server never reach the terminal.
      'scan 12 failed 192.168.1.0/24: Scan engine nmap failed: boom?[31m',
      'scan 13 cancelled 10.0.0.5/32: Cancelled',
      'something_new {"a":1}',
    ]);
  });

  it('says in words when a device is new, goes offline, comes back, and when its risk goes down or up', () => {
    const { lines, send } = printer();
    const nas = { id: 7, ip_address: '10.0.0.7', label: 'NAS', hostname: 'nas.lan', vendor: 'Synology' };
    send('device_new', { id: 9, ip_address: '10.0.0.9', label: null, hostname: null, vendor: 'Espressif' });
    send('device_offline', { device: nas, last_seen: '2026-11-22T12:00:00.000Z', away_seconds: 3600 });
    send('device_online', { device: { ...nas, label: null }, last_seen: '2026-11-22T12:00:00.000Z', away_seconds: 12_000 });
    // Telnet closed: good news, not a port gone.
    send('risk_changed', {
      device_id: 5,
      ip_address: '10.0.0.5',
      name: 'printer',
      before: { level: 'critical', score: 100 },
      after: { level: 'low', score: 5 },
      reason: 'scan',
    });
    send('risk_changed', {
      device_id: 5,
      ip_address: '10.0.0.5',
      name: null,
      before: { level: 'low', score: 5 },
      after: { level: 'high', score: 60 },
      reason: 'acceptance_expired',
    });
    expect(lines.map((l) => l.slice(9))).toEqual([
      'new device 9 10.0.0.9 (Espressif): acknowledge it if it is yours',
      'device 7 10.0.0.7 "NAS" went offline, last seen 2026-11-22T12:00:00.000Z',
      'device 7 10.0.0.7 (nas.lan) is back online after 3 h 20 min away',
      'risk of device 5 10.0.0.5 "printer" went down: critical (100) -> low (5), after a scan',
      'risk of device 5 10.0.0.5 went up: low (5) -> high (60), an acceptance expired',
    ]);
  });

  it('prints a scan’s progress when its phase changes, else at most every 5 s', () => {
    const { lines, send, advance } = printer();
    const progress = (phase: string, percent: number) =>
      send('scan_progress', { scan_id: 3, progress: { phase, percent, hosts_found: 2, hosts_done: 1, eta_seconds: null } });
    progress('discovery', 10);
    advance(1000);
    progress('discovery', 20);
    advance(1000);
    progress('ports', 5);
    advance(5000);
    progress('ports', 60);
    expect(lines.map((l) => l.slice(9))).toEqual([
      'scan 3 discovery 10% (2 hosts found, 1 done)',
      'scan 3 ports 5% (2 hosts found, 1 done)',
      'scan 3 ports 60% (2 hosts found, 1 done)',
    ]);
  });

  it('prints every event as a JSON line with --json', () => {
    const { lines, send } = printer(true);
    send('scan_progress', { scan_id: 3, progress: { phase: 'discovery', percent: 1 } }, 41);
    send('scan_progress', { scan_id: 3, progress: { phase: 'discovery', percent: 2 } }, 42);
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { id: 41, event: 'scan_progress', data: { scan_id: 3, progress: { phase: 'discovery', percent: 1 } } },
      { id: 42, event: 'scan_progress', data: { scan_id: 3, progress: { phase: 'discovery', percent: 2 } } },
    ]);
  });
});
