/**
 * The database cannot serve the request right now: PostgreSQL refused or dropped the connection,
 * the SQLite file is locked by another process, or it was deleted under the running server. The
 * message is for the log and the operator (it may name hosts or files); `detail` is what an API
 * client is told.
 */
export class DatabaseUnavailableError extends Error {
  readonly detail: string;
  /** Seconds after which trying again may succeed; undefined when waiting will not help. */
  readonly retryAfterSeconds: number | undefined;

  constructor(message: string, options: { detail: string; retryAfterSeconds?: number; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.name = 'DatabaseUnavailableError';
    this.detail = options.detail;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** The write conflicts with what is stored (an active acceptance of the same finding); the API answers 409. */
export class ConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConflictError';
  }
}
