import type { Logger } from 'pino';
import type { ServerConfig } from './config/environment.js';
import { EventBus } from './events/bus.js';
import { startEventRelay } from './events/relay.js';
import { Notifier } from './notify/notifier.js';
import { OutboundGuard } from './util/outbound.js';
import { scanJobQueue } from './queue/index.js';
import { ScanManager } from './scan/manager.js';
import { WORKER_NEEDS_POSTGRES, flushLog } from './server.js';
import { openStore } from './store/index.js';
import { VERSION } from './version.js';

export interface WorkerOptions {
  /** Shown on the scans it runs (`worker <name>`); default: host name and pid. */
  name?: string;
  /** Most scans it runs at once (default: as many as scanning.max_parallel_scans lets run). */
  concurrency?: number;
}

export interface RunningWorker {
  manager: ScanManager;
  close(): Promise<void>;
}

/**
 * `netwarden worker` (CONTRACT §12): takes scan jobs from the PostgreSQL queue and runs them, with
 * no HTTP API. It also ends scans whose owner died (as every instance does) and sends the
 * notifications of the scans it runs. The database must be migrated by a `netwarden serve` (it is
 * migrated here too, so either may start first).
 */
export async function startWorker(config: ServerConfig, logger: Logger, options: WorkerOptions = {}): Promise<RunningWorker> {
  const store = await openStore({ url: config.databaseUrl, warn: (context, message) => logger.warn(context, message) });
  try {
    if (!store.handle.postgres) throw new Error(WORKER_NEEDS_POSTGRES('netwarden worker'));
    store.shareWrites();
    const queue = await scanJobQueue(store, logger);
    await queue.start();
    const events = new EventBus();
    // NETWARDEN_OUTBOUND_ALLOW as `serve` reads it: name sources and deliveries from here obey it too.
    const outboundGuard = new OutboundGuard(config.outboundAllow ?? []);
    const manager = new ScanManager({
      store,
      log: logger,
      dataDir: config.dataDir,
      scanAllow: config.scanAllow,
      outboundGuard,
      queue,
      events,
      role: 'worker',
      ...(options.name ? { workerName: options.name } : {}),
      ...(options.concurrency ? { concurrency: options.concurrency } : {}),
    });
    // The notifications of the scans it runs are sent here; their live events reach the API instances through the relay.
    const notifier = new Notifier({ store, events, log: logger, version: VERSION, ownerId: manager.owner.id, guard: outboundGuard });
    notifier.start();
    const relay = await startEventRelay({ store, bus: events, log: logger });
    const interrupted = await manager.recoverAbandoned();
    if (interrupted.length) logger.warn({ scans: interrupted }, 'marked scans whose owner stopped as failed');
    manager.startRecovery();
    logger.info({ worker: manager.runnerName, version: VERSION, queue: queue.kind }, 'netwarden worker ready');
    await flushLog(logger);
    let closing: Promise<void> | undefined;
    return {
      manager,
      close: () =>
        (closing ??= (async () => {
          await manager.shutdown();
          await notifier.stop();
          await relay.stop();
          await store.close();
        })()),
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}
