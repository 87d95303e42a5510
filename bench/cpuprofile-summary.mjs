#!/usr/bin/env node
// Summary of a V8 CPU profile (.cpuprofile, as BENCH_CPU_PROF writes): the functions with the most
// self time and the most inclusive time (time in them and what they call), as a share of the
// profile's busy time and, given the number of requests the profile covers, in µs per request.
//
//   node bench/cpuprofile-summary.mjs <file.cpuprofile> [requests] [rows (40)]
import { readFileSync } from 'node:fs';

const [file, requestsArg, rowsArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/cpuprofile-summary.mjs <file.cpuprofile> [requests] [rows]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));
const requests = Number(requestsArg) || 0;
const rows = Number(rowsArg) || 40;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
const sampled = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  sampled.set(profile.samples[i], (sampled.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const name = (n) => {
  const url = n.callFrame.url.replace(/.*node_modules\//, '').replace(/.*\/dist\//, 'dist/');
  return `${n.callFrame.functionName || '(anonymous)'} ${url}${url ? `:${n.callFrame.lineNumber + 1}` : ''}`;
};
const self = new Map();
const inclusive = new Map();
let busy = 0;
let idle = 0;
for (const [id, us] of sampled) {
  const node = byId.get(id);
  if (node.callFrame.functionName === '(idle)') {
    idle += us;
    continue;
  }
  busy += us;
  self.set(name(node), (self.get(name(node)) ?? 0) + us);
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parentOf.get(cur)) {
    const k = name(byId.get(cur));
    if (seen.has(k)) continue;
    seen.add(k);
    inclusive.set(k, (inclusive.get(k) ?? 0) + us);
  }
}
console.log(
  `${file}: busy ${(busy / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s` +
    (requests ? `, ${requests} requests: ${(busy / requests).toFixed(1)} µs busy per request` : ''),
);
const table = (title, map) => {
  console.log(`\n${title}\n${'share'.padStart(6)} ${requests ? 'µs/req'.padStart(7) : ''}  function`);
  for (const [k, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, rows)) {
    console.log(`${((us / busy) * 100).toFixed(1).padStart(5)}% ${requests ? (us / requests).toFixed(2).padStart(7) : ''}  ${k}`);
  }
};
table('Self time', self);
table('Inclusive time', inclusive);
