#!/usr/bin/env node
// In-process profile of the two imports of bench/import-bench.mjs on SQLite (one round): the CPU
// time of this process (process.cpuUsage, every thread) for each POST, for use under
// `node --cpu-prof --cpu-prof-dir=<dir> bench/import-profile.mjs`, or with PROFILE_DIR=<dir> (one
// .cpuprofile of the main thread per import). BENCH_HOSTS, BENCH_PORTS as there.
//
// BENCH_READ=1: reading the first report alone instead (planImport: the safety checks,
// well-formedness, the mapper), the CPU time of BENCH_RUNS (5) reads, median, with this build and,
// read in turn in the same run, BENCH_ANCHOR's (bench/lib.mjs anchorBuild) or the dist/ directory
// BENCH_ANCHOR_DIST names; with PROFILE_DIR, one more read of this build profiled (read.cpuprofile).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openBenchApp } from './app.mjs';
import { anchorBuild } from './lib.mjs';
import { reportPair } from './nmap-report.mjs';

process.env.NETWARDEN_SCAN_ALLOW ??= '127.0.0.0/8,10.66.0.0/24';
const hosts = Number(process.env.BENCH_HOSTS ?? 10_000);
const portsPerHost = Number(process.env.BENCH_PORTS ?? 8);
const dist = new URL(process.env.BENCH_DIST ?? '../dist/', import.meta.url);
const { openStore } = await import(new URL('store/index.js', dist));
const { createLogger } = await import(new URL('logger.js', dist));
const pair = reportPair({ hosts, portsPerHost, seed: 20261126, down: 24 });
if (process.env.BENCH_READ === '1') {
  await benchRead();
  process.exit(0);
}
const dir = mkdtempSync(join(os.tmpdir(), 'netwarden-import-profile-'));
const store = await openStore({ url: join(dir, 'netwarden.db') });
const { app, close } = await openBenchApp(dist, {
  store,
  logger: createLogger('warn'),
  version: 'bench',
  settingsSeed: { updates: { feed_url: 'http://127.0.0.1:9/releases/latest' } },
});
await app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${app.server.address().port}`;
const setup = await fetch(`${base}/api/auth/setup`, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ username: 'bench', password: 'bench-password-not-secret' }),
});
const cookie = setup.headers.getSetCookie()[0].split(';')[0];
const session = new Session();
session.connect();
await session.post('Profiler.enable');
for (const which of ['first', 'second']) {
  if (process.env.PROFILE_DIR) await session.post('Profiler.start');
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const res = await fetch(`${base}/api/scans/import`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/xml', Cookie: cookie },
    body: pair[which],
  });
  const body = await res.json();
  const c = process.cpuUsage(c0);
  if (process.env.PROFILE_DIR) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(join(process.env.PROFILE_DIR, `${which}.cpuprofile`), JSON.stringify(profile));
  }
  console.log(which, res.status, body.status, `wall ${Math.round(performance.now() - t0)} ms, cpu ${Math.round((c.user + c.system) / 1000)} ms`);
}
const changes = await fetch(`${base}/api/changes?limit=1`, { headers: { Cookie: cookie } });
console.log('changes', changes.headers.get('x-total-count'));
await close();
await store.close();
rmSync(dir, { recursive: true, force: true });

/** BENCH_READ=1: CPU time of planImport on the first report, this build and the anchor's, in turn. */
async function benchRead() {
  const runs = Number(process.env.BENCH_RUNS ?? 5);
  const log = (line) => console.log(line);
  const anchorDist = process.env.BENCH_ANCHOR_DIST ? pathToFileURL(resolve(process.env.BENCH_ANCHOR_DIST) + '/') : (anchorBuild(log)?.dist ?? null);
  const builds = [{ name: 'this', dist }, ...(anchorDist ? [{ name: `anchor ${anchorDist.pathname}`, dist: anchorDist }] : [])];
  for (const build of builds) build.planImport = (await import(new URL('core/nmap-import.js', build.dist))).planImport;
  const cpuMs = () => {
    const c = process.cpuUsage();
    return (c.user + c.system) / 1000;
  };
  const xml = pair.first;
  console.log(`report: ${(xml.length / 1024 / 1024).toFixed(1)} MiB, ${hosts} hosts, ${portsPerHost} ports each; ${runs} reads per build, in turn`);
  // One read each first, so neither build is measured cold.
  for (const build of builds) build.planImport(xml);
  for (const build of builds) build.cpu = [];
  for (let r = 0; r < runs; r++) {
    for (const build of builds) {
      const c0 = cpuMs();
      const plan = build.planImport(xml);
      build.cpu.push(cpuMs() - c0);
      if (plan.hosts.length !== hosts) throw new Error(`${build.name}: ${plan.hosts.length} hosts up, not ${hosts}`);
    }
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  for (const build of builds) {
    console.log(`${build.name}: cpu median ${Math.round(median(build.cpu))} ms (${build.cpu.map(Math.round).join(', ')})`);
  }
  if (builds.length === 2) console.log(`anchor ÷ this: ${(median(builds[1].cpu) / median(builds[0].cpu)).toFixed(2)}`);
  if (process.env.PROFILE_DIR) {
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    builds[0].planImport(xml);
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(join(process.env.PROFILE_DIR, 'read.cpuprofile'), JSON.stringify(profile));
  }
}
