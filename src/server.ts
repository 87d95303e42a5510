/** `netwarden serve`: the services of services.ts with the HTTP API on them, and a clean stop on a signal. */
import type { Logger } from 'pino';
import { buildApp, type App } from './api/app.js';
import type { ServerConfig } from './config/environment.js';
import { createLogger, flushLog, holdLog, logSafely } from './logger.js';
import { openServerServices, type ServerServices } from './services.js';
import type { Store } from './store/index.js';
import { releaseYoungGeneration } from './young-generation.js';

export interface RunningServer {
  app: App;
  store: Store;
  url: string;
  close(): Promise<void>;
}

/** How `netwarden serve` runs: with a worker (the default), or as an API only (`--no-worker`). */
export interface ServeOptions {
  /** Run queued scans in this process (default true). False needs PostgreSQL: workers elsewhere run them. */
  worker?: boolean;
  /** This process's worker name on the scans it runs (default: host name and pid). */
  workerName?: string;
}

/** Builds the services (services.ts), registers the API on them, and listens. */
export async function startServer(
  config: ServerConfig,
  logger: Logger = createLogger(config.logLevel),
  options: ServeOptions = {},
): Promise<RunningServer> {
  // The start-up's log lines wait for the line that says where to open it (or for a warning).
  const held = holdLog(logger);
  const services = await openServerServices({
    config,
    logger,
    runsScans: options.worker ?? true,
    ...(options.workerName ? { workerName: options.workerName } : {}),
  });
  try {
    const app = await buildApp({ services, logger });
    const url = await app.listen({ port: config.port, host: config.host });
    // Start-up is over: from here the young generation grows with the load, as by default (young-generation.ts).
    releaseYoungGeneration();
    // For the person who started it: where to open it, in plain words, before the JSON log lines.
    held.release(`Netwarden is ready: open ${openableUrl(url, config.host, config.port, app)}`);
    logger.info({ url, version: services.version }, 'netwarden listening');
    await announceSetupCode(services, logger);
    // Whoever started the service waits for this line: do not leave it in the buffer.
    await flushLog(logger);
    let closing: Promise<void> | undefined;
    return {
      app,
      store: services.store,
      url,
      close: () =>
        (closing ??= (async () => {
          // In-flight requests finish while the services still run; then they stop, the store last.
          await app.close();
          await services.close();
        })()),
    };
  } catch (err) {
    held.release();
    await services.close();
    throw err;
  }
}

/**
 * The address a person can open: the listen address, except that a wildcard one (0.0.0.0, ::)
 * is not openable, so `localhost` stands for it (with the port actually bound, for port 0).
 */
export function openableUrl(url: string, host: string, port: number, app: App): string {
  if (host !== '0.0.0.0' && host !== '::' && host !== '') return url;
  const address = app.server.address();
  const bound = address && typeof address !== 'string' ? address.port : port;
  return `http://localhost:${bound}`;
}

/**
 * While no user exists, the one-time set-up code goes to the console (standard error, for whoever
 * started the service) and into the log: set-up from another machine needs it (auth/setup-code.ts).
 */
async function announceSetupCode(services: Pick<ServerServices, 'setupCode' | 'store'>, logger: Logger): Promise<void> {
  const { code } = services.setupCode;
  if (code === null || (await services.store.users.count()) > 0) return;
  logger.warn({ setup_code: code }, `first-run set-up code: ${code} (needed to set up from another machine; not needed on this one)`);
  logSafely(() => process.stderr.write(`\nNetwarden is not set up yet. First-run set-up code: ${code}\n\n`));
}

/** Longest a shutdown may take before the process exits anyway. */
const SHUTDOWN_LIMIT_MS = 10_000;

/**
 * Stops cleanly on SIGTERM/SIGINT: stop accepting, finish in-flight requests, close the database,
 * write out the log. The force-exit timer is armed before anything else runs, and nothing on this
 * path may throw or block on stdout, so the process always leaves within the limit even when its
 * stdout has been closed or stopped being read.
 */
export function handleShutdown(server: Pick<RunningServer, 'close'>, logger: Logger): void {
  const stop = (signal: string) => {
    const force = setTimeout(() => {
      logSafely(() => logger.error('shutdown took over 10 s; exiting'));
      process.exit(1);
    }, SHUTDOWN_LIMIT_MS);
    force.unref();
    logSafely(() => logger.info({ signal }, 'shutting down'));
    server.close().then(
      async () => {
        logSafely(() => logger.info('stopped'));
        await flushLog(logger);
        process.exit(0);
      },
      async (err) => {
        logSafely(() => logger.error({ err }, 'error while shutting down'));
        await flushLog(logger);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
