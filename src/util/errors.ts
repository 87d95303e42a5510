/**
 * Every stable error code Netwarden uses, with what it means. A code is never reworded or reused:
 * API clients and scripts match on it (`{"detail","code"}`), where `detail` is written for a person
 * and may change. `api/errors.ts` gives each code its HTTP status (STATUS_OF_CODE); README.md's
 * table of codes is generated from this one (scripts/generate-error-table.mjs).
 *
 * Codes marked "(internal)" name failures that never reach an API client as such: the CLI, the
 * agent or a background job handles them, and should one escape to the API it is answered as
 * `NW_INTERNAL` (500) and logged.
 */
export const ERROR_CODES = {
  // The request is wrong (400): the client must change it.
  NW_INVALID_INPUT: 'A field of the request has a value that cannot be used; `detail` names the field',
  NW_INTEL_FORMAT: 'A KEV or EPSS file is not in the format it must have; the message names the place (CLI only)',
  NW_VALIDATION: "The request does not match the route's schema: a field or parameter is missing, unknown or of the wrong type",
  NW_MALFORMED_BODY: 'The body cannot be read as JSON: malformed, empty, or not as long as Content-Length says',
  NW_INVALID_PATH: 'The URL path cannot be routed: malformed percent-encoding or a path parameter that is too long',
  NW_MALFORMED_REQUEST: 'The HTTP request itself is malformed; the connection is closed',
  NW_INVALID_TARGET: 'The scan target is not a valid subnet or address, or is larger than scanning.max_hosts',
  NW_TARGET_NOT_ALLOWED: 'The scan target is outside the allowed targets (scanning.allowed_targets / NETWARDEN_SCAN_ALLOW)',
  NW_REPORT_REJECTED: 'The nmap XML report is refused: not safe to parse, not well-formed, not an nmap report, or nothing to import',
  NW_SCAN_INPUT: "A scan result is out of bounds (an agent upload's host, port or text); `detail` names the element",
  NW_INVALID_SCHEDULE: 'A schedule field is invalid: cron expression, time zone, profile or subnet',
  NW_ENGINE_UNAVAILABLE: 'The configured scan engine cannot run on this server (nmap is not installed)',
  // Who is asking (401, 403, 429).
  NW_NOT_AUTHENTICATED: 'No valid session, API key or agent token (the 401 body is only `{"detail"}`)',
  NW_LOGIN_FAILED: 'Wrong username or password (the 401 body is only `{"detail"}`)',
  NW_CROSS_ORIGIN: 'A request from another site (its Origin) is refused',
  NW_SESSION_REQUIRED: 'Only a logged-in session may do this; an API key cannot',
  NW_SETUP_CODE_REJECTED: 'First-run set-up from another machine needs the set-up code the service logged, and this one is missing or wrong',
  NW_TOO_MANY_ATTEMPTS: 'Too many failed attempts from this client or for this user; wait for Retry-After seconds',
  // What the request names (404, 405).
  NW_NOT_FOUND: 'What the request names does not exist',
  NW_ROUTE_NOT_FOUND: 'No route has this method and path',
  NW_METHOD_NOT_ALLOWED: 'The path exists but not with this method; the Allow header lists the methods',
  NW_SCAN_NOT_FOUND: 'No scan has this id (or, for an agent, the scan is not its own)',
  NW_DEVICE_NOT_FOUND: 'No device has this id; `missing` lists the ids of a bulk update that do not exist',
  NW_SCHEDULE_NOT_FOUND: 'No schedule has this id',
  NW_CHANNEL_NOT_FOUND: 'No notification channel has this id',
  NW_API_KEY_NOT_FOUND: 'No API key has this id',
  NW_AGENT_NOT_FOUND: 'No agent has this id',
  NW_ACCEPTANCE_NOT_FOUND: 'No active acceptance has this id (an ended one cannot be removed again)',
  // The current state (409).
  NW_CONFLICT: 'The request is valid but conflicts with the current state',
  NW_ALREADY_ACCEPTED: 'The finding already has an active acceptance on this device',
  NW_SCAN_BUSY: 'A scan of an overlapping target is already running or queued; `scan_id` names it',
  NW_SCAN_NOT_RUNNING: 'The scan has already ended; `scan_id` and `status` say which and how',
  NW_SCAN_HELD_ELSEWHERE: "Another run of this agent holds the scan; this run's results are not taken",
  NW_UPLOAD_IN_PROGRESS: "The agent's results for this scan are being recorded; retry after Retry-After seconds",
  NW_SETUP_COMPLETE: 'First-run set-up is already done; log in instead',
  // The request's form (408, 413, 415, 431).
  NW_REQUEST_TIMEOUT: 'The request was not received in time; the connection is closed',
  NW_BODY_TOO_LARGE: "The body is larger than the route's limit",
  NW_UNSUPPORTED_MEDIA_TYPE: "The body's Content-Type or charset is not the one the route takes",
  NW_HEADERS_TOO_LARGE: 'The request headers are too large; the connection is closed',
  NW_REQUEST_REJECTED: 'The HTTP framework refused the request (a 4xx it chose); `detail` says why',
  // The server (500, 503).
  NW_INTERNAL: 'An unexpected server error; the server log has the details (the body says nothing more)',
  NW_DATABASE_UNAVAILABLE: 'The database cannot serve requests right now; retry after Retry-After seconds when given',
  // Internal: handled by the CLI, the agent or a background job.
  NW_CONFIG: '(internal) The deployment settings (environment, config file) are invalid; the server does not start',
  NW_CLI: '(internal) A command-line error printed as one line, with its exit code',
  NW_HTTP_REQUEST_FAILED: '(internal) An outbound HTTP request got no usable answer (refused, timed out, too large, bad URL)',
  NW_OUTBOUND_REFUSED: '(internal) An outbound request to a private or local address that NETWARDEN_OUTBOUND_ALLOW does not allow',
  NW_DELIVERY_FAILED: '(internal) A notification could not be delivered; retried when the failure may pass',
  NW_NAME_SOURCE_FAILED: '(internal) A name source (DHCP leases, Pi-hole, AdGuard, UniFi) could not be read',
  NW_AGENT_REQUEST_FAILED: "(internal) The server refused an agent's request in a way a retry will not change",
  NW_AGENT_TOKEN_REFUSED: "(internal) The server refused the agent's token: wrong, or the agent was revoked",
  NW_SCAN_ABORTED: '(internal) A scan engine stopped because the scan was cancelled',
  NW_JOB_NOT_STARTABLE: '(internal) A queued scan job cannot start yet (every slot taken or its target busy); retried',
  NW_CVE_DATA_INVALID: '(internal) The imported CVE data file is unreadable or of an unknown format',
  NW_CVE_FEED_INVALID: '(internal) A CVE feed file (NVD, KEV) is not in the expected format',
  NW_INVALID_VERSION_RANGE: '(internal) A CVE version range cannot be compiled',
  NW_BACKUP_FILE_INVALID: '(internal) A backup file cannot be restored: not a backup, damaged, incomplete or too new',
  NW_RESTORE_REFUSED: '(internal) A restore is refused because something else is using the database',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface NetwardenErrorOptions {
  cause?: unknown;
  /** Seconds after which trying again may succeed: the API's Retry-After. */
  retryAfterSeconds?: number;
  /** What an API client is told, when it differs from the message (which is for the log and may name hosts or files). */
  detail?: string;
}

/**
 * The root of Netwarden's own errors (after undici's `lib/core/errors.js`). Each subclass has a
 * stable `code` from ERROR_CODES and a message written for a person. Layers below `api/` throw
 * these; `api/errors.ts` alone decides which HTTP status each code means, and the CLI which exit code.
 */
export abstract class NetwardenError extends Error {
  abstract readonly code: ErrorCode;
  /** Facts an API client may need besides the message (`{scan_id}` of the running scan, …): fields of the error body. */
  readonly extra: Record<string, unknown>;
  /** Seconds after which trying again may succeed; the API sends it as Retry-After. */
  readonly retryAfterSeconds: number | undefined;
  /** What an API client is told: the message unless the thrower gave other words. */
  readonly detail: string;

  constructor(message: string, extra: Record<string, unknown> = {}, options: NetwardenErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.extra = extra;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.detail = options.detail ?? message;
  }
}

/**
 * The request cannot be done as asked: the caller must change it (its input, or wait for the state
 * to change). What a scan, a schedule or the CLI reports to the user rather than treating as a fault.
 */
export abstract class RefusedError extends NetwardenError {}

/** The request itself is wrong (a field's value); the message names the field: `subnet: …`. */
export class InvalidInputError extends RefusedError {
  readonly code: ErrorCode = 'NW_INVALID_INPUT';
}

/** What the request names does not exist. */
export class NotFoundError extends RefusedError {
  readonly code: ErrorCode = 'NW_NOT_FOUND';
}

/** The request is valid but conflicts with the current state (a scan already running, …). */
export class ConflictError extends RefusedError {
  readonly code: ErrorCode = 'NW_CONFLICT';
}
