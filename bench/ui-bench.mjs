#!/usr/bin/env node
// Web UI benchmark: how the interface behaves over an inventory of 100,000 devices (BENCH_DEVICES), in headless
// Chromium (Debian's /usr/bin/chromium, or CHROMIUM_PATH) driven by playwright-core, against the
// real server (dist/) over SQLite on 127.0.0.1. The devices are rows written straight into the
// store (bench/inventory.mjs): no scan, no traffic beyond loopback.
//
//   npm run bench:ui
//
// Each measurement runs BENCH_RUNS times (default 7) after one warm-up; medians and p90 are reported.
//   devices_load    navigate to /devices until 50 rows and "of 100,000" are on screen
//   search          type in Search until the matching count shows (includes the UI's 300 ms debounce)
//   search_api      the same query's GET /api/devices from Node (server time plus loopback)
//   next_page       click "Next" until "51–100" shows (timed from the click; the list is reloaded first)
//   sort_by_risk    click the Risk column until the re-sorted page is on screen (same)
//   device_detail   navigate to /devices/{id} until its ports table shows
//   dashboard       navigate to / until the tiles show 100,000 devices
// Also: the page's JS heap and DOM node count on the device list (Chrome DevTools Protocol), and
// the size of the built files (raw and gzip).
// Results: bench/results/ui.json and bench/results/ui.md.
/* global document -- the functions given to page.waitForFunction run in the browser page */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { seedInventory } from './inventory.mjs';
import { openBenchApp } from './app.mjs';

// Scope guard: servers started by benchmarks may scan only loopback and the namespace lab.
process.env.NETWARDEN_SCAN_ALLOW ??= '127.0.0.0/8,10.66.0.0/24';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const resultsDir = join(here, 'results');
const log = (...args) => console.error('[bench]', ...args);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const DEVICES = Number(process.env.BENCH_DEVICES ?? 100_000);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ADMIN = { username: 'bench', password: 'bench-password-not-secret' };

if (!existsSync(CHROMIUM)) {
  console.error(`no Chromium at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
  process.exit(2);
}
if (!process.env.BENCH_SKIP_BUILD) {
  log('building (npm run build)');
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
}

const dist = new URL('../dist/', import.meta.url);
const { openStore } = await import(new URL('store/index.js', dist));
const { createLogger } = await import(new URL('logger.js', dist));
const { initialise } = await import(new URL('services.js', dist));

const stats = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: Math.round(at(0.5)), p90: Math.round(at(0.9)), min: Math.round(sorted[0]), max: Math.round(sorted.at(-1)), runs: values.length };
};

/** Runs `fn` once to warm up, then RUNS times: its duration, or the milliseconds it returns (to leave out set-up). */
async function repeat(name, fn) {
  await fn(-1);
  const values = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const measured = await fn(i);
    values.push(typeof measured === 'number' ? measured : performance.now() - started);
  }
  const result = stats(values);
  log(`${name}: median ${result.median} ms, p90 ${result.p90} ms`);
  return result;
}

function bundleSizes() {
  const dir = join(root, 'dist', 'web', 'assets');
  const sizes = { js: { raw: 0, gzip: 0 }, css: { raw: 0, gzip: 0 } };
  for (const file of readdirSync(dir)) {
    const kind = file.endsWith('.js') ? 'js' : file.endsWith('.css') ? 'css' : null;
    if (!kind) continue;
    const content = readFileSync(join(dir, file));
    sizes[kind].raw += content.length;
    sizes[kind].gzip += gzipSync(content).length;
  }
  return sizes;
}

const tmp = mkdtempSync(join(os.tmpdir(), 'netwarden-ui-bench-'));
const store = await openStore({ url: join(tmp, 'netwarden.db') });
let app;
let closeApp;
let context;
try {
  await initialise(store, { settingsSeed: { updates: { feed_url: 'http://127.0.0.1:9/releases/latest' } }, admin: ADMIN }, createLogger('silent'));
  const seeded = await seedInventory(store, DEVICES, 1);
  log(`seeded ${seeded.devices} devices and ${seeded.ports} ports in ${seeded.ms} ms`);
  ({ app, close: closeApp } = await openBenchApp(dist, { store, logger: createLogger('silent'), version: 'bench', appOptions: { logger: false } }));
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
  const apiTotal = async (query) => {
    const res = await fetch(`${base}/api/devices?${query}`, { headers: { Cookie: cookie } });
    await res.arrayBuffer();
    return Number(res.headers.get('x-total-count'));
  };

  const profile = join(tmp, 'chromium');
  context = await chromium.launchPersistentContext(profile, {
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
  const [name, value] = cookie.split('=');
  await context.addCookies([{ name, value, url: base }]);
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(30_000);
  const rows = page.locator('main table tbody tr');
  const waitForPager = (pattern) =>
    page.waitForFunction((source) => new RegExp(source).test(document.querySelector('main .pager-range')?.textContent ?? ''), pattern.source);
  const total = DEVICES.toLocaleString('en-GB');

  const results = {
    devices: DEVICES,
    seeded,
    runs: RUNS,
    chromium: execFileSync(CHROMIUM, ['--version']).toString().trim(),
    node: process.version,
    cpus: os.cpus().length,
  };

  results.devices_load = await repeat('devices_load', async () => {
    await page.goto(`${base}/devices`);
    await waitForPager(new RegExp(`^1–50 of ${total}$`));
    await rows.nth(49).waitFor();
  });

  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  await cdp.send('HeapProfiler.collectGarbage');
  const metrics = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
  results.device_list_page = {
    js_heap_used_mb: Math.round((metrics.JSHeapUsedSize / 1048576) * 10) / 10,
    dom_nodes: metrics.Nodes,
    rows: await rows.count(),
  };

  const terms = ['apple', 'raspberry', 'synology', 'lan', 'vmware', 'nest', 'ubiquiti', 'hewlett'];
  const expected = {};
  for (const term of terms) expected[term] = await apiTotal(`q=${term}&limit=1`);
  results.search = await repeat('search', async (i) => {
    const term = terms[(i + terms.length) % terms.length];
    const count = expected[term].toLocaleString('en-GB');
    await page.getByLabel('Search').fill(term);
    await waitForPager(new RegExp(`of ${count}$`));
  });
  results.search_api = await repeat('search_api', async (i) => {
    await apiTotal(`q=${terms[(i + terms.length) % terms.length]}&limit=50`);
  });

  results.next_page = await repeat('next_page', async () => {
    await page.goto(`${base}/devices`);
    await waitForPager(new RegExp(`^1–50 of ${total}$`));
    const started = performance.now();
    await page.getByRole('button', { name: /Next/ }).click();
    await waitForPager(new RegExp(`^51–100 of ${total}$`));
    return performance.now() - started;
  });

  results.sort_by_risk = await repeat('sort_by_risk', async () => {
    await page.goto(`${base}/devices`);
    await waitForPager(new RegExp(`^1–50 of ${total}$`));
    const firstBefore = await rows.first().textContent();
    const started = performance.now();
    await page.getByRole('button', { name: /^Risk/ }).click();
    await page.waitForFunction((before) => document.querySelector('main table tbody tr')?.textContent !== before, firstBefore);
    return performance.now() - started;
  });

  const [someDevice] = await (await fetch(`${base}/api/devices?sort=risk_score&order=desc&limit=1`, { headers: { Cookie: cookie } })).json();
  results.device_detail = await repeat('device_detail', async () => {
    await page.goto(`${base}/devices/${someDevice.id}`);
    await page.locator('main table').first().waitFor();
  });

  results.dashboard = await repeat('dashboard', async () => {
    await page.goto(`${base}/`);
    await page.getByText(total, { exact: true }).first().waitFor();
  });

  results.bundle = bundleSizes();
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'ui.json'), JSON.stringify(results, null, 2) + '\n');
  writeFileSync(join(resultsDir, 'ui.md'), markdown(results));
  log('results in bench/results/ui.{json,md}');
} finally {
  await context?.close();
  await closeApp?.();
  await store.close();
  rmSync(tmp, { recursive: true, force: true });
}

function markdown(r) {
  const row = (name, what, s) => `| ${name} | ${what} | ${s.median} | ${s.p90} | ${s.min}–${s.max} |`;
  const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
  return `# Web UI benchmark

${r.devices.toLocaleString('en-GB')} devices (${r.seeded.ports.toLocaleString('en-GB')} open ports) in SQLite; ${r.chromium}, headless; Node ${r.node}; ${r.cpus} CPU cores.
Each figure: ${r.runs} runs after one warm-up, milliseconds, browser and server on the same machine.

| Measure | Until | Median | p90 | Range |
| --- | --- | ---: | ---: | --- |
${row('devices_load', 'navigation to /devices shows 50 rows and the total', r.devices_load)}
${row('search', 'typed text shows the matching count (includes 300 ms debounce)', r.search)}
${row('search_api', 'GET /api/devices?q=…&limit=50 from Node', r.search_api)}
${row('next_page', 'click on "Next" shows rows 51–100 (timed from the click)', r.next_page)}
${row('sort_by_risk', 'click on the Risk column shows the re-sorted page (timed from the click)', r.sort_by_risk)}
${row('device_detail', 'navigation to a device shows its tables', r.device_detail)}
${row('dashboard', 'navigation to / shows the device total', r.dashboard)}

Device list page: ${r.device_list_page.rows} rows in the DOM, ${r.device_list_page.dom_nodes} DOM nodes, ${r.device_list_page.js_heap_used_mb} MB JS heap after garbage collection.

Built files: JavaScript ${kb(r.bundle.js.raw)} (${kb(r.bundle.js.gzip)} gzip), CSS ${kb(r.bundle.css.raw)} (${kb(r.bundle.css.gzip)} gzip).
`;
}
