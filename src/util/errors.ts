/**
 * The root of Netwarden's own errors. Each subclass has a stable `code` (never reworded, safe to
 * match on) and a message written for a person. Layers below `api/` throw these; `api/errors.ts`
 * alone decides which HTTP status each one means, and the CLI which exit code.
 */
export abstract class NetwardenError extends Error {
  abstract readonly code: string;
  /** Facts an API client may need besides the message (`{scan_id}` of the running scan, …). */
  readonly extra: Record<string, unknown>;

  constructor(message: string, extra: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.extra = extra;
  }
}

/** The request itself is wrong (a field's value); the message names the field: `subnet: …`. */
export class InvalidInputError extends NetwardenError {
  readonly code: string = 'NW_INVALID_INPUT';
}

/** What the request names does not exist. */
export class NotFoundError extends NetwardenError {
  readonly code: string = 'NW_NOT_FOUND';
}

/** The request is valid but conflicts with the current state (a scan already running, …). */
export class ConflictError extends NetwardenError {
  readonly code: string = 'NW_CONFLICT';
}
