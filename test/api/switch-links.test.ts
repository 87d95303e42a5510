/**
 * Switches and access points on the map (issue 22 §2, CONTRACT §16) end to end, on both stores: a
 * real scan of six loopback addresses with a fake UniFi controller on 127.0.0.1 (its clients and
 * devices say which access point or switch port each hangs off) and an SNMP agent answering a
 * bridge forwarding table on one of the addresses. GET /api/visualization/topology then has the
 * access point and the switches as nodes between the subnet and their clients, with `confirmed`
 * edges naming the source; every device no table places stays on its subnet (`inferred`). Deleting
 * the access point leaves no link to it (its client goes where the switch's table puts it); the
 * next scan with the controller down keeps the controller's links.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { closedPort } from '../helpers/listeners.js';
import { startFakeUnifi } from '../helpers/name-source-fakes.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { snmpAgent, type SnmpAgent } from '../probes/responders.js';

interface Node {
  id: string;
  kind: string;
  device_id: number | null;
  ip_address: string | null;
  subnet: string | null;
}
interface Edge {
  source: string;
  target: string;
  kind: string;
  evidence: string;
  confirmed_by: string | null;
}

/** A /29 of its own on loopback per store (127.x.y.0/29), so parallel files never meet. */
function block(): string {
  const byte = (min: number) => min + Math.floor(Math.random() * (250 - min));
  return `127.${byte(100)}.${byte(0)}`;
}

const MAC = {
  snmpClient: '3C:22:FB:00:00:01',
  wifiClient: '3C:22:FB:00:00:02',
  wiredClient: '3C:22:FB:00:00:03',
  ap: '80:2A:A8:00:00:04',
  unifiSwitch: '80:2A:A8:00:00:05',
};

describe.each(testDatabases())('switches and access points on the map ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let unifi: Awaited<ReturnType<typeof startFakeUnifi>>;
  let agent: SnmpAgent;
  const net = block();
  const ip = (n: number) => `${net}.${n}`;

  beforeAll(async () => {
    unifi = await startFakeUnifi({
      username: 'netwarden',
      password: 'u-pw',
      site: 'default',
      unifiOs: false,
      clients: [
        { mac: MAC.snmpClient.toLowerCase(), ip: ip(1), hostname: 'printer', is_wired: true },
        { mac: MAC.wifiClient.toLowerCase(), ip: ip(2), hostname: 'phone', is_wired: false, ap_mac: MAC.ap.toLowerCase() },
        { mac: MAC.wiredClient.toLowerCase(), ip: ip(3), hostname: 'desk', is_wired: true, sw_mac: MAC.unifiSwitch.toLowerCase(), sw_port: 7 },
      ],
      devices: [
        {
          mac: MAC.ap.toLowerCase(),
          ip: ip(4),
          type: 'uap',
          name: 'Hall AP',
          uplink: { uplink_mac: MAC.unifiSwitch.toLowerCase(), uplink_remote_port: 3, type: 'wire' },
        },
        { mac: MAC.unifiSwitch.toLowerCase(), ip: ip(5), type: 'usw', name: 'Office switch' },
      ],
    });
    // A managed switch at .6 answering SNMP (the scan's probe asks UDP 161): the printer behind port 12,
    // the phone behind port 3 (the controller's word on the phone wins), a MAC of no device.
    agent = await snmpAgent(ip(6), {
      communities: ['public'],
      sysDescr: 'HPE OfficeConnect Switch 1820 24G, PT.02.12',
      sysObjectID: '1.3.6.1.4.1.11.2.3.7.11.178',
      sysName: 'closet-switch',
      bridge: [
        { mac: MAC.snmpClient, port: 12 },
        { mac: MAC.wifiClient, port: 3 },
        { mac: '3C:22:FB:00:00:99', port: 5 },
      ],
      port: 161,
    });
    ({ server, key } = await startServerWithAdmin(database, {
      settings: {
        scanning: { engine: 'native', os_detection: false, port_range: String(await closedPort('127.0.0.1')) },
        recognition: { probes: ['snmp'], snmp_communities: ['public'] },
        name_sources: { unifi: { enabled: true, url: unifi.url, username: 'netwarden', password: 'u-pw', site: 'default', unifi_os: false } },
      },
    }));
  });
  afterAll(async () => {
    await server?.close();
    await agent?.close();
    await unifi?.close();
  });

  const map = async (): Promise<{ nodes: Node[]; edges: Edge[] }> => {
    const res = await server.request(`/api/visualization/topology?subnet=${net}.0/29`, { key });
    expect(res.status, await res.clone().text()).toBe(200);
    return readJson(res);
  };
  const nodeAt = (graph: { nodes: Node[] }, n: number) => graph.nodes.find((x) => x.ip_address === ip(n));
  const up = (graph: { edges: Edge[] }, node: Node | undefined) => graph.edges.find((e) => e.target === node?.id);

  it('draws the access point and the switches between the subnet and their clients, each edge confirmed by its source', async () => {
    const scan = await triggerScan(server, key, { subnet: `${net}.0/29`, profile: 'normal' });
    const done = await waitForScan(server, key, scan.scan_id);
    expect(done.status, JSON.stringify(done)).toBe('completed');

    const graph = await map();
    const [printer, phone, desk, ap, unifiSwitch, closet] = [1, 2, 3, 4, 5, 6].map((n) => nodeAt(graph, n));
    for (const node of [printer, phone, desk, ap, unifiSwitch, closet]) expect(node, JSON.stringify(graph.nodes)).toBeDefined();
    expect(ap?.kind).toBe('access_point');
    expect(unifiSwitch?.kind).toBe('switch');
    expect(closet?.kind).toBe('switch');
    expect(printer?.kind).toBe('device');

    expect(up(graph, phone)).toEqual({ source: ap!.id, target: phone!.id, kind: 'wifi', evidence: 'confirmed', confirmed_by: 'unifi' });
    expect(up(graph, desk)).toEqual({ source: unifiSwitch!.id, target: desk!.id, kind: 'l2', evidence: 'confirmed', confirmed_by: 'unifi' });
    expect(up(graph, ap)).toEqual({ source: unifiSwitch!.id, target: ap!.id, kind: 'l2', evidence: 'confirmed', confirmed_by: 'unifi' });
    expect(up(graph, printer)).toEqual({ source: closet!.id, target: printer!.id, kind: 'l2', evidence: 'confirmed', confirmed_by: 'snmp' });
    // No table places the switches themselves: they hang off the subnet, inferred.
    for (const node of [unifiSwitch, closet])
      expect(up(graph, node)).toMatchObject({ source: `subnet:${net}.0/29`, evidence: 'inferred', confirmed_by: null });
    // No link without a source: every confirmed device edge names one, and only these four exist.
    const confirmed = graph.edges.filter((e) => e.target.startsWith('device:') && e.evidence === 'confirmed');
    expect(confirmed.map((e) => e.confirmed_by).sort()).toEqual(['snmp', 'unifi', 'unifi', 'unifi']);
    // One edge up per node.
    for (const node of graph.nodes) expect(graph.edges.filter((e) => e.target === node.id)).toHaveLength(node.kind === 'internet' ? 0 : 1);
  });

  it("deleting the access point hands its client to the next source's link; a scan with the controller down keeps its links", async () => {
    const before = await map();
    const ap = nodeAt(before, 4)!;
    const del = await server.request(`/api/devices/${ap.device_id}`, { method: 'DELETE', key });
    expect(del.status, await del.clone().text()).toBeLessThan(300);
    const after = await map();
    // The phone's next-best source places it: the closet switch's bridge table (port 3).
    expect(up(after, nodeAt(after, 2))).toEqual({
      source: nodeAt(after, 6)!.id,
      target: nodeAt(after, 2)!.id,
      kind: 'l2',
      evidence: 'confirmed',
      confirmed_by: 'snmp',
    });
    expect(after.edges.some((e) => e.source === ap.id || e.target === ap.id)).toBe(false);
    expect(up(after, nodeAt(after, 3))).toMatchObject({ evidence: 'confirmed', confirmed_by: 'unifi' });

    const down = `http://127.0.0.1:${await closedPort('127.0.0.1')}`;
    const put = await server.request('/api/config', { method: 'PUT', key, json: { name_sources: { unifi: { url: down, password: 'u-pw' } } } });
    expect(put.status, await put.clone().text()).toBe(200);
    const scan = await triggerScan(server, key, { subnet: `${net}.0/29`, profile: 'normal' });
    expect((await waitForScan(server, key, scan.scan_id)).status).toBe('completed');
    const again = await map();
    expect(up(again, nodeAt(again, 3))).toMatchObject({ kind: 'l2', evidence: 'confirmed', confirmed_by: 'unifi' });
    expect(up(again, nodeAt(again, 1))).toMatchObject({ evidence: 'confirmed', confirmed_by: 'snmp' });
  });
});
