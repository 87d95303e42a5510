/** Why the engine layer refuses to run; `api/errors.ts` and the CLI map these by class. */
import { InvalidInputError } from '../util/errors.js';

/** The configured engine cannot run here (scanning.engine is nmap, and nmap is not installed). */
export class EngineUnavailableError extends InvalidInputError {
  override readonly code = 'NW_ENGINE_UNAVAILABLE';
}
