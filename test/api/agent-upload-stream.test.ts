/**
 * An agent's upload is streamed and bounded (issue 19): a body nobody will take (a scan of another
 * agent, or one that has ended) is refused before it is read, and a 100 MiB upload leaves the
 * server answering /health while it arrives and is recorded. The bodies here are sent with
 * node:http, a piece at a time, so the server's answer can come while the client is still sending.
 */
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { triggerScan } from '../helpers/scans.js';

const NETWORK = '127.0.0.64/28';
const MiB = 1024 * 1024;

interface Streamed {
  /** 0 when the server closed the connection before its answer could be read. */
  status: number;
  body: string;
  /** ms from the first byte sent to the response's headers. */
  answeredAfterMs: number;
  /** Bytes of the body written when the answer came. */
  sentWhenAnswered: number;
}

/**
 * POSTs `chunks()` (awaited one at a time, so a test can pace them) as the body, stopping once the
 * server has answered. Resolves with the answer and when it came.
 */
function streamPost(url: string, token: string, chunks: () => AsyncIterable<Buffer>, headers: Record<string, string> = {}): Promise<Streamed> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let sent = 0;
    let answered = false;
    const req = httpRequest(url, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/json',
        ...(headers['Content-Length'] ? {} : { 'Transfer-Encoding': 'chunked' }),
        ...headers,
      },
    });
    req.on('response', (res) => {
      answered = true;
      const answeredAfterMs = Date.now() - started;
      const sentWhenAnswered = sent;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body, answeredAfterMs, sentWhenAnswered });
        req.destroy();
      });
    });
    // The server may close the connection as it answers (a body refused half-way): the answer can arrive just after the write fails.
    // When it arrives too late (or not at all), the result has status 0 and the bytes written until then.
    req.on('error', (err) => {
      setTimeout(() => {
        if (answered) return;
        if ((err as NodeJS.ErrnoException).code === 'EPIPE' || (err as NodeJS.ErrnoException).code === 'ECONNRESET') {
          resolve({ status: 0, body: '', answeredAfterMs: Date.now() - started, sentWhenAnswered: sent });
        } else reject(err);
      }, 1000);
    });
    void (async () => {
      for await (const chunk of chunks()) {
        if (answered || req.destroyed) return;
        sent += chunk.length;
        if (!req.write(chunk)) await new Promise<void>((r) => req.once('drain', () => r()));
      }
      if (!answered && !req.destroyed) req.end();
    })().catch(() => undefined);
  });
}

/**
 * A valid upload of about `bytes`: hosts of `subnet` (from .1), each reporting every TCP and UDP
 * port closed (what an intensive scan of a busy host can send), as many hosts as it takes.
 */
async function* largeUpload(runId: string, subnet: string, bytes: number, chunkBytes = MiB): AsyncIterable<Buffer> {
  const base = subnet.split('/')[0].split('.').map(Number);
  let pending = `{"run_id":${JSON.stringify(runId)},"engine":"nmap","hosts":[],"ports":[`;
  let total = 0;
  for (let h = 1; total < bytes; h++) {
    const ip = `${base[0]}.${base[1]}.${base[2]}.${base[3] + h}`;
    pending += `${h > 1 ? ',' : ''}{"ip":"${ip}","mac":null,"vendor":null,"hostname":null,"os_name":null,"device_type":null,"ports":[`;
    for (let i = 0; i < 2 * 65_535; i++) {
      const protocol = i < 65_535 ? 'tcp' : 'udp';
      pending += `${i > 0 ? ',' : ''}{"port":${(i % 65_535) + 1},"protocol":"${protocol}","state":"closed","service":"unknown","product":null,"version":null,"extra_info":null,"cpe":[]}`;
      if (pending.length >= chunkBytes) {
        total += pending.length;
        yield Buffer.from(pending);
        pending = '';
      }
      if (total >= bytes) break;
    }
    pending += ']}';
  }
  yield Buffer.from(`${pending}]}`);
}

/** A trickle: `pieces` blank pieces, `everyMs` apart (a slow link). */
async function* trickle(pieces: number, everyMs: number): AsyncIterable<Buffer> {
  yield Buffer.from('{"run_id":"x","engine":"nmap","hosts":[],"ports":[]');
  for (let i = 0; i < pieces; i++) {
    await new Promise((r) => setTimeout(r, everyMs));
    yield Buffer.alloc(64 * 1024, 0x20);
  }
  yield Buffer.from('}');
}

describe.each(testDatabases())('agent uploads, streamed and bounded ($kind)', (database) => {
  let server: TestServer;
  let cookie: string;
  let key: string;
  const run = randomUUID();

  beforeAll(async () => {
    ({ server, cookie, key } = await startServerWithAdmin(database, { settings: { scanning: { max_parallel_scans: 4 } } }));
  });
  afterAll(() => server?.close());

  async function createAgent(name: string, networks: string[]): Promise<string> {
    const res = await server.request('/api/agents', { method: 'POST', cookie, json: { name, networks } });
    expect(res.status).toBe(201);
    return (await readJson(res)).token;
  }

  async function takeScan(token: string, subnet: string): Promise<number> {
    const started = await triggerScan(server, key, { subnet, profile: 'normal' });
    const res = await server.request('/api/agent/jobs/next', {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
      json: { run_id: run, version: '1', engine: 'nmap', wait_seconds: 5 },
    });
    expect(res.status).toBe(200);
    const job = await readJson(res);
    expect(job.scan_id).toBe(started.scan_id);
    return job.scan_id;
  }

  it('refuses an upload for a scan the agent does not own, or one cancelled, within 2 s and before reading the body', async () => {
    const owner = await createAgent('owner', [NETWORK]);
    const stranger = await createAgent('stranger', ['127.0.0.128/28']);
    const scanId = await takeScan(owner, NETWORK);

    // 40 pieces 100 ms apart: the whole body would take 4 s to arrive.
    const notMine = await streamPost(`${server.baseUrl}/api/agent/scans/${scanId}/results`, stranger, () => trickle(40, 100));
    expect(notMine.status).toBe(404);
    expect(JSON.parse(notMine.body)).toEqual({ detail: 'Scan not found', code: 'NW_SCAN_NOT_FOUND' });
    expect(notMine.answeredAfterMs).toBeLessThan(2000);
    expect(notMine.sentWhenAnswered).toBeLessThan(20 * 64 * 1024);

    expect((await server.request(`/api/scans/${scanId}/cancel`, { method: 'POST', key })).status).toBe(200);
    const ended = await streamPost(`${server.baseUrl}/api/agent/scans/${scanId}/results`, owner, () => trickle(40, 100));
    expect(ended.status).toBe(409);
    expect(JSON.parse(ended.body)).toMatchObject({ scan_id: scanId, status: 'cancelled' });
    expect(ended.answeredAfterMs).toBeLessThan(2000);
  });

  it('answers /health while a 100 MiB upload arrives and is recorded', async () => {
    const token = await createAgent('big', ['127.0.0.96/28']);
    const scanId = await takeScan(token, '127.0.0.96/28');
    // Built before it is sent: making it must not hold up this process (the server's) while /health is timed.
    const pieces: Buffer[] = [];
    for await (const piece of largeUpload(run, '127.0.0.96/28', 100 * MiB)) pieces.push(piece);
    const body = Buffer.concat(pieces);
    expect(body.length).toBeGreaterThan(100 * MiB);
    let uploading = true;
    const latencies: number[] = [];
    const probing = (async () => {
      while (uploading) {
        // Timed from when the probe was due: a blocked event loop (the server runs in this process) delays the timer as much as the answer.
        const due = Date.now() + 50;
        await new Promise((r) => setTimeout(r, 50));
        const res = await fetch(`${server.baseUrl}/health`);
        expect(res.status).toBe(200);
        await res.arrayBuffer();
        latencies.push(Date.now() - due);
      }
    })();
    const upload = await streamPost(`${server.baseUrl}/api/agent/scans/${scanId}/results`, token, async function* () {
      for (let at = 0; at < body.length; at += MiB) {
        yield body.subarray(at, at + MiB);
        // About 50 MiB/s: the upload takes a few seconds to arrive, as over a real link.
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    uploading = false;
    await probing;
    expect(latencies.length).toBeGreaterThan(5);
    expect(Math.max(...latencies), `/health latencies: ${latencies.join(', ')}`).toBeLessThan(2000);
    expect(upload.status, upload.body.slice(0, 300)).toBe(200);
    expect(JSON.parse(upload.body)).toMatchObject({ scan_id: scanId, status: 'completed' });
    console.log(
      `/health during a 100 MiB upload (${database.kind}): ${latencies.length} probes, max ${Math.max(...latencies)} ms, answered after ${upload.answeredAfterMs} ms`,
    );
  }, 180_000);

  it('refuses an upload beyond the 128 MiB limit: at once when Content-Length says so, else as soon as it passes it', async () => {
    const token = await createAgent('huge', ['127.0.0.112/28']);
    const scanId = await takeScan(token, '127.0.0.112/28');
    const url = `${server.baseUrl}/api/agent/scans/${scanId}/results`;
    const declared = await streamPost(url, token, () => trickle(40, 100), { 'Content-Length': String(200 * MiB) });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body).detail).toBe('body: request body is larger than the 128 MiB limit');
    expect(declared.answeredAfterMs).toBeLessThan(2000);

    // Chunked: the server stops reading once past the limit. It answers 413, though a client still
    // writing may see the connection closed before it reads the answer.
    const chunked = await streamPost(url, token, () => largeUpload(run, '127.0.0.112/28', 200 * MiB, 4 * MiB));
    if (chunked.status !== 0) {
      expect(chunked.status).toBe(413);
      expect(JSON.parse(chunked.body).detail).toMatch(/128 MiB/);
    }
    expect(chunked.sentWhenAnswered).toBeLessThan(160 * MiB);
    expect(await readJson(await server.request(`/api/scans/${scanId}`, { key }))).toMatchObject({ status: 'running' });
  }, 60_000);
});
