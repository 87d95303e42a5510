import { describe, expect, it } from 'vitest';
import { type InterfaceAddress, defaultRouteFromProcRoute, detectNetwork, netmaskToPrefix } from '../../src/core/network-detect.js';

const LOOPBACK: InterfaceAddress = {
  name: 'lo',
  address: '127.0.0.1',
  netmask: '255.0.0.0',
  family: 'IPv4',
  internal: true,
  mac: '00:00:00:00:00:00',
};
const LOOPBACK6: InterfaceAddress = {
  name: 'lo',
  address: '::1',
  netmask: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  family: 'IPv6',
  internal: true,
  mac: '00:00:00:00:00:00',
};

function iface(name: string, address: string, netmask: string, extra: Partial<InterfaceAddress> = {}): InterfaceAddress {
  return { name, address, netmask, family: 'IPv4', internal: false, mac: '52:54:00:12:34:56', ...extra };
}

/** A typical home server: one Ethernet port, Docker installed, IPv6 enabled. */
const HOME_SERVER: InterfaceAddress[] = [
  LOOPBACK,
  LOOPBACK6,
  iface('eth0', '192.168.1.23', '255.255.255.0', { mac: 'b8:27:eb:aa:bb:cc' }),
  { name: 'eth0', address: 'fe80::ba27:ebff:feaa:bbcc', netmask: 'ffff:ffff:ffff:ffff::', family: 'IPv6', internal: false, mac: 'b8:27:eb:aa:bb:cc' },
  iface('docker0', '172.17.0.1', '255.255.0.0', { mac: '02:42:ac:11:00:01' }),
];

describe('detectNetwork', () => {
  it('suggests the default-route interface and lists every external IPv4 interface', () => {
    const result = detectNetwork(HOME_SERVER, 'nas', 'eth0');
    expect(result).toEqual({
      local_ip: '192.168.1.23',
      suggested_subnet: '192.168.1.0/24',
      hostname: 'nas',
      interfaces: [
        { name: 'eth0', address: '192.168.1.23', prefix_length: 24, subnet: '192.168.1.0/24', mac: 'b8:27:eb:aa:bb:cc' },
        { name: 'docker0', address: '172.17.0.1', prefix_length: 16, subnet: '172.17.0.0/16', mac: '02:42:ac:11:00:01' },
      ],
    });
  });

  it('skips container bridges and VPN tunnels when no default route is known', () => {
    const addresses = [
      LOOPBACK,
      iface('docker0', '172.17.0.1', '255.255.0.0'),
      iface('br-5f2a9c', '172.18.0.1', '255.255.0.0'),
      iface('veth12ab', '172.18.0.5', '255.255.0.0'),
      iface('tailscale0', '100.101.102.103', '255.255.255.255'),
      iface('wg0', '10.8.0.2', '255.255.255.0'),
      iface('wlan0', '10.0.5.17', '255.255.0.0'),
    ];
    const result = detectNetwork(addresses, 'laptop', null);
    expect(result.local_ip).toBe('10.0.5.17');
    expect(result.suggested_subnet).toBe('10.0.0.0/16');
    expect(result.interfaces.map((i) => i.name)).toEqual(['docker0', 'br-5f2a9c', 'veth12ab', 'tailscale0', 'wg0', 'wlan0']);
  });

  it('follows the default route even to a tunnel or bridge interface', () => {
    const addresses = [iface('eth0', '192.168.1.23', '255.255.255.0'), iface('wg0', '10.8.0.2', '255.255.255.0')];
    const result = detectNetwork(addresses, 'host', 'wg0');
    expect(result).toMatchObject({ local_ip: '10.8.0.2', suggested_subnet: '10.8.0.0/24' });
  });

  it('falls back when the default route names an interface without an IPv4 address', () => {
    const result = detectNetwork(HOME_SERVER, 'nas', 'ppp0');
    expect(result).toMatchObject({ local_ip: '192.168.1.23', suggested_subnet: '192.168.1.0/24' });
  });

  it('prefers a private address over a public one when there is no default route', () => {
    const addresses = [iface('eth0', '203.0.113.10', '255.255.255.0'), iface('eth1', '192.168.50.2', '255.255.255.0')];
    expect(detectNetwork(addresses, 'edge', null)).toMatchObject({ local_ip: '192.168.50.2', suggested_subnet: '192.168.50.0/24' });
  });

  it('uses a public address when it is the only physical interface', () => {
    const addresses = [iface('docker0', '172.17.0.1', '255.255.0.0'), iface('ens3', '198.51.100.77', '255.255.255.192')];
    expect(detectNetwork(addresses, 'vps', null)).toMatchObject({ local_ip: '198.51.100.77', suggested_subnet: '198.51.100.64/26' });
  });

  it('keeps the real prefix down to /16 and narrows anything wider to the /24 around the address', () => {
    const at = (netmask: string) => detectNetwork([iface('eth0', '10.20.30.40', netmask)], 'h', 'eth0');
    expect(at('255.255.255.128').suggested_subnet).toBe('10.20.30.0/25');
    expect(at('255.255.252.0').suggested_subnet).toBe('10.20.28.0/22');
    expect(at('255.255.0.0').suggested_subnet).toBe('10.20.0.0/16');
    expect(at('255.254.0.0').suggested_subnet).toBe('10.20.30.0/24');
    const wide = at('255.0.0.0');
    expect(wide.suggested_subnet).toBe('10.20.30.0/24');
    // The interface itself is still listed with its real prefix.
    expect(wide.interfaces[0]).toMatchObject({ prefix_length: 8, subnet: '10.0.0.0/8' });
  });

  it('ignores loopback, link-local and IPv6 addresses', () => {
    const addresses = [
      LOOPBACK,
      LOOPBACK6,
      iface('eth0', '169.254.10.20', '255.255.0.0'),
      { ...iface('eth0', 'fd00::23', 'ffff:ffff:ffff:ffff::'), family: 'IPv6' },
      iface('eth1', '192.168.7.9', '255.255.255.0'),
    ];
    const result = detectNetwork(addresses, 'h', null);
    expect(result.interfaces.map((i) => i.address)).toEqual(['192.168.7.9']);
    expect(result.local_ip).toBe('192.168.7.9');
  });

  it('accepts the numeric address family some Node versions report', () => {
    const result = detectNetwork([iface('eth0', '192.168.3.4', '255.255.255.0', { family: 4 })], 'h', 'eth0');
    expect(result).toMatchObject({ local_ip: '192.168.3.4', suggested_subnet: '192.168.3.0/24' });
  });

  it('reports a missing MAC address as null', () => {
    const result = detectNetwork([iface('tun0', '10.9.0.1', '255.255.255.0', { mac: '00:00:00:00:00:00' })], 'h', null);
    expect(result.interfaces[0].mac).toBeNull();
  });

  it('suggests only the loopback address when the host has no external IPv4 interface', () => {
    expect(detectNetwork([LOOPBACK, LOOPBACK6], 'isolated', null)).toEqual({
      local_ip: '127.0.0.1',
      suggested_subnet: '127.0.0.1/32',
      hostname: 'isolated',
      interfaces: [],
    });
    expect(detectNetwork([], 'empty', null).interfaces).toEqual([]);
  });
});

describe('netmaskToPrefix', () => {
  it('counts the bits of a dotted netmask', () => {
    expect(netmaskToPrefix('255.255.255.0')).toBe(24);
    expect(netmaskToPrefix('255.255.255.255')).toBe(32);
    expect(netmaskToPrefix('255.255.240.0')).toBe(20);
    expect(netmaskToPrefix('255.128.0.0')).toBe(9);
    expect(netmaskToPrefix('0.0.0.0')).toBe(0);
  });
});

describe('defaultRouteFromProcRoute', () => {
  const header = 'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT';

  it('finds the interface of the default route', () => {
    const table = [
      header,
      'docker0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0',
      'eth0\t00000000\t0101A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0',
      'eth0\t0001A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0',
      '',
    ].join('\n');
    expect(defaultRouteFromProcRoute(table)).toBe('eth0');
  });

  it('returns null without a default route, for an empty table and for a missing file', () => {
    const table = [header, 'eth0\t0001A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0'].join('\n');
    expect(defaultRouteFromProcRoute(table)).toBeNull();
    expect(defaultRouteFromProcRoute(header)).toBeNull();
    expect(defaultRouteFromProcRoute('')).toBeNull();
  });

  it('ignores the header line', () => {
    // A header that happens to look like a default route is not one.
    expect(defaultRouteFromProcRoute('hdr 00000000 x x x x x 00000000')).toBeNull();
  });
});
