import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ConflictError, InvalidInputError, NetwardenError, NotFoundError } from '../util/errors.js';
import { DatabaseUnavailableError } from '../store/errors.js';

/** An error whose status and `detail` are meant for the client. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}

export const notAuthenticated = () => new HttpError(401, 'Not authenticated');
export const badRequest = (detail: string, extra?: Record<string, unknown>) => new HttpError(400, detail, extra);
export const notFound = (what: string) => new HttpError(404, `${what} not found`);
export const forbidden = (detail: string) => new HttpError(403, detail);
export const conflict = (detail: string, extra?: Record<string, unknown>) => new HttpError(409, detail, extra);

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

const PART_NAMES: Record<string, string> = { body: 'body', querystring: 'query parameter', params: 'path parameter' };

/** Turns the first schema violation into `name: what is wrong`. */
export function describeValidationError(errors: AjvError[], context: string | undefined): string {
  const error = errors.find((e) => e.keyword !== 'anyOf' && e.keyword !== 'if') ?? errors[0];
  const base = error.instancePath.replace(/^\//, '').split('/').join('.');
  const where = (name: string) => (base ? `${base}.${name}` : name);
  const field = base || (context === 'body' ? 'body' : (context ?? 'request'));
  switch (error.keyword) {
    case 'required':
      return `${where(String(error.params.missingProperty))}: is required`;
    case 'additionalProperties': {
      const name = String(error.params.additionalProperty);
      const kind = context === 'body' ? 'field' : (PART_NAMES[context ?? ''] ?? 'field');
      return `${where(name)}: unknown ${kind}`;
    }
    case 'enum':
      return `${field}: must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`;
    case 'type': {
      const type = String(error.params.type);
      if (field === 'body') return 'body: must be a JSON object';
      const article = /^[aeiou]/.test(type) ? 'an' : 'a';
      if (type === 'boolean' && context !== 'body') return `${field}: must be true or false`;
      return `${field}: must be ${article} ${type}`;
    }
    case 'minProperties':
      return `${field}: must contain at least one field`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `${field}: ${error.message}`;
    default:
      return `${field}: ${error.message ?? 'is invalid'}`;
  }
}

/** The HTTP status of each kind of domain error: the one place that decides it. */
function statusOf(error: NetwardenError): number {
  if (error instanceof InvalidInputError) return 400;
  if (error instanceof NotFoundError) return 404;
  if (error instanceof ConflictError) return 409;
  return 500;
}

export function errorHandler(error: FastifyError & { validationContext?: string }, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof HttpError) {
    reply.headers(error.headers);
    return reply.code(error.statusCode).send({ detail: error.detail, ...error.extra });
  }
  if (error instanceof NetwardenError) {
    return reply.code(statusOf(error)).send({ detail: error.message, ...error.extra });
  }
  if (error.validation) {
    return reply.code(400).send({ detail: describeValidationError(error.validation, error.validationContext) });
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return reply.code(413).send({ detail: `body: request body is larger than the ${mebibytes(request.routeOptions.bodyLimit)} limit` });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return reply.code(415).send({ detail: 'body: Content-Type must be application/json' });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return reply.code(400).send({ detail: 'body: Content-Type is application/json but the body is empty; send a JSON object' });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return reply.code(400).send({ detail: 'body: malformed JSON' });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return reply.code(400).send({ detail: 'body: Content-Length does not match the body' });
  }
  if (error instanceof SyntaxError && error.statusCode === 400) {
    return reply.code(400).send({ detail: `body: malformed JSON (${error.message})` });
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return reply.code(status).send({ detail: error.message });
  }
  request.log.error({ err: error }, 'request failed');
  if (error instanceof DatabaseUnavailableError) {
    if (error.retryAfterSeconds !== undefined) reply.header('Retry-After', String(error.retryAfterSeconds));
    return reply.code(503).send({ detail: error.detail });
  }
  if (isDatabaseUnavailable(error)) {
    return reply.code(503).header('Retry-After', '5').send({ detail: 'The database is unavailable; try again shortly' });
  }
  return reply.code(500).send({ detail: 'Internal server error; the server log has the details' });
}

/** A route's body limit in words (`1 MiB`); the server's default when the route has none of its own. */
function mebibytes(limit: number | undefined): string {
  return `${Math.round(((limit ?? 1024 * 1024) / (1024 * 1024)) * 10) / 10} MiB`;
}

/**
 * SQLSTATEs of a server going away under a connection in use. Failing to get a connection at all
 * (55000 not accepting connections, 57P03 starting up, 53300 too many clients, timeouts, …) is
 * already a DatabaseUnavailableError, whatever the code (store/db.ts).
 */
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
]);
const UNAVAILABLE_SOCKET_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH']);

/** A connection that failed or was dropped while in use, as opposed to a query the database refused. */
function isDatabaseUnavailable(error: unknown): boolean {
  const { code = '', message = '' } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && code !== '') {
    // Class 08: connection exception.
    return (
      code.startsWith('08') ||
      UNAVAILABLE_SQLSTATES.has(code) ||
      UNAVAILABLE_SOCKET_ERRORS.has(code) ||
      code.startsWith('SQLITE_BUSY') ||
      code === 'SQLITE_CANTOPEN'
    );
  }
  // node-postgres's own words when the server hangs up on a connection in use.
  return typeof message === 'string' && /^Connection terminated( unexpectedly| due to connection timeout)?$/.test(message);
}
