// A deterministic, realistic device inventory (addresses in 10.0.0.0/8, vendors, ports, risk),
// written straight into a store. Nothing here touches the network: the addresses are only data.
import { mulberry32 } from './prng.mjs';

const OUIS = [
  ['3C:22:FB', 'Apple, Inc.', 'phone', 'iOS 17'],
  ['00:1B:63', 'Apple, Inc.', 'laptop', 'macOS 14'],
  ['B8:27:EB', 'Raspberry Pi Foundation', 'server', 'Linux 6.1'],
  ['D8:3A:DD', 'Raspberry Pi Trading Ltd', 'server', 'Linux 6.6'],
  ['00:50:56', 'VMware, Inc.', 'server', 'Linux 5.15'],
  ['00:0C:29', 'VMware, Inc.', 'server', 'Windows Server 2022'],
  ['F4:F5:D8', 'Google, Inc.', 'media', 'Android TV'],
  ['44:65:0D', 'Amazon Technologies Inc.', 'iot', 'Fire OS'],
  ['00:17:88', 'Philips Lighting BV', 'iot', null],
  ['18:B4:30', 'Nest Labs Inc.', 'iot', null],
  ['FC:EC:DA', 'Ubiquiti Inc', 'network', 'Linux 4.14'],
  ['AC:84:C6', 'TP-LINK TECHNOLOGIES CO.,LTD.', 'network', 'Linux 3.10'],
  ['00:11:32', 'Synology Incorporated', 'nas', 'DSM 7.2'],
  ['00:1E:0B', 'Hewlett Packard', 'printer', null],
  ['3C:52:82', 'Hewlett Packard', 'workstation', 'Windows 11'],
  ['F0:1F:AF', 'Dell Inc.', 'workstation', 'Windows 10'],
  ['00:04:F2', 'Polycom', 'voip', null],
  ['00:80:F0', 'Panasonic', 'camera', null],
];

const PORTS = [
  [22, 'ssh', 'OpenSSH', '8.9p1'],
  [80, 'http', 'nginx', '1.24.0'],
  [443, 'https', 'nginx', '1.24.0'],
  [53, 'domain', 'dnsmasq', '2.89'],
  [21, 'ftp', 'vsftpd', '3.0.5'],
  [23, 'telnet', null, null],
  [139, 'netbios-ssn', 'Samba smbd', '4.17'],
  [445, 'microsoft-ds', 'Samba smbd', '4.17'],
  [554, 'rtsp', null, null],
  [1883, 'mqtt', 'Mosquitto', '2.0.18'],
  [3306, 'mysql', 'MySQL', '8.0.36'],
  [3389, 'ms-wbt-server', 'Microsoft Terminal Services', null],
  [5000, 'upnp', null, null],
  [5432, 'postgresql', 'PostgreSQL DB', '16.2'],
  [8080, 'http-proxy', 'Apache Tomcat', '9.0.85'],
  [8443, 'https-alt', null, null],
  [9100, 'jetdirect', null, null],
  [62078, 'iphone-sync', null, null],
];

const RISK = [
  // level, cumulative weight, score range
  ['critical', 0.03, 80, 100],
  ['high', 0.1, 60, 79],
  ['medium', 0.25, 35, 59],
  ['low', 0.5, 10, 34],
  ['none', 1, 0, 0],
];

const ZONES = [null, null, null, 'office', 'iot', 'servers', 'guest', 'lab'];

function hex2(n) {
  return n.toString(16).toUpperCase().padStart(2, '0');
}

function isoDaysAgo(now, days) {
  return new Date(now - days * 86_400_000).toISOString();
}

/** The /21 networks `subnets` spreads devices over: 10.1.0.0/21, 10.2.0.0/21, … */
export function benchSubnets(subnets) {
  return Array.from({ length: subnets }, (_, i) => `10.${i + 1}.0.0/21`);
}

/**
 * Builds `count` devices with unique addresses spread over 10.0.0.0/8 (or, with `subnets`, over
 * that many /21 networks: benchSubnets), and their 0–5 open ports.
 */
function buildInventory(count, seed, scanId, subnets = 0) {
  const rand = mulberry32(seed);
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const now = Date.now();
  const usedIps = new Set();
  const usedMacs = new Set();
  const devices = [];
  const portsByIdentity = new Map();
  while (devices.length < count) {
    const ipSort = subnets
      ? (10 << 24) + ((1 + Math.floor(rand() * subnets)) << 16) + 1 + Math.floor(rand() * 2046)
      : (10 << 24) + Math.floor(rand() * 2 ** 24);
    const last = ipSort & 0xff;
    if ((!subnets && (last === 0 || last === 255)) || usedIps.has(ipSort)) continue;
    usedIps.add(ipSort);
    const ip = `10.${(ipSort >>> 16) & 0xff}.${(ipSort >>> 8) & 0xff}.${last}`;

    const r = rand();
    let mac = null;
    let vendor = null;
    let deviceType = null;
    let osName = null;
    let randomized = 0;
    if (r < 0.82) {
      const [oui, v, type, os] = pick(OUIS);
      do mac = `${oui}:${hex2(Math.floor(rand() * 256))}:${hex2(Math.floor(rand() * 256))}:${hex2(Math.floor(rand() * 256))}`;
      while (usedMacs.has(mac));
      vendor = v;
      deviceType = type;
      osName = os;
    } else if (r < 0.92) {
      // Locally administered (randomised) MAC: second nibble 2, 6, A or E; no vendor.
      do {
        const first = (Math.floor(rand() * 64) << 2) | 0x02;
        mac = [first, ...Array.from({ length: 5 }, () => Math.floor(rand() * 256))].map(hex2).join(':');
      } while (usedMacs.has(mac));
      randomized = 1;
      deviceType = rand() < 0.7 ? 'phone' : null;
    }
    if (mac) usedMacs.add(mac);

    const rr = rand();
    const [level, , lo, hi] = RISK.find(([, w]) => rr < w);
    const score = lo + Math.floor(rand() * (hi - lo + 1));
    const firstSeen = isoDaysAgo(now, 1 + rand() * 180);
    const lastSeen = isoDaysAgo(now, rand() * 1);
    const hostnameRoll = rand();
    const hostname = hostnameRoll < 0.6 ? `${(deviceType ?? 'host').replace(/[^a-z]/g, '')}-${ipSort.toString(36)}.lan` : null;
    const identity = mac ? `mac:${mac.toLowerCase()}` : `ip:${ip}`;
    devices.push({
      identity,
      ip_address: ip,
      ip_sort: ipSort,
      mac_address: mac,
      mac_randomized: randomized,
      hostname,
      vendor,
      device_type: deviceType,
      os_name: osName,
      label: rand() < 0.1 ? `Device ${devices.length + 1}` : null,
      zone: pick(ZONES),
      is_trusted: rand() < 0.3 ? 1 : 0,
      notes: null,
      risk_level: level,
      risk_score: score,
      risk_summary: level === 'none' ? null : `${level} risk: exposed services`,
      first_seen: firstSeen,
      last_seen: lastSeen,
      last_scan_id: scanId,
      online: rand() < 0.7 ? 1 : 0,
    });

    const portCount = Math.floor(rand() * 6); // 0–5
    const chosen = new Set();
    while (chosen.size < portCount) chosen.add(pick(PORTS));
    portsByIdentity.set(
      identity,
      [...chosen].map(([port, service, product, version]) => ({
        port,
        protocol: 'tcp',
        state: 'open',
        service,
        product,
        version,
        extra_info: null,
        cpe: product ? JSON.stringify([`cpe:/a:${product.toLowerCase().replace(/[^a-z0-9]+/g, '_')}:${version ?? ''}`]) : '[]',
        first_seen: firstSeen,
        last_seen: lastSeen,
      })),
    );
  }
  return { devices, portsByIdentity };
}

/**
 * Inserts a completed scan and `count` devices with their ports straight into the store, in one
 * transaction. Used by the HTTP benchmark, the web UI benchmark and the UI's 10,000-device test.
 * `options.subnets`: spread the devices over that many /21 networks (benchSubnets), each with a
 * completed network scan of its own (the views benchmark's map and port matrix).
 */
export async function seedInventory(store, count, seedValue = 1, options = {}) {
  const subnets = options.subnets ?? 0;
  const dialect = store.dialect;
  const started = performance.now();
  const now = new Date().toISOString();
  let portRows = 0;
  await store.db.transaction().execute(async (trx) => {
    const scan = await trx
      .insertInto('scans')
      .values({
        status: 'completed',
        profile: 'standard',
        subnet: '10.0.0.0/8',
        scan_type: 'network',
        target: null,
        created_at: now,
        started_at: now,
        completed_at: now,
        duration_seconds: 1800,
        devices_found: count,
        error: null,
        triggered_by: 'bench',
        progress: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const { devices, portsByIdentity } = buildInventory(count, seedValue, scan.id, subnets);
    for (const subnet of benchSubnets(subnets)) {
      const low = subnet
        .split('/')[0]
        .split('.')
        .reduce((acc, octet) => acc * 256 + Number(octet), 0);
      await trx
        .insertInto('scans')
        .values({
          status: 'completed',
          profile: 'standard',
          subnet,
          scan_type: 'network',
          target: null,
          created_at: now,
          started_at: now,
          completed_at: now,
          duration_seconds: 60,
          devices_found: 0,
          triggered_by: 'bench',
          target_low: low,
          target_high: low + 2047,
        })
        .execute();
    }
    // 21 columns × 500 rows stays far below SQLite's and PostgreSQL's bound-parameter limits.
    for (let i = 0; i < devices.length; i += 500) {
      await trx
        .insertInto('devices')
        .values(devices.slice(i, i + 500))
        .execute();
    }
    const ids = await trx.selectFrom('devices').select(['id', 'identity']).execute();
    const ports = [];
    for (const { id, identity } of ids) {
      for (const p of portsByIdentity.get(identity) ?? []) ports.push({ ...p, device_id: id });
    }
    portRows = ports.length;
    for (let i = 0; i < ports.length; i += 1000) {
      await trx
        .insertInto('ports')
        .values(ports.slice(i, i + 1000))
        .execute();
    }
  });
  // A long-running PostgreSQL would have vacuumed and analysed these tables by now; do it here
  // rather than let autovacuum start during a measured run.
  if (dialect === 'postgres') {
    const { sql } = await import('kysely');
    await sql`vacuum analyze devices, ports, scans`.execute(store.db);
  }
  return { devices: count, ports: portRows, ms: Math.round(performance.now() - started) };
}
