/** Building the map (core/topology.ts): subnets, gateways, confirmed switches and access points, the routing table. */
import { describe, expect, it } from 'vitest';
import { buildTopology, defaultGatewayFromProcRoute, type TopologyContext, type TopologyDevice } from '../../src/core/topology.js';
import { ipv4ToInt } from '../../src/core/net.js';

const device = (id: number, ip: string, extra: Partial<TopologyDevice> = {}): TopologyDevice => ({
  id,
  ip_address: ip,
  ip_sort: ipv4ToInt(ip),
  name: null,
  hostname: null,
  device_type: null,
  risk_level: 'none',
  online: true,
  zone: null,
  ...extra,
});

const context = (extra: Partial<TopologyContext> = {}): TopologyContext => ({
  networks: [],
  agents: [],
  defaultGateway: null,
  gatewayDevices: [],
  attachments: [],
  showEmptyNetworks: true,
  ...extra,
});

describe('network map', () => {
  it('puts a device in the narrowest known network, else its /24', () => {
    const graph = buildTopology(
      context({
        networks: [
          { cidr: '10.1.0.0/16', source: 'scan' },
          { cidr: '10.1.2.0/28', source: 'scan' },
          { cidr: '10.0.0.0/8', source: 'scan' },
        ],
      }),
      [device(1, '10.1.2.3'), device(2, '10.1.9.9'), device(3, '10.2.0.7')],
    );
    const subnetOf = (id: number) => graph.nodes.find((n) => n.device_id === id)?.subnet;
    expect([subnetOf(1), subnetOf(2), subnetOf(3)]).toEqual(['10.1.2.0/28', '10.1.0.0/16', '10.2.0.0/24']);
    // Scanned networks without devices are not drawn; only the server's and agents' are.
    expect(graph.nodes.filter((n) => n.kind === 'subnet').map((n) => n.id)).toEqual([
      'subnet:10.1.0.0/16',
      'subnet:10.1.2.0/28',
      'subnet:10.2.0.0/24',
    ]);
    expect(graph.edges.find((e) => e.target === 'subnet:10.2.0.0/24')).toEqual({
      source: 'internet',
      target: 'subnet:10.2.0.0/24',
      kind: 'uplink',
      evidence: 'inferred',
    });
  });

  it('takes the default route as the gateway, and no router when two could be', () => {
    const routers = [
      device(5, '192.168.1.254', { device_type: 'router' }),
      device(6, '10.9.0.1', { device_type: 'router' }),
      device(7, '10.9.0.2', { device_type: 'firewall' }),
    ];
    const graph = buildTopology(
      context({ networks: [{ cidr: '192.168.1.0/24', source: 'server' }], defaultGateway: '192.168.1.254', gatewayDevices: routers }),
      [device(1, '192.168.1.1', { device_type: 'router' }), ...routers, device(8, '10.9.0.50')],
    );
    expect(graph.nodes.find((n) => n.id === 'gateway:192.168.1.254')).toMatchObject({ kind: 'gateway', device_id: 5 });
    // 192.168.1.1 is a router of the server's subnet, but the routing table names .254: .1 stays a device.
    expect(graph.nodes.find((n) => n.id === 'device:1')).toMatchObject({ kind: 'device', subnet: '192.168.1.0/24' });
    // Two routers in 10.9.0.0/24: neither is guessed to be its gateway.
    expect(graph.nodes.filter((n) => n.kind === 'gateway').map((n) => n.id)).toEqual(['gateway:192.168.1.254']);
    expect(graph.edges.find((e) => e.target === 'subnet:10.9.0.0/24')).toMatchObject({
      source: 'gateway:192.168.1.254',
      kind: 'l3',
      evidence: 'inferred',
    });
    expect(graph.edges.find((e) => e.target === 'subnet:192.168.1.0/24')).toMatchObject({ source: 'gateway:192.168.1.254', evidence: 'confirmed' });
  });

  it('draws switches and access points only where a source confirms them, and never a loop', () => {
    const graph = buildTopology(
      context({
        attachments: [
          { device_id: 2, parent_device_id: 1, kind: 'l2' },
          { device_id: 3, parent_device_id: 2, kind: 'wifi' },
          // A loop between 4 and 5 is dropped: both stay under their subnet.
          { device_id: 4, parent_device_id: 5, kind: 'l2' },
          { device_id: 5, parent_device_id: 4, kind: 'l2' },
          // A parent that is not drawn (filtered out): the device stays under its subnet.
          { device_id: 6, parent_device_id: 99, kind: 'wifi' },
        ],
      }),
      [
        device(1, '10.0.0.2', { device_type: 'switch' }),
        device(2, '10.0.0.3'),
        device(3, '10.0.0.4'),
        device(4, '10.0.0.5'),
        device(5, '10.0.0.6'),
        device(6, '10.0.0.7'),
      ],
    );
    const kind = (id: number) => graph.nodes.find((n) => n.device_id === id)?.kind;
    expect([1, 2, 3, 4, 5, 6].map(kind)).toEqual(['switch', 'access_point', 'device', 'device', 'device', 'device']);
    const up = (id: number) => graph.edges.find((e) => e.target === `device:${id}`);
    expect(up(2)).toEqual({ source: 'device:1', target: 'device:2', kind: 'l2', evidence: 'confirmed' });
    expect(up(3)).toEqual({ source: 'device:2', target: 'device:3', kind: 'wifi', evidence: 'confirmed' });
    for (const id of [1, 4, 5, 6]) expect(up(id)).toMatchObject({ source: 'subnet:10.0.0.0/24', evidence: 'inferred' });
  });

  it("reads the default route's gateway from /proc/net/route", () => {
    const table = [
      'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT',
      'wlan0\t00000000\t0101A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0',
      'eth0\t00000000\t010200C0\t0003\t0\t0\t100\t00000000\t0\t0\t0',
      'eth0\t000200C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0',
    ].join('\n');
    expect(defaultGatewayFromProcRoute(table)).toBe('192.0.2.1');
    expect(defaultGatewayFromProcRoute(table.split('\n').slice(0, 1).join('\n'))).toBeNull();
    expect(defaultGatewayFromProcRoute('')).toBeNull();
  });
});
