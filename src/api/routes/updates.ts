import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { Nullable, Timestamp, errorResponses } from '../schemas.js';

const UpdateCheck = Type.Object({
  current_version: Type.String(),
  latest_version: Nullable(Type.String()),
  update_available: Type.Boolean(),
  release_url: Nullable(Type.String()),
  release_notes: Nullable(Type.String()),
  published_at: Nullable(Type.String()),
  checked_at: Timestamp,
  error: Nullable(Type.String({ description: 'Why the check could not be completed (feed unreachable, disabled, …)' })),
});

export const updateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/api/updates/check',
    {
      schema: {
        tags: ['system'],
        summary: 'Whether a newer release exists',
        description:
          'Reads the release feed named by config `updates.feed_url` (cached for `updates.cache_minutes`). Always answers 200 within a few seconds; ' +
          "an unreachable feed gives `error` text, one short line (never the answer's body or a stack). A feed on a loopback, " +
          'link-local or unspecified address is refused unless NETWARDEN_OUTBOUND_ALLOW allows it; the answer is read up to 2 MiB ' +
          '(an error answer up to 64 KiB). `force=true` bypasses the cache.',
        querystring: Type.Object({ force: Type.Optional(Type.Boolean({ default: false })) }, { additionalProperties: false }),
        response: { 200: UpdateCheck, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const settings = await app.services.store.settings.get();
      return app.services.updateChecker.check(settings.updates, request.query.force === true);
    },
  );
};
