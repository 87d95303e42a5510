import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { SEVERITIES } from '../../core/severity.js';
import { CHANGE_TYPES } from '../../store/changes.js';
import { Id, Nullable, PAGED, StringEnum, Timestamp, errorResponses, pagingQuery } from '../schemas.js';

const Change = Type.Object({
  id: Type.Integer(),
  scan_id: Type.Integer(),
  change_type: StringEnum(CHANGE_TYPES),
  severity: StringEnum(SEVERITIES),
  device_id: Nullable(Type.Integer()),
  device_ip: Nullable(Type.String()),
  device_mac: Nullable(Type.String()),
  port: Nullable(Type.Integer()),
  protocol: Nullable(Type.String()),
  old_value: Nullable(Type.String()),
  new_value: Nullable(Type.String()),
  description: Type.String(),
  detected_at: Timestamp,
});

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
