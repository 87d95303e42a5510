#!/usr/bin/env node
// The npm registry this project is built against serves only the Linux builds of
// platform-specific optional packages (rollup's, via vitest), so `npm install` leaves the other
// platforms' entries out of package-lock.json and `npm ci` then refuses the lock as out of sync.
// This adds those entries back (version, os and cpu only; npm never fetches them on Linux).
// Run it after any `npm install` that changes the lock: node scripts/fix-lockfile.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
let added = 0;
for (const [path, pkg] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(pkg.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (lock.packages[key]) continue;
    // Platform packages are named <package>-<os>-<cpu>[-<abi>], e.g. @rollup/rollup-darwin-arm64.
    const m = /-(android|darwin|freebsd|linux|openbsd|openharmony|win32|sunos|aix|netbsd)-([a-z0-9]+)(?:-|$)/.exec(name);
    if (!m) {
      console.warn(`skipping ${name} (optional dependency of ${path || 'the project'}): not a platform package`);
      continue;
    }
    lock.packages[key] = { version, dev: pkg.dev, license: pkg.license, optional: true, os: [m[1]], cpu: [m[2]] };
    added++;
  }
}
const sorted = Object.keys(lock.packages).sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1));
lock.packages = Object.fromEntries(sorted.map((k) => [k, lock.packages[k]]));
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} platform entries to package-lock.json`);
