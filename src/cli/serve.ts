import type { Command } from 'commander';
import { ConfigError, loadServerConfig, readEnvironment } from '../config/environment.js';
import { markUsing } from './common.js';

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('Start the HTTP service (configured by NETWARDEN_* variables and the config file)')
    .option('-p, --port <port>', 'port to listen on (overrides NETWARDEN_PORT)')
    .option('-H, --host <host>', 'address to listen on (overrides NETWARDEN_HOST)')
    .option('--no-worker', 'serve the API only; `netwarden worker` processes run the scans (PostgreSQL only)')
    .option('--worker-name <name>', 'name of this process on the scans it runs (default: host:pid)')
    .action(async (options: { port?: string; host?: string; worker: boolean; workerName?: string }) => {
      let config;
      try {
        config = loadServerConfig({
          ...readEnvironment(),
          ...(options.port ? { NETWARDEN_PORT: options.port } : {}),
          ...(options.host ? { NETWARDEN_HOST: options.host } : {}),
        });
      } catch (err) {
        if (err instanceof ConfigError) {
          console.error(`netwarden: ${err.message}`);
          process.exit(2);
        }
        throw err;
      }
      // Loaded here, not at the top: the other commands start faster without the HTTP stack.
      const { createLogger } = await import('../logger.js');
      const { handleShutdown, startServer } = await import('../server.js');
      const logger = createLogger(config.logLevel);
      // Before the database is opened: `netwarden restore` refuses while this marker is live.
      if (!markUsing(config, 'serve'))
        logger.warn({ dataDir: config.dataDir }, 'cannot write to <data dir>/run: netwarden restore will not know that the service runs');
      try {
        const server = await startServer(config, logger, {
          worker: options.worker,
          ...(options.workerName ? { workerName: options.workerName } : {}),
        });
        handleShutdown(server, logger);
      } catch (err) {
        logger.fatal({ err }, 'could not start');
        process.exit(1);
      }
    });
}
