/**
 * Realistic inventory written through the store layer, the way the scan pipeline writes it.
 * Tests derive every expected value from the returned `Seed` (never from hard-coded results).
 *
 * Timeline (relative to the moment of seeding, so trend windows stay meaningful):
 *   old     network scan of 192.168.50.0/24, completed 45 days ago (outside the default 30-day window)
 *   first   network scan of 192.168.50.0/24, completed 3 days ago
 *   failed  network scan of 192.168.50.0/24, failed 2 days ago
 *   second  network scan of 192.168.50.0/24, completed 20 hours ago
 *   device  device scan of 192.168.50.10, completed 6 hours ago
 * 192.168.50.x addresses are data only; nothing is ever contacted.
 */
import type { Insertable } from 'kysely';
import { ipv4ToInt } from '../../src/core/net.js';
import type { Store } from '../../src/store/index.js';
import type { TestDatabase } from './databases.js';
import { adminWithKey, startTestServer, type TestServer } from './server.js';
import type { CveMatchesTable, DeviceRow, NewChange, RiskFindingsTable, ScanRow } from '../../src/store/schema.js';

export const SUBNET = '192.168.50.0/24';

export const SCAN_KEYS = ['old', 'first', 'failed', 'second', 'device'] as const;
export type ScanKey = (typeof SCAN_KEYS)[number];

export const DEVICE_KEYS = ['router', 'nas', 'camera', 'laptop', 'printer', 'lab'] as const;
export type DeviceKey = (typeof DEVICE_KEYS)[number];

export interface SeedPort {
  port: number;
  protocol: string;
  state: string;
  service: string | null;
  product: string | null;
  version: string | null;
  extra_info: string | null;
  cpe: string[];
}

export interface SeedFinding {
  port: number | null;
  protocol: string | null;
  severity: string;
  score: number;
  service: string | null;
  title: string;
  description: string;
  recommendation: string;
  cve_ids: string[];
}

export interface SeedCve {
  cve_id: string;
  severity: string;
  cvss_score: number | null;
  description: string;
  remediation: string | null;
  references: string[];
  confidence: string;
  port: number | null;
  matched_product: string | null;
  matched_version: string | null;
}

/** How one scan saw one device. */
export interface SeedSnapshot {
  device: DeviceKey;
  ip: string;
  risk_level: string;
  risk_score: number;
  ports: { port: number; protocol: string; state: string; service: string | null; product: string | null; version: string | null }[];
}

export interface Seed {
  scans: Record<ScanKey, ScanRow>;
  devices: Record<DeviceKey, DeviceRow>;
  /** Current ports, findings and CVEs per device, in the order they were written. */
  ports: Record<DeviceKey, SeedPort[]>;
  findings: Record<DeviceKey, SeedFinding[]>;
  cves: Record<DeviceKey, SeedCve[]>;
  /** Per device: every IP it was seen at, with the first and last time. */
  ipHistory: Record<DeviceKey, { ip_address: string; first_seen: string; last_seen: string }[]>;
  snapshots: Record<ScanKey, SeedSnapshot[]>;
  /** Changes in insertion order (ascending id). */
  changes: NewChange[];
}

const HOUR_MS = 3_600_000;

interface ScanPlan {
  key: ScanKey;
  status: 'completed' | 'failed';
  profile: string;
  subnet: string;
  scan_type: 'network' | 'device';
  target: string | null;
  startedHoursAgo: number;
  duration: number;
  error: string | null;
  triggered_by: string | null;
}

const SCAN_PLANS: ScanPlan[] = [
  { key: 'old', status: 'completed', profile: 'normal', subnet: SUBNET, scan_type: 'network', target: null, startedHoursAgo: 45 * 24, duration: 95.2, error: null, triggered_by: 'schedule' },
  { key: 'first', status: 'completed', profile: 'normal', subnet: SUBNET, scan_type: 'network', target: null, startedHoursAgo: 72, duration: 184.5, error: null, triggered_by: 'admin' },
  {
    key: 'failed',
    status: 'failed',
    profile: 'quick',
    subnet: SUBNET,
    scan_type: 'network',
    target: null,
    startedHoursAgo: 48,
    duration: 3.1,
    error: 'Scan engine exited with code 1: permission denied',
    triggered_by: 'ci-key',
  },
  { key: 'second', status: 'completed', profile: 'intensive', subnet: SUBNET, scan_type: 'network', target: null, startedHoursAgo: 20, duration: 612, error: null, triggered_by: 'schedule' },
  {
    key: 'device',
    status: 'completed',
    profile: 'normal',
    subnet: '192.168.50.10/32',
    scan_type: 'device',
    target: '192.168.50.10',
    startedHoursAgo: 6,
    duration: 41.7,
    error: null,
    triggered_by: 'admin',
  },
];

const p = (
  port: number,
  protocol: string,
  state: string,
  service: string | null,
  product: string | null = null,
  version: string | null = null,
  cpe: string[] = [],
  extra_info: string | null = null,
): SeedPort => ({ port, protocol, state, service, product, version, extra_info, cpe });

/** Current ports, deliberately written out of order. */
const PORTS: Record<DeviceKey, SeedPort[]> = {
  router: [
    p(443, 'tcp', 'open', 'https', 'nginx', '1.24.0', ['cpe:/a:igor_sysoev:nginx:1.24.0']),
    p(22, 'tcp', 'filtered', 'ssh'),
    p(53, 'udp', 'open', 'domain', 'dnsmasq', '2.89', ['cpe:/a:thekelleys:dnsmasq:2.89']),
    p(80, 'tcp', 'open', 'http', 'lighttpd', '1.4.69'),
    p(53, 'tcp', 'open', 'domain', 'dnsmasq', '2.89', ['cpe:/a:thekelleys:dnsmasq:2.89']),
  ],
  nas: [
    p(5000, 'tcp', 'open', 'http', 'Synology DSM', '7.2', [], 'admin interface'),
    p(445, 'tcp', 'open', 'microsoft-ds', 'Samba smbd', '4.15.13', ['cpe:/a:samba:samba:4.15.13']),
    p(139, 'tcp', 'closed', 'netbios-ssn'),
    p(22, 'tcp', 'open', 'ssh', 'OpenSSH', '9.6', ['cpe:/a:openbsd:openssh:9.6', 'cpe:/o:linux:linux_kernel'], 'protocol 2.0'),
    p(21, 'tcp', 'open', 'ftp', 'vsftpd', '2.3.4', ['cpe:/a:vsftpd:vsftpd:2.3.4']),
  ],
  camera: [
    p(554, 'tcp', 'open', 'rtsp', 'Hikvision rtspd'),
    p(23, 'tcp', 'open', 'telnet', 'BusyBox telnetd', null, ['cpe:/a:busybox:busybox']),
    p(80, 'tcp', 'open', 'http', 'Hikvision Web Server'),
  ],
  laptop: [],
  printer: [p(9100, 'tcp', 'open', 'jetdirect'), p(631, 'tcp', 'open', 'ipp', 'CUPS', '2.4'), p(80, 'tcp', 'open', 'http', 'HP HTTP Server')],
  lab: [p(8080, 'tcp', 'open', 'http-proxy', 'Jetty', '9.4.51')],
};

const f = (
  port: number | null,
  severity: string,
  score: number,
  service: string | null,
  title: string,
  recommendation: string,
  cve_ids: string[] = [],
): SeedFinding => ({
  port,
  protocol: port === null ? null : 'tcp',
  severity,
  score,
  service,
  title,
  description: `${title} (detected on ${port === null ? 'the host' : `port ${port}`})`,
  recommendation,
  cve_ids,
});

/** Findings, deliberately written out of severity order. */
const FINDINGS: Record<DeviceKey, SeedFinding[]> = {
  router: [f(53, 'info', 0, 'domain', 'DNS resolver reachable from the LAN', 'No action needed on a router')],
  nas: [
    f(22, 'low', 5, 'ssh', 'SSH exposed', 'Allow key-based authentication only'),
    f(5000, 'high', 20, 'http', 'NAS admin interface exposed', 'Restrict the admin interface to a management VLAN'),
    f(5000, 'medium', 10, 'http', 'Web interface without TLS', 'Enable HTTPS and redirect HTTP'),
    f(21, 'critical', 40, 'ftp', 'vsftpd 2.3.4 backdoor', 'Remove vsftpd 2.3.4 and disable FTP', ['CVE-2011-2523']),
    f(445, 'high', 25, 'microsoft-ds', 'SMB file sharing exposed', 'Limit SMB to trusted hosts and require SMB3', ['CVE-2022-32742']),
  ],
  camera: [
    f(554, 'medium', 10, 'rtsp', 'Unauthenticated RTSP stream', 'Require authentication on the video stream'),
    f(23, 'high', 30, 'telnet', 'Telnet enabled', 'Disable telnet; use SSH if remote access is needed'),
  ],
  laptop: [],
  printer: [
    f(631, 'low', 5, 'ipp', 'IPP printing exposed', 'Restrict printing to the local subnet'),
    f(9100, 'medium', 15, 'jetdirect', 'Raw printing port open', 'Disable raw port 9100 printing'),
  ],
  lab: [f(8080, 'low', 10, 'http-proxy', 'Development server exposed', 'Bind development servers to localhost')],
};

const CVES: Record<DeviceKey, SeedCve[]> = {
  router: [],
  nas: [
    {
      cve_id: 'CVE-2022-32742',
      severity: 'medium',
      cvss_score: 4.3,
      description: 'Samba: server memory information leak via SMB1',
      remediation: 'Upgrade Samba to 4.16.4 or later',
      references: ['https://www.samba.org/samba/security/CVE-2022-32742.html'],
      confidence: 'likely',
      port: 445,
      matched_product: 'Samba smbd',
      matched_version: '4.15.13',
    },
    {
      cve_id: 'CVE-2023-51767',
      severity: 'medium',
      cvss_score: null,
      description: 'OpenSSH: row hammer authentication bypass (score not yet published)',
      remediation: null,
      references: [],
      confidence: 'likely',
      port: 22,
      matched_product: 'OpenSSH',
      matched_version: '9.6',
    },
    {
      cve_id: 'CVE-2011-2523',
      severity: 'critical',
      cvss_score: 9.8,
      description: 'vsftpd 2.3.4 contains a backdoor that opens a shell on port 6200',
      remediation: 'Replace the vsftpd binary with a clean release',
      references: ['https://nvd.nist.gov/vuln/detail/CVE-2011-2523', 'https://www.exploit-db.com/exploits/49757'],
      confidence: 'confirmed',
      port: 21,
      matched_product: 'vsftpd',
      matched_version: '2.3.4',
    },
  ],
  camera: [],
  laptop: [],
  printer: [],
  lab: [],
};

interface DevicePlan {
  key: DeviceKey;
  mac: string | null;
  mac_randomized: boolean;
  hostname: string | null;
  vendor: string | null;
  device_type: string | null;
  os_name: string | null;
  label: string | null;
  zone: string | null;
  is_trusted: boolean;
  notes: string | null;
  risk_level: string;
  risk_score: number;
  risk_summary: string | null;
  online: boolean;
}

const DEVICE_PLANS: DevicePlan[] = [
  {
    key: 'router',
    mac: 'f4:92:bf:10:20:01',
    mac_randomized: false,
    hostname: 'router.lan',
    vendor: 'Ubiquiti',
    device_type: 'router',
    os_name: 'Linux 5.4',
    label: 'Gateway',
    zone: 'Network',
    is_trusted: true,
    notes: 'Upstairs cupboard',
    risk_level: 'low',
    risk_score: 15,
    risk_summary: 'DNS and web management reachable from the LAN',
    online: true,
  },
  {
    key: 'nas',
    mac: '00:11:32:ab:cd:ef',
    mac_randomized: false,
    hostname: 'nas.lan',
    vendor: 'Synology',
    device_type: 'storage',
    os_name: 'Linux 4.4',
    label: 'File server',
    zone: 'Servers',
    is_trusted: true,
    notes: null,
    risk_level: 'critical',
    risk_score: 92,
    risk_summary: 'Backdoored FTP server and exposed SMB',
    online: true,
  },
  {
    key: 'camera',
    mac: 'c0:56:e3:33:44:55',
    mac_randomized: false,
    hostname: null,
    vendor: 'Hikvision',
    device_type: 'camera',
    os_name: null,
    label: null,
    zone: 'IoT',
    is_trusted: false,
    notes: null,
    risk_level: 'high',
    risk_score: 70,
    risk_summary: 'Telnet enabled',
    online: true,
  },
  {
    key: 'laptop',
    mac: 'da:a1:19:00:00:07',
    mac_randomized: true,
    hostname: 'anna-laptop',
    vendor: null,
    device_type: 'workstation',
    os_name: 'macOS 14',
    label: "Anna's laptop",
    zone: 'Workstations',
    is_trusted: true,
    notes: null,
    risk_level: 'none',
    risk_score: 0,
    risk_summary: null,
    online: false,
  },
  {
    key: 'printer',
    mac: null,
    mac_randomized: false,
    hostname: 'printer.lan',
    vendor: null,
    device_type: 'printer',
    os_name: null,
    label: null,
    zone: null,
    is_trusted: false,
    notes: null,
    risk_level: 'medium',
    risk_score: 40,
    risk_summary: 'Raw printing port open',
    online: true,
  },
  {
    key: 'lab',
    mac: '52:54:00:12:34:56',
    mac_randomized: false,
    hostname: 'lab-box',
    vendor: 'QEMU virtual NIC',
    device_type: 'server',
    os_name: 'Debian 12',
    label: 'Test VM',
    zone: 'Lab',
    is_trusted: false,
    notes: 'Temporary, delete after the migration',
    risk_level: 'low',
    risk_score: 10,
    risk_summary: 'Development server exposed',
    online: true,
  },
];

const snapPorts = (ports: SeedPort[]) =>
  ports.map(({ port, protocol, state, service, product, version }) => ({ port, protocol, state, service, product, version }));

/** What each scan saw: the NAS moved from .7 to .10 between the first and the second scan. */
const SNAPSHOTS: Record<ScanKey, SeedSnapshot[]> = {
  old: [
    { device: 'router', ip: '192.168.50.1', risk_level: 'low', risk_score: 15, ports: snapPorts(PORTS.router) },
    { device: 'nas', ip: '192.168.50.7', risk_level: 'medium', risk_score: 35, ports: snapPorts(PORTS.nas.filter((x) => x.port !== 21)) },
  ],
  first: [
    { device: 'laptop', ip: '192.168.50.100', risk_level: 'none', risk_score: 0, ports: [] },
    { device: 'camera', ip: '192.168.50.9', risk_level: 'high', risk_score: 70, ports: snapPorts(PORTS.camera) },
    { device: 'nas', ip: '192.168.50.7', risk_level: 'high', risk_score: 65, ports: snapPorts(PORTS.nas.filter((x) => x.port !== 21)) },
    { device: 'router', ip: '192.168.50.1', risk_level: 'low', risk_score: 15, ports: snapPorts([...PORTS.router, p(8080, 'tcp', 'open', 'http-proxy')]) },
  ],
  failed: [],
  second: [
    { device: 'lab', ip: '192.168.50.200', risk_level: 'low', risk_score: 10, ports: snapPorts(PORTS.lab) },
    { device: 'printer', ip: '192.168.50.2', risk_level: 'medium', risk_score: 40, ports: snapPorts(PORTS.printer) },
    { device: 'camera', ip: '192.168.50.9', risk_level: 'high', risk_score: 70, ports: snapPorts(PORTS.camera) },
    { device: 'nas', ip: '192.168.50.10', risk_level: 'critical', risk_score: 92, ports: snapPorts(PORTS.nas) },
    { device: 'router', ip: '192.168.50.1', risk_level: 'low', risk_score: 15, ports: snapPorts(PORTS.router) },
  ],
  device: [{ device: 'nas', ip: '192.168.50.10', risk_level: 'critical', risk_score: 92, ports: snapPorts(PORTS.nas) }],
};

type ChangePlan = Omit<NewChange, 'scan_id' | 'device_id' | 'device_ip' | 'device_mac' | 'detected_at'> & {
  scan: ScanKey;
  device: DeviceKey;
};

const CHANGE_PLANS: ChangePlan[] = [
  { scan: 'first', device: 'camera', change_type: 'device_added', severity: 'medium', port: null, protocol: null, old_value: null, new_value: null, description: 'New device 192.168.50.9 (Hikvision)' },
  { scan: 'first', device: 'laptop', change_type: 'device_added', severity: 'info', port: null, protocol: null, old_value: null, new_value: null, description: 'New device 192.168.50.100 (anna-laptop)' },
  { scan: 'first', device: 'router', change_type: 'port_opened', severity: 'medium', port: 8080, protocol: 'tcp', old_value: null, new_value: 'http-proxy', description: 'Port 8080/tcp opened on 192.168.50.1' },
  { scan: 'second', device: 'printer', change_type: 'device_added', severity: 'medium', port: null, protocol: null, old_value: null, new_value: null, description: 'New device 192.168.50.2 (printer.lan)' },
  { scan: 'second', device: 'lab', change_type: 'device_added', severity: 'low', port: null, protocol: null, old_value: null, new_value: null, description: 'New device 192.168.50.200 (lab-box)' },
  { scan: 'second', device: 'laptop', change_type: 'device_removed', severity: 'low', port: null, protocol: null, old_value: null, new_value: null, description: 'Device 192.168.50.100 (anna-laptop) not seen' },
  { scan: 'second', device: 'nas', change_type: 'port_opened', severity: 'critical', port: 21, protocol: 'tcp', old_value: null, new_value: 'ftp vsftpd 2.3.4', description: 'Port 21/tcp opened on 192.168.50.10' },
  { scan: 'second', device: 'camera', change_type: 'port_opened', severity: 'high', port: 23, protocol: 'tcp', old_value: null, new_value: 'telnet', description: 'Port 23/tcp opened on 192.168.50.9' },
  { scan: 'second', device: 'router', change_type: 'port_closed', severity: 'info', port: 8080, protocol: 'tcp', old_value: 'http-proxy', new_value: null, description: 'Port 8080/tcp closed on 192.168.50.1' },
  { scan: 'second', device: 'nas', change_type: 'service_changed', severity: 'low', port: 22, protocol: 'tcp', old_value: 'OpenSSH 8.9', new_value: 'OpenSSH 9.6', description: 'Service on 22/tcp changed on 192.168.50.10' },
  { scan: 'device', device: 'nas', change_type: 'service_changed', severity: 'info', port: 5000, protocol: 'tcp', old_value: 'Synology DSM 7.1', new_value: 'Synology DSM 7.2', description: 'Service on 5000/tcp changed on 192.168.50.10' },
];

/** Writes the whole data set through `store` and returns what was written. */
export async function seedInventory(store: Store, now: number = Date.now()): Promise<Seed> {
  const scans = {} as Record<ScanKey, ScanRow>;
  for (const plan of SCAN_PLANS) {
    const startedMs = now - plan.startedHoursAgo * HOUR_MS;
    const started_at = new Date(startedMs).toISOString();
    const completed_at = new Date(startedMs + plan.duration * 1000).toISOString();
    const row = await store.scans.create({
      status: 'queued',
      profile: plan.profile,
      subnet: plan.subnet,
      scan_type: plan.scan_type,
      target: plan.target,
      created_at: started_at,
      devices_found: 0,
      triggered_by: plan.triggered_by,
    });
    await store.scans.update(row.id, { status: 'running', started_at });
    await store.scans.update(row.id, {
      status: plan.status,
      completed_at,
      duration_seconds: plan.duration,
      devices_found: SNAPSHOTS[plan.key].length,
      error: plan.error,
    });
    scans[plan.key] = (await store.scans.get(row.id)) as ScanRow;
  }

  // Where and when each device was seen, from the snapshots.
  const sightings = new Map<DeviceKey, { scan: ScanKey; ip: string; at: string }[]>();
  for (const key of SCAN_KEYS) {
    for (const snap of SNAPSHOTS[key]) {
      const list = sightings.get(snap.device) ?? [];
      list.push({ scan: key, ip: snap.ip, at: scans[key].completed_at as string });
      sightings.set(snap.device, list);
    }
  }

  const devices = {} as Record<DeviceKey, DeviceRow>;
  const ipHistory = {} as Seed['ipHistory'];
  for (const plan of DEVICE_PLANS) {
    const seen = sightings.get(plan.key) ?? [];
    const first = seen[0];
    const last = seen[seen.length - 1];
    const row = await store.devices.insert({
      identity: plan.mac ? `mac:${plan.mac}` : `ip:${last.ip}`,
      ip_address: last.ip,
      ip_sort: ipv4ToInt(last.ip),
      mac_address: plan.mac,
      mac_randomized: plan.mac_randomized ? 1 : 0,
      hostname: plan.hostname,
      vendor: plan.vendor,
      device_type: plan.device_type,
      os_name: plan.os_name,
      label: plan.label,
      zone: plan.zone,
      is_trusted: plan.is_trusted ? 1 : 0,
      notes: plan.notes,
      risk_level: plan.risk_level,
      risk_score: plan.risk_score,
      risk_summary: plan.risk_summary,
      first_seen: first.at,
      last_seen: last.at,
      last_scan_id: scans[last.scan].id,
      online: plan.online ? 1 : 0,
    });
    devices[plan.key] = row;
    for (const s of seen) await store.devices.recordIp(row.id, s.ip, s.at);
    const history = new Map<string, { ip_address: string; first_seen: string; last_seen: string }>();
    for (const s of seen) {
      const h = history.get(s.ip);
      if (h) h.last_seen = s.at;
      else history.set(s.ip, { ip_address: s.ip, first_seen: s.at, last_seen: s.at });
    }
    ipHistory[plan.key] = [...history.values()];

    const lastScanId = scans[last.scan].id;
    await store.devices.replacePorts(
      row.id,
      PORTS[plan.key].map((port) => ({ ...port, cpe: JSON.stringify(port.cpe), first_seen: first.at, last_seen: last.at })),
    );
    await store.devices.replaceFindings(
      row.id,
      FINDINGS[plan.key].map(
        (finding): Omit<Insertable<RiskFindingsTable>, 'device_id'> => ({ ...finding, scan_id: lastScanId, cve_ids: JSON.stringify(finding.cve_ids) }),
      ),
    );
    await store.devices.replaceCves(
      row.id,
      CVES[plan.key].map((cve): Omit<Insertable<CveMatchesTable>, 'device_id'> => ({ ...cve, scan_id: lastScanId, references: JSON.stringify(cve.references) })),
    );
  }

  for (const key of SCAN_KEYS) {
    for (const snap of SNAPSHOTS[key]) {
      const device = devices[snap.device];
      await store.devices.insertSnapshot({
        scan_id: scans[key].id,
        device_id: device.id,
        ip_address: snap.ip,
        ip_sort: ipv4ToInt(snap.ip),
        mac_address: device.mac_address,
        hostname: device.hostname,
        vendor: device.vendor,
        os_name: device.os_name,
        ports: JSON.stringify(snap.ports),
        open_port_count: snap.ports.filter((x) => x.state === 'open').length,
        risk_level: snap.risk_level,
        risk_score: snap.risk_score,
      });
    }
  }

  const changes: NewChange[] = CHANGE_PLANS.map(({ scan, device, ...change }) => {
    const snap = SNAPSHOTS[scan].find((s) => s.device === device);
    const ip = snap?.ip ?? (sightings.get(device) ?? []).filter((s) => s.at <= (scans[scan].completed_at as string)).pop()?.ip ?? null;
    return {
      ...change,
      scan_id: scans[scan].id,
      device_id: devices[device].id,
      device_ip: ip,
      device_mac: devices[device].mac_address,
      detected_at: scans[scan].completed_at as string,
    };
  });
  await store.changes.insertMany(changes);

  return {
    scans,
    devices,
    ports: PORTS,
    findings: FINDINGS,
    cves: CVES,
    ipHistory,
    snapshots: SNAPSHOTS,
    changes,
  };
}

/** Orders dotted IPv4 addresses numerically (independent of the code under test). */
export function compareIp(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 4; i++) if (pa[i] !== pb[i]) return pa[i] - pb[i];
  return 0;
}

/** Sorted, de-duplicated open port numbers of a port list. */
export function openPorts(ports: { port: number; state: string }[]): number[] {
  return [...new Set(ports.filter((x) => x.state === 'open').map((x) => x.port))].sort((a, b) => a - b);
}

/** Starts the real server over a fresh database, seeds it and returns the admin's API key (named `test-key`) and session cookie. */
export async function startSeededServer(database: TestDatabase): Promise<{ server: TestServer; key: string; cookie: string; seed: Seed }> {
  const server = await startTestServer(database);
  try {
    const { key, cookie } = await adminWithKey(server);
    const seed = await seedInventory(server.store);
    return { server, key, cookie, seed };
  } catch (err) {
    await server.close();
    throw err;
  }
}
