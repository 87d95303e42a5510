/** A scan request the service refuses, with the HTTP status that says why. */
export class ScanRequestError extends Error {
  constructor(
    readonly status: 400 | 404 | 409,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}
