import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { UserRecord } from '../../schemas/user.js';
import { principalOf } from '../auth.js';
import { errorResponses } from '../schemas.js';

export const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app.services;

  app.get(
    '/api/users',
    {
      schema: {
        tags: ['auth'],
        summary: 'List the user accounts (never their passwords)',
        description:
          'Every account that can log in to the web interface, oldest first. Accounts are made by the first-run set-up and by ' +
          '`netwarden user create` on the server; `netwarden user reset-password` sets a forgotten password.',
        response: { 200: Type.Array(UserRecord), ...errorResponses(401) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const me = principal.kind === 'session' ? principal.userId : null;
      return (await store.users.list()).map((user) => ({
        id: user.id,
        username: user.username,
        created_at: user.created_at,
        password_changed_at: user.password_changed_at,
        current: user.id === me,
      }));
    },
  );
};
