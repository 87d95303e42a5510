/**
 * Vitest global set-up: compiles src/ into dist/ once per run (`tsc -p tsconfig.build.json`), so
 * tests that start the real program (`node bin/netwarden.js`, which imports dist/) run the
 * current code. Skipped when every compiled file is already newer than its source.
 */
import { execFile } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export default async function setup(): Promise<void> {
  if (distIsFresh()) return;
  // The compiler `npx tsc` would run, without npx's start-up cost.
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, output: `${stdout}${stderr}` });
    });
  });
  if (code === 0) return;
  // Exit status 2: type errors, but every file was still emitted. `npm run typecheck` reports
  // them; the tests can run on the emitted code.
  if (code === 2) {
    process.stderr.write(`warning: tsc -p tsconfig.build.json reported type errors (dist/ was still written):\n${output}\n`);
    return;
  }
  throw new Error(`building dist/ with tsc -p tsconfig.build.json failed (exit ${code}):\n${output}`);
}

/**
 * True when each src/**\/*.ts has its dist/**\/*.js, written after both the source and the
 * tsconfig files changed. tsc runs with isolatedModules, so a file's output depends on that
 * file alone.
 */
function distIsFresh(): boolean {
  const configTime = Math.max(...['tsconfig.json', 'tsconfig.build.json'].map((f) => statSync(join(root, f)).mtimeMs));
  for (const source of walk(join(root, 'src'))) {
    if (!source.endsWith('.ts') || source.endsWith('.d.ts')) continue;
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
