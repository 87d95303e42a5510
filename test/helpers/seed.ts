/**
 * A realistic inventory, written the way scans write it: each scan's hosts go through
 * `InventoryWriter` (discovery, ports, snapshots) and `ScanEvaluator` (risk, CVEs, changes against
 * the baseline), and the user's edits through `DeviceStore.updateUserFields`. Nothing here is a
 * hand-written result: risk, findings, CVE matches and changes are what the real code makes of
 * the ports below. Tests derive every expected value from the returned `Seed`.
 *
 * Timeline (relative to the moment of seeding, so trend windows stay meaningful):
 *   old     network scan of 192.168.50.0/24, completed 45 days ago (outside the default 30-day window)
 *   first   network scan of 192.168.50.0/24, completed 3 days ago
 *   failed  network scan of 192.168.50.0/24, failed 2 days ago
 *   second  network scan of 192.168.50.0/24, completed 20 hours ago
 *   device  device scan of 192.168.50.10, completed 6 hours ago
 * What changes along it: the camera, laptop and a proxy on the router appear in the first scan;
 * in the second the NAS moves from .7 to .10, opens FTP and upgrades OpenSSH, the camera opens
 * telnet, the router's proxy is gone, the laptop is missing (offline) and the printer and lab VM
 * appear; the device scan finds a newer NAS admin interface.
 * 192.168.50.x addresses are data only; nothing is ever contacted.
 */
import { matchCves, type CveMatch } from '../../src/core/cve/index.js';
import type { DiscoveredHost, ScannedHost, ScannedPort } from '../../src/core/model.js';
import { isOpenPort } from '../../src/core/model.js';
import type { PortRange } from '../../src/core/net.js';
import { defaultSettings } from '../../src/core/settings.js';
import { assessRisk, compileRiskRules, type RiskAssessment } from '../../src/core/risk.js';
import { normalizePort } from '../../src/core/services.js';
import { BUILTIN_FREQUENT_PORTS, scanPortList } from '../../src/core/top-ports.js';
import { CveDatabase } from '../../src/cve/dataset.js';
import { ScanEvaluator } from '../../src/scan/evaluate.js';
import type { Store } from '../../src/store/index.js';
import { InventoryWriter } from '../../src/store/inventory.js';
import type { ChangeRow, DeviceRow, ScanRow } from '../../src/store/schema.js';
import type { TestDatabase } from './databases.js';
import { adminWithKey, startTestServer, type TestServer } from './server.js';

export const SUBNET = '192.168.50.0/24';

export const SCAN_KEYS = ['old', 'first', 'failed', 'second', 'device'] as const;
export type ScanKey = (typeof SCAN_KEYS)[number];

export const DEVICE_KEYS = ['router', 'nas', 'camera', 'laptop', 'printer', 'lab'] as const;
export type DeviceKey = (typeof DEVICE_KEYS)[number];

/** A port as the scan engine reported it. */
export type SeedPort = ScannedPort;

/** A device's risk and CVE matches, as the real rules and the shipped CVE data assess its ports. */
export interface SeedAssessment {
  risk: RiskAssessment;
  cves: CveMatch[];
}

/** How one scan saw one device, with the risk the real code gives those ports. */
export interface SeedSnapshot {
  device: DeviceKey;
  ip: string;
  ports: SeedPort[];
  risk_level: string;
  risk_score: number;
}

export interface Seed {
  /** Scans and devices as stored once everything is written. */
  scans: Record<ScanKey, ScanRow>;
  devices: Record<DeviceKey, DeviceRow>;
  /** Each device's ports as the last scan that saw it reported them (closed ones included). */
  ports: Record<DeviceKey, SeedPort[]>;
  /** Each device's current risk and CVEs, computed from `ports` by the real risk and CVE code. */
  assessments: Record<DeviceKey, SeedAssessment>;
  /** Per device: every IP it was seen at, with the first and last time. */
  ipHistory: Record<DeviceKey, { ip_address: string; first_seen: string; last_seen: string }[]>;
  /** What each scan saw, in the order the engine reported it (address order). */
  snapshots: Record<ScanKey, SeedSnapshot[]>;
  /** The changes the evaluator detected, as stored, in ascending id order. */
  changes: ChangeRow[];
  /**
   * Each device's presence after the timeline, worked out here from the plan alone (with the
   * default presence.offline_after_scans of 1): consecutive completed network scans that missed
   * it, and whether it is online.
   */
  presence: Record<DeviceKey, { online: boolean; missed_scans: number }>;
}

const HOUR_MS = 3_600_000;

interface ScanPlan {
  key: ScanKey;
  status: 'completed' | 'failed';
  profile: 'quick' | 'normal' | 'intensive';
  subnet: string;
  scan_type: 'network' | 'device';
  target: string | null;
  startedHoursAgo: number;
  duration: number;
  error: string | null;
  triggered_by: string | null;
}

const SCAN_PLANS: ScanPlan[] = [
  {
    key: 'old',
    status: 'completed',
    profile: 'normal',
    subnet: SUBNET,
    scan_type: 'network',
    target: null,
    startedHoursAgo: 45 * 24,
    duration: 95.2,
    error: null,
    triggered_by: 'schedule',
  },
  {
    key: 'first',
    status: 'completed',
    profile: 'normal',
    subnet: SUBNET,
    scan_type: 'network',
    target: null,
    startedHoursAgo: 72,
    duration: 184.5,
    error: null,
    triggered_by: 'admin',
  },
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
  {
    key: 'second',
    status: 'completed',
    profile: 'intensive',
    subnet: SUBNET,
    scan_type: 'network',
    target: null,
    startedHoursAgo: 20,
    duration: 612,
    error: null,
    triggered_by: 'schedule',
  },
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
  protocol: 'tcp' | 'udp',
  state: string,
  service: string | null,
  product: string | null = null,
  version: string | null = null,
  cpe: string[] = [],
  extra_info: string | null = null,
): SeedPort => ({ port, protocol, state, service, product, version, extra_info, cpe });

/** Ports as the engine reports them, deliberately not in port order; each scan's variant below. */
const ROUTER = [
  p(443, 'tcp', 'open', 'https', 'nginx', '1.26.1', ['cpe:/a:igor_sysoev:nginx:1.26.1']),
  p(22, 'tcp', 'filtered', 'ssh'),
  p(53, 'udp', 'open', 'domain', 'dnsmasq', '2.89', ['cpe:/a:thekelleys:dnsmasq:2.89']),
  p(80, 'tcp', 'open', 'http', 'lighttpd', '1.4.69'),
  p(53, 'tcp', 'open', 'domain', 'dnsmasq', '2.89', ['cpe:/a:thekelleys:dnsmasq:2.89']),
];
const ROUTER_WITH_PROXY = [...ROUTER, p(8080, 'tcp', 'open', 'http-proxy')];

const nas = ({ dsm, ssh, ftp }: { dsm: string; ssh: string; ftp: boolean }) => [
  p(5000, 'tcp', 'open', 'http', 'Synology DSM', dsm, [], 'admin interface'),
  p(445, 'tcp', 'open', 'microsoft-ds', 'Samba smbd', '4.15.13', ['cpe:/a:samba:samba:4.15.13']),
  p(139, 'tcp', 'closed', 'netbios-ssn'),
  p(22, 'tcp', 'open', 'ssh', 'OpenSSH', ssh, [`cpe:/a:openbsd:openssh:${ssh}`, 'cpe:/o:linux:linux_kernel'], 'protocol 2.0'),
  ...(ftp ? [p(21, 'tcp', 'open', 'ftp', 'vsftpd', '2.3.4', ['cpe:/a:vsftpd:vsftpd:2.3.4'])] : []),
];
const NAS_BEFORE = nas({ dsm: '7.1', ssh: '8.9', ftp: false });
const NAS_SECOND = nas({ dsm: '7.1', ssh: '9.6', ftp: true });
const NAS_NOW = nas({ dsm: '7.2', ssh: '9.6', ftp: true });

const CAMERA_WITHOUT_TELNET = [p(554, 'tcp', 'open', 'rtsp', 'Hikvision rtspd'), p(80, 'tcp', 'open', 'http', 'Hikvision Web Server')];
const CAMERA = [
  CAMERA_WITHOUT_TELNET[0],
  p(23, 'tcp', 'open', 'telnet', 'BusyBox telnetd', null, ['cpe:/a:busybox:busybox']),
  CAMERA_WITHOUT_TELNET[1],
];

const PRINTER = [p(9100, 'tcp', 'open', 'jetdirect'), p(631, 'tcp', 'open', 'ipp', 'CUPS', '2.4'), p(80, 'tcp', 'open', 'http', 'HP HTTP Server')];
const LAB = [p(8080, 'tcp', 'open', 'http-proxy', 'Jetty', '9.4.51'), p(8888, 'tcp', 'open', 'http', 'Tornado httpd', '6.4')];

/** What the engine tells about a device besides its ports, and what the user sets after its first scan. */
interface DevicePlan {
  key: DeviceKey;
  host: Omit<DiscoveredHost, 'ip'>;
  os_name: string | null;
  device_type: string | null;
  user: { label: string | null; zone: string | null; is_trusted: boolean; notes: string | null };
}

const DEVICE_PLANS: Record<DeviceKey, DevicePlan> = {
  router: {
    key: 'router',
    host: { mac: 'F4:92:BF:10:20:01', vendor: 'Ubiquiti', hostname: 'router.lan' },
    os_name: 'Linux 5.4',
    device_type: 'router',
    user: { label: 'Gateway', zone: 'Network', is_trusted: true, notes: 'Upstairs cupboard' },
  },
  nas: {
    key: 'nas',
    host: { mac: '00:11:32:AB:CD:EF', vendor: 'Synology', hostname: 'nas.lan' },
    os_name: 'Linux 4.4',
    device_type: 'storage',
    user: { label: 'File server', zone: 'Servers', is_trusted: true, notes: null },
  },
  camera: {
    key: 'camera',
    host: { mac: 'C0:56:E3:33:44:55', vendor: 'Hikvision', hostname: null },
    os_name: null,
    device_type: 'camera',
    user: { label: null, zone: 'IoT', is_trusted: false, notes: null },
  },
  laptop: {
    key: 'laptop',
    // Locally administered (randomised) MAC: no vendor.
    host: { mac: 'DA:A1:19:00:00:07', vendor: null, hostname: 'anna-laptop' },
    os_name: 'macOS 14',
    device_type: 'workstation',
    user: { label: "Anna's laptop", zone: 'Workstations', is_trusted: true, notes: null },
  },
  printer: {
    key: 'printer',
    // Seen without a MAC: its identity is its address.
    host: { mac: null, vendor: null, hostname: 'printer.lan' },
    os_name: null,
    device_type: 'printer',
    user: { label: null, zone: null, is_trusted: false, notes: null },
  },
  lab: {
    key: 'lab',
    host: { mac: '52:54:00:12:34:56', vendor: 'QEMU virtual NIC', hostname: 'lab-box' },
    os_name: 'Debian 12',
    device_type: 'server',
    user: { label: 'Test VM', zone: 'Lab', is_trusted: false, notes: 'Temporary, delete after the migration' },
  },
};

/** What each scan saw, in address order as engines report it. */
const SIGHTINGS: Record<ScanKey, { device: DeviceKey; ip: string; ports: SeedPort[] }[]> = {
  old: [
    { device: 'router', ip: '192.168.50.1', ports: ROUTER },
    { device: 'nas', ip: '192.168.50.7', ports: NAS_BEFORE },
  ],
  first: [
    { device: 'router', ip: '192.168.50.1', ports: ROUTER_WITH_PROXY },
    { device: 'nas', ip: '192.168.50.7', ports: NAS_BEFORE },
    { device: 'camera', ip: '192.168.50.9', ports: CAMERA_WITHOUT_TELNET },
    { device: 'laptop', ip: '192.168.50.100', ports: [] },
  ],
  failed: [],
  second: [
    { device: 'router', ip: '192.168.50.1', ports: ROUTER },
    { device: 'printer', ip: '192.168.50.2', ports: PRINTER },
    { device: 'camera', ip: '192.168.50.9', ports: CAMERA },
    { device: 'nas', ip: '192.168.50.10', ports: NAS_SECOND },
    { device: 'lab', ip: '192.168.50.200', ports: LAB },
  ],
  device: [{ device: 'nas', ip: '192.168.50.10', ports: NAS_NOW }],
};

let cveIndex: ReturnType<CveDatabase['index']> | null = null;

/**
 * Risk and CVE matches of a device with these ports, by the real risk rules and the shipped CVE
 * data: what `ScanEvaluator` computes, here computed apart from the store so tests can check it.
 */
export function assessPorts(ports: readonly SeedPort[], osName: string | null): SeedAssessment {
  cveIndex ??= new CveDatabase(null).index();
  // As evaluation sees them: raw products read, a web server named http-proxy a web server (core/services.ts).
  const evaluated = ports.map(normalizePort);
  const cves = matchCves(evaluated.filter(isOpenPort), cveIndex, { os_name: osName });
  return { risk: assessRisk(evaluated, cves, compileRiskRules([])), cves };
}

/** The ports a scan of this profile covers, as the scan manager chooses them. */
function portList(profile: ScanPlan['profile'], configuredRange: string): PortRange[] {
  // The seed's scans ran with scanning.top_ports at its default (8080 is among the top ports), ranked by the built-in list.
  return scanPortList({ port_range: configuredRange, top_ports: defaultSettings().scanning.top_ports }, profile, BUILTIN_FREQUENT_PORTS);
}

/** Replays the timeline through the scan pipeline's writers into `store` and returns what was written. */
export async function seedInventory(store: Store, now: number = Date.now()): Promise<Seed> {
  const inventory = new InventoryWriter(store.db, () => store.touch());
  const evaluator = new ScanEvaluator(store);
  const settings = await store.settings.get();
  // The seed's assessments use the built-in rules; a store with rules of its own would disagree.
  if (settings.scanning.risk_rules.length > 0) throw new Error('seedInventory expects the built-in risk rules only');

  const ids = new Map<DeviceKey, number>();
  const scanIds = {} as Record<ScanKey, number>;
  for (const plan of SCAN_PLANS) {
    const startedMs = now - plan.startedHoursAgo * HOUR_MS;
    const startedAt = new Date(startedMs).toISOString();
    const at = new Date(startedMs + plan.duration * 1000).toISOString();
    const created = await store.scans.create({
      status: 'queued',
      profile: plan.profile,
      subnet: plan.subnet,
      scan_type: plan.scan_type,
      target: plan.target,
      created_at: startedAt,
      devices_found: 0,
      triggered_by: plan.triggered_by,
    });
    scanIds[plan.key] = created.id;
    await store.scans.update(created.id, { status: 'running', started_at: startedAt });
    if (plan.status === 'failed') {
      await store.scans.update(created.id, { status: 'failed', completed_at: at, duration_seconds: plan.duration, error: plan.error });
      continue;
    }

    const sightings = SIGHTINGS[plan.key];
    const hosts: ScannedHost[] = sightings.map(({ device, ip, ports }) => {
      const { host, os_name, device_type } = DEVICE_PLANS[device];
      return { ...host, ip, os_name, device_type, ports };
    });
    const { seen, notes } = await inventory.recordDiscovery(created.id, hosts, at);
    if (notes.length > 0 || seen.length !== hosts.length)
      throw new Error(`seed: identity resolution did not place every host: ${JSON.stringify(notes)}`);
    const seenIds = seen.map((s) => s.deviceId);
    const deviceAt = new Map(seen.map((s) => [s.ip, s.deviceId]));
    await inventory.recordPorts(
      hosts.map((host) => ({ deviceId: deviceAt.get(host.ip)!, host })),
      at,
    );
    const scan = (await store.scans.get(created.id)) as ScanRow;
    // Presence (online, missed scans) is decided here, as the scan manager decides it on completion.
    await evaluator.evaluate({
      scan,
      seenDeviceIds: seenIds,
      portsScanned: plan.profile !== 'quick',
      portList: portList(plan.profile, settings.scanning.port_range),
      at,
    });
    await inventory.recordSnapshots(created.id, seenIds);
    await store.scans.update(created.id, { status: 'completed', completed_at: at, duration_seconds: plan.duration, devices_found: seen.length });

    // The user labels what a scan found for the first time.
    for (const { device, ip } of sightings) {
      if (ids.has(device)) continue;
      ids.set(device, deviceAt.get(ip)!);
      await store.devices.updateUserFields(deviceAt.get(ip)!, DEVICE_PLANS[device].user);
    }
  }

  const scans = {} as Seed['scans'];
  for (const key of SCAN_KEYS) scans[key] = (await store.scans.get(scanIds[key])) as ScanRow;
  const devices = {} as Seed['devices'];
  const ports = {} as Seed['ports'];
  const assessments = {} as Seed['assessments'];
  const ipHistory = {} as Seed['ipHistory'];
  for (const key of DEVICE_KEYS) {
    devices[key] = (await store.devices.getRow(ids.get(key)!)) as DeviceRow;
    const seenIn = SCAN_KEYS.flatMap((s) => SIGHTINGS[s].filter((x) => x.device === key).map((x) => ({ ...x, at: scans[s].completed_at as string })));
    ports[key] = seenIn[seenIn.length - 1].ports;
    assessments[key] = assessPorts(ports[key], DEVICE_PLANS[key].os_name);
    const history = new Map<string, { ip_address: string; first_seen: string; last_seen: string }>();
    for (const s of seenIn) {
      const h = history.get(s.ip);
      if (h) h.last_seen = s.at;
      else history.set(s.ip, { ip_address: s.ip, first_seen: s.at, last_seen: s.at });
    }
    ipHistory[key] = [...history.values()];
  }
  const snapshots = {} as Seed['snapshots'];
  for (const key of SCAN_KEYS) {
    snapshots[key] = SIGHTINGS[key].map(({ device, ip, ports: seenPorts }) => {
      const { risk } = assessPorts(seenPorts, DEVICE_PLANS[device].os_name);
      return { device, ip, ports: seenPorts, risk_level: risk.level, risk_score: risk.score };
    });
  }
  const stored = await store.changes.list({ limit: 1000, offset: 0 });
  const changes = stored.rows.reverse();

  return { scans, devices, ports, assessments, ipHistory, snapshots, changes, presence: expectedPresence() };
}

/**
 * Presence by the rules of docs/scanning.md with offline_after_scans = 1, from the plan: a
 * completed scan that sees a device resets its count; a completed network scan of the subnet that
 * misses a device seen before adds one (all seeded addresses lie in SUBNET); failed scans and
 * device scans count no miss.
 */
function expectedPresence(): Seed['presence'] {
  const out = {} as Seed['presence'];
  for (const plan of SCAN_PLANS) {
    if (plan.status !== 'completed') continue;
    const seenNow = new Set(SIGHTINGS[plan.key].map((s) => s.device));
    for (const key of DEVICE_KEYS) {
      if (seenNow.has(key)) out[key] = { online: true, missed_scans: 0 };
      else if (out[key] && plan.scan_type === 'network') {
        const missed = out[key].missed_scans + 1;
        out[key] = { online: missed < 1, missed_scans: missed };
      }
    }
  }
  return out;
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
