#!/usr/bin/env node
// Scale-out benchmark (issue 13), on PostgreSQL only. Everything listens on 127.0.0.1 only.
//
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node bench/scale-bench.mjs
//
// 1. API instances: 100,000 devices over 50 subnets in one schema; `netwarden serve` processes on
//    it; autocannon (this process) against one instance, then against two at once (half the
//    connections each): GET /api/stats and GET /api/devices throughput and p99.
// 2. Queue: BENCH_JOBS (1,000) queued scans of distinct loopback /32 targets, run by 1 and then 2
//    worker processes (bench/queue-worker-child.mjs: the real ScanManager and pg-boss queue with a
//    synthetic engine), scanning.max_parallel_scans = workers: jobs per second, queue latency
//    (started_at − created_at), and that no job ran twice and none was lost.
// 3. Agents: bench/agent-bench.mjs (the namespace lab) is its own script; see its results.
//
// Environment: BENCH_DURATION (10 s), BENCH_WARMUP (2 s), BENCH_CONNECTIONS (20), BENCH_DEVICES
// (100000), BENCH_JOBS (1000), BENCH_ENGINE_MS (5), BENCH_PARTS (api,queue).
// Results: bench/results/scale.json and scale.md.
import { fork, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import pg from 'pg';
import { ensureBuilt, sanityChecks, writeResults } from './lib.mjs';
import { seedInventory } from './inventory.mjs';

const root = new URL('..', import.meta.url).pathname;
const dist = new URL('../dist/', import.meta.url);
const num = (name, fallback) => {
  const n = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number`);
  return n;
};
const settings = {
  duration: num('BENCH_DURATION', 10),
  warmup: num('BENCH_WARMUP', 2),
  connections: num('BENCH_CONNECTIONS', 20),
  devices: num('BENCH_DEVICES', 100_000),
  jobs: num('BENCH_JOBS', 1000),
  engineMs: num('BENCH_ENGINE_MS', 5),
  subnets: 50,
};
const parts = (process.env.BENCH_PARTS ?? 'api,queue').split(',');
const pgUrl = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL;
if (!pgUrl) {
  console.error('scale-bench needs PostgreSQL: set BENCH_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test)');
  process.exit(2);
}
const log = (...args) => console.log(...args);
const { failures, check } = sanityChecks(log);
ensureBuilt({ markers: ['services.js', 'queue/index.js'], log });

const { openStore } = await import(new URL('store/index.js', dist));
const { ensurePgSchema, dropPgSchema } = await import(new URL('store/db.js', dist));
const { generateApiKey } = await import(new URL('auth/tokens.js', dist));
const { hashPassword } = await import(new URL('auth/passwords.js', dist));
const { initialise } = await import(new URL('services.js', dist));
const { scanJobQueue } = await import(new URL('queue/index.js', dist));
const { insertQueued } = await import(new URL('store/scans.js', dist));
const { createLogger } = await import(new URL('logger.js', dist));

const round = (n, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const result = { settings, machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version }, api: null, queue: null };

// 1. API instances ------------------------------------------------------------------------------

async function startServe(env) {
  const child = spawn(process.execPath, [join(root, 'bin', 'netwarden.js'), 'serve', '--no-worker'], {
    cwd: root,
    env: {
      ...process.env,
      ...env,
      NETWARDEN_PORT: '0',
      NETWARDEN_HOST: '127.0.0.1',
      NETWARDEN_LOG_LEVEL: 'warn',
      NETWARDEN_SCAN_ALLOW: '127.0.0.0/8',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // At level warn the "listening" line is not logged: find the port from /proc instead of the log.
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('serve did not start in 60 s')), 60_000);
    const poll = setInterval(async () => {
      for (const port of listeningPorts(child.pid)) {
        const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => null);
        if (res?.ok) {
          clearInterval(poll);
          clearTimeout(timer);
          resolve(`http://127.0.0.1:${port}`);
          return;
        }
      }
    }, 250);
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}`)));
  });
  createInterface({ input: child.stdout }).on('line', () => {});
  return { url, child, stop: () => new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM'))) };
}

/** TCP ports process `pid` listens on (from /proc/net/tcp and its socket inodes). */
function listeningPorts(pid) {
  try {
    const inodes = new Set(
      readdirSync(`/proc/${pid}/fd`)
        .map((fd) => {
          try {
            return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
          } catch {
            return undefined;
          }
        })
        .filter(Boolean),
    );
    return readFileSync('/proc/net/tcp', 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((f) => f[3] === '0A' && inodes.has(f[9]))
      .map((f) => parseInt(f[1].split(':')[1], 16));
  } catch {
    return [];
  }
}

function cannon(url, key, connections, duration) {
  return autocannon({ url, headers: { 'X-API-Key': key }, connections, duration });
}

/** Runs autocannon against every URL at once (connections split between them); sums req/s, worst p99. */
async function load(urls, key, duration) {
  const per = Math.max(1, Math.round(settings.connections / urls.length));
  const runs = await Promise.all(urls.map((u) => cannon(u, key, per, duration)));
  return {
    rps: Math.round(runs.reduce((sum, r) => sum + r.requests.mean, 0)),
    p99_ms: Math.max(...runs.map((r) => r.latency.p99)),
    p50_ms: Math.max(...runs.map((r) => r.latency.p50)),
    bad: runs.reduce((sum, r) => sum + r.errors + r.timeouts + r.non2xx, 0),
  };
}

async function apiPart() {
  const schema = `nw_bench_scale_${process.pid}`;
  await ensurePgSchema(pgUrl, schema);
  const withPath = `${pgUrl}${pgUrl.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const dataDir = mkdtempSync(join(os.tmpdir(), 'netwarden-scale-'));
  const servers = [];
  try {
    const store = await openStore({ url: pgUrl, pgSchema: schema });
    await initialise(store, { settingsSeed: {}, admin: null }, createLogger('silent'));
    const seedStart = performance.now();
    await seedInventory(store, settings.devices, 20261125);
    // 50 subnets: device i goes to 10.<i mod 50>.0.0/16, at most 2,000 per subnet.
    const n = settings.subnets;
    await sql`update devices set
        ip_sort = (10::bigint << 24) + ((id % ${n}) << 16) + ((id / ${n}) / 250) * 256 + ((id / ${n}) % 250) + 1,
        ip_address = '10.' || (id % ${n}) || '.' || ((id / ${n}) / 250) || '.' || ((id / ${n}) % 250 + 1)`.execute(store.db);
    log(`seeded ${settings.devices} devices over ${settings.subnets} subnets in ${round((performance.now() - seedStart) / 1000)} s`);
    const user = await store.users.create('bench-admin', await hashPassword('bench-password-not-secret'));
    const { key, prefix, hash } = generateApiKey();
    await store.apiKeys.create({ name: 'bench', prefix, key_hash: hash, created_by: user.id, created_at: new Date().toISOString() });
    await store.close();

    const env = { NETWARDEN_DATABASE_URL: withPath, NETWARDEN_DATA_DIR: dataDir };
    servers.push(await startServe(env), await startServe(env));
    const out = {};
    for (const [name, path] of [
      ['stats', '/api/stats'],
      ['devices', '/api/devices'],
    ]) {
      const one = servers.slice(0, 1).map((s) => s.url + path);
      const two = servers.map((s) => s.url + path);
      await load(two, key, settings.warmup);
      const single = await load(one, key, settings.duration);
      const double = await load(two, key, settings.duration);
      check(`${path}: every response 2xx`, single.bad === 0 && double.bad === 0, `${single.bad + double.bad} bad`);
      out[name] = { one: single, two: double, ratio: round(double.rps / Math.max(1, single.rps), 2) };
      log(
        `  ${path.padEnd(14)} 1 instance ${single.rps} req/s (p99 ${single.p99_ms} ms)   2 instances ${double.rps} req/s (p99 ${double.p99_ms} ms)   ×${out[name].ratio}`,
      );
    }
    return out;
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(dataDir, { recursive: true, force: true });
    await dropPgSchema(pgUrl, schema);
  }
}

// 2. Queue ----------------------------------------------------------------------------------------

function startWorker(schema, name) {
  const child = fork(new URL('./queue-worker-child.mjs', import.meta.url), [], {
    env: { ...process.env, BENCH_CHILD_CONFIG: JSON.stringify({ url: pgUrl, pgSchema: schema, name, engineMs: settings.engineMs }) },
    stdio: ['ignore', process.env.BENCH_WORKER_LOG ? 'inherit' : 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => (m?.type === 'ready' ? resolve(child) : reject(new Error(JSON.stringify(m)))));
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
  });
}

async function queueRun(workerCount) {
  const schema = `nw_bench_queue_${process.pid}_${workerCount}`;
  await ensurePgSchema(pgUrl, schema);
  const store = await openStore({ url: pgUrl, pgSchema: schema });
  const workers = [];
  try {
    await initialise(store, { settingsSeed: {}, admin: null }, createLogger('silent'));
    const settingsNow = await store.settings.get();
    await store.settings.put({ ...settingsNow, scanning: { ...settingsNow.scanning, max_parallel_scans: workerCount } });
    const queue = await scanJobQueue(store, createLogger('silent'));
    await queue.start();
    // The jobs, queued before any worker runs: what a backlog looks like.
    for (let i = 0; i < settings.jobs; i++) {
      const target = `127.${10 + Math.floor(i / 65536)}.${Math.floor(i / 256) % 256}.${i % 256}/32`;
      await store.scans.underQueueLock(async (db) => {
        const scan = await insertQueued(db, {
          profile: 'quick',
          subnet: target,
          scan_type: 'network',
          target: null,
          created_at: new Date().toISOString(),
          triggered_by: 'bench',
        });
        await store.scans.setJob(db, scan.id, await queue.enqueue(scan.id, db));
      });
    }
    await queue.stop();
    workers.push(...(await Promise.all(Array.from({ length: workerCount }, (_, w) => startWorker(schema, `bench-${w + 1}`)))));
    const started = performance.now();
    for (const w of workers) w.send({ type: 'go' });
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    let done = 0;
    while (done < settings.jobs) {
      await new Promise((r) => setTimeout(r, 200));
      const { rows } = await client.query(`select count(*)::int as n from ${schema}.scans where status in ('completed','failed','cancelled')`);
      done = rows[0].n;
      if (performance.now() - started > 30 * 60_000) break;
    }
    const elapsed = (performance.now() - started) / 1000;
    const { rows: scans } = await client.query(`select status, runner, started_at, completed_at from ${schema}.scans order by started_at`);
    const { rows: starts } = await client.query(
      `select resource_id, count(*)::int as n from ${schema}.audit_logs where action = 'scan_started' group by resource_id having count(*) > 1`,
    );
    await client.end();
    const completed = scans.filter((s) => s.status === 'completed').length;
    // Queue latency as a waiting scan sees it: from the end of one worker's scan to the start of its next.
    const gaps = [];
    const last = new Map();
    for (const s of scans) {
      const prev = last.get(s.runner);
      if (prev) gaps.push((Date.parse(s.started_at) - Date.parse(prev)) / 1000);
      last.set(s.runner, s.completed_at);
    }
    gaps.sort((a, b) => a - b);
    const byRunner = {};
    for (const s of scans) byRunner[s.runner] = (byRunner[s.runner] ?? 0) + 1;
    check(`queue (${workerCount} workers): every job completed, none lost`, completed === settings.jobs, `${completed} of ${settings.jobs}`);
    check(`queue (${workerCount} workers): no job ran twice`, starts.length === 0, `${starts.length} started twice`);
    return {
      workers: workerCount,
      jobs: settings.jobs,
      completed,
      run_twice: starts.length,
      seconds: round(elapsed, 2),
      jobs_per_second: round(completed / elapsed, 1),
      handoff_p50_ms: Math.round(percentile(gaps, 50) * 1000),
      handoff_p99_ms: Math.round(percentile(gaps, 99) * 1000),
      by_runner: byRunner,
    };
  } finally {
    for (const w of workers) w.send({ type: 'stop' });
    await Promise.all(workers.map((w) => new Promise((resolve) => (w.exitCode !== null ? resolve() : w.once('exit', resolve)))));
    await store.close();
    await dropPgSchema(pgUrl, schema);
  }
}

// ------------------------------------------------------------------------------------------------

if (parts.includes('api')) {
  log(`API instances: ${settings.devices} devices, ${settings.connections} connections, ${settings.duration} s per run`);
  result.api = await apiPart();
}
if (parts.includes('queue')) {
  log(`queue: ${settings.jobs} queued scans, synthetic engine ${settings.engineMs} ms per scan`);
  result.queue = [];
  for (const n of [1, 2]) {
    const run = await queueRun(n);
    result.queue.push(run);
    log(`  ${n} worker(s): ${run.completed}/${run.jobs} in ${run.seconds} s = ${run.jobs_per_second} jobs/s; run twice: ${run.run_twice}`);
  }
}

const md = [
  '# Scale-out benchmark (PostgreSQL)',
  '',
  `Machine: ${result.machine.cpus} × ${result.machine.model}, Node ${result.machine.node}; PostgreSQL on the same machine. ${new Date().toISOString()}`,
  '',
];
if (result.api) {
  md.push(`## API instances (${settings.devices} devices over ${settings.subnets} subnets, ${settings.connections} connections)`, '');
  md.push('| Route | 1 instance req/s | p99 ms | 2 instances req/s | p99 ms | 2 / 1 |', '|---|---|---|---|---|---|');
  for (const [name, r] of Object.entries(result.api))
    md.push(`| ${name} | ${r.one.rps} | ${r.one.p99_ms} | ${r.two.rps} | ${r.two.p99_ms} | ×${r.ratio} |`);
  md.push('');
}
if (result.queue) {
  md.push(`## Queue (${settings.jobs} queued scans, synthetic engine ${settings.engineMs} ms)`, '');
  md.push(
    'All jobs are queued before the workers start. Hand-off: from the end of one scan on a worker to the start of its next (the queue latency a waiting scan sees).',
    '',
  );
  md.push('| Workers | Completed | Seconds | Jobs/s | Hand-off p50 ms | p99 ms | Run twice | By worker |', '|---|---|---|---|---|---|---|---|');
  for (const q of result.queue)
    md.push(
      `| ${q.workers} | ${q.completed} | ${q.seconds} | ${q.jobs_per_second} | ${q.handoff_p50_ms} | ${q.handoff_p99_ms} | ${q.run_twice} | ${JSON.stringify(q.by_runner)} |`,
    );
  md.push('');
}
if (failures.length) md.push('## Failed checks', '', ...failures.map((f) => `- ${f}`), '');
writeResults('scale', { ...result, failures }, md.join('\n'));
log(md.join('\n'));
process.exit(failures.length ? 1 : 0);
