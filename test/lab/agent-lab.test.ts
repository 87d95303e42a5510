/**
 * A routed network scanned through an agent (issue 13 item 5), in network namespaces built by
 * test/lab/agent-lab.sh: `netwarden serve` in nwa-server, which has no route to 10.66.1.0/24;
 * `netwarden agent` in nwa-agent, on the bridge nwlab1 with three hosts. A scan of 10.66.1.0/24
 * goes through the agent and finds every host with its MAC (ARP: only the agent is on that
 * segment), ports and services; after the hosts change, a second scan records exactly the changes.
 *
 *   h1 10.66.1.11 02:66:01:00:00:01  22 SSH (OpenSSH)  → then 22 closed, 2222 SSH opened
 *   h2 10.66.1.12 02:66:01:00:00:02  21 FTP (vsftpd)
 *   h3 10.66.1.13 02:66:01:00:00:03  25 SMTP (Postfix) → then off the segment
 *
 * Needs root (ip netns) and nmap; skipped with a message elsewhere. Kept short for CI: the nmap
 * engine only, four ports, banner services (no HTTP probe waits).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nmapVersion } from '../../src/engines/nmap.js';
import { ADMIN } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';
import { BIN, baseEnv, bodyOf, client, sessionCookieOf } from '../cli/helpers.js';
import { labUnavailableReason } from './lab.js';

const AGENT_LAB = join(dirname(fileURLToPath(import.meta.url)), 'agent-lab.sh');
const unavailable = await labUnavailableReason();
if (unavailable) console.warn(`skipping the agent namespace lab: ${unavailable}`);
const hasNmap = unavailable ? false : (await nmapVersion()) !== null;
if (!unavailable && !hasNmap) console.warn('skipping the agent namespace lab: nmap is not installed (apt-get install nmap)');

const SUBNET = '10.66.1.0/24';
const SERVER_FOR_TEST = '10.66.0.250';
const SERVER_FOR_AGENT = '10.66.0.253';
const MAC = { h1: '02:66:01:00:00:01', h2: '02:66:01:00:00:02', h3: '02:66:01:00:00:03' };
const SSH = 'SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13';

function run(file: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { env: { ...process.env, NWLAB_QUIET: '1' }, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

async function agentLab(...args: string[]): Promise<string> {
  const result = await run('bash', [AGENT_LAB, ...args]);
  if (result.code !== 0) throw new Error(`agent-lab.sh ${args.join(' ')} failed (exit ${result.code}): ${result.stderr.trim()}`);
  return result.stdout;
}

interface Proc {
  child: ChildProcess;
  log: Array<Record<string, any>>;
  stop(): Promise<void>;
}

/** Starts `netwarden <args>` inside a namespace; resolves once a log line satisfies `ready` (with its value). */
function startIn<T>(
  namespace: string,
  args: string[],
  env: Record<string, string>,
  ready: (line: Record<string, any>) => T | undefined,
): Promise<Proc & { value: T }> {
  const child = spawn('ip', ['netns', 'exec', namespace, process.execPath, BIN, ...args], {
    env: { ...baseEnv(), NETWARDEN_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const log: Array<Record<string, any>> = [];
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`netwarden ${args[0]} in ${namespace} not ready in time\n${stderr}`)), 60_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as Record<string, any>;
        log.push(entry);
        const value = ready(entry);
        if (value !== undefined) {
          clearTimeout(timer);
          resolve({ child, log, stop, value });
        }
      } catch {
        // not a log line
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`netwarden ${args[0]} in ${namespace} exited before it was ready\n${stderr}`));
    });
  });
}

describe.skipIf(unavailable !== null || !hasNmap)('a routed network scanned through an agent (namespaces, bridge nwlab1)', () => {
  let dataDir: string;
  let server: Proc | undefined;
  let agent: Proc | undefined;
  let http: ReturnType<typeof client>;
  let key: string;
  let agentId: number;

  beforeAll(async () => {
    await agentLab('up');
    await agentLab('listen', 'h1', '22', 'banner', SSH);
    await agentLab('listen', 'h2', '21', 'banner', '220 (vsFTPd 3.0.5)');
    await agentLab('listen', 'h3', '25', 'banner', '220 mail.lab.example ESMTP Postfix (Ubuntu)');

    dataDir = mkdtempSync(join(tmpdir(), 'netwarden-agent-lab-'));
    writeFileSync(
      join(dataDir, 'netwarden.json'),
      JSON.stringify({
        settings: {
          // The agent's own address on the segment is not a device of the scan.
          network: { subnet: SUBNET, exclude: ['10.66.1.1/32'], resolve_hostnames: false },
          scanning: { engine: 'nmap', port_range: '21,22,25,2222', top_ports: 0, os_detection: false, host_timeout_seconds: 30 },
          updates: { feed_url: 'http://127.0.0.1:9/releases/latest' },
        },
      }),
    );
    server = await startIn(
      'nwa-server',
      ['serve'],
      {
        NETWARDEN_DATA_DIR: dataDir,
        NETWARDEN_HOST: '0.0.0.0',
        NETWARDEN_PORT: '0',
        // The lab segment is a scan target here (it is the project's own), scanned only through the agent.
        NETWARDEN_SCAN_ALLOW: '127.0.0.0/8,10.66.0.0/24,10.66.1.0/24',
        NETWARDEN_UPDATE_FEED_URL: 'http://127.0.0.1:9/releases/latest',
      },
      (line) => (line.msg === 'netwarden listening' && typeof line.url === 'string' ? new URL(line.url).port : undefined),
    );
    const port = (server as Proc & { value: string }).value;
    http = client(`http://${SERVER_FOR_TEST}:${port}`);
    // The test sets the server up from the bridge, not from its own loopback: that needs the
    // one-time set-up code the server logged at start-up (docs/security.md, "First-run set-up").
    const setupCode = await waitFor(
      'the set-up code in the server log',
      async () => server!.log.find((line) => typeof line.setup_code === 'string')?.setup_code as string | undefined,
      10_000,
    );
    const setup = await http('/api/auth/setup', { method: 'POST', json: { ...ADMIN, setup_code: setupCode } });
    expect(setup.status).toBe(201);
    const cookie = sessionCookieOf(setup);
    key = (await bodyOf(await http('/api/keys', { method: 'POST', cookie, json: { name: 'agent-lab' } }))).key;
    const created = await bodyOf(await http('/api/agents', { method: 'POST', cookie, json: { name: 'site-b', networks: [SUBNET] } }));
    agentId = created.id;
    agent = await startIn(
      'nwa-agent',
      ['agent', '--server', `http://${SERVER_FOR_AGENT}:${port}`, '--engine', 'nmap'],
      { NETWARDEN_AGENT_TOKEN: created.token, NETWARDEN_SCAN_ALLOW: SUBNET },
      (line) => (line.msg === 'netwarden agent ready' ? true : undefined),
    );
  }, 120_000);

  afterAll(async () => {
    // Always, also after a failure: the processes, then every namespace and link of the lab.
    await agent?.stop().catch(() => undefined);
    await server?.stop().catch(() => undefined);
    await agentLab('down');
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  async function scan(): Promise<any> {
    const res = await http(`/api/scan/trigger?subnet=${encodeURIComponent(SUBNET)}&profile=normal`, { method: 'POST', key });
    expect(res.status).toBe(200);
    const { scan_id: scanId } = await bodyOf(res);
    const deadline = Date.now() + 90_000;
    for (;;) {
      const record = await bodyOf(await http(`/api/scans/${scanId}`, { key }));
      if (record.status !== 'queued' && record.status !== 'running') return record;
      if (Date.now() > deadline) throw new Error(`scan ${scanId} still ${record.status}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  it('the server has no route to the segment; a scan through the agent finds every host with its MAC, ports and services', async () => {
    const route = await run('ip', ['-n', 'nwa-server', 'route', 'get', '10.66.1.11']);
    expect(route.code, route.stdout).not.toBe(0);

    const record = await scan();
    expect(record, JSON.stringify(record)).toMatchObject({
      status: 'completed',
      error: null,
      devices_found: 3,
      runner: 'agent site-b',
      agent_id: agentId,
    });

    const devices = await bodyOf(await http('/api/devices', { key }));
    expect(devices.map((d: any) => [d.ip_address, d.mac_address, d.open_ports])).toEqual([
      ['10.66.1.11', MAC.h1, [22]],
      ['10.66.1.12', MAC.h2, [21]],
      ['10.66.1.13', MAC.h3, [25]],
    ]);
    const services = async (ip: string) => {
      const device = devices.find((d: any) => d.ip_address === ip);
      return (await bodyOf(await http(`/api/devices/${device.id}`, { key }))).ports;
    };
    expect(await services('10.66.1.11')).toEqual([expect.objectContaining({ port: 22, state: 'open', service: 'ssh', product: 'OpenSSH' })]);
    expect(await services('10.66.1.12')).toEqual([
      expect.objectContaining({ port: 21, state: 'open', service: 'ftp', product: 'vsftpd', version: '3.0.5' }),
    ]);
    expect(await services('10.66.1.13')).toEqual([
      expect.objectContaining({ port: 25, state: 'open', service: 'smtp', product: expect.stringMatching(/Postfix/) }),
    ]);

    const [listed] = await bodyOf(await http('/api/agents', { key }));
    expect(listed).toMatchObject({ id: agentId, status: 'online', engine: 'nmap, native' });
  }, 120_000);

  it('after the hosts change, a second scan through the agent records exactly the changes', async () => {
    await agentLab('unlisten', 'h1', '22');
    await agentLab('listen', 'h1', '2222', 'banner', SSH);
    await agentLab('stop', 'h3');

    const record = await scan();
    expect(record, JSON.stringify(record)).toMatchObject({ status: 'completed', devices_found: 2 });
    const changes = await bodyOf(await http(`/api/changes?scan_id=${record.scan_id}`, { key }));
    const summary = changes.map((c: any) => `${c.change_type} ${c.device_ip ?? ''}${c.port ? `:${c.port}` : ''}`.trim()).sort();
    expect(summary, JSON.stringify(changes)).toEqual(['device_removed 10.66.1.13', 'port_closed 10.66.1.11:22', 'port_opened 10.66.1.11:2222']);
    const devices = await bodyOf(await http('/api/devices', { key }));
    expect(devices.find((d: any) => d.mac_address === MAC.h1).open_ports).toEqual([2222]);
    expect(devices.find((d: any) => d.mac_address === MAC.h3).online).toBe(false);
  }, 120_000);
});
