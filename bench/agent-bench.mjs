#!/usr/bin/env node
// Agent benchmark (issue 13): the same lab scan run through an agent, and run locally by a server
// standing where the agent stands. Needs root (ip netns) and nmap; skipped (exit 0) elsewhere.
//
//   node bench/agent-bench.mjs      (npm run bench:agent)
//
// The lab is test/lab/agent-lab.sh: `netwarden serve` in namespace nwa-server (no route to the
// segment), `netwarden agent` in nwa-agent on bridge nwlab1 (10.66.1.0/24) with three hosts:
//   h1 10.66.1.11  SSH banner on 22, HTTP on 80
//   h2 10.66.1.12  FTP banner on 21, HTTP on 80
//   h3 10.66.1.13  SMTP banner on 25, SSH banner on 22
// Scanned: 10.66.1.0/24 without 10.66.1.1 (the agent's own address), normal profile, ports 1-1000,
// OS detection off, nmap engine.
//
// Measured, BENCH_SCAN_REPEAT times each (default 3) in rotation after one warm-up each, from the
// trigger to the completed record (the record polled every 50 ms):
//   agent   POST /api/scan/trigger on the server in nwa-server; the agent takes the scan (long poll),
//           runs nmap in nwa-agent, streams progress and uploads the results, which the server records
//   local   the same scan on a server running in nwa-agent itself (the real app from dist/ on SQLite,
//           in a child process there), scanning the segment directly
// Target: agent <= 1.15 x local. Results: bench/results/agent.json and agent.md. Exit status 1 when
// a scan did not complete or found other hosts or ports than the lab has.
//
// Environment: BENCH_SCAN_REPEAT (3), BENCH_SKIP_BUILD=1 (use dist/ as it is), BENCH_LOG_LEVEL
// (local server's log level, default silent). The lab is always torn down (finally, and on signals).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureBuilt, sanityChecks, writeResults } from './lib.mjs';
import { children, foundProblems, median, onSignal, positive, round, run, scanFindings, startApiServer } from './scan-common.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const LAB = join(root, 'test', 'lab', 'agent-lab.sh');
const BIN = join(root, 'bin', 'netwarden.js');
const dist = pathToFileURL(join(root, 'dist') + '/');

const SUBNET = '10.66.1.0/24';
const EXCLUDE = ['10.66.1.1/32'];
const PORTS = '1-1000';
const REPEAT = positive('BENCH_SCAN_REPEAT', 3);
const TARGET_RATIO = 1.15;
const EXPECTED = new Map([
  ['10.66.1.11', [22, 80]],
  ['10.66.1.12', [21, 80]],
  ['10.66.1.13', [22, 25]],
]);
// Scope guard: the servers here scan only loopback and the namespace labs.
const SCAN_ALLOW = '127.0.0.0/8,10.66.0.0/24,10.66.1.0/24';
const log = (message) => console.log(`[agent-bench] ${message}`);

/** Polls a scan every 50 ms until it ends; resolves to its record and the wall time from `started`. */
async function waitForScan(request, scanId, started) {
  for (;;) {
    const record = await (await request(`/api/scans/${scanId}`)).json();
    if (record.status !== 'queued' && record.status !== 'running') return { record, ms: performance.now() - started };
    if (performance.now() - started > 300_000) throw new Error(`scan ${scanId} still ${record.status} after 300 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One scan through `server` (trigger, poll): its wall time and what it found. */
async function timedScan(server) {
  const started = performance.now();
  const res = await server.request(`/api/scan/trigger?profile=normal&subnet=${encodeURIComponent(SUBNET)}`, { method: 'POST' });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`trigger: ${res.status} ${JSON.stringify(body)}`);
  const { record, ms } = await waitForScan(server.request, body.scan_id, started);
  const { found, serverSeconds } = await scanFindings(server, body.scan_id, record);
  return { ms, serverSeconds, problems: foundProblems(EXPECTED, found) };
}

// --- the child in nwa-agent: a server scanning the segment itself, one scan per "scan" line on stdin ---

async function localChild() {
  const server = await startApiServer({ from: dist, engine: 'nmap', osDetection: false, subnet: SUBNET, exclude: EXCLUDE, ports: PORTS });
  const lines = createInterface({ input: process.stdin });
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  for await (const line of lines) {
    if (line.trim() !== 'scan') break;
    try {
      process.stdout.write(`${JSON.stringify(await timedScan(server))}\n`);
    } catch (err) {
      process.stdout.write(`${JSON.stringify({ error: err.message })}\n`);
    }
  }
  await server.close();
}

/** Starts the local child in nwa-agent; `scan()` runs one scan there. */
async function startLocal() {
  const child = spawn('ip', ['netns', 'exec', 'nwa-agent', process.execPath, fileURLToPath(import.meta.url), '--local-child'], {
    env: { ...process.env, NETWARDEN_SCAN_ALLOW: SCAN_ALLOW },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.add(child);
  const replies = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await replies.next();
    if (done) throw new Error('the local server in nwa-agent exited');
    return JSON.parse(value);
  };
  await next();
  return {
    async scan() {
      child.stdin.write('scan\n');
      const reply = await next();
      if (reply.error) throw new Error(reply.error);
      return reply;
    },
    async close() {
      child.stdin.end();
      await new Promise((r) => child.once('exit', r));
      children.delete(child);
    },
  };
}

/** Starts `netwarden <args>` in a namespace; resolves when a log line satisfies `ready`. */
function startIn(namespace, args, env, ready) {
  const child = spawn('ip', ['netns', 'exec', namespace, process.execPath, BIN, ...args], {
    env: { ...process.env, NETWARDEN_LOG_LEVEL: 'info', NETWARDEN_SCAN_ALLOW: SCAN_ALLOW, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise((r) => child.once('exit', r));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    children.delete(child);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`netwarden ${args[0]} not ready in 60 s\n${stderr}`)), 60_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      let entry;
      try {
        entry = JSON.parse(line);
      } catch {
        return;
      }
      const value = ready(entry);
      if (value !== undefined) {
        clearTimeout(timer);
        resolve({ value, stop });
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`netwarden ${args[0]} exited before it was ready\n${stderr}`));
    });
  });
}

/** The server in nwa-server (reached from here at 10.66.0.250) and the agent in nwa-agent. */
async function startAgentSetup(dataDir) {
  writeFileSync(
    join(dataDir, 'netwarden.json'),
    JSON.stringify({
      settings: {
        network: { subnet: SUBNET, exclude: EXCLUDE, resolve_hostnames: false },
        scanning: { engine: 'nmap', port_range: PORTS, os_detection: false },
        updates: { feed_url: 'http://127.0.0.1:9/releases/latest' },
      },
    }),
  );
  const server = await startIn(
    'nwa-server',
    ['serve'],
    { NETWARDEN_DATA_DIR: dataDir, NETWARDEN_HOST: '0.0.0.0', NETWARDEN_PORT: '0', NETWARDEN_UPDATE_FEED_URL: 'http://127.0.0.1:9/releases/latest' },
    (l) => (l.msg === 'netwarden listening' ? new URL(l.url).port : undefined),
  );
  const base = `http://10.66.0.250:${server.value}`;
  const json = (method, path, body, headers = {}) =>
    fetch(base + path, { method, headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const setup = await json('POST', '/api/auth/setup', { username: 'bench', password: 'agent bench password 1' });
  if (setup.status !== 201) throw new Error(`set-up failed: ${setup.status}`);
  const cookie = setup.headers
    .getSetCookie()
    .find((c) => c.startsWith('netwarden_session='))
    .split(';')[0];
  const { key } = await (await json('POST', '/api/keys', { name: 'agent-bench' }, { Cookie: cookie })).json();
  const created = await (await json('POST', '/api/agents', { name: 'bench-agent', networks: [SUBNET] }, { Cookie: cookie })).json();
  const agent = await startIn(
    'nwa-agent',
    ['agent', '--server', `http://10.66.0.253:${server.value}`, '--engine', 'nmap'],
    { NETWARDEN_AGENT_TOKEN: created.token, NETWARDEN_SCAN_ALLOW: SUBNET },
    (l) => (l.msg === 'netwarden agent ready' ? true : undefined),
  );
  const request = (path, init = {}) => fetch(base + path, { ...init, headers: { ...init.headers, 'X-API-Key': key } });
  return {
    request,
    async close() {
      await agent.stop();
      await server.stop();
    },
  };
}

async function main() {
  if (process.getuid?.() !== 0) {
    log('skipped: needs root (ip netns)');
    return;
  }
  if ((await run('nmap', ['--version'])).code !== 0) {
    log('skipped: nmap is not installed');
    return;
  }
  ensureBuilt({ markers: ['server.js', 'agent/runtime.js'], log });
  const { failures, check } = sanityChecks(log);
  const loadBefore = os.loadavg();
  const lab = (...args) => execFileSync('bash', [LAB, ...args], { env: { ...process.env, NWLAB_QUIET: '1' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const dataDir = mkdtempSync(join(os.tmpdir(), 'netwarden-agent-bench-'));
  let cleanedUp = false;
  const cleanup = () => {
    if (cleanedUp) return;
    cleanedUp = true;
    try {
      lab('down');
    } catch (err) {
      console.error(`[agent-bench] lab teardown failed: ${err.message}`);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  onSignal('tearing the lab down', cleanup);

  const runs = { agent: [], local: [] };
  let agentSetup;
  let local;
  try {
    lab('up');
    lab('listen', 'h1', '22', 'banner', 'SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13');
    lab('listen', 'h1', '80', 'http', 'nginx/1.24.0');
    lab('listen', 'h2', '21', 'banner', '220 (vsFTPd 3.0.5)');
    lab('listen', 'h2', '80', 'http', 'Apache/2.4.58 (Ubuntu)');
    lab('listen', 'h3', '25', 'banner', '220 mail.lab.example ESMTP Postfix (Ubuntu)');
    lab('listen', 'h3', '22', 'banner', 'SSH-2.0-dropbear_2022.83');
    log('lab up: 3 hosts on nwlab1, server in nwa-server, agent in nwa-agent');
    agentSetup = await startAgentSetup(dataDir);
    local = await startLocal();
    const variants = { agent: () => timedScan(agentSetup), local: () => local.scan() };
    for (const name of Object.keys(variants)) {
      const warm = await variants[name]();
      log(`warm-up ${name}: ${round(warm.ms / 1000, 2)} s`);
    }
    for (let i = 0; i < REPEAT; i++) {
      for (const name of Object.keys(variants)) {
        const result = await variants[name]();
        check(`${name} run ${i + 1} found the lab`, result.problems.length === 0, result.problems.join('; '));
        runs[name].push(result);
        log(`${name} run ${i + 1}: ${round(result.ms / 1000, 2)} s`);
      }
    }
  } finally {
    await agentSetup?.close().catch(() => undefined);
    await local?.close().catch(() => undefined);
    cleanup();
  }

  const seconds = (name) => runs[name].map((r) => r.ms / 1000);
  const med = { agent: median(seconds('agent')), local: median(seconds('local')) };
  const ratio = med.agent / med.local;
  check(`agent / local <= ${TARGET_RATIO}`, ratio <= TARGET_RATIO, `${round(ratio, 3)}`);
  const loadAfter = os.loadavg();
  const machine = `${os.cpus()[0]?.model ?? 'cpu'} × ${os.cpus().length} · ${round(os.totalmem() / 1024 ** 3, 1)} GB · ${os.type()} ${os.release()} · Node ${process.version}`;
  const result = {
    date: new Date().toISOString(),
    machine,
    load: { before: loadBefore, after: loadAfter },
    lab: { subnet: SUBNET, exclude: EXCLUDE, ports: PORTS, hosts: Object.fromEntries(EXPECTED) },
    repeat: REPEAT,
    seconds: { agent: seconds('agent'), local: seconds('local') },
    median_seconds: { agent: round(med.agent, 3), local: round(med.local, 3) },
    ratio: round(ratio, 3),
    target: TARGET_RATIO,
    failures,
  };
  const row = (name, what) => {
    const s = seconds(name);
    return `| ${name} | ${round(med[name], 2)} s | ${round(Math.min(...s), 2)} s | ${round(Math.max(...s), 2)} s | ${s.map((v) => `${round(v, 2)} s`).join(', ')} | ${what} |`;
  };
  const markdown = [
    '# Agent benchmark: a lab scan through an agent vs run locally',
    '',
    `${result.date} · ${machine}`,
    '',
    `Load average before ${loadBefore.map((l) => round(l, 2)).join(' / ')}, after ${loadAfter.map((l) => round(l, 2)).join(' / ')} (1/5/15 min). The machine is shared: compare runs from the same machine and a similar load only.`,
    '',
    `Lab (test/lab/agent-lab.sh): \`netwarden serve\` in namespace nwa-server, with no route to ${SUBNET}; \`netwarden agent\` in nwa-agent on bridge nwlab1 with 3 hosts (10.66.1.11 SSH 22 + HTTP 80, 10.66.1.12 FTP 21 + HTTP 80, 10.66.1.13 SSH 22 + SMTP 25). ` +
      `Normal scan of ${SUBNET} without ${EXCLUDE.join(', ')}, ports ${PORTS}, nmap engine, OS detection off. Wall time from the trigger to the completed record (polled every 50 ms). ` +
      `Each variant ran ${REPEAT} times in rotation after one warm-up run; median shown.`,
    '',
    '| Variant | Median | Min | Max | Runs | What |',
    '|---|---:|---:|---:|---|---|',
    row(
      'agent',
      'the server in nwa-server; the agent in nwa-agent takes the scan (long poll), runs nmap, streams progress, uploads; the server records',
    ),
    row('local', 'a server running in nwa-agent itself scans the segment directly (the real app from dist/, SQLite)'),
    '',
    '| Ratio | Value | Target |',
    '|---|---:|---|',
    `| agent / local | ${round(ratio, 3)}× | ≤ ${TARGET_RATIO}× ${ratio <= TARGET_RATIO ? 'met' : 'NOT met'} |`,
    '',
    failures.length
      ? `Sanity checks failed:\n\n${failures.map((f) => `- ${f}`).join('\n')}\n`
      : 'Every run completed and found exactly the lab (hosts and open ports).',
    '',
  ].join('\n');
  writeResults('agent', result, markdown);
  log(`agent ${round(med.agent, 2)} s, local ${round(med.local, 2)} s: ${round(ratio, 3)}× (target ≤ ${TARGET_RATIO}×)`);
  if (failures.some((f) => !f.startsWith('agent / local'))) process.exitCode = 1;
}

if (process.argv.includes('--local-child')) {
  await localChild();
} else {
  await main();
}
