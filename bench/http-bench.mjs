#!/usr/bin/env node
// HTTP benchmark of Netwarden: autocannon (this process) against the real app (a child process,
// bench/server-child.mjs) on SQLite and, when a PostgreSQL URL is given, on PostgreSQL; plus a bare
// Fastify route as the ceiling. Everything listens on 127.0.0.1 only.
//
//   npm run bench                       SQLite only
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench
//
// Environment (all optional):
//   BENCH_DURATION      measured seconds per target (10)     BENCH_WARMUP      warm-up seconds (2)
//   BENCH_CONNECTIONS   autocannon connections (10)          BENCH_PIPELINING  requests in flight per connection (1)
//   BENCH_INVENTORY     import (default): BENCH_DEVICES hosts imported from a generated nmap report (8 open
//                       ports each, bench/nmap-report.mjs), then its 5 %-drift re-import, as issue 24 measures;
//                       seed: BENCH_DEVICES synthetic devices inserted straight (bench/inventory.mjs)
//   BENCH_DEVICES       devices (10000 imported, 100000 seeded) BENCH_STORES      comma list: sqlite,postgres
//   BENCH_ANCHOR        an older commit measured in the same run (git worktree, built; bench/lib.mjs)
//   BENCH_STARTS        cold starts measured (5; 0 skips them)
//   BENCH_DATABASE_URL  PostgreSQL server (else TEST_DATABASE_URL; neither: SQLite only)
//   BENCH_TARGETS       order/subset of health,devices,stats,search (all; stats is required)
//   BENCH_SKIP_BUILD=1  use dist/ as it is, even when older than src/
//   BENCH_CPU_PROF      a directory: a CPU profile of each measured run (that window only, 100 µs sampling) is
//                       written there as <store> <target>.cpuprofile; summarise one with
//                       node bench/cpuprofile-summary.mjs <file> <requests>
//
// Also: searches (`q`) one at a time with terms not asked before (nothing cached), and cold start
// of `netwarden serve` (built, SQLite, empty data directory) to the first healthy /health with the
// idle resident memory after it, with Node's defaults and with NODE_OPTIONS=--max-semi-space-size=4.
//
// Results: bench/results/http.json and bench/results/http.md. Exit status 1 when any response was not
// 2xx, a request errored or timed out, or a sanity check failed.
import { fork, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, openSync, closeSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { anchorBuild, ensureBuilt, ownBuild, writeResults } from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');

const num = (name, fallback) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return n;
};

const inventoryMode = process.env.BENCH_INVENTORY || 'import';
if (!['import', 'seed'].includes(inventoryMode)) throw new Error(`BENCH_INVENTORY must be import or seed, got ${JSON.stringify(inventoryMode)}`);
const settings = {
  inventory: inventoryMode,
  duration: num('BENCH_DURATION', 10),
  warmup: num('BENCH_WARMUP', 2),
  connections: num('BENCH_CONNECTIONS', 10),
  pipelining: num('BENCH_PIPELINING', 1),
  devices: num('BENCH_DEVICES', inventoryMode === 'import' ? 10_000 : 100_000),
  /** 0 skips the cold starts. */
  starts: process.env.BENCH_STARTS === '0' ? 0 : num('BENCH_STARTS', 5),
  seed: 20240601,
};
const pgUrl = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || '';
const storeFilter = (process.env.BENCH_STORES ?? 'sqlite,postgres').split(',').map((s) => s.trim());

const ALL_TARGETS = [
  { name: 'health', path: '/health', label: 'GET /health' },
  { name: 'devices', path: '/api/devices?limit=100', label: 'GET /api/devices?limit=100' },
  { name: 'stats', path: '/api/stats', label: 'GET /api/stats' },
  { name: 'search', path: '/api/devices?q=nas', label: 'GET /api/devices?q=nas (repeated)' },
];
// BENCH_TARGETS reorders or narrows the targets (e.g. "stats,health"); the summary needs stats.
const TARGETS = (process.env.BENCH_TARGETS ?? 'health,devices,stats,search').split(',').map((name) => {
  const target = ALL_TARGETS.find((t) => t.name === name.trim());
  if (!target) throw new Error(`BENCH_TARGETS: unknown target ${JSON.stringify(name)}; use ${ALL_TARGETS.map((t) => t.name).join(', ')}`);
  return target;
});
if (!TARGETS.some((t) => t.name === 'stats')) throw new Error('BENCH_TARGETS must include stats: the summary compares it with the bare route');

/**
 * Search terms for the one-at-a-time search run: each asked once, so the server has counted none
 * of them before. Vendors, OS names, address fragments, port numbers, words that match nothing.
 */
const SEARCH_TERMS = [
  'raspberry',
  'synology',
  'hewlett',
  'vmware',
  'ubiquiti',
  'polycom',
  'panasonic',
  'nest',
  'android',
  'windows',
  'linux 6',
  'ios 17',
  '10.0.3.',
  '10.1.2',
  '.254',
  '3389',
  '1883',
  '5432',
  'printer',
  'camera',
  'b8:27:eb',
  '00:11:32',
  'nothing-matches-this',
  'zzz',
  'lan',
];

/** The V8 setting that keeps the young generation small (idle memory); see docs/configuration.md. */
const TUNED_NODE_OPTIONS = '--max-semi-space-size=4';

const failures = [];
/** Run on Ctrl-C too: drop the PostgreSQL schema, remove the temporary directory. */
const cleanups = new Set();
process.once('SIGINT', async () => {
  console.error('\n[bench] interrupted: cleaning up');
  for (const cleanup of cleanups) await cleanup().catch(() => {});
  process.exit(130);
});
const log = (...args) => console.error('[bench]', ...args);

// ---------------------------------------------------------------------------------------------
// Child server

/** Starts bench/server-child.mjs and resolves once it listens. Its stdout (the app's log) goes to `logFile`. */
function startChild(config, logFile) {
  const fd = openSync(logFile, 'a');
  const child = fork(join(here, 'server-child.mjs'), [], {
    cwd: root,
    env: { ...process.env, BENCH_CHILD_CONFIG: JSON.stringify(config), NODE_ENV: 'production' },
    stdio: ['ignore', fd, 'inherit', 'ipc'],
    // Only lets the child run one full collection after seeding; it changes nothing else.
    execArgv: ['--expose-gc'],
  });
  closeSync(fd);
  const waiters = new Map();
  child.on('message', (m) => {
    const w = waiters.get(m?.type);
    if (w) {
      waiters.delete(m.type);
      w.resolve(m);
    }
  });
  child.on('exit', (code, signal) => {
    for (const w of waiters.values()) w.reject(new Error(`server child exited (code ${code}, signal ${signal})`));
    waiters.clear();
  });
  const waitFor = (type, timeoutMs = 600_000) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server child: no '${type}' within ${timeoutMs} ms`)), timeoutMs);
      waiters.set(type, {
        resolve: (m) => (clearTimeout(timer), resolve(m)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
    });
  const handle = {
    child,
    ready: Promise.race([
      waitFor('ready'),
      waitFor('error').then((m) => {
        throw new Error(`server child failed:\n${m.message}`);
      }),
    ]),
    async memory() {
      const reply = waitFor('rss', 10_000);
      child.send({ type: 'rss' });
      return reply;
    },
    /** The child's CPU time so far (user + system), microseconds. */
    async cpu() {
      const reply = waitFor('cpu', 10_000);
      child.send({ type: 'cpu' });
      const m = await reply;
      return m.user + m.system;
    },
    /** BENCH_CPU_PROF: profiles what runs between start and stop (the measured run only). */
    async profileStart() {
      const reply = waitFor('profile-started', 10_000);
      child.send({ type: 'profile-start' });
      await reply;
    },
    async profileStop(file) {
      const reply = waitFor('profile-stopped', 30_000);
      child.send({ type: 'profile-stop', file });
      await reply;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return null;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const reply = waitFor('stopped', 15_000).catch(() => null);
      child.send({ type: 'stop' });
      const stopped = await reply;
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
      return stopped;
    },
  };
  handle.ready.catch(() => {});
  return handle;
}

// ---------------------------------------------------------------------------------------------
// Load

function cannon(url, headers, duration) {
  return autocannon({
    url,
    headers,
    connections: settings.connections,
    pipelining: settings.pipelining,
    duration,
  });
}

/**
 * A warm-up run (discarded), then the measured run. Also records the server process's CPU time per
 * request over the measured run: unlike requests/s it hardly depends on what else the machine runs.
 */
async function measure(label, url, headers, server) {
  const warm = await cannon(url, headers, settings.warmup);
  const profileDir = process.env.BENCH_CPU_PROF;
  if (profileDir) await server.profileStart();
  const cpuBefore = await server.cpu();
  const r = await cannon(url, headers, settings.duration);
  const cpuAfter = await server.cpu();
  if (profileDir) {
    const file = join(profileDir, `${label.replace(/[^\w.@-]+/g, '_')}.cpuprofile`);
    await server.profileStop(file);
    log(`  profile: node bench/cpuprofile-summary.mjs '${file}' ${r.requests.total}`);
  }
  const errors = r.errors + r.timeouts + r.non2xx + warm.errors + warm.timeouts + warm.non2xx;
  const result = {
    rps: Math.round(r.requests.mean),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    mean_ms: r.latency.average,
    max_ms: r.latency.max,
    requests: r.requests.total,
    server_cpu_us_per_request: Math.round((cpuAfter - cpuBefore) / Math.max(1, r.requests.total)),
    throughput_mb_s: Math.round((r.throughput.mean / 1024 / 1024) * 100) / 100,
    non_2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    warmup: { requests: warm.requests.total, non_2xx: warm.non2xx, errors: warm.errors, timeouts: warm.timeouts },
  };
  log(
    `  ${label.padEnd(40)} ${String(result.rps).padStart(6)} req/s   p50 ${result.p50_ms} ms   p99 ${result.p99_ms} ms   ` +
      `server CPU ${result.server_cpu_us_per_request} µs/req   non-2xx/errors ${errors}`,
  );
  if (errors > 0) {
    failures.push(
      `${label}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts (warm-up: ${warm.non2xx} non-2xx, ${warm.errors} errors, ${warm.timeouts} timeouts)`,
    );
  }
  return result;
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/** Searches one after the other, each term new to the server: latency of an uncached search and its server CPU. */
async function measureSearches(base, key, server) {
  const times = [];
  const cpuBefore = await server.cpu();
  for (const term of SEARCH_TERMS) {
    const started = performance.now();
    const res = await fetch(`${base}/api/devices?q=${encodeURIComponent(term)}`, { headers: { 'X-API-Key': key } });
    await res.arrayBuffer();
    times.push(performance.now() - started);
    if (res.status !== 200) failures.push(`search ${JSON.stringify(term)}: status ${res.status}`);
  }
  const cpuAfter = await server.cpu();
  const sorted = [...times].sort((a, b) => a - b);
  const round1 = (n) => Math.round(n * 10) / 10;
  const result = {
    searches: times.length,
    p50_ms: round1(percentile(sorted, 50)),
    p99_ms: round1(percentile(sorted, 99)),
    max_ms: round1(sorted.at(-1)),
    server_cpu_us_per_request: Math.round((cpuAfter - cpuBefore) / times.length),
  };
  log(
    `  search, one at a time, ${times.length} new terms: p50 ${result.p50_ms} ms   p99 ${result.p99_ms} ms   server CPU ${result.server_cpu_us_per_request} µs/req`,
  );
  return result;
}

async function check(what, condition, detail) {
  if (!condition) {
    failures.push(`sanity check failed: ${what}${detail ? ` (${detail})` : ''}`);
    log(`  FAILED: ${what}${detail ? ` (${detail})` : ''}`);
  }
}

/** One request per target before loading it: right status, right shape, and auth really enforced. */
async function sanityChecks(base, key, deviceCount) {
  const auth = { 'X-API-Key': key };
  const health = await fetch(`${base}/health`);
  const healthBody = await health.json();
  await check(
    'GET /health answers 200 healthy',
    health.status === 200 && healthBody.status === 'healthy',
    `${health.status} ${JSON.stringify(healthBody)}`,
  );

  const devices = await fetch(`${base}/api/devices`, { headers: auth });
  const list = await devices.json();
  await check(
    'GET /api/devices answers 200 with a page of 100',
    devices.status === 200 && Array.isArray(list) && list.length === Math.min(100, deviceCount),
    `${devices.status}, ${Array.isArray(list) ? list.length : typeof list} items`,
  );
  await check(
    `X-Total-Count is ${deviceCount}`,
    Number(devices.headers.get('x-total-count')) === deviceCount,
    `got ${devices.headers.get('x-total-count')}`,
  );

  const stats = await fetch(`${base}/api/stats`, { headers: auth });
  const statsBody = await stats.json();
  await check(
    `GET /api/stats answers 200 with total_devices ${deviceCount}`,
    stats.status === 200 && statsBody.total_devices === deviceCount,
    `${stats.status} ${JSON.stringify(statsBody)}`,
  );

  const anonymous = await fetch(`${base}/api/stats`);
  await check('GET /api/stats without a key answers 401', anonymous.status === 401, `${anonymous.status}`);
  return { sample_stats: statsBody, first_device: list[0] };
}

// ---------------------------------------------------------------------------------------------
// Runs

async function runBare(tmp) {
  log('bare Fastify route (the ceiling)');
  const server = startChild({ mode: 'bare' }, join(tmp, 'bare.log'));
  try {
    const ready = await server.ready;
    const base = `http://127.0.0.1:${ready.port}`;
    const res = await fetch(`${base}/bare`);
    await check('GET /bare answers 200', res.status === 200, `${res.status}`);
    const bare = await measure('GET /bare', `${base}/bare`, {}, server);
    const mem = await server.memory();
    return { target: bare, memory: { peak_rss_mb: mem.maxRssMB, vm_hwm_mb: mem.vmHwmMB, rss_at_end_mb: mem.rssMB } };
  } finally {
    await server.stop();
  }
}

async function runStore(kind, tmp, build = ownBuild) {
  let config;
  let cleanup = async () => {};
  const common = { mode: 'app', devices: settings.devices, seed: settings.seed, inventory: settings.inventory, dist: build.dist.href };
  const label = build === ownBuild ? kind : `${kind}@${build.short}`;
  if (kind === 'sqlite') {
    config = { ...common, url: join(tmp, `sqlite-${build.short}`, 'netwarden.db') };
  } else {
    const { ensurePgSchema, dropPgSchema } = await import(new URL('../dist/store/db.js', import.meta.url));
    const pgSchema = `bench_${process.pid}_${Date.now().toString(36)}`;
    await ensurePgSchema(pgUrl, pgSchema);
    cleanup = () => dropPgSchema(pgUrl, pgSchema);
    cleanups.add(cleanup);
    config = { ...common, url: pgUrl, pgSchema };
  }
  const logFile = join(tmp, `${label}.log`);
  log(`${label}: ${settings.inventory === 'import' ? 'importing' : 'seeding'} ${settings.devices} devices and starting the app`);
  const server = startChild(config, logFile);
  try {
    const ready = await server.ready;
    log(`  ${ready.seeded.devices} devices and ${ready.seeded.ports} ports in ${ready.seeded.ms} ms on ${ready.database}`);
    const base = `http://127.0.0.1:${ready.port}`;
    const sample = await sanityChecks(base, ready.key, ready.seeded.devices);
    // Warm every target up once before measuring any, so the first one measured is not the one
    // that pays for a cold JIT, a growing connection pool or a database still settling after the load.
    for (const t of TARGETS) await cannon(`${base}${t.path}`, { 'X-API-Key': ready.key }, settings.warmup);
    const targets = {};
    for (const t of TARGETS) {
      targets[t.name] = await measure(`${label} ${t.label}`, `${base}${t.path}`, { 'X-API-Key': ready.key }, server);
    }
    const searches = await measureSearches(base, ready.key, server);
    const mem = await server.memory();
    const stopped = await server.stop();
    const logBytes = statSync(logFile).size;
    return {
      build: build.commit ?? 'this',
      database: ready.database,
      seeding: ready.seeded,
      targets,
      searches,
      memory: {
        rss_after_seed_mb: ready.afterSeed.rssMB,
        peak_rss_after_seed_mb: ready.afterSeed.maxRssMB,
        peak_rss_mb: (stopped ?? mem).maxRssMB,
        vm_hwm_mb: (stopped ?? mem).vmHwmMB,
        rss_at_end_mb: mem.rssMB,
      },
      log: { destination: 'file (child stdout)', bytes: logBytes },
      sample,
    };
  } finally {
    await server.stop();
    await cleanup();
    cleanups.delete(cleanup);
  }
}

/**
 * `netwarden serve` (dist/, SQLite, a new empty data directory each time) from spawn to the first
 * 200 from /health, then its resident memory after IDLE_MS of idling. Median of `settings.starts`.
 */
async function runColdStarts(tmp, nodeOptions, build = ownBuild) {
  const IDLE_MS = 3000;
  const starts = [];
  for (let i = 0; i < settings.starts; i++) {
    const dataDir = join(tmp, `cold-${build.short}-${nodeOptions ? 'tuned' : 'default'}-${i}`);
    const env = { ...process.env, NETWARDEN_DATA_DIR: dataDir, NETWARDEN_PORT: '0', NETWARDEN_HOST: '127.0.0.1', NETWARDEN_LOG_LEVEL: 'info' };
    env.NETWARDEN_UPDATE_FEED_URL = 'http://127.0.0.1:9/releases/latest';
    for (const name of Object.keys(env)) if (name.startsWith('NETWARDEN_DATABASE')) delete env[name];
    if (nodeOptions) env.NODE_OPTIONS = nodeOptions;
    else delete env.NODE_OPTIONS;
    const started = performance.now();
    const child = spawn(process.execPath, [join(build.root, 'bin', 'netwarden.js'), 'serve'], {
      cwd: build.root,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      let url;
      while (!(url = /"msg":"netwarden listening"/.test(out) && /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out)?.[1])) {
        if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}:\n${out}`);
        if (performance.now() - started > 30_000) throw new Error('serve did not listen within 30 s');
        await new Promise((r) => setTimeout(r, 2));
      }
      for (;;) {
        const res = await fetch(`${url}/health`).catch(() => null);
        if (res?.status === 200) break;
        await new Promise((r) => setTimeout(r, 2));
      }
      const healthyMs = performance.now() - started;
      await new Promise((r) => setTimeout(r, IDLE_MS));
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const rssMB = Number(/^VmRSS:\s+(\d+)/m.exec(status)[1]) / 1024;
      starts.push({ healthy_ms: Math.round(healthyMs), idle_rss_mb: Math.round(rssMB * 10) / 10 });
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const result = {
    build: build.commit ?? 'this',
    node_options: nodeOptions ?? null,
    runs: starts,
    healthy_ms_median: median(starts.map((s) => s.healthy_ms)),
    idle_rss_mb_median: median(starts.map((s) => s.idle_rss_mb)),
  };
  log(
    `  cold start${build === ownBuild ? '' : ` of ${build.short}`}${nodeOptions ? ` (NODE_OPTIONS=${nodeOptions})` : ''}: healthy after ${result.healthy_ms_median} ms, ` +
      `idle RSS ${result.idle_rss_mb_median} MB (median of ${starts.length})`,
  );
  return result;
}

// ---------------------------------------------------------------------------------------------
// Output

function machine() {
  const cpus = os.cpus();
  return {
    cpu_model: cpus[0]?.model ?? 'unknown',
    cpu_count: cpus.length,
    total_memory_gb: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    date: new Date().toISOString(),
    load_average_at_start: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

function markdown(results) {
  const m = results.machine;
  const s = results.settings;
  const lines = [
    '# HTTP benchmark',
    '',
    `${m.date} · ${m.cpu_count} × ${m.cpu_model} · ${m.total_memory_gb} GB · ${m.os} · Node ${m.node} · ` +
      `load average ${m.load_average_at_start.join(' ')} at the start, ${m.load_average_at_end.join(' ')} at the end`,
    '',
    `autocannon ${s.connections} connections, pipelining ${s.pipelining}; every target warmed up once, then per target ${s.warmup} s warm-up and ${s.duration} s measured; ` +
      (s.inventory === 'import'
        ? `${s.devices} hosts imported from a generated nmap report (8 open ports each), then its 5 %-drift re-import (BENCH_INVENTORY=import). `
        : `${s.devices} devices inserted straight (BENCH_INVENTORY=seed). `) +
      (results.anchor ? `Each store also with the build of ${results.anchor} (BENCH_ANCHOR), right after this one. ` : '') +
      `Server in a child process, autocannon in the parent, both on 127.0.0.1 and sharing the machine's cores. ` +
      `The app logs with the production logger (\`createLogger('info')\`, one line per request) to a file.`,
    '',
    '| Store | Target | req/s | p50 ms | p99 ms | mean ms | server CPU µs/req | non-2xx / errors |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  const row = (store, label, t) =>
    lines.push(
      `| ${store} | ${label} | ${t.rps} | ${t.p50_ms} | ${t.p99_ms} | ${t.mean_ms} | ${t.server_cpu_us_per_request} | ${t.non_2xx + t.errors + t.timeouts} |`,
    );
  row('—', 'bare Fastify `GET /bare`', results.bare.target);
  for (const [store, r] of Object.entries(results.stores)) {
    for (const t of TARGETS) row(store, `\`${t.label}\`${t.name === 'health' ? '' : ' + API key'}`, r.targets[t.name]);
  }
  lines.push(
    '',
    '## Authenticated `GET /api/stats` against the bare route (aim ≥ 0.5 on SQLite, ≥ 0.35 on PostgreSQL)',
    '',
    '| Store | stats req/s | bare req/s | ratio | aim met | CPU-time ratio |',
    '|---|---:|---:|---:|---|---:|',
  );
  for (const [store, r] of Object.entries(results.ratios)) {
    lines.push(`| ${store} | ${r.stats_rps} | ${r.bare_rps} | ${r.stats_over_bare} | ${r.aim_met ? 'yes' : 'no'} | ${r.cpu_time_ratio} |`);
  }
  lines.push(
    '',
    "CPU-time ratio: the bare server's CPU time per request divided by Netwarden's for `GET /api/stats`, the " +
      'ratio the throughputs would have if the server process alone limited them. Latencies are whole milliseconds ' +
      "(autocannon's histogram), so 0 means under 1 ms.",
  );
  lines.push(
    '',
    `## At ${s.devices} devices, against the aims`,
    '',
    '| Store | devices p99 ms (aim < 20) | devices CPU µs/req | devices / bare req/s (aim ≥ 0.15) | search one at a time p50 / p99 ms (aim < 100) | search CPU µs/req | repeated search p99 ms | stats p99 ms (aim < 5) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const [store, r] of Object.entries(results.stores)) {
    const t = r.targets;
    lines.push(
      `| ${store} | ${t.devices?.p99_ms ?? '—'} | ${t.devices?.server_cpu_us_per_request ?? '—'} | ${results.ratios[store].devices_over_bare ?? '—'} | ` +
        `${r.searches.p50_ms} / ${r.searches.p99_ms} | ${r.searches.server_cpu_us_per_request} | ${t.search?.p99_ms ?? '—'} | ${t.stats.p99_ms} |`,
    );
  }
  lines.push(
    '',
    `Search one at a time: ${results.stores[Object.keys(results.stores)[0]]?.searches.searches ?? 0} different terms (vendors, OS names, address fragments, port numbers, ` +
      'terms that match nothing), each new to the server, so no count is cached: the latency a user typing a new search sees. ' +
      '"Repeated search" is autocannon at the connections above on one term, whose count the server keeps between requests (as when paging through results).',
  );
  const cold = results.cold_start;
  if (cold)
    lines.push(
      '',
      '## Cold start and idle memory (`netwarden serve`, built, SQLite, empty data directory)',
      '',
      '| Build | Node options | first healthy /health ms (aim < 1000) | idle RSS MB (aim < 120) | runs |',
      '|---|---|---:|---:|---|',
      ...[['this', cold], ...(results.cold_start_anchor ? [[results.anchor, results.cold_start_anchor]] : [])].flatMap(([build, c]) => [
        `| ${build} | defaults | ${c.default.healthy_ms_median} | ${c.default.idle_rss_mb_median} | ${c.default.runs.map((x) => `${x.healthy_ms} ms / ${x.idle_rss_mb} MB`).join(', ')} |`,
        `| ${build} | \`NODE_OPTIONS=${c.tuned.node_options}\` | ${c.tuned.healthy_ms_median} | ${c.tuned.idle_rss_mb_median} | ${c.tuned.runs.map((x) => `${x.healthy_ms} ms / ${x.idle_rss_mb} MB`).join(', ')} |`,
      ]),
      '',
      'Median of the runs; from spawning the process to the first 200 from /health, and resident memory 3 s after that with no requests.',
    );
  lines.push('', '## Memory (server process)', '', '| Process | RSS after seeding MB | peak RSS MB |', '|---|---:|---:|');
  lines.push(`| bare Fastify | — | ${results.bare.memory.peak_rss_mb} |`);
  for (const [store, r] of Object.entries(results.stores)) {
    lines.push(`| Netwarden on ${store} | ${r.memory.rss_after_seed_mb} | ${r.memory.peak_rss_mb} |`);
  }
  lines.push(
    '',
    results.settings.inventory === 'import'
      ? 'The inventory (two imports through `ScanManager.importReport`, as `POST /api/scans/import` records them):'
      : 'Seeding (one transaction, multi-row inserts through `store.db`):',
    '',
  );
  for (const [store, r] of Object.entries(results.stores)) {
    lines.push(`- ${store}: ${r.seeding.devices} devices, ${r.seeding.ports} open ports in ${r.seeding.ms} ms (${r.database})`);
  }
  lines.push('', results.ok ? 'Every response was 2xx.' : `**FAILED:**\n\n${results.failures.map((f) => `- ${f}`).join('\n')}`, '');
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------

async function main() {
  ensureBuilt({ markers: ['api/app.js', 'services.js'], log });
  const anchor = anchorBuild(log);
  /** This build, and BENCH_ANCHOR's: each measured right after the other, under the same load. */
  const builds = [ownBuild, ...(anchor ? [anchor] : [])];
  const stores = [];
  if (storeFilter.includes('sqlite')) stores.push('sqlite');
  if (storeFilter.includes('postgres')) {
    if (pgUrl) stores.push('postgres');
    else log('PostgreSQL skipped: set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to include it');
  }
  const [load1] = os.loadavg();
  if (load1 > os.cpus().length * 0.25) {
    log(`warning: load average ${load1.toFixed(2)} on ${os.cpus().length} CPUs: other work is running, so the numbers will be low and noisy`);
  }
  const tmp = mkdtempSync(join(os.tmpdir(), 'netwarden-bench-'));
  cleanups.add(async () => rmSync(tmp, { recursive: true, force: true }));
  const results = {
    machine: machine(),
    settings: { ...settings, pipelining: settings.pipelining, logging: "createLogger('info') (production logger) writing to a file" },
    anchor: process.env.BENCH_ANCHOR || null,
    bare: null,
    stores: {},
    ratios: {},
    ok: false,
    failures,
  };
  try {
    log('cold start of netwarden serve (SQLite, empty data directory)');
    if (settings.starts > 0) {
      results.cold_start = {
        default: await runColdStarts(tmp),
        tuned: await runColdStarts(tmp, TUNED_NODE_OPTIONS),
      };
    }
    if (anchor && settings.starts > 0) {
      results.cold_start_anchor = {
        default: await runColdStarts(tmp, undefined, anchor),
        tuned: await runColdStarts(tmp, TUNED_NODE_OPTIONS, anchor),
      };
    }
    results.bare = await runBare(tmp);
    for (const kind of stores) {
      for (const build of builds) results.stores[build === ownBuild ? kind : `${kind}@${build.short}`] = await runStore(kind, tmp, build);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  for (const [kind, r] of Object.entries(results.stores)) {
    const ratio = r.targets.stats.rps / results.bare.target.rps;
    const aim = kind.startsWith('postgres') ? 0.35 : 0.5;
    results.ratios[kind] = {
      devices_p99_ms: r.targets.devices?.p99_ms ?? null,
      stats_rps: r.targets.stats.rps,
      bare_rps: results.bare.target.rps,
      stats_over_bare: Math.round(ratio * 100) / 100,
      aim,
      aim_met: ratio >= aim,
      health_over_bare: r.targets.health ? Math.round((r.targets.health.rps / results.bare.target.rps) * 100) / 100 : null,
      devices_over_bare: r.targets.devices ? Math.round((r.targets.devices.rps / results.bare.target.rps) * 100) / 100 : null,
      cpu_time_ratio:
        Math.round((results.bare.target.server_cpu_us_per_request / Math.max(1, r.targets.stats.server_cpu_us_per_request)) * 100) / 100,
      devices_cpu_time_ratio: r.targets.devices
        ? Math.round((results.bare.target.server_cpu_us_per_request / Math.max(1, r.targets.devices.server_cpu_us_per_request)) * 1000) / 1000
        : null,
    };
  }
  results.machine.load_average_at_end = os.loadavg().map((l) => Math.round(l * 100) / 100);
  results.ok = failures.length === 0;
  const md = writeResults('http', results, markdown(results));
  console.log(md);
  log(`wrote ${join('bench', 'results', 'http.json')} and ${join('bench', 'results', 'http.md')}`);
  if (failures.length) {
    console.error(`\nBENCHMARK FAILED:\n${failures.map((f) => `  - ${f}`).join('\n')}`);
    process.exit(1);
  }
}

main().catch((err) => {
  console.error(err?.stack ?? err);
  process.exit(1);
});
