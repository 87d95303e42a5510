#!/usr/bin/env node
// Views benchmark (issue 22): how the views that draw the whole network answer at scale, against the
// real server (dist/) on 127.0.0.1, over SQLite and, when BENCH_DATABASE_URL (or TEST_DATABASE_URL)
// is set, PostgreSQL. The devices are rows written straight into the store (bench/inventory.mjs,
// 100,000 devices over 50 /21 subnets by default): no scan, no traffic beyond loopback.
//
//   npm run bench:views
//
// The measurements are a list of named cases (CASES below): an `http` case is a GET timed from
// Node (server time plus loopback, the whole body read) BENCH_RUNS times (default 20) after two
// warm-ups, per store, with p50/p99/max and the body size; a `browser` case drives headless
// Chromium (SQLite only). To add a view, add a case.
//
//   topology          GET /api/visualization/topology: the whole map (100,000 devices), asked again unchanged
//                     (the server sends the answer it kept for this data version)
//   topology_cold     the same after a write each time (a device's notes: the data version moved, so the answer kept
//                     for it is not sent; the devices written since are read again and, as nothing drawn changed, the
//                     answer kept for the same devices is sent again)
//   topology_redrawn  the same after a write of a field the map draws each time (a device's label: the map is built
//                     again from the kept devices, only that device's node written again); reported
//   topology_overview the overview the Map page draws first (?detail=subnets: no device, per-subnet counts)
//   topology_overview_cold  the same after a write each time
//   topology_subnet   the same for one subnet (?subnet=10.7.0.0/21: about 2,000 devices), after a write each time
//                     (what the Map page asks when a subnet is opened)
//   topology_zone     the same for one zone (?zone=iot: about 12,500 devices), after a write each time
//   port_matrix       GET /api/visualization/port-matrix: the whole network (its answer is kept per
//                     data version: the runs after the first are served from memory)
//   port_matrix_cold  the same, the data version bumped before each request (the first request
//                     after a write: read from the store again); reported, not held to the aim
//   port_matrix_subnet, port_matrix_zone (+ port_matrix_zone_cold)  one subnet, one zone (?zone=iot)
//   compare           GET /api/scans/{a}/compare/{b}: two scans of 10,000 devices each
//   compare_unchanged the same with ?include_unchanged=true (every device listed); reported
//   map_page          the Map page over 10,000 devices (50 subnets): first render, then the longest
//                     task while panning and zooming, collapsed and with five subnets open
//
// Besides wall time, each http case records the server's CPU time per request: the bench process
// (the server runs in it; the client's reading of the body is in it too) plus, on PostgreSQL, the
// CPU of the pool's backends (/proc/<pid>/stat), so the figures hold on a loaded machine.
// Measurement starts once the background re-evaluation of the seeded devices has finished.
//
// Environment: BENCH_DEVICES (100000), BENCH_SUBNETS (50), BENCH_COMPARE_DEVICES (10000),
// BENCH_MAP_DEVICES (10000), BENCH_RUNS (20), BENCH_ONLY_CASES (comma-separated case names),
// BENCH_RESULTS_NAME (views), BENCH_ANCHOR (an older commit: its build serves the same store on a second port and
// every http case is measured on it right after this build's, reported as `<store>@<commit>`; then both answer the same
// request once more, with no write between, and their bodies must be the same byte for byte).
// Results: bench/results/<BENCH_RESULTS_NAME>.json and .md.
/* global document, window, requestAnimationFrame -- functions given to page.evaluate run in the browser */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { seedInventory } from './inventory.mjs';
import { openBenchApp } from './app.mjs';
import { anchorBuild, ensureBuilt, sanityChecks, writeResults } from './lib.mjs';

// Scope guard: servers started by benchmarks may scan only loopback and the namespace lab.
process.env.NETWARDEN_SCAN_ALLOW ??= '127.0.0.0/8,10.66.0.0/24';

const log = (...args) => console.error('[bench:views]', ...args);
const DEVICES = Number(process.env.BENCH_DEVICES ?? 100_000);
const SUBNETS = Number(process.env.BENCH_SUBNETS ?? 50);
const COMPARE_DEVICES = Number(process.env.BENCH_COMPARE_DEVICES ?? 10_000);
const MAP_DEVICES = Number(process.env.BENCH_MAP_DEVICES ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const PG_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? null;
const ONLY = process.env.BENCH_ONLY_CASES ? new Set(process.env.BENCH_ONLY_CASES.split(',')) : null;
const RESULTS_NAME = process.env.BENCH_RESULTS_NAME ?? 'views';
const ADMIN = { username: 'bench', password: 'bench-password-not-secret' };
/** The issue's aims. */
const AIM = { http_p99_ms: 300, first_render_ms: 2000, long_task_ms: 200 };

/**
 * The measurements. `http`: `path(ctx)` is fetched per store (`ctx.compare` holds the scan ids of
 * the compare seed). `browser`: `run(ctx)` returns its own figures and `checks` (what, ok, detail).
 */
const CASES = [
  { name: 'topology', kind: 'http', label: 'Map, whole network, unchanged', path: () => '/api/visualization/topology', before: settled },
  { name: 'topology_cold', kind: 'http', label: 'Map, whole network, after a write', path: () => '/api/visualization/topology', before: changeOne },
  {
    name: 'topology_redrawn',
    kind: 'http',
    label: 'Map, whole network, after a write of a drawn field',
    path: () => '/api/visualization/topology',
    before: relabelOne,
    aim: false,
  },
  {
    name: 'topology_overview',
    kind: 'http',
    label: 'Map overview, unchanged',
    path: () => '/api/visualization/topology?detail=subnets',
    before: settled,
  },
  {
    name: 'topology_overview_cold',
    kind: 'http',
    label: 'Map overview, after a write',
    path: () => '/api/visualization/topology?detail=subnets',
    before: changeOne,
  },
  {
    name: 'topology_subnet',
    kind: 'http',
    label: 'Map, one subnet, after a write',
    path: () => '/api/visualization/topology?subnet=10.7.0.0/21',
    before: changeOne,
  },
  {
    name: 'topology_zone',
    kind: 'http',
    label: 'Map, one zone, after a write',
    path: () => '/api/visualization/topology?zone=iot',
    before: changeOne,
  },
  // The port matrix over the same inventory (bench/views-port-matrix.mjs measures it apart, in more detail).
  // `cold`: the data version is bumped before every request, so nothing kept is served (the first request after a write).
  { name: 'port_matrix', kind: 'http', label: 'Port matrix, whole network', path: () => '/api/visualization/port-matrix' },
  {
    name: 'port_matrix_cold',
    kind: 'http',
    label: 'Port matrix, whole network, first request after a write',
    path: () => '/api/visualization/port-matrix',
    cold: true,
    aim: false,
  },
  { name: 'port_matrix_subnet', kind: 'http', label: 'Port matrix, one subnet', path: () => '/api/visualization/port-matrix?subnet=10.7.0.0/21' },
  { name: 'port_matrix_zone', kind: 'http', label: 'Port matrix, one zone', path: () => '/api/visualization/port-matrix?zone=iot' },
  {
    name: 'port_matrix_zone_cold',
    kind: 'http',
    label: 'Port matrix, one zone, first request after a write',
    path: () => '/api/visualization/port-matrix?zone=iot',
    cold: true,
  },
  {
    name: 'compare',
    kind: 'http',
    label: `Compare two ${COMPARE_DEVICES.toLocaleString('en-GB')}-device scans`,
    path: (ctx) => `/api/scans/${ctx.compare.current}/compare/${ctx.compare.previous}`,
  },
  {
    name: 'compare_unchanged',
    kind: 'http',
    label: `Compare two ${COMPARE_DEVICES.toLocaleString('en-GB')}-device scans, every device listed`,
    path: (ctx) => `/api/scans/${ctx.compare.current}/compare/${ctx.compare.previous}?include_unchanged=true`,
    aim: false,
  },
  { name: 'map_page', kind: 'browser', label: `Map page, ${MAP_DEVICES.toLocaleString('en-GB')} devices`, run: (ctx) => mapPage(ctx) },
];

/**
 * A write through the server's store before a request (a device's notes), so the data version moves
 * and the topology is read and serialized afresh rather than sent as kept.
 */
let changes = 0;
async function changeOne(server) {
  const device = await server.store.db.selectFrom('devices').select('id').orderBy('id').limit(1).executeTakeFirstOrThrow();
  await server.store.devices.update(device.id, { notes: `bench change ${++changes}` });
}

/** A write of a field the map draws (a device's label) before a request: its node and its subnet's counts are drawn again. */
async function relabelOne(server) {
  const device = await server.store.db.selectFrom('devices').select('id').orderBy('id').limit(1).executeTakeFirstOrThrow();
  await server.store.devices.update(device.id, { label: `bench label ${++changes}` });
}

/**
 * Waits (up to 3 minutes) until the inventory stops changing: after the seed the server's background
 * re-evaluation rewrites risk levels for a while (on PostgreSQL well into the measurements), and
 * an "unchanged" case must not be measured while the data version still moves.
 */
async function settled(server) {
  const until = Date.now() + 180_000;
  let version = await server.store.currentDataVersion();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const now = await server.store.currentDataVersion();
    if (now === version) return;
    if (Date.now() > until) {
      log(`${server.kind}: the inventory still changes after 3 minutes (data version ${now})`);
      return;
    }
    version = now;
  }
}

if (!process.env.BENCH_SKIP_BUILD) {
  log('building (npm run build)');
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: new URL('..', import.meta.url), stdio: 'inherit' });
} else {
  ensureBuilt({ markers: ['server.js'], log });
}
const dist = new URL('../dist/', import.meta.url);
const anchor = anchorBuild(log);
const { openStore } = await import(new URL('store/index.js', dist));
const { ensurePgSchema, dropPgSchema } = await import(new URL('store/db.js', dist));
const { createLogger } = await import(new URL('logger.js', dist));
const { initialise } = await import(new URL('services.js', dist));

const percentile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
const summarise = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: Math.round(percentile(sorted, 0.5)), p99: Math.round(percentile(sorted, 0.99)), max: Math.round(sorted.at(-1)), runs: values.length };
};

/** A build's app (dist: a file URL) over `store`, listening on loopback, with a session. */
async function serveApp(distUrl, store) {
  const { app, services, close } = await openBenchApp(distUrl, {
    store,
    logger: createLogger('silent'),
    version: 'bench',
    // No limit on a plugin's start: the seeded devices' re-evaluation runs beside it (on a loaded machine past Fastify's 10 s).
    appOptions: { logger: false, pluginTimeout: 0 },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${app.server.address().port}`;
  const login = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  const cookie = login.headers
    .getSetCookie()
    .find((c) => c.startsWith('netwarden_session='))
    .split(';')[0];
  return { services, base, cookie, close };
}

/** A fresh store of the kind, the admin, `count` devices over the subnets; and the app listening on loopback. */
async function openServer(kind, count, tmp) {
  let schema = null;
  let store;
  if (kind === 'sqlite') store = await openStore({ url: join(tmp, `${kind}-${count}.db`) });
  else {
    schema = `bench_views_${process.pid}_${Date.now().toString(36)}`;
    await ensurePgSchema(PG_URL, schema);
    store = await openStore({ url: PG_URL, pgSchema: schema, poolSize: 5 });
  }
  await initialise(store, { settingsSeed: { updates: { feed_url: 'http://127.0.0.1:9/releases/latest' } }, admin: ADMIN }, createLogger('silent'));
  const seeded = await seedInventory(store, count, 1, { subnets: SUBNETS });
  log(`${kind}: seeded ${seeded.devices} devices and ${seeded.ports} ports in ${seeded.ms} ms`);
  const own = await serveApp(dist, store);
  await reevaluationDone(own.services, store, kind);
  const anchorApp = anchor ? await serveApp(anchor.dist, store) : null;
  const backends = kind === 'postgres' ? await poolBackends(store) : [];
  return {
    kind,
    store,
    base: own.base,
    cookie: own.cookie,
    seeded,
    backends,
    /** The anchor's build over the same store (BENCH_ANCHOR), or null. */
    anchor: anchorApp ? { kind, store, base: anchorApp.base, cookie: anchorApp.cookie, backends } : null,
    async close() {
      await own.close();
      await anchorApp?.close();
      await store.close();
      if (schema) await dropPgSchema(PG_URL, schema);
    },
  };
}

/**
 * Two completed scans of 10.0.0.0/8 that saw COMPARE_DEVICES devices each (snapshots written
 * straight into the store): between them 2 % moved, 5 % opened a port, 1 % went and 1 % came.
 */
async function seedCompare(store) {
  const now = new Date().toISOString();
  const scan = () =>
    store.db
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
        duration_seconds: 600,
        devices_found: COMPARE_DEVICES,
        triggered_by: 'bench',
        target_low: 10 << 24,
        target_high: (11 << 24) - 1,
        port_list: '1-1000',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
  const previous = (await scan()).id;
  const current = (await scan()).id;
  const extra = Math.ceil(COMPARE_DEVICES / 100);
  const devices = await store.db
    .selectFrom('devices')
    .select(['id', 'ip_address', 'ip_sort', 'mac_address', 'hostname', 'vendor', 'os_name', 'risk_level', 'risk_score'])
    .orderBy('id')
    .limit(COMPARE_DEVICES + extra)
    .execute();
  const ports = new Map();
  for (const p of await store.db
    .selectFrom('ports')
    .select(['device_id', 'port', 'protocol', 'state', 'service', 'product', 'version'])
    .where('device_id', '<=', devices.at(-1).id)
    .execute()) {
    const list = ports.get(p.device_id) ?? [];
    list.push({ port: p.port, protocol: p.protocol, state: p.state, service: p.service, product: p.product, version: p.version });
    ports.set(p.device_id, list);
  }
  const snapshot = (scanId, d, ip, ipSort, list) => ({
    scan_id: scanId,
    device_id: d.id,
    ip_address: ip,
    ip_sort: ipSort,
    mac_address: d.mac_address,
    hostname: d.hostname,
    vendor: d.vendor,
    os_name: d.os_name,
    ports: JSON.stringify(list),
    open_port_count: list.length,
    risk_level: d.risk_level,
    risk_score: d.risk_score,
  });
  const rows = [];
  devices.forEach((d, i) => {
    const own = ports.get(d.id) ?? [];
    const ipSort = Number(d.ip_sort);
    if (i < COMPARE_DEVICES) rows.push(snapshot(previous, d, d.ip_address, ipSort, own));
    if (i < COMPARE_DEVICES && i % 100 === 2) return; // gone from the current scan
    if (i % 50 === 0) {
      // Moved: same device (identity), another address inside the target.
      const moved = (10 << 24) + (200 << 16) + i;
      rows.push(snapshot(current, d, `10.200.${(i >>> 8) & 0xff}.${i & 0xff}`, moved, own));
    } else if (i % 20 === 1) {
      rows.push(
        snapshot(current, d, d.ip_address, ipSort, [
          ...own,
          { port: 8081, protocol: 'tcp', state: 'open', service: 'http', product: null, version: null },
        ]),
      );
    } else rows.push(snapshot(current, d, d.ip_address, ipSort, own));
  });
  for (let i = 0; i < rows.length; i += 500)
    await store.db
      .insertInto('device_snapshots')
      .values(rows.slice(i, i + 500))
      .execute();
  log(`compare: scans ${previous} → ${current}, ${rows.length} snapshots`);
  return { previous, current };
}

/**
 * The background re-evaluation of the seeded devices writes to them (a pass over 100,000 devices
 * takes minutes): measuring starts once it is idle and the data version has stood still for 5 s
 * (a pass that has not yet marked itself running shows as idle).
 */
async function reevaluationDone(services, store, kind) {
  const started = performance.now();
  let version = await store.currentDataVersion();
  let stillSince = performance.now();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = await store.currentDataVersion();
    const status = await services.reevaluator.status();
    if (now !== version || status.state !== 'idle') {
      version = now;
      stillSince = performance.now();
    } else if (performance.now() - stillSince >= 5000) break;
    if (performance.now() - started > 1_800_000) throw new Error(`${kind}: the re-evaluation of the seeded devices did not end`);
  }
  log(`${kind}: re-evaluation done, data still, after ${Math.round(performance.now() - started)} ms`);
}

/** The process ids of the PostgreSQL pool's backends: as many sessions held at once as the pool has. */
async function poolBackends(store) {
  const { sql } = await import('kysely');
  const rows = await Promise.all(
    Array.from({ length: 5 }, () => sql`select pg_backend_pid() as pid, pg_sleep(0.2)`.execute(store.db).then((r) => Number(r.rows[0].pid))),
  );
  return [...new Set(rows)];
}

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** CPU milliseconds used so far by the bench process and the given PostgreSQL backends. */
function serverCpuMs(backends) {
  const own = process.cpuUsage();
  let ms = (own.user + own.system) / 1000;
  for (const pid of backends) {
    try {
      // Fields 14 and 15 (utime, stime) after the parenthesised command name.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ms += ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
    } catch {
      // A backend that is gone used nothing more.
    }
  }
  return ms;
}

async function timeGet(server, path) {
  const cpu = serverCpuMs(server.backends);
  const started = performance.now();
  const res = await fetch(`${server.base}${path}`, { headers: { Cookie: server.cookie } });
  const body = await res.arrayBuffer();
  const ms = performance.now() - started;
  const cpuMs = serverCpuMs(server.backends) - cpu;
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${Buffer.from(body).toString().slice(0, 200)}`);
  return { ms, cpuMs, bytes: body.byteLength, chunked: res.headers.get('transfer-encoding') === 'chunked' };
}

/** The SHA-256 of the body of GET `path`. */
async function bodyHash(server, path) {
  const res = await fetch(`${server.base}${path}`, { headers: { Cookie: server.cookie } });
  return createHash('sha256')
    .update(Buffer.from(await res.arrayBuffer()))
    .digest('hex');
}

async function httpCase(testCase, server, ctx) {
  const path = testCase.path(ctx);
  const before = testCase.before ?? (async () => {});
  const get = async () => {
    await before(server);
    if (testCase.cold) server.store.touch();
    return timeGet(server, path);
  };
  await get();
  await get();
  const times = [];
  const cpu = [];
  let last;
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  for (let i = 0; i < RUNS; i++) {
    last = await get();
    times.push(last.ms);
    cpu.push(last.cpuMs);
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  }
  const result = {
    path,
    ...summarise(times),
    cpu_ms: summarise(cpu),
    bytes: last.bytes,
    streamed: last.chunked,
    rss_growth_mb: Math.round((rssPeak - rssBefore) / 1048576),
  };
  log(
    `${server.kind} ${testCase.name}: p50 ${result.p50} ms, p99 ${result.p99} ms, CPU p50 ${result.cpu_ms.p50} ms p99 ${result.cpu_ms.p99} ms, ${(result.bytes / 1048576).toFixed(1)} MiB`,
  );
  return result;
}

/**
 * The Map page over MAP_DEVICES devices: time from navigation until the clusters are drawn, then
 * the longest task (PerformanceObserver 'longtask') while the mouse pans and the wheel zooms; the
 * same with five subnets open.
 */
async function mapPage(ctx) {
  const server = ctx.mapServer;
  const context = await chromium.launchPersistentContext(join(ctx.tmp, 'chromium'), {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-quic',
    ],
    viewport: { width: 1280, height: 900 },
    locale: 'en-GB',
  });
  try {
    const [name, value] = server.cookie.split('=');
    await context.addCookies([{ name, value, url: server.base }]);
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(60_000);
    await page.addInitScript(() => {
      window.__longTasks = [];
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) window.__longTasks.push({ at: entry.startTime, ms: entry.duration });
      }).observe({ type: 'longtask', buffered: true });
    });
    const drawnNodes = () => page.evaluate(() => document.querySelector('.map-canvas')?._cyreg?.cy?.nodes().length ?? 0);
    const firstRender = [];
    for (let i = 0; i < 4; i++) {
      const started = performance.now();
      await page.goto(`${server.base}/map`);
      await page.waitForFunction(
        (subnets) => (document.querySelector('.map-canvas')?._cyreg?.cy?.nodes('[kind = "subnet"]').length ?? 0) >= subnets,
        SUBNETS,
      );
      // One frame after the elements are in: the canvas has drawn them.
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
      if (i > 0) firstRender.push(performance.now() - started);
    }
    const box = await page.locator('.map-canvas').boundingBox();
    const cx = box.x + box.width / 2;
    const cy = box.y + box.height / 2;
    const panAndZoom = async () => {
      const since = await page.evaluate(() => performance.now());
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < 6; i++) {
          await page.mouse.move(cx, cy);
          await page.mouse.wheel(0, i < 3 ? -240 : 240);
          await page.waitForTimeout(30);
        }
        await page.mouse.move(cx - 200, cy - 100);
        await page.mouse.down();
        for (let step = 1; step <= 10; step++) await page.mouse.move(cx - 200 + step * 40, cy - 100 + step * 20);
        await page.mouse.up();
      }
      await page.waitForTimeout(300);
      const tasks = await page.evaluate((t0) => window.__longTasks.filter((task) => task.at >= t0), since);
      return { longest_task_ms: Math.round(Math.max(0, ...tasks.map((t) => t.ms))), long_tasks: tasks.length };
    };
    const collapsed = { nodes: await drawnNodes(), ...(await panAndZoom()) };
    // Five subnets open: about 1,000 devices drawn.
    const opened = await page.evaluate(() => {
      const buttons = [...document.querySelectorAll('.map-subnets li button')].slice(0, 5);
      for (const b of buttons) b.click();
      return buttons.length;
    });
    await page.waitForFunction((n) => (document.querySelector('.map-canvas')?._cyreg?.cy?.nodes('.expanded').length ?? 0) >= n, opened);
    const expanded = { subnets_open: opened, nodes: await drawnNodes(), ...(await panAndZoom()) };
    const heap = await page.evaluate(() => performance.memory?.usedJSHeapSize ?? null);
    const result = {
      devices: MAP_DEVICES,
      first_render_ms: summarise(firstRender),
      collapsed,
      expanded,
      js_heap_mb: heap === null ? null : Math.round(heap / 1048576),
      chromium: execFileSync(CHROMIUM, ['--version']).toString().trim(),
    };
    log(
      `map page: first render p50 ${result.first_render_ms.p50} ms; longest task ${collapsed.longest_task_ms} ms collapsed, ${expanded.longest_task_ms} ms open`,
    );
    return result;
  } finally {
    await context.close();
  }
}

const tmp = mkdtempSync(join(os.tmpdir(), 'netwarden-views-bench-'));
const { failures, check } = sanityChecks(log);
const results = {
  date: new Date().toISOString(),
  devices: DEVICES,
  subnets: SUBNETS,
  compare_devices: COMPARE_DEVICES,
  runs: RUNS,
  node: process.version,
  cpus: os.cpus().length,
  cpu: os.cpus()[0]?.model ?? 'unknown',
  load_average: os.loadavg().map((l) => Math.round(l * 10) / 10),
  aim: AIM,
  http: {},
  browser: {},
};
const wanted = CASES.filter((c) => !ONLY || ONLY.has(c.name));
try {
  const kinds = ['sqlite', ...(PG_URL ? ['postgres'] : [])];
  if (wanted.some((c) => c.kind === 'http')) {
    for (const kind of kinds) {
      const server = await openServer(kind, DEVICES, tmp);
      try {
        const ctx = { tmp, compare: await seedCompare(server.store) };
        results.http[kind] = { seeded: server.seeded };
        for (const testCase of wanted.filter((c) => c.kind === 'http')) {
          const result = await httpCase(testCase, server, ctx);
          results.http[kind][testCase.name] = result;
          if (testCase.aim !== false)
            check(`${kind} ${testCase.name}: p99 under ${AIM.http_p99_ms} ms`, result.p99 < AIM.http_p99_ms, `${result.p99} ms`);
          if (server.anchor) {
            // The anchor right after, on the same store and machine load: only the comparison means anything on a loaded machine.
            const name = `${kind}@${anchor.short}`;
            results.http[name] ??= {};
            results.http[name][testCase.name] = await httpCase(testCase, { ...server.anchor, kind: name }, ctx);
            // The same data for both (no write between the two requests): the bodies must be the same, byte for byte.
            const path = testCase.path(ctx);
            const [own, theirs] = [await bodyHash(server, path), await bodyHash(server.anchor, path)];
            results.http[kind][testCase.name].same_as_anchor = own === theirs;
            check(`${kind} ${testCase.name}: the same body as ${anchor.short}`, own === theirs, `${own} vs ${theirs}`);
          }
        }
      } finally {
        await server.close();
      }
    }
  }
  const browserCases = wanted.filter((c) => c.kind === 'browser');
  if (browserCases.length > 0) {
    if (!existsSync(CHROMIUM)) log(`no Chromium at ${CHROMIUM}: browser cases skipped`);
    else {
      const mapServer = await openServer('sqlite', MAP_DEVICES, tmp);
      try {
        for (const testCase of browserCases) {
          const result = await testCase.run({ tmp, mapServer });
          results.browser[testCase.name] = result;
          if (testCase.name === 'map_page') {
            check(
              `map page: first render under ${AIM.first_render_ms} ms`,
              result.first_render_ms.p50 < AIM.first_render_ms,
              `${result.first_render_ms.p50} ms`,
            );
            for (const state of ['collapsed', 'expanded'])
              check(
                `map page (${state}): no task over ${AIM.long_task_ms} ms while panning and zooming`,
                result[state].longest_task_ms <= AIM.long_task_ms,
                `${result[state].longest_task_ms} ms`,
              );
          }
        }
      } finally {
        await mapServer.close();
      }
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
results.failures = failures;
process.stdout.write(writeResults(RESULTS_NAME, results, markdown(results)));
process.exitCode = failures.length > 0 ? 1 : 0;

function markdown(r) {
  const lines = [
    '# Views benchmark',
    '',
    `\`node bench/views-bench.mjs\`, ${r.date.slice(0, 10)}, ${r.cpus} cores (${r.cpu}), Node ${r.node}, load average at the start ${r.load_average.join(' ')} (the machine is shared).`,
    '',
    `${r.devices.toLocaleString('en-GB')} devices over ${r.subnets} /21 subnets written into the store; each request ${r.runs} times after two warm-ups,`,
    'timed from Node over loopback with the whole body read. Aim: p99 under 300 ms (cases marked * are reported, not held to it).',
    "Server CPU: the bench process's CPU time per request (the server runs in it, with the client reading the body), plus on",
    "PostgreSQL the pool's backends' CPU time: what the machine's load does not inflate.",
    '',
    '| Case | Store | p50 ms | p99 ms | max ms | CPU p50 ms | CPU p99 ms | Body | Streamed |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [kind, cases] of Object.entries(r.http)) {
    for (const testCase of CASES) {
      const c = cases[testCase.name];
      if (!c) continue;
      lines.push(
        `| ${testCase.label}${testCase.aim === false ? ' *' : ''} (\`${c.path}\`) | ${kind} | ${c.p50} | ${c.p99} | ${c.max} | ${c.cpu_ms?.p50 ?? ''} | ${c.cpu_ms?.p99 ?? ''} | ${(c.bytes / 1048576).toFixed(2)} MiB | ${c.streamed ? 'yes' : 'no'} |`,
      );
    }
  }
  const m = r.browser.map_page;
  if (m) {
    lines.push(
      '',
      `## Map page, ${m.devices.toLocaleString('en-GB')} devices (${m.chromium})`,
      '',
      `- First render (navigation to the ${r.subnets} subnet clusters drawn): p50 ${m.first_render_ms.p50} ms, max ${m.first_render_ms.max} ms (aim < 2,000 ms).`,
      `- Panning and zooming, clusters (${m.collapsed.nodes} nodes): longest task ${m.collapsed.longest_task_ms} ms, ${m.collapsed.long_tasks} tasks over 50 ms (aim: none over 200 ms).`,
      `- Panning and zooming with ${m.expanded.subnets_open} subnets open (${m.expanded.nodes} nodes): longest task ${m.expanded.longest_task_ms} ms, ${m.expanded.long_tasks} tasks over 50 ms.`,
      m.js_heap_mb === null ? '' : `- JS heap after: ${m.js_heap_mb} MiB.`,
    );
  }
  const compared = Object.values(r.http).flatMap((cases) => Object.values(cases).filter((c) => c.same_as_anchor !== undefined));
  if (compared.length > 0)
    lines.push(
      '',
      `Bodies compared with the anchor's (the same request to both, no write between): ${compared.filter((c) => c.same_as_anchor).length} of ${compared.length} the same byte for byte.`,
    );
  lines.push('', r.failures.length === 0 ? 'All sanity checks passed.' : `Failed checks:\n${r.failures.map((f) => `- ${f}`).join('\n')}`, '');
  return lines.join('\n');
}
