import pino, { type Logger } from 'pino';
import { buildApp, type App } from './api/app.js';
import { hashPassword, passwordProblem, usernameProblem } from './auth/passwords.js';
import type { ServerConfig } from './config/environment.js';
import { seedSettings } from './config/seed.js';
import { Maintenance } from './jobs/maintenance.js';
import { Scheduler } from './jobs/scheduler.js';
import { openStore, type Store } from './store/index.js';
import { VERSION } from './version.js';

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'netwarden' },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Defence in depth: nothing logs these today, and nothing should start to.
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie', 'res.headers["set-cookie"]', '*.password', '*.key'],
      censor: '[redacted]',
    },
  });
}

/** Seeds the stored configuration on first start and creates the bootstrap admin when asked. */
export async function initialise(store: Store, config: Pick<ServerConfig, 'settingsSeed' | 'admin'>, log: Logger): Promise<void> {
  if (await seedSettings(store, config.settingsSeed)) log.info('stored the initial configuration');
  if (config.admin && (await store.users.count()) === 0) {
    const { username, password } = config.admin;
    const problem = usernameProblem(username) ?? passwordProblem(password, username);
    if (problem) throw new Error(`NETWARDEN_ADMIN_USERNAME/PASSWORD: ${problem}`);
    const user = await store.users.createFirst(username, await hashPassword(password));
    if (user) {
      await store.audit.write({
        action: 'setup_completed',
        actor: username,
        actorType: 'system',
        resourceType: 'user',
        resourceId: user.id,
        details: { method: 'environment' },
        success: true,
      });
      log.info({ username }, 'created the administrator from the environment');
    }
  }
}

export interface RunningServer {
  app: App;
  store: Store;
  url: string;
  close(): Promise<void>;
}

/** Opens the store, applies migrations, seeds, and listens. */
export async function startServer(config: ServerConfig, logger: Logger = createLogger(config.logLevel)): Promise<RunningServer> {
  const store = await openStore({ url: config.databaseUrl, warn: (context, message) => logger.warn(context, message) });
  logger.info({ database: store.handle.description }, 'database ready');
  try {
    await initialise(store, config, logger);
    const app = await buildApp({ store, version: VERSION, logger, dataDir: config.dataDir, scanAllow: config.scanAllow });
    const { scans, loginThrottle } = app.services;
    // Scans left by a process that died (this one's predecessor, or another instance whose lease ran out).
    const interrupted = await scans.recoverAbandoned();
    if (interrupted.length) logger.warn({ scans: interrupted }, 'marked scans interrupted by a stopped server as failed');
    scans.startRecovery();
    const maintenance = new Maintenance({ store, log: logger, throttle: loginThrottle, ownerId: scans.owner.id });
    maintenance.start();
    app.addHook('onClose', async () => maintenance.stop());
    // After recovery, so a scan left by a dead instance is ended before a slot queues behind it.
    const scheduler = new Scheduler({ store, scans, log: logger });
    scheduler.start();
    // preClose runs before every onClose hook: no slot fires while the scan manager shuts down.
    app.addHook('preClose', async () => scheduler.stop());
    const url = await app.listen({ port: config.port, host: config.host });
    logger.info({ url, version: VERSION }, 'netwarden listening');
    let closing: Promise<void> | undefined;
    return {
      app,
      store,
      url,
      close: () =>
        (closing ??= (async () => {
          await app.close();
          await store.close();
        })()),
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}

/** Stops cleanly on SIGTERM/SIGINT: stop accepting, finish in-flight requests, close the database. */
export function handleShutdown(server: RunningServer, logger: Logger): void {
  const stop = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('shutdown took over 10 s; exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    server.close().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (err) => {
        logger.error({ err }, 'error while shutting down');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
