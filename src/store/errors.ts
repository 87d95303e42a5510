import { ConflictError, NetwardenError, type ErrorCode } from '../util/errors.js';
/**
 * The database cannot serve the request right now: PostgreSQL refused or dropped the connection,
 * the SQLite file is locked by another process, or it was deleted under the running server. The
 * message is for the log and the operator (it may name hosts or files); `detail` is what an API
 * client is told.
 */
export class DatabaseUnavailableError extends NetwardenError {
  readonly code = 'NW_DATABASE_UNAVAILABLE';

  /** `retryAfterSeconds`: undefined when waiting will not help. */
  constructor(message: string, options: { detail: string; retryAfterSeconds?: number; cause?: unknown }) {
    super(message, {}, options);
  }
}

/** The finding already has an active acceptance on that device; the API answers 409. */
export class AlreadyAcceptedError extends ConflictError {
  override readonly code: ErrorCode = 'NW_ALREADY_ACCEPTED';
}
