import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { hashPassword, passwordProblem, verifyPassword } from '../../auth/passwords.js';
import { LOGIN_LIMITS, RateGate, clientKey, userKey } from '../../auth/throttle.js';
import { generateSessionToken } from '../../auth/tokens.js';
import { PASSWORD_MAX_LENGTH, USERNAME_MAX_LENGTH, USERNAME_MIN_LENGTH, USERNAME_PATTERN } from '../../core/limits.js';
import { addSeconds, nowIso } from '../../store/clock.js';
import { audit } from '../audit.js';
import { SESSION_COOKIE, principalOf, requireSession } from '../auth.js';
import { HttpError, badRequest, conflict, notAuthenticated } from '../errors.js';
import { errorResponses } from '../schemas.js';

const Username = Type.String({ pattern: USERNAME_PATTERN, description: `${USERNAME_MIN_LENGTH}–${USERNAME_MAX_LENGTH} of A-Z a-z 0-9 . _ -` });
const Password = Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH });
const UserBody = Type.Object({ username: Type.String() });

export const authRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store, loginThrottle, setupCode } = app.services;
  /** Throttled logins are audited at most once a minute per client address. */
  const throttledAudit = new RateGate(60_000);

  app.get(
    '/api/auth/status',
    {
      config: { public: true },
      schema: {
        tags: ['auth'],
        summary: 'Whether first-run set-up is still needed (public)',
        description:
          '`setup_code_required`: whether `POST /api/auth/setup` from this client must give `setup_code`, the one-time code the ' +
          'service prints on its console and in its log at start-up (false once set-up is complete, from this machine itself, ' +
          'and when the administrator comes from NETWARDEN_ADMIN_USERNAME/PASSWORD).',
        security: [],
        response: { 200: Type.Object({ setup_required: Type.Boolean(), setup_code_required: Type.Boolean() }) },
      },
    },
    async (request) => {
      const setup_required = (await store.users.count()) === 0;
      return { setup_required, setup_code_required: setup_required && setupCode.required(request.socket.remoteAddress, request.headers) };
    },
  );

  app.post(
    '/api/auth/setup',
    {
      config: { public: true },
      schema: {
        tags: ['auth'],
        summary: 'Create the first administrator (only while no user exists)',
        description:
          'Answers 409 once a user exists. Sets the session cookie. From another machine (not a loopback peer, or any request ' +
          'a proxy forwarded) `setup_code` is required: the one-time code the service printed on its console and in its log ' +
          'at start-up (`first-run set-up code`); without it, or with another, the answer is 403. Not needed from this machine ' +
          'itself, nor when the administrator comes from NETWARDEN_ADMIN_USERNAME/PASSWORD.',
        security: [],
        body: Type.Object(
          {
            username: Username,
            password: Password,
            remember: Type.Optional(Type.Boolean()),
            setup_code: Type.Optional(
              Type.String({ maxLength: 64, description: 'The one-time set-up code from the service log, e.g. `K7QW-M3XP-9TRV`' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 201: UserBody, ...errorResponses(400, 403, 409, 413, 415) },
      },
    },
    async (request, reply) => {
      const { username, password, remember, setup_code } = request.body;
      const problem = passwordProblem(password, username);
      if (problem) throw badRequest(`password: ${problem}`);
      if ((await store.users.count()) > 0) throw conflict('NW_SETUP_COMPLETE', 'Set-up is already complete; log in instead');
      if (setupCode.required(request.socket.remoteAddress, request.headers)) {
        if (setup_code === undefined || setup_code.trim() === '') {
          throw new HttpError(
            'NW_SETUP_CODE_REJECTED',
            'setup_code: required when setting up from another machine; the service printed it on its console and in its log at start-up ("first-run set-up code")',
          );
        }
        if (!setupCode.matches(setup_code)) {
          throw new HttpError('NW_SETUP_CODE_REJECTED', 'setup_code: does not match the code in the service log; copy it from the latest start-up');
        }
      }
      const user = await store.users.createFirst(username, await hashPassword(password));
      if (!user) throw conflict('NW_SETUP_COMPLETE', 'Set-up is already complete; log in instead');
      await startSession(request, reply, user.id, remember === true);
      await audit(request, {
        action: 'setup_completed',
        actor: username,
        actorType: 'user',
        resourceType: 'user',
        resourceId: user.id,
        success: true,
      });
      return reply.code(201).send({ username });
    },
  );

  app.post(
    '/api/auth/login',
    {
      config: { public: true },
      schema: {
        tags: ['auth'],
        summary: 'Log in and receive the session cookie',
        description:
          'Wrong credentials give 401 `{"detail":"Invalid username or password"}`. Repeated failures from one client or for one username give 429 with Retry-After.',
        security: [],
        body: Type.Object(
          { username: Type.String({ minLength: 1, maxLength: USERNAME_MAX_LENGTH }), password: Password, remember: Type.Optional(Type.Boolean()) },
          { additionalProperties: false },
        ),
        response: { 200: UserBody, ...errorResponses(400, 401, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      const { username, password, remember } = request.body;
      const byUser = userKey(username);
      const admitted = await loginThrottle.admit([
        { key: clientKey(request.ip), limit: LOGIN_LIMITS.client },
        { key: byUser, limit: LOGIN_LIMITS.user },
      ]);
      if (!admitted.ok) {
        const wait = admitted.retryAfterSeconds;
        // One audit entry per client a minute, saying how many were refused since the last one.
        const heldBack = throttledAudit.pass(request.ip);
        if (heldBack !== null) {
          await audit(request, {
            action: 'login_throttled',
            actor: username,
            actorType: 'user',
            success: false,
            details: { retry_after_seconds: wait, refused_since_last_entry: heldBack },
          });
        }
        throw new HttpError(
          'NW_TOO_MANY_ATTEMPTS',
          `Too many failed logins; try again in ${wait} seconds`,
          { retry_after: wait },
          { retryAfterSeconds: wait },
        );
      }
      const user = await store.users.findByUsername(username);
      const valid = await verifyPassword(user?.password_hash, password);
      if (!user || !valid) {
        await audit(request, {
          action: 'login_failed',
          actor: username,
          actorType: 'user',
          success: false,
          details: { reason: user ? 'wrong password' : 'unknown user' },
        });
        throw new HttpError('NW_LOGIN_FAILED', 'Invalid username or password');
      }
      await loginThrottle.succeeded(admitted.admission, [byUser]);
      await startSession(request, reply, user.id, remember === true);
      await audit(request, {
        action: 'login_success',
        actor: user.username,
        actorType: 'user',
        resourceType: 'user',
        resourceId: user.id,
        success: true,
      });
      return { username: user.username };
    },
  );

  app.post(
    '/api/auth/logout',
    {
      schema: {
        tags: ['auth'],
        summary: 'End the current session',
        response: { 200: Type.Object({ status: Type.Literal('logged_out') }), ...errorResponses(401, 403) },
      },
    },
    async (request, reply) => {
      const session = requireSession(request, 'Logging out');
      await store.sessions.delete(session.sessionId);
      clearSessionCookie(reply);
      await audit(request, { action: 'logout', resourceType: 'user', resourceId: session.userId, success: true });
      return { status: 'logged_out' as const };
    },
  );

  app.get(
    '/api/auth/me',
    {
      schema: {
        tags: ['auth'],
        summary: 'Who the current credentials belong to',
        response: {
          200: Type.Object({
            username: Type.Union([Type.String(), Type.Null()], { description: 'The user, or null for an API key' }),
            auth: Type.Union([Type.Literal('session'), Type.Literal('api_key')]),
            key_name: Type.Optional(Type.String()),
          }),
          ...errorResponses(401),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      if (principal.kind === 'session') return { username: principal.username, auth: 'session' as const };
      // An agent token never reaches this route (it opens the agent endpoints alone).
      if (principal.kind !== 'api_key') throw notAuthenticated();
      return { username: null, auth: 'api_key' as const, key_name: principal.keyName };
    },
  );

  app.post(
    '/api/auth/password',
    {
      schema: {
        tags: ['auth'],
        summary: 'Change your password; ends your other sessions',
        body: Type.Object({ current_password: Password, new_password: Password }, { additionalProperties: false }),
        response: {
          200: Type.Object({ status: Type.Literal('password_changed'), sessions_ended: Type.Integer() }),
          ...errorResponses(400, 401, 403, 429),
        },
      },
    },
    async (request) => {
      const session = requireSession(request, 'Changing the password');
      const { current_password, new_password } = request.body;
      const admitted = await loginThrottle.admit([{ key: userKey(session.username), limit: LOGIN_LIMITS.user }]);
      if (!admitted.ok) {
        const wait = admitted.retryAfterSeconds;
        throw new HttpError('NW_TOO_MANY_ATTEMPTS', `Too many failed attempts; try again in ${wait} seconds`, {}, { retryAfterSeconds: wait });
      }
      const user = await store.users.findById(session.userId);
      if (!user || !(await verifyPassword(user.password_hash, current_password))) {
        await audit(request, {
          action: 'password_changed',
          resourceType: 'user',
          resourceId: session.userId,
          success: false,
          details: { reason: 'wrong current password' },
        });
        throw badRequest('current_password: is not your current password');
      }
      await loginThrottle.succeeded(admitted.admission);
      const problem = passwordProblem(new_password, user.username);
      if (problem) throw badRequest(`new_password: ${problem}`);
      if (new_password === current_password) throw badRequest('new_password: must differ from the current password');
      await store.users.setPassword(user.id, await hashPassword(new_password));
      const ended = await store.sessions.deleteForUser(user.id, session.sessionId);
      await audit(request, {
        action: 'password_changed',
        resourceType: 'user',
        resourceId: user.id,
        success: true,
        details: { other_sessions_ended: ended },
      });
      return { status: 'password_changed' as const, sessions_ended: ended };
    },
  );
};

async function startSession(request: FastifyRequest, reply: FastifyReply, userId: number, remember: boolean): Promise<void> {
  const { store } = request.server.services;
  const settings = await store.settings.get();
  const { token, id } = generateSessionToken();
  const now = nowIso();
  const lifetimeSeconds = remember ? settings.server.remember_days * 86_400 : settings.server.session_hours * 3600;
  await store.sessions.create({
    id,
    user_id: userId,
    created_at: now,
    expires_at: addSeconds(now, lifetimeSeconds),
    last_seen_at: now,
    ip_address: request.ip,
    user_agent: request.headers['user-agent']?.slice(0, 512) ?? null,
  });
  reply.setCookie(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: request.protocol === 'https' || settings.server.secure_cookies,
    // Without "remember" the cookie ends with the browser session; the server-side expiry applies either way.
    ...(remember ? { maxAge: lifetimeSeconds } : {}),
  });
}

function clearSessionCookie(reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax' });
}
