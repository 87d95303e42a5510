/**
 * HTTP receivers for notification tests: small servers on 127.0.0.1 that record every request
 * (method, path, headers, raw body) and answer as told: 200 by default, or any status with
 * headers (500, 429 with Retry-After, 404), or never (a hang, for timeouts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The raw body, exactly as received (signatures are checked over it). */
  body: string;
  /** Milliseconds since the receiver started. */
  at: number;
  json(): any;
}

export type Answer = { status?: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface Receiver {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: Received[];
  /** How to answer the n-th request (0-based); default 200 `{"ok":true}`. */
  answer: (index: number, request: Received) => Answer;
  /** Resolves when at least `n` requests arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(answer: Receiver['answer'] = () => ({})): Promise<Receiver> {
  const started = Date.now();
  const hung: ServerResponse[] = [];
  const receiver: Receiver = {
    url: '',
    requests: [],
    answer,
    async waitFor(n, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (receiver.requests.length < n) {
        if (Date.now() > deadline) throw new Error(`receiver got ${receiver.requests.length} of ${n} requests`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return receiver.requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hung) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const received: Received = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        at: Date.now() - started,
        json: () => JSON.parse(body),
      };
      const index = receiver.requests.length;
      receiver.requests.push(received);
      const a = receiver.answer(index, received);
      if (a === 'hang') {
        hung.push(res);
        return;
      }
      res.writeHead(a.status ?? 200, { 'Content-Type': 'application/json', ...a.headers });
      res.end(a.body ?? '{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}

/** Fast retry timing for tests: short timeout and delays, same shape as production. */
export const FAST_RETRIES = { timeoutMs: 1500, retryDelaysMs: [100, 200, 400], retryWindowMs: 5000, maxRetryAfterMs: 1000 };
