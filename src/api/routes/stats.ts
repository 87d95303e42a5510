import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { Stats, Trends } from '../../schemas/stats.js';
import { errorResponses } from '../schemas.js';

export const statsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.services;

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
    async () => store.stats.stats(),
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
