#!/usr/bin/env node
// Scan benchmark of Netwarden on loopback: listeners this process starts on 127.0.1.11-18, scanned
// as the block 127.0.1.0/27. Needs root (raw sockets for -sS, OS detection, ports below 1024) and
// nmap. Never scans anything outside 127.0.0.0/8, always with -n.
//
//   npm run bench:scan
//
// The block: every address of 127.0.0.0/8 answers on Linux (the loopback interface owns the whole
// block), so all 32 addresses of 127.0.1.0/27 are live hosts; 8 of them (127.0.1.11-18) have three
// listeners each (SSH banner on 22, HTTP on 80, and an FTP banner on 21 or an SMTP banner on 25),
// the other 24 have no open port. Port range 1-1000.
//
// Measured, BENCH_SCAN_REPEAT times each (default 5), with OS detection off and on, in the same run:
//   plain_nmap[_os]   one `nmap -n -sS -sV -p1-1000 [-O --osscan-limit] <the 32 live hosts>` (the anchor)
//   engine_ports[_os] the engine's own port-scan run (arguments from dist/core/nmap-args.js) over the
//                     32 live hosts: the floor of the API scan, discovery and bookkeeping aside
//   api_nmap[_os]     a `normal` scan through the API (POST /api/scan/trigger, then its scan_finished
//                     event on GET /api/events), scanning.engine nmap, scanning.os_detection off [on], the real app
//                     from dist/ on SQLite in a temporary directory. Its first (warm-up) scan has no
//                     previous devices; the measured ones know the block's hosts from earlier scans.
// Each anchor run is measured right before its API run (plain, engine_ports, api, plain_os, ...),
// so that load from other work on the shared machine falls on both alike; the ratios are medians
// of the per-pair ratios, and the medians of each variant are shown too.
// Optional variants (BENCH_SCAN_VARIANTS): engine_discovery (the engine's discovery run alone),
// sequential (nmap -sn, then one nmap per live host), api_native.
//
// Target: api_nmap <= 1.1 x plain_nmap, OS detection off and on.
// Results: bench/results/scan.json and bench/results/scan.md. Exit status 1 when a run found other
// hosts or open ports than the listeners make, or a scan did not complete.
//
// Environment: BENCH_SCAN_REPEAT (5), BENCH_SCAN_VARIANTS (comma list), BENCH_SKIP_BUILD=1 (use
// dist/ as it is), BENCH_LOG_LEVEL (server log level, default silent), BENCH_SCAN_BASE_DIST (the
// dist/ of another build, e.g. the previous commit's: adds api_nmap_base and api_nmap_os_base, the
// same API scans served by that build, measured in the same rounds).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureBuilt, writeResults } from './lib.mjs';
import { foundProblems, median, nmap, onSignal, openPorts, positive, round, scanFindings, startApiServer } from './scan-common.mjs';

// Scope guard: servers started by this benchmark may scan only loopback.
process.env.NETWARDEN_SCAN_ALLOW = '127.0.0.0/8';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const dist = pathToFileURL(join(root, 'dist') + '/');

const BLOCK = '127.0.1.0/27';
const PORTS = '1-1000';
const REPEAT = positive('BENCH_SCAN_REPEAT', 5);
/** Measured in this order, round after round: each anchor right before the API scan it is compared with. */
const BASE_DIST = process.env.BENCH_SCAN_BASE_DIST ? pathToFileURL(process.env.BENCH_SCAN_BASE_DIST.replace(/\/?$/, '/')) : null;
const ALL_VARIANTS = [
  'plain_nmap',
  'engine_ports',
  'api_nmap_base',
  'api_nmap',
  'plain_nmap_os',
  'engine_ports_os',
  'api_nmap_os_base',
  'api_nmap_os',
  'engine_discovery',
  'sequential',
  'api_native',
];
const DEFAULT_VARIANTS = ['plain_nmap', 'engine_ports', 'api_nmap', 'plain_nmap_os', 'engine_ports_os', 'api_nmap_os'].concat(
  BASE_DIST ? ['api_nmap_base', 'api_nmap_os_base'] : [],
);
const wanted = new Set(
  (process.env.BENCH_SCAN_VARIANTS ?? DEFAULT_VARIANTS.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

const log = (...args) => console.error('[scan-bench]', ...args);
const failures = [];

// ---------------------------------------------------------------------------------------------
// The listeners

/** Every address of the block: loopback answers on all of them. */
const LIVE = Array.from({ length: 32 }, (_, i) => `127.0.1.${i}`);
const SERVED = Array.from({ length: 8 }, (_, i) => `127.0.1.${11 + i}`);
/** Open ports per live host, as the listeners below make them. */
const EXPECTED = new Map(LIVE.map((ip) => [ip, []]));
SERVED.forEach((ip, i) => EXPECTED.set(ip, i % 2 === 0 ? [21, 22, 80] : [22, 25, 80]));
const EXPECTED_OPEN = [...EXPECTED.values()].reduce((n, ports) => n + ports.length, 0);

const servers = [];

function listen(server, host, port) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      servers.push(server);
      resolve();
    });
  });
}

function banner(host, port, text) {
  const server = createServer((socket) => {
    socket.on('error', () => {});
    socket.write(text);
    socket.setTimeout(5000, () => socket.destroy());
    socket.on('data', () => {});
  });
  return listen(server, host, port);
}

function http(host, port, serverHeader) {
  const server = createHttpServer((req, res) => {
    res.writeHead(200, { Server: serverHeader, 'Content-Type': 'text/html' });
    res.end(req.method === 'HEAD' ? undefined : '<html><head><title>Bench device</title></head><body>ok</body></html>');
  });
  return listen(server, host, port);
}

async function startListeners() {
  for (const [i, ip] of SERVED.entries()) {
    await banner(ip, 22, `SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.${i + 1}\r\n`);
    await http(ip, 80, i % 2 ? 'Apache/2.4.52 (Ubuntu)' : 'nginx/1.18.0');
    if (i % 2 === 0) await banner(ip, 21, '220 (vsFTPd 3.0.5)\r\n');
    else await banner(ip, 25, `220 h${i + 1}.bench ESMTP Postfix (Ubuntu)\r\n`);
  }
}

function stopListeners() {
  for (const server of servers) {
    if ('closeAllConnections' in server) server.closeAllConnections();
    server.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Processes

onSignal('', stopListeners);

// ---------------------------------------------------------------------------------------------
// dist/

// ---------------------------------------------------------------------------------------------
// Netwarden through its API

function startServer(engine, osDetection, from = dist) {
  return startApiServer({ from, engine, osDetection, subnet: BLOCK, exclude: [], ports: PORTS });
}

/**
 * One `normal` scan through the API: trigger, wait for its scan_finished event (GET /api/events,
 * opened before the trigger), check what it found. Waiting on the event stream instead of polling
 * keeps the benchmark's own requests from taking CPU from nmap on a busy machine.
 */
async function apiScan(server) {
  const events = new AbortController();
  const stream = await server.request('/api/events', { signal: events.signal });
  if (stream.status !== 200) throw new Error(`GET /api/events: ${stream.status}`);
  const finished = new Map();
  let wanted = null;
  const reading = (async () => {
    const reader = stream.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the event stream ended before the scan did');
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (!/^event: scan_finished$/m.test(block)) continue;
        const data = JSON.parse(/^data: (.*)$/m.exec(block)[1]);
        finished.set(data.scan_id, data);
        if (data.scan_id === wanted) return data;
      }
    }
  })();
  reading.catch(() => {});

  const started = performance.now();
  const res = await server.request(`/api/scan/trigger?profile=normal&subnet=${encodeURIComponent(BLOCK)}`, { method: 'POST' });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`trigger failed: ${res.status} ${JSON.stringify(body)}`);
  wanted = body.scan_id;
  let timer;
  const timeout = new Promise((resolve) => (timer = setTimeout(() => resolve(null), 900_000)));
  const record = finished.get(wanted) ?? (await Promise.race([reading, timeout]));
  clearTimeout(timer);
  const ms = performance.now() - started;
  events.abort();
  if (!record) throw new Error(`scan ${body.scan_id} still running after 15 minutes`);
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

/** CPU seconds so far of this process (which runs the API server) and of its reaped children (nmap). */
function cpuNow() {
  const self = process.cpuUsage();
  let children = 0;
  try {
    // /proc/self/stat: fields 16 and 17 (cutime, cstime) are the CPU time of waited-for children, in clock ticks.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    children = (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    children = NaN;
  }
  return { node: (self.user + self.system) / 1e6, children };
}

async function main() {
  if (process.getuid?.() !== 0) throw new Error('the scan benchmark needs root (raw sockets for nmap -sS and -O, listeners on ports below 1024)');
  const nmapVersion = /Nmap version (\S+)/.exec(execFileSync('nmap', ['--version'], { encoding: 'utf8' }))?.[1];
  if (!nmapVersion) throw new Error('nmap is not installed');
  ensureBuilt({ markers: ['api/app.js'], log, keepOnBuildError: true });
  ({ parseNmapXml } = await import(new URL('core/nmap-xml.js', dist)));
  const { discoveryArgs, portScanArgs } = await import(new URL('core/nmap-args.js', dist));
  const hasNative = existsSync(new URL('engines/native/engine.js', dist));
  if (!hasNative && wanted.has('api_native')) log('dist/engines/native/engine.js does not exist: skipping api_native');

  const loadBefore = os.loadavg();
  log(`starting ${SERVED.length * 3} listeners on ${SERVED[0]}-${SERVED.at(-1)}`);
  await startListeners();

  const common = { privileged: true, resolveHostnames: false, hostTimeoutSeconds: 300 };
  const engineDiscovery = discoveryArgs(BLOCK, [], common);
  const enginePorts = (osDetection) => portScanArgs({ ...common, profile: 'normal', ports: PORTS, osDetection });
  // --osscan-limit as the engine: OS detection only of hosts with an open and a closed port.
  const plainArgs = (osDetection) => ['-n', '-sS', '-sV', ...(osDetection ? ['-O', '--osscan-limit'] : []), `-p${PORTS}`, '-oX', '-', ...LIVE];
  const shown = (args) =>
    `nmap ${args.filter((a) => a !== '-oX' && a !== '-').join(' ')}`.replace(LIVE.join(' '), `<the ${LIVE.length} addresses of ${BLOCK}>`);
  const sweepArgs = ['-n', '-sn', '-oX', '-', BLOCK];

  const apiServers = {};
  const enginePortsVariant = (osDetection) => ({
    label: `the engine's port/service run alone (the live hosts on stdin), OS detection ${osDetection ? 'on' : 'off'}: the floor of the API scan`,
    command: `nmap ${enginePorts(osDetection).join(' ')} < live hosts`,
    async run() {
      const r = await runNmap(enginePorts(osDetection), `${LIVE.join('\n')}\n`);
      return { ms: r.ms, found: openPorts(r.hosts), nmapElapsed: r.elapsed };
    },
  });
  const plain = (osDetection) => ({
    label: `plain nmap, one run over the live hosts, OS detection ${osDetection ? 'on' : 'off'} (anchor)`,
    command: shown(plainArgs(osDetection)),
    async run() {
      const r = await runNmap(plainArgs(osDetection));
      return { ms: r.ms, found: openPorts(r.hosts), nmapElapsed: r.elapsed };
    },
  });
  const api = (name, engine, osDetection, from = dist) => ({
    label: `Netwarden API, normal scan, ${engine} engine, OS detection ${osDetection ? 'on' : 'off'}${from === dist ? '' : `, the build in ${process.env.BENCH_SCAN_BASE_DIST}`}`,
    command: `POST /api/scan/trigger?profile=normal&subnet=${BLOCK} (port_range ${PORTS}, os_detection ${osDetection})`,
    skip: !from,
    async run() {
      apiServers[name] ??= await startServer(engine, osDetection, from);
      const r = await apiScan(apiServers[name]);
      return { ms: r.ms, found: r.found, serverSeconds: r.serverSeconds };
    },
  });
  const variants = {
    plain_nmap: plain(false),
    api_nmap: api('nmap', 'nmap', false),
    plain_nmap_os: plain(true),
    api_nmap_os: api('nmap_os', 'nmap', true),
    api_nmap_base: api('nmap_base', 'nmap', false, BASE_DIST),
    api_nmap_os_base: api('nmap_os_base', 'nmap', true, BASE_DIST),
    sequential: {
      label: 'sequential: nmap -sn, then one nmap per live host, one after another',
      command: `nmap -n -sn ${BLOCK}; then for each up host: nmap -n -sS -sV -p${PORTS} <host>`,
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
    api_native: { ...api('native', 'native', false), skip: !hasNative },
    engine_discovery: {
      label: "the engine's discovery run alone",
      command: `nmap ${engineDiscovery.join(' ')}`,
      async run() {
        const r = await runNmap(engineDiscovery);
        return { ms: r.ms, found: new Map(r.hosts.map((h) => [h.ip, null])), nmapElapsed: r.elapsed };
      },
    },
    engine_ports: enginePortsVariant(false),
    engine_ports_os: enginePortsVariant(true),
  };
  const order = ALL_VARIANTS.filter((v) => wanted.has(v) && !variants[v].skip);

  const results = Object.fromEntries(order.map((v) => [v, { runs: [] }]));
  try {
    // Warm-up (not measured): page cache for nmap's data files, the servers' first scan, JIT.
    for (const v of order.filter((n) => n !== 'sequential')) {
      const r = await variants[v].run();
      log(`warm-up ${v}: ${Math.round(r.ms)} ms`);
    }
    for (let rep = 1; rep <= REPEAT; rep++) {
      for (const v of order) {
        const before = cpuNow();
        const r = await variants[v].run();
        const after = cpuNow();
        const problems = check(`${v} run ${rep}`, r.found);
        const { found: _found, ...rest } = r;
        results[v].runs.push({
          ...rest,
          ms: round(r.ms),
          cpu_node_ms: round((after.node - before.node) * 1000),
          cpu_nmap_ms: round((after.children - before.children) * 1000),
          hostsFound: r.found.size,
          openPorts: [...r.found.values()].reduce((n, p) => n + (p?.length ?? 0), 0),
          problems,
        });
        log(`run ${rep}/${REPEAT} ${v}: ${Math.round(r.ms)} ms${problems.length ? ` PROBLEMS: ${problems.join('; ')}` : ''}`);
      }
    }
  } finally {
    for (const server of Object.values(apiServers)) await server.close().catch(() => {});
    stopListeners();
  }

  for (const v of order) {
    const runs = results[v].runs;
    const ms = runs.map((r) => r.ms);
    Object.assign(results[v], {
      label: variants[v].label,
      command: variants[v].command,
      median_ms: round(median(ms)),
      min_ms: Math.min(...ms),
      max_ms: Math.max(...ms),
      median_cpu_node_ms: round(median(runs.map((r) => r.cpu_node_ms))),
      median_cpu_nmap_ms: round(median(runs.map((r) => r.cpu_nmap_ms))),
    });
  }
  const med = (v) => results[v]?.median_ms ?? null;
  /** Median of the ratios of each API run to the anchor run measured right before it. */
  const pairRatio = (anchor, measured) => {
    if (!results[anchor] || !results[measured]) return null;
    const ratios = results[measured].runs.map((r, i) => r.ms / results[anchor].runs[i].ms);
    return round(median(ratios), 3);
  };
  const ratios = {
    api_nmap_over_plain_nmap: pairRatio('plain_nmap', 'api_nmap'),
    api_nmap_os_over_plain_nmap_os: pairRatio('plain_nmap_os', 'api_nmap_os'),
    api_nmap_over_engine_ports: pairRatio('engine_ports', 'api_nmap'),
    api_nmap_os_over_engine_ports_os: pairRatio('engine_ports_os', 'api_nmap_os'),
    api_nmap_base_over_plain_nmap: pairRatio('plain_nmap', 'api_nmap_base'),
    api_nmap_os_base_over_plain_nmap_os: pairRatio('plain_nmap_os', 'api_nmap_os_base'),
    api_nmap_over_api_nmap_base: pairRatio('api_nmap_base', 'api_nmap'),
    api_nmap_os_over_api_nmap_os_base: pairRatio('api_nmap_os_base', 'api_nmap_os'),
    sequential_over_api_nmap: med('sequential') && med('api_nmap') ? round(med('sequential') / med('api_nmap'), 2) : null,
    api_native_over_plain_nmap: med('api_native') && med('plain_nmap') ? round(med('api_native') / med('plain_nmap'), 2) : null,
  };
  const at = (r) => (r === null ? null : r <= 1.1);
  const targets = {
    api_nmap_at_most_1_1x_plain: at(ratios.api_nmap_over_plain_nmap),
    api_nmap_os_at_most_1_1x_plain_os: at(ratios.api_nmap_os_over_plain_nmap_os),
  };

  const cpus = os.cpus();
  const report = {
    date: new Date().toISOString(),
    commit: gitCommit(),
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
    target: {
      block: BLOCK,
      live_hosts: LIVE.length,
      served_hosts: SERVED,
      open_ports_expected: EXPECTED_OPEN,
      listeners: 'each served host: SSH banner on 22, HTTP on 80; the odd-numbered ones an FTP banner on 21, the others an SMTP banner on 25',
      port_range: PORTS,
    },
    settings: { repeat: REPEAT, variants: order },
    results,
    ratios,
    targets,
    failures,
  };
  writeResults('scan', report, markdown(report));
  log(`wrote bench/results/scan.json and bench/results/scan.md`);
  console.log(markdown(report));
  if (failures.length) {
    log(`FAILED checks:\n  ${failures.join('\n  ')}`);
    process.exitCode = 1;
  }
}

function gitCommit() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

function markdown(r) {
  const s = (ms) => (ms === null || ms === undefined ? '–' : `${(ms / 1000).toFixed(2)} s`);
  const lines = [];
  lines.push('# Scan benchmark', '');
  lines.push(
    `${r.date} · commit ${r.commit ?? '?'} · ${r.machine.cpu} × ${r.machine.cores} · ${r.machine.memory_gb} GB · ${r.machine.os} · Node ${r.machine.node} · nmap ${r.machine.nmap}`,
    '',
  );
  lines.push(
    `Load average before ${r.machine.load_average_before.join(' / ')}, after ${r.machine.load_average_after.join(' / ')} (1/5/15 min). ` +
      'The machine is shared: compare runs from the same machine and a similar load only; CPU time is the steadier figure.',
    '',
  );
  lines.push(
    `Target: ${r.target.block} on loopback, ${r.target.live_hosts} live addresses, listeners on ${r.target.served_hosts[0]}–${r.target.served_hosts.at(-1)}: ` +
      `${r.target.listeners} (${r.target.open_ports_expected} open ports). Ports ${r.target.port_range}. ` +
      `Each variant ran ${r.settings.repeat} times, anchors and API scans alternating, after one warm-up run; median shown. ` +
      'CPU: the benchmark process (which runs the API server) and the nmap processes it reaped.',
    '',
  );
  lines.push('| Variant | Median | Min | Max | CPU node | CPU nmap | Runs | What |', '|---|---:|---:|---:|---:|---:|---|---|');
  for (const [name, v] of Object.entries(r.results)) {
    lines.push(
      `| ${name} | ${s(v.median_ms)} | ${s(v.min_ms)} | ${s(v.max_ms)} | ${s(v.median_cpu_node_ms)} | ${s(v.median_cpu_nmap_ms)} | ${v.runs.map((x) => s(x.ms)).join(', ')} | ${v.label}: \`${v.command}\` |`,
    );
  }
  lines.push('', '## Ratios (median of the per-pair ratios)', '', '| Ratio | Value | Target |', '|---|---:|---|');
  const yes = (b) => (b === null || b === undefined ? '–' : b ? 'met' : '**missed**');
  lines.push(
    `| API normal scan / plain nmap, OS detection off | ${r.ratios.api_nmap_over_plain_nmap ?? '–'}× | ≤ 1.1× ${yes(r.targets.api_nmap_at_most_1_1x_plain)} |`,
  );
  lines.push(
    `| API normal scan / plain nmap, OS detection on | ${r.ratios.api_nmap_os_over_plain_nmap_os ?? '–'}× | ≤ 1.1× ${yes(r.targets.api_nmap_os_at_most_1_1x_plain_os)} |`,
  );
  lines.push(`| API normal scan / the engine's own port run, OS detection off | ${r.ratios.api_nmap_over_engine_ports ?? '–'}× | – |`);
  lines.push(`| API normal scan / the engine's own port run, OS detection on | ${r.ratios.api_nmap_os_over_engine_ports_os ?? '–'}× | – |`);
  if (r.ratios.api_nmap_base_over_plain_nmap !== null) {
    lines.push(`| API normal scan of the base build / plain nmap, OS detection off | ${r.ratios.api_nmap_base_over_plain_nmap}× | – |`);
    lines.push(`| API normal scan of the base build / plain nmap, OS detection on | ${r.ratios.api_nmap_os_base_over_plain_nmap_os}× | – |`);
    lines.push(`| API normal scan / the base build's, OS detection off | ${r.ratios.api_nmap_over_api_nmap_base}× | – |`);
    lines.push(`| API normal scan / the base build's, OS detection on | ${r.ratios.api_nmap_os_over_api_nmap_os_base}× | – |`);
  }
  if (r.ratios.sequential_over_api_nmap !== null) lines.push(`| sequential / API normal scan | ${r.ratios.sequential_over_api_nmap}× | – |`);
  if (r.ratios.api_native_over_plain_nmap !== null)
    lines.push(`| API normal scan (native) / plain nmap | ${r.ratios.api_native_over_plain_nmap}× | – |`);
  if (r.failures.length) lines.push('', '## Failed checks', '', ...r.failures.map((f) => `- ${f}`));
  lines.push('');
  return lines.join('\n');
}

main().catch((err) => {
  console.error(`[scan-bench] ${err?.stack ?? err}`);
  stopListeners();
  process.exitCode = 1;
});
