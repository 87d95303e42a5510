#!/usr/bin/env node
// Restore benchmark (issue 19 §2): how long `restoreBackup` (the code behind `netwarden restore`)
// takes for a backup whose size is one huge row, at several sizes of that row, on SQLite and (with
// a URL) PostgreSQL. A restore must run in time linear in the file: doubling the row must about
// double the time, and a 20 MB row must restore in seconds.
//
//   node bench/restore-bench.mjs
//
// For each size (BENCH_ROW_MB, default 2.5,5,10,20): a fresh database with the first
// administrator and one audit entry whose details hold a text of that many megabytes (an audit
// entry is JSON, as it would be after a huge import error), backed up with `openBackup` into a file;
// then `restoreBackup` of that file into a second fresh database is timed (BENCH_RUNS rounds,
// median, min, max), and the restored row is compared with the original.
//
// Environment (all optional): BENCH_ROW_MB, BENCH_RUNS (3), BENCH_SKIP_BUILD=1, BENCH_DATABASE_URL
// (else TEST_DATABASE_URL; neither: SQLite only). Results: bench/results/restore.json and restore.md.
// Exit status 1 when a sanity check fails.
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ensureBuilt, sanityChecks, writeResults } from './lib.mjs';

process.env.NETWARDEN_SCAN_ALLOW ??= '127.0.0.0/8,10.66.0.0/24';

const log = (...args) => console.error('[bench:restore]', ...args);
const sizes = (process.env.BENCH_ROW_MB ?? '2.5,5,10,20').split(',').map(Number);
const runs = Number(process.env.BENCH_RUNS ?? 3);
const pgUrl = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || '';
const { failures, check } = sanityChecks(log);

ensureBuilt({ markers: ['store/restore.js', 'store/backup.js'], log });
const { openStore } = await import('../dist/store/index.js');
const { ensurePgSchema, dropPgSchema } = await import('../dist/store/db.js');
const { openBackup } = await import('../dist/store/backup.js');
const { restoreBackup } = await import('../dist/store/restore.js');

const dir = mkdtempSync(join(os.tmpdir(), 'netwarden-restore-bench-'));
const cleanups = [];
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

let counter = 0;
/** A fresh, migrated database of the kind `kind`. */
async function freshStore(kind) {
  counter++;
  if (kind === 'sqlite') return openStore({ url: join(dir, `db-${counter}.db`) });
  const schema = `nw_restore_bench_${process.pid}_${counter}`;
  await ensurePgSchema(pgUrl, schema);
  cleanups.push(() => dropPgSchema(pgUrl, schema));
  return openStore({ url: pgUrl, pgSchema: schema, poolSize: 2 });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const stores = ['sqlite', ...(pgUrl ? ['postgres'] : [])];
const results = {};

for (const kind of stores) {
  results[kind] = [];
  for (const mb of sizes) {
    const text = 'x'.repeat(Math.round(mb * 1024 * 1024));
    const source = await freshStore(kind);
    await source.audit.write({ action: 'backup_created', actor: 'bench', actorType: 'system', success: true, details: { blob: text } });
    const file = join(dir, `backup-${kind}-${mb}.jsonl.gz`);
    const backup = await openBackup(source.handle, { version: 'bench' });
    await pipeline(backup.stream, createWriteStream(file));
    await backup.finished;
    await source.close();

    const times = [];
    for (let run = 0; run < runs; run++) {
      const target = await freshStore(kind);
      const started = process.hrtime.bigint();
      await restoreBackup(target.handle, createReadStream(file), { audit: { actor: 'bench', actorType: 'system' } });
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
      const { rows } = await target.audit.list({ action: 'backup_created', limit: 10, offset: 0 });
      const restored = rows.find((r) => r.actor === 'bench');
      check(`${kind} ${mb} MB: the row is restored whole`, restored?.details?.blob === text);
      await target.close();
    }
    const entry = { row_mb: mb, file_bytes: statSync(file).size, ms: { median: median(times), min: Math.min(...times), max: Math.max(...times) } };
    results[kind].push(entry);
    log(`${kind}: ${mb} MB row: restore median ${entry.ms.median.toFixed(0)} ms (min ${entry.ms.min.toFixed(0)}, max ${entry.ms.max.toFixed(0)})`);
  }
}
for (const cleanup of cleanups) await cleanup().catch(() => {});

const machine = {
  cpus: os.cpus().length,
  cpu: os.cpus()[0]?.model,
  memory_gb: Math.round(os.totalmem() / 1e9),
  node: process.version,
  date: new Date().toISOString(),
};
const lines = [
  '# Restore of a backup with one huge row',
  '',
  `${machine.date}, ${machine.cpus} × ${machine.cpu}, Node ${machine.node}. Median of ${runs} restores (min–max), \`restoreBackup\` of a file holding one audit entry with a text of the given size.`,
  '',
  '| store | row | file (gzip) | restore |',
  '|---|---|---|---|',
  ...stores.flatMap((kind) =>
    results[kind].map(
      (r) =>
        `| ${kind} | ${r.row_mb} MB | ${(r.file_bytes / 1024).toFixed(0)} KiB | ${(r.ms.median / 1000).toFixed(2)} s (${(r.ms.min / 1000).toFixed(2)}–${(r.ms.max / 1000).toFixed(2)}) |`,
    ),
  ),
  '',
  ...(failures.length ? ['Sanity checks FAILED:', ...failures.map((f) => `- ${f}`)] : ['Sanity checks passed.']),
  '',
];
console.log(writeResults('restore', { machine, settings: { sizes, runs }, results, failures }, lines.join('\n')));
process.exit(failures.length ? 1 : 0);
