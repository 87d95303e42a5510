/**
 * The layering of docs/architecture.md, enforced: each folder of src/ imports only from the layers
 * it may, and no module imports itself back through a cycle.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', 'src');

/** Which layers each layer may import from (besides itself). */
const ALLOWED: Record<string, string[]> = {
  util: [],
  core: ['util'],
  schemas: ['core', 'util'],
  store: ['core', 'schemas', 'util'],
  config: ['core', 'store', 'util'],
  auth: ['core', 'store', 'util'],
  cve: ['core', 'util'],
  updates: ['core', 'util'],
  events: ['core', 'schemas', 'store', 'util'],
  queue: ['core', 'store', 'util'],
  names: ['core', 'schemas', 'store', 'util'],
  probes: ['core', 'util'],
  engines: ['core', 'util'],
  scan: ['core', 'cve', 'engines', 'events', 'names', 'probes', 'queue', 'schemas', 'store', 'util'],
  notify: ['core', 'events', 'schemas', 'store', 'util'],
  agent: ['core', 'engines', 'scan', 'schemas', 'util'],
  jobs: ['auth', 'core', 'events', 'notify', 'queue', 'scan', 'schemas', 'store', 'util'],
  api: ['auth', 'config', 'core', 'cve', 'events', 'jobs', 'names', 'notify', 'queue', 'scan', 'schemas', 'store', 'updates', 'util'],
  /** src/services.ts, the composition root: builds the parts of every layer below it, once. */
  services: [
    'api',
    'auth',
    'config',
    'core',
    'cve',
    'engines',
    'events',
    'jobs',
    'names',
    'notify',
    'queue',
    'scan',
    'schemas',
    'store',
    'updates',
    'util',
    'version',
  ],
  cli: [
    'agent',
    'api',
    'auth',
    'config',
    'core',
    'cve',
    'engines',
    'events',
    'jobs',
    'names',
    'notify',
    'queue',
    'scan',
    'schemas',
    'store',
    'services',
    'updates',
    'util',
    'version',
    '(root)',
  ],
  /** server.ts, worker.ts (the processes over the services) and logger.ts. */
  '(root)': [
    'api',
    'auth',
    'config',
    'core',
    'cve',
    'events',
    'jobs',
    'names',
    'notify',
    'queue',
    'scan',
    'schemas',
    'services',
    'store',
    'updates',
    'util',
    'version',
  ],
  /** src/version.ts: the package's version, which imports nothing of ours. */
  version: [],
};

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'web') yield* sources(path);
    } else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      yield path;
    }
  }
}

/** Files at the top of src/ with a layer of their own; the others there are '(root)'. */
const ROOT_LAYERS: Record<string, string> = { 'services.ts': 'services', 'version.ts': 'version' };

function layerOf(file: string): string {
  const parts = relative(SRC, file).split('/');
  return parts.length === 1 ? (ROOT_LAYERS[parts[0]] ?? '(root)') : parts[0];
}

/** Relative imports (static, dynamic and type-only) of a file, resolved to source paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)) {
    out.push(resolve(dirname(file), m[1]).replace(/\.js$/, '.ts'));
  }
  return out;
}

const files = [...sources(SRC)];

/** The web UI's own files (bundled for the browser by Vite). */
function* webSources(): Generator<string> {
  const walk = function* (dir: string): Generator<string> {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) yield* walk(path);
      else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) yield path;
    }
  };
  yield* walk(join(SRC, 'web'));
}

/** Imports of packages (anything not relative) of a file, type-only ones included. */
function packageImportsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*'([^.'][^']*)'/g)].map((m) => m[1]);
}
const graph = new Map(files.map((f) => [f, importsOf(f)]));

describe('architecture', () => {
  it('imports only go down the layers of docs/architecture.md', () => {
    const violations: string[] = [];
    for (const [file, imports] of graph) {
      const from = layerOf(file);
      expect(ALLOWED[from], `${relative(SRC, file)} is in a folder docs/architecture.md does not list`).toBeDefined();
      for (const target of imports) {
        const to = layerOf(target);
        if (to !== from && !ALLOWED[from].includes(to)) violations.push(`${relative(SRC, file)} → ${relative(SRC, target)}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('reads and writes tables only in store/, so every write goes through one path', () => {
    const query = /\b(selectFrom|insertInto|updateTable|deleteFrom|replaceInto)\s*\(|\bsql\s*`|\.transaction\s*\(\s*\)/;
    const outside = files.filter((f) => layerOf(f) !== 'store' && query.test(readFileSync(f, 'utf8'))).map((f) => relative(SRC, f));
    expect(outside).toEqual([]);
  });

  it('the web UI imports from the server only modules of core/ that import nothing', () => {
    // The browser bundle may share the server's pure facts (limits, severities, profiles), never
    // code that needs Node or a package the bundle would drag in.
    const violations: string[] = [];
    for (const file of webSources()) {
      for (const target of importsOf(file)) {
        if (target.startsWith(join(SRC, 'web'))) continue;
        const name = relative(SRC, target);
        if (layerOf(target) !== 'core') violations.push(`${relative(SRC, file)} → ${name}`);
        else if (importsOf(target).length + packageImportsOf(target).length > 0)
          violations.push(`${relative(SRC, file)} → ${name}, which imports others`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('reads the environment only in config/, which passes the values on', () => {
    // One description of every variable (config/environment.ts), and no setting a module looks up
    // for itself: what a part needs from the environment reaches it as an argument.
    const reads = /\bprocess\s*\.\s*env\b|\bprocess\s*\[\s*['"]env['"]\s*\]|\bimport\s*\{[^}]*\benv\b[^}]*\}\s*from\s*'(node:)?process'/;
    const outside = files.filter((f) => layerOf(f) !== 'config' && reads.test(readFileSync(f, 'utf8'))).map((f) => relative(SRC, f));
    expect(outside).toEqual([]);
  });

  it('has no import cycles', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'visiting') {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(SRC, f)).join(' → '));
        return;
      }
      state.set(file, 'visiting');
      for (const next of graph.get(file) ?? []) if (graph.has(next)) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });
});
