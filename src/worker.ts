import type { Logger } from 'pino';
import type { ServerConfig } from './config/environment.js';
import { flushLog } from './logger.js';
import type { ScanManager } from './scan/manager.js';
import { openWorkerServices } from './services.js';
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
  const services = await openWorkerServices({ config, logger, ...options });
  const { scans: manager, queue } = services;
  logger.info({ worker: manager.runnerName, version: VERSION, queue: queue.kind }, 'netwarden worker ready');
  await flushLog(logger);
  return { manager, close: () => services.close() };
}
