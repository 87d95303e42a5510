// A scan worker for bench/scale-bench.mjs's queue part: the real ScanManager and the real job
// queue (pg-boss on the PostgreSQL schema given), with a synthetic engine behind the ScanEngine
// interface that "finds" the target address in BENCH_ENGINE_MS milliseconds, so what is measured is
// the queue and the scan bookkeeping, not nmap. Configuration in BENCH_CHILD_CONFIG:
//   { url, pgSchema, name, engineMs }
// Tells the parent { type: 'ready' } over IPC, takes jobs after { type: 'go' }, stops on { type: 'stop' }.
process.env.NETWARDEN_SCAN_ALLOW ??= '127.0.0.0/8,10.66.0.0/24';
const config = JSON.parse(process.env.BENCH_CHILD_CONFIG ?? '{}');
const dist = new URL('../dist/', import.meta.url);
const { openStore } = await import(new URL('store/index.js', dist));
const { scanJobQueue } = await import(new URL('queue/index.js', dist));
const { ScanManager } = await import(new URL('scan/manager.js', dist));
const { createLogger } = await import(new URL('logger.js', dist));

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** Answers every discovery with the first address of its target, after engineMs. */
const engine = {
  name: 'synthetic',
  concurrent: false,
  async discover(request) {
    await sleep(config.engineMs);
    return [{ ip: request.cidr.split('/')[0], mac: null, vendor: null, hostname: null }];
  },
  async scanPorts(request) {
    return request.hosts.map((ip) => ({ ip, mac: null, vendor: null, hostname: null, os_name: null, device_type: null, ports: [] }));
  },
};
const engines = { select: async () => engine, info: async () => ({ engine: 'synthetic' }) };

const log = createLogger(process.env.BENCH_WORKER_LOG ?? 'warn');
const store = await openStore({ url: config.url, pgSchema: config.pgSchema, poolSize: 4 });
const queue = await scanJobQueue(store, log);
await queue.start();
// One scan at a time per worker: two workers are two scanners.
const manager = new ScanManager({ store, log, engines, queue, role: 'worker', workerName: config.name, concurrency: 1, scanAllow: ['127.0.0.0/8'] });
process.send?.({ type: 'ready' });
process.on('message', async (message) => {
  // Every worker is started first; they take jobs from the moment the parent says go.
  if (message?.type === 'go') manager.startRecovery();
  if (message?.type !== 'stop') return;
  await manager.shutdown();
  await store.close();
  process.exit(0);
});
