import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SCAN_ENGINE_NAMES } from '../../core/model.js';
import { DatabaseUnavailableError } from '../../store/errors.js';
import { Timestamp } from '../schemas.js';

const HealthBody = Type.Object({
  status: Type.String({ description: '`healthy`, or `unhealthy` when the database cannot be reached' }),
  timestamp: Timestamp,
  version: Type.String(),
  database: Type.String({ description: '`ok` or `unreachable`' }),
  engine: Type.Union([...SCAN_ENGINE_NAMES.map((name) => Type.Literal(name)), Type.Null()], {
    description: 'Scan engine a scan started now would use (null when the configuration cannot be read)',
  }),
  detail: Type.Optional(Type.String({ description: 'When unhealthy: what is wrong' })),
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
        const { engine } = await scans.engines.info(settings.scanning.engine);
        return { status: 'healthy', timestamp, version, database: 'ok', engine };
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
