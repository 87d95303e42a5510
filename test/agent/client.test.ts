/**
 * The agent's HTTP client (src/agent/client.ts) against a scripted HTTP server on 127.0.0.1:
 * which failures it retries (connection dropped, 5xx, 409 with Retry-After) and which it does not
 * (401, other 4xx), and that it renews the lease between upload attempts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentClient, AgentRequestError, AgentTokenRefusedError } from '../../src/agent/client.js';

type Step = (req: IncomingMessage, res: ServerResponse) => void;

const TOKEN = `nwa_${'b'.repeat(43)}`;
const RECORD = { scan_id: 7, status: 'completed', devices_found: 1 };
const UPLOAD = { run_id: 'run-12345678', engine: 'nmap' as const, hosts: [], ports: [] };

let server: Server | undefined;

/** Answers the n-th request with steps[n] (the last step repeats); records what came in. */
async function scripted(steps: Step[]): Promise<{ url: string; seen: Array<{ path: string; auth: string | undefined; body: string }> }> {
  const seen: Array<{ path: string; auth: string | undefined; body: string }> = [];
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', auth: req.headers.authorization, body });
      steps[Math.min(seen.length - 1, steps.length - 1)](req, res);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`, seen };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Step =>
  (_req, res) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
const drop: Step = (req) => req.socket.destroy();

function client(url: string, retries: string[] = []) {
  return new AgentClient({
    server: url,
    token: TOKEN,
    version: '1.2.3',
    backoff: { initialMs: 20, maxMs: 50 },
    onRetry: (what) => retries.push(what),
  });
}

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

describe('AgentClient', () => {
  it('retries an upload after a dropped connection, a 503 and a 409 with Retry-After, renewing the lease between attempts', async () => {
    const { url, seen } = await scripted([
      drop,
      json(503, { detail: 'The database is unavailable' }),
      json(409, { detail: 'being recorded', retry_after_seconds: 1 }, { 'Retry-After': '1' }),
      json(200, RECORD),
    ]);
    const retries: string[] = [];
    let renewed = 0;
    const started = Date.now();
    const record = await client(url, retries).uploadResults(7, UPLOAD, {
      whileWaiting: async () => {
        renewed++;
      },
    });
    expect(record).toEqual(RECORD);
    expect(seen.map((s) => s.path)).toEqual(Array(4).fill('/api/agent/scans/7/results'));
    expect(seen.every((s) => s.auth === `Bearer ${TOKEN}` && JSON.parse(s.body).run_id === UPLOAD.run_id)).toBe(true);
    expect(retries).toHaveLength(3);
    expect(renewed).toBe(3);
    // The 409's Retry-After (1 s) was honoured.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it('stops at once on a refused token, and does not retry a refusal a retry cannot change', async () => {
    const refused = await scripted([json(401, { detail: 'Not authenticated' })]);
    await expect(client(refused.url).uploadResults(7, UPLOAD)).rejects.toBeInstanceOf(AgentTokenRefusedError);
    expect(refused.seen).toHaveLength(1);
    await new Promise<void>((resolve) => server!.close(() => resolve()));

    const invalid = await scripted([json(400, { detail: "hosts.0.ip: 10.0.0.1 is outside the scan's target" })]);
    const err = await client(invalid.url)
      .uploadResults(7, UPLOAD)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentRequestError);
    expect(err).toMatchObject({ status: 400, detail: "hosts.0.ip: 10.0.0.1 is outside the scan's target" });
    expect(invalid.seen).toHaveLength(1);
  });

  it('long-polls: a job, or null for 204; retries a dropped poll; stops when told to', async () => {
    const job = { scan_id: 3, profile: 'quick' };
    const { url, seen } = await scripted([drop, (_req, res) => res.writeHead(204).end(), json(200, job)]);
    const c = client(url);
    const poll = { run_id: 'run-12345678', version: '1.2.3', engine: 'nmap' as const, wait_seconds: 0 };
    expect(await c.nextJob(poll, new AbortController().signal)).toBeNull();
    expect(await c.nextJob(poll, new AbortController().signal)).toEqual(job);
    expect(seen.map((s) => s.path)).toEqual(Array(3).fill('/api/agent/jobs/next'));

    const stop = new AbortController();
    stop.abort();
    await expect(c.nextJob(poll, stop.signal)).rejects.toThrow();
  });
});
