#!/usr/bin/env node
// nmap import benchmark (issues 14 and 24): how long POST /api/scans/import takes for a
// 10,000-host report, first import and a 5 %-drift re-import, through the real server over HTTP,
// on SQLite and (with a URL) PostgreSQL.
//
//   node bench/import-bench.mjs
//   BENCH_ANCHOR=<commit> node bench/import-bench.mjs     and an older build, in the same run
//
// The reports (bench/nmap-report.mjs) are synthetic but shaped exactly as `nmap -n -sV -v -oX`
// writes one: BENCH_HOSTS hosts up in 10.77.0.0/18 (data only, never contacted) with BENCH_PORTS
// open ports each (product, version, CPEs) from a catalogue of common services, plus a few hosts
// down. A second report of the same network has about 5 % of the hosts changed (ports opened and
// closed, versions changed, hosts gone and new), so the second import computes real changes.
//
// Measured, BENCH_RUNS rounds on a fresh database each (median, min, max), wall time and the server's CPU time
// (the server runs in this process: process.cpuUsage over every thread; PostgreSQL's own processes not counted in it,
// but measured apart where they run on this machine: the CPU time of the backends serving this process, from /proc):
//   plan    reading the report alone: the safety checks, well-formedness, the mapper (core/nmap-import.ts)
//   first   POST /api/scans/import of the first report until its 201, which comes once the scan is
//           recorded and `completed` (inventory, ports, risk, CVEs, snapshots; no baseline)
//   second  the same for the second report (changes against the first)
// With BENCH_ANCHOR=<commit> every round also runs that commit's build (a git worktree, built once;
// bench/lib.mjs anchorBuild) right after this one's, and the per-round ratios are reported.
//
// Environment (all optional): BENCH_HOSTS (10000), BENCH_PORTS (8; 0: 2–6 at random), BENCH_RUNS (3),
// BENCH_LARGE_HOSTS (38000; 0 skips reading the large report), BENCH_ANCHOR, BENCH_SKIP_BUILD=1,
// BENCH_DATABASE_URL (else TEST_DATABASE_URL; neither: SQLite only). Results: bench/results/import.json
// and import.md. Exit status 1 when a sanity check fails.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import { anchorBuild, ensureBuilt, ownBuild, postgresBackendCpu, postgresCpuBetween, sanityChecks, writeResults } from './lib.mjs';
import { mulberry32 } from './prng.mjs';
import { openBenchApp } from './app.mjs';
import { inventory, networkOf, report, reportPair } from './nmap-report.mjs';

// Scope guard: servers started by benchmarks may scan only loopback and the namespace lab (this one scans nothing).
process.env.NETWARDEN_SCAN_ALLOW ??= '127.0.0.0/8,10.66.0.0/24';

const log = (...args) => console.error('[bench:import]', ...args);
const num = (name, fallback, { zero = false } = {}) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || (n === 0 && !zero)) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
};
const settings = {
  hosts: num('BENCH_HOSTS', 10_000),
  /** Open ports per host (0: 2 to 6 at random, as the 1,000-host report of issue 14). */
  portsPerHost: num('BENCH_PORTS', 8, { zero: true }),
  runs: num('BENCH_RUNS', 3),
  /** Hosts of the large report whose reading alone is measured (near the 50 MiB limit); 0 skips it. */
  largeHosts: num('BENCH_LARGE_HOSTS', 38_000, { zero: true }),
  down: 24,
  seed: 20261126,
};
const { failures, check } = sanityChecks(log);

ensureBuilt({ markers: ['core/nmap-import.js', 'api/app.js'], log });
const dist = new URL('../dist/', import.meta.url);
const { planImport } = await import(new URL('core/nmap-import.js', dist));
const { readNmapReport } = await import(new URL('scan/report-reader.js', dist));
const { createLogger } = await import(new URL('logger.js', dist));
const anchor = anchorBuild(log);
/** The builds measured, in the order each round runs them: this one, and BENCH_ANCHOR's. */
const builds = [ownBuild, ...(anchor ? [anchor] : [])];

// ---------------------------------------------------------------------------------------------
// The reports

const pair = reportPair({ hosts: settings.hosts, portsPerHost: settings.portsPerHost, seed: settings.seed, down: settings.down });
const { firstHosts, secondHosts } = pair;
const reports = { first: pair.first, second: pair.second };
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

/**
 * POST of a report with node:http rather than fetch: fetch gives up when the answer takes more than
 * 300 s (undici's headers timeout), which a 10,000-host import on a loaded machine can.
 */
function postReport(url, xml, cookie) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'Content-Type': 'application/xml', Cookie: cookie } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode, body: JSON.parse(text) });
        } catch (err) {
          reject(err);
        }
      });
    });
    req.on('error', reject);
    req.end(xml);
  });
}

async function openDatabase(kind, pgUrl, build) {
  const { openStore } = await import(new URL('store/index.js', build.dist));
  const { ensurePgSchema, dropPgSchema } = await import(new URL('store/db.js', build.dist));
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

async function oneRound(kind, pgUrl, build) {
  const { store, cleanup } = await openDatabase(kind, pgUrl, build);
  const logger = createLogger('warn');
  try {
    // The release feed at a closed loopback port: nothing leaves the machine.
    const { app, close } = await openBenchApp(build.dist, {
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
      const cpu = {};
      /** PostgreSQL's backends serving this process (null on SQLite, or where they cannot be read). */
      const pgCpu = {};
      const records = {};
      for (const which of ['first', 'second']) {
        const t0 = performance.now();
        // The server runs in this process: its CPU time (every thread, the report's readers too) is this process's.
        const c0 = process.cpuUsage();
        const pg0 = kind === 'postgres' ? postgresBackendCpu() : null;
        const res = await postReport(`${base}/api/scans/import`, reports[which], cookie);
        pgCpu[which] = pg0 ? postgresCpuBetween(pg0, postgresBackendCpu()) : null;
        const { body } = res;
        times[which] = performance.now() - t0;
        const c = process.cpuUsage(c0);
        cpu[which] = (c.user + c.system) / 1000;
        records[which] = body;
        check(`${kind} ${which} import answered 201`, res.status === 201, `${res.status} ${JSON.stringify(body).slice(0, 200)}`);
        // The 201 comes once the scan is recorded: completed, not merely queued.
        check(`${kind} ${which} import is completed when answered`, body.status === 'completed', `${body.status}`);
      }
      check(`${kind} first import found every host up`, records.first.devices_found === firstHosts.size, `${records.first.devices_found}`);
      check(`${kind} second import found every host up`, records.second.devices_found === secondHosts.size, `${records.second.devices_found}`);
      const changes = await fetch(`${base}/api/changes?scan_id=${records.second.scan_id}&limit=1`, { headers: { Cookie: cookie } });
      const changeCount = Number(changes.headers.get('x-total-count'));
      check(`${kind} second import detected changes`, changeCount > 0, `${changeCount}`);
      const devices = await fetch(`${base}/api/devices?limit=1`, { headers: { Cookie: cookie } });
      const inventoryCount = Number(devices.headers.get('x-total-count'));
      check(
        `${kind} inventory holds every device of both reports`,
        inventoryCount === new Set([...firstHosts.keys(), ...secondHosts.keys()]).size,
        `${inventoryCount}`,
      );
      return { times, cpu, pgCpu, changes: changeCount, devices: records.second.devices_found };
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
  builds: builds.map((b) => b.commit ?? 'this'),
  aims: { first_ms: 4000, second_ms: 1500, postgres_over_sqlite: 2 },
  plan_ms: timePlan(),
  databases: {},
};
log(`plan: median ${result.plan_ms.median} ms`);

// Reading a report near the 50 MiB limit: the time the request's handler spends before anything is recorded.
if (settings.largeHosts > 0) {
  const large = report(inventory(mulberry32(settings.seed + 1), settings.largeHosts), 1795600000, settings.down);
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
  // Each round runs every build one after the other, so load on the machine weighs on all alike.
  const rounds = new Map(builds.map((b) => [b, []]));
  for (let r = 0; r < settings.runs; r++) for (const build of builds) rounds.get(build).push(await oneRound(kind, pgUrl, build));
  for (const build of builds) {
    const runs = rounds.get(build);
    const key = build === ownBuild ? kind : `${kind}@${build.short}`;
    result.databases[key] = {
      build: build.commit ?? 'this',
      first_ms: stats(runs.map((r) => r.times.first)),
      second_ms: stats(runs.map((r) => r.times.second)),
      first_cpu_ms: stats(runs.map((r) => r.cpu.first)),
      second_cpu_ms: stats(runs.map((r) => r.cpu.second)),
      ...(runs.every((r) => r.pgCpu.first !== null && r.pgCpu.second !== null)
        ? { first_pg_cpu_ms: stats(runs.map((r) => r.pgCpu.first)), second_pg_cpu_ms: stats(runs.map((r) => r.pgCpu.second)) }
        : {}),
      changes: runs[0].changes,
    };
    log(
      `${key}: first ${result.databases[key].first_ms.median} ms (CPU ${result.databases[key].first_cpu_ms.median}), second ${result.databases[key].second_ms.median} ms (CPU ${result.databases[key].second_cpu_ms.median}), ${runs[0].changes} changes`,
    );
  }
  if (anchor) {
    const own = result.databases[kind];
    // Per-round ratios (this build ÷ the anchor, same round), then their median.
    const ratios = (which, measure = 'times') => {
      const mine = rounds.get(ownBuild).map((r) => r[measure][which]);
      const theirs = rounds.get(anchor).map((r) => r[measure][which]);
      const per = mine.map((t, i) => Math.round((t / theirs[i]) * 100) / 100).sort((a, b) => a - b);
      return { median: per[Math.floor(per.length / 2)], runs: per };
    };
    own.vs_anchor = {
      anchor: anchor.commit,
      first: ratios('first'),
      second: ratios('second'),
      first_cpu: ratios('first', 'cpu'),
      second_cpu: ratios('second', 'cpu'),
      ...(own.first_pg_cpu_ms && result.databases[`${kind}@${anchor.short}`].first_pg_cpu_ms
        ? { first_pg_cpu: ratios('first', 'pgCpu'), second_pg_cpu: ratios('second', 'pgCpu') }
        : {}),
    };
  }
}
result.failures = failures;

if (result.databases.sqlite && result.databases.postgres) {
  // PostgreSQL's recording against SQLite's, the same build in the same run.
  const over = (key) => Math.round((result.databases.postgres[key].median / result.databases.sqlite[key].median) * 100) / 100;
  result.postgres_over_sqlite = {
    first: over('first_ms'),
    second: over('second_ms'),
    // This process's CPU only: PostgreSQL's own work is in its server processes, not counted here.
    first_cpu: over('first_cpu_ms'),
    second_cpu: over('second_cpu_ms'),
  };
  const pg = result.databases.postgres;
  if (pg.first_pg_cpu_ms) {
    // This process's CPU and PostgreSQL's backends' together, against SQLite's (all in this process).
    const both = (which) =>
      Math.round(((pg[`${which}_cpu_ms`].median + pg[`${which}_pg_cpu_ms`].median) / result.databases.sqlite[`${which}_cpu_ms`].median) * 100) / 100;
    result.postgres_over_sqlite.first_cpu_with_server = both('first');
    result.postgres_over_sqlite.second_cpu_with_server = both('second');
  }
}
const row = (name, s) => `| ${name} | ${s.median} | ${s.min} | ${s.max} |`;
const storeKeys = Object.keys(result.databases);
const portsText = settings.portsPerHost > 0 ? `${settings.portsPerHost}` : '2–6';
const md = [
  '# nmap import benchmark',
  '',
  `\`node bench/import-bench.mjs\`, ${new Date().toISOString().slice(0, 10)}, ${result.machine.cpus} cores (${result.machine.cpu}), Node ${result.machine.node}, load average at the start ${result.machine.load_average.join(' ')} (the machine is shared).`,
  '',
  `A synthetic report shaped as \`nmap -n -sV -v -oX\` writes it: ${settings.hosts} hosts up in ${networkOf(firstHosts)} with MACs and vendors and ${portsText} open`,
  `ports each (product, version, CPEs), ${settings.down} hosts down; ${Math.round(result.report_bytes.first / KB)} KiB. The second report of the`,
  `same network has about 5 % of the hosts changed. Times from the POST to its 201 (the scan recorded and \`completed\`), through the real server over HTTP on loopback,`,
  `and the server's CPU time meanwhile (it runs in the bench's process: process.cpuUsage, every thread; the steadier figure on a loaded machine),`,
  `${settings.runs} rounds on a fresh database each (median, min, max in ms).` +
    (anchor ? ` Each round imports with this build and with ${anchor.short} (BENCH_ANCHOR), one after the other.` : ''),
  '',
  '| Step | Median | Min | Max |',
  '|---|---|---|---|',
  row('reading the report (safety checks, well-formedness, mapper)', result.plan_ms),
  ...storeKeys.flatMap((key) => [
    row(`${key}: first import (no baseline; aim ≤ 4000)`, result.databases[key].first_ms),
    row(`${key}: second import (${result.databases[key].changes} changes against the first; aim ≤ 1500)`, result.databases[key].second_ms),
    row(`${key}: first import, server CPU time`, result.databases[key].first_cpu_ms),
    row(`${key}: second import, server CPU time`, result.databases[key].second_cpu_ms),
    ...(result.databases[key].first_pg_cpu_ms
      ? [
          row(`${key}: first import, PostgreSQL's backends' CPU time`, result.databases[key].first_pg_cpu_ms),
          row(`${key}: second import, PostgreSQL's backends' CPU time`, result.databases[key].second_pg_cpu_ms),
        ]
      : []),
  ]),
  '',
  ...(anchor
    ? [
        `This build ÷ ${anchor.short}, median of the per-round ratios (same round, same load):`,
        '',
        ...databases.map(
          (kind) =>
            `- ${kind}: first ${result.databases[kind].vs_anchor.first.median} (${result.databases[kind].vs_anchor.first.runs.join(', ')}), ` +
            `second ${result.databases[kind].vs_anchor.second.median} (${result.databases[kind].vs_anchor.second.runs.join(', ')}); ` +
            `server CPU time: first ${result.databases[kind].vs_anchor.first_cpu.median} (${result.databases[kind].vs_anchor.first_cpu.runs.join(', ')}), ` +
            `second ${result.databases[kind].vs_anchor.second_cpu.median} (${result.databases[kind].vs_anchor.second_cpu.runs.join(', ')})` +
            (result.databases[kind].vs_anchor.first_pg_cpu
              ? `; PostgreSQL's backends' CPU time: first ${result.databases[kind].vs_anchor.first_pg_cpu.median} (${result.databases[kind].vs_anchor.first_pg_cpu.runs.join(', ')}), ` +
                `second ${result.databases[kind].vs_anchor.second_pg_cpu.median} (${result.databases[kind].vs_anchor.second_pg_cpu.runs.join(', ')})`
              : ''),
        ),
        '',
      ]
    : []),
  ...(result.postgres_over_sqlite
    ? [
        `PostgreSQL ÷ SQLite (medians, this build): first ${result.postgres_over_sqlite.first}, second ${result.postgres_over_sqlite.second} (aim ≤ 2); ` +
          `this process's CPU time (PostgreSQL's own server processes not counted): first ${result.postgres_over_sqlite.first_cpu}, second ${result.postgres_over_sqlite.second_cpu}` +
          (result.postgres_over_sqlite.first_cpu_with_server
            ? `; with PostgreSQL's backends' CPU time added: first ${result.postgres_over_sqlite.first_cpu_with_server}, second ${result.postgres_over_sqlite.second_cpu_with_server}.`
            : '.'),
        '',
      ]
    : []),
  ...(result.large
    ? [
        `Reading a report near the 50 MiB limit (${result.large.hosts} hosts, ${result.large.report_mib} MiB): ${result.large.plan_ms} ms in one go`,
        `(RSS +${result.large.rss_growth_mib} MiB); as the service reads it (2 MiB or more), in a worker thread: ${result.large.thread_ms} ms, during which`,
        `the main thread ran ${result.large.main_thread_turns_10ms} turns of a 10 ms timer (it keeps answering requests).`,
        '',
      ]
    : []),
  failures.length
    ? `Sanity checks FAILED: ${failures.join('; ')}`
    : 'Sanity checks passed: every import answered 201 with the scan completed and every host up, the inventory holds every device, and the second detected changes.',
  '',
].join('\n');
writeResults('import', result, md);
console.log(md);
process.exitCode = failures.length ? 1 : 0;
