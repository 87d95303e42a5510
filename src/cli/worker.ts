import type { Command } from 'commander';
import { ConfigError, loadServerConfig } from '../config/environment.js';
import { MAX_PARALLEL_SCANS } from '../core/limits.js';
import { EXIT_USAGE } from './common.js';

export function registerWorkerCommand(program: Command): void {
  program
    .command('worker')
    .description('Run queued scans from the PostgreSQL job queue, with no HTTP API (configured like serve)')
    .option('--name <name>', 'name shown on the scans this worker runs (default: host:pid)')
    .option(
      '--concurrency <n>',
      `most scans run at once (${MAX_PARALLEL_SCANS.min}-${MAX_PARALLEL_SCANS.max}; default: as scanning.max_parallel_scans allows)`,
    )
    .action(async (options: { name?: string; concurrency?: string }) => {
      let concurrency: number | undefined;
      if (options.concurrency !== undefined) {
        concurrency = Number(options.concurrency);
        if (!Number.isInteger(concurrency) || concurrency < MAX_PARALLEL_SCANS.min || concurrency > MAX_PARALLEL_SCANS.max) {
          console.error(`netwarden: --concurrency: must be a whole number from ${MAX_PARALLEL_SCANS.min} to ${MAX_PARALLEL_SCANS.max}`);
          process.exit(EXIT_USAGE);
        }
      }
      let config;
      try {
        config = loadServerConfig();
      } catch (err) {
        if (err instanceof ConfigError) {
          console.error(`netwarden: ${err.message}`);
          process.exit(EXIT_USAGE);
        }
        throw err;
      }
      const { createLogger } = await import('../logger.js');
      const { handleShutdown } = await import('../server.js');
      const { startWorker } = await import('../worker.js');
      const logger = createLogger(config.logLevel);
      try {
        const worker = await startWorker(config, logger, {
          ...(options.name ? { name: options.name } : {}),
          ...(concurrency ? { concurrency } : {}),
        });
        handleShutdown(worker, logger);
      } catch (err) {
        logger.fatal({ err }, 'could not start');
        process.exit(1);
      }
    });
}
