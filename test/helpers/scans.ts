import { readJson, type TestServer } from './server.js';

/** Polls the scan record until it leaves queued/running; returns the final record. */
export async function waitForScan(server: TestServer, key: string, scanId: number, timeoutMs = 120_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await server.request(`/api/scans/${scanId}`, { key });
    const scan = await readJson(res);
    if (scan.status !== 'running' && scan.status !== 'queued') return scan;
    if (Date.now() > deadline) throw new Error(`scan ${scanId} still ${scan.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function triggerScan(server: TestServer, key: string, query: Record<string, string>): Promise<any> {
  const res = await server.request(`/api/scan/trigger?${new URLSearchParams(query)}`, { method: 'POST', key });
  const body = await readJson(res);
  if (res.status !== 200) throw new Error(`trigger failed: ${res.status} ${JSON.stringify(body)}`);
  return body;
}
