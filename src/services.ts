/**
 * The composition root: the one place that builds the parts of a running Netwarden (the store,
 * the scan job queue, the event bus and its relay, the scan manager, the notifier, the background
 * jobs) and stops them again, in the reverse order. `netwarden serve` (server.ts), `netwarden
 * worker` (worker.ts), the commands that open the store (cli/common.ts) and the tests' server
 * helper all start here; `buildApp` (api/app.ts) receives the server's services and only
 * registers HTTP on them.
 */
import type { Logger } from 'pino';
import { Authenticator } from './api/auth.js';
import type { Services as AppServices } from './api/app.js';
import { Metrics } from './api/metrics.js';
import { hashPassword, passwordProblem, usernameProblem } from './auth/passwords.js';
import { SetupCode, newSetupCode } from './auth/setup-code.js';
import { LoginThrottle } from './auth/throttle.js';
import type { ServerConfig } from './config/environment.js';
import { seedSettings } from './config/seed.js';
import { EventBus } from './events/bus.js';
import { startEventRelay } from './events/relay.js';
import { Maintenance } from './jobs/maintenance.js';
import { Scheduler } from './jobs/scheduler.js';
import { ScheduleService } from './jobs/schedules.js';
import { Notifier, type NotifierOptions } from './notify/notifier.js';
import { scanJobQueue, type ScanJobQueue } from './queue/index.js';
import { EngineSelector } from './engines/engines.js';
import { ScanManager } from './scan/manager.js';
import { newOwner } from './scan/owner.js';
import { Reevaluator } from './scan/reevaluate.js';
import { RiskAcceptances, publishRiskChanges } from './scan/risk-acceptance.js';
import { openCommandStore, openStore, type Store } from './store/index.js';
import { UpdateChecker } from './updates/checker.js';
import { OutboundGuard } from './util/outbound.js';
import { VERSION } from './version.js';

/** What the services are built from: the deployment settings that concern them (no data directory: the shipped CVE dataset only). */
export type ServicesConfig = Pick<ServerConfig, 'databaseUrl' | 'scanAllow' | 'outboundAllow' | 'nmap' | 'settingsSeed' | 'admin'> & {
  dataDir: string | null;
};

/** Why a process that runs no worker, or a worker alone, refuses SQLite. */
export const WORKER_NEEDS_POSTGRES = (what: string) =>
  `${what} needs PostgreSQL (NETWARDEN_DATABASE_URL=postgres://…): with SQLite one process serves the API and runs the scans (netwarden serve)`;

/** Parts a caller brings instead of the ones built from the configuration (the tests' server helper does). */
export interface GivenParts {
  /** An open store; the caller closes it (default: the configured database, opened and closed here). */
  store?: Store;
  /** The scan job queue (default: pg-boss on PostgreSQL, in this process on SQLite). */
  queue?: ScanJobQueue;
  /** Chooses the scan engine (default: nmap as configured, or the native engine). */
  engines?: EngineSelector;
  /** Answers /api/updates/check (default: the real checker). */
  updateChecker?: UpdateChecker;
  /** Notification timing and clock (tests shorten retries and move the clock); the contract's otherwise. */
  notifier?: NotifierOptions;
  /** `/health`'s version (default: this package's). */
  version?: string;
  /**
   * The one-time set-up code (auth/setup-code.ts): undefined makes a new one, null needs none.
   * With the administrator from the environment (`config.admin`) none is needed whatever is given.
   */
  setupCode?: string | null;
}

export interface ServerServicesOptions extends GivenParts {
  config: ServicesConfig;
  logger: Logger;
  /** Run queued scans in this process (default true). False needs PostgreSQL: workers elsewhere run them. */
  runsScans?: boolean;
  /** This process's worker name on the scans it runs (default: host name and pid). */
  workerName?: string;
  /**
   * Whether the work every instance does in the background runs (default true): the event relay
   * between instances, the recovery of scans whose owner died, maintenance and the scheduler.
   * The tests' server helper turns it off: each test server is an instance of its own.
   */
  background?: boolean;
}

/** What `netwarden serve` runs: everything the API's routes use, and the background jobs. */
export interface ServerServices extends AppServices {
  logger: Logger;
  queue: ScanJobQueue;
  /** Stops everything this built, in the reverse order (once; later calls wait for the first). */
  close(): Promise<void>;
}

/** Stop functions in the order their parts started; run last to first. */
class Shutdown {
  private readonly stops: Array<() => Promise<void>> = [];
  private closing: Promise<void> | undefined;

  /** Registers how to stop a part that has just started. */
  add(stop: () => Promise<void>): void {
    this.stops.push(stop);
  }

  /** Stops every part, the last started first; an error is thrown after the rest have stopped. */
  run(): Promise<void> {
    return (this.closing ??= (async () => {
      const failures: unknown[] = [];
      for (const stop of this.stops.reverse()) {
        try {
          await stop();
        } catch (err) {
          failures.push(err);
        }
      }
      if (failures.length) throw failures[0] instanceof Error ? failures[0] : new Error(String(failures[0]));
    })());
  }

  /** Builds with `build`; when it throws, stops what it had started before passing the error on. */
  async guard<T>(build: () => Promise<T>): Promise<T> {
    try {
      return await build();
    } catch (err) {
      await this.run().catch(() => undefined);
      throw err;
    }
  }
}

/** The configured store, opened (and migrated) with its warnings logged; closed on shutdown unless given. */
async function storeFor(config: ServicesConfig, logger: Logger, given: Store | undefined, shutdown: Shutdown): Promise<Store> {
  if (given) return given;
  const store = await openStore({ url: config.databaseUrl, warn: (context, message) => logger.warn(context, message) });
  shutdown.add(() => store.close());
  return store;
}

/** The engine selector for the configured nmap. */
function enginesFor(config: Pick<ServicesConfig, 'nmap'>): EngineSelector {
  return new EngineSelector(config.nmap.binary, undefined, config.nmap.dataDir);
}

/** What outbound requests (name sources, deliveries, the update check) may reach: NETWARDEN_OUTBOUND_ALLOW. */
function outboundGuardFor(config: Pick<ServicesConfig, 'outboundAllow'>): OutboundGuard {
  return new OutboundGuard(config.outboundAllow ?? []);
}

/** The queue given, or the store's (started here); the scan manager's shutdown stops it. */
async function queueFor(store: Store, logger: Logger, given: ScanJobQueue | undefined): Promise<ScanJobQueue> {
  if (given) return given;
  const queue = await scanJobQueue(store, logger);
  await queue.start();
  return queue;
}

/**
 * Builds what `netwarden serve` runs, and starts it: the store (migrated, seeded, the bootstrap
 * administrator created when configured), the queue, the bus and its relay, the scan manager, the
 * notifier and the re-evaluation, then the recovery of abandoned scans, maintenance and the
 * scheduler. `close()` stops them in the reverse order; stop the HTTP server before it.
 */
export async function openServerServices(options: ServerServicesOptions): Promise<ServerServices> {
  const { config, logger } = options;
  const runsScans = options.runsScans ?? true;
  const background = options.background ?? true;
  const version = options.version ?? VERSION;
  const shutdown = new Shutdown();
  return shutdown.guard(async () => {
    const store = await storeFor(config, logger, options.store, shutdown);
    if (!options.store) logger.info({ database: store.handle.description }, 'database ready');
    if (!runsScans && !store.handle.postgres) throw new Error(WORKER_NEEDS_POSTGRES('serve --no-worker'));
    await initialise(store, config, logger);
    // Other instances on the database learn of this one's writes (their cached counts), and it of theirs.
    store.shareWrites();
    // Loaded before the first request: the API's proxy-trust decision reads it synchronously.
    await store.settings.get();
    // Scans are jobs (CONTRACT §7): pg-boss on PostgreSQL, in this process on SQLite.
    const queue = await queueFor(store, logger, options.queue);
    const events = new EventBus();
    const outboundGuard = outboundGuardFor(config);
    if (background) {
      // PostgreSQL: this process's live events and cache invalidations reach every other process on
      // the database, and theirs reach this one (SQLite: nothing to relay). Stopped after the scan
      // manager, so the events of its shutdown (a scan ended) still reach the other instances.
      const relay = await startEventRelay({ store, bus: events, log: logger });
      shutdown.add(() => relay.stop());
    }
    const scans = new ScanManager({
      store,
      log: logger,
      engines: options.engines ?? enginesFor(config),
      dataDir: config.dataDir,
      scanAllow: config.scanAllow,
      outboundGuard,
      queue,
      events,
      runsScans,
      ...(options.workerName ? { workerName: options.workerName } : {}),
    });
    // A scan running when the server stops is ended (recorded as failed) before the store closes.
    shutdown.add(() => scans.shutdown());
    const notifier = new Notifier({ store, events, log: logger, version, ownerId: scans.owner.id, guard: outboundGuard, ...options.notifier });
    // Pending deliveries from before a restart are resumed here; stopping leaves unsent ones pending for the next start.
    notifier.start();
    shutdown.add(() => notifier.stop());
    // Started once across instances (by lease).
    const reevaluator = new Reevaluator({
      store,
      log: logger,
      ownerId: scans.owner.id,
      dataDir: config.dataDir,
      onRiskChanged: (changes) => {
        publishRiskChanges(store, events, changes, 'reassessed').catch((err: unknown) => logger.warn({ err }, 'could not publish risk_changed'));
      },
    });
    const acceptances = new RiskAcceptances(store, events);
    reevaluator.start();
    shutdown.add(async () => reevaluator.stop());
    const loginThrottle = new LoginThrottle(store.loginFailures);
    if (background) {
      // Scans left by a process that died (this one's predecessor, or another instance whose lease ran out).
      const interrupted = await scans.recoverAbandoned();
      if (interrupted.length) logger.warn({ scans: interrupted }, 'marked scans interrupted by a stopped server as failed');
      scans.startRecovery();
      const maintenance = new Maintenance({ store, log: logger, throttle: loginThrottle, ownerId: scans.owner.id, acceptances });
      maintenance.start();
      shutdown.add(async () => maintenance.stop());
      // After recovery, so a scan left by a dead instance is ended before a slot queues behind it;
      // stopped first, so no slot fires while the scan manager shuts down.
      const scheduler = new Scheduler({ store, scans, log: logger });
      scheduler.start();
      shutdown.add(async () => scheduler.stop());
    }
    return {
      logger,
      queue,
      store,
      version,
      authenticator: new Authenticator(store),
      updateChecker: options.updateChecker ?? new UpdateChecker({ version, guard: outboundGuard }),
      scans,
      events,
      loginThrottle,
      notifier,
      // With the administrator from the environment there is nothing to claim.
      setupCode: new SetupCode(config.admin ? null : options.setupCode === undefined ? newSetupCode() : options.setupCode),
      schedules: new ScheduleService({ store, scans }),
      reevaluator,
      acceptances,
      metrics: new Metrics(store),
      close: () => shutdown.run(),
    };
  });
}

export interface WorkerServicesOptions {
  config: ServicesConfig;
  logger: Logger;
  /** Shown on the scans it runs (`worker <name>`); default: host name and pid. */
  name?: string;
  /** Most scans it runs at once (default: as many as scanning.max_parallel_scans lets run). */
  concurrency?: number;
}

/** What `netwarden worker` runs: scans from the shared queue and their notifications, no API. */
export interface WorkerServices {
  store: Store;
  queue: ScanJobQueue;
  events: EventBus;
  scans: ScanManager;
  notifier: Notifier;
  close(): Promise<void>;
}

/**
 * Builds what `netwarden worker` runs (CONTRACT §12), and starts it: the store (PostgreSQL only),
 * the queue, the scan manager, the notifier of the scans it runs, the relay that carries their
 * events to the API instances, and the recovery of scans whose owner died.
 */
export async function openWorkerServices(options: WorkerServicesOptions): Promise<WorkerServices> {
  const { config, logger } = options;
  const shutdown = new Shutdown();
  return shutdown.guard(async () => {
    const store = await storeFor(config, logger, undefined, shutdown);
    if (!store.handle.postgres) throw new Error(WORKER_NEEDS_POSTGRES('netwarden worker'));
    store.shareWrites();
    const queue = await queueFor(store, logger, undefined);
    const events = new EventBus();
    const relay = await startEventRelay({ store, bus: events, log: logger });
    shutdown.add(() => relay.stop());
    const owner = newOwner();
    // NETWARDEN_OUTBOUND_ALLOW as `serve` reads it: name sources and deliveries from here obey it too.
    const outboundGuard = outboundGuardFor(config);
    // The notifications of the scans it runs are sent here; their live events reach the API
    // instances through the relay. Stopped after the scan manager: a scan its shutdown ends is notified.
    const notifier = new Notifier({ store, events, log: logger, version: VERSION, ownerId: owner.id, guard: outboundGuard });
    notifier.start();
    shutdown.add(() => notifier.stop());
    const scans = new ScanManager({
      store,
      log: logger,
      engines: enginesFor(config),
      dataDir: config.dataDir,
      scanAllow: config.scanAllow,
      outboundGuard,
      queue,
      events,
      owner,
      role: 'worker',
      ...(options.name ? { workerName: options.name } : {}),
      ...(options.concurrency ? { concurrency: options.concurrency } : {}),
    });
    shutdown.add(() => scans.shutdown());
    const interrupted = await scans.recoverAbandoned();
    if (interrupted.length) logger.warn({ scans: interrupted }, 'marked scans whose owner stopped as failed');
    scans.startRecovery();
    return { store, queue, events, scans, notifier, close: () => shutdown.run() };
  });
}

/** What a one-off command works on (`netwarden scan`, `import`, `user`, …). */
export interface CommandServices {
  store: Store;
  /** A scan manager over the store that never takes queued scans (a running server does); built on first use. */
  readonly scans: ScanManager;
  close(): Promise<void>;
}

/**
 * Opens the configured store for a command, as `serve` would (migrated; its writes reach the
 * running service's cached counts), with a small pool. Seeding is the caller's: its errors are
 * the user's to fix. `logger` is the command's (warnings on stderr).
 */
export async function openCommandServices(config: ServicesConfig, logger: Logger): Promise<CommandServices> {
  const store = await openCommandStore(config.databaseUrl);
  let scans: ScanManager | undefined;
  return {
    store,
    get scans() {
      return (scans ??= new ScanManager({
        store,
        log: logger,
        engines: enginesFor(config),
        dataDir: config.dataDir,
        scanAllow: config.scanAllow,
        outboundGuard: outboundGuardFor(config),
        runsQueue: false,
      }));
    },
    close: () => store.close(),
  };
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
