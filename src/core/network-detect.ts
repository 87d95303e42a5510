/** Choosing the local network to suggest for scanning, from the host's interface list. Pure. */
import { parseIpv4Network } from './net.js';

export interface InterfaceAddress {
  name: string;
  address: string;
  /** e.g. 255.255.255.0 */
  netmask: string;
  /** 'IPv4' or 'IPv6'; Node 18.0 to 18.3 reported the number 4 or 6 */
  family: string | number;
  internal: boolean;
  mac: string;
}

export interface DetectedInterface {
  name: string;
  address: string;
  prefix_length: number;
  subnet: string;
  mac: string | null;
}

export interface NetworkDetection {
  local_ip: string;
  suggested_subnet: string;
  hostname: string;
  interfaces: DetectedInterface[];
}

/** Interfaces that are never the LAN: container bridges, VPN tunnels and the like. */
const VIRTUAL_NAME = /^(docker|br-|veth|virbr|lxc|lxd|cni|flannel|cali|tun|tap|wg|tailscale|zt|utun|nwlab)/;

/** True for an interface that is never the LAN (a container bridge, a VPN tunnel, the test lab's bridges). */
export function isVirtualInterface(name: string): boolean {
  return VIRTUAL_NAME.test(name);
}

export function netmaskToPrefix(netmask: string): number {
  return netmask
    .split('.')
    .map(
      (octet) =>
        Number(octet)
          .toString(2)
          .split('')
          .filter((b) => b === '1').length,
    )
    .reduce((a, b) => a + b, 0);
}

/**
 * Lists the IPv4 interfaces and suggests the subnet to scan: the default-route interface when
 * known, else the first physical-looking private interface. A block wider than /16 is narrowed
 * to the /24 around the address, so the suggestion is always scannable.
 */
export function detectNetwork(addresses: InterfaceAddress[], hostname: string, defaultRouteInterface: string | null): NetworkDetection {
  const interfaces: DetectedInterface[] = addresses
    .filter((a) => (a.family === 'IPv4' || a.family === 4) && !a.internal && !a.address.startsWith('169.254.'))
    .map((a) => {
      const prefix = netmaskToPrefix(a.netmask);
      const net = parseIpv4Network(`${a.address}/${prefix}`);
      return {
        name: a.name,
        address: a.address,
        prefix_length: prefix,
        subnet: net.ok ? net.value.cidr : `${a.address}/32`,
        mac: a.mac && a.mac !== '00:00:00:00:00:00' ? a.mac : null,
      };
    });

  const preferred =
    interfaces.find((i) => i.name === defaultRouteInterface) ??
    interfaces.find((i) => !VIRTUAL_NAME.test(i.name) && isPrivate(i.address)) ??
    interfaces.find((i) => !VIRTUAL_NAME.test(i.name)) ??
    interfaces[0];

  if (!preferred) {
    return { local_ip: '127.0.0.1', suggested_subnet: '127.0.0.1/32', hostname, interfaces };
  }
  const prefix = preferred.prefix_length < 16 ? 24 : preferred.prefix_length;
  const suggestion = parseIpv4Network(`${preferred.address}/${prefix}`);
  return {
    local_ip: preferred.address,
    suggested_subnet: suggestion.ok ? suggestion.value.cidr : preferred.subnet,
    hostname,
    interfaces,
  };
}

function isPrivate(address: string): boolean {
  const [a, b] = address.split('.').map(Number);
  return a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127);
}

/** The interface of the IPv4 default route in a /proc/net/route table, if any. */
export function defaultRouteFromProcRoute(table: string): string | null {
  for (const line of table.split('\n').slice(1)) {
    const [iface, destination, , , , , , mask] = line.trim().split(/\s+/);
    if (destination === '00000000' && mask === '00000000' && iface) return iface;
  }
  return null;
}
