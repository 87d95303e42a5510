import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { generateApiKey } from '../../auth/tokens.js';
import { API_KEY_NAME_MAX_LENGTH } from '../../core/limits.js';
import { CreatedKey, KeyRecord } from '../../schemas/key.js';
import { toKeyRecord } from '../../store/api-keys.js';
import { addSeconds, nowIso } from '../../store/clock.js';
import { audit } from '../audit.js';
import { requireSession } from '../auth.js';
import { badRequest, notFound } from '../errors.js';
import { Id, errorResponses } from '../schemas.js';

export const keyRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.services;

  app.get(
    '/api/keys',
    {
      schema: { tags: ['keys'], summary: 'List API keys (never their values)', response: { 200: Type.Array(KeyRecord), ...errorResponses(401) } },
    },
    async () => (await store.apiKeys.list()).map(toKeyRecord),
  );

  app.post(
    '/api/keys',
    {
      schema: {
        tags: ['keys'],
        summary: 'Create an API key (needs a session; the key is shown once)',
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: API_KEY_NAME_MAX_LENGTH }),
            expires_in_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: CreatedKey, ...errorResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request, reply) => {
      const session = requireSession(request, 'Creating an API key');
      const name = request.body.name.trim();
      if (!name) throw badRequest('name: must not be blank');
      const { key, prefix, hash } = generateApiKey();
      const now = nowIso();
      const days = request.body.expires_in_days;
      const row = await store.apiKeys.create({
        name,
        prefix,
        key_hash: hash,
        created_by: session.userId,
        created_at: now,
        expires_at: days ? addSeconds(now, days * 86_400) : null,
      });
      await audit(request, {
        action: 'api_key_created',
        resourceType: 'api_key',
        resourceId: row.id,
        success: true,
        details: { name, prefix, expires_at: row.expires_at },
      });
      return reply.code(201).send({ id: row.id, name: row.name, key, prefix, created_at: row.created_at, expires_at: row.expires_at });
    },
  );

  app.delete(
    '/api/keys/:key_id',
    {
      schema: {
        tags: ['keys'],
        summary: 'Revoke an API key (effective on its next request; revoking twice changes nothing)',
        params: Type.Object({ key_id: Id }),
        response: {
          200: Type.Object({ status: Type.Literal('revoked'), id: Type.Integer(), name: Type.String() }),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request) => {
      const existing = await store.apiKeys.get(request.params.key_id);
      if (!existing) throw notFound('API key');
      if (!existing.revoked_at) {
        await store.apiKeys.revoke(existing.id);
        await audit(request, {
          action: 'api_key_revoked',
          resourceType: 'api_key',
          resourceId: existing.id,
          success: true,
          details: { name: existing.name, prefix: existing.prefix },
        });
      }
      return { status: 'revoked' as const, id: existing.id, name: existing.name };
    },
  );
};
