import { describe, expect, it } from 'vitest';
import { UDP_PROBES, answeredUdpPort, silentUdpPort, udpPayload } from '../../src/core/udp-probes.js';

describe('UDP probes', () => {
  it('sends each well-known port its service request, and other ports an empty datagram', () => {
    const dns = udpPayload(53, '127.0.0.1');
    expect(dns.readUInt16BE(2)).toBe(0x0100); // a standard query, recursion desired
    expect(dns.readUInt16BE(4)).toBe(1);
    expect(udpPayload(123, '127.0.0.1')[0]).toBe(0x23); // NTP v4, client
    expect(udpPayload(123, '127.0.0.1')).toHaveLength(48);
    const snmp = udpPayload(161, '127.0.0.1');
    expect(snmp[0]).toBe(0x30);
    expect(snmp[1]).toBe(snmp.length - 2); // the BER length covers the message
    expect(snmp.includes(Buffer.from('public'))).toBe(true);
    expect(udpPayload(137, '127.0.0.1').includes(Buffer.from('CKAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'))).toBe(true);
    expect(udpPayload(1900, '127.0.0.1').toString()).toMatch(
      /^M-SEARCH \* HTTP\/1\.1\r\nHOST: 127\.0\.0\.1:1900\r\n[\s\S]*ST: ssdp:all\r\n[\s\S]*\r\n\r\n$/,
    );
    expect(udpPayload(5353, '127.0.0.1').includes(Buffer.from('_services'))).toBe(true);
    expect(udpPayload(69, '127.0.0.1').subarray(0, 2)).toEqual(Buffer.from([0, 1])); // TFTP read request
    expect(udpPayload(500, '127.0.0.1')).toHaveLength(28);
    expect(udpPayload(67, '127.0.0.1')).toHaveLength(0); // no DHCP request: open only if something answers anyway
    expect(udpPayload(40000, '127.0.0.1')).toHaveLength(0);
  });

  it('recognises a service in its own answer', () => {
    const ntp = Buffer.alloc(48);
    ntp[0] = (4 << 3) | 4;
    ntp[1] = 2;
    expect(answeredUdpPort(123, ntp)).toMatchObject({ protocol: 'udp', state: 'open', service: 'ntp', extra_info: 'NTP v4, stratum 2' });
    expect(answeredUdpPort(123, ntp).service_guessed).toBeUndefined();

    const oid = Buffer.from([0x06, 0x08, 0x2b, 0x06, 0x01, 0x02, 0x01, 0x01, 0x01, 0x00]);
    const descr = Buffer.from('RouterOS RB750');
    const varbind = Buffer.concat([oid, Buffer.from([0x04, descr.length]), descr]);
    const snmp = Buffer.concat([Buffer.from([0x30, 0x40, 0x02, 0x01, 0x01, 0x04, 0x06]), Buffer.from('public'), Buffer.from([0xa2, 0x20]), varbind]);
    expect(answeredUdpPort(161, snmp)).toMatchObject({ service: 'snmp', extra_info: 'community "public"; sysDescr: RouterOS RB750' });

    const ssdp = Buffer.from(
      'HTTP/1.1 200 OK\r\nCACHE-CONTROL: max-age=1800\r\nSERVER: Linux/3.14 UPnP/1.0 MiniUPnPd/2.1\r\nST: upnp:rootdevice\r\n\r\n',
    );
    expect(answeredUdpPort(1900, ssdp)).toMatchObject({ service: 'upnp', product: 'Linux/3.14 UPnP/1.0 MiniUPnPd/2.1' });

    const tftpError = Buffer.concat([Buffer.from([0, 5, 0, 1]), Buffer.from('File not found\0')]);
    expect(answeredUdpPort(69, tftpError)).toMatchObject({ service: 'tftp', extra_info: 'error: File not found' });

    const dnsRefused = Buffer.from([0x12, 0x34, 0x81, 0x85, 0, 1, 0, 0, 0, 0, 0, 0]);
    expect(answeredUdpPort(53, dnsRefused)).toMatchObject({ service: 'domain', extra_info: 'answer: REFUSED' });
  });

  it('names an answer that is not the service only after the port, as a guess', () => {
    for (const port of Object.keys(UDP_PROBES).map(Number)) {
      const row = answeredUdpPort(port, Buffer.from('x'));
      expect(row, String(port)).toMatchObject({ state: 'open', service: UDP_PROBES[port].service, product: null, service_guessed: true });
    }
    expect(answeredUdpPort(40000, Buffer.from('hello'))).toEqual({
      port: 40000,
      protocol: 'udp',
      state: 'open',
      service: null,
      product: null,
      version: null,
      extra_info: null,
      cpe: [],
    });
  });

  it('reports a silent port as open|filtered', () => {
    expect(silentUdpPort(161)).toMatchObject({ port: 161, protocol: 'udp', state: 'open|filtered', service: 'snmp', service_guessed: true });
  });
});
