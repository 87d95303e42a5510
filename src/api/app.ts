import { randomUUID } from 'node:crypto';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions, type HTTPMethods } from 'fastify';
import FindMyWay from 'find-my-way';
import type { EventBus } from '../events/bus.js';
import type { LoginThrottle } from '../auth/throttle.js';
import type { SetupCode } from '../auth/setup-code.js';
import type { Notifier } from '../notify/notifier.js';
import type { ScheduleService } from '../jobs/schedules.js';
import type { ScanManager } from '../scan/manager.js';
import type { Reevaluator } from '../scan/reevaluate.js';
import type { RiskAcceptances } from '../scan/risk-acceptance.js';
import type { UpdateChecker } from '../updates/checker.js';
import { parseIpv4Network, networkContains, isIpv4Address } from '../core/net.js';
import type { Store } from '../store/index.js';
import { registerAuthentication, type Authenticator } from './auth.js';
import { HttpError, errorHandler, notAuthenticated } from './errors.js';
import { auditRoutes } from './routes/audit.js';
import { authRoutes } from './routes/auth.js';
import { backupRoutes } from './routes/backup.js';
import { changeRoutes } from './routes/changes.js';
import { configRoutes } from './routes/config.js';
import { deviceRoutes } from './routes/devices.js';
import { deviceStatusRoutes } from './routes/device-status.js';
import { healthRoutes } from './routes/health.js';
import { keyRoutes } from './routes/keys.js';
import { agentRoutes } from './routes/agents.js';
import { agentEndpointRoutes } from './routes/agent-endpoints.js';
import { networkRoutes } from './routes/network.js';
import { notificationRoutes } from './routes/notifications.js';
import { scanRoutes } from './routes/scans.js';
import { scanImportRoutes } from './routes/scan-import.js';
import { scheduleRoutes } from './routes/schedules.js';
import { statsRoutes } from './routes/stats.js';
import { updateRoutes } from './routes/updates.js';
import { userRoutes } from './routes/users.js';
import { zoneRoutes } from './routes/zones.js';
import { riskRoutes } from './routes/risk.js';
import { eventRoutes } from './routes/events.js';
import { evaluationRoutes } from './routes/evaluation.js';
import { exportRoutes } from './routes/export.js';
import { metricsRoutes } from './routes/metrics.js';
import type { Metrics } from './metrics.js';
import { answerClientError, requestedPath, rerouteFrameworkErrors, routerErrorOf } from './framework-errors.js';
import { createValidatorCompiler, rejectForeignCharsets, rejectNulCharacters } from './validation.js';
import { registerWebUi } from './web.js';
import { lazySerializerFactory, lazyValidatorCompiler } from './lazy-compilers.js';
import { compareRoutes } from './routes/compare.js';
import { timelineRoutes } from './routes/timeline.js';
import { portMatrixRoutes } from './routes/port-matrix.js';
import { topologyRoutes } from './routes/topology.js';
import { SECURITY_HEADERS } from './security-headers.js';
import { withChannelConfigUnion } from './openapi-channels.js';

export interface AppOptions {
  /** What the routes work on, built by the composition root (services.ts); the app creates none. */
  services: Services;
  /** Passed to Fastify: `false` for silence, a pino options object or instance otherwise. */
  logger?: FastifyServerOptions['logger'] | FastifyServerOptions['loggerInstance'];
  /** Folder of the built web UI (default dist/web/ of this package). */
  webRoot?: string;
  /** Fastify's limit on a plugin's start, in ms (default Fastify's 10 s; 0: none). The benches, which start apps beside heavy work, lift it. */
  pluginTimeout?: number;
  /** Interval of the keep-alive comment on /api/events streams (default 15 s; tests shorten it). */
  eventKeepAliveMs?: number;
  /** Longest an agent's long poll waits, whatever it asks (default AGENT_POLL_WAIT_SECONDS; the fuzzer shortens it). */
  agentPollMaxWaitMs?: number;
}

/** What route plugins share: one instance per app, built by services.ts and stopped there (after the app closes). */
export interface Services {
  store: Store;
  version: string;
  authenticator: Authenticator;
  updateChecker: UpdateChecker;
  scans: ScanManager;
  /** Live events of this process (the scan manager's bus): the SSE stream and the notifier read them. */
  events: EventBus;
  /** Failed logins per client address and per username, shared through the database. */
  loginThrottle: LoginThrottle;
  /** Sends notifications after scans, digests, and the delivery loop (started with the app, stopped on close). */
  notifier: Notifier;
  setupCode: SetupCode;
  /** Scan schedules: validation, next run, run now (the scheduler in jobs/ fires the slots). */
  schedules: ScheduleService;
  /** Re-evaluates every device in the background after a rule or CVE data change; holds the CVE dataset the API describes matches from. */
  reevaluator: Reevaluator;
  /** Accepted risk: rescoring a device when an acceptance begins or ends (CONTRACT §17). */
  acceptances: RiskAcceptances;
  /** Prometheus metrics (GET /metrics): this app's own registry. */
  metrics: Metrics;
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
  }
}

export type App = FastifyInstance;

export const BODY_LIMIT = 1024 * 1024;
const MAX_PARAM_LENGTH = 200;

/** The HTTP API over `options.services`: hooks, OpenAPI, the route plugins and the web UI. */
export async function buildApp(options: AppOptions): Promise<App> {
  const { services } = options;
  const { store, version, authenticator, metrics } = services;

  const loggerOption =
    options.logger && typeof (options.logger as { child?: unknown }).child === 'function'
      ? { loggerInstance: options.logger as FastifyServerOptions['loggerInstance'] }
      : { logger: options.logger ?? false };

  const app: FastifyInstance = Fastify({
    ...loggerOption,
    bodyLimit: BODY_LIMIT,
    ...(options.pluginTimeout !== undefined ? { pluginTimeout: options.pluginTimeout } : {}),
    genReqId: () => randomUUID(),
    // request.log is made when something logs through it (LazyRequestLogger), not for every request.
    childLoggerFactory: (logger, bindings, options) => new LazyRequestLogger(logger, bindings, options),
    // One line per request, written by the onResponse hook below.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: (address: string) => isTrustedProxy(store, address),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: rerouteFrameworkErrors(() => app, MAX_PARAM_LENGTH),
    clientErrorHandler: answerClientError,
    // Each route's response serializers are built on its first answer, not all at start-up (lazy-compilers.ts).
    schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory() } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(lazyValidatorCompiler(createValidatorCompiler()));
  app.setErrorHandler(errorHandler);
  // Only JSON bodies: text/plain would otherwise reach handlers as a string.
  app.removeContentTypeParser('text/plain');

  app.decorate('services', services);

  // One hook for every response's fixed headers: computed once (security-headers.ts), not per request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(SECURITY_HEADERS);
    reply.header('X-Request-Id', request.id);
    done();
  });
  // The request line, written through the app's logger without its redaction (which costs more
  // than the rest of the line): its fields are all plain values, and every redaction path of the
  // logger (logger.ts) names a field inside an object (`req.headers.cookie`, `*.password`), so
  // none could reach them and the line is the same, byte for byte. The request id is a field of
  // its own instead of request.log's binding, in the same place in the line.
  const requestLog = app.log.child({}, { redact: [] });
  app.addHook('onResponse', (request, reply, done) => {
    const elapsed = reply.elapsedTime;
    // The route's pattern, never the raw URL (one series per route, not per device id or query).
    metrics.observeRequest(request.method, request.is404 ? undefined : request.routeOptions.url, reply.statusCode, elapsed / 1000);
    requestLog.info(
      { reqId: request.id, method: request.method, url: requestedPath(request), status: reply.statusCode, ms: Math.round(elapsed * 10) / 10 },
      'request',
    );
    done();
  });
  // Input checks every route shares, whatever its schema declares.
  app.addHook('preParsing', rejectForeignCharsets);
  app.addHook('preValidation', rejectNulCharacters);

  await app.register(cookie);

  await app.register(swagger, {
    transformObject: (document) => ('openapiObject' in document ? withChannelConfigUnion(document.openapiObject) : document.swaggerObject),
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Netwarden API',
        version,
        description:
          'Self-hosted network scanning: devices, open ports, risk, CVEs and changes between scans. ' +
          'Authenticate with an API key (`X-API-Key` or `Authorization: Bearer`) or the session cookie set by `/api/auth/login`. ' +
          'Errors are `{"detail": "...", "code": "NW_..."}`: `detail` is for a person, `code` is stable and safe to match on; a 401 is only `{"detail"}`. ' +
          'Validation errors are 400 and name the parameter. ' +
          'Lists are JSON arrays; paged lists carry the total in `X-Total-Count`.',
      },
      components: {
        securitySchemes: {
          apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          bearer: { type: 'http', scheme: 'bearer', description: 'An API key sent as `Authorization: Bearer svc_…`' },
          sessionCookie: { type: 'apiKey', in: 'cookie', name: 'netwarden_session' },
          agentToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'An agent token sent as `Authorization: Bearer nwa_…`: accepted by the agent endpoints (/api/agent/…) only',
          },
        },
      },
      security: [{ apiKeyHeader: [] }, { bearer: [] }, { sessionCookie: [] }],
      tags: [
        { name: 'auth', description: 'Set-up, login and sessions' },
        { name: 'keys', description: 'API keys' },
        { name: 'agents', description: 'Agents: scanners at networks the server cannot reach (CONTRACT §12)' },
        { name: 'agent', description: 'The agent endpoints, called by `netwarden agent` with its agent token (and nothing else)' },
        { name: 'scans', description: 'Scans and their results' },
        { name: 'devices', description: 'Device inventory' },
        { name: 'changes', description: 'Changes between scans' },
        { name: 'stats', description: 'Statistics and trends' },
        { name: 'config', description: 'Configuration, zones, network detection' },
        { name: 'audit', description: 'Audit log' },
        { name: 'system', description: 'Health, updates and API description' },
        { name: 'notifications', description: 'Notification channels and their delivery log' },
        { name: 'schedules', description: 'Scan schedules (cron) and the scan queue' },
        { name: 'events', description: 'Live events (Server-Sent Events)' },
        { name: 'risk', description: 'Accepted risk, zone policies, exploit intelligence and the fix-first findings list' },
      ],
    },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    // Its built-in policy adds upgrade-insecure-requests, which makes browsers fetch the UI's own
    // assets over HTTPS and breaks /docs when served over plain HTTP on a LAN (SECURITY_HEADERS leaves it out too).
    transformStaticCSP: (header) => header.replace(/\s*upgrade-insecure-requests;?/g, ''),
    uiConfig: { docExpansion: 'list', deepLinking: true, persistAuthorization: false },
  });

  registerAuthentication(app, authenticator);
  const allowed = methodIndex(app);

  await app.register(healthRoutes);
  await app.register(authRoutes);
  await app.register(keyRoutes);
  await app.register(userRoutes);
  await app.register(agentRoutes);
  await app.register(agentEndpointRoutes, { maxWaitMs: options.agentPollMaxWaitMs });
  await app.register(configRoutes);
  await app.register(auditRoutes);
  await app.register(zoneRoutes);
  await app.register(networkRoutes);
  await app.register(updateRoutes);
  await app.register(deviceRoutes);
  await app.register(deviceStatusRoutes);
  await app.register(scanRoutes);
  await app.register(scanImportRoutes);
  await app.register(compareRoutes);
  await app.register(timelineRoutes);
  await app.register(portMatrixRoutes);
  await app.register(topologyRoutes);
  await app.register(changeRoutes);
  await app.register(riskRoutes);
  await app.register(exportRoutes);
  await app.register(metricsRoutes);
  await app.register(statsRoutes);
  await app.register(backupRoutes);
  await app.register(notificationRoutes);
  await app.register(scheduleRoutes);
  await app.register(evaluationRoutes);
  await app.register(eventRoutes, { keepAliveMs: options.eventKeepAliveMs });

  app.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
  const webUi = await registerWebUi(app, options.webRoot);

  app.setNotFoundHandler(async (request, reply) => {
    const routerError = routerErrorOf(request);
    if (!routerError && webUi.fallback(request, reply)) return reply;
    const path = requestedPath(request);
    if (path.startsWith('/api/') && !(await authenticator.authenticate(request))) throw notAuthenticated();
    if (routerError) throw new HttpError(routerError.code, routerError.detail);
    const methods = allowed(path);
    if (methods.length > 0) {
      throw new HttpError(
        'NW_METHOD_NOT_ALLOWED',
        `Method ${request.method} is not allowed on ${path}; use ${methods.join(', ')}`,
        {},
        { headers: { Allow: methods.join(', ') } },
      );
    }
    throw new HttpError('NW_ROUTE_NOT_FOUND', `Not found: ${request.method} ${path}`);
  });

  return app;
}

/** Records every route so an unmatched request can be told which methods its path does accept (405). */
function methodIndex(app: FastifyInstance): (path: string) => string[] {
  const router = FindMyWay({ ignoreTrailingSlash: true });
  const methods = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    for (const method of ([] as HTTPMethods[]).concat(route.method)) {
      let set = methods.get(route.url);
      if (!set) {
        set = new Set();
        methods.set(route.url, set);
        router.on('GET', route.url, () => {}, { url: route.url });
      }
      set.add(method);
    }
  });
  return (path) => {
    const found = router.find('GET', path);
    if (!found) return [];
    return [...(methods.get((found.store as { url: string }).url) ?? [])].sort();
  };
}

function isTrustedProxy(store: Store, address: string): boolean {
  const setting = store.settings.peek()?.server.trust_proxy ?? false;
  if (typeof setting === 'boolean') return setting;
  const peer = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (!isIpv4Address(peer)) return false;
  return setting.some((entry) => {
    const net = parseIpv4Network(entry);
    return net.ok && networkContains(net.value, peer);
  });
}

type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];

/**
 * A request's logger (`request.log`, `reply.log`: the app's logger with the request id bound),
 * made on its first use. Making a pino child serializes its bindings through the logger's
 * redaction, which costs several microseconds; most requests never log through it (their one
 * line, `request`, is written by the onResponse hook), so they no longer pay for it. What is
 * logged through it is the same as through the child made at once.
 */
class LazyRequestLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: ChildOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.logger.level;
  }
  set level(level: string) {
    this.logger.level = level;
  }
  fatal(...args: unknown[]): void {
    this.log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.log('error', args);
  }
  warn(...args: unknown[]): void {
    this.log('warn', args);
  }
  info(...args: unknown[]): void {
    this.log('info', args);
  }
  debug(...args: unknown[]): void {
    this.log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.log('trace', args);
  }
  silent(...args: unknown[]): void {
    this.log('silent', args);
  }
  child(bindings: Record<string, unknown>, options?: ChildOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }

  private log(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent', args: unknown[]): void {
    this.logger[level](...(args as Parameters<FastifyBaseLogger['info']>));
  }
}
