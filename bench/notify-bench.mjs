#!/usr/bin/env node
// Notification benchmark of Netwarden (issue #11): a scan result with 1,000 changes fanned out to 20
// channels whose destinations are HTTP receivers on 127.0.0.1. Runs the compiled code in dist/, in
// this one process (app, scan manager, notifier and receivers share one event loop).
//
//   npm run bench:notify
//
// The scans are real ScanManager runs (inventory, risk, CVEs, change detection, recording) with a
// synthetic engine that sends no packet: discovery reports 1,000 hosts in 127.1.0.0/22, each with
// one open port (nginx on 80), or no host at all. Every measured scan finds the 1,000 hosts after a
// scan that found none, so it records 1,000 changes (device_added).
// 20 channels: 8 webhook (signed), 3 ntfy, 3 gotify, 3 discord, 3 slack, each to its own receiver.
//
// After two baseline scans and one unmeasured fan-out (warm-up), measured BENCH_RUNS times each
// (default 5), alternating:
//   without   the 1,000-change scan with every channel disabled
//   with      the same with all 20 channels enabled
// For each: the scan's recorded duration_seconds; for "with", the time from scan_finished (the scan
// recorded) to the last of the 20 deliveries arriving, and to each channel's delivery being marked sent.
// Targets: channels add < 5 % to the median recorded duration; all deliveries within 2 s.
// Results: bench/results/notify.json and bench/results/notify.md. Exit status 1 when a sanity check
// fails (a scan without 1,000 changes, a channel without exactly one delivery per scan, a bad signature).
//
// Environment: BENCH_RUNS (5), BENCH_SKIP_BUILD=1 (use dist/ as it is), BENCH_LOG_LEVEL (silent).
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureBuilt, sanityChecks, writeResults } from './lib.mjs';
import { openBenchApp } from './app.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const log = (...args) => console.error('[bench]', ...args);

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
if (!Number.isInteger(RUNS) || RUNS <= 0) throw new Error('BENCH_RUNS must be a positive integer');
const HOSTS = 1000;
const SUBNET = '127.1.0.0/22';
const CHANNELS = { webhook: 8, ntfy: 3, gotify: 3, discord: 3, slack: 3 };
const TARGET = { overhead_percent: 5, deliveries_ms: 2000 };
const { failures, check } = sanityChecks(log);

// ---------------------------------------------------------------------------------------------
// dist/

const dist = (path) => import(pathToFileURL(join(root, 'dist', path)).href);

// ---------------------------------------------------------------------------------------------
// Receivers: one HTTP server per channel on 127.0.0.1, recording arrival times and bodies.

function receiver() {
  const got = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      got.push({ at: Date.now(), path: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        got,
        close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))),
      }),
    ),
  );
}

// ---------------------------------------------------------------------------------------------

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

async function main() {
  ensureBuilt({ markers: ['notify/notifier.js'], log, keepOnBuildError: true });
  const { openStore } = await dist('store/index.js');
  const { EngineSelector } = await dist('engines/engines.js');
  const { createLogger } = await dist('logger.js');

  const hosts = [];
  for (let n = 1; hosts.length < HOSTS; n++) if (n % 256 !== 0 && n % 256 !== 255) hosts.push(`127.1.${n >> 8}.${n & 255}`);
  const mode = { full: true };
  /** Reports the synthetic hosts; sends nothing. */
  const engine = {
    name: 'native',
    async discover() {
      return mode.full ? hosts.map((ip) => ({ ip, mac: null, vendor: null, hostname: null })) : [];
    },
    async scanPorts(request) {
      return request.hosts.map((ip) => ({
        ip,
        mac: null,
        vendor: null,
        hostname: null,
        os_name: null,
        device_type: null,
        ports: [{ port: 80, protocol: 'tcp', state: 'open', service: 'http', product: 'nginx', version: '1.24.0', extra_info: null, cpe: [] }],
      }));
    },
  };
  class FixedEngines extends EngineSelector {
    async nmapVersion() {
      return null;
    }
    async select() {
      return engine;
    }
    async info() {
      return { engine: 'native', nmap_version: null, privileged: false };
    }
  }

  const dir = mkdtempSync(join(os.tmpdir(), 'netwarden-notify-bench-'));
  const logger = createLogger(process.env.BENCH_LOG_LEVEL ?? 'silent');
  const store = await openStore({ url: join(dir, 'netwarden.db') });
  const receivers = [];
  let closeApp;
  try {
    await store.settings.put({
      ...(await store.settings.get()),
      scanning: { ...(await store.settings.get()).scanning, port_range: '80', os_detection: false },
      server: { ...(await store.settings.get()).server, public_url: 'http://netwarden.bench.lan' },
    });
    // The synthetic hosts and the receivers are on loopback: scans and deliveries may reach it.
    const opened = await openBenchApp(new URL('../dist/', import.meta.url), {
      store,
      logger,
      version: 'bench',
      config: { scanAllow: ['127.0.0.0/8'], outboundAllow: ['127.0.0.0/8'] },
      parts: { engines: new FixedEngines() },
    });
    closeApp = opened.close;
    const { app } = opened;
    const { notifier, events, scans: scanManager } = app.services;

    // 20 channels, one receiver each.
    const channels = [];
    for (const [type, count] of Object.entries(CHANNELS)) {
      for (let i = 0; i < count; i++) {
        const r = await receiver();
        receivers.push(r);
        const config =
          type === 'webhook'
            ? { url: `${r.url}/hook`, secret: `secret-${i}` }
            : type === 'ntfy'
              ? { url: `${r.url}/netwarden`, token: null, priority: null }
              : type === 'gotify'
                ? { url: r.url, token: 'app-token' }
                : { url: `${r.url}/webhook` };
        const now = new Date().toISOString();
        const channel = await store.notifications.createChannel(
          {
            name: `${type}-${i + 1}`,
            type,
            enabled: false,
            config,
            filters: { change_types: null, min_severity: 'low', zones: null, untrusted_only: false, scan_events: ['failed'] },
            digest: null,
            quiet_hours: null,
            updated_at: now,
          },
          now,
        );
        channels.push({ channel, receiver: r, values: { ...channel, updated_at: now } });
      }
    }
    const setEnabled = async (enabled) => {
      for (const c of channels) await store.notifications.updateChannel(c.channel.id, { ...c.values, enabled }, false);
    };

    let finishedAt = new Map();
    events.subscribe((e) => {
      if (e.name === 'scan_finished') finishedAt.set(e.data.scan_id, Date.now());
    });
    const scan = async (full) => {
      mode.full = full;
      const row = await scanManager.trigger({ profile: 'normal', subnet: SUBNET, actor: { name: 'bench', type: 'system' } });
      await scanManager.idle();
      // The notifier reads the channels when it handles scan_finished: let it, before they are toggled.
      await notifier.idle();
      const done = await store.scans.get(row.id);
      if (done.status !== 'completed') throw new Error(`scan ${row.id} ${done.status}: ${done.error}`);
      return done;
    };

    log('warm-up: baseline scans, then one fan-out (not measured)');
    await scan(true);
    await scan(false);
    await setEnabled(true);
    await scan(true);
    const warm = Date.now() + 30_000;
    while (channels.some((c) => c.receiver.got.length < 1) && Date.now() < warm) await new Promise((r) => setTimeout(r, 5));
    await setEnabled(false);
    await scan(false);

    const runs = { without: [], with: [] };
    for (let i = 0; i < RUNS * 2; i++) {
      const variant = i % 2 === 0 ? 'without' : 'with';
      await setEnabled(variant === 'with');
      for (const c of channels) c.receiver.got.length = 0;
      const done = await scan(true);
      const changes = (await store.changes.list({ scanId: done.id, limit: 1, offset: 0 })).total;
      check(`scan ${done.id} records ${HOSTS} changes`, changes === HOSTS, `${changes}`);
      const run = { scan_id: done.id, duration_seconds: done.duration_seconds, changes };
      if (variant === 'with') {
        const deadline = Date.now() + 30_000;
        while (channels.some((c) => c.receiver.got.length < 1) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
        const lastArrival = Math.max(...channels.map((c) => c.receiver.got[0]?.at ?? Infinity));
        // Marked sent in the delivery log.
        while (Date.now() < deadline) {
          const { rows } = await store.notifications.listDeliveries({ status: 'sent', limit: 1000, offset: 0 });
          if (rows.filter((d) => d.scan_id === done.id).length === channels.length) break;
          await new Promise((r) => setTimeout(r, 5));
        }
        const recordedAt = Date.now();
        run.to_last_delivery_ms = lastArrival - finishedAt.get(done.id);
        run.to_all_marked_sent_ms = recordedAt - finishedAt.get(done.id);
        for (const c of channels) {
          check(`${c.channel.name} got one message for scan ${done.id}`, c.receiver.got.length === 1, `${c.receiver.got.length}`);
          const r = c.receiver.got[0];
          if (c.channel.type === 'webhook' && r) {
            const body = JSON.parse(r.body);
            check(`${c.channel.name} carries all ${HOSTS} changes`, body.changes.length === HOSTS, `${body.changes.length}`);
            const sig = `sha256=${createHmac('sha256', c.channel.config.secret).update(r.body).digest('hex')}`;
            check(`${c.channel.name} signature verifies`, r.headers['x-netwarden-signature'] === sig);
            run.webhook_body_bytes = Buffer.byteLength(r.body);
          }
        }
        run.message_bytes = Object.fromEntries(channels.map((c) => [c.channel.type, Buffer.byteLength(c.receiver.got[0]?.body ?? '')]));
      }
      runs[variant].push(run);
      log(
        `${variant.padEnd(7)} scan ${done.id}: ${round(done.duration_seconds * 1000)} ms recorded` +
          (run.to_last_delivery_ms !== undefined ? `, last delivery ${run.to_last_delivery_ms} ms after` : ''),
      );
      await setEnabled(false);
      await notifier.idle();
      await scan(false);
    }

    const without = median(runs.without.map((r) => r.duration_seconds * 1000));
    const withCh = median(runs.with.map((r) => r.duration_seconds * 1000));
    const overhead = ((withCh - without) / without) * 100;
    const toLast = runs.with.map((r) => r.to_last_delivery_ms);
    const summary = {
      scan_duration_ms_median: { without_channels: round(without), with_channels: round(withCh) },
      channels_overhead_percent: round(overhead, 2),
      to_last_delivery_ms: { median: median(toLast), max: Math.max(...toLast), min: Math.min(...toLast) },
      to_all_marked_sent_ms_median: median(runs.with.map((r) => r.to_all_marked_sent_ms)),
      targets: {
        overhead_below_percent: TARGET.overhead_percent,
        overhead_met: overhead < TARGET.overhead_percent,
        deliveries_within_ms: TARGET.deliveries_ms,
        deliveries_met: Math.max(...toLast) <= TARGET.deliveries_ms,
      },
    };
    const cpus = os.cpus();
    const result = {
      date: new Date().toISOString(),
      machine: {
        cpu: cpus[0]?.model,
        cores: cpus.length,
        memory_gb: round(os.totalmem() / 2 ** 30),
        os: `${os.type()} ${os.release()}`,
        node: process.version,
        load_average_at_end: os.loadavg().map((l) => round(l, 2)),
      },
      settings: { runs: RUNS, hosts: HOSTS, subnet: SUBNET, channels: CHANNELS, store: 'sqlite', engine: 'synthetic (no packets)' },
      summary,
      runs,
      failures,
    };
    writeResults('notify', result, markdown(result));
    log(
      `scan median ${round(without)} ms without channels, ${round(withCh)} ms with 20 (${round(overhead, 2)} %); last delivery ${median(toLast)} ms (max ${Math.max(...toLast)} ms) after the scan was recorded`,
    );
  } finally {
    await closeApp?.();
    await store.close();
    await Promise.all(receivers.map((r) => r.close()));
    rmSync(dir, { recursive: true, force: true });
  }
  if (failures.length) {
    console.error(`\n${failures.length} sanity check(s) failed`);
    process.exit(1);
  }
}

function markdown(r) {
  const s = r.summary;
  const lines = [
    '# Notification benchmark',
    '',
    `${r.date} · ${r.machine.cpu} × ${r.machine.cores} · ${r.machine.memory_gb} GB · ${r.machine.os} · Node ${r.machine.node} · load at end ${r.machine.load_average_at_end.join(' ')}`,
    '',
    `A scan recording ${r.settings.hosts} changes (synthetic engine, ${r.settings.subnet}, SQLite), fanned out to 20 channels ` +
      `(${Object.entries(r.settings.channels)
        .map(([t, n]) => `${n} ${t}`)
        .join(', ')}) on loopback receivers; ${r.settings.runs} runs each.`,
    '',
    '| Measure | Median | Target | Met |',
    '|---|---|---|---|',
    `| Scan recorded duration, no channels | ${s.scan_duration_ms_median.without_channels} ms | | |`,
    `| Scan recorded duration, 20 channels | ${s.scan_duration_ms_median.with_channels} ms | | |`,
    `| Added by channels | ${s.channels_overhead_percent} % | < ${s.targets.overhead_below_percent} % | ${s.targets.overhead_met ? 'yes' : 'no'} |`,
    `| Scan recorded → last of 20 deliveries received | ${s.to_last_delivery_ms.median} ms (max ${s.to_last_delivery_ms.max}) | ≤ ${s.targets.deliveries_within_ms} ms | ${s.targets.deliveries_met ? 'yes' : 'no'} |`,
    `| Scan recorded → all 20 marked sent in the log | ${s.to_all_marked_sent_ms_median} ms | | |`,
    '',
    '| Run | Variant | Scan | Recorded duration (ms) | To last delivery (ms) |',
    '|---|---|---|---|---|',
    ...[...r.runs.without.map((x) => ['without', x]), ...r.runs.with.map((x) => ['with', x])].map(
      ([v, x], i) => `| ${i + 1} | ${v} | ${x.scan_id} | ${round(x.duration_seconds * 1000)} | ${x.to_last_delivery_ms ?? ''} |`,
    ),
    '',
    r.runs.with[0]?.message_bytes
      ? `Message sizes (bytes): ${Object.entries(r.runs.with[0].message_bytes)
          .map(([t, b]) => `${t} ${b}`)
          .join(', ')}.`
      : '',
    '',
    r.failures.length ? `Sanity check failures: ${r.failures.join('; ')}` : 'All sanity checks passed.',
    '',
  ];
  return lines.join('\n');
}

await main();
