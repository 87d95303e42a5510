// `npm run bench:all`: every benchmark in turn, each writing its own bench/results/<name>.{json,md},
// then bench/results/all.md listing what ran, how long it took and whether it passed its sanity
// checks. PostgreSQL is included when BENCH_DATABASE_URL or TEST_DATABASE_URL is set. The whole run
// is meant to stay under 15 minutes on a 2-core machine; each bench's own settings (duration,
// device counts) come from its environment variables, documented in bench/README.md.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt, writeResults } from './lib.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const log = (message) => console.log(`[bench:all] ${message}`);

/** Name, script and extra node flags, in the order they run (the cheapest first). */
const BENCHES = [
  { name: 'evaluate', script: 'evaluate-bench.mjs', flags: ['--expose-gc'] },
  { name: 'http', script: 'http-bench.mjs', flags: [] },
  { name: 'ui', script: 'ui-bench.mjs', flags: [] },
  { name: 'scan', script: 'scan-bench.mjs', flags: [] },
  // The namespace lab needs root (ip netns); skipped elsewhere.
  // Its anchors and API scans only: the sequential baseline and the engine's runs on their own take long.
  {
    name: 'scan-lab',
    script: 'scan-lab-bench.mjs',
    flags: [],
    needsRoot: true,
    env: { BENCH_SCAN_VARIANTS: 'plain_nmap,api_nmap,plain_nmap_os,api_nmap_os,api_native' },
  },
  // A lab scan through an agent vs run locally (test/lab/agent-lab.sh); root only.
  { name: 'agent', script: 'agent-bench.mjs', flags: [], needsRoot: true },
  // Recognition of 10,000 devices (CPU), and on the namespace lab (root only) what the probes add to a scan.
  { name: 'recognition', script: 'recognition-bench.mjs', flags: ['--expose-gc'] },
  { name: 'notify', script: 'notify-bench.mjs', flags: [] },
  { name: 'import', script: 'import-bench.mjs', flags: [] },
  { name: 'export', script: 'export-bench.mjs', flags: [] },
  // The map, compare (and port matrix) at 100,000 devices, and the Map page in Chromium.
  { name: 'views', script: 'views-bench.mjs', flags: [] },
  // API instances 1 vs 2 and the job queue with 1 vs 2 workers; PostgreSQL only.
  { name: 'scale', script: 'scale-bench.mjs', flags: [], needsPostgres: true },
];

const only = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : null;
ensureBuilt({ markers: ['server.js'], log });
const env = { ...process.env, BENCH_SKIP_BUILD: '1' };
env.BENCH_DATABASE_URL ??= process.env.TEST_DATABASE_URL;
// Three rounds of each scan bench (their own default is more) keep the whole run near 15 minutes.
env.BENCH_SCAN_REPEAT ??= '3';

const runs = [];
const started = Date.now();
for (const bench of BENCHES) {
  if (only && !only.has(bench.name)) continue;
  if (bench.needsRoot && process.getuid?.() !== 0) {
    log(`${bench.name}: skipped (needs root)`);
    continue;
  }
  if (bench.needsPostgres && !env.BENCH_DATABASE_URL) {
    log(`${bench.name}: skipped (needs PostgreSQL: set BENCH_DATABASE_URL)`);
    continue;
  }
  log(`${bench.name}: node ${[...bench.flags, bench.script].join(' ')}`);
  const t0 = Date.now();
  const result = spawnSync(process.execPath, [...bench.flags, join(root, 'bench', bench.script)], {
    cwd: root,
    env: { ...env, ...bench.env },
    stdio: 'inherit',
  });
  const seconds = Math.round((Date.now() - t0) / 100) / 10;
  runs.push({ name: bench.name, seconds, status: result.status, results: `bench/results/${bench.name}.md` });
  log(`${bench.name}: ${result.status === 0 ? 'done' : `exit status ${result.status}`} after ${seconds} s`);
}
const totalSeconds = Math.round((Date.now() - started) / 1000);

const lines = [
  '# All benchmarks (`npm run bench:all`)',
  '',
  `${new Date().toISOString()} · ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'} · ${Math.round(os.totalmem() / 2 ** 30)} GB · Node ${process.version} · load average at the end ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
  '',
  '| Bench | seconds | outcome | results |',
  '|---|---:|---|---|',
  ...runs.map(
    (r) => `| ${r.name} | ${r.seconds} | ${r.status === 0 ? 'passed its checks' : `failed (exit ${r.status})`} | [${r.results}](${r.name}.md) |`,
  ),
  '',
  `Total: ${totalSeconds} s.`,
  '',
];
writeResults('all', { totalSeconds, runs }, lines.join('\n'));
log(`all done in ${totalSeconds} s`);
process.exit(runs.every((r) => r.status === 0) ? 0 : 1);
