// Server side of the export benchmark (bench/export-bench.mjs): the real Netwarden app, started
// fresh over a database the parent has already seeded, so its memory is the server's own (not the
// seeding's). Started with --expose-gc.
//
// Configuration arrives as JSON in BENCH_CHILD_CONFIG: { url, pgSchema? }
// child → parent  { type: 'ready', port, memory } | { type: 'error', message } | { type: 'sampled', ... }
// parent → child  { type: 'sample-start' } | { type: 'sample-stop' } | { type: 'materialize', format } | { type: 'stop' }
import { readFileSync } from 'node:fs';
import { openBenchApp } from './app.mjs';

process.env.NETWARDEN_SCAN_ALLOW ??= '127.0.0.0/8,10.66.0.0/24';

const config = JSON.parse(process.env.BENCH_CHILD_CONFIG ?? '{}');
const MB = 1024 * 1024;
const round = (n, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
const send = (message) => process.send?.(message);

function memory() {
  const m = process.memoryUsage();
  return { rssMB: round(m.rss / MB), heapUsedMB: round(m.heapUsed / MB), externalMB: round((m.external + m.arrayBuffers) / MB) };
}

/** Peak RSS so far as the kernel counts it (Linux), for a cross-check of the sampled peak. */
function vmHwmMB() {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** Samples RSS and heap every 10 ms between start and stop; reports the baseline (after a GC) and the peaks. */
class Sampler {
  start() {
    globalThis.gc?.();
    this.baseline = memory();
    this.peak = { ...this.baseline };
    this.timer = setInterval(() => this.sample(), 10);
  }
  sample() {
    const now = memory();
    for (const k of Object.keys(now)) this.peak[k] = Math.max(this.peak[k], now[k]);
  }
  stop() {
    this.sample();
    clearInterval(this.timer);
    const vmHwm = vmHwmMB();
    // What is left once the garbage is collected: memory the export kept (none, when it frees every page).
    globalThis.gc?.();
    return { baseline: this.baseline, peak: this.peak, afterGc: memory(), vmHwmMB: vmHwm };
  }
}

async function main() {
  const dist = new URL('../dist/', import.meta.url);
  const { openStore } = await import(new URL('store/index.js', dist));
  const { createLogger } = await import(new URL('logger.js', dist));
  const { VERSION } = await import(new URL('version.js', dist));
  const { exportChunks } = await import(new URL('api/export-stream.js', dist));

  const store = await openStore({ url: config.url, ...(config.pgSchema ? { pgSchema: config.pgSchema } : {}) });
  const { app, close } = await openBenchApp(dist, { store, logger: createLogger('warn'), version: VERSION });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const sampler = new Sampler();

  process.on('message', async (message) => {
    try {
      if (message?.type === 'sample-start') {
        sampler.start();
        send({ type: 'sampling' });
      } else if (message?.type === 'sample-stop') {
        send({ type: 'sampled', ...sampler.stop() });
      } else if (message?.type === 'materialize') {
        // What holding the whole export in memory would cost: every row read, then the text built at once.
        sampler.start();
        const rows = [];
        for await (const chunk of exportChunks(store, { kind: 'devices', filters: {} }, 'json')) rows.push(chunk);
        const text = rows.join('');
        const whole = JSON.parse(text);
        const again = JSON.stringify(whole);
        send({ type: 'sampled', ...sampler.stop(), rows: whole.length, bytes: again.length });
      } else if (message?.type === 'stop') {
        await close();
        await store.close();
        send({ type: 'stopped' });
        process.disconnect?.();
        setTimeout(() => process.exit(0), 100).unref();
      }
    } catch (err) {
      send({ type: 'error', message: err?.stack ?? String(err) });
    }
  });
  process.on('disconnect', () => setTimeout(() => process.exit(0), 1000).unref());
  globalThis.gc?.();
  send({ type: 'ready', port: app.server.address().port, memory: memory() });
}

main().catch((err) => {
  send({ type: 'error', message: err?.stack ?? String(err) });
  setTimeout(() => process.exit(1), 100).unref();
});
