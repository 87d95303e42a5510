/**
 * The agent runs the recognition probes where it scans (issue 21): a real AgentRuntime (the code
 * `netwarden agent` runs) with its real client, over HTTP against the real server, takes a scan of
 * a loopback address where a router answers — its web interface (OpenWrt's LuCI title), SSDP
 * naming MiniUPnPd 2.1 with its UDN, SNMP with a community set only on the server — runs the native
 * engine, then the probes, and uploads their results with the host. The server records identity,
 * evidence and decisions as for its own scans, and recognition's CPE reaches CVE matching. Both stores.
 */
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentClient } from '../../src/agent/client.js';
import { AgentRuntime, type AgentLog } from '../../src/agent/runtime.js';
import { EngineSelector } from '../../src/engines/engines.js';
import { testDatabases } from '../helpers/databases.js';
import { listen, type Listener } from '../helpers/listeners.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { randomLoopback } from '../helpers/udp-responders.js';
import { snmpAgent, ssdpResponder } from '../probes/responders.js';

const COMMUNITY = 'lab-only-community';
const UDN = 'uuid:0f1e2d3c-4b5a-6978-8695-a4b3c2d1e0f9';

/** A router's web interface: OpenWrt's LuCI title. */
function luci(host: string): Promise<Listener> {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end(req.method === 'HEAD' ? undefined : '<html><head><title>gw - LuCI</title></head><body>OpenWrt</body></html>');
  });
  return listen(server, host);
}

const lines: Array<{ msg?: string; obj: Record<string, unknown> }> = [];
const log: AgentLog = {
  info: (obj, msg) => lines.push({ obj: obj as Record<string, unknown>, msg }),
  warn: (obj, msg) => lines.push({ obj: obj as Record<string, unknown>, msg }),
  error: (obj, msg) => lines.push({ obj: obj as Record<string, unknown>, msg }),
};

describe.each(testDatabases())('the agent runs the recognition probes ($kind)', (database) => {
  let server: TestServer;
  const closers: { close(): Promise<void> }[] = [];
  let stopAgent: (() => Promise<void>) | null = null;

  afterEach(async () => {
    await stopAgent?.();
    stopAgent = null;
    await Promise.all(closers.splice(0).map((c) => c.close().catch(() => undefined)));
    await server?.close();
  });

  it('probes the hosts its scan reached and uploads the answers: identity, evidence and a CVE from recognition', async () => {
    const ip = randomLoopback();
    const web = await luci(ip);
    closers.push(web);
    const ssdp = await ssdpResponder(ip, { SERVER: 'OpenWrt/23.05 UPnP/1.1 MiniUPnPd/2.1', ST: 'upnp:rootdevice', USN: `${UDN}::upnp:rootdevice` });
    closers.push(ssdp);
    const snmp = await snmpAgent(ip, {
      communities: [COMMUNITY],
      sysDescr: 'Linux OpenWrt 5.15.137 #0 SMP Tue Nov 14 2023 mips',
      sysObjectID: '1.3.6.1.4.1.8072.3.2.10',
      sysName: 'gw-lab',
      engineId: '80001f8880a1b2c3d4e5f60718',
    });
    closers.push(snmp);

    let key: string;
    let cookie: string;
    ({ server, key, cookie } = await startServerWithAdmin(database, {
      settings: {
        scanning: { engine: 'auto', os_detection: false, port_range: String(web.port) },
        // mDNS and NetBIOS have nothing to ask here; the community exists only in the server's settings.
        recognition: { probes: ['ssdp', 'snmp', 'http'], snmp_communities: ['public', COMMUNITY] },
      },
    }));
    const created = await server.request('/api/agents', { method: 'POST', cookie, json: { name: 'branch', networks: [`${ip}/32`] } });
    expect(created.status, await created.clone().text()).toBe(201);
    const { token } = await readJson(created);

    const client = new AgentClient({ server: server.baseUrl, token, version: '0.0.0-test', backoff: { initialMs: 50, maxMs: 200 } });
    const runtime = new AgentRuntime({
      client,
      engines: new EngineSelector(),
      engine: 'native',
      version: '0.0.0-test',
      hostname: 'agent-host',
      log,
      scanAllow: ['127.0.0.0/8'],
      pollWaitSeconds: 1,
      // The responders listen on ports the OS chose (the probes ask 1900 and 161 on a real network).
      probeOptions: { ports: { ssdp: ssdp.port, snmp: snmp.port } },
    });
    const stop = new AbortController();
    const running = runtime.run(stop.signal);
    stopAgent = async () => {
      stop.abort();
      await running;
    };

    const started = await triggerScan(server, key, { subnet: `${ip}/32`, profile: 'normal' });
    const done = await waitForScan(server, key, started.scan_id);
    expect(done.status, JSON.stringify(done)).toBe('completed');
    expect(lines.some((l) => l.msg === 'recognition probes done' && l.obj.answered === 1)).toBe(true);

    const get = async (path: string) => {
      const res = await server.request(path, { key });
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
      return readJson(res);
    };
    const [summary] = await get(`/api/devices?scan_id=${done.scan_id}`);
    expect(summary).toMatchObject({ ip_address: ip, device_type: 'router', name: 'gw-lab' });
    expect(summary.type_confidence).toBeGreaterThan(50);

    const identity = await get(`/api/devices/${summary.id}/identity`);
    // The keys the probes found, as for the server's own scans.
    expect(identity.keys).toContainEqual(expect.objectContaining({ kind: 'upnp_udn', value: UDN, source: 'ssdp' }));
    expect(identity.keys).toContainEqual(expect.objectContaining({ kind: 'snmp_engine_id', value: '80001f8880a1b2c3d4e5f60718', source: 'snmp' }));
    // Evidence from each probe that answered: the page title, SSDP, SNMP (reached with the server's community).
    for (const source of ['http_title', 'ssdp', 'snmp'])
      expect(
        identity.evidence.some((e: any) => e.source === source),
        source,
      ).toBe(true);
    expect(identity.evidence).toContainEqual(expect.objectContaining({ field: 'name', value: 'gw-lab', source: 'snmp' }));
    expect(identity.evidence).toContainEqual(expect.objectContaining({ field: 'os_name', value: 'OpenWrt', source: 'snmp' }));
    expect(identity.decisions.map((d: any) => d.rule).sort()).toEqual(['new_device', 'recognition']);
    // The community is never recorded.
    expect(JSON.stringify(identity)).not.toContain(COMMUNITY);

    // Recognition's MiniUPnPd CPE reached CVE matching, on the device itself.
    const detail = await get(`/api/devices/${summary.id}`);
    expect(detail.cves).toContainEqual(expect.objectContaining({ id: 'CVE-2019-12107', port: null, matched_version: '2.1', confidence: 'likely' }));
    const finding = detail.risk_details.findings.find((f: any) => f.cve_ids.includes('CVE-2019-12107'));
    expect(finding.description).toMatch(/come from recognition.*cpe:\/a:miniupnp_project:miniupnpd:2\.1/);
  }, 120_000);
});
