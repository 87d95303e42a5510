import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { Stats, Trends } from '../../schemas/stats.js';
import { VersionedCache } from '../../store/versioned-cache.js';
import { errorResponses } from '../schemas.js';

/** Longest the answer is reused even when no write was seen (as the counts it is made of: store/stats.ts). */
const BODY_CACHE_MS = 60_000;

export const statsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.services;
  // The answer as sent (serialized by the route's schema), kept while the inventory's data version
  // is the one its counts were read at, as the device list's pages are: a dashboard polling the
  // counts costs a version check, and neither a query nor serializing them again.
  const bodies = new VersionedCache<string>(() => store.currentDataVersion(), BODY_CACHE_MS, 1);

  app.get(
    '/api/stats',
    {
      schema: {
        tags: ['stats'],
        summary: 'Counts over the device inventory',
        description: '`last_scan` is when the latest completed scan finished, or null.',
        response: { 200: Stats, ...errorResponses(401) },
      },
    },
    (_request, reply) => {
      // A string with a JSON content type is sent as it is (already serialized); the cast only tells the type provider so.
      const send = (body: string): void => {
        reply.type('application/json; charset=utf-8').send(body as unknown as Stats);
      };
      // The common case, a body kept at the version now known without asking the database: sent
      // at once, without the promises of the general path below (same answer, same headers).
      const version = store.dataVersionIfFresh();
      const kept = version === undefined ? undefined : bodies.peek('stats', version);
      if (kept !== undefined) {
        send(kept);
        return;
      }
      return bodies.get('stats', async () => reply.serializeInput(await store.stats.stats(), '200') as string).then(send);
    },
  );

  app.get(
    '/api/trends',
    {
      schema: {
        tags: ['stats'],
        summary: 'One point per completed network scan over the last `days` days, oldest first',
        querystring: Type.Object({ days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650, default: 30 })) }, { additionalProperties: false }),
        response: { 200: Trends, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const days = request.query.days ?? 30;
      return { days, points: await store.stats.trends(days) };
    },
  );
};
