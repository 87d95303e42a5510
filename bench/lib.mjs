// Pieces the benchmarks share: whether dist/ is older than src/ (and rebuilding it), sanity-check
// bookkeeping, and writing bench/results/<name>.json and .md. Each bench keeps its own measuring code.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const resultsDir = join(root, 'bench', 'results');

/** The newest modification time (ms) of the files under `dir` (recursively) whose names pass `filter`. */
export function newestMtime(dir, filter) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path, filter));
    else if (filter(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** Whether a .ts file under src/ changed after `file` (a compiled file in dist/) was written. */
export function srcNewerThan(file) {
  return newestMtime(join(root, 'src'), (n) => n.endsWith('.ts')) > statSync(file).mtimeMs;
}

/**
 * Compiles src/ to dist/ (tsc -p tsconfig.build.json) when `markers` (paths under dist/) are missing
 * or the first is older than src/; BENCH_SKIP_BUILD=1 uses an existing but stale dist/ with a warning.
 * `keepOnBuildError`: tsc exits 2 on type errors but still emits, so carry on when the markers exist;
 * otherwise a failed build ends the process.
 */
export function ensureBuilt({ markers, log, keepOnBuildError = false }) {
  const marker = join(root, 'dist', markers[0]);
  const missing = markers.some((m) => !existsSync(join(root, 'dist', m)));
  const stale = !missing && srcNewerThan(marker);
  if (!missing && (!stale || process.env.BENCH_SKIP_BUILD === '1')) {
    if (stale) log('warning: dist/ is older than src/ (BENCH_SKIP_BUILD=1: using it anyway)');
    return;
  }
  log(missing ? 'dist/ is missing: building (npm run build)' : 'dist/ is older than src/: rebuilding (npm run build)');
  try {
    execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
      cwd: root,
      stdio: 'inherit',
    });
  } catch {
    if (keepOnBuildError) {
      if (existsSync(marker)) return;
      console.error('\nThe build failed. Fix the errors above and run `npm run build`.');
    } else {
      console.error('\nThe build failed. Fix the errors above and run `npm run build` (or set BENCH_SKIP_BUILD=1 to use dist/ as it is).');
    }
    process.exit(1);
  }
}

/** Sanity checks: `check(what, ok, detail)` records and logs a failure; `failures` lists them. */
export function sanityChecks(log) {
  const failures = [];
  const check = (what, ok, detail = '') => {
    if (!ok) {
      failures.push(`${what}${detail ? ` (${detail})` : ''}`);
      log(`FAILED: ${what}${detail ? ` (${detail})` : ''}`);
    }
  };
  return { failures, check };
}

/** Writes bench/results/<name>.json (the result) and <name>.md (`markdown`); returns the markdown. */
export function writeResults(name, result, markdown) {
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, `${name}.json`), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(resultsDir, `${name}.md`), markdown);
  return markdown;
}

/**
 * BENCH_ANCHOR=<commit>: an older build to measure in the same run as this one, so that whatever
 * else the machine runs weighs on both alike. A detached git worktree of that commit in the
 * temporary directory (kept between runs, keyed by the full commit id), its node_modules linked to
 * this checkout's, compiled with tsc once. Returns null without BENCH_ANCHOR, else
 * { commit, short, root, dist } (dist: a file URL ending in /).
 */
export function anchorBuild(log) {
  const wanted = process.env.BENCH_ANCHOR;
  if (!wanted) return null;
  const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  const commit = git('rev-parse', '--verify', `${wanted}^{commit}`);
  const short = commit.slice(0, 10);
  const dir = join(os.tmpdir(), `netwarden-anchor-${commit}`);
  if (!existsSync(join(dir, 'package.json'))) {
    log(`anchor ${short}: git worktree in ${dir}`);
    git('worktree', 'add', '--detach', dir, commit);
  }
  if (!existsSync(join(dir, 'node_modules'))) symlinkSync(realpathSync(join(root, 'node_modules')), join(dir, 'node_modules'));
  if (!existsSync(join(dir, 'dist', 'api', 'app.js'))) {
    log(`anchor ${short}: building (tsc -p tsconfig.build.json)`);
    try {
      execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
        cwd: dir,
        stdio: 'inherit',
      });
    } catch {
      if (!existsSync(join(dir, 'dist', 'api', 'app.js'))) throw new Error(`BENCH_ANCHOR: the build of ${short} failed`);
    }
  }
  return { commit, short, root: dir, dist: pathToFileURL(join(dir, 'dist') + '/') };
}

/** The build under test: this checkout's dist/. */
export const ownBuild = { commit: null, short: 'this', root, dist: pathToFileURL(join(root, 'dist') + '/') };

/**
 * CPU time (ms, by process id) of the PostgreSQL server processes serving this process's TCP
 * connections, read from /proc: the server's backends on this machine whose client port is one of
 * this process's sockets. Empty where that cannot be read (another machine, a Unix socket, no
 * /proc). Clock ticks of 10 ms; a backend that ends between two readings takes its time with it.
 */
export function postgresBackendCpu() {
  const out = new Map();
  try {
    const inodes = new Set();
    for (const fd of readdirSync('/proc/self/fd')) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
        if (m) inodes.add(m[1]);
      } catch {
        // closed meanwhile
      }
    }
    const ports = new Set();
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      if (!existsSync(table)) continue;
      for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
        const f = line.trim().split(/\s+/);
        if (f.length > 9 && inodes.has(f[9])) ports.add(parseInt(f[1].split(':').at(-1), 16));
      }
    }
    const tick = 1000 / 100;
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        const m = /^postgres: .*\((\d+)\)/.exec(cmd);
        if (!m || !ports.has(Number(m[1]))) continue;
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        out.set(pid, (Number(fields[11]) + Number(fields[12])) * tick);
      } catch {
        // ended meanwhile, or not ours to read
      }
    }
  } catch {
    // no /proc
  }
  return out;
}

/** The CPU time (ms) PostgreSQL's backends of this process spent between two readings of postgresBackendCpu, or null without them. */
export function postgresCpuBetween(before, after) {
  if (after.size === 0) return null;
  let ms = 0;
  for (const [pid, t] of after) ms += t - (before.get(pid) ?? 0);
  return ms;
}
