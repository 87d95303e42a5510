#!/usr/bin/env node
// nmap import benchmark (issue 14): how long POST /api/scans/import takes for a 1,000-host report,
// through the real server over HTTP, on SQLite and (with a URL) PostgreSQL.
//
//   node bench/import-bench.mjs
//
// The report is synthetic but shaped exactly as `nmap -n -sV -v -oX` writes one (the prolog,
// <scaninfo>, <host> elements with status, IPv4 and MAC addresses with vendors, <ports> with
// closed and open ports, services with product, version, extra info and CPEs, hosts down listed
// as -v lists them, <runstats>): BENCH_HOSTS hosts up in 10.77.0.0/22 (data only, never contacted)
// with 2 to 6 open ports each from a catalogue of common services, plus a few hosts down. A second
// report of the same network has about 5 % of the hosts changed (ports opened and closed, versions
// changed, hosts gone and new), so the second import computes real changes against the first.
//
// Measured, BENCH_RUNS rounds on a fresh database each (median, min, max):
//   plan    reading the report alone: the safety checks, well-formedness, the mapper (core/nmap-import.ts)
//   first   POST /api/scans/import of the first report until its 201 (inventory, risk, CVEs; no baseline)
//   second  the same for the second report (changes against the first)
//
// Environment (all optional): BENCH_HOSTS (1000), BENCH_RUNS (3), BENCH_SKIP_BUILD=1, BENCH_DATABASE_URL
// (else TEST_DATABASE_URL; neither: SQLite only). Results: bench/results/import.json and import.md.
// Exit status 1 when a sanity check fails.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { ensureBuilt, sanityChecks, writeResults } from './lib.mjs';
import { mulberry32 } from './prng.mjs';
import { openBenchApp } from './app.mjs';

// Scope guard: servers started by benchmarks may scan only loopback and the namespace lab (this one scans nothing).
process.env.NETWARDEN_SCAN_ALLOW ??= '127.0.0.0/8,10.66.0.0/24';

const log = (...args) => console.error('[bench:import]', ...args);
const num = (name, fallback) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
};
const settings = {
  hosts: num('BENCH_HOSTS', 1000),
  runs: num('BENCH_RUNS', 3),
  /** Hosts of the large report whose reading alone is measured (near the 50 MiB limit). */
  largeHosts: num('BENCH_LARGE_HOSTS', 38_000),
  down: 24,
  seed: 20261126,
};
const { failures, check } = sanityChecks(log);

ensureBuilt({ markers: ['core/nmap-import.js', 'api/app.js'], log });
const dist = new URL('../dist/', import.meta.url);
const { planImport } = await import(new URL('core/nmap-import.js', dist));
const { readNmapReport } = await import(new URL('scan/report-reader.js', dist));
const { openStore } = await import(new URL('store/index.js', dist));
const { ensurePgSchema, dropPgSchema } = await import(new URL('store/db.js', dist));
const { createLogger } = await import(new URL('logger.js', dist));

// ---------------------------------------------------------------------------------------------
// The reports

const VENDORS = [
  ['B8:27:EB', 'Raspberry Pi Foundation'],
  ['00:1C:42', 'Parallels'],
  ['3C:22:FB', 'Apple'],
  ['F4:F5:D8', 'Google'],
  ['00:17:88', 'Philips Lighting BV'],
  ['50:C7:BF', 'Tp-link Technologies'],
  ['00:11:32', 'Synology Incorporated'],
  ['AC:84:C6', 'Tp-link Technologies'],
];

/** [port, name, product, version, extrainfo, cpe] as nmap-service-probes identifies them. */
const SERVICES = [
  [22, 'ssh', 'OpenSSH', '8.9p1 Ubuntu 3ubuntu0.6', 'Ubuntu Linux; protocol 2.0', ['cpe:/a:openbsd:openssh:8.9p1', 'cpe:/o:linux:linux_kernel']],
  [22, 'ssh', 'OpenSSH', '7.4', 'protocol 2.0', ['cpe:/a:openbsd:openssh:7.4']],
  [22, 'ssh', 'Dropbear sshd', '2019.78', 'protocol 2.0', ['cpe:/a:matt_johnston:dropbear_ssh_server:2019.78']],
  [23, 'telnet', 'BusyBox telnetd', null, null, ['cpe:/a:busybox:busybox']],
  [53, 'domain', 'dnsmasq', '2.85', null, ['cpe:/a:thekelleys:dnsmasq:2.85']],
  [80, 'http', 'nginx', '1.18.0', '(Ubuntu)', ['cpe:/a:igor_sysoev:nginx:1.18.0']],
  [80, 'http', 'Apache httpd', '2.4.49', '(Unix)', ['cpe:/a:apache:http_server:2.4.49']],
  [80, 'http', 'lighttpd', '1.4.59', null, ['cpe:/a:lighttpd:lighttpd:1.4.59']],
  [139, 'netbios-ssn', 'Samba smbd', '4.6.2', null, ['cpe:/a:samba:samba']],
  [443, 'http', 'nginx', '1.24.0', null, ['cpe:/a:igor_sysoev:nginx:1.24.0']],
  [445, 'microsoft-ds', null, null, null, []],
  [3306, 'mysql', 'MySQL', '5.7.33', null, ['cpe:/a:mysql:mysql:5.7.33']],
  [3389, 'ms-wbt-server', 'Microsoft Terminal Services', null, null, ['cpe:/o:microsoft:windows']],
  [5000, 'http', 'Werkzeug httpd', '2.0.2', 'Python 3.10.12', ['cpe:/a:python:python:3.10.12']],
  [8080, 'http-proxy', null, null, null, []],
  [8123, 'http', 'aiohttp', '3.9.1', 'Python 3.11', ['cpe:/a:aiohttp:aiohttp:3.9.1']],
  [9100, 'jetdirect', null, null, null, []],
];

const escape = (s) => String(s).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
const ipOf = (i) => `10.77.${Math.floor(i / 256)}.${i % 256}`;

/** The hosts of the first report: index → {mac, services}. */
function inventory(random) {
  const hosts = new Map();
  for (let i = 1; hosts.size < settings.hosts; i++) {
    if (i % 43 === 0) continue; // Addresses left free: hosts down.
    const [oui, vendor] = VENDORS[Math.floor(random() * VENDORS.length)];
    const mac = `${oui}:${[0, 0, 0]
      .map(() =>
        Math.floor(random() * 256)
          .toString(16)
          .padStart(2, '0')
          .toUpperCase(),
      )
      .join(':')}`;
    const count = 2 + Math.floor(random() * 5);
    const services = new Map();
    while (services.size < count) {
      const s = SERVICES[Math.floor(random() * SERVICES.length)];
      services.set(s[0], s);
    }
    hosts.set(i, { mac, vendor, services });
  }
  return hosts;
}

/** The second report: 5 % of the hosts changed (1 % gone, 1 % new, ports opened, closed, versions changed). */
function drift(first, random) {
  const second = new Map([...first].map(([i, h]) => [i, { ...h, services: new Map(h.services) }]));
  const ids = [...second.keys()];
  const pick = () => ids[Math.floor(random() * ids.length)];
  const n = Math.round(settings.hosts * 0.01);
  for (let k = 0; k < n; k++) second.delete(pick());
  for (let k = 0, i = 1; k < n; i++) {
    if (second.has(i) || first.has(i) || i % 43 !== 0) continue;
    second.set(i, {
      mac: `02:77:00:00:${(k >> 8).toString(16).padStart(2, '0')}:${(k & 255).toString(16).padStart(2, '0')}`.toUpperCase(),
      vendor: null,
      services: new Map([[22, SERVICES[0]]]),
    });
    k++;
  }
  for (let k = 0; k < n; k++) second.get(pick())?.services.set(23, SERVICES[3]);
  for (let k = 0; k < n; k++) {
    const h = second.get(pick());
    if (h && h.services.size > 1) h.services.delete([...h.services.keys()][0]);
  }
  for (let k = 0; k < n * 2; k++) {
    const h = second.get(pick());
    if (h?.services.has(22)) h.services.set(22, SERVICES[1]);
  }
  return second;
}

const PORTS = '1-1000,3306,3389,5000,8080,8123,9100';

/** The smallest 10.77.0.0/<prefix> holding every host index (and the hosts down listed before them). */
function networkOf(hosts) {
  const highest = Math.max(...hosts.keys(), 1023);
  return `10.77.0.0/${32 - Math.ceil(Math.log2(highest + 1))}`;
}

function report(hosts, startSeconds) {
  const args = `nmap -n -sV -v -p ${PORTS} -oX report.xml ${networkOf(hosts)}`;
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE nmaprun>',
    '<?xml-stylesheet href="file:///usr/bin/../share/nmap/nmap.xsl" type="text/xsl"?>',
    `<!-- Nmap 7.93 scan initiated as: ${args} -->`,
    `<nmaprun scanner="nmap" args="${args}" start="${startSeconds}" startstr="" version="7.93" xmloutputversion="1.05">`,
    `<scaninfo type="syn" protocol="tcp" numservices="1006" services="${PORTS}"/>`,
    '<verbose level="1"/>',
    '<debugging level="0"/>',
  ];
  let down = 0;
  for (let i = 1; down < settings.down && i < 1024; i++) {
    if (hosts.has(i)) continue;
    out.push(`<host><status state="down" reason="no-response" reason_ttl="0"/>\n<address addr="${ipOf(i)}" addrtype="ipv4"/>\n</host>`);
    down++;
  }
  for (const [i, h] of [...hosts].sort((a, b) => a[0] - b[0])) {
    const ports = [...h.services.values()]
      .sort((a, b) => a[0] - b[0])
      .map(([port, name, product, version, extra, cpe]) => {
        const attrs = [
          `name="${name}"`,
          product && `product="${escape(product)}"`,
          version && `version="${escape(version)}"`,
          extra && `extrainfo="${escape(extra)}"`,
        ]
          .filter(Boolean)
          .join(' ');
        const method = product ? 'method="probed" conf="10"' : 'method="table" conf="3"';
        return `<port protocol="tcp" portid="${port}"><state state="open" reason="syn-ack" reason_ttl="64"/><service ${attrs} ${method}>${cpe.map((c) => `<cpe>${c}</cpe>`).join('')}</service></port>`;
      });
    out.push(
      `<host starttime="${startSeconds}" endtime="${startSeconds + 30}"><status state="up" reason="arp-response" reason_ttl="0"/>`,
      `<address addr="${ipOf(i)}" addrtype="ipv4"/>`,
      `<address addr="${h.mac}" addrtype="mac"${h.vendor ? ` vendor="${escape(h.vendor)}"` : ''}/>`,
      '<hostnames>\n</hostnames>',
      `<ports><extraports state="closed" count="${1006 - h.services.size}">\n<extrareasons reason="reset" count="${1006 - h.services.size}" proto="tcp" ports="1-21"/>\n</extraports>`,
      ...ports,
      '</ports>',
      '<times srtt="512" rttvar="200" to="100000"/>',
      '</host>',
    );
  }
  out.push(
    `<runstats><finished time="${startSeconds + 300}" timestr="" summary="" elapsed="300.00" exit="success"/><hosts up="${hosts.size}" down="${down}" total="${hosts.size + down}"/>`,
    '</runstats>',
    '</nmaprun>',
  );
  return out.join('\n') + '\n';
}

const random = mulberry32(settings.seed);
const firstHosts = inventory(random);
const secondHosts = drift(firstHosts, random);
const reports = { first: report(firstHosts, 1795600000), second: report(secondHosts, 1795686400) };
const KB = 1024;
log(
  `reports: ${Math.round(reports.first.length / KB)} KiB (${firstHosts.size} hosts up), ${Math.round(reports.second.length / KB)} KiB (${secondHosts.size} up)`,
);

// ---------------------------------------------------------------------------------------------
// Measuring

const stats = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const round = (n) => Math.round(n);
  return { median: round(sorted[Math.floor(sorted.length / 2)]), min: round(sorted[0]), max: round(sorted.at(-1)), runs: sorted.map(round) };
};

function timePlan() {
  const times = [];
  for (let r = 0; r < settings.runs + 1; r++) {
    const t0 = performance.now();
    const plan = planImport(reports.first);
    if (r > 0) times.push(performance.now() - t0);
    check('the plan has every host up', plan.hosts.length === firstHosts.size, `${plan.hosts.length}`);
  }
  return stats(times);
}

async function openDatabase(kind, pgUrl) {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(os.tmpdir(), 'netwarden-bench-import-'));
    const store = await openStore({ url: join(dir, 'netwarden.db') });
    return { store, cleanup: async () => (await store.close(), rmSync(dir, { recursive: true, force: true })) };
  }
  const pgSchema = `bench_import_${process.pid}_${Date.now().toString(36)}`;
  await ensurePgSchema(pgUrl, pgSchema);
  const store = await openStore({ url: pgUrl, pgSchema });
  return { store, cleanup: async () => (await store.close(), await dropPgSchema(pgUrl, pgSchema)) };
}

async function oneRound(kind, pgUrl) {
  const { store, cleanup } = await openDatabase(kind, pgUrl);
  const logger = createLogger('warn');
  try {
    // The release feed at a closed loopback port: nothing leaves the machine.
    const { app, close } = await openBenchApp(dist, {
      store,
      logger,
      version: 'bench',
      settingsSeed: { updates: { feed_url: 'http://127.0.0.1:9/releases/latest' } },
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${app.server.address().port}`;
    try {
      const setup = await fetch(`${base}/api/auth/setup`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ username: 'bench', password: 'bench-password-not-secret' }),
      });
      const cookie = setup.headers.getSetCookie()[0].split(';')[0];
      const times = {};
      const records = {};
      for (const which of ['first', 'second']) {
        const t0 = performance.now();
        const res = await fetch(`${base}/api/scans/import`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/xml', Cookie: cookie },
          body: reports[which],
        });
        const body = await res.json();
        times[which] = performance.now() - t0;
        records[which] = body;
        check(`${kind} ${which} import answered 201`, res.status === 201, `${res.status} ${JSON.stringify(body).slice(0, 200)}`);
      }
      check(`${kind} first import found every host up`, records.first.devices_found === firstHosts.size, `${records.first.devices_found}`);
      check(`${kind} second import found every host up`, records.second.devices_found === secondHosts.size, `${records.second.devices_found}`);
      const changes = await fetch(`${base}/api/changes?scan_id=${records.second.scan_id}&limit=1`, { headers: { Cookie: cookie } });
      const changeCount = Number(changes.headers.get('x-total-count'));
      check(`${kind} second import detected changes`, changeCount > 0, `${changeCount}`);
      return { times, changes: changeCount, devices: records.second.devices_found };
    } finally {
      await close();
    }
  } finally {
    await cleanup();
  }
}

const pgUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
const databases = pgUrl ? ['sqlite', 'postgres'] : ['sqlite'];
const result = {
  settings,
  machine: {
    load_average: os.loadavg().map((n) => Math.round(n * 10) / 10),
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? null,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  },
  report_bytes: { first: Buffer.byteLength(reports.first), second: Buffer.byteLength(reports.second) },
  hosts_up: { first: firstHosts.size, second: secondHosts.size },
  plan_ms: timePlan(),
  databases: {},
};
log(`plan: median ${result.plan_ms.median} ms`);

// Reading a report near the 50 MiB limit: the time the request's handler spends before anything is recorded.
{
  const saved = settings.hosts;
  settings.hosts = settings.largeHosts;
  const large = report(inventory(mulberry32(settings.seed + 1)), 1795600000);
  settings.hosts = saved;
  const before = process.memoryUsage().rss;
  let t0 = performance.now();
  const plan = planImport(large);
  const ms = Math.round(performance.now() - t0);
  const rssGrowth = Math.round((process.memoryUsage().rss - before) / 1024 / 1024);
  // As the service reads it: in a worker thread, this one counting its timer turns meanwhile.
  let turns = 0;
  const timer = setInterval(() => turns++, 10);
  t0 = performance.now();
  const threaded = await readNmapReport(large);
  const threadMs = Math.round(performance.now() - t0);
  clearInterval(timer);
  check('the large report is within the 50 MiB limit', Buffer.byteLength(large) <= 50 * 1024 * 1024, `${Buffer.byteLength(large)} bytes`);
  check('the large plan has every host up', plan.hosts.length === settings.largeHosts, `${plan.hosts.length}`);
  check('the thread gives the same plan', threaded.hosts.length === plan.hosts.length, `${threaded.hosts.length}`);
  check('the main thread stayed free while the thread read it', turns > 0, `${turns} timer turns`);
  result.large = {
    hosts: settings.largeHosts,
    report_mib: Math.round((Buffer.byteLength(large) / 1024 / 1024) * 10) / 10,
    plan_ms: ms,
    thread_ms: threadMs,
    main_thread_turns_10ms: turns,
    rss_growth_mib: rssGrowth,
  };
  log(`large report: ${result.large.report_mib} MiB, ${settings.largeHosts} hosts, read in ${ms} ms here, ${threadMs} ms in a thread`);
}
for (const kind of databases) {
  const rounds = [];
  for (let r = 0; r < settings.runs; r++) rounds.push(await oneRound(kind, pgUrl));
  result.databases[kind] = {
    first_ms: stats(rounds.map((r) => r.times.first)),
    second_ms: stats(rounds.map((r) => r.times.second)),
    changes: rounds[0].changes,
  };
  log(
    `${kind}: first ${result.databases[kind].first_ms.median} ms, second ${result.databases[kind].second_ms.median} ms, ${rounds[0].changes} changes`,
  );
}
result.failures = failures;

const row = (name, s) => `| ${name} | ${s.median} | ${s.min} | ${s.max} |`;
const md = [
  '# nmap import benchmark',
  '',
  `\`node bench/import-bench.mjs\`, ${new Date().toISOString().slice(0, 10)}, ${result.machine.cpus} cores (${result.machine.cpu}), Node ${result.machine.node}, load average at the start ${result.machine.load_average.join(' ')} (the machine is shared).`,
  '',
  `A synthetic report shaped as \`nmap -n -sV -v -oX\` writes it: ${settings.hosts} hosts up in ${networkOf(firstHosts)} with MACs and vendors and 2–6 open`,
  `ports each (product, version, CPEs), ${settings.down} hosts down; ${Math.round(result.report_bytes.first / KB)} KiB. The second report of the`,
  `same network has about 5 % of the hosts changed. Times from the POST to its 201, through the real server over HTTP on loopback,`,
  `${settings.runs} rounds on a fresh database each (median, min, max in ms).`,
  '',
  '| Step | Median | Min | Max |',
  '|---|---|---|---|',
  row('reading the report (safety checks, well-formedness, mapper)', result.plan_ms),
  ...databases.flatMap((kind) => [
    row(`${kind}: first import (no baseline)`, result.databases[kind].first_ms),
    row(`${kind}: second import (${result.databases[kind].changes} changes against the first)`, result.databases[kind].second_ms),
  ]),
  '',
  `Reading a report near the 50 MiB limit (${result.large.hosts} hosts, ${result.large.report_mib} MiB): ${result.large.plan_ms} ms in one go`,
  `(RSS +${result.large.rss_growth_mib} MiB); as the service reads it (2 MiB or more), in a worker thread: ${result.large.thread_ms} ms, during which`,
  `the main thread ran ${result.large.main_thread_turns_10ms} turns of a 10 ms timer (it keeps answering requests). Recording that many devices`,
  'then takes as long as for a scan that found them (not measured here).',
  '',
  failures.length
    ? `Sanity checks FAILED: ${failures.join('; ')}`
    : 'Sanity checks passed: every import answered 201 with every host up, and the second detected changes.',
  '',
].join('\n');
writeResults('import', result, md);
console.log(md);
process.exitCode = failures.length ? 1 : 0;
