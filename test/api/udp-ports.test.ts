/**
 * UDP ports (CONTRACT §15, issue 21 §2): scanning.udp_ports is examined by normal scans with the
 * native engine and with nmap (privileged; this machine runs the tests as root). Real UDP
 * responders on loopback: a port that answers is open, one nothing is bound to is closed (the
 * kernel's port unreachable), one bound but silent is open|filtered; the scan's port list carries
 * them after `udp:`; a UDP port that closes is one port_closed with protocol udp, never confused
 * with the TCP port of the same number; the SNMP risk rule fires on an SNMP agent answering with
 * the community "public", and a silent NetBIOS port (open|filtered) is no finding. Over HTTP
 * against the real server, both stores.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { bannerListener, closedPort, type Listener } from '../helpers/listeners.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import {
  closedUdpPort,
  echoingUdpResponder,
  randomLoopback,
  silentUdpResponder,
  snmpResponder,
  type UdpListener,
} from '../helpers/udp-responders.js';

const privileged = process.getuid?.() === 0;
/** nmap's UDP scan needs raw sockets: run as root here (as the tests are); the native engine needs nothing. */
const ENGINES = privileged ? (['native', 'nmap'] as const) : (['native'] as const);

/** `a,b-c`: ports sorted, neighbours merged (the way the scan writes its port list). */
function rangesText(ports: number[]): string {
  const sorted = [...new Set(ports)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; i++) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j;
  }
  return parts.join(',');
}

describe.each(testDatabases())('UDP ports ($kind)', (database) => {
  describe.each(ENGINES)('engine %s', (engine) => {
    let server: TestServer;
    let key: string;
    const closers: Array<Listener | UdpListener> = [];

    afterEach(async () => {
      await Promise.all(closers.splice(0).map((c) => c.close().catch(() => undefined)));
      await server?.close();
    });

    const start = async () => {
      ({ server, key } = await startServerWithAdmin(database, { settings: { scanning: { engine, os_detection: false } } }));
    };
    const get = async (path: string) => {
      const res = await server.request(path, { key });
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
      return readJson(res);
    };
    const configure = async (scanning: Record<string, unknown>) => {
      const res = await server.request('/api/config', { method: 'PUT', key, json: { scanning } });
      expect(res.status, await res.clone().text()).toBe(200);
    };
    const scan = async (ip: string) => {
      const started = await triggerScan(server, key, { subnet: `${ip}/32`, profile: 'normal' });
      const done = await waitForScan(server, key, started.scan_id);
      expect(done.status, JSON.stringify(done)).toBe('completed');
      return done;
    };
    const deviceAt = async (ip: string) => {
      const summary = (await get('/api/devices')).find((d: any) => d.ip_address === ip);
      expect(summary, `a device at ${ip}`).toBeDefined();
      return get(`/api/devices/${summary.id}`);
    };
    const portOf = (detail: any, port: number, protocol: string) => detail.ports.find((p: any) => p.port === port && p.protocol === protocol);

    it('an answering UDP port is open, a refused one closed, a silent one open|filtered; a UDP port closing is one port_closed, apart from TCP', async () => {
      await start();
      const ip = randomLoopback();
      const answering = await echoingUdpResponder(ip);
      closers.push(answering);
      // TCP on the same port number, open throughout: its row and the UDP row are two ports.
      const tcp = await bannerListener(ip, 'SSH-2.0-Netwarden_test\r\n', answering.port);
      closers.push(tcp);
      const silent = await silentUdpResponder(ip);
      closers.push(silent);
      const closed = await closedUdpPort(ip);
      const udpPorts = [answering.port, silent.port, closed];
      await configure({ port_range: String(answering.port), udp_ports: udpPorts.join(',') });

      const one = await scan(ip);
      expect(one.ports_examined).toBe(`${answering.port},udp:${rangesText(udpPorts)}`);
      expect(one.warnings).toEqual([]);
      let detail = await deviceAt(ip);
      expect(portOf(detail, answering.port, 'tcp')).toMatchObject({ state: 'open' });
      expect(portOf(detail, answering.port, 'udp')).toMatchObject({ state: 'open' });
      expect(portOf(detail, silent.port, 'udp')).toMatchObject({ state: 'open|filtered' });
      expect(portOf(detail, closed, 'udp')).toBeUndefined();
      // The responders heard the scan: it probed them over UDP, not just guessed.
      expect(answering.received.length).toBeGreaterThan(0);
      expect(silent.received.length).toBeGreaterThan(0);
      // open|filtered is not open: no finding, and only open ports in the summary's list.
      expect(detail.risk_details.findings.filter((f: any) => f.protocol === 'udp')).toEqual([]);

      // The UDP service stops; TCP on the same number stays.
      await answering.close();
      const two = await scan(ip);
      const changes = await get(`/api/changes?scan_id=${two.scan_id}`);
      expect(changes.map((c: any) => ({ change_type: c.change_type, port: c.port, protocol: c.protocol }))).toEqual([
        { change_type: 'port_closed', port: answering.port, protocol: 'udp' },
      ]);
      detail = await deviceAt(ip);
      expect(portOf(detail, answering.port, 'udp')).toBeUndefined();
      expect(portOf(detail, answering.port, 'tcp')).toMatchObject({ state: 'open' });
      expect(portOf(detail, silent.port, 'udp')).toMatchObject({ state: 'open|filtered' });

      // And it comes back: one port_opened, UDP again.
      const again = await echoingUdpResponder(ip, 'back', answering.port);
      closers.push(again);
      const three = await scan(ip);
      const reopened = await get(`/api/changes?scan_id=${three.scan_id}`);
      expect(reopened.map((c: any) => ({ change_type: c.change_type, port: c.port, protocol: c.protocol }))).toEqual([
        { change_type: 'port_opened', port: answering.port, protocol: 'udp' },
      ]);
    }, 90_000);

    it('an SNMP agent answering the community "public" is an SNMP finding on 161/udp; a silent NetBIOS port is none', async () => {
      await start();
      const ip = randomLoopback();
      const snmp = await snmpResponder(ip, 'Linux test-switch 5.10.0 #1 SMP armv7l');
      closers.push(snmp);
      const netbios = await silentUdpResponder(ip, 137);
      closers.push(netbios);
      await configure({ port_range: String(await closedPort(ip)), udp_ports: '137,161' });

      const done = await scan(ip);
      expect(done.ports_examined).toMatch(/,udp:137,161$/);
      const detail = await deviceAt(ip);
      expect(portOf(detail, 161, 'udp')).toMatchObject({ state: 'open', service: 'snmp' });
      expect(portOf(detail, 137, 'udp')).toMatchObject({ state: 'open|filtered' });
      const findings = detail.risk_details.findings;
      expect(findings).toContainEqual(expect.objectContaining({ title: 'SNMP agent answers', port: 161, protocol: 'udp' }));
      expect(findings.filter((f: any) => f.port === 137)).toEqual([]);
      expect(detail.risk_level).not.toBe('none');
    }, 60_000);
  });
});
