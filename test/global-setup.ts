/**
 * Vitest global set-up: compiles src/ into dist/ once per run (`tsc -p tsconfig.build.json`), so
 * tests that start the real program (`node bin/netwarden.js`, which imports dist/) run the
 * current code, and builds the web UI into dist/web/ for the tests that load it in a browser.
 * Before that it writes src/web/api-types.ts, the UI's types generated from the server's OpenAPI
 * document (scripts/generate-api-types.mjs), which `npm run typecheck` and
 * test/web/api-types.test.ts check the UI against.
 * Each step is skipped when its output is already newer than its sources.
 * It also names the run (NETWARDEN_TEST_RUN, which the test processes inherit): the migrated
 * databases test/helpers/databases.ts hands out carry the name, and are removed when the run ends.
 */
import { execFile } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build as buildWeb } from 'vite';
import { API_TYPES_FILE, CHANNEL_CONFIGS_FILE, generateApiTypes } from '../scripts/generate-api-types.mjs';
import { removeTestRun } from './helpers/test-run.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export default async function setup(): Promise<() => Promise<void>> {
  const run = `${process.pid.toString(36)}${Math.floor(Math.random() * 36 ** 4).toString(36)}`;
  process.env.NETWARDEN_TEST_RUN = run;
  const teardown = () => removeTestRun(run, process.env.TEST_DATABASE_URL);
  await build();
  return teardown;
}

async function build(): Promise<void> {
  if (!apiTypesAreFresh()) await generateApiTypes();
  if (!webIsFresh()) {
    await buildWeb({ configFile: join(root, 'src', 'web', 'vite.config.ts'), logLevel: 'warn' });
  }
  if (distIsFresh()) return;
  // The compiler `npx tsc` would run, without npx's start-up cost.
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const { code, output } = await run([tsc, '-p', 'tsconfig.build.json']);
  if (code === 0) return;
  // Exit status 2: type errors, but every file was still emitted. `npm run typecheck` reports
  // them; the tests can run on the emitted code.
  if (code === 2) {
    process.stderr.write(`warning: tsc -p tsconfig.build.json reported type errors (dist/ was still written):\n${output}\n`);
    return;
  }
  throw new Error(`building dist/ with tsc -p tsconfig.build.json failed (exit ${code}):\n${output}`);
}

function run(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: root, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/**
 * True when src/web/api-types.ts was written after every server source (the route schemas and
 * what they import) and the generator itself last changed, and src/web/channel-configs.ts exists.
 */
function apiTypesAreFresh(): boolean {
  let written: number;
  try {
    written = statSync(API_TYPES_FILE).mtimeMs;
    // Written with it, but only when its text changes: it need only exist.
    statSync(CHANNEL_CONFIGS_FILE);
  } catch {
    return false;
  }
  const generator = ['generate-api-types.mjs', 'openapi-document.ts'].map((f) => join(root, 'scripts', f));
  for (const source of [...generator, ...walk(join(root, 'src'))]) {
    if (source.startsWith(join(root, 'src', 'web'))) continue;
    if (statSync(source).mtimeMs > written) return false;
  }
  return true;
}

/**
 * True when dist/web/index.html was written after every file under src/web/ last changed.
 * api-types.ts holds types only, which the build erases: writing it anew needs no rebuild.
 */
function webIsFresh(): boolean {
  let built: number;
  try {
    built = statSync(join(root, 'dist', 'web', 'index.html')).mtimeMs;
  } catch {
    return false;
  }
  for (const source of walk(join(root, 'src', 'web'))) {
    if (source !== API_TYPES_FILE && statSync(source).mtimeMs > built) return false;
  }
  return true;
}

/**
 * True when each src/**\/*.ts has its dist/**\/*.js, written after both the source and the
 * tsconfig files changed. tsc runs with isolatedModules, so a file's output depends on that
 * file alone.
 */
function distIsFresh(): boolean {
  const configTime = Math.max(...['tsconfig.json', 'tsconfig.build.json'].map((f) => statSync(join(root, f)).mtimeMs));
  for (const source of walk(join(root, 'src'))) {
    if (!source.endsWith('.ts') || source.endsWith('.d.ts') || source.startsWith(join(root, 'src', 'web'))) continue;
    const output = join(root, 'dist', relative(join(root, 'src'), source)).replace(/\.ts$/, '.js');
    let outputTime: number;
    try {
      outputTime = statSync(output).mtimeMs;
    } catch {
      return false;
    }
    if (outputTime < statSync(source).mtimeMs || outputTime < configTime) return false;
  }
  return true;
}

function* walk(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}
