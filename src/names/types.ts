/** What every name-source client gets and gives. */
import type { NameRecord } from '../core/name-sources.js';
import type { OutboundGuard } from '../util/outbound.js';

export type { NameRecord };

export interface SourceContext {
  /** Aborted when the scan ends or the source's time is up. */
  signal: AbortSignal;
  /** Time allowed for each request. */
  timeoutMs: number;
  /** Which addresses may be reached (default: no loopback, link-local or unspecified address, as without NETWARDEN_OUTBOUND_ALLOW; services.ts passes the configured one). */
  guard?: OutboundGuard;
}
