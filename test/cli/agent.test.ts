/**
 * `netwarden agent` as a real process against a real `netwarden serve`: it takes a scan of its
 * network, runs nmap (-n) against a loopback listener, and uploads the results; the upload's
 * connection is dropped after the server received it, and the retry records nothing twice. Also
 * its usage errors, and a revoked token ending it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nmapVersion } from '../../src/engines/nmap.js';
import { bannerListener, silentListener, type Listener } from '../helpers/listeners.js';
import {
  BIN,
  baseEnv,
  bodyOf,
  oneCliDatastore,
  expectRefused,
  runCli,
  sqliteDatastore,
  startServe,
  type CliDatastore,
  type ServeProcess,
  client,
  sessionCookieOf,
} from './helpers.js';
import { ADMIN } from '../helpers/server.js';

const hasNmap = (await nmapVersion()) !== null;
if (!hasNmap) console.warn('skipping the netwarden agent scan tests: nmap is not installed (apt-get install nmap)');

const TARGET = '127.0.0.73';
const NETWORK = '127.0.0.72/29';

interface AgentProcess {
  child: ChildProcess;
  log: Array<Record<string, any>>;
  stderr: () => string;
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

function startAgent(server: string, token: string, extraArgs: string[] = []): Promise<AgentProcess> {
  const env = { ...baseEnv(), NETWARDEN_AGENT_TOKEN: token, NETWARDEN_LOG_LEVEL: 'info' };
  const child = spawn(process.execPath, [BIN, 'agent', '--server', server, ...extraArgs], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const log: Array<Record<string, any>> = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`agent not ready in time\n${stderr}`)), 30_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as Record<string, any>;
        log.push(entry);
        if (entry.msg === 'netwarden agent ready') {
          clearTimeout(timer);
          resolve({
            child,
            log,
            stderr: () => stderr,
            exited,
            async stop() {
              if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
              return exited;
            },
          });
        }
      } catch {
        // not a log line
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`agent exited with ${code} before it was ready\n${stderr}`));
    });
  });
}

/**
 * A loopback HTTP proxy in front of the server that can drop the connection of a results upload
 * after the server received it whole (the agent never sees the answer), as a flaky link would.
 */
async function flakyProxy(upstream: string): Promise<{ url: string; dropNextUpload(): void; uploads: number; close(): Promise<void> }> {
  const target = new URL(upstream);
  let drop = false;
  const state = { uploads: 0 };
  const server: Server = createServer((req, res) => {
    const isUpload = /\/results$/.test(req.url ?? '');
    if (isUpload) state.uploads++;
    const dropThis = isUpload && drop;
    if (dropThis) drop = false;
    const forward = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      if (dropThis) {
        answer.resume();
        answer.once('end', () => req.socket.destroy());
        return;
      }
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    dropNextUpload: () => {
      drop = true;
    },
    get uploads() {
      return state.uploads;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('netwarden agent: usage', () => {
  let ds: CliDatastore;
  beforeAll(() => {
    ds = sqliteDatastore();
  });
  afterAll(async () => ds.cleanup());
  const token = `nwa_${'a'.repeat(43)}`;

  it('refuses a missing or malformed server URL, and a missing or malformed token, with a usage error', async () => {
    expectRefused(await runCli(ds, ['agent', '--token', token]), 2, /--server is required/, { oneLine: true });
    expectRefused(await runCli(ds, ['agent', '--server', 'netwarden.lan', '--token', token]), 2, /--server: 'netwarden\.lan' is not a URL/, {
      oneLine: true,
    });
    expectRefused(await runCli(ds, ['agent', '--server', 'ftp://x.lan', '--token', token]), 2, /--server: must be an http:\/\/ or https:\/\/ URL/);
    expectRefused(await runCli(ds, ['agent', '--server', 'https://u:p@x.lan', '--token', token]), 2, /must not hold a user name or password/);
    expectRefused(await runCli(ds, ['agent', '--server', 'https://x.lan']), 2, /no agent token: give --token nwa_… or set NETWARDEN_AGENT_TOKEN/);
    expectRefused(await runCli(ds, ['agent', '--server', 'https://x.lan', '--token', 'nwa_short']), 2, /--token: not an agent token/);
    expectRefused(await runCli(ds, ['agent', '--server', 'https://x.lan', '--token', `svc_${'a'.repeat(43)}`]), 2, /that is an API key/);
    expectRefused(
      await runCli(ds, ['agent', '--server', 'https://x.lan'], { env: { NETWARDEN_AGENT_TOKEN: 'bogus' } }),
      2,
      /NETWARDEN_AGENT_TOKEN: not an agent token/,
    );
    expectRefused(
      await runCli(ds, ['agent', '--server', 'https://x.lan', '--token', token, '--engine', 'masscan']),
      2,
      /--engine must be one of auto, nmap, native/,
    );
  });
});

describe.skipIf(!hasNmap).each(oneCliDatastore('postgres'))('netwarden agent against netwarden serve ($kind)', ({ create }) => {
  let ds: CliDatastore;
  let serve: ServeProcess;
  let http: ReturnType<typeof client>;
  let cookie: string;
  let key: string;
  let ssh: Listener;
  let mail: Listener | undefined;
  let mailPort: number;

  beforeAll(async () => {
    ds = await create();
    ssh = await bannerListener(TARGET, 'SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13\r\n');
    // The ports scanned: the SSH listener's, and one a second listener takes later.
    mail = await bannerListener(TARGET, '220 mail.example ESMTP Postfix\r\n');
    mailPort = mail.port;
    await mail.close();
    mail = undefined;
    writeFileSync(
      join(ds.env.NETWARDEN_DATA_DIR, 'netwarden.json'),
      JSON.stringify({
        settings: {
          network: { resolve_hostnames: false },
          scanning: { engine: 'nmap', port_range: `${ssh.port},${mailPort}`, top_ports: 0, os_detection: false, host_timeout_seconds: 30 },
        },
      }),
    );
    serve = await startServe(ds);
    http = client(serve.baseUrl);
    const setup = await http('/api/auth/setup', { method: 'POST', json: ADMIN });
    expect(setup.status).toBe(201);
    cookie = sessionCookieOf(setup);
    key = (await bodyOf(await http('/api/keys', { method: 'POST', cookie, json: { name: 'cli-agent-test' } }))).key;
  }, 120_000);
  afterAll(async () => {
    await serve?.stop();
    await ssh?.close();
    await mail?.close();
    await ds?.cleanup();
  });

  /** Runs a scan of TARGET through the agent; its final record once the agent, too, is done with it. */
  async function scanThroughAgent(agent: AgentProcess): Promise<any> {
    const res = await http(`/api/scan/trigger?subnet=${TARGET}&profile=normal`, { method: 'POST', key });
    expect(res.status).toBe(200);
    const { scan_id: scanId } = await bodyOf(res);
    // The server completes the scan while recording the first upload; the agent learns it from the retry's answer.
    await waitFor(
      `the agent to finish scan ${scanId}`,
      async () => agent.log.some((l) => l.scan_id === scanId && /recorded|refused|failed/.test(l.msg)),
      120_000,
    );
    return bodyOf(await http(`/api/scans/${scanId}`, { key }));
  }

  it('takes the scan, finds the port with nmap, and a dropped upload is retried without duplicates', async () => {
    const created = await bodyOf(await http('/api/agents', { method: 'POST', cookie, json: { name: 'lab-agent', networks: [NETWORK] } }));
    const proxy = await flakyProxy(serve.baseUrl);
    const agent = await startAgent(proxy.url, created.token, ['--engine', 'nmap']);
    try {
      proxy.dropNextUpload();
      const first = await scanThroughAgent(agent);
      expect(first, JSON.stringify(first)).toMatchObject({ status: 'completed', devices_found: 1, runner: 'agent lab-agent', agent_id: created.id });
      // The first upload reached the server but its answer never reached the agent: it sent it again.
      expect(proxy.uploads).toBe(2);
      expect(agent.log.some((l) => /could not upload the results/.test(l.msg ?? ''))).toBe(true);

      const devices = await bodyOf(await http('/api/devices', { key }));
      expect(devices).toHaveLength(1);
      expect(devices[0]).toMatchObject({ ip_address: TARGET, open_ports: [ssh.port] });
      const detail = await bodyOf(await http(`/api/devices/${devices[0].id}`, { key }));
      expect(detail.ports).toEqual([expect.objectContaining({ port: ssh.port, state: 'open', service: 'ssh', product: 'OpenSSH' })]);

      // A second scan after a change (a mail server started), its upload dropped too: one change recorded.
      mail = await bannerListener(TARGET, '220 mail.example ESMTP Postfix\r\n', mailPort);
      proxy.dropNextUpload();
      const second = await scanThroughAgent(agent);
      expect(second).toMatchObject({ status: 'completed', devices_found: 1 });
      expect(proxy.uploads).toBe(4);
      const changes = await bodyOf(await http(`/api/changes?scan_id=${second.scan_id}`, { key }));
      expect(changes.map((c: { change_type: string }) => c.change_type)).toEqual(['port_opened']);
      expect((await bodyOf(await http('/api/devices', { key })))[0].open_ports).toEqual([ssh.port, mail.port].sort((a, b) => a - b));

      const [listed] = await bodyOf(await http('/api/agents', { cookie }));
      expect(listed).toMatchObject({ name: 'lab-agent', status: 'online', engine: 'nmap, native' });
      expect(listed.version).toMatch(/^\d+\.\d+\.\d+/);
      expect(listed.last_seen_at).not.toBeNull();
    } finally {
      expect(await agent.stop()).toBe(0);
      await proxy.close();
    }
  }, 240_000);

  it('stops a running scan when it is cancelled on the server, and reports it cancelled', async () => {
    // A service that accepts connections and never speaks keeps nmap's service detection busy for a while.
    const silent = await silentListener('127.0.0.91');
    const created = await bodyOf(await http('/api/agents', { method: 'POST', cookie, json: { name: 'cancel-agent', networks: ['127.0.0.91/32'] } }));
    const agent = await startAgent(serve.baseUrl, created.token);
    try {
      const put = await http('/api/config', { method: 'PUT', cookie, json: { scanning: { port_range: `${ssh.port},${mailPort},${silent.port}` } } });
      expect(put.status).toBe(200);
      const started = await bodyOf(await http('/api/scan/trigger?subnet=127.0.0.91&profile=normal', { method: 'POST', key }));
      await waitFor('the agent to take the scan', async () => agent.log.some((l) => l.scan_id === started.scan_id && l.msg === 'scan taken'), 30_000);
      const cancelled = await http(`/api/scans/${started.scan_id}/cancel`, { method: 'POST', key });
      expect(cancelled.status).toBe(200);
      expect(await bodyOf(cancelled)).toMatchObject({ scan_id: started.scan_id, status: 'cancelled', runner: 'agent cancel-agent' });
      await waitFor(
        'the agent to log the cancel',
        async () => agent.log.some((l) => l.scan_id === started.scan_id && l.msg === 'scan cancelled'),
        30_000,
      );
    } finally {
      expect(await agent.stop()).toBe(0);
      await silent.close();
    }
  }, 90_000);

  it('ends with a clear message when its agent is revoked', async () => {
    const created = await bodyOf(await http('/api/agents', { method: 'POST', cookie, json: { name: 'doomed', networks: ['127.0.0.80/29'] } }));
    const agent = await startAgent(serve.baseUrl, created.token);
    expect((await http(`/api/agents/${created.id}`, { method: 'DELETE', cookie })).status).toBe(200);
    // Its waiting poll notices within a few seconds.
    expect(await Promise.race([agent.exited, new Promise((r) => setTimeout(() => r('still running'), 20_000))])).toBe(1);
    expect(agent.stderr()).toMatch(/the server refused the agent token: it is wrong, or the agent was revoked/);
  }, 60_000);
});
