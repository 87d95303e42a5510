import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorCode } from '../util/errors.js';
import { STATUS_OF_CODE } from './errors.js';

/*
 * Failures Fastify would otherwise answer by itself, outside the hooks and the error handler,
 * with its own body: the answers here follow the contract (`{"detail","code"}`) like every other.
 */

/**
 * A request the router could not match at all (malformed percent-encoding in the path, a path
 * parameter over `maxParamLength`). Fastify answers those itself, before any hook runs: no
 * request id, no security headers, no log line, no `{"detail"}` body, no 401. Instead they are
 * routed a second time to a path no route has, so they take the ordinary not-found path through
 * every hook, and the not-found handler answers with what is remembered here.
 */
export interface RouterError {
  code: ErrorCode;
  detail: string;
  /** The path as the client sent it (the request's own URL is the internal one). */
  path: string;
}

const REROUTED_PATH = '/.netwarden/unroutable';
const routerErrors = new WeakMap<IncomingMessage, RouterError>();

/** Fastify's `frameworkErrors` option: remembers what went wrong and routes the request again. */
export function rerouteFrameworkErrors(app: () => FastifyInstance, maxParamLength: number) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const raw = request.raw;
    const path = (raw.url ?? '/').split('?')[0];
    routerErrors.set(raw, { path, ...describe(error, maxParamLength) });
    raw.url = REROUTED_PATH;
    app().routing(raw, reply.raw);
  };
}

function describe(error: FastifyError, maxParamLength: number): Omit<RouterError, 'path'> {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return { code: 'NW_INVALID_PATH', detail: 'path: is not a valid URL path (malformed percent-encoding)' };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { code: 'NW_INVALID_PATH', detail: `path: a path parameter is longer than ${maxParamLength} characters` };
    default:
      return { code: 'NW_INTERNAL', detail: 'Internal server error; the server log has the details' };
  }
}

/** What the router could not route for this request, if that is why it is here. */
export function routerErrorOf(request: FastifyRequest): RouterError | undefined {
  return routerErrors.get(request.raw);
}

/** The path the client asked for, without the query: for logs and messages. */
export function requestedPath(request: FastifyRequest): string {
  const routerError = routerErrors.get(request.raw);
  if (routerError) return routerError.path;
  // The path before any query (as split('?')[0], without the array: every request's log line asks).
  const url = request.url;
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * Fastify's `clientErrorHandler` option: a request Node's HTTP parser rejects (malformed, headers
 * too large, too slow) never becomes a request, so nothing else can answer it. Answered in the
 * contract's shape, with an id that the warning in the log carries too.
 */
export function answerClientError(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [code, detail]: [ErrorCode, string] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? ['NW_REQUEST_TIMEOUT', 'The request was not received in time']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? ['NW_HEADERS_TOO_LARGE', 'The request headers are too large']
        : ['NW_MALFORMED_REQUEST', 'Malformed HTTP request'];
  const status = STATUS_OF_CODE[code];
  const id = randomUUID();
  this.log.warn({ reqId: id, status, err: error }, 'malformed HTTP request refused');
  if (socket.writable) {
    const body = JSON.stringify({ detail, code });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${id}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
