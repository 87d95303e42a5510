#!/usr/bin/env node
// Scan benchmark of Netwarden on the namespace lab (test/lab/lab.sh): bridge nwlab0, 10.66.0.0/24,
// hosts in their own network namespaces with fixed MACs and listeners. Needs root and nmap.
//
//   npm run bench:scan-lab     (bench/scan-bench.mjs measures the same on loopback, without root)
//
// The lab: hosts h1..h8 at 10.66.0.11-18, each with three listeners (SSH banner on 22, HTTP on 80,
// and an FTP banner on 21 or an SMTP banner on 25); the scanned block is 10.66.0.0/27 without
// 10.66.0.1 (the scanner's own address on nwlab0), so 23 of its 31 addresses have no host.
// Port range 1-1000; OS detection off, and in the *_os variants on (`-O --osscan-limit`, as the
// engine runs it, for the nmap baseline too).
//
// Measured, BENCH_SCAN_REPEAT times each (default 3), in rotation so that load from other work on
// the machine spreads over all of them; the median is reported:
//   api_nmap     a `normal` scan through the API (POST /api/scan/trigger, poll GET /api/scans/{id}),
//                scanning.engine nmap, the real app from dist/ on SQLite in a temporary directory
//   plain_nmap   one `nmap -n -sS -sV -p1-1000 <the 8 live hosts>` (the engine's floor)
//   sequential   `nmap -n -sn <block>`, then one `nmap -n -sS -sV -p1-1000 <host>` per live host, one
//                after another (the naive baseline)
//   plain_nmap_os, api_nmap_os   the same two with OS detection on
//   api_native   as api_nmap with scanning.engine native (when dist/engines/native/engine.js exists)
//   api_nmap_no_udp, api_native_no_udp   the two with scanning.udp_ports "" (the others examine its
//                default 9 UDP ports): what UDP costs (issue 21 §2: at most 20 % more)
//   engine_discovery, engine_ports   the two nmap runs the engine makes for api_nmap (arguments from
//                dist/core/nmap-args.js), run on their own: where the API's time goes
// Experiments (with BENCH_SCAN_EXPERIMENTS=1, or named in BENCH_SCAN_VARIANTS), for the analysis:
//   exp_overlap  engine_discovery and engine_ports started together (the port scan of the hosts a
//                previous scan saw, overlapping discovery): what a speculative port phase would cost
//   exp_discovery_no_retry   engine_discovery with --max-retries 0 (no ARP retransmission)
//
// The API server is kept between runs, so from the second scan on it knows which hosts were online
// and port-scans them while discovery runs (src/engines/pipeline.ts), as a scheduled re-scan does.
// Targets (issue 12): api_nmap <= 1.1 x plain_nmap, with OS detection off and on; sequential >= 3 x api_nmap.
// Results: bench/results/scan-lab.json and bench/results/scan-lab.md. Exit status 1 when a run found other
// hosts or open ports than the lab has, or a scan did not complete.
//
// Environment: BENCH_SCAN_REPEAT (3), BENCH_SCAN_VARIANTS (comma list of the names above; default
// all but the experiments), BENCH_SCAN_RESULTS (results name, default scan-lab), BENCH_SCAN_EXPERIMENTS=1, BENCH_SKIP_BUILD=1 (use dist/ as it is), BENCH_LOG_LEVEL (server log level, default silent).
//
// The lab is always torn down: try/finally, and SIGINT/SIGTERM/SIGHUP handlers.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureBuilt, writeResults } from './lib.mjs';
import { foundProblems, median, nmap, onSignal, openPorts, positive, round, run, scanFindings, startApiServer } from './scan-common.mjs';

// Scope guard: servers started by benchmarks may scan only loopback and the namespace lab.
process.env.NETWARDEN_SCAN_ALLOW ??= '127.0.0.0/8,10.66.0.0/24';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const LAB_SCRIPT = join(root, 'test', 'lab', 'lab.sh');
const dist = pathToFileURL(join(root, 'dist') + '/');

const BLOCK = '10.66.0.0/27';
const EXCLUDE = ['10.66.0.1/32'];
const PORTS = '1-1000';
const HOSTS = 8;
const REPEAT = positive('BENCH_SCAN_REPEAT', 3);
const ALL_VARIANTS = [
  'plain_nmap',
  'api_nmap',
  'plain_nmap_os',
  'api_nmap_os',
  'sequential',
  'api_native',
  'api_nmap_no_udp',
  'api_native_no_udp',
  'engine_discovery',
  'engine_ports',
  'exp_overlap',
  'exp_discovery_no_retry',
];
const DEFAULT_VARIANTS = ALL_VARIANTS.filter((v) => !v.startsWith('exp_') || process.env.BENCH_SCAN_EXPERIMENTS === '1');
const wanted = new Set(
  (process.env.BENCH_SCAN_VARIANTS ?? DEFAULT_VARIANTS.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

const log = (...args) => console.error('[scan-bench]', ...args);
const failures = [];

// ---------------------------------------------------------------------------------------------
// The lab

const LIVE = Array.from({ length: HOSTS }, (_, i) => `10.66.0.${11 + i}`);
/** Open ports per live host, as the listeners below make them. */
const EXPECTED = new Map(LIVE.map((ip, i) => [ip, (i + 1) % 2 === 1 ? [21, 22, 80] : [22, 25, 80]]));
const EXPECTED_OPEN = [...EXPECTED.values()].reduce((n, ports) => n + ports.length, 0);
const ABSENT = 32 - EXCLUDE.length - HOSTS;

function labEnv() {
  return { ...process.env, NWLAB_OWNER: String(process.pid), NWLAB_QUIET: '1' };
}

/** `bash lab.sh ...args`; waits (up to 10 min) while another live process owns the lab (exit 3). */
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

let labBuilt = false;
function labDownSync() {
  if (!labBuilt) return;
  try {
    execFileSync('bash', [LAB_SCRIPT, 'down'], { env: labEnv(), stdio: ['ignore', 'ignore', 'inherit'], timeout: 60_000 });
    labBuilt = false;
  } catch (err) {
    console.error(`[scan-bench] could not tear the lab down: ${err.message}; run 'bash test/lab/lab.sh down --force'`);
  }
}

async function buildLab() {
  await lab('down');
  labBuilt = true;
  await lab('up', String(HOSTS));
  for (let i = 1; i <= HOSTS; i++) {
    const h = `h${i}`;
    await lab('listen', h, '22', 'banner', `SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.${i}`);
    await lab('listen', h, '80', 'http', i % 2 ? 'nginx/1.18.0' : 'Apache/2.4.52 (Ubuntu)');
    if (i % 2) await lab('listen', h, '21', 'banner', '220 (vsFTPd 3.0.5)');
    else await lab('listen', h, '25', 'banner', `220 h${i}.lab ESMTP Postfix (Ubuntu)`);
  }
}

// ---------------------------------------------------------------------------------------------
// Processes

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

onSignal('tearing the lab down', labDownSync);

// ---------------------------------------------------------------------------------------------
// dist/

// ---------------------------------------------------------------------------------------------
// Netwarden through its API

/** `udpPorts` undefined: scanning.udp_ports' default (53,67,69,123,137,161,500,1900,5353); '' for none. */
function startServer(engine, osDetection = false, udpPorts = undefined) {
  return startApiServer({ from: dist, engine, osDetection, subnet: BLOCK, exclude: EXCLUDE, ports: PORTS, udpPorts });
}

/** One `normal` scan through the API: trigger, poll until it ends, check what it found. */
async function apiScan(server) {
  const started = performance.now();
  const res = await server.request(`/api/scan/trigger?profile=normal&subnet=${encodeURIComponent(BLOCK)}`, { method: 'POST' });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`trigger failed: ${res.status} ${JSON.stringify(body)}`);
  let record;
  for (;;) {
    record = await (await server.request(`/api/scans/${body.scan_id}`)).json();
    if (record.status !== 'running' && record.status !== 'queued') break;
    if (performance.now() - started > 900_000) throw new Error(`scan ${body.scan_id} still running after 15 minutes`);
    await sleep(50);
  }
  const ms = performance.now() - started;
  return { ms, ...(await scanFindings(server, body.scan_id, record)) };
}

// ---------------------------------------------------------------------------------------------
// nmap on its own

let parseNmapXml;
/** One nmap run, parsed. */
const runNmap = (args, stdin = null) => nmap(parseNmapXml, args, stdin);

/** Checks that a run found exactly the live hosts and their open ports. */
function check(variant, found) {
  const problems = foundProblems(EXPECTED, found);
  if (problems.length) failures.push(`${variant}: ${problems.join('; ')}`);
  return problems;
}

// ---------------------------------------------------------------------------------------------

async function main() {
  if (process.getuid?.() !== 0) throw new Error('the scan benchmark needs root (network namespaces, raw sockets for nmap)');
  const nmapVersion = /Nmap version (\S+)/.exec(execFileSync('nmap', ['--version'], { encoding: 'utf8' }))?.[1];
  if (!nmapVersion) throw new Error('nmap is not installed');
  ensureBuilt({ markers: ['api/app.js'], log, keepOnBuildError: true });
  ({ parseNmapXml } = await import(new URL('core/nmap-xml.js', dist)));
  const { discoveryArgs, portScanArgs } = await import(new URL('core/nmap-args.js', dist));
  const hasNative = existsSync(new URL('engines/native/engine.js', dist));
  if (!hasNative) log('dist/engines/native/engine.js does not exist: skipping api_native');

  const loadBefore = os.loadavg();
  log(`building the lab: ${HOSTS} hosts, ${ABSENT} empty addresses in ${BLOCK} (minus ${EXCLUDE.join(', ')})`);
  await buildLab();

  const common = { privileged: true, resolveHostnames: false, hostTimeoutSeconds: 300 };
  const engineDiscovery = discoveryArgs(BLOCK, EXCLUDE, common);
  const enginePorts = portScanArgs({ ...common, profile: 'normal', ports: PORTS, osDetection: false });
  const plainArgs = ['-n', '-sS', '-sV', `-p${PORTS}`, '-oX', '-', ...LIVE];
  const plainOsArgs = ['-n', '-sS', '-sV', '-O', '--osscan-limit', `-p${PORTS}`, '-oX', '-', ...LIVE];
  const noRetryDiscovery = engineDiscovery.map((a, i, all) => (all[i - 1] === '--max-retries' ? '0' : a));
  const sweepArgs = ['-n', '-sn', '--exclude', EXCLUDE.join(','), '-oX', '-', BLOCK];

  const servers = {};
  const variants = {
    plain_nmap: {
      label: 'plain nmap, one run over the live hosts (floor)',
      command: `nmap ${plainArgs.filter((a) => a !== '-oX' && a !== '-').join(' ')}`,
      async run() {
        const r = await runNmap(plainArgs);
        return { ms: r.ms, found: openPorts(r.hosts), nmapElapsed: r.elapsed };
      },
    },
    api_nmap: {
      label: 'Netwarden API, normal scan, nmap engine',
      command: `POST /api/scan/trigger?profile=normal&subnet=${BLOCK} (network.exclude ${EXCLUDE.join(',')}, port_range ${PORTS}, os_detection false)`,
      async run() {
        servers.nmap ??= await startServer('nmap');
        const r = await apiScan(servers.nmap);
        return { ms: r.ms, found: r.found, serverSeconds: r.serverSeconds };
      },
    },
    plain_nmap_os: {
      label: 'plain nmap with OS detection, one run over the live hosts (floor)',
      command: `nmap ${plainOsArgs.filter((a) => a !== '-oX' && a !== '-').join(' ')}`,
      async run() {
        const r = await runNmap(plainOsArgs);
        return { ms: r.ms, found: openPorts(r.hosts), nmapElapsed: r.elapsed };
      },
    },
    api_nmap_os: {
      label: 'Netwarden API, normal scan, nmap engine, OS detection on',
      command: `as api_nmap with scanning.os_detection true`,
      async run() {
        servers.nmapOs ??= await startServer('nmap', true);
        const r = await apiScan(servers.nmapOs);
        return { ms: r.ms, found: r.found, serverSeconds: r.serverSeconds };
      },
    },
    sequential: {
      label: 'sequential: nmap -sn, then one nmap per live host, one after another',
      command: `nmap -n -sn --exclude ${EXCLUDE.join(',')} ${BLOCK}; then for each up host: nmap -n -sS -sV -p${PORTS} <host>`,
      async run() {
        const started = performance.now();
        const sweep = await runNmap(sweepArgs);
        const found = new Map();
        for (const host of sweep.hosts) {
          const r = await runNmap(['-n', '-sS', '-sV', `-p${PORTS}`, '-oX', '-', host.ip]);
          for (const [ip, ports] of openPorts(r.hosts)) found.set(ip, ports);
          if (!r.hosts.length) found.set(host.ip, []);
        }
        return { ms: performance.now() - started, found, sweepMs: round(sweep.ms) };
      },
    },
    api_native: {
      label: 'Netwarden API, normal scan, native engine',
      command: `as api_nmap with scanning.engine native`,
      skip: !hasNative,
      async run() {
        servers.native ??= await startServer('native');
        const r = await apiScan(servers.native);
        return { ms: r.ms, found: r.found, serverSeconds: r.serverSeconds };
      },
    },
    api_nmap_no_udp: {
      label: 'Netwarden API, normal scan, nmap engine, no UDP port (as before issue 21)',
      command: `as api_nmap with scanning.udp_ports ""`,
      async run() {
        servers.nmapNoUdp ??= await startServer('nmap', false, '');
        const r = await apiScan(servers.nmapNoUdp);
        return { ms: r.ms, found: r.found, serverSeconds: r.serverSeconds };
      },
    },
    api_native_no_udp: {
      label: 'Netwarden API, normal scan, native engine, no UDP port (as before issue 21)',
      command: `as api_native with scanning.udp_ports ""`,
      skip: !hasNative,
      async run() {
        servers.nativeNoUdp ??= await startServer('native', false, '');
        const r = await apiScan(servers.nativeNoUdp);
        return { ms: r.ms, found: r.found, serverSeconds: r.serverSeconds };
      },
    },
    engine_discovery: {
      label: "the engine's discovery run alone",
      command: `nmap ${engineDiscovery.join(' ')}`,
      async run() {
        const r = await runNmap(engineDiscovery);
        return { ms: r.ms, found: new Map(r.hosts.map((h) => [h.ip, null])), nmapElapsed: r.elapsed };
      },
    },
    engine_ports: {
      label: "the engine's port/service run alone (live hosts on stdin)",
      command: `nmap ${enginePorts.join(' ')} < live hosts`,
      async run() {
        const r = await runNmap(enginePorts, `${LIVE.join('\n')}\n`);
        return { ms: r.ms, found: openPorts(r.hosts), nmapElapsed: r.elapsed };
      },
    },
    exp_overlap: {
      label: 'experiment: discovery and the port scan of the live hosts started together',
      command: 'engine_discovery & engine_ports, both at once',
      async run() {
        const started = performance.now();
        const [d, p] = await Promise.all([runNmap(engineDiscovery), runNmap(enginePorts, `${LIVE.join('\n')}\n`)]);
        const found = openPorts(p.hosts);
        for (const h of d.hosts) if (!found.has(h.ip)) found.set(h.ip, []);
        return { ms: performance.now() - started, found, discoveryMs: round(d.ms), portsMs: round(p.ms) };
      },
    },
    exp_discovery_no_retry: {
      label: 'experiment: the engine discovery without ARP retransmission',
      command: `nmap ${noRetryDiscovery.join(' ')}`,
      async run() {
        const r = await runNmap(noRetryDiscovery);
        return { ms: r.ms, found: new Map(r.hosts.map((h) => [h.ip, null])), nmapElapsed: r.elapsed };
      },
    },
  };
  const order = ALL_VARIANTS.filter((v) => wanted.has(v) && !variants[v].skip);

  const results = Object.fromEntries(order.map((v) => [v, { runs: [] }]));
  try {
    // Warm-up (not measured): page cache for nmap's data files, the servers' first scan, JIT.
    for (const v of order.filter((n) => n !== 'sequential')) {
      await lab('neigh-flush');
      const r = await variants[v].run();
      log(`warm-up ${v}: ${Math.round(r.ms)} ms`);
    }
    for (let rep = 1; rep <= REPEAT; rep++) {
      for (const v of order) {
        // Every run starts with a cold ARP cache on the scanner's side, as a scan of a network
        // the machine has not talked to lately would.
        await lab('neigh-flush');
        const r = await variants[v].run();
        const problems = check(`${v} run ${rep}`, r.found);
        const { found: _found, ...rest } = r;
        results[v].runs.push({
          ...rest,
          ms: round(r.ms),
          hostsFound: r.found.size,
          openPorts: [...r.found.values()].reduce((n, p) => n + (p?.length ?? 0), 0),
          problems,
        });
        log(`run ${rep}/${REPEAT} ${v}: ${Math.round(r.ms)} ms${problems.length ? ` PROBLEMS: ${problems.join('; ')}` : ''}`);
      }
    }
  } finally {
    for (const server of Object.values(servers)) await server.close().catch(() => {});
    labDownSync();
  }

  for (const v of order) {
    const ms = results[v].runs.map((r) => r.ms);
    Object.assign(results[v], {
      label: variants[v].label,
      command: variants[v].command,
      median_ms: round(median(ms)),
      min_ms: Math.min(...ms),
      max_ms: Math.max(...ms),
    });
  }
  const med = (v) => results[v]?.median_ms ?? null;
  const ratio = (a, b) => (a !== null && b !== null ? round(a / b, 2) : null);
  const ratios = {
    api_nmap_over_plain_nmap: ratio(med('api_nmap'), med('plain_nmap')),
    api_nmap_os_over_plain_nmap_os: ratio(med('api_nmap_os'), med('plain_nmap_os')),
    sequential_over_api_nmap: ratio(med('sequential'), med('api_nmap')),
    api_native_over_plain_nmap: ratio(med('api_native'), med('plain_nmap')),
    sequential_over_api_native: ratio(med('sequential'), med('api_native')),
    // Issue 21 §2: the default UDP ports may add at most 20 % to a lab normal scan.
    udp_cost_nmap: ratio(med('api_nmap'), med('api_nmap_no_udp')),
    udp_cost_native: ratio(med('api_native'), med('api_native_no_udp')),
    ...(results.exp_overlap ? { exp_overlap_over_plain_nmap: ratio(med('exp_overlap'), med('plain_nmap')) } : {}),
  };
  const targets = {
    api_nmap_at_most_1_1x_plain: ratios.api_nmap_over_plain_nmap === null ? null : ratios.api_nmap_over_plain_nmap <= 1.1,
    api_nmap_os_at_most_1_1x_plain_os: ratios.api_nmap_os_over_plain_nmap_os === null ? null : ratios.api_nmap_os_over_plain_nmap_os <= 1.1,
    api_nmap_at_least_3x_faster_than_sequential: ratios.sequential_over_api_nmap === null ? null : ratios.sequential_over_api_nmap >= 3,
    udp_adds_at_most_20_percent_nmap: ratios.udp_cost_nmap === null ? null : ratios.udp_cost_nmap <= 1.2,
    udp_adds_at_most_20_percent_native: ratios.udp_cost_native === null ? null : ratios.udp_cost_native <= 1.2,
  };
  const breakdown =
    med('api_nmap') !== null && med('engine_discovery') !== null && med('engine_ports') !== null
      ? {
          discovery_ms: med('engine_discovery'),
          ports_and_services_ms: med('engine_ports'),
          // Discovery runs alongside the port scan of the hosts known from earlier scans, so the
          // API scan's time beyond its port run is what neither overlaps nor hides.
          beyond_port_run_ms: round(med('api_nmap') - med('engine_ports')),
          hidden_by_overlap_ms: round(med('engine_discovery') + med('engine_ports') - med('api_nmap')),
          discovery_share_of_api: round(med('engine_discovery') / med('api_nmap'), 2),
          engine_ports_over_plain_nmap: ratio(med('engine_ports'), med('plain_nmap')),
        }
      : null;

  const cpus = os.cpus();
  const report = {
    date: new Date().toISOString(),
    machine: {
      cpu: cpus[0]?.model ?? 'unknown',
      cores: cpus.length,
      memory_gb: round(os.totalmem() / 2 ** 30, 1),
      os: `${os.type()} ${os.release()}`,
      node: process.version,
      nmap: nmapVersion,
      load_average_before: loadBefore.map((n) => round(n, 2)),
      load_average_after: os.loadavg().map((n) => round(n, 2)),
    },
    lab: {
      block: BLOCK,
      excluded: EXCLUDE,
      live_hosts: LIVE,
      absent_addresses: ABSENT,
      open_ports_expected: EXPECTED_OPEN,
      listeners: 'each host: SSH banner on 22, HTTP on 80; odd hosts an FTP banner on 21, even hosts an SMTP banner on 25',
      port_range: PORTS,
      os_detection: 'off, and on in the *_os variants',
    },
    settings: { repeat: REPEAT, variants: order },
    results,
    ratios,
    targets,
    breakdown,
    failures,
  };
  const name = process.env.BENCH_SCAN_RESULTS ?? 'scan-lab';
  writeResults(name, report, markdown(report));
  log(`wrote bench/results/${name}.json and bench/results/${name}.md`);
  console.log(markdown(report));
  if (failures.length) {
    log(`FAILED checks:\n  ${failures.join('\n  ')}`);
    process.exitCode = 1;
  }
}

function markdown(r) {
  const s = (ms) => (ms === null || ms === undefined ? '–' : `${(ms / 1000).toFixed(2)} s`);
  const lines = [];
  lines.push('# Scan benchmark on the namespace lab', '');
  lines.push(
    `${r.date} · ${r.machine.cpu} × ${r.machine.cores} · ${r.machine.memory_gb} GB · ${r.machine.os} · Node ${r.machine.node} · nmap ${r.machine.nmap}`,
    '',
  );
  lines.push(
    `Load average before ${r.machine.load_average_before.join(' / ')}, after ${r.machine.load_average_after.join(' / ')} (1/5/15 min). ` +
      'The machine is shared: compare runs from the same machine and a similar load only.',
    '',
  );
  lines.push(
    `Lab (test/lab/lab.sh): ${r.lab.live_hosts.length} live hosts (${r.lab.live_hosts[0]}–${r.lab.live_hosts.at(-1)}) and ${r.lab.absent_addresses} empty addresses ` +
      `in ${r.lab.block} without ${r.lab.excluded.join(', ')}; ${r.lab.listeners} (${r.lab.open_ports_expected} open ports). ` +
      `Ports ${r.lab.port_range}; OS detection off, on in the *_os variants. The API servers are kept between runs, so from the second scan on the hosts online before are port-scanned while discovery runs. Each variant ran ${r.settings.repeat} times in rotation after one warm-up run; median shown.`,
    '',
  );
  lines.push('| Variant | Median | Min | Max | Runs | What |', '|---|---:|---:|---:|---|---|');
  for (const [name, v] of Object.entries(r.results)) {
    lines.push(
      `| ${name} | ${s(v.median_ms)} | ${s(v.min_ms)} | ${s(v.max_ms)} | ${v.runs.map((x) => s(x.ms)).join(', ')} | ${v.label}: \`${v.command}\` |`,
    );
  }
  lines.push('', '## Ratios', '', '| Ratio | Value | Target |', '|---|---:|---|');
  const yes = (b) => (b === null ? '–' : b ? 'met' : '**missed**');
  lines.push(
    `| API normal scan (nmap) / plain nmap | ${r.ratios.api_nmap_over_plain_nmap ?? '–'}× | ≤ 1.1× ${yes(r.targets.api_nmap_at_most_1_1x_plain)} |`,
  );
  lines.push(
    `| with OS detection: API normal scan (nmap) / plain nmap | ${r.ratios.api_nmap_os_over_plain_nmap_os ?? '–'}× | ≤ 1.1× ${yes(r.targets.api_nmap_os_at_most_1_1x_plain_os)} |`,
  );
  lines.push(
    `| sequential / API normal scan (nmap) | ${r.ratios.sequential_over_api_nmap ?? '–'}× | ≥ 3× ${yes(r.targets.api_nmap_at_least_3x_faster_than_sequential)} |`,
  );
  lines.push(`| API normal scan (native) / plain nmap | ${r.ratios.api_native_over_plain_nmap ?? '–'}× | – |`);
  lines.push(`| sequential / API normal scan (native) | ${r.ratios.sequential_over_api_native ?? '–'}× | – |`);
  lines.push(
    `| UDP cost (nmap): API normal scan / the same without UDP ports | ${r.ratios.udp_cost_nmap ?? '–'}× | ≤ 1.2× ${yes(r.targets.udp_adds_at_most_20_percent_nmap)} |`,
  );
  lines.push(
    `| UDP cost (native): API normal scan / the same without UDP ports | ${r.ratios.udp_cost_native ?? '–'}× | ≤ 1.2× ${yes(r.targets.udp_adds_at_most_20_percent_native)} |`,
  );
  if (r.breakdown) {
    const b = r.breakdown;
    lines.push('', '## Where the API scan spends its time', '');
    lines.push(
      `- Discovery (\`nmap -sn\` over the block, the engine's arguments) alone: ${s(b.discovery_ms)}, ${Math.round(b.discovery_share_of_api * 100)}% of the API scan's time; it runs alongside the port scan of the hosts known from earlier scans.`,
    );
    lines.push(
      `- Port scan and version detection over the live hosts (the engine's arguments): ${s(b.ports_and_services_ms)} (${b.engine_ports_over_plain_nmap === null ? '–' : b.engine_ports_over_plain_nmap.toFixed(2)}× the plain run).`,
    );
    lines.push(
      `- The API scan beyond its port run (spawning, XML parsing, inventory writes, risk evaluation, polling granularity of 50 ms, discovery not hidden): ${s(b.beyond_port_run_ms)}; discovery and the port run one after the other would take ${s(b.hidden_by_overlap_ms)} more than the API scan does.`,
    );
  }
  const exp = r.results;
  if (exp.exp_overlap || exp.exp_discovery_no_retry) {
    lines.push('', '## Experiments', '');
    if (exp.exp_overlap) {
      lines.push(
        `- Discovery and the port scan of the live hosts at the same time: ${s(exp.exp_overlap.median_ms)} ` +
          `(${r.ratios.exp_overlap_over_plain_nmap}× plain nmap), against ${s(r.breakdown?.discovery_ms)} + ${s(r.breakdown?.ports_and_services_ms)} one after the other.`,
      );
    }
    if (exp.exp_discovery_no_retry) {
      lines.push(
        `- Discovery with \`--max-retries 0\` (one ARP request per address, no retransmission): ${s(exp.exp_discovery_no_retry.median_ms)} against ${s(r.breakdown?.discovery_ms)}.`,
      );
    }
  }
  if (r.failures.length) lines.push('', '## Failed checks', '', ...r.failures.map((f) => `- ${f}`));
  lines.push('');
  return lines.join('\n');
}

main().catch((err) => {
  console.error(`[scan-bench] ${err?.stack ?? err}`);
  labDownSync();
  process.exitCode = 1;
});
