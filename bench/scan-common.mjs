// What the two scan benchmarks share (scan-bench.mjs on loopback, scan-lab-bench.mjs on the
// namespace lab): running child processes, reading open ports out of an nmap run, checking what a
// run found against what the target has, and the statistics.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { openBenchApp } from './app.mjs';

/** A positive integer from the environment variable `name`, or `fallback` when it is unset. */
export function positive(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

/** Child processes still running, so a signal handler can kill them. */
export const children = new Set();

/** Runs `file` with `args`; resolves (never rejects) to its exit code, output and wall time. */
export function run(file, args, { stdin = null, env = process.env, timeoutMs = 900_000 } = {}) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(file, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    children.add(child);
    const out = [];
    const err = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    child.stdin.on('error', () => {});
    child.stdin.end(stdin ?? '');
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const done = (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString(), ms: performance.now() - started });
    };
    child.on('error', (e) => {
      err.push(Buffer.from(String(e.message)));
      done(127);
    });
    child.on('close', (code) => done(code ?? 1));
  });
}

/** Kills every child still running (from a signal handler). */
export function killChildren() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      /* gone */
    }
  }
}

/**
 * On Ctrl-C (or SIGTERM/SIGHUP): kill the children, run `cleanup` (stop listeners, tear a lab
 * down), exit 130. Once.
 */
export function onSignal(what, cleanup) {
  let cleaningUp = false;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => {
      if (cleaningUp) return;
      cleaningUp = true;
      console.error(`\n[scan-bench] ${signal}: stopping${what ? ` and ${what}` : ''}`);
      killChildren();
      cleanup();
      process.exit(130);
    });
  }
}

/** One nmap run, parsed with `parseNmapXml` (dist/core/nmap-xml.js); throws when nmap fails. */
export async function nmap(parseNmapXml, args, stdin = null) {
  const result = await run('nmap', args, { stdin });
  if (result.code !== 0) throw new Error(`nmap ${args.join(' ')} failed (exit ${result.code}): ${result.stderr.trim().slice(0, 500)}`);
  const parsed = parseNmapXml(result.stdout);
  return { ms: result.ms, hosts: parsed.hosts, elapsed: parsed.elapsedSeconds };
}

/** Each host's open ports, ascending. */
export function openPorts(hosts) {
  return new Map(
    hosts.map((h) => [
      h.ip,
      h.ports
        .filter((p) => p.state === 'open')
        .map((p) => p.port)
        .sort((a, b) => a - b),
    ]),
  );
}

/**
 * What is wrong with what a run found (address → open ports, or null where ports were not
 * scanned) against `expected`: hosts missing or unexpected, other open ports.
 */
export function foundProblems(expected, found) {
  const problems = [];
  for (const [ip, ports] of expected) {
    if (!found.has(ip)) problems.push(`${ip} missing`);
    else if (found.get(ip) !== null && JSON.stringify(found.get(ip)) !== JSON.stringify(ports)) {
      problems.push(`${ip} open ports ${JSON.stringify(found.get(ip))}, expected ${JSON.stringify(ports)}`);
    }
  }
  for (const ip of found.keys()) if (!expected.has(ip)) problems.push(`unexpected host ${ip}`);
  return problems;
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export const round = (n, digits = 0) => (n === null || n === undefined ? null : Math.round(n * 10 ** digits) / 10 ** digits);

/**
 * The real app from a build's dist/ (`from`, a file URL ending in /) on SQLite in a temporary
 * directory, in this process, with an administrator and an API key: `request` sends the key.
 * Settings: the scanned `subnet` and `exclude`, `ports`, `udpPorts` (scanning.udp_ports; undefined:
 * the default), the engine and OS detection, `recognition` (undefined: the default, every probe);
 * no update check ever leaves the machine.
 */
export async function startApiServer({ from, engine, osDetection, subnet, exclude, ports, udpPorts, recognition }) {
  const { openStore } = await import(new URL('store/index.js', from));
  const { createLogger } = await import(new URL('logger.js', from));
  const { VERSION } = await import(new URL('version.js', from));
  const dir = mkdtempSync(join(os.tmpdir(), 'netwarden-scan-bench-'));
  const logger = createLogger(process.env.BENCH_LOG_LEVEL ?? 'silent');
  const store = await openStore({ url: join(dir, 'netwarden.db') });
  const settingsSeed = {
    network: { subnet, exclude, resolve_hostnames: false },
    scanning: { engine, port_range: ports, os_detection: osDetection, ...(udpPorts === undefined ? {} : { udp_ports: udpPorts }) },
    updates: { feed_url: 'http://127.0.0.1:9/releases/latest' },
    ...(recognition === undefined ? {} : { recognition }),
  };
  const { app, close } = await openBenchApp(from, { store, logger, settingsSeed, version: VERSION });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${app.server.address().port}`;
  const request = (path, init = {}) => fetch(base + path, init);

  const setup = await request('/api/auth/setup', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'bench', password: 'scan bench password 1' }),
  });
  if (setup.status !== 201) throw new Error(`admin set-up failed: ${setup.status} ${await setup.text()}`);
  const cookie = setup.headers
    .getSetCookie()
    .find((c) => c.startsWith('netwarden_session='))
    ?.split(';')[0];
  const created = await request('/api/keys', {
    method: 'POST',
    headers: { Cookie: cookie, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'scan-bench' }),
  });
  if (created.status !== 201) throw new Error(`key creation failed: ${created.status} ${await created.text()}`);
  const { key } = await created.json();
  const health = await (await request('/health')).json();
  if (health.engine !== engine) throw new Error(`/health reports engine ${health.engine}, expected ${engine}`);

  return {
    engine,
    base,
    key,
    request: (path, init = {}) => request(path, { ...init, headers: { ...init.headers, 'X-API-Key': key } }),
    async close() {
      await close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * What a finished API scan found, after checking it completed: each device it saw (address →
 * open ports), with the scan's own duration.
 */
export async function scanFindings(server, scanId, record) {
  if (record.status !== 'completed') throw new Error(`scan ${scanId} ended ${record.status}: ${record.error}`);
  const devices = await (await server.request('/api/devices?limit=1000')).json();
  if (!Array.isArray(devices)) throw new Error(`GET /api/devices: ${JSON.stringify(devices).slice(0, 300)}`);
  const found = new Map(devices.filter((d) => d.last_scan_id === scanId).map((d) => [d.ip_address, d.open_ports]));
  return { serverSeconds: record.duration_seconds, found };
}
