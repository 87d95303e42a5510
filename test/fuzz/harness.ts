/**
 * Sends a planned request with live credentials, checks the answer against what every answer of
 * the API must satisfy, and describes a failing exchange exactly enough to send it again.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashPassword } from '../../src/auth/passwords.js';
import { generateSessionToken } from '../../src/auth/tokens.js';
import { addSeconds, nowIso } from '../../src/store/clock.js';
import { ADMIN, adminWithKey, type TestServer } from '../helpers/server.js';
import type { Operation } from './openapi.js';
import type { AuthMode, RequestPlan } from './requests.js';
import { LEAK_MARKERS } from './values.js';

/** The browser session cookie and an API key of the administrator, replaced when a fuzzed request ends them. */
export class Credentials {
  private constructor(
    private readonly server: TestServer,
    private readonly userId: number,
    public cookie: string,
    public key: string,
    public agentToken = '',
  ) {}

  static async create(server: TestServer): Promise<Credentials> {
    const { cookie, key } = await adminWithKey(server, 'fuzz');
    const user = await server.store.users.findByUsername(ADMIN.username);
    if (!user) throw new Error('the administrator was not created');
    const credentials = new Credentials(server, user.id, cookie, key);
    await credentials.newAgent();
    return credentials;
  }

  /** An agent for the agent endpoints, over a network no fuzzed scan targets (its scans stay none). */
  private async newAgent(): Promise<void> {
    const name = `fuzz-agent-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
    const res = await this.server.request('/api/agents', { method: 'POST', cookie: this.cookie, json: { name, networks: ['10.66.0.64/28'] } });
    if (res.status !== 201) throw new Error(`could not create the fuzz agent: ${res.status} ${await res.text()}`);
    this.agentToken = ((await res.json()) as { token: string }).token;
  }

  headersFor(mode: AuthMode): Record<string, string> {
    switch (mode) {
      case 'none':
        return {};
      case 'session cookie':
        return { cookie: this.cookie };
      case 'session cookie, cross-site Origin':
        return { cookie: this.cookie, origin: 'http://elsewhere.example', 'sec-fetch-site': 'cross-site' };
      case 'X-API-Key':
        return { 'x-api-key': this.key };
      case 'Bearer key':
        return { authorization: `Bearer ${this.key}` };
      case 'unknown API key':
        return { 'x-api-key': `svc_${'A'.repeat(43)}` };
      case 'malformed API key':
        return { 'x-api-key': 'svc_ not a key' };
      case 'unknown session cookie':
        return { cookie: 'netwarden_session=bm90IGEgc2Vzc2lvbg' };
      case 'agent token':
        return { authorization: `Bearer ${this.agentToken}` };
      case 'unknown agent token':
        return { authorization: `Bearer nwa_${'A'.repeat(43)}` };
      case 'Basic credentials':
        return { authorization: `Basic ${Buffer.from(`${ADMIN.username}:${ADMIN.password}`).toString('base64')}` };
      case 'garbage credentials':
        return {};
    }
  }

  /**
   * Replaces a credential a fuzzed request ended (logout, password change, key revocation), so
   * later cases still get past authentication. The session is written the way login writes it:
   * logging in over HTTP would meet the login throttle the fuzzer has long since tripped.
   */
  async repair(): Promise<void> {
    const me = (headers: Record<string, string>) => fetch(`${this.server.baseUrl}/api/auth/me`, { headers }).then((r) => r.status);
    if ((await me({ cookie: this.cookie })) === 401) {
      const { token, id } = generateSessionToken();
      const now = nowIso();
      await this.server.store.sessions.create({
        id,
        user_id: this.userId,
        created_at: now,
        expires_at: addSeconds(now, 3600),
        last_seen_at: now,
        ip_address: '127.0.0.1',
        user_agent: 'netwarden fuzz',
      });
      this.cookie = `netwarden_session=${token}`;
    }
    if ((await me({ 'x-api-key': this.key })) === 401) {
      const res = await this.server.request('/api/keys', { method: 'POST', cookie: this.cookie, json: { name: 'fuzz' } });
      if (res.status !== 201) throw new Error(`could not replace the API key: ${res.status} ${await res.text()}`);
      this.key = ((await res.json()) as { key: string }).key;
    }
    const agent = await fetch(`${this.server.baseUrl}/api/agent/jobs/next`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.agentToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ run_id: 'fuzz-repair-run', version: '0', engine: 'nmap', wait_seconds: 0 }),
    });
    if (agent.status === 401) await this.newAgent();
  }

  /** Sets the administrator's password back after a fuzzed change succeeded. */
  async restorePassword(): Promise<void> {
    await this.server.store.users.setPassword(this.userId, await hashPassword(ADMIN.password));
  }
}

export interface Exchange {
  method: string;
  /** Path and query as they went on the wire (fetch resolves `..` segments). */
  target: string;
  headers: Record<string, string>;
  body?: string | Uint8Array<ArrayBuffer>;
  /** 0 when no HTTP answer came (see `error`). */
  status: number;
  contentType: string;
  text: string;
  /** Why no HTTP answer came. */
  error?: string;
}

export async function send(baseUrl: string, plan: RequestPlan, credentials: Credentials): Promise<Exchange> {
  const headers = { ...plan.headers, ...credentials.headersFor(plan.auth) };
  if (plan.contentType !== null) headers['content-type'] = plan.contentType;
  // fetch labels a string body text/plain when no Content-Type is given; bytes go without one.
  const body =
    plan.body !== undefined && plan.contentType === null && typeof plan.body === 'string' ? new TextEncoder().encode(plan.body) : plan.body;
  const url = new URL(baseUrl + plan.url);
  const exchange = { method: plan.method, target: url.pathname + url.search, headers, body };
  try {
    const res = await fetch(url, { method: plan.method, headers, body, redirect: 'manual' });
    const contentType = res.headers.get('content-type') ?? '';
    // An event stream (GET /api/events) never ends by itself: its first chunk is the answer.
    const text = contentType.startsWith('text/event-stream') ? await firstChunk(res) : await res.text();
    return { ...exchange, status: res.status, contentType, text };
  } catch (err) {
    return { ...exchange, status: 0, contentType: '', text: '', error: String((err as Error).cause ?? err) };
  }
}

/**
 * The first chunk of an event stream. The stream is left open, to be ended by the server when it
 * closes: cancelling it makes fetch open a spare connection that sends nothing, which Node's HTTP
 * server then waits for (up to its 60 s headers timeout) before it can close.
 */
async function firstChunk(res: Response): Promise<string> {
  const reader = res.body!.getReader();
  const { value } = await reader.read();
  reader.releaseLock();
  return new TextDecoder().decode(value);
}

/** Every status the contract lets the API answer. */
const CONTRACT_STATUSES = new Set([200, 201, 400, 401, 403, 404, 405, 409, 413, 414, 415, 429]);
/** Operations that also answer 204 (no content): an agent's poll that found no scan. */
const NO_CONTENT = new Set(['POST /api/agent/jobs/next']);

/** What is wrong with an answer, if anything. */
export function problemsWith(operation: Operation, plan: RequestPlan, exchange: Exchange): string[] {
  const problems: string[] = [];
  const { status, contentType, text } = exchange;
  if (exchange.error !== undefined) return [`no HTTP answer: ${exchange.error}`];
  if (status >= 500) problems.push(`status ${status}: a server fault on client input`);
  else if (!CONTRACT_STATUSES.has(status) && !(status === 204 && NO_CONTENT.has(operation.id))) {
    problems.push(`status ${status} is not one the contract uses`);
  }
  for (const marker of LEAK_MARKERS) {
    if (text.includes(marker)) problems.push(`the body shows server internals (${JSON.stringify(marker)})`);
  }
  const isJson = /^application\/json(;|$)/i.test(contentType.trim());
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (status >= 400) {
    if (!isJson) problems.push(`the error's Content-Type is ${contentType || 'missing'}, not application/json`);
    const detail = isRecord(parsed) ? parsed.detail : undefined;
    if (typeof detail !== 'string' || detail.trim() === '') problems.push('the error body is not {"detail": "<message>", ...}');
  } else if (status === 204) {
    if (text !== '') problems.push('a 204 answer has a body');
  } else if (!operation.successTypes.includes('application/json') || !isJson) {
    // A download (the backup), or an answer in another declared format (an export as CSV): its declared type.
    if (!operation.successTypes.some((type) => contentType.toLowerCase().startsWith(type))) {
      problems.push(`the answer's Content-Type is ${contentType || 'missing'}, not one of ${operation.successTypes.join(', ')}`);
    }
  } else if (!isJson || parsed === undefined) {
    problems.push('the answer is not JSON');
  }
  if (status === 401 && operation.id !== 'POST /api/auth/login' && text !== '{"detail":"Not authenticated"}') {
    problems.push('a 401 body must be exactly {"detail":"Not authenticated"}');
  }
  if (operation.body && plan.wrongContentType && plan.body !== undefined && status < 300) {
    problems.push(`a body sent as ${plan.contentType ?? 'no Content-Type'} was accepted; it must be refused (415)`);
  }
  return problems;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A case whose answer broke a rule: thrown inside the property, described once fast-check has shrunk it. */
export class CaseFailure extends Error {
  constructor(
    readonly problems: string[],
    readonly exchange: Exchange,
  ) {
    super(problems.join('; '));
  }
}

/** Longest body written into a failure message; a longer one goes to a file named in the message. */
const SHOWN_BODY = 2000;

/** The request as sent: method, target, headers, then the body as a JSON string literal (exact, control characters visible). */
function describeRequest(exchange: Exchange): string {
  const lines = [`${exchange.method} ${exchange.target}`, ...Object.entries(exchange.headers).map(([k, v]) => `${k}: ${v}`)];
  if (exchange.body === undefined) return [...lines, '(no body)'].join('\n');
  const literal = bodyLiteral(exchange.body);
  if (literal.length <= SHOWN_BODY) return [...lines, '', literal].join('\n');
  const file = join(tmpdir(), `netwarden-fuzz-${process.pid}-${Date.now()}.body`);
  writeFileSync(file, exchange.body);
  return [...lines, '', `${literal.slice(0, SHOWN_BODY)}… (${literal.length} characters in all; the exact body is in ${file})`].join('\n');
}

/** A string body as a JSON string literal; bytes as a quoted string with each non-ASCII byte as \xNN. */
function bodyLiteral(body: string | Uint8Array): string {
  if (typeof body === 'string') return `text ${JSON.stringify(body)}`;
  let out = '';
  for (const byte of body) {
    out += byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, '0')}`;
  }
  return `bytes "${out}"`;
}

/** The problems, the exact request, and the answer. A body too long to show is saved to a file. */
export function describeFailure({ problems, exchange }: CaseFailure): string {
  const answer = exchange.error ?? (exchange.text.length > SHOWN_BODY ? `${exchange.text.slice(0, SHOWN_BODY)}…` : exchange.text);
  return [
    problems.map((p) => `- ${p}`).join('\n'),
    '',
    describeRequest(exchange),
    '',
    `→ ${exchange.status || 'no answer'} ${exchange.contentType}`,
    answer,
  ].join('\n');
}

/** Cases sent per operation and the statuses they got. */
export class Tally {
  private readonly byOperation = new Map<string, Map<number, number>>();

  count(operation: string, status: number): void {
    const statuses = this.byOperation.get(operation) ?? new Map<number, number>();
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    this.byOperation.set(operation, statuses);
  }

  casesOf(operation: string): number {
    return [...(this.byOperation.get(operation)?.values() ?? [])].reduce((a, b) => a + b, 0);
  }

  statusesOf(operation: string): number[] {
    return [...(this.byOperation.get(operation)?.keys() ?? [])];
  }

  summary(): { cases: number; operations: number; statuses: string } {
    const all = new Map<number, number>();
    for (const statuses of this.byOperation.values()) {
      for (const [status, n] of statuses) all.set(status, (all.get(status) ?? 0) + n);
    }
    const cases = [...all.values()].reduce((a, b) => a + b, 0);
    const statuses = [...all.entries()]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${s}×${n}`)
      .join(' ');
    return { cases, operations: this.byOperation.size, statuses };
  }
}
