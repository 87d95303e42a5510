import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { Change } from '../../schemas/change.js';
import { CHANGE_FILTER_PARAMS, changeFiltersOf } from '../list-filters.js';
import { PAGED, errorResponses, pagingQuery } from '../schemas.js';

export const changeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/changes',
    {
      schema: {
        tags: ['changes'],
        summary: 'Changes detected between scans, newest first',
        description: `Filters combine with AND. ${PAGED}`,
        querystring: Type.Object(
          {
            ...CHANGE_FILTER_PARAMS,
            ...pagingQuery(),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Array(Change), ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const { limit = 100, offset = 0, ...filters } = request.query;
      const { rows, total } = await app.services.store.changes.list({
        ...changeFiltersOf(filters),
        limit,
        offset,
      });
      reply.header('X-Total-Count', total);
      return rows;
    },
  );
};
