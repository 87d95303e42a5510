/**
 * The network map (CONTRACT §16, §18, issue 22 §2): GET /api/visualization/topology over a real
 * server on both stores. The inventory is written into the store (the map only reads it): a
 * scanned subnet with its only router, a device at the server's real default gateway, an agent's
 * network, a device outside every known network, an offline and an archived device.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultGatewayFromProcRoute } from '../../src/core/topology.js';
import { ipv4ToInt } from '../../src/core/net.js';
import { testDatabases } from '../helpers/databases.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

/** The gateway the server will find: the same routing table it reads. */
function hostGateway(): string | null {
  try {
    return defaultGatewayFromProcRoute(readFileSync('/proc/net/route', 'utf8'));
  } catch {
    return null;
  }
}

interface Node {
  id: string;
  kind: string;
  device_id: number | null;
  online: boolean;
  subnet: string | null;
  [key: string]: unknown;
}
interface Edge {
  source: string;
  target: string;
  kind: string;
  evidence: string;
}
interface Graph {
  nodes: Node[];
  edges: Edge[];
}

/** The contract's shape rules: unique string ids, every edge between drawn nodes, one edge up per node but the internet. */
function expectWellFormed(graph: Graph) {
  const ids = graph.nodes.map((n) => n.id);
  expect(new Set(ids).size).toBe(ids.length);
  const known = new Set(ids);
  for (const edge of graph.edges) {
    expect(known.has(edge.source), `edge source ${edge.source}`).toBe(true);
    expect(known.has(edge.target), `edge target ${edge.target}`).toBe(true);
  }
  for (const node of graph.nodes) {
    const up = graph.edges.filter((e) => e.target === node.id);
    expect(up.length, `edges up from ${node.id}`).toBe(node.kind === 'internet' ? 0 : 1);
  }
}

describe.each(testDatabases())('network map ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  const gateway = hostGateway();
  const ids: Record<string, number> = {};
  let agentId = 0;

  beforeAll(async () => {
    ({ server, key } = await startServerWithAdmin(database));
    const now = new Date().toISOString();
    await server.store.db
      .insertInto('scans')
      .values({
        status: 'completed',
        profile: 'quick',
        subnet: '10.77.1.0/24',
        scan_type: 'network',
        target: null,
        created_at: now,
        completed_at: now,
      })
      .execute();
    // A /8 sweep is many networks, not one subnet.
    await server.store.db
      .insertInto('scans')
      .values({ status: 'completed', profile: 'quick', subnet: '10.0.0.0/8', scan_type: 'network', target: null, created_at: now, completed_at: now })
      .execute();
    const agent = await server.store.agents.create({
      name: 'branch',
      networks: ['10.66.0.0/24'],
      tokenPrefix: 'nwa_test',
      tokenHash: 'x'.repeat(64),
      createdBy: null,
    });
    agentId = agent.id;
    const add = async (name: string, ip: string, fields: Record<string, unknown> = {}) => {
      const device = await server.store.devices.insert({
        identity: `ip:${ip}`,
        ip_address: ip,
        ip_sort: ipv4ToInt(ip),
        first_seen: now,
        last_seen: now,
        online: 1,
        ...fields,
      });
      ids[name] = device.id;
    };
    await add('router', '10.77.1.1', { device_type: 'router', label: 'Edge router' });
    await add('laptop', '10.77.1.10', { device_type: 'laptop', zone: 'office', risk_level: 'high', risk_score: 70 });
    await add('offline', '10.77.1.11', { online: 0, hostname: 'sleepy.lan' });
    await add('archived', '10.77.1.12', { status: 'archived' });
    await add('stray', '10.77.2.5', { device_type: 'printer' });
    await add('branch', '10.66.0.20', {});
    if (gateway) await add('gateway', gateway, { label: 'Home gateway' });
    // A scanned /26 splits its /24: 10.77.5.10 is in the /26, 10.77.5.200 in the /24 around it.
    await server.store.db
      .insertInto('scans')
      .values({
        status: 'completed',
        profile: 'quick',
        subnet: '10.77.5.0/26',
        scan_type: 'network',
        target: null,
        created_at: now,
        completed_at: now,
      })
      .execute();
    await add('narrow', '10.77.5.10', { risk_level: 'medium', risk_score: 40 });
    await add('wide', '10.77.5.200', { online: 0, zone: 'office' });
    // More devices than one page of the store (2000) in 10.88.8.0/21, two of them on each address near the page's end,
    // and neighbours on both sides of it.
    const bulk = [];
    for (let i = 0; i < 2100; i++) {
      const ip = `10.88.${8 + (i >> 8)}.${i & 255}`;
      bulk.push({ identity: `bulk:${i}`, ip_address: ip, ip_sort: ipv4ToInt(ip), first_seen: now, last_seen: now, online: i % 4 === 0 ? 0 : 1 });
      if (i >= 1995 && i <= 2004)
        bulk.push({ identity: `bulk:${i}:twin`, ip_address: ip, ip_sort: ipv4ToInt(ip), first_seen: now, last_seen: now, online: 1 });
    }
    for (const ip of ['10.88.7.255', '10.88.16.0'])
      bulk.push({ identity: `bulk:${ip}`, ip_address: ip, ip_sort: ipv4ToInt(ip), first_seen: now, last_seen: now, online: 1 });
    for (let i = 0; i < bulk.length; i += 200)
      await server.store.db
        .insertInto('devices')
        .values(bulk.slice(i, i + 200))
        .execute();
    // Written through the repository (the map's kept answers follow the data version).
    await add('last', '10.77.2.6', {});
  });
  afterAll(async () => {
    await server?.close();
  });

  const get = async (query = '', status = 200) => {
    const res = await server.request(`/api/visualization/topology${query}`, { key });
    expect(res.status, await res.clone().text()).toBe(status);
    return readJson(res);
  };
  const nodeOf = (graph: Graph, id: string) => graph.nodes.find((n) => n.id === id);
  const upOf = (graph: Graph, id: string) => graph.edges.find((e) => e.target === id);

  it('draws internet → gateways → subnets → devices with the evidence of each edge', async () => {
    const res = await server.request('/api/visualization/topology', { key });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const graph: Graph = await readJson(res);
    expectWellFormed(graph);

    // Archived devices are left out; offline ones are drawn offline.
    const deviceIds = new Set(graph.nodes.map((n) => n.device_id));
    expect(deviceIds.has(ids.archived)).toBe(false);
    expect(nodeOf(graph, `device:${ids.offline}`)).toMatchObject({ kind: 'device', online: false, label: 'sleepy.lan', subnet: '10.77.1.0/24' });
    expect(nodeOf(graph, `device:${ids.laptop}`)).toMatchObject({
      kind: 'device',
      device_id: ids.laptop,
      online: true,
      risk_level: 'high',
      zone: 'office',
      device_type: 'laptop',
      ip_address: '10.77.1.10',
    });
    expect(upOf(graph, `device:${ids.laptop}`)).toEqual({
      source: 'subnet:10.77.1.0/24',
      target: `device:${ids.laptop}`,
      kind: 'l2',
      evidence: 'inferred',
      confirmed_by: null,
    });

    // The only router of the scanned subnet is its gateway (inferred), carrying its device id and not drawn again as a device.
    expect(nodeOf(graph, `device:${ids.router}`)).toBeUndefined();
    expect(nodeOf(graph, 'gateway:10.77.1.1')).toMatchObject({ kind: 'gateway', device_id: ids.router, label: 'Edge router' });
    expect(upOf(graph, 'subnet:10.77.1.0/24')).toMatchObject({ source: 'gateway:10.77.1.1', kind: 'l3', evidence: 'inferred' });
    expect(nodeOf(graph, 'subnet:10.77.1.0/24')).toMatchObject({ kind: 'subnet', device_count: 2, risk_level: 'high' });

    // The server's real default gateway, from its routing table, is a gateway node carrying the device at that address.
    if (gateway) {
      expect(nodeOf(graph, `gateway:${gateway}`)).toMatchObject({ kind: 'gateway', device_id: ids.gateway, label: 'Home gateway' });
      expect(nodeOf(graph, `device:${ids.gateway}`)).toBeUndefined();
      expect(upOf(graph, `gateway:${gateway}`)).toEqual({
        source: 'internet',
        target: `gateway:${gateway}`,
        kind: 'uplink',
        evidence: 'confirmed',
        confirmed_by: null,
      });
      // The scanned subnet's own gateway sits under the server's.
      expect(upOf(graph, 'gateway:10.77.1.1')).toMatchObject({ source: `gateway:${gateway}`, evidence: 'inferred' });
    }
    // No node is "the first .1" of a subnet without a router.
    expect(nodeOf(graph, 'gateway:10.77.2.1')).toBeUndefined();

    // A device outside every known network goes to the /24 around it; the /8 sweep is no subnet.
    expect(nodeOf(graph, `device:${ids.stray}`)).toMatchObject({ subnet: '10.77.2.0/24' });
    expect(nodeOf(graph, 'subnet:10.0.0.0/8')).toBeUndefined();

    // The agent's network hangs off the agent.
    expect(nodeOf(graph, `agent:${agentId}`)).toMatchObject({ kind: 'agent', label: 'branch', online: false });
    expect(upOf(graph, 'subnet:10.66.0.0/24')).toMatchObject({ source: `agent:${agentId}`, kind: 'l3', evidence: 'confirmed' });
    expect(upOf(graph, `device:${ids.branch}`)).toMatchObject({ source: 'subnet:10.66.0.0/24' });

    // No switch or access point without a source confirming one.
    expect(graph.nodes.filter((n) => n.kind === 'switch' || n.kind === 'access_point')).toEqual([]);
  });

  it('narrows to a subnet or a zone', async () => {
    const bySubnet: Graph = await get('?subnet=10.77.2.0/24');
    expectWellFormed(bySubnet);
    expect(bySubnet.nodes.filter((n) => n.kind === 'device').map((n) => n.device_id)).toEqual([ids.stray, ids.last]);
    expect(bySubnet.nodes.filter((n) => n.kind === 'subnet').map((n) => n.id)).toEqual(['subnet:10.77.2.0/24']);

    const byZone: Graph = await get('?zone=office');
    expectWellFormed(byZone);
    expect(byZone.nodes.filter((n) => n.kind === 'device').map((n) => n.device_id)).toEqual([ids.laptop, ids.wide]);
    // Only subnets with devices of the zone are drawn; the gateway chain above them stays.
    expect(byZone.nodes.filter((n) => n.kind === 'subnet').map((n) => n.id)).toEqual(['subnet:10.77.1.0/24', 'subnet:10.77.5.0/24']);
    expect(nodeOf(byZone, 'gateway:10.77.1.1')).toBeDefined();

    const empty: Graph = await get('?subnet=172.31.250.0/24&zone=office');
    expectWellFormed(empty);
    expect(empty.nodes.map((n) => n.kind)).toEqual(['internet']);
  });

  it("walks one subnet in address order across the store's pages, nothing outside it", async () => {
    const graph: Graph = await get('?subnet=10.88.8.0/21');
    expectWellFormed(graph);
    const devices = graph.nodes.filter((n) => n.kind === 'device');
    expect(devices.length).toBe(2058);
    expect(new Set(devices.map((n) => n.device_id)).size).toBe(2058);
    const addresses = devices.map((n) => ipv4ToInt(n.ip_address as string));
    expect(addresses).toEqual([...addresses].sort((a, b) => a - b));
    expect(Math.min(...addresses)).toBe(ipv4ToInt('10.88.8.0'));
    expect(Math.max(...addresses)).toBe(ipv4ToInt('10.88.15.255'));
  });

  /** What the overview must say of each subnet: counted from the whole graph's device nodes. */
  const countsOf = (graph: Graph) => {
    const counts = new Map<string, { device_count: number; online_count: number; risk_counts: Record<string, number> }>();
    for (const node of graph.nodes) {
      if (node.kind === 'subnet')
        counts.set(node.id, { device_count: 0, online_count: 0, risk_counts: { critical: 0, high: 0, medium: 0, low: 0, none: 0 } });
    }
    for (const node of graph.nodes) {
      if (node.kind !== 'device') continue;
      const c = counts.get(upOf(graph, node.id)!.source)!;
      c.device_count++;
      if (node.online) c.online_count++;
      c.risk_counts[node.risk_level as string]++;
    }
    return counts;
  };

  it('answers an overview: the same structure with per-subnet counts and no device', async () => {
    for (const query of [
      '',
      '?zone=office',
      '?subnet=10.77.0.0/16',
      '?subnet=10.77.5.0/24',
      '?subnet=10.88.8.0/21',
      '?subnet=10.77.5.0/24&zone=office',
    ]) {
      const whole: Graph = await get(query);
      const overview: Graph = await get(`${query ? `${query}&` : '?'}detail=subnets`);
      expectWellFormed(overview);
      expect(
        overview.nodes.filter((n) => n.kind === 'device'),
        query,
      ).toEqual([]);
      // Every node and edge of the whole map but the devices', the same.
      expect(overview.nodes, query).toEqual(whole.nodes.filter((n) => n.kind !== 'device'));
      expect(overview.edges, query).toEqual(whole.edges.filter((e) => !e.target.startsWith('device:')));
      const counts = countsOf(whole);
      for (const node of overview.nodes.filter((n) => n.kind === 'subnet')) {
        expect({ device_count: node.device_count, online_count: node.online_count, risk_counts: node.risk_counts }, `${query} ${node.id}`).toEqual(
          counts.get(node.id),
        );
      }
    }
    const overview: Graph = await get('?detail=subnets');
    expect(nodeOf(overview, 'subnet:10.77.1.0/24')).toMatchObject({
      device_count: 2,
      online_count: 1,
      risk_level: 'high',
      risk_counts: { critical: 0, high: 1, medium: 0, low: 0, none: 1 },
    });
    // The /26 and the rest of its /24 apart; the bulk /21 and the /24s of its neighbours.
    expect(nodeOf(overview, 'subnet:10.77.5.0/26')).toMatchObject({ device_count: 1, online_count: 1, risk_level: 'medium' });
    expect(nodeOf(overview, 'subnet:10.77.5.0/24')).toMatchObject({ device_count: 1, online_count: 0, risk_level: 'none' });
    expect(nodeOf(overview, 'subnet:10.88.8.0/24')).toMatchObject({ device_count: 256 });
    expect(nodeOf(overview, 'subnet:10.88.7.0/24')).toMatchObject({ device_count: 1 });
    // The router is its subnet's gateway, not counted as a device.
    expect(nodeOf(overview, 'gateway:10.77.1.1')).toMatchObject({ device_id: ids.router });
    const zone: Graph = await get('?detail=subnets&zone=office');
    expect(zone.nodes.filter((n) => n.kind === 'subnet').map((n) => [n.id, n.device_count, n.online_count])).toEqual([
      ['subnet:10.77.1.0/24', 1, 1],
      ['subnet:10.77.5.0/24', 1, 0],
    ]);
    // The contract's shape stays the default: `detail=devices` is the same answer.
    expect(await get('?detail=devices')).toEqual(await get(''));
  });

  it('answers from what is kept only while nothing changed', async () => {
    const before: Graph = await get('?detail=subnets&subnet=10.77.2.0/24');
    expect(nodeOf(before, 'subnet:10.77.2.0/24')).toMatchObject({ device_count: 2 });
    // Asked again unchanged: the same answer (kept).
    expect(await get('?detail=subnets&subnet=10.77.2.0/24')).toEqual(before);
    const now = new Date().toISOString();
    const added = await server.store.devices.insert({
      identity: 'ip:10.77.2.7',
      ip_address: '10.77.2.7',
      ip_sort: ipv4ToInt('10.77.2.7'),
      first_seen: now,
      last_seen: now,
      online: 1,
      risk_level: 'critical',
      risk_score: 95,
    });
    const after: Graph = await get('?detail=subnets&subnet=10.77.2.0/24');
    expect(nodeOf(after, 'subnet:10.77.2.0/24')).toMatchObject({ device_count: 3, risk_level: 'critical' });
    const whole: Graph = await get('?subnet=10.77.2.0/24');
    expect(nodeOf(whole, `device:${added.id}`)).toMatchObject({ risk_level: 'critical' });
    await server.store.devices.update(added.id, { status: 'archived' });
    expect(nodeOf(await get('?detail=subnets&subnet=10.77.2.0/24'), 'subnet:10.77.2.0/24')).toMatchObject({ device_count: 2 });
  });

  it('refuses a bad subnet or zone with a detail naming it', async () => {
    for (const subnet of ['banana', '10.77.1.0/33', '10.77.1.5', '010.1.1.0/24']) {
      const body = await get(`?subnet=${encodeURIComponent(subnet)}`, 400);
      expect(body.detail).toMatch(/^subnet: must be an IPv4 CIDR network such as 192\.168\.1\.0\/24/);
      expect(body.code).toBe('NW_INVALID_INPUT');
    }
    const zone = await get('?zone=nowhere', 400);
    expect(zone.detail).toMatch(/^zone: must be one of .*office/);
    expect((await get('?zone=', 400)).detail).toMatch(/zone/);
    expect((await get('?colour=red', 400)).detail).toMatch(/colour/);
    for (const detail of ['everything', '', 'SUBNETS']) expect((await get(`?detail=${detail}`, 400)).detail, detail).toMatch(/detail/);
    expect((await get('?detail=subnets&subnet=10.77.1.5', 400)).detail).toMatch(/^subnet:/);
    expect((await get('?detail=subnets&zone=nowhere', 400)).detail).toMatch(/^zone:/);
    const anonymous = await server.request('/api/visualization/topology');
    expect(anonymous.status).toBe(401);
    expect(await readJson(anonymous)).toEqual({ detail: 'Not authenticated' });
    const doc = await readJson(await server.request('/openapi.json'));
    expect(doc.paths['/api/visualization/topology'].get.description).toMatch(/default route/);
  });
});
