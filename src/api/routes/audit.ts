import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { AUDIT_ACTION_NAMES } from '../../core/audit-actions.js';
import { AuditRecord } from '../../schemas/audit.js';
import { PAGED, StringEnum, errorResponses, pagingQuery } from '../schemas.js';

export const auditRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.services;

  app.get(
    '/api/audit-logs',
    {
      schema: {
        tags: ['audit'],
        summary: 'Audit log, newest first',
        description: PAGED,
        querystring: Type.Object(
          {
            action: Type.Optional(StringEnum(AUDIT_ACTION_NAMES, { description: 'One of GET /api/audit-logs/actions' })),
            actor: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Username or API key name' })),
            ...pagingQuery(),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Array(AuditRecord), ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const { action, actor, limit = 100, offset = 0 } = request.query;
      const { rows, total } = await store.audit.list({ action, actor, limit, offset });
      reply.header('X-Total-Count', total);
      return rows;
    },
  );

  app.get(
    '/api/audit-logs/actions',
    {
      schema: {
        tags: ['audit'],
        summary: 'Every action name the service writes to the audit log',
        response: { 200: Type.Array(Type.String()), ...errorResponses(401) },
      },
    },
    async () => AUDIT_ACTION_NAMES,
  );
};
