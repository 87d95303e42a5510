import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RateGate } from '../auth/throttle.js';
import { ApiKeyCache } from '../auth/api-key-cache.js';
import { AGENT_TOKEN_PREFIX, looksLikeAgentToken, looksLikeApiKey, sha256Hex } from '../auth/tokens.js';
import { apiKeyStatus } from '../store/api-keys.js';
import type { ApiKeyRow } from '../store/schema.js';
import { isoTime } from '../util/iso-time.js';
import type { Store } from '../store/index.js';
import { HttpError, forbidden, notAuthenticated } from './errors.js';

export const SESSION_COOKIE = 'netwarden_session';

export type Principal =
  | { kind: 'session'; userId: number; username: string; sessionId: string; actor: string }
  | { kind: 'api_key'; keyId: number; keyName: string; actor: string }
  /** An agent's token: accepted by the agent endpoints (`config: { agent: true }`) only. */
  | { kind: 'agent'; agentId: number; agentName: string; actor: string };

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** Route answers without authentication. */
    public?: boolean;
    /** Route of the agent endpoints: authenticated by an agent token alone (CONTRACT §12). */
    agent?: boolean;
  }
}

/** `last_used_at` and session `last_seen_at` are written at most this often per credential. */
const TOUCH_INTERVAL_MS = 60_000;
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export class Authenticator {
  /** Failed key attempts are audited at most once a minute per client address. */
  private readonly rejectedKeyAudit = new RateGate(60_000);

  /** Verified keys in memory: no database query per request (see api-key-cache.ts for revocation). */
  private readonly keys: ApiKeyCache;

  constructor(private readonly store: Store) {
    this.keys = new ApiKeyCache(store.apiKeys);
  }

  /** Resolves the request's credentials; throws 401/403 when they are present but not acceptable. */
  async authenticate(request: FastifyRequest): Promise<Principal | null> {
    const key = presentedApiKey(request);
    // An agent token opens the agent endpoints and nothing else (CONTRACT §12).
    if (key !== undefined && key.startsWith(AGENT_TOKEN_PREFIX)) throw notAuthenticated();
    if (key !== undefined) return this.authenticateKey(request, key);
    const token = request.cookies[SESSION_COOKIE];
    if (token) return this.authenticateSession(request, token);
    return null;
  }

  /**
   * The principal of a request whose API key was verified a moment ago (ApiKeyCache.findCached),
   * decided without waiting for anything; undefined when `authenticate` must be asked (no key, a
   * session, a key not in the cache or due for its checks, one not active). Answers only what
   * `authenticate` would answer for the same request at the same moment.
   */
  authenticateCached(request: FastifyRequest): Principal | undefined {
    const key = presentedApiKey(request);
    if (key === undefined || !looksLikeApiKey(key)) return undefined;
    const digest = sha256Hex(key);
    const match = this.keys.findCached(digest);
    if (!match) return undefined;
    const nowMs = Date.now();
    const now = isoTime(nowMs);
    if (apiKeyStatus(match, now) !== 'active') return undefined;
    this.touchKey(request, match, digest, nowMs, now);
    return { kind: 'api_key', keyId: match.id, keyName: match.name, actor: match.name };
  }

  /**
   * The agent endpoints: only `Authorization: Bearer nwa_…` of an agent not revoked (looked up by
   * the token's SHA-256 on every request, so a revocation on any instance holds at once). A
   * session or an API key is refused here as everywhere else an agent token is.
   */
  async authenticateAgent(request: FastifyRequest): Promise<Principal> {
    const authorization = request.headers.authorization;
    const m = typeof authorization === 'string' ? authorization.match(/^Bearer\s+(\S+)\s*$/i) : null;
    const token = m?.[1];
    if (!token || !looksLikeAgentToken(token) || request.headers['x-api-key'] !== undefined) throw notAuthenticated();
    const agent = await this.store.agents.byTokenHash(sha256Hex(token));
    if (!agent) throw notAuthenticated();
    return { kind: 'agent', agentId: agent.id, agentName: agent.name, actor: `agent:${agent.name}` };
  }

  private async authenticateKey(request: FastifyRequest, key: string): Promise<Principal> {
    let match;
    let digest = '';
    if (looksLikeApiKey(key)) {
      digest = sha256Hex(key);
      match = await this.keys.find(key, digest);
    }
    const nowMs = Date.now();
    const now = isoTime(nowMs);
    if (!match || apiKeyStatus(match, now) !== 'active') {
      await this.auditRejectedKey(request, match ? { key_id: match.id, key_name: match.name, status: apiKeyStatus(match, now) } : {});
      throw notAuthenticated();
    }
    this.touchKey(request, match, digest, nowMs, now);
    return { kind: 'api_key', keyId: match.id, keyName: match.name, actor: match.name };
  }

  /** Records the key's use (`last_used_at`), at most once per TOUCH_INTERVAL_MS. */
  private touchKey(request: FastifyRequest, match: ApiKeyRow, digest: string, nowMs: number, now: string): void {
    if (!match.last_used_at || nowMs - lastUsedMs(match, match.last_used_at) > TOUCH_INTERVAL_MS) {
      this.keys.noteUsed(digest, now);
      this.store.apiKeys.markUsed(match.id, now).catch((err) => request.log.warn({ err }, 'could not record API key use'));
    }
  }

  private async authenticateSession(request: FastifyRequest, token: string): Promise<Principal> {
    const nowMs = Date.now();
    const now = isoTime(nowMs);
    const session = token.length <= 128 ? await this.store.sessions.findActive(sha256Hex(token), now) : undefined;
    if (!session) throw notAuthenticated();
    refuseCrossSiteWrite(request);
    if (nowMs - Date.parse(session.last_seen_at) > TOUCH_INTERVAL_MS) {
      this.store.sessions.touch(session.id, now).catch((err) => request.log.warn({ err }, 'could not update session'));
    }
    return { kind: 'session', userId: session.user_id, username: session.username, sessionId: session.id, actor: session.username };
  }

  private async auditRejectedKey(request: FastifyRequest, details: Record<string, unknown>): Promise<void> {
    if (!this.rejectedKeyAudit.allow(request.ip)) return;
    await this.store.audit.write({
      action: 'api_key_rejected',
      actor: typeof details.key_name === 'string' ? details.key_name : null,
      actorType: 'api_key',
      resourceType: 'api_key',
      resourceId: (details.key_id as number | undefined) ?? null,
      details: { ...details, path: request.routeOptions.url ?? request.url.split('?')[0] },
      ipAddress: request.ip,
      userAgent: request.headers['user-agent'] ?? null,
      success: false,
    });
  }
}

/**
 * `Date.parse(row.last_used_at)`, parsed once per row: the cache replaces a row when its use is
 * noted (ApiKeyCache.noteUsed), so a row's `last_used_at` never changes while it is a key here.
 */
const lastUsedParsed = new WeakMap<ApiKeyRow, number>();
function lastUsedMs(row: ApiKeyRow, lastUsedAt: string): number {
  let ms = lastUsedParsed.get(row);
  if (ms === undefined) {
    ms = Date.parse(lastUsedAt);
    lastUsedParsed.set(row, ms);
  }
  return ms;
}

function presentedApiKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string') return header.trim();
  if (Array.isArray(header)) return header[0]?.trim();
  const authorization = request.headers.authorization;
  if (authorization) {
    const m = authorization.match(/^Bearer\s+(\S+)\s*$/i);
    // Some other scheme (Basic, …) is not a credential this API accepts.
    return m ? m[1] : '';
  }
  return undefined;
}

/**
 * A browser sends the session cookie (and can post a login form) on requests other sites make:
 * such writes are refused, so another site can neither act with a user's session nor log the
 * browser into an account of its choosing (login CSRF).
 */
function refuseCrossSiteWrite(request: FastifyRequest): void {
  if (UNSAFE_METHODS.has(request.method) && !sameOrigin(request)) {
    throw forbidden('NW_CROSS_ORIGIN', 'Cross-origin request refused: the Origin header does not match this server');
  }
}

/**
 * Refuses a request another site made in the user's browser, whatever its method: for reads whose
 * answer is sensitive in itself (the whole database as a download).
 */
export function refuseCrossSite(request: FastifyRequest, what: string): void {
  if (!sameOrigin(request)) throw forbidden('NW_CROSS_ORIGIN', `${what} from another site is refused: open it from this server's own pages`);
}

/** True when there is no Origin header (not a browser cross-site request) or it names this server. */
function sameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) {
    // Fetch metadata is sent by every current browser; refuse an explicit cross-site request.
    return request.headers['sec-fetch-site'] !== 'cross-site';
  }
  try {
    return new URL(origin).host === request.host;
  } catch {
    return false;
  }
}

/** Registers the hook that authenticates every route not marked `config: { public: true }`. */
export function registerAuthentication(app: FastifyInstance, authenticator: Authenticator): void {
  app.decorateRequest('principal', null);
  const authenticate = async (request: FastifyRequest): Promise<void> => {
    if (request.routeOptions.config.agent) {
      request.principal = await authenticator.authenticateAgent(request);
      return;
    }
    if (request.routeOptions.config.public) {
      // Public writes (set-up, login) need no credentials but are still refused from other sites.
      refuseCrossSiteWrite(request);
      return;
    }
    const principal = await authenticator.authenticate(request);
    if (!principal) throw notAuthenticated();
    request.principal = principal;
  };
  // A callback hook, so that a key verified a moment ago lets the request on at once (no promise);
  // everything else goes through `authenticate` above.
  app.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
    // The Swagger UI's own routes (registered by @fastify/swagger-ui) are public like /openapi.json.
    if (request.is404 || request.url.startsWith('/docs')) return done();
    const config = request.routeOptions.config;
    if (!config.agent && !config.public) {
      let principal: Principal | undefined;
      try {
        principal = authenticator.authenticateCached(request);
      } catch (err) {
        return done(err as Error);
      }
      if (principal) {
        request.principal = principal;
        return done();
      }
    }
    authenticate(request).then(() => done(), done);
  });
}

/** The authenticated principal of a protected route. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw notAuthenticated();
  return request.principal;
}

/** The agent of a request to an agent endpoint. */
export function agentOf(request: FastifyRequest): Extract<Principal, { kind: 'agent' }> {
  const principal = principalOf(request);
  if (principal.kind !== 'agent') throw notAuthenticated();
  return principal;
}

/** Requires a browser session (not an API key) for the current request. */
export function requireSession(request: FastifyRequest, what: string): Extract<Principal, { kind: 'session' }> {
  const principal = principalOf(request);
  if (principal.kind !== 'session') throw new HttpError('NW_SESSION_REQUIRED', `${what} needs a logged-in session; an API key cannot do this`);
  return principal;
}
