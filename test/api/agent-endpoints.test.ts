/**
 * The agent endpoints (CONTRACT §12) over HTTP against the real server: an agent token opens
 * them and nothing else, long-polling hands out the agent's queued scans, progress renews the
 * lease and carries a cancel, and results uploaded twice (a retry after a dropped connection) are
 * recorded once. The agent here is the test itself speaking the protocol; test/cli/agent.test.ts
 * runs the real `netwarden agent`.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';

const NETWORK = '127.0.0.64/28';

interface Agent {
  id: number;
  token: string;
}

function bearer(token: string): HeadersInit {
  return { Authorization: `Bearer ${token}` };
}

function host(ip: string, mac: string | null = null) {
  return { ip, mac, vendor: null, hostname: null as string | null };
}

function port(n: number, service: string, product: string | null = null) {
  return { port: n, protocol: 'tcp', state: 'open', service, product, version: null as string | null, extra_info: null as string | null, cpe: [] };
}

function scanned(ip: string, ports: ReturnType<typeof port>[]) {
  return { ...host(ip), os_name: null, device_type: null, ports };
}

describe.each(testDatabases())('agent endpoints ($kind)', (database) => {
  let server: TestServer;
  let cookie: string;
  let key: string;
  let agent: Agent;
  const run = randomUUID();

  const poll = (token: string, body: Record<string, unknown> = {}) =>
    server.request('/api/agent/jobs/next', {
      method: 'POST',
      headers: bearer(token),
      json: { run_id: run, version: '9.8.7', engine: 'nmap', hostname: 'site-b', wait_seconds: 0, ...body },
    });
  const agentPost = (token: string, path: string, json: unknown) => server.request(path, { method: 'POST', headers: bearer(token), json });
  const agents = async () => readJson(await server.request('/api/agents', { cookie }));

  async function createAgent(name: string, networks: string[]): Promise<Agent> {
    const res = await server.request('/api/agents', { method: 'POST', cookie, json: { name, networks } });
    expect(res.status).toBe(201);
    const body = await readJson(res);
    expect(body.token).toMatch(/^nwa_/);
    return { id: body.id, token: body.token };
  }

  /** Queues a scan of the agent's network and has the agent take it. */
  async function takeScan(profile = 'normal'): Promise<number> {
    const started = await triggerScan(server, key, { subnet: NETWORK, profile });
    const res = await poll(agent.token, { wait_seconds: 5 });
    expect(res.status).toBe(200);
    const job = await readJson(res);
    expect(job.scan_id).toBe(started.scan_id);
    return job.scan_id;
  }

  beforeEach(async () => {
    ({ server, cookie, key } = await startServerWithAdmin(database));
    agent = await createAgent('site-b', [NETWORK]);
  });
  afterEach(async () => {
    await server?.close();
  });

  it('an agent token opens the agent endpoints only, and only an agent token opens them', async () => {
    for (const path of ['/api/devices', '/api/agents', '/api/stats', '/api/auth/me', '/api/no-such-route']) {
      const res = await server.request(path, { headers: bearer(agent.token) });
      expect(res.status, path).toBe(401);
      expect(await readJson(res)).toEqual({ detail: 'Not authenticated' });
    }
    expect((await server.request('/api/devices', { key: agent.token })).status).toBe(401);
    expect((await server.request('/api/scan/trigger', { method: 'POST', headers: bearer(agent.token) })).status).toBe(401);

    const body = { run_id: run, version: '1', engine: 'nmap', wait_seconds: 0 };
    expect((await server.request('/api/agent/jobs/next', { method: 'POST', key, json: body })).status).toBe(401);
    expect((await server.request('/api/agent/jobs/next', { method: 'POST', headers: bearer(key), json: body })).status).toBe(401);
    expect((await server.request('/api/agent/jobs/next', { method: 'POST', cookie, json: body })).status).toBe(401);
    expect((await server.request('/api/agent/jobs/next', { method: 'POST', json: body })).status).toBe(401);
    const forged = `nwa_${'A'.repeat(43)}`;
    expect((await poll(forged)).status).toBe(401);
    // The token and an API key at once: refused, not one of them picked.
    expect((await server.request('/api/agent/jobs/next', { method: 'POST', key, headers: bearer(agent.token), json: body })).status).toBe(401);

    const ok = await poll(agent.token);
    expect(ok.status).toBe(204);
  });

  it('shows status, version, host and last contact; scans of an offline agent wait in queued', async () => {
    const [before] = await agents();
    expect(before).toMatchObject({ id: agent.id, status: 'offline', last_seen_at: null, version: null });

    const started = await triggerScan(server, key, { subnet: NETWORK, profile: 'quick' });
    await new Promise((r) => setTimeout(r, 1500));
    const queued = await readJson(await server.request(`/api/scans/${started.scan_id}`, { key }));
    expect(queued).toMatchObject({ status: 'queued', agent_id: agent.id, runner: null });

    const res = await poll(agent.token, { wait_seconds: 5 });
    expect(res.status).toBe(200);
    const job = await readJson(res);
    expect(job).toMatchObject({ scan_id: started.scan_id, profile: 'quick', subnet: NETWORK, device: null, ports: null, engine: expect.any(String) });
    const [after] = await agents();
    expect(after).toMatchObject({ status: 'online', version: '9.8.7', hostname: 'site-b', engine: 'nmap' });
    expect(Date.now() - Date.parse(after.last_seen_at)).toBeLessThan(60_000);
    expect(await readJson(await server.request(`/api/scans/${started.scan_id}`, { key }))).toMatchObject({
      status: 'running',
      runner: 'agent site-b',
    });
  });

  it('a waiting long poll is answered with a scan queued while it waits', async () => {
    const waiting = poll(agent.token, { wait_seconds: 20 });
    await new Promise((r) => setTimeout(r, 500));
    const started = await triggerScan(server, key, { subnet: NETWORK, profile: 'quick' });
    const res = await waiting;
    expect(res.status).toBe(200);
    expect((await readJson(res)).scan_id).toBe(started.scan_id);
  });

  it('progress renews the lease; a cancel ends the scan at once, and later progress or results get 409', async () => {
    const scanId = await takeScan();
    const progress = {
      phase: 'ports',
      percent: 40,
      hosts_total: 16,
      hosts_found: 2,
      hosts_done: 1,
      current_host: null,
      elapsed_seconds: 3,
      eta_seconds: 5,
    };
    const first = await agentPost(agent.token, `/api/agent/scans/${scanId}/progress`, { run_id: run, progress });
    expect(first.status).toBe(200);
    expect(await readJson(first)).toEqual({ action: 'continue' });
    expect((await readJson(await server.request(`/api/scans/${scanId}`, { key }))).progress).toMatchObject({ phase: 'ports', percent: 40 });

    // Another run of the same agent does not hold the scan.
    const other = await agentPost(agent.token, `/api/agent/scans/${scanId}/progress`, { run_id: randomUUID(), progress });
    expect(await readJson(other)).toEqual({ action: 'drop' });

    // A cancel on the server is final at once (issue 19): the scan ends cancelled without waiting for the agent.
    const asked = Date.now();
    const cancelled = await server.request(`/api/scans/${scanId}/cancel`, { method: 'POST', key });
    expect(cancelled.status).toBe(200);
    expect(Date.now() - asked).toBeLessThan(2000);
    expect(await readJson(cancelled)).toMatchObject({ scan_id: scanId, status: 'cancelled' });
    expect(await readJson(await server.request(`/api/scans/${scanId}`, { key }))).toMatchObject({ status: 'cancelled' });
    // Progress and results for it are refused from now on: 409, naming the scan and how it ended.
    const late = await agentPost(agent.token, `/api/agent/scans/${scanId}/progress`, { run_id: run, progress });
    expect(late.status).toBe(409);
    expect(await readJson(late)).toMatchObject({ scan_id: scanId, status: 'cancelled', detail: expect.stringMatching(/has ended \(cancelled/) });
    const upload = await agentPost(agent.token, `/api/agent/scans/${scanId}/results`, {
      run_id: run,
      engine: 'nmap',
      hosts: [host('127.0.0.65')],
      ports: [scanned('127.0.0.65', [port(22, 'ssh')])],
    });
    expect(upload.status).toBe(409);
    expect(await readJson(upload)).toMatchObject({ scan_id: scanId, status: 'cancelled' });
    expect(await readJson(await server.request('/api/devices', { key }))).toEqual([]);
    // The agent's own report of the cancel is taken as it is (idempotent): the scan stays cancelled.
    const ended = await agentPost(agent.token, `/api/agent/scans/${scanId}/end`, { run_id: run, status: 'cancelled', error: 'Cancelled' });
    expect(ended.status).toBe(200);
    expect(await readJson(ended)).toMatchObject({ scan_id: scanId, status: 'cancelled' });
  });

  it('results uploaded twice (and at once) are recorded once: one set of devices and changes', async () => {
    const first = await takeScan();
    const upload1 = {
      run_id: run,
      engine: 'nmap',
      hosts: [host('127.0.0.65', 'B8:27:EB:00:00:01'), host('127.0.0.66')],
      ports: [scanned('127.0.0.65', [port(22, 'ssh', 'OpenSSH')]), scanned('127.0.0.66', [port(80, 'http')])],
      warnings: ['a warning from the agent'],
    };
    // Two at once (a retry racing the original), then a third after it completed.
    const [a, b] = await Promise.all([
      agentPost(agent.token, `/api/agent/scans/${first}/results`, upload1),
      agentPost(agent.token, `/api/agent/scans/${first}/results`, upload1),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const again = await agentPost(agent.token, `/api/agent/scans/${first}/results`, upload1);
    expect(again.status).toBe(200);
    const record = await readJson(again);
    expect(record).toMatchObject({
      scan_id: first,
      status: 'completed',
      devices_found: 2,
      runner: 'agent site-b',
      warnings: ['a warning from the agent'],
    });

    const devices = await readJson(await server.request('/api/devices', { key }));
    expect(devices.map((d: { ip_address: string; open_ports: number[] }) => [d.ip_address, d.open_ports])).toEqual([
      ['127.0.0.65', [22]],
      ['127.0.0.66', [80]],
    ]);

    // A second scan: .66 is gone, .65 opened 80, .67 is new. Uploaded twice.
    const second = await takeScan();
    const upload2 = {
      run_id: run,
      engine: 'nmap',
      hosts: [host('127.0.0.65', 'B8:27:EB:00:00:01'), host('127.0.0.67')],
      ports: [scanned('127.0.0.65', [port(22, 'ssh', 'OpenSSH'), port(80, 'http')]), scanned('127.0.0.67', [port(443, 'https')])],
    };
    expect((await agentPost(agent.token, `/api/agent/scans/${second}/results`, upload2)).status).toBe(200);
    const changesOnce = await readJson(await server.request(`/api/changes?scan_id=${second}`, { key }));
    expect((await agentPost(agent.token, `/api/agent/scans/${second}/results`, upload2)).status).toBe(200);
    const changes = await readJson(await server.request(`/api/changes?scan_id=${second}`, { key }));
    expect(changes).toEqual(changesOnce);
    const kinds = changes.map((c: { change_type: string }) => c.change_type).sort();
    expect(kinds).toEqual(['device_added', 'device_removed', 'port_opened']);
    expect((await readJson(await server.request('/api/devices', { key }))).length).toBe(3);
  });

  it('an upload another instance is recording answers 409 with a retry hint; one left by an instance that died is taken over', async () => {
    const scanId = await takeScan();
    const upload = { run_id: run, engine: 'nmap', hosts: [host('127.0.0.65')], ports: [scanned('127.0.0.65', [port(22, 'ssh')])] };
    // As another instance marks an upload it is recording (it renews nothing else: the agent waits).
    await server.store.scans.update(scanId, { upload_started_at: new Date(Date.now() - 10_000).toISOString() });
    const busy = await agentPost(agent.token, `/api/agent/scans/${scanId}/results`, upload);
    expect(busy.status).toBe(409);
    expect(busy.headers.get('retry-after')).toBe('5');
    expect(await readJson(busy)).toMatchObject({ scan_id: scanId, retry_after_seconds: 5, detail: expect.stringMatching(/being recorded; retry/) });

    // That instance died mid-recording 3 minutes ago: the retry takes over and records once.
    await server.store.scans.update(scanId, { upload_started_at: new Date(Date.now() - 180_000).toISOString() });
    const taken = await agentPost(agent.token, `/api/agent/scans/${scanId}/results`, upload);
    expect(taken.status).toBe(200);
    expect(await readJson(taken)).toMatchObject({ status: 'completed', devices_found: 1 });
    expect((await readJson(await server.request('/api/devices', { key }))).length).toBe(1);
  });

  it('refuses results outside the scan target, from another run, or for another agent', async () => {
    const scanId = await takeScan();
    const outside = await agentPost(agent.token, `/api/agent/scans/${scanId}/results`, {
      run_id: run,
      engine: 'nmap',
      hosts: [host('127.0.0.200')],
      ports: [],
    });
    expect(outside.status).toBe(400);
    expect((await readJson(outside)).detail).toMatch(/hosts\.0\.ip: 127\.0\.0\.200 is outside the scan's target 127\.0\.0\.64\/28/);

    const otherRun = await agentPost(agent.token, `/api/agent/scans/${scanId}/results`, {
      run_id: randomUUID(),
      engine: 'nmap',
      hosts: [],
      ports: [],
    });
    expect(otherRun.status).toBe(409);

    const stranger = await createAgent('site-c', ['127.0.0.128/28']);
    const notMine = await agentPost(stranger.token, `/api/agent/scans/${scanId}/results`, { run_id: run, engine: 'nmap', hosts: [], ports: [] });
    expect(notMine.status).toBe(404);

    const badBody = await agentPost(agent.token, `/api/agent/scans/${scanId}/results`, {
      run_id: run,
      engine: 'nmap',
      hosts: [{ ip: 'x' }],
      ports: [],
    });
    expect(badBody.status).toBe(400);
  });

  it('accepts an upload larger than the 1 MiB other routes take, and describes the endpoints in OpenAPI', async () => {
    const scanId = await takeScan();
    // One host reporting 12,000 closed ports: about 1.5 MiB of JSON.
    const many = Array.from({ length: 12_000 }, (_, i) => ({ ...port(i + 1, 'unknown'), state: 'closed' }));
    const body = { run_id: run, engine: 'nmap', hosts: [host('127.0.0.65')], ports: [scanned('127.0.0.65', many)] };
    expect(JSON.stringify(body).length).toBeGreaterThan(1024 * 1024);
    const res = await agentPost(agent.token, `/api/agent/scans/${scanId}/results`, body);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await readJson(res)).toMatchObject({ status: 'completed', devices_found: 1 });

    const doc = await readJson(await server.request('/openapi.json'));
    for (const path of [
      '/api/agent/jobs/next',
      '/api/agent/scans/{scan_id}/progress',
      '/api/agent/scans/{scan_id}/results',
      '/api/agent/scans/{scan_id}/end',
    ]) {
      expect(doc.paths[path]?.post, path).toMatchObject({ summary: expect.any(String), security: [{ agentToken: [] }], tags: ['agent'] });
    }
    expect(doc.components.securitySchemes.agentToken).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('a revoked agent is refused at once, and its queued scan fails saying why', async () => {
    const started = await triggerScan(server, key, { subnet: NETWORK, profile: 'quick' });
    expect((await server.request(`/api/agents/${agent.id}`, { method: 'DELETE', cookie })).status).toBe(200);
    const res = await poll(agent.token);
    expect(res.status).toBe(401);
    const record = await waitForScan(server, key, started.scan_id, 10_000);
    expect(record).toMatchObject({ status: 'failed' });
    expect(record.error).toMatch(/revoked/);
  });

  // Issue 19 (CONTRACT §14): bounded input, and agents in their lane -------------------------------

  it('refuses values out of bounds with 400 naming the entry and records nothing; cleans line breaks from hostnames', async () => {
    const scanId = await takeScan();
    const upload = (hosts: unknown[], ports: unknown[]) =>
      agentPost(agent.token, `/api/agent/scans/${scanId}/results`, { run_id: run, engine: 'nmap', hosts, ports });
    const cases: [unknown[], unknown[], RegExp][] = [
      [[host('127.0.0.065')], [], /^hosts\.0\.ip: /],
      [[host('127.0.0.65'), host('0x7f.0.0.66')], [], /^hosts\.1\.ip: /],
      [[host('127.0.0.65')], [scanned('127.0.0.65', [port(22, 'ssh'), port(70_000, 'x')])], /^ports\.0\.ports\.1\.port: /],
      [[host('127.0.0.65')], [scanned('127.0.0.65', [port(0, 'x')])], /^ports\.0\.ports\.0\.port: /],
      [[host('127.0.0.65')], [scanned('127.0.0.65', [port(22, 'ssh', 'p'.repeat(257))])], /^ports\.0\.ports\.0\.product: /],
      [[host('127.0.0.65')], [scanned('127.0.0.65', [{ ...port(22, 'ssh'), extra_info: 'e'.repeat(257) }])], /^ports\.0\.ports\.0\.extra_info: /],
      [[host('127.0.0.65')], [scanned('127.0.0.65', [{ ...port(22, 'ssh'), version: 'v'.repeat(257) }])], /^ports\.0\.ports\.0\.version: /],
      [[{ ...host('127.0.0.65'), hostname: 'h'.repeat(254) }], [], /^hosts\.0\.hostname: /],
    ];
    for (const [hosts, ports, detail] of cases) {
      const res = await upload(hosts, ports);
      const body = await readJson(res);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(body.detail).toMatch(detail);
      expect(body.detail).not.toMatch(/sql|constraint|integer|insert|select/i);
    }
    expect(await readJson(await server.request('/api/devices', { key }))).toEqual([]);
    expect(await readJson(await server.request(`/api/scans/${scanId}`, { key }))).toMatchObject({ status: 'running', error: null });

    // At the limits exactly: taken. A hostname's line breaks and control characters are removed, never stored.
    const ok = await upload(
      [{ ...host('127.0.0.65'), hostname: 'evil\r\nSubject: forged\u2028line\u0007' }],
      [scanned('127.0.0.65', [{ ...port(22, 'ssh', 'p'.repeat(256)), version: 'v'.repeat(256), extra_info: 'e'.repeat(256) }])],
    );
    expect(ok.status, await ok.clone().text()).toBe(200);
    const [device] = await readJson(await server.request('/api/devices', { key }));
    expect(device.hostname).toBe('evil Subject: forged line');
    const detail = await readJson(await server.request(`/api/devices/${device.id}`, { key }));
    expect(detail.ports[0]).toMatchObject({ port: 22, product: 'p'.repeat(256), version: 'v'.repeat(256) });
  });

  it('places hosts only inside the target: a MAC of a device outside it never moves that device', async () => {
    // A device elsewhere (the lab network, brought in by an import) with its MAC.
    const lab = `<?xml version="1.0"?><!DOCTYPE nmaprun>
<nmaprun scanner="nmap" args="nmap -n -sn 10.66.0.11" start="1795656544" version="7.93">
<host><status state="up"/><address addr="10.66.0.11" addrtype="ipv4"/><address addr="B8:27:EB:66:00:01" addrtype="mac" vendor="Raspberry Pi Foundation"/></host>
<runstats><finished exit="success"/></runstats></nmaprun>`;
    const imported = await server.request('/api/scans/import', { method: 'POST', body: lab, headers: { 'Content-Type': 'application/xml' }, key });
    expect(imported.status, await imported.clone().text()).toBe(201);
    const [before] = await readJson(await server.request('/api/devices', { key }));
    expect(before).toMatchObject({ ip_address: '10.66.0.11', mac_address: 'B8:27:EB:66:00:01' });

    const scanId = await takeScan();
    const res = await agentPost(agent.token, `/api/agent/scans/${scanId}/results`, {
      run_id: run,
      engine: 'nmap',
      hosts: [host('127.0.0.66', 'b8:27:eb:66:00:01'), host('127.0.0.67', 'B8:27:EB:00:00:67')],
      ports: [scanned('127.0.0.66', [port(22, 'ssh')])],
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const record = await readJson(res);
    expect(record.warnings).toEqual([
      expect.stringMatching(/^hosts\.0\.mac: B8:27:EB:66:00:01 belongs to device \d+ at 10\.66\.0\.11, outside the scan's target 127\.0\.0\.64\/28/),
    ]);

    const devices = await readJson(await server.request('/api/devices', { key }));
    const byIp = new Map<string, any>(devices.map((d: any) => [d.ip_address, d]));
    expect([...byIp.keys()].sort()).toEqual(['10.66.0.11', '127.0.0.66', '127.0.0.67']);
    expect(byIp.get('10.66.0.11')).toMatchObject({ id: before.id, mac_address: 'B8:27:EB:66:00:01' });
    expect(byIp.get('127.0.0.66')).toMatchObject({ mac_address: null, open_ports: [22] });
    expect(byIp.get('127.0.0.66').id).not.toBe(before.id);
    expect(byIp.get('127.0.0.67')).toMatchObject({ mac_address: 'B8:27:EB:00:00:67' });
  });

  it("keeps agents' networks within the allowed scan targets and apart from each other", async () => {
    const create = (name: string, networks: string[]) => server.request('/api/agents', { method: 'POST', cookie, json: { name, networks } });
    const refused: [string[], RegExp][] = [
      [['0.0.0.0/0'], /^networks\.0: 0\.0\.0\.0\/0 is outside the allowed scan targets \(NETWARDEN_SCAN_ALLOW: /],
      [['127.0.0.96/28', '192.168.1.0/24'], /^networks\.1: 192\.168\.1\.0\/24 is outside the allowed scan targets/],
      [['127.0.0.0/24'], /^networks\.0: 127\.0\.0\.0\/24 overlaps 127\.0\.0\.64\/28 of agent 'site-b'/],
      [['127.0.0.64/28'], /^networks\.0: 127\.0\.0\.64\/28 overlaps 127\.0\.0\.64\/28 of agent 'site-b'/],
      [['127.0.0.72/29'], /^networks\.0: 127\.0\.0\.72\/29 overlaps 127\.0\.0\.64\/28 of agent 'site-b'/],
    ];
    for (const [networks, detail] of refused) {
      const res = await create('elsewhere', networks);
      expect(res.status, networks.join()).toBe(400);
      expect((await readJson(res)).detail).toMatch(detail);
    }
    expect((await agents()).map((a: any) => a.name)).toEqual(['site-b']);
    expect((await create('next-door', ['127.0.0.80/28'])).status).toBe(201);
    // A revoked agent's networks are free again.
    expect((await server.request(`/api/agents/${agent.id}`, { method: 'DELETE', cookie })).status).toBe(200);
    expect((await create('successor', ['127.0.0.64/28'])).status).toBe(201);
  });

  it('revoking an agent needs a session: an API key gets 403 and the agent keeps working', async () => {
    const byKey = await server.request(`/api/agents/${agent.id}`, { method: 'DELETE', key });
    expect(byKey.status).toBe(403);
    expect((await readJson(byKey)).detail).toMatch(/needs a logged-in session/);
    expect((await poll(agent.token)).status).toBe(204);
    expect((await agents()).map((a: any) => a.id)).toEqual([agent.id]);
    const audit = await readJson(await server.request('/api/audit-logs?action=agent_revoked', { key }));
    expect(audit).toEqual([]);
    expect((await server.request(`/api/agents/${agent.id}`, { method: 'DELETE', cookie })).status).toBe(200);
    expect((await poll(agent.token)).status).toBe(401);
  });
});
