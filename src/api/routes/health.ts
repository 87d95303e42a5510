import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SCAN_ENGINE_NAMES } from '../../core/model.js';
import { DatabaseUnavailableError } from '../../store/errors.js';
import { Timestamp } from '../schemas.js';

const HealthBody = Type.Object({
  status: Type.String({
    description:
      '`healthy`; `degraded` (still HTTP 200) when the service runs but scans are hampered: nmap is not installed while `scanning.engine` ' +
      'is `auto` (scans fall back to the built-in engine) or `nmap` (scans fail); `unhealthy` (HTTP 503) when the database cannot be reached',
  }),
  timestamp: Timestamp,
  version: Type.String(),
  database: Type.String({ description: '`ok` or `unreachable`' }),
  engine: Type.Union([...SCAN_ENGINE_NAMES.map((name) => Type.Literal(name)), Type.Null()], {
    description: 'Scan engine a scan started now would use (null when the configuration cannot be read)',
  }),
  nmap: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description: "nmap's version, or null when it is not installed (absent when the database cannot be reached)",
    }),
  ),
  detail: Type.Optional(Type.String({ description: 'When degraded or unhealthy: what is wrong, and what to do' })),
});

export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/health',
    {
      config: { public: true },
      schema: {
        tags: ['system'],
        summary: 'Health probe (public)',
        security: [],
        response: { 200: HealthBody, 503: HealthBody },
      },
    },
    async (request, reply) => {
      const { store, version, scans } = app.services;
      const timestamp = new Date().toISOString();
      try {
        await withTimeout(store.ping(), 3000);
        const settings = await store.settings.get();
        const setting = settings.scanning.engine;
        const { engine, nmap_version: nmap } = await scans.engines.info(setting);
        const detail = nmap || setting === 'native' ? undefined : missingNmap(setting);
        return { status: detail ? 'degraded' : 'healthy', timestamp, version, database: 'ok', engine, nmap, ...(detail && { detail }) };
      } catch (err) {
        request.log.warn({ err }, 'health check: database unreachable');
        const detail = err instanceof DatabaseUnavailableError ? err.detail : 'The database cannot be reached; the server log has the details';
        if (err instanceof DatabaseUnavailableError && err.retryAfterSeconds !== undefined)
          reply.header('Retry-After', String(err.retryAfterSeconds));
        return reply.code(503).send({ status: 'unhealthy', timestamp, version, database: 'unreachable', engine: null, detail });
      }
    },
  );
};

/** What a missing nmap means for scans, by `scanning.engine` (`auto` or `nmap`). */
function missingNmap(setting: string): string {
  return setting === 'nmap'
    ? 'nmap is not installed, and scanning.engine is "nmap": every scan fails. Install nmap, or set the engine to auto or native in Settings.'
    : 'nmap is not installed: scans use the built-in engine. Install nmap for its service and version detection, or set the engine to native in Settings to choose the built-in engine on purpose.';
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
