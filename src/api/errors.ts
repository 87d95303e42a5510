import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CODES, NetwardenError, type ErrorCode } from '../util/errors.js';

/**
 * The HTTP status of each error code: the one place that decides it. The internal codes (which
 * never reach a client as such) are 500: one escaping to the API is a fault, answered `NW_INTERNAL`.
 */
export const STATUS_OF_CODE: Record<ErrorCode, number> = {
  NW_INVALID_INPUT: 400,
  NW_INTEL_FORMAT: 400,
  NW_VALIDATION: 400,
  NW_MALFORMED_BODY: 400,
  NW_INVALID_PATH: 400,
  NW_MALFORMED_REQUEST: 400,
  NW_INVALID_TARGET: 400,
  NW_TARGET_NOT_ALLOWED: 400,
  NW_REPORT_REJECTED: 400,
  NW_SCAN_INPUT: 400,
  NW_INVALID_SCHEDULE: 400,
  NW_ENGINE_UNAVAILABLE: 400,
  NW_NOT_AUTHENTICATED: 401,
  NW_LOGIN_FAILED: 401,
  NW_CROSS_ORIGIN: 403,
  NW_SESSION_REQUIRED: 403,
  NW_SETUP_CODE_REJECTED: 403,
  NW_TOO_MANY_ATTEMPTS: 429,
  NW_NOT_FOUND: 404,
  NW_ROUTE_NOT_FOUND: 404,
  NW_METHOD_NOT_ALLOWED: 405,
  NW_SCAN_NOT_FOUND: 404,
  NW_DEVICE_NOT_FOUND: 404,
  NW_SCHEDULE_NOT_FOUND: 404,
  NW_CHANNEL_NOT_FOUND: 404,
  NW_API_KEY_NOT_FOUND: 404,
  NW_AGENT_NOT_FOUND: 404,
  NW_ACCEPTANCE_NOT_FOUND: 404,
  NW_CONFLICT: 409,
  NW_ALREADY_ACCEPTED: 409,
  NW_SCAN_BUSY: 409,
  NW_SCAN_NOT_RUNNING: 409,
  NW_SCAN_HELD_ELSEWHERE: 409,
  NW_UPLOAD_IN_PROGRESS: 409,
  NW_SETUP_COMPLETE: 409,
  NW_REQUEST_TIMEOUT: 408,
  NW_BODY_TOO_LARGE: 413,
  NW_UNSUPPORTED_MEDIA_TYPE: 415,
  NW_HEADERS_TOO_LARGE: 431,
  // The framework's own 4xx keeps the status it chose; 400 is the usual one.
  NW_REQUEST_REJECTED: 400,
  NW_INTERNAL: 500,
  NW_DATABASE_UNAVAILABLE: 503,
  NW_CONFIG: 500,
  NW_CLI: 500,
  NW_HTTP_REQUEST_FAILED: 500,
  NW_OUTBOUND_REFUSED: 500,
  NW_DELIVERY_FAILED: 500,
  NW_NAME_SOURCE_FAILED: 500,
  NW_AGENT_REQUEST_FAILED: 500,
  NW_AGENT_TOKEN_REFUSED: 500,
  NW_SCAN_ABORTED: 500,
  NW_JOB_NOT_STARTABLE: 500,
  NW_CVE_DATA_INVALID: 500,
  NW_CVE_FEED_INVALID: 500,
  NW_INVALID_VERSION_RANGE: 500,
  NW_BACKUP_FILE_INVALID: 500,
  NW_RESTORE_REFUSED: 500,
};

/** The codes an error answer with this status may carry, in ERROR_CODES order (for the OpenAPI document). */
export function codesOfStatus(status: number): ErrorCode[] {
  return (Object.keys(STATUS_OF_CODE) as ErrorCode[]).filter((code) => STATUS_OF_CODE[code] === status);
}

/**
 * The table of error codes in README.md (scripts/generate-error-table.mjs writes it there): each
 * code with the status it is answered with and what it means; internal codes last, without a status.
 */
export function errorCodeTable(): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  const rows = (Object.entries(ERROR_CODES) as [ErrorCode, string][]).map(([code, meaning]) => {
    const internal = meaning.startsWith('(internal) ');
    return `| \`${code}\` | ${internal ? '—' : STATUS_OF_CODE[code]} | ${cell(internal ? meaning.slice('(internal) '.length) : meaning)} |`;
  });
  return ['| Code | Status | Meaning |', '|---|---|---|', ...rows].join('\n') + '\n';
}

/**
 * An error the API layer itself answers with: its `code` (and so its status) is chosen where it
 * is thrown, its `detail` is meant for the client as written.
 */
export class HttpError extends NetwardenError {
  /** Response headers besides Retry-After (Allow of a 405). */
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    detail: string,
    extra: Record<string, unknown> = {},
    options: { headers?: Record<string, string>; retryAfterSeconds?: number } = {},
  ) {
    super(detail, extra, { retryAfterSeconds: options.retryAfterSeconds });
    this.headers = options.headers ?? {};
  }

  get statusCode(): number {
    return STATUS_OF_CODE[this.code];
  }
}

/** What a 404 can be about, and its code. */
const NOT_FOUND_CODES = {
  Scan: 'NW_SCAN_NOT_FOUND',
  Device: 'NW_DEVICE_NOT_FOUND',
  Channel: 'NW_CHANNEL_NOT_FOUND',
  'API key': 'NW_API_KEY_NOT_FOUND',
  Agent: 'NW_AGENT_NOT_FOUND',
  Acceptance: 'NW_ACCEPTANCE_NOT_FOUND',
} as const satisfies Record<string, ErrorCode>;

export const notAuthenticated = () => new HttpError('NW_NOT_AUTHENTICATED', 'Not authenticated');
export const badRequest = (detail: string, extra?: Record<string, unknown>) => new HttpError('NW_INVALID_INPUT', detail, extra);
export const notFound = (what: keyof typeof NOT_FOUND_CODES) => new HttpError(NOT_FOUND_CODES[what], `${what} not found`);
export const forbidden = (code: ErrorCode, detail: string) => new HttpError(code, detail);
export const conflict = (code: ErrorCode, detail: string, extra?: Record<string, unknown>) => new HttpError(code, detail, extra);

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

/** A body limit in words: `1 MiB`, `50 MiB`. */
function sizeText(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

const INTERNAL_DETAIL = 'Internal server error; the server log has the details';

/**
 * The answer to an error: `{"detail","code", ...extra}` with the status of the code, and
 * Retry-After when the error says when to try again. A 401 is only `{"detail"}`, whatever the
 * cause: it tells an unauthenticated client nothing more.
 */
function answer(
  reply: FastifyReply,
  status: number,
  code: ErrorCode,
  detail: string,
  extra: Record<string, unknown> = {},
  retryAfterSeconds?: number,
) {
  if (retryAfterSeconds !== undefined) reply.header('Retry-After', String(retryAfterSeconds));
  if (status === 401) return reply.code(401).send({ detail });
  return reply.code(status).send({ detail, code, ...extra });
}

export function errorHandler(error: FastifyError & { validationContext?: string }, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof HttpError) {
    reply.headers(error.headers);
    return answer(reply, error.statusCode, error.code, error.detail, error.extra, error.retryAfterSeconds);
  }
  if (error instanceof NetwardenError) {
    const status = STATUS_OF_CODE[error.code];
    if (status < 500) return answer(reply, status, error.code, error.detail, error.extra, error.retryAfterSeconds);
    request.log.error({ err: error }, 'request failed');
    if (status === 500) return answer(reply, 500, 'NW_INTERNAL', INTERNAL_DETAIL);
    return answer(reply, status, error.code, error.detail, error.extra, error.retryAfterSeconds);
  }
  if (error.validation) {
    return answer(reply, 400, 'NW_VALIDATION', describeValidationError(error.validation, error.validationContext));
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return answer(
        reply,
        413,
        'NW_BODY_TOO_LARGE',
        `body: request body is larger than the ${sizeText(request.routeOptions?.bodyLimit ?? 1024 * 1024)} limit`,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return answer(reply, 415, 'NW_UNSUPPORTED_MEDIA_TYPE', 'body: Content-Type must be application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return answer(reply, 400, 'NW_MALFORMED_BODY', 'body: Content-Type is application/json but the body is empty; send a JSON object');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return answer(reply, 400, 'NW_MALFORMED_BODY', 'body: malformed JSON');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return answer(reply, 400, 'NW_MALFORMED_BODY', 'body: Content-Length does not match the body');
  }
  if (error instanceof SyntaxError && error.statusCode === 400) {
    return answer(reply, 400, 'NW_MALFORMED_BODY', `body: malformed JSON (${error.message})`);
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return answer(reply, status, 'NW_REQUEST_REJECTED', error.message);
  }
  request.log.error({ err: error }, 'request failed');
  if (isDatabaseUnavailable(error)) {
    return answer(reply, 503, 'NW_DATABASE_UNAVAILABLE', 'The database is unavailable; try again shortly', {}, 5);
  }
  return answer(reply, 500, 'NW_INTERNAL', INTERNAL_DETAIL);
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
