import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { CHANGE_TYPES } from '../../core/changes.js';
import { SEVERITIES } from '../../core/severity.js';
import { Change } from '../../schemas/change.js';
import { Id, PAGED, StringEnum, errorResponses, pagingQuery } from '../schemas.js';

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
            scan_id: Type.Optional(Id),
            change_type: Type.Optional(StringEnum(CHANGE_TYPES)),
            severity: Type.Optional(StringEnum(SEVERITIES)),
            device_id: Type.Optional(Id),
            ...pagingQuery(),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Array(Change), ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const { scan_id, change_type, severity, device_id, limit = 100, offset = 0 } = request.query;
      const { rows, total } = await app.services.store.changes.list({
        scanId: scan_id,
        changeType: change_type,
        severity,
        deviceId: device_id,
        limit,
        offset,
      });
      reply.header('X-Total-Count', total);
      return rows;
    },
  );
};
