/** Why the scan layer refuses a request; `api/errors.ts` and the CLI map these by class. */
import { ConflictError, NotFoundError } from '../util/errors.js';

/** A target the rules of core/scan-target.ts refuse: malformed, too large, or not allowed. */
export { InvalidTargetError, TargetNotAllowedError } from '../core/scan-target.js';

/** A scan with an overlapping target, or every scanning.max_parallel_scans slot, is taken; `extra.scan_id` names the scan to wait for. */
export class ScanBusyError extends ConflictError {
  override readonly code = 'NW_SCAN_BUSY';

  constructor(readonly scanId: number | null) {
    super('A scan is already running', { scan_id: scanId });
  }
}

/** The scan to act on has already ended. */
export class ScanNotRunningError extends ConflictError {
  override readonly code = 'NW_SCAN_NOT_RUNNING';

  constructor(scanId: number, status: string) {
    super(`Scan ${scanId} is not running (status ${status})`, { scan_id: scanId, status });
  }
}

export class ScanNotFoundError extends NotFoundError {
  override readonly code = 'NW_SCAN_NOT_FOUND';

  constructor() {
    super('Scan not found');
  }
}

/** An agent's results for this scan are being recorded by another instance; retry shortly. */
export class UploadInProgressError extends ConflictError {
  override readonly code = 'NW_UPLOAD_IN_PROGRESS';

  constructor(scanId: number) {
    super(`The results of scan ${scanId} are being recorded; retry in a few seconds`, { scan_id: scanId });
  }
}
