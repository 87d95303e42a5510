import { fstatSync } from 'node:fs';
import { Socket } from 'node:net';
import pino, { type Logger } from 'pino';
import { buildApp, type App } from './api/app.js';
import { hashPassword, passwordProblem, usernameProblem } from './auth/passwords.js';
import type { ServerConfig } from './config/environment.js';
import { seedSettings } from './config/seed.js';
import { Maintenance } from './jobs/maintenance.js';
import { Scheduler } from './jobs/scheduler.js';
import { scanJobQueue } from './queue/index.js';
import { ScanManager } from './scan/manager.js';
import { startEventRelay, type EventRelay } from './events/relay.js';
import { openStore, type Store } from './store/index.js';
import { VERSION } from './version.js';
import { OutboundGuard } from './util/outbound.js';

/** Log lines are written in chunks of at least this many bytes (one write call per chunk)... */
const LOG_CHUNK_BYTES = 4096;
/** ...and no later than this after they were logged, so an idle service's log is never stale. */
const LOG_FLUSH_MS = 200;
/** Most bytes held for a stdout that does not take them. */
const LOG_BUFFER_MAX_BYTES = 16 * 1024 * 1024;
/** At exit, a stdout nobody reads (a full pipe) is retried this long before its lines are dropped. */
const LOG_EXIT_RETRY_MS = 2000;

/**
 * The production logger: JSON lines to stdout through an asynchronous, buffered destination, so a
 * request never waits for a write(2) and busy periods cost one write per 4 KiB rather than one per
 * line. Nothing is lost on the way out: `flushLog()` runs on shutdown, and the destination is
 * flushed synchronously when the process exits (pino registers that; see flushLogSync below for
 * the guard around it). A level of `silent` opens no destination at all.
 */
export function createLogger(level: string): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'netwarden' },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Defence in depth: nothing logs these today, and nothing should start to.
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie', 'res.headers["set-cookie"]', '*.password', '*.key'],
      censor: '[redacted]',
    },
  };
  if (level === 'silent') return pino(options);
  makeStdoutNonBlocking();
  let exiting = false;
  let exitRetryUntil = 0;
  const destination = pino.destination({
    dest: 1,
    sync: false,
    minLength: LOG_CHUNK_BYTES,
    // A reader that stops for good must not make the service grow without bound: lines beyond this are dropped.
    maxLength: LOG_BUFFER_MAX_BYTES,
    periodicFlush: LOG_FLUSH_MS,
    // EAGAIN: stdout is a pipe whose reader is not keeping up. While running, retrying is
    // asynchronous and harmless; at exit it would block the process for as long as the reader
    // stalls (a shutdown once hung for 13 minutes that way), so it gives up after a while.
    retryEAGAIN: () => {
      if (!exiting) return true;
      exitRetryUntil ||= Date.now() + LOG_EXIT_RETRY_MS;
      return Date.now() < exitRetryUntil;
    },
  });
  // Put ahead of pino's own exit flush (which would write synchronously whatever the state of
  // stdout), and never throws: a closed stdout (EPIPE) or a stalled one must not turn a clean exit
  // into a crash or a hang.
  process.prependOnceListener('exit', () => {
    exiting = true;
    flushDestinationSync(destination);
  });
  const logger = pino(options, destination);
  destinations.set(logger, destination);
  return logger;
}

/**
 * A pipe or socket as stdout (systemd, Docker, a parent process) is usually in blocking mode: an
 * asynchronous write to it then sits in a libuv worker thread for as long as the reader stalls,
 * and the process cannot exit until it returns (exit joins those threads). Opening it as a libuv
 * pipe switches the descriptor to non-blocking, so a stalled reader gives EAGAIN (retried later
 * without blocking anything) instead. The handle is kept (closing it would close stdout) and
 * does not keep the process alive. Files and terminals are left as they are.
 */
function makeStdoutNonBlocking(): void {
  if (stdoutOpened) return;
  try {
    const stat = fstatSync(1);
    if (!stat.isFIFO() && !stat.isSocket()) return;
    stdoutOpened = new Socket({ fd: 1, readable: false, writable: true });
    stdoutOpened.unref();
    // Errors surface through the log destination; this handle never writes.
    stdoutOpened.on('error', () => {});
  } catch {
    // No stdout, or one libuv cannot open: keep the default behaviour.
  }
}
let stdoutOpened: Socket | undefined;

type Destination = ReturnType<typeof pino.destination>;
const destinations = new WeakMap<Logger, Destination>();

/**
 * The exit-time flush. When an earlier write has not returned, stdout is a pipe nobody reads (and,
 * as a child's stdout usually is, in blocking mode): a synchronous write would hang the exit for
 * as long as the reader stalls, so the remaining lines are dropped instead.
 */
function flushDestinationSync(destination: Destination): void {
  const stalled = (destination as unknown as { _writing?: boolean })._writing === true;
  try {
    if (!stalled) destination.flushSync();
  } catch {
    // EPIPE (stdout closed) or a reader that never drained: the lines cannot be delivered.
  }
  // Keeps pino's own exit flush, which runs next, from trying again.
  destination.flushSync = () => {};
}

/**
 * Writes out what the logger has buffered; resolves when written, or after `limitMs` when stdout
 * does not take it (the exit-time synchronous flush then has its own, bounded, try).
 */
export function flushLog(logger: Logger, limitMs = 1000): Promise<void> {
  const destination = destinations.get(logger);
  if (!destination) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, limitMs);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    try {
      destination.flush(done);
    } catch {
      done();
    }
  });
}

/** Logs without ever throwing: used on the way out, when stdout may already be gone. */
function logSafely(write: () => void): void {
  try {
    write();
  } catch {
    // stdout closed under us: nothing more to say.
  }
}

/**
 * While no user exists, the one-time set-up code goes to the console (standard error, for whoever
 * started the service) and into the log: set-up from another machine needs it (auth/setup-code.ts).
 */
async function announceSetupCode(app: App, logger: Logger): Promise<void> {
  const { code } = app.services.setupCode;
  if (code === null || (await app.services.store.users.count()) > 0) return;
  logger.warn({ setup_code: code }, `first-run set-up code: ${code} (needed to set up from another machine; not needed on this one)`);
  logSafely(() => process.stderr.write(`\nNetwarden is not set up yet. First-run set-up code: ${code}\n\n`));
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

/** How `netwarden serve` runs: with a worker (the default), or as an API only (`--no-worker`). */
export interface ServeOptions {
  /** Run queued scans in this process (default true). False needs PostgreSQL: workers elsewhere run them. */
  worker?: boolean;
  /** This process's worker name on the scans it runs (default: host name and pid). */
  workerName?: string;
}

/** Opens the store, applies migrations, seeds, and listens. */
export async function startServer(
  config: ServerConfig,
  logger: Logger = createLogger(config.logLevel),
  options: ServeOptions = {},
): Promise<RunningServer> {
  const store = await openStore({ url: config.databaseUrl, warn: (context, message) => logger.warn(context, message) });
  logger.info({ database: store.handle.description }, 'database ready');
  const worker = options.worker ?? true;
  let relay: EventRelay | undefined;
  try {
    if (!worker && !store.handle.postgres) throw new Error(WORKER_NEEDS_POSTGRES('serve --no-worker'));
    await initialise(store, config, logger);
    // Scans are jobs (CONTRACT §7): pg-boss on PostgreSQL, in this process on SQLite.
    const queue = await scanJobQueue(store, logger);
    await queue.start();
    const scanManager = new ScanManager({
      store,
      log: logger,
      dataDir: config.dataDir,
      scanAllow: config.scanAllow,
      outboundGuard: new OutboundGuard(config.outboundAllow ?? []),
      queue,
      runsScans: worker,
      ...(options.workerName ? { workerName: options.workerName } : {}),
    });
    const app = await buildApp({
      store,
      version: VERSION,
      logger,
      dataDir: config.dataDir,
      scanAllow: config.scanAllow,
      outboundAllow: config.outboundAllow,
      // With the administrator from the environment there is nothing to claim.
      setupCode: config.admin ? null : undefined,
      scanManager,
    });
    const { scans, loginThrottle } = app.services;
    // PostgreSQL: this process's live events and cache invalidations reach every other process on
    // the database, and theirs reach this one (SQLite: nothing to relay). Listening before serving.
    relay = await startEventRelay({ store, bus: app.services.events, log: logger });
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
    await announceSetupCode(app, logger);
    // Whoever started the service waits for this line: do not leave it in the buffer.
    await flushLog(logger);
    let closing: Promise<void> | undefined;
    return {
      app,
      store,
      url,
      close: () =>
        (closing ??= (async () => {
          await app.close();
          // After the app: the events of its shutdown (a scan ended) still reach the other instances.
          await relay?.stop();
          await store.close();
        })()),
    };
  } catch (err) {
    await relay?.stop();
    await store.close();
    throw err;
  }
}

/** Why a process that runs no worker, or a worker alone, refuses SQLite. */
export const WORKER_NEEDS_POSTGRES = (what: string) =>
  `${what} needs PostgreSQL (NETWARDEN_DATABASE_URL=postgres://…): with SQLite one process serves the API and runs the scans (netwarden serve)`;

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
