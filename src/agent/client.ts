/**
 * The agent's side of the agent endpoints (CONTRACT §12, src/api/routes/agent-endpoints.ts): one
 * method per endpoint over fetch, with the agent token, a timeout on every request, and retries
 * with a growing, jittered delay where a retry is safe (all of them are: the server makes each
 * call idempotent, the results upload included).
 */
import type { AgentEnd, AgentJob, AgentPoll, AgentProgressAnswer, AgentUpload } from '../schemas/agent.js';
import type { ScanProgress, ScanRecord } from '../schemas/scan.js';
import { NetwardenError, type ErrorCode } from '../util/errors.js';

export interface Backoff {
  /** First delay after a failure (default 1 s); each next one doubles... */
  initialMs: number;
  /** ...up to this (default 30 s). */
  maxMs: number;
}

export interface AgentClientOptions {
  /** The server's base URL, `https://netwarden.example:8080` (a path prefix is kept). */
  server: string;
  token: string;
  /** Sent as User-Agent: `Netwarden-Agent/<version>`. */
  version: string;
  backoff?: Partial<Backoff>;
  /** How long an upload is retried before the agent gives up on it (default 10 minutes). */
  uploadRetryMs?: number;
  /** Told of each failed attempt that will be retried (for the log). */
  onRetry?: (what: string, attempt: number, delayMs: number, error: Error) => void;
}

/** The server answered with an error that a retry will not change (or, for 401, the token is refused). */
export class AgentRequestError extends NetwardenError {
  readonly code: ErrorCode = 'NW_AGENT_REQUEST_FAILED';

  constructor(
    readonly status: number,
    detail: string,
    readonly retryAfterMs: number | null = null,
  ) {
    super(`HTTP ${status}: ${detail}`, {}, { detail });
  }
}

/** The server refused the token (401): wrong, or the agent was revoked. Nothing the agent can do but stop. */
export class AgentTokenRefusedError extends AgentRequestError {
  override readonly code = 'NW_AGENT_TOKEN_REFUSED';

  constructor(detail: string) {
    super(401, detail);
  }
}

/** Statuses worth retrying: the server or something in between is busy, restarting or briefly unreachable. */
const RETRYABLE = new Set([408, 425, 429, 500, 502, 503, 504]);
/** How long a request may take besides a long poll's wait. */
const REQUEST_TIMEOUT_MS = 30_000;
/** How long one attempt at an upload may take (recording a /16 takes a while on the server). */
const UPLOAD_TIMEOUT_MS = 15 * 60_000;

export class AgentClient {
  private readonly base: string;
  private readonly backoff: Backoff;
  private readonly uploadRetryMs: number;

  constructor(private readonly options: AgentClientOptions) {
    this.base = options.server.replace(/\/+$/, '');
    this.backoff = { initialMs: 1000, maxMs: 30_000, ...options.backoff };
    this.uploadRetryMs = options.uploadRetryMs ?? 10 * 60_000;
  }

  /**
   * Long-polls for the next scan: the job, or null when the server had none within the wait.
   * Connection failures and busy answers are retried (with the growing delay) until `signal`.
   */
  async nextJob(poll: AgentPoll, signal: AbortSignal): Promise<AgentJob | null> {
    const waitMs = (poll.wait_seconds ?? 25) * 1000;
    return this.retrying('poll for a scan', signal, Number.POSITIVE_INFINITY, async () => {
      const res = await this.send('/api/agent/jobs/next', poll, signal, waitMs + REQUEST_TIMEOUT_MS);
      return res.status === 204 ? null : ((await res.json()) as AgentJob);
    });
  }

  /**
   * Reports progress once (no retry: the next report follows shortly); what the server says to do.
   * A 409 (the scan was cancelled or failed on the server, which is final) is a `cancel`: the scan stops.
   */
  async progress(scanId: number, runId: string, progress: ScanProgress, signal?: AbortSignal): Promise<AgentProgressAnswer['action']> {
    try {
      const res = await this.send(`/api/agent/scans/${scanId}/progress`, { run_id: runId, progress }, signal, REQUEST_TIMEOUT_MS);
      return ((await res.json()) as AgentProgressAnswer).action;
    } catch (err) {
      if (err instanceof AgentRequestError && err.status === 409) return 'cancel';
      throw err;
    }
  }

  /**
   * Uploads a scan's results until the server has recorded them: a dropped connection, a server
   * restarting, or another instance still recording an earlier attempt (409 with Retry-After) is
   * retried; the server records them once whatever happens. `whileWaiting` runs between attempts
   * (the runtime renews the scan's lease there). Throws AgentRequestError when the server refuses
   * them for good (the scan ended meanwhile, the body is invalid or too large).
   */
  async uploadResults(
    scanId: number,
    upload: AgentUpload,
    options: { signal?: AbortSignal; whileWaiting?: () => Promise<void> } = {},
  ): Promise<ScanRecord> {
    const body = JSON.stringify(upload);
    const signal = options.signal ?? new AbortController().signal;
    return this.retrying(
      `upload the results of scan ${scanId}`,
      signal,
      Date.now() + this.uploadRetryMs,
      async () => (await (await this.send(`/api/agent/scans/${scanId}/results`, body, signal, UPLOAD_TIMEOUT_MS)).json()) as ScanRecord,
      options.whileWaiting,
    );
  }

  /** Reports a scan that ended without results (failed or cancelled); retried briefly. */
  async end(scanId: number, end: AgentEnd, signal?: AbortSignal): Promise<ScanRecord> {
    return this.retrying(`report the end of scan ${scanId}`, signal ?? new AbortController().signal, Date.now() + 60_000, async () => {
      return (await (await this.send(`/api/agent/scans/${scanId}/end`, end, signal, REQUEST_TIMEOUT_MS)).json()) as ScanRecord;
    });
  }

  /** One request: JSON in, a 2xx response out; anything else throws (AgentRequestError for an HTTP error). */
  private async send(path: string, body: unknown, signal: AbortSignal | undefined, timeoutMs: number): Promise<Response> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const res = await fetch(this.base + path, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${this.options.token}`,
        'Content-Type': 'application/json',
        'User-Agent': `Netwarden-Agent/${this.options.version}`,
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    if (res.ok) return res;
    const text = await res.text().catch(() => '');
    let detail = text.slice(0, 500) || res.statusText;
    try {
      const parsed = JSON.parse(text) as { detail?: unknown };
      if (typeof parsed.detail === 'string') detail = parsed.detail;
    } catch {
      // not JSON: the text as it is
    }
    if (res.status === 401) throw new AgentTokenRefusedError(detail);
    const retryAfter = Number(res.headers.get('retry-after'));
    throw new AgentRequestError(res.status, detail, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : null);
  }

  /**
   * Runs `attempt` until it succeeds, `signal` aborts, or a failure that a retry will not change;
   * waits the growing delay (or the server's Retry-After) between attempts, until `deadline`.
   */
  private async retrying<T>(
    what: string,
    signal: AbortSignal,
    deadline: number,
    attempt: () => Promise<T>,
    whileWaiting?: () => Promise<void>,
  ): Promise<T> {
    for (let n = 0; ; n++) {
      try {
        return await attempt();
      } catch (err) {
        if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : err;
        if (!retryable(err)) throw err;
        const retryAfter = err instanceof AgentRequestError ? err.retryAfterMs : null;
        const delay = retryAfter ?? this.delay(n);
        if (Date.now() + delay > deadline) throw err;
        this.options.onRetry?.(what, n + 1, delay, err as Error);
        await whileWaiting?.().catch(() => undefined);
        await sleep(delay, signal);
      }
    }
  }

  /** The delay after the n-th consecutive failure: doubling from initialMs up to maxMs, with ±25% jitter. */
  private delay(n: number): number {
    const base = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** Math.min(n, 20));
    return Math.round(base * (0.75 + Math.random() * 0.5));
  }
}

/** Whether a failed request is worth retrying: connection failures and timeouts, busy or restarting servers, an upload being recorded elsewhere. */
function retryable(err: unknown): boolean {
  if (err instanceof AgentTokenRefusedError) return false;
  if (err instanceof AgentRequestError) return RETRYABLE.has(err.status) || (err.status === 409 && err.retryAfterMs !== null);
  // fetch's network failures (TypeError "fetch failed", with the socket error as cause) and timeouts.
  return err instanceof Error && (err.name === 'TypeError' || err.name === 'TimeoutError' || err.name === 'AbortError');
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
