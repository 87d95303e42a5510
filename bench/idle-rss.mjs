#!/usr/bin/env node
// Idle memory of `netwarden serve` (issue 24: < 120 MB with default options): the built program
// (`node bin/netwarden.js serve`, as `npm start` runs it) on a fresh SQLite data directory, from
// spawn to the first 200 from /health, then idle RSS_IDLE_MS (10 s) with no requests, then VmRSS
// and the breakdown of /proc/<pid>/smaps_rollup. Everything listens on 127.0.0.1.
//
//   node bench/idle-rss.mjs
//   BENCH_ANCHOR=<commit> node bench/idle-rss.mjs      also an older build, alternating with this one
//
// Environment (all optional): BENCH_STARTS (5 per build and setting), RSS_IDLE_MS (10000),
// RSS_NODE_OPTIONS (a second setting measured besides Node's defaults, e.g. --max-semi-space-size=4),
// BENCH_SKIP_BUILD=1 (use dist/ as it is). NETWARDEN_SCAN_ALLOW is set to 127.0.0.0/8 when unset.
//
// Results: bench/results/idle-rss.json and .md.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { anchorBuild, ensureBuilt, ownBuild, writeResults } from './lib.mjs';

const log = (...args) => console.error('[idle-rss]', ...args);
const starts = Number(process.env.BENCH_STARTS || 5);
const idleMs = Number(process.env.RSS_IDLE_MS || 10_000);
const extraOptions = process.env.RSS_NODE_OPTIONS || '';

ensureBuilt({ markers: ['cli/main.js', 'server.js'], log });
const anchor = anchorBuild(log);
// The web UI (dist/web, `npm run build:web`) is served from it when built, which an idle service
// holds too: measure both builds with it, the anchor with this checkout's when it has none of its own.
const webIndex = (build) => join(build.root, 'dist', 'web', 'index.html');
if (!existsSync(webIndex(ownBuild))) log('warning: dist/web is not built (npm run build:web): measuring without the web UI');
else if (anchor && !existsSync(webIndex(anchor))) symlinkSync(join(ownBuild.root, 'dist', 'web'), join(anchor.root, 'dist', 'web'));
const builds = anchor ? [ownBuild, anchor] : [ownBuild];
const settings = ['', ...(extraOptions ? [extraOptions] : [])];

const kb = (text, field) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN);
const mb = (k) => Math.round((k / 1024) * 10) / 10;

async function oneStart(build, nodeOptions, dataDir) {
  const env = {
    ...process.env,
    NETWARDEN_DATA_DIR: dataDir,
    NETWARDEN_PORT: '0',
    NETWARDEN_HOST: '127.0.0.1',
    NETWARDEN_LOG_LEVEL: 'info',
    NETWARDEN_SCAN_ALLOW: process.env.NETWARDEN_SCAN_ALLOW || '127.0.0.0/8',
    NETWARDEN_UPDATE_FEED_URL: 'http://127.0.0.1:9/releases/latest',
  };
  for (const name of Object.keys(env)) if (name.startsWith('NETWARDEN_DATABASE')) delete env[name];
  if (nodeOptions) env.NODE_OPTIONS = nodeOptions;
  else delete env.NODE_OPTIONS;
  const started = performance.now();
  const child = spawn(process.execPath, [join(build.root, 'bin', 'netwarden.js'), 'serve'], {
    cwd: build.root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', () => {});
  try {
    let url;
    while (!(url = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out)?.[1])) {
      if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}:\n${out}`);
      if (performance.now() - started > 60_000) throw new Error('serve did not listen within 60 s');
      await new Promise((r) => setTimeout(r, 5));
    }
    for (;;) {
      const res = await fetch(`${url}/health`).catch(() => null);
      if (res?.status === 200) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const healthyMs = Math.round(performance.now() - started);
    await new Promise((r) => setTimeout(r, idleMs));
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const rollup = readFileSync(`/proc/${child.pid}/smaps_rollup`, 'utf8');
    const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    const tick = 100;
    return {
      healthy_ms: healthyMs,
      rss_mb: mb(kb(status, 'VmRSS')),
      rss_anon_mb: mb(kb(status, 'RssAnon')),
      rss_file_mb: mb(kb(status, 'RssFile')),
      peak_rss_mb: mb(kb(status, 'VmHWM')),
      pss_mb: mb(kb(rollup, 'Pss')),
      cpu_ms: Math.round(((Number(stat[11]) + Number(stat[12])) / tick) * 1000),
    };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

const tmp = mkdtempSync(join(os.tmpdir(), 'netwarden-idle-rss-'));
const runs = new Map();
try {
  // Alternating builds and settings, so the machine's load weighs on each alike.
  for (let i = 0; i < starts; i++) {
    for (const build of builds) {
      for (const nodeOptions of settings) {
        const key = `${build.short}|${nodeOptions}`;
        const r = await oneStart(build, nodeOptions, join(tmp, `${build.short}-${i}-${nodeOptions ? 'tuned' : 'default'}`));
        log(
          `${build.short}${nodeOptions ? ` (${nodeOptions})` : ''}: healthy ${r.healthy_ms} ms, idle RSS ${r.rss_mb} MB (anon ${r.rss_anon_mb}, file ${r.rss_file_mb}), start-up CPU ${r.cpu_ms} ms`,
        );
        if (!runs.has(key)) runs.set(key, { build: build.commit ?? 'this', short: build.short, node_options: nodeOptions || null, runs: [] });
        runs.get(key).runs.push(r);
      }
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const results = {
  date: new Date().toISOString(),
  node: process.version,
  machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown'}, ${Math.round((os.totalmem() / 1024 ** 3) * 10) / 10} GB`,
  load_average: os.loadavg().map((l) => Math.round(l * 100) / 100),
  idle_ms: idleMs,
  builds: [...runs.values()].map((b) => ({
    ...b,
    rss_mb_median: median(b.runs.map((r) => r.rss_mb)),
    rss_anon_mb_median: median(b.runs.map((r) => r.rss_anon_mb)),
    healthy_ms_median: median(b.runs.map((r) => r.healthy_ms)),
    cpu_ms_median: median(b.runs.map((r) => r.cpu_ms)),
  })),
};
const lines = [
  '# Idle memory of `netwarden serve`',
  '',
  `${results.date} · ${results.machine} · Node ${results.node} · load average ${results.load_average.join(' ')} at the end`,
  '',
  `\`node bin/netwarden.js serve\` (as \`npm start\`), SQLite, a new empty data directory each start, NETWARDEN_SCAN_ALLOW set; ` +
    `VmRSS ${idleMs / 1000} s after the first 200 from /health, no requests meanwhile. Medians of ${starts} starts; start-up CPU is the process's user + system time until the reading.`,
  '',
  '| Build | Node options | idle RSS MB (aim < 120) | of it anonymous MB | first healthy /health ms | start-up CPU ms | runs (RSS MB) |',
  '|---|---|---:|---:|---:|---:|---|',
  ...results.builds.map(
    (b) =>
      `| ${b.short} | ${b.node_options ? `\`${b.node_options}\`` : 'defaults'} | ${b.rss_mb_median} | ${b.rss_anon_mb_median} | ${b.healthy_ms_median} | ${b.cpu_ms_median} | ${b.runs.map((r) => r.rss_mb).join(', ')} |`,
  ),
  '',
];
writeResults('idle-rss', results, lines.join('\n'));
console.log(lines.join('\n'));
