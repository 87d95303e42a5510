/**
 * The three lease-file formats, from samples written the way each server writes them: dnsmasq's
 * one-line leases (with its IPv6 section), ISC dhcpd's appended lease blocks (the last block of an
 * address wins, only active bindings count, quoted strings may hold braces and semicolons) and
 * Kea's memfile CSV (header-named columns, escaped commas, reclaimed leases skipped).
 */
import { describe, expect, it } from 'vitest';
import { detectLeaseFormat, parseLeaseFile } from '../../src/core/lease-files.js';

const DNSMASQ = `1764154800 3c:22:fb:11:22:33 192.168.1.23 macbook-air 01:3c:22:fb:11:22:33
1764151200 b8:27:eb:aa:bb:cc 192.168.1.40 * *
1764158400 00-11-32-0a-0b-0c 192.168.1.50 nas.lan. *
duid 00:01:00:01:2c:aa:bb:cc:00:11:22:33:44:55
1764158400 1234567 fd00::23 laptop6 00:01:00:01:aa
`;

const ISC = `# The format of this file is documented in the dhcpd.leases(5) manual page.
# This lease file was written by isc-dhcp-4.4.3
authoring-byte-order little-endian;
server-duid "\\000\\001\\000\\001*\\221\\003\\322\\000\\025]\\202\\017\\271";

lease 192.168.10.21 {
  starts 2 2026/11/24 08:01:10;
  ends 2 2026/11/24 20:01:10;
  cltt 2 2026/11/24 08:01:10;
  binding state active;
  next binding state free;
  rewind binding state free;
  hardware ethernet 9c:b6:d0:01:02:03;
  uid "\\001\\234\\266\\320\\001\\002\\003";
  client-hostname "office-printer";
}
lease 192.168.10.22 {
  starts 2 2026/11/24 09:00:00;
  ends 2 2026/11/24 21:00:00;
  binding state active;
  hardware ethernet 70:85:c2:aa:00:01;
  uid "odd{uid};with\\"quotes";
  set vendor-class-identifier = "MSFT 5.0";
  client-hostname "DESKTOP-7Q2";
}
lease 192.168.10.21 {
  starts 3 2026/11/25 08:01:10;
  ends 3 2026/11/25 20:01:10;
  binding state active;
  hardware ethernet 9c:b6:d0:01:02:03;
  client-hostname "printer-2nd-floor";
}
lease 192.168.10.30 {
  starts 1 2026/11/23 10:00:00;
  ends 1 2026/11/23 11:00:00;
  binding state free;
  hardware ethernet 00:16:3e:00:00:30;
  client-hostname "gone-vm";
}
lease 192.168.10.22 {
  starts 3 2026/11/25 09:00:00;
  binding state active;
  hardware ethernet 70:85:c2:aa:00:01;
}
`;

const KEA = `address,hwaddr,client_id,valid_lifetime,expire,subnet_id,fqdn_fwd,fqdn_rev,hostname,state,user_context,pool_id
192.168.20.10,18:c0:4d:01:02:03,01:18:c0:4d:01:02:03,4000,1764160000,1,0,0,tv.example.org.,0,,0
192.168.20.11,a4:83:e7:00:00:11,,4000,1764160000,1,0,0,Anna&#x2cs iPhone,0,,0
192.168.20.12,f0:9f:c2:00:00:12,,4000,1764100000,1,0,0,old-host,2,,0
192.168.20.13,,,4000,1764160000,1,0,0,,0,,0
192.168.20.10,18:c0:4d:01:02:03,01:18:c0:4d:01:02:03,4000,1764170000,1,0,0,tv-renamed,0,,0
`;

describe('lease files', () => {
  it('detects each format from its first lines', () => {
    expect(detectLeaseFormat(DNSMASQ)).toBe('dnsmasq');
    expect(detectLeaseFormat(ISC)).toBe('isc');
    expect(detectLeaseFormat(KEA)).toBe('kea');
  });

  it('reads dnsmasq leases: `*` is no name, IPv6 leases after the duid line are skipped', () => {
    const parsed = parseLeaseFile(DNSMASQ);
    expect(parsed).toEqual({
      format: 'dnsmasq',
      skipped: 0,
      leases: [
        { ip: '192.168.1.23', mac: '3C:22:FB:11:22:33', hostname: 'macbook-air' },
        { ip: '192.168.1.40', mac: 'B8:27:EB:AA:BB:CC', hostname: null },
        { ip: '192.168.1.50', mac: '00:11:32:0A:0B:0C', hostname: 'nas.lan' },
      ],
    });
  });

  it('reads ISC dhcpd leases: the last block of an address wins, free bindings do not count', () => {
    const parsed = parseLeaseFile(ISC);
    expect(parsed.format).toBe('isc');
    expect(parsed.leases).toEqual([
      { ip: '192.168.10.21', mac: '9C:B6:D0:01:02:03', hostname: 'printer-2nd-floor' },
      { ip: '192.168.10.22', mac: '70:85:C2:AA:00:01', hostname: null },
    ]);
  });

  it('reads Kea CSV leases: columns by header, escaped commas, reclaimed leases skipped, the last row wins', () => {
    const parsed = parseLeaseFile(KEA);
    expect(parsed.format).toBe('kea');
    expect(parsed.leases).toEqual([
      { ip: '192.168.20.11', mac: 'A4:83:E7:00:00:11', hostname: 'Anna,s iPhone' },
      { ip: '192.168.20.13', mac: null, hostname: null },
      { ip: '192.168.20.10', mac: '18:C0:4D:01:02:03', hostname: 'tv-renamed' },
    ]);
  });

  it('counts what it cannot read instead of failing', () => {
    expect(parseLeaseFile('this is not\na lease file at all\n')).toMatchObject({ format: 'dnsmasq', leases: [], skipped: 2 });
    expect(parseLeaseFile('address,hwaddr\nnot-an-ip,aa\n', 'kea')).toMatchObject({ leases: [], skipped: 1 });
    expect(parseLeaseFile('lease 999.1.1.1 { binding state active; }', 'isc')).toMatchObject({ leases: [], skipped: 1 });
  });
});
