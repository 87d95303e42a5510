/**
 * The rules that read switches' bridge and LLDP tables into links (core/device-links.ts) and the
 * controller's lists (names/unifi.ts unifiLinks): clients on edge ports, uplink and trunk ports
 * left out, the direction between two switches from the routers' side, LLDP neighbours, the
 * source order, and nothing without a table saying so.
 */
import { describe, expect, it } from 'vitest';
import { chooseLinks, switchLinks, type DeviceLink, type LinkedDevice, type SwitchTables } from '../../src/core/device-links.js';
import { Value } from '@sinclair/typebox/value';
import { MAX_BRIDGE_ROWS } from '../../src/core/probe-results.js';
import { unifiLinks } from '../../src/names/unifi.js';
import { UploadedProbeResults } from '../../src/schemas/agent.js';

const mac = (n: number) => `02:00:00:00:00:${n.toString(16).padStart(2, '0').toUpperCase()}`;
const device = (id: number, deviceType: string | null = null): LinkedDevice => ({ id, deviceType });

/** Devices 1–9 by MAC: 1 the router, 2 and 3 switches, the rest plain. */
const devices = new Map<string, LinkedDevice>([
  [mac(1), device(1, 'router')],
  [mac(2), device(2, 'switch')],
  [mac(3), device(3, 'switch')],
  ...[4, 5, 6, 7, 8, 9].map((n) => [mac(n), device(n)] as [string, LinkedDevice]),
]);

const link = (deviceId: number, parentDeviceId: number, port: string | null, source: DeviceLink['source'] = 'snmp'): DeviceLink => ({
  deviceId,
  parentDeviceId,
  parentKind: 'switch',
  via: 'l2',
  port,
  source,
});

describe('switch links from bridge tables', () => {
  it('makes each device learned on an edge port a client of the switch, and leaves the uplink port out', () => {
    const sw: SwitchTables = {
      device: device(2, 'switch'),
      ownMacs: [mac(2)],
      bridge: [
        { mac: mac(1), port: 24 },
        // Behind the uplink with the router: not this switch's client.
        { mac: mac(9), port: 24 },
        { mac: mac(4), port: 1 },
        { mac: mac(5), port: 2 },
        // Its own MAC, an unknown MAC and a multicast one: no link.
        { mac: mac(2), port: 3 },
        { mac: '02:AA:00:00:00:01', port: 4 },
        { mac: '01:00:5E:00:00:FB', port: 5 },
      ],
      lldp: [],
    };
    expect(switchLinks([sw], devices)).toEqual([link(4, 2, '1'), link(5, 2, '2')]);
  });

  it('places the switch whose port towards the other holds the router below it, and each client on its nearest switch', () => {
    // Router on 2's port 1; 3 on 2's port 8 with 3's clients; 2 (and the router) on 3's port 48.
    const upper: SwitchTables = {
      device: device(2, 'switch'),
      ownMacs: [mac(2)],
      bridge: [
        { mac: mac(1), port: 1 },
        { mac: mac(4), port: 5 },
        { mac: mac(3), port: 8 },
        { mac: mac(6), port: 8 },
        { mac: mac(7), port: 8 },
      ],
      lldp: [],
    };
    const lower: SwitchTables = {
      device: device(3, 'access_point'),
      ownMacs: [mac(3)],
      bridge: [
        { mac: mac(1), port: 48 },
        { mac: mac(2), port: 48 },
        { mac: mac(4), port: 48 },
        { mac: mac(6), port: 1 },
        { mac: mac(7), port: 2 },
      ],
      lldp: [],
    };
    expect(switchLinks([upper, lower], devices)).toEqual([
      link(3, 2, '8'),
      link(4, 2, '5'),
      { ...link(6, 3, '1'), parentKind: 'access_point' },
      { ...link(7, 3, '2'), parentKind: 'access_point' },
    ]);
  });

  it('gives two switches that see each other no direction when neither side holds a router', () => {
    const a: SwitchTables = { device: device(2), ownMacs: [mac(2)], bridge: [{ mac: mac(3), port: 1 }], lldp: [] };
    const b: SwitchTables = { device: device(3), ownMacs: [mac(3)], bridge: [{ mac: mac(2), port: 1 }], lldp: [] };
    expect(switchLinks([a, b], devices)).toEqual([]);
  });

  it('links an LLDP neighbour below the switch that hears it, unless it is a router or on the uplink port', () => {
    const sw: SwitchTables = {
      device: device(2, 'switch'),
      ownMacs: [mac(2)],
      bridge: [
        { mac: mac(1), port: 24 },
        { mac: mac(8), port: 24 },
        { mac: mac(9), port: 7 },
      ],
      lldp: [
        { localPort: 7, chassisMac: mac(9) },
        { localPort: 24, chassisMac: mac(1) },
        { localPort: 24, chassisMac: mac(8) },
        { localPort: 9, chassisMac: null },
      ],
    };
    expect(switchLinks([sw], devices)).toEqual([link(9, 2, '7', 'lldp')]);
  });

  it('keeps one link per device, the controller first, then LLDP, then the bridge table', () => {
    expect(chooseLinks([link(5, 2, '1'), link(5, 3, '4', 'lldp'), link(6, 3, '1'), link(6, 2, '9'), link(7, 7, null)])).toEqual([
      link(5, 3, '4', 'lldp'),
      link(6, 2, '9'),
    ]);
    expect(chooseLinks([link(5, 3, '4', 'lldp'), { ...link(5, 8, null, 'unifi'), via: 'wifi' }])).toEqual([
      { ...link(5, 8, null, 'unifi'), via: 'wifi' },
    ]);
  });
});

describe("the UniFi controller's links", () => {
  it('puts wireless clients under their access point, wired ones on their switch port, devices under their uplink', () => {
    const devicesList = [
      { mac: 'aa:00:00:00:00:10', ip: '10.0.0.10', type: 'uap', uplink: { uplink_mac: 'aa:00:00:00:00:11', uplink_remote_port: 3, type: 'wire' } },
      { mac: 'aa:00:00:00:00:11', ip: '10.0.0.11', type: 'usw', uplink: { uplink_mac: 'aa:00:00:00:00:01', uplink_remote_port: 1, type: 'wire' } },
      { mac: 'aa:00:00:00:00:01', ip: '10.0.0.1', type: 'ugw' },
    ];
    const clients = [
      { mac: 'b8:00:00:00:00:01', ip: '10.0.0.50', is_wired: false, ap_mac: 'aa:00:00:00:00:10' },
      { mac: 'b8:00:00:00:00:02', ip: '10.0.0.51', is_wired: true, sw_mac: 'aa:00:00:00:00:11', sw_port: 7 },
      // Wired on a port of the access point.
      { mac: 'b8:00:00:00:00:03', ip: '10.0.0.52', is_wired: true, sw_mac: 'aa:00:00:00:00:10', sw_port: 1 },
      // Nothing says where it hangs: no link.
      { mac: 'b8:00:00:00:00:04', ip: '10.0.0.53', is_wired: true },
    ];
    expect(unifiLinks(clients, devicesList)).toEqual([
      {
        mac: 'B8:00:00:00:00:01',
        ip: '10.0.0.50',
        parentMac: 'AA:00:00:00:00:10',
        parentIp: '10.0.0.10',
        parentKind: 'access_point',
        via: 'wifi',
        port: null,
        source: 'unifi',
      },
      {
        mac: 'B8:00:00:00:00:02',
        ip: '10.0.0.51',
        parentMac: 'AA:00:00:00:00:11',
        parentIp: '10.0.0.11',
        parentKind: 'switch',
        via: 'l2',
        port: '7',
        source: 'unifi',
      },
      {
        mac: 'B8:00:00:00:00:03',
        ip: '10.0.0.52',
        parentMac: 'AA:00:00:00:00:10',
        parentIp: '10.0.0.10',
        parentKind: 'access_point',
        via: 'l2',
        port: '1',
        source: 'unifi',
      },
      {
        mac: 'AA:00:00:00:00:10',
        ip: '10.0.0.10',
        parentMac: 'AA:00:00:00:00:11',
        parentIp: '10.0.0.11',
        parentKind: 'switch',
        via: 'l2',
        port: '3',
        source: 'unifi',
      },
      // The switch's uplink is the gateway: the map draws gateways itself.
    ]);
  });
});

describe("an agent's upload", () => {
  it('carries the switch tables its SNMP probe read, within the bounds the probe keeps', () => {
    const snmp = { community: 'public', sysDescr: null, sysObjectID: null, sysName: 'sw', engineId: null };
    const ok = { snmp: { ...snmp, bridge: [{ mac: '02:00:00:00:00:01', port: 3 }], lldp: [{ localPort: 24, chassisMac: null, sysName: 'core' }] } };
    expect(Value.Check(UploadedProbeResults, ok)).toBe(true);
    const tooMany = { snmp: { ...snmp, bridge: Array.from({ length: MAX_BRIDGE_ROWS + 1 }, () => ({ mac: '02:00:00:00:00:01', port: 3 })) } };
    expect(Value.Check(UploadedProbeResults, tooMany)).toBe(false);
    expect(Value.Check(UploadedProbeResults, { snmp: { ...snmp, bridge: [{ mac: '02:00:00:00:00:01', port: 0 }] } })).toBe(false);
  });
});
