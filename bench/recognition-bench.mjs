#!/usr/bin/env node
// Recognition benchmark (issue 21): what recognising devices costs on top of what a scan already
// records, and what the recognition probes add to a scan on the namespace lab.
//
//   npm run bench:recognition
//   flock /tmp/nwlab.lock npm run bench:recognition     (as root: the lab part too)
//
// 1. CPU, 10,000 devices (BENCH_DEVICES) with generated probe results (the same every run, seeded):
//    NAS, routers behind MiniUPnPd, phones, Windows PCs, printers, cameras, Linux servers, TVs and
//    unknown IoT boxes, each device with keys of its own (SSH host key, TLS key, UPnP UDN, SNMP
//    engine ID, mDNS and NetBIOS names, MAC).
//    - core: `recognitionOf` (src/scan/identify.ts: recognise() over the fingerprint table, the
//      identity keys, the names) for every device, BENCH_RUNS (5) times after a warm-up; median CPU.
//    - shell, SQLite in a temporary directory, two scans of the same devices (a first sighting and a
//      rescan): today's bookkeeping (InventoryWriter.recordDiscovery + recordPorts,
//      ScanEvaluator.evaluate, recordSnapshots, as the scan recorder runs them), then recognition
//      and resolution as ScanRecorder.recordIdentity runs them: recognitionOf for every device; the
//      identity resolver (IdentityStore.keysOfHolders, DeviceMergeStore.separatedPairs,
//      resolveIdentities: core/resolver.ts); IdentityStore.recordRecognition with the resolver's
//      keys and decisions and the stored keys the resolution read. The CPU of each (process.cpuUsage: user + system), so the figures mean
//      something on a loaded machine; wall times beside them are noise there.
//    Aim: recognition and resolution ≤ 1 s of CPU per scan of 10,000 devices beyond the bookkeeping.
// 2. Lab (root, nmap, sshd, and test/lab/lab.sh able to build the namespace lab; skipped otherwise):
//    8 hosts at 10.66.0.11-18, each with a real OpenSSH server (lab.sh sshd: a host key of its own)
//    and the scan-lab listeners (HTTP, FTP or SMTP), four of them also answering mDNS, SSDP,
//    NetBIOS and SNMP (test/lab/responders.mjs in their namespaces).
//    A `normal` scan of 10.66.0.0/27 through the API (nmap engine, scanning.udp_ports' default), with
//    every probe (`probes_on`) and with none (`probes_off`, recognition.probes []), BENCH_SCAN_REPEAT
//    (3) times each in rotation after a warm-up; medians of the wall time and of the CPU time: this
//    process's (the server runs in it: process.cpuUsage) plus its reaped children's (nmap,
//    ssh-keyscan: cutime + cstime of /proc/self/stat). Aim: probes add ≤ 20 %. On a loaded machine
//    the wall times are noise; the CPU ratio is what holds, and the wall ratio needs a quiet re-run.
//
// Results: bench/results/recognition.json and .md. Exit status 1 when a sanity check fails (every
// device recognised as its profile says; every scan completed and found the lab's hosts; probes
// answered in the lab).
//
// Environment: BENCH_DEVICES (10000), BENCH_RUNS (5), BENCH_SCAN_REPEAT (3), BENCH_LAB=0 (skip the
// lab), BENCH_SKIP_BUILD=1 (use dist/ as it is).
//
// A quiet re-run (nothing else running; as root for the lab part):
//   flock /tmp/nwlab.lock npm run bench:recognition
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureBuilt, sanityChecks, writeResults } from './lib.mjs';
import { mulberry32 } from './prng.mjs';
import { median, onSignal, positive, round, run, scanFindings, startApiServer } from './scan-common.mjs';

// Scope guard: servers started by benchmarks may scan only loopback and the namespace lab.
process.env.NETWARDEN_SCAN_ALLOW ??= '127.0.0.0/8,10.66.0.0/24';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const dist = pathToFileURL(join(root, 'dist') + '/');
const LAB_SCRIPT = join(root, 'test', 'lab', 'lab.sh');
const RESPONDERS = join(root, 'test', 'lab', 'responders.mjs');

const DEVICES = positive('BENCH_DEVICES', 10_000);
const RUNS = positive('BENCH_RUNS', 5);
const REPEAT = positive('BENCH_SCAN_REPEAT', 3);
const AIM_CPU_S = 1;
const AIM_LAB_RATIO = 1.2;

const log = (...args) => console.error('[recognition-bench]', ...args);
const { failures, check } = sanityChecks(log);
const cpuSeconds = (u) => (u.user + u.system) / 1e6;

/** Clock ticks per second of /proc's CPU times (getconf CLK_TCK; 100 on Linux). */
const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds of this process's children that have ended and been waited for (nmap, ssh-keyscan). */
function reapedChildrenCpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after `(comm)`: state is field 3, cutime and cstime fields 16 and 17.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / CLK_TCK;
  } catch {
    return 0;
  }
}

/** CPU seconds so far of this process and its reaped children. */
const cpuNow = () => cpuSeconds(process.cpuUsage()) + reapedChildrenCpuSeconds();

// ---------------------------------------------------------------------------------------------
// Generated devices

const hex = (rand, n) => Array.from({ length: n }, () => Math.floor(rand() * 16).toString(16)).join('');
const b64 = (rand, n) =>
  Buffer.from(Array.from({ length: n }, () => Math.floor(rand() * 256)))
    .toString('base64')
    .replace(/=+$/, '');
const macOf = (oui, i) => `${oui}:${[(i >> 16) & 255, (i >> 8) & 255, i & 255].map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':')}`;
const tcp = (port, service, product = null, version = null) => ({
  port,
  protocol: 'tcp',
  state: 'open',
  service,
  product,
  version,
  extra_info: null,
  cpe: [],
});
const sshOf = (rand, port, banner) => ({ port, banner, keyType: 'ssh-ed25519', fingerprint: `SHA256:${b64(rand, 32)}` });
const tlsOf = (rand, port, subject, selfSigned = true) => ({
  port,
  subject,
  issuer: selfSigned ? subject : "CN=R11, O=Let's Encrypt, C=US",
  sans: [],
  notBefore: '2025-01-01T00:00:00.000Z',
  notAfter: '2027-01-01T00:00:00.000Z',
  selfSigned,
  keyHash: hex(rand, 64),
});

/** Device profiles: what each answers, and what recognition should make of it. */
const PROFILES = [
  {
    name: 'synology_nas',
    expect: 'nas',
    oui: '00:11:32',
    vendor: 'Synology Incorporated',
    make: (rand, i) => ({
      ports: [tcp(22, 'ssh', 'OpenSSH', '8.2p1'), tcp(80, 'http', 'nginx'), tcp(443, 'https', 'nginx'), tcp(445, 'microsoft-ds', 'Samba smbd')],
      probes: {
        snmp: {
          community: 'public',
          sysDescr: `Linux DiskStation${i} 4.4.302+ #72806 SMP x86_64 GNU/Linux synology_geminilake_920+`,
          sysObjectID: '1.3.6.1.4.1.6574.1',
          sysName: `nas-${i}`,
          engineId: `80001f8880${hex(rand, 16)}`,
        },
        mdns: {
          names: [`nas-${i}.local`],
          services: ['_smb._tcp', '_http._tcp', '_afpovertcp._tcp'],
          instances: [`nas-${i}._smb._tcp.local`],
          txt: { model: 'DS920+', vendor: 'Synology' },
        },
        http: [{ port: 80, tls: false, status: 200, title: `nas-${i} - Synology DiskStation`, server: 'nginx', faviconHash: null }],
        tls: [tlsOf(rand, 443, `CN=synology, O=Synology Inc.`)],
        ssh: [sshOf(rand, 22, 'SSH-2.0-OpenSSH_8.2')],
      },
    }),
  },
  {
    name: 'openwrt_router',
    expect: 'router',
    oui: '94:83:C4',
    vendor: 'GL Technologies (Hong Kong) Limited',
    make: (rand, i) => ({
      ports: [tcp(22, 'ssh', 'Dropbear sshd', '2022.82'), tcp(53, 'domain', 'dnsmasq', '2.89'), tcp(80, 'http', 'LuCI Lua http config')],
      probes: {
        ssdp: {
          location: null,
          server: `OpenWrt/23.05.2 UPnP/1.1 MiniUPnPd/${i % 2 ? '2.1' : '2.3.4'}`,
          friendlyName: null,
          manufacturer: null,
          modelName: null,
          modelNumber: null,
          udn: `uuid:${hex(rand, 8)}-${hex(rand, 4)}-${hex(rand, 4)}-${hex(rand, 4)}-${hex(rand, 12)}`,
          deviceType: null,
        },
        snmp: {
          community: 'public',
          sysDescr: `Linux OpenWrt 5.15.137 #0 SMP Tue Nov 14 2023 mips`,
          sysObjectID: '1.3.6.1.4.1.8072.3.2.10',
          sysName: `gw-${i}`,
          engineId: `80001f8880${hex(rand, 16)}`,
        },
        http: [{ port: 80, tls: false, status: 200, title: `gw-${i} - LuCI`, server: null, faviconHash: null }],
        ssh: [sshOf(rand, 22, 'SSH-2.0-dropbear_2022.82')],
      },
    }),
  },
  {
    name: 'iphone',
    expect: 'phone',
    oui: 'F2:4D:A2',
    vendor: null,
    make: (rand, i) => ({
      ports: [tcp(62078, 'iphone-sync')],
      probes: { mdns: { names: [`annas-iphone-${i}.local`], services: ['_companion-link._tcp'], instances: [], txt: { model: 'iPhone14,2' } } },
    }),
  },
  {
    name: 'windows_pc',
    expect: 'workstation',
    oui: '3C:52:82',
    vendor: 'Hewlett Packard',
    make: (rand, i) => ({
      ports: [
        tcp(135, 'msrpc', 'Microsoft Windows RPC'),
        tcp(139, 'netbios-ssn'),
        tcp(445, 'microsoft-ds'),
        tcp(3389, 'ms-wbt-server', 'Microsoft Terminal Services'),
      ],
      probes: {
        netbios: { name: `DESKTOP-${hex(rand, 7).toUpperCase()}`, workgroup: 'WORKGROUP', mac: null },
        tls: [tlsOf(rand, 3389, `CN=DESKTOP-${i}`)],
      },
    }),
  },
  {
    name: 'printer',
    expect: 'printer',
    oui: '00:80:77',
    vendor: 'Brother Industries, Ltd.',
    make: (rand, i) => ({
      ports: [tcp(80, 'http'), tcp(443, 'https'), tcp(515, 'printer'), tcp(631, 'ipp'), tcp(9100, 'jetdirect')],
      probes: {
        snmp: {
          community: 'public',
          sysDescr: 'Brother NC-8800w, Firmware Ver.1.05  (20.10.14),MID 8CE-K78,FID 2',
          sysObjectID: '1.3.6.1.4.1.2435.2.3.9.1',
          sysName: `BRN${hex(rand, 12).toUpperCase()}`,
          engineId: `80001f8880${hex(rand, 16)}`,
        },
        mdns: {
          names: [`brn${i}.local`],
          services: ['_ipp._tcp', '_printer._tcp'],
          instances: [`Brother HL-L2350DW ${i}._ipp._tcp.local`],
          txt: { ty: 'Brother HL-L2350DW series', product: '(Brother HL-L2350DW series)' },
        },
        http: [{ port: 80, tls: false, status: 200, title: 'Brother HL-L2350DW series', server: 'debut/1.30', faviconHash: null }],
      },
    }),
  },
  {
    name: 'camera',
    expect: 'camera',
    oui: 'BC:AD:28',
    vendor: 'Hangzhou Hikvision Digital Technology Co.,Ltd.',
    make: () => ({
      ports: [tcp(80, 'http', 'Hikvision IP camera httpd'), tcp(554, 'rtsp'), tcp(8000, 'http-alt')],
      probes: { http: [{ port: 80, tls: false, status: 200, title: null, server: 'App-webs/', faviconHash: 999357577 }] },
    }),
  },
  {
    name: 'linux_vm',
    // QEMU/KVM's MAC prefix: a virtual machine whatever it serves.
    expect: 'virtual_machine',
    oui: '52:54:00',
    vendor: null,
    make: (rand, i) => ({
      ports: [tcp(22, 'ssh', 'OpenSSH', '9.2p1 Debian 2+deb12u3'), tcp(443, 'https', 'nginx', '1.22.1')],
      probes: {
        ssh: [sshOf(rand, 22, 'SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3')],
        tls: [tlsOf(rand, 443, `CN=srv${i}.example.org`, false)],
        http: [{ port: 443, tls: true, status: 200, title: 'Welcome to nginx!', server: 'nginx/1.22.1', faviconHash: null }],
      },
    }),
  },
  {
    name: 'tv',
    expect: 'tv',
    oui: '64:1C:AE',
    vendor: 'Samsung Electronics Co.,Ltd',
    make: (rand, i) => ({
      ports: [tcp(8001, 'http'), tcp(9197, 'http')],
      probes: {
        ssdp: {
          location: null,
          server: 'SHP, UPnP/1.0, Samsung UPnP SDK/1.0',
          friendlyName: `[TV] Samsung ${i}`,
          manufacturer: 'Samsung Electronics',
          modelName: 'QE55Q80B',
          modelNumber: 'AllShare1.0',
          udn: `uuid:${hex(rand, 8)}-${hex(rand, 4)}-${hex(rand, 4)}-${hex(rand, 4)}-${hex(rand, 12)}`,
          deviceType: 'urn:schemas-upnp-org:device:MediaRenderer:1',
        },
        mdns: { names: [`samsung-tv-${i}.local`], services: ['_airplay._tcp'], instances: [], txt: {} },
      },
    }),
  },
  {
    name: 'unknown_iot',
    expect: null,
    // Locally administered, registered to no one.
    oui: 'A6:3F:11',
    vendor: null,
    make: () => ({ ports: [tcp(1883, 'mqtt')], probes: {} }),
  },
];

function generateDevices(n) {
  const rand = mulberry32(21);
  const out = [];
  for (let i = 0; i < n; i++) {
    const profile = PROFILES[i % PROFILES.length];
    const { ports, probes } = profile.make(rand, i);
    const ip = `10.${20 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
    out.push({
      profile,
      host: { ip, mac: macOf(profile.oui, i), vendor: profile.vendor, hostname: null, os_name: null, device_type: null, ports },
      probes,
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// 1. CPU

async function cpuPart(devices) {
  const { recognitionOf } = await import(new URL('scan/identify.js', dist));
  const target = (d, deviceId) => ({ deviceId, host: d.host, decisions: [] });

  // Core: recognitionOf for every device, as identifyHosts calls it.
  const records = devices.map((d, i) => recognitionOf(target(d, i + 1), d.probes));
  const wrong = new Map();
  for (const [i, r] of records.entries()) {
    const want = devices[i].profile.expect;
    const got = r.fields.device_type;
    if (want ? got !== want : got !== 'unknown') wrong.set(devices[i].profile.name, `${got} (want ${want ?? 'unknown'})`);
  }
  check('every device recognised as its profile', wrong.size === 0, [...wrong].map(([k, v]) => `${k}: ${v}`).join(', '));
  const core = [];
  for (let r = 0; r < RUNS; r++) {
    globalThis.gc?.();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (const [i, d] of devices.entries()) recognitionOf(target(d, i + 1), d.probes);
    core.push({ cpu_s: cpuSeconds(process.cpuUsage(cpu0)), wall_s: (performance.now() - t0) / 1000 });
  }

  // Where the core's time goes: the fingerprint table (recognise) and the identity keys, apart.
  const { recognise } = await import(new URL('core/recognition.js', dist));
  const { identityKeysOf } = await import(new URL('core/identity-keys.js', dist));
  globalThis.gc?.();
  let cpu0 = process.cpuUsage();
  for (const d of devices) {
    const h = d.host;
    recognise({ probes: d.probes, mac: h.mac, ouiVendor: h.vendor, hostname: h.hostname, openPorts: h.ports, nmapOs: [] });
  }
  const recogniseCpu = cpuSeconds(process.cpuUsage(cpu0));
  cpu0 = process.cpuUsage();
  for (const d of devices) {
    const h = d.host;
    identityKeysOf({ ip: h.ip, mac: h.mac, macSource: 'scan', hostname: h.hostname, hostnameSource: 'dns', probes: d.probes });
  }
  const keysCpu = cpuSeconds(process.cpuUsage(cpu0));

  // Shell: SQLite, two scans, bookkeeping then recognition.
  const { resolveIdentities } = await import(new URL('core/resolver.js', dist));
  const { openStore } = await import(new URL('store/index.js', dist));
  const { InventoryWriter } = await import(new URL('store/inventory.js', dist));
  const { ScanEvaluator } = await import(new URL('scan/evaluate.js', dist));
  const tmp = mkdtempSync(join(os.tmpdir(), 'netwarden-recognition-bench-'));
  const store = await openStore({ url: join(tmp, 'netwarden.db') });
  const shell = [];
  try {
    const inventory = new InventoryWriter(store.db, () => store.touch());
    const evaluator = new ScanEvaluator(store, null);
    const portList = [
      { low: 1, high: 10000 },
      { low: 62078, high: 62078 },
    ];
    // The rescan: one Linux VM in ten (1 % of the devices) came back with a new random MAC at a new
    // address, the same SSH host key: discovery creates a device for each, the resolver folds it
    // into the device it is (same_device), as a scan does.
    const movedIndexes = new Set(devices.flatMap((d, i) => (d.profile.name === 'linux_vm' && i % (10 * PROFILES.length) === 6 ? [i] : [])));
    const rescanDevices = devices.map((d, i) =>
      movedIndexes.has(i) ? { ...d, host: { ...d.host, ip: `10.40.${(i >> 8) & 255}.${i & 255}`, mac: macOf('02:54:00', i) } } : d,
    );
    for (const n of [1, 2]) {
      const scanDevices = n === 1 ? devices : rescanDevices;
      const scan = await store.scans.create({
        status: 'running',
        profile: 'normal',
        subnet: '10.20.0.0/16',
        scan_type: 'network',
        target: null,
        started_at: new Date().toISOString(),
        completed_at: null,
        duration_seconds: null,
        error: null,
        triggered_by: 'bench',
        progress: null,
      });
      const at = new Date(Date.UTC(2026, 0, n)).toISOString();
      globalThis.gc?.();
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const { seen } = await inventory.recordDiscovery(
        scan.id,
        scanDevices.map((d) => ({ ip: d.host.ip, mac: d.host.mac, vendor: d.host.vendor, hostname: null })),
        at,
      );
      const byIp = new Map(seen.map((s) => [s.ip, s]));
      await inventory.recordPorts(
        scanDevices.map((d) => ({ deviceId: byIp.get(d.host.ip).deviceId, host: d.host })),
        at,
        { id: scan.id, examined: { tcp: portList, udp: [] } },
      );
      const bookkeepingCpu = process.cpuUsage(cpu0);
      const t1 = performance.now();
      // Recognition, as ScanRecorder.recordIdentity runs it (before the evaluation, which reads its CPEs).
      const cpu1 = process.cpuUsage();
      const recognised = scanDevices.map((d) => {
        const device = byIp.get(d.host.ip);
        const decisions = device.isNew ? [{ rule: 'new_device', explanation: `First seen at ${d.host.ip} with MAC ${d.host.mac}` }] : [];
        return recognitionOf({ deviceId: device.deviceId, host: d.host, decisions }, d.probes);
      });
      const recogniseCpu = process.cpuUsage(cpu1);
      const t2 = performance.now();
      // Resolution, as ScanRecorder.resolve runs it: the stored holders of the hosts' keys, the
      // pairs a person separated, the resolver, the folds; its keys and decisions go into the records.
      const cpu2 = process.cpuUsage();
      const hosts = recognised.map((r, i) => ({
        deviceId: r.deviceId,
        isNew: byIp.get(scanDevices[i].host.ip).isNew,
        ip: scanDevices[i].host.ip,
        mac: scanDevices[i].host.mac,
        keys: r.keys,
      }));
      const stored = await store.identity.keysOfHolders(
        recognised.flatMap((r) => r.keys.filter((k) => k.kind !== 'ip' && k.strength !== 'excluded')),
      );
      const involved = [...new Set([...hosts.map((h) => h.deviceId), ...stored.map((k) => k.deviceId)])];
      const separated = await store.deviceMerges.separatedPairs(involved);
      const resolution = resolveIdentities({ hosts, stored, separated });
      const into = new Map();
      const made = await store.deviceMerges.foldAll(resolution.folds, scan.id);
      resolution.folds.forEach((fold, i) => made[i] && into.set(fold.deviceId, { target: made[i].target, kind: fold.kind }));
      const after = [];
      for (const s of seen) {
        const folded = into.get(s.deviceId);
        if (!folded) after.push(s);
        else if (folded.kind === 'same_device') after.push({ deviceId: folded.target, ip: s.ip, isNew: false, previousIp: null });
      }
      // The records, as ScanRecorder.resolve makes them: one per device after folding.
      const recordOf = new Map(recognised.map((r) => [r.deviceId, r]));
      const byTarget = new Map();
      for (const r of recognised) {
        const folded = into.get(r.deviceId);
        const deviceId = folded?.target ?? r.deviceId;
        if (byTarget.has(deviceId) || (folded && recordOf.has(deviceId))) continue;
        byTarget.set(deviceId, { ...r, deviceId, decisions: folded ? r.decisions.filter((d) => d.rule !== 'new_device') : r.decisions });
      }
      const records = [];
      for (const device of resolution.devices) {
        const record = byTarget.get(device.deviceId);
        if (record) records.push({ ...record, keys: device.keys, decisions: [...record.decisions, ...device.decisions] });
      }
      const resolutionCpu = process.cpuUsage(cpu2);
      const t2r = performance.now();
      const wantFolds = n === 1 ? 0 : movedIndexes.size;
      check(
        `scan ${n}: the resolver folds the ${wantFolds} devices that came back with a new MAC, and no other`,
        resolution.folds.length === wantFolds && into.size === wantFolds && resolution.folds.every((f) => f.kind === 'same_device'),
        `${resolution.folds.length} folds, ${into.size} made`,
      );
      check(`scan ${n}: ${devices.length} devices after folding`, after.length === devices.length, `${after.length}`);
      const cpu2r = process.cpuUsage();
      // With the keys the resolution read (the folds' devices read again), as ScanRecorder hands them.
      const held = { keys: stored, changed: [...into].flatMap(([folded, { target }]) => [folded, target]) };
      await store.identity.recordRecognition(scan.id, records, at, held);
      const recordCpu = process.cpuUsage(cpu2r);
      const recognitionCpu = process.cpuUsage(cpu1);
      const t3 = performance.now();
      const cpu3 = process.cpuUsage();
      const seenIds = after.map((s) => s.deviceId);
      await evaluator.evaluate({ scan, seenDeviceIds: seenIds, portsScanned: true, portList, at });
      await inventory.recordSnapshots(scan.id, seenIds);
      const evaluationCpu = process.cpuUsage(cpu3);
      const t4 = performance.now();
      await store.scans.update(scan.id, { status: 'completed', completed_at: new Date().toISOString(), devices_found: after.length });
      const count = async (table) =>
        Number(
          (
            await store.db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      shell.push({
        scan: n,
        devices: after.length,
        folds: into.size,
        bookkeeping_cpu_s: round(cpuSeconds(bookkeepingCpu) + cpuSeconds(evaluationCpu), 3),
        record_discovery_ports_ms: round(t1 - t0),
        evaluate_snapshots_ms: round(t4 - t3),
        recognition_cpu_s: round(cpuSeconds(recognitionCpu), 3),
        recognise_cpu_s: round(cpuSeconds(recogniseCpu), 3),
        resolution_cpu_s: round(cpuSeconds(resolutionCpu), 3),
        record_cpu_s: round(cpuSeconds(recordCpu), 3),
        recognise_ms: round(t2 - t1),
        resolve_ms: round(t2r - t2),
        record_recognition_ms: round(t3 - t2r),
        rows: {
          identity_keys: await count('device_identity_keys'),
          // Hits (each device's recognition is one row holding its hits: migration 032), and rows.
          evidence: (await store.db.selectFrom('device_evidence').select('evidence').execute()).reduce(
            (n, r) => n + JSON.parse(r.evidence).length,
            0,
          ),
          evidence_rows: await count('device_evidence'),
          decisions: await count('identity_decisions'),
        },
      });
      log(
        `shell scan ${n}: bookkeeping ${shell.at(-1).bookkeeping_cpu_s} s CPU, recognition and resolution ${shell.at(-1).recognition_cpu_s} s CPU (resolution ${shell.at(-1).resolution_cpu_s} s)`,
      );
    }
    const cves = await store.db.selectFrom('cve_matches').select(['cve_id', 'port']).where('port', 'is', null).execute();
    check('recognised MiniUPnPd CPEs reach CVE matching', cves.length > 0, `${cves.length} device-level CVE matches`);
  } finally {
    await store.close();
    rmSync(tmp, { recursive: true, force: true });
  }
  const coreCpu = median(core.map((c) => c.cpu_s));
  return {
    devices: devices.length,
    profiles: PROFILES.map((p) => p.name),
    core: {
      runs: core.map((c) => ({ cpu_s: round(c.cpu_s, 3), wall_s: round(c.wall_s, 3) })),
      median_cpu_s: round(coreCpu, 3),
      median_wall_s: round(median(core.map((c) => c.wall_s)), 3),
      recognise_cpu_s: round(recogniseCpu, 3),
      identity_keys_cpu_s: round(keysCpu, 3),
    },
    shell,
    aim_cpu_s: AIM_CPU_S,
    met: shell.every((s) => s.recognition_cpu_s <= AIM_CPU_S),
  };
}

// ---------------------------------------------------------------------------------------------
// 2. Lab

const BLOCK = '10.66.0.0/27';
const EXCLUDE = ['10.66.0.1/32'];
const HOSTS = 8;
const WITH_RESPONDERS = 4;
const labEnv = () => ({ ...process.env, NWLAB_OWNER: String(process.pid), NWLAB_QUIET: '1' });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let labBuilt = false;
const responders = [];

async function lab(...args) {
  const deadline = Date.now() + 600_000;
  for (;;) {
    const result = await run('bash', [LAB_SCRIPT, ...args], { env: labEnv() });
    if (result.code === 0) return result.stdout;
    if (result.code === 3 && Date.now() < deadline) {
      log(`lab busy (${result.stderr.trim()}); waiting`);
      await sleep(5000);
      continue;
    }
    throw new Error(`lab.sh ${args.join(' ')} failed (exit ${result.code}): ${result.stderr.trim()}`);
  }
}

function labDownSync() {
  for (const child of responders.splice(0)) child.kill('SIGTERM');
  if (!labBuilt) return;
  try {
    execFileSync('bash', [LAB_SCRIPT, 'down'], { env: labEnv(), stdio: ['ignore', 'ignore', 'inherit'], timeout: 60_000 });
    labBuilt = false;
  } catch (err) {
    console.error(`[recognition-bench] could not tear the lab down: ${err.message}; run 'bash test/lab/lab.sh down --force'`);
  }
}
onSignal('tearing the lab down', labDownSync);

/** Starts test/lab/responders.mjs in host hN's namespace; resolves once it listens. */
function startResponders(n) {
  const ip = `10.66.0.${10 + n}`;
  const ready = join(os.tmpdir(), `nw-recognition-bench-${process.pid}-${n}.json`);
  const child = spawn(
    'ip',
    [
      'netns',
      'exec',
      `nwlab-h${n}`,
      process.execPath,
      RESPONDERS,
      '--address',
      ip,
      '--name',
      `lab${n}`,
      '--model',
      'DS920+',
      '--vendor',
      'Synology',
      '--mac',
      `02:66:00:00:00:${String(n).padStart(2, '0')}`,
      '--ready',
      ready,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  responders.push(child);
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = setInterval(() => {
      try {
        readFileSync(ready);
        clearInterval(poll);
        rmSync(ready, { force: true });
        resolve();
      } catch {
        if (child.exitCode !== null || Date.now() - started > 20_000) {
          clearInterval(poll);
          reject(new Error(`responders on h${n} did not start: ${stderr.trim()}`));
        }
      }
    }, 100);
  });
}

async function labPart() {
  if (process.env.BENCH_LAB === '0') return { skipped: 'BENCH_LAB=0' };
  if (process.getuid?.() !== 0) return { skipped: 'needs root (network namespaces)' };
  try {
    execFileSync('nmap', ['--version'], { stdio: 'ignore' });
  } catch {
    return { skipped: 'nmap is not installed' };
  }
  if (!existsSync('/usr/sbin/sshd')) return { skipped: 'sshd is not installed (apt-get install openssh-server)' };
  try {
    await lab('down');
    labBuilt = true;
    await lab('up', String(HOSTS));
  } catch (err) {
    labDownSync();
    return { skipped: `the namespace lab could not be built: ${err.message}` };
  }
  const servers = {};
  const hostKeys = new Map();
  try {
    for (let i = 1; i <= HOSTS; i++) {
      // A real SSH server: the probe's ssh-keyscan completes a key exchange, as on a real network.
      hostKeys.set(`10.66.0.${10 + i}`, (await lab('sshd', `h${i}`)).trim());
      await lab('listen', `h${i}`, '80', 'http', i % 2 ? 'nginx/1.18.0' : 'Apache/2.4.52 (Ubuntu)');
      if (i % 2) await lab('listen', `h${i}`, '21', 'banner', '220 (vsFTPd 3.0.5)');
      else await lab('listen', `h${i}`, '25', 'banner', `220 h${i}.lab ESMTP Postfix (Ubuntu)`);
    }
    for (let i = 1; i <= WITH_RESPONDERS; i++) await startResponders(i);
    const common = { from: dist, engine: 'nmap', osDetection: false, subnet: BLOCK, exclude: EXCLUDE, ports: '1-1000' };
    servers.probes_on = await startApiServer(common);
    servers.probes_off = await startApiServer({ ...common, recognition: { probes: [] } });
    const runs = { probes_on: [], probes_off: [] };
    const cpuRuns = { probes_on: [], probes_off: [] };
    const childRuns = { probes_on: [], probes_off: [] };
    const scanOnce = async (variant) => {
      const server = servers[variant];
      const children0 = reapedChildrenCpuSeconds();
      const cpu0 = cpuNow();
      const started = performance.now();
      const res = await server.request(`/api/scan/trigger?profile=normal&subnet=${encodeURIComponent(BLOCK)}`, { method: 'POST' });
      const body = await res.json();
      if (res.status !== 200) throw new Error(`trigger failed: ${res.status} ${JSON.stringify(body)}`);
      let record;
      for (;;) {
        record = await (await server.request(`/api/scans/${body.scan_id}`)).json();
        if (record.status !== 'running' && record.status !== 'queued') break;
        await sleep(50);
      }
      const ms = performance.now() - started;
      const cpuS = cpuNow() - cpu0;
      const childrenS = reapedChildrenCpuSeconds() - children0;
      const { found } = await scanFindings(server, body.scan_id, record);
      check(`${variant}: found the ${HOSTS} lab hosts`, found.size === HOSTS, `${found.size} found`);
      return { ms, cpuS, childrenS, scanId: body.scan_id };
    };
    // Warm-up (the servers then know the hosts: later scans overlap discovery and ports, as a rescan does).
    for (const variant of ['probes_on', 'probes_off']) await scanOnce(variant);
    for (let r = 0; r < REPEAT; r++)
      for (const variant of ['probes_on', 'probes_off']) {
        const { ms, cpuS, childrenS } = await scanOnce(variant);
        runs[variant].push(ms);
        cpuRuns[variant].push(cpuS);
        childRuns[variant].push(childrenS);
      }
    // What the probes learned: names from the responders.
    const devices = await (await servers.probes_on.request('/api/devices?limit=100')).json();
    const named = devices.filter((d) => typeof d.name === 'string' && /^lab\d$/.test(d.name)).length;
    check('the probes named the hosts with responders', named === WITH_RESPONDERS, `${named} of ${WITH_RESPONDERS}`);
    // And read every host's SSH host key, as ssh-keygen prints it.
    let keysRead = 0;
    for (const d of devices) {
      const identity = await (await servers.probes_on.request(`/api/devices/${d.id}/identity`)).json();
      if (identity.keys?.some((k) => k.kind === 'ssh_host_key' && k.value === hostKeys.get(d.ip_address))) keysRead++;
    }
    check('the SSH probe read every lab host key', keysRead === HOSTS, `${keysRead} of ${HOSTS}`);
    const on = median(runs.probes_on);
    const off = median(runs.probes_off);
    const cpuOn = median(cpuRuns.probes_on);
    const cpuOff = median(cpuRuns.probes_off);
    return {
      hosts: HOSTS,
      hosts_answering_probes: WITH_RESPONDERS,
      repeat: REPEAT,
      runs_ms: { probes_on: runs.probes_on.map((m) => round(m)), probes_off: runs.probes_off.map((m) => round(m)) },
      median_ms: { probes_on: round(on), probes_off: round(off) },
      ratio: round(on / off, 3),
      cpu_runs_s: { probes_on: cpuRuns.probes_on.map((c) => round(c, 3)), probes_off: cpuRuns.probes_off.map((c) => round(c, 3)) },
      median_cpu_s: { probes_on: round(cpuOn, 3), probes_off: round(cpuOff, 3) },
      median_children_cpu_s: { probes_on: round(median(childRuns.probes_on), 3), probes_off: round(median(childRuns.probes_off), 3) },
      cpu_ratio: round(cpuOn / cpuOff, 3),
      aim_ratio: AIM_LAB_RATIO,
      met: on / off <= AIM_LAB_RATIO,
      cpu_met: cpuOn / cpuOff <= AIM_LAB_RATIO,
      devices_named: named,
      ssh_host_keys_read: keysRead,
    };
  } finally {
    for (const s of Object.values(servers)) await s.close().catch(() => undefined);
    labDownSync();
  }
}

// ---------------------------------------------------------------------------------------------

function markdown(r) {
  const lines = [
    '# Recognition (`npm run bench:recognition`)',
    '',
    `${r.machine.date} · ${r.machine.cpus} × ${r.machine.cpu} · Node ${r.machine.node} · load average ${r.machine.load_before.join(' ')} → ${r.machine.load_after.join(' ')}`,
    '',
    `## CPU, ${r.cpu.devices} devices with probe results`,
    '',
    `Core (\`recognitionOf\` for every device, ${RUNS} runs): median **${r.cpu.core.median_cpu_s} s** CPU, ${r.cpu.core.median_wall_s} s wall; of which \`recognise\` (the fingerprint table) ${r.cpu.core.recognise_cpu_s} s and \`identityKeysOf\` ${r.cpu.core.identity_keys_cpu_s} s (one run each).`,
    '',
    '| Scan | devices | folds | bookkeeping CPU s (discovery, ports, evaluation, snapshots) | **recognition + resolution CPU s** | recognise CPU s | resolve CPU s (incl. folds) | recordRecognition CPU s | recognise ms | resolve ms | recordRecognition ms | keys | evidence hits (rows) | decisions |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.cpu.shell.map(
      (s) =>
        `| ${s.scan === 1 ? 'first' : 'rescan (1 % back with a new MAC)'} | ${s.devices} | ${s.folds} | ${s.bookkeeping_cpu_s} | **${s.recognition_cpu_s}** | ${s.recognise_cpu_s} | ${s.resolution_cpu_s} | ${s.record_cpu_s} | ${s.recognise_ms} | ${s.resolve_ms} | ${s.record_recognition_ms} | ${s.rows.identity_keys} | ${s.rows.evidence} (${s.rows.evidence_rows}) | ${s.rows.decisions} |`,
    ),
    '',
    'CPU is process.cpuUsage (user + system) of the bench process; the wall times (ms) are noise on a loaded machine.',
    '',
    `Aim: recognition and resolution ≤ ${AIM_CPU_S} s of CPU beyond the bookkeeping: **${r.cpu.met ? 'met' : 'not met'}**.`,
    '',
    '## Lab: what the probes add to a `normal` scan',
    '',
  ];
  if (r.lab.skipped) lines.push(`Skipped: ${r.lab.skipped}.`);
  else
    lines.push(
      `${r.lab.hosts} hosts, each with a real sshd (its own host key; the probe read ${r.lab.ssh_host_keys_read}), ${r.lab.hosts_answering_probes} also answering mDNS, SSDP, NetBIOS and SNMP; 10.66.0.0/27, nmap engine, ${r.lab.repeat} runs each after a warm-up. CPU: the bench process (the server runs in it) and its reaped children (nmap, ssh-keyscan).`,
      '',
      '| Variant | runs ms | median ms | runs CPU s | median CPU s | of which children (nmap, ssh-keyscan) |',
      '|---|---|---:|---|---:|---:|',
      `| probes on | ${r.lab.runs_ms.probes_on.join(', ')} | ${r.lab.median_ms.probes_on} | ${r.lab.cpu_runs_s.probes_on.join(', ')} | ${r.lab.median_cpu_s.probes_on} | ${r.lab.median_children_cpu_s.probes_on} |`,
      `| probes off | ${r.lab.runs_ms.probes_off.join(', ')} | ${r.lab.median_ms.probes_off} | ${r.lab.cpu_runs_s.probes_off.join(', ')} | ${r.lab.median_cpu_s.probes_off} | ${r.lab.median_children_cpu_s.probes_off} |`,
      '',
      `Ratio on/off, wall: **${r.lab.ratio}** (aim ≤ ${AIM_LAB_RATIO}: ${r.lab.met ? 'met' : 'not met'}; noise on a loaded machine); CPU: **${r.lab.cpu_ratio}** (${r.lab.cpu_met ? 'within' : 'above'} ${AIM_LAB_RATIO}).`,
    );
  lines.push('', failures.length ? `Sanity checks failed: ${failures.join('; ')}` : 'Sanity checks passed.', '');
  return lines.join('\n');
}

async function main() {
  ensureBuilt({ markers: ['scan/identify.js'], log, keepOnBuildError: true });
  const loadBefore = os.loadavg();
  const devices = generateDevices(DEVICES);
  log(`${devices.length} devices generated`);
  const cpu = await cpuPart(devices);
  log(`core: ${cpu.core.median_cpu_s} s CPU`);
  const labResult = await labPart();
  const result = {
    machine: {
      date: new Date().toISOString(),
      cpus: os.cpus().length,
      cpu: os.cpus()[0]?.model ?? 'CPU',
      node: process.version,
      load_before: loadBefore.map((l) => round(l, 2)),
      load_after: os.loadavg().map((l) => round(l, 2)),
    },
    settings: { devices: DEVICES, runs: RUNS, scan_repeat: REPEAT },
    cpu,
    lab: labResult,
    failures,
  };
  console.log(writeResults('recognition', result, markdown(result)));
  process.exit(failures.length ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  labDownSync();
  process.exit(1);
});
