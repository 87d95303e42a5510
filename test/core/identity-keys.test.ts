import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  IDENTITY_KEY_KINDS,
  KEY_STRENGTHS,
  gradeDhcpClientId,
  gradeHostname,
  gradeMdnsName,
  gradeNetbiosName,
  gradeSnmpEngineId,
  gradeTlsCertificate,
  gradeUpnpUdn,
  identityKeysOf,
} from '../../src/core/identity-keys.js';
import { gradeMac } from '../../src/core/mac.js';

describe('gradeMac', () => {
  it.each<[string, 'strong' | 'weak' | 'excluded', RegExp]>([
    ['00:11:32:AA:BB:CC', 'strong', /globally unique/],
    ['b8-27-eb-01-02-03', 'strong', /globally unique/],
    ['7A:1C:3E:00:11:22', 'weak', /locally administered/],
    ['52:54:00:12:34:56', 'weak', /locally administered/],
    ['02:42:AC:11:00:02', 'weak', /locally administered/],
    ['00:00:5E:00:01:0A', 'excluded', /VRRP or CARP/],
    ['00:00:5E:00:02:01', 'excluded', /VRRP \(IPv6\)/],
    ['00:00:0C:07:AC:01', 'excluded', /HSRP/],
    ['00:00:0C:9F:F0:01', 'excluded', /HSRPv2/],
    ['00:07:B4:00:01:02', 'excluded', /GLBP/],
    ['01:00:5E:00:00:FB', 'excluded', /multicast/],
    ['33:33:00:00:00:01', 'excluded', /multicast/],
    ['FF:FF:FF:FF:FF:FF', 'excluded', /broadcast/],
    ['00:00:00:00:00:00', 'excluded', /all-zero/],
    ['not-a-mac', 'excluded', /not a MAC/],
  ])('%s is %s', (mac, grade, reason) => {
    const g = gradeMac(mac);
    expect(g.grade).toBe(grade);
    expect(g.reason).toMatch(reason);
  });

  it('keeps an ordinary MAC next to a virtual router range apart from it', () => {
    expect(gradeMac('00:00:5E:00:03:01').grade).toBe('strong');
    expect(gradeMac('00:00:0C:07:AB:01').grade).toBe('strong');
  });
});

describe('grading keys', () => {
  const cert = (over: Partial<Parameters<typeof gradeTlsCertificate>[0]>) =>
    gradeTlsCertificate({ subject: 'CN=nas.home.arpa', issuer: 'CN=nas.home.arpa', sans: ['DNS:nas.home.arpa'], selfSigned: true, ...over });

  it('trusts a self-signed certificate with its own name, less a CA-issued one, least a default or wildcard one', () => {
    expect(cert({}).strength).toBe('strong');
    expect(cert({ selfSigned: false, issuer: "CN=R3, O=Let's Encrypt, C=US" }).strength).toBe('medium');
    expect(cert({ subject: 'CN=localhost', sans: [] }).strength).toBe('weak');
    expect(cert({ subject: 'C=AU, ST=Some-State, O=Internet Widgits Pty Ltd' }).strength).toBe('weak');
    expect(cert({ subject: 'CN=UniFi, OU=UniFi, O=Ubiquiti Inc.' }).strength).toBe('weak');
    expect(cert({ subject: 'CN=*.home.example', selfSigned: false, issuer: 'CN=R3' }).strength).toBe('weak');
    expect(cert({ subject: null, sans: [] }).strength).toBe('weak');
    // A name that merely contains a default word is not a default certificate.
    expect(cert({ subject: 'CN=router-basement.home.arpa' }).strength).toBe('strong');
  });

  it('grades names: default names are weak, localhost is none, host names are weak', () => {
    expect(gradeMdnsName('annas-iphone.local').strength).toBe('medium');
    expect(gradeMdnsName('iPhone.local').strength).toBe('weak');
    expect(gradeMdnsName('raspberrypi-2.local').strength).toBe('weak');
    expect(gradeMdnsName('localhost.local').strength).toBe('excluded');
    expect(gradeNetbiosName('DESKTOP-4F7Q2KD').strength).toBe('medium');
    expect(gradeNetbiosName('WORKGROUP').strength).toBe('weak');
    expect(gradeHostname('nas.home.arpa').strength).toBe('weak');
    expect(gradeHostname('localhost').strength).toBe('excluded');
  });

  it('grades UDNs, engine IDs and DHCP client ids', () => {
    expect(gradeUpnpUdn('uuid:4d696e69-444c-164e-9d41-b827eb123456').strength).toBe('strong');
    expect(gradeUpnpUdn('uuid:00000000-0000-0000-0000-000000000000').strength).toBe('weak');
    expect(gradeSnmpEngineId('80001f8880a1b2c3d4e5f60718').strength).toBe('strong');
    expect(gradeSnmpEngineId('0000000000').strength).toBe('weak');
    expect(gradeSnmpEngineId('8000').strength).toBe('weak');
    expect(gradeDhcpClientId('01:00:11:32:aa:bb:cc').strength).toBe('medium');
    expect(gradeDhcpClientId('01:7a:1c:3e:00:11:22').strength).toBe('weak');
    expect(gradeDhcpClientId('ff:00:00:00:01:00:01:2c:aa:bb:cc').strength).toBe('medium');
  });
});

describe('identityKeysOf', () => {
  it('lists every key a host offers, normalised, strongest first', () => {
    const keys = identityKeysOf({
      ip: '10.0.0.20',
      mac: '7a-1c-3e-00-11-22',
      hostname: 'Annas-iPhone.home.arpa.',
      hostnameSource: 'pihole',
      dhcpClientId: '01:7A:1C:3E:00:11:22',
      probes: {
        mdns: { names: ['Annas-iPhone.local'], services: [], instances: [], txt: {} },
        ssh: [
          { port: 22, banner: 'SSH-2.0-OpenSSH_9.6', keyType: 'ssh-ed25519', fingerprint: 'SHA256:abc' },
          { port: 2222, banner: 'SSH-2.0-OpenSSH_9.6', keyType: 'ssh-ed25519', fingerprint: 'SHA256:abc' },
        ],
        tls: [
          {
            port: 443,
            subject: 'CN=anna.home.arpa',
            issuer: 'CN=anna.home.arpa',
            sans: [],
            notBefore: null,
            notAfter: null,
            selfSigned: true,
            keyHash: 'ABCDEF',
          },
        ],
        ssdp: {
          location: null,
          server: null,
          friendlyName: null,
          manufacturer: null,
          modelName: null,
          modelNumber: null,
          udn: 'uuid:4D696E69-444C-164E-9D41-B827EB123456',
          deviceType: null,
        },
        snmp: { community: 'public', sysDescr: null, sysObjectID: null, sysName: null, engineId: '80001F8880A1B2C3D4E5F60718' },
        netbios: { name: 'annaphone', workgroup: null, mac: '00:00:5e:00:01:01' },
      },
    });
    expect(keys.map((k) => [k.kind, k.value, k.source, k.strength])).toEqual([
      ['ssh_host_key', 'SHA256:abc', 'ssh', 'strong'],
      ['tls_certificate', 'abcdef', 'tls', 'strong'],
      ['upnp_udn', 'uuid:4d696e69-444c-164e-9d41-b827eb123456', 'ssdp', 'strong'],
      ['snmp_engine_id', '80001f8880a1b2c3d4e5f60718', 'snmp', 'strong'],
      ['mdns_name', 'annas-iphone.local', 'mdns', 'medium'],
      ['netbios_name', 'ANNAPHONE', 'netbios', 'medium'],
      ['mac', '7A:1C:3E:00:11:22', 'scan', 'weak'],
      ['dhcp_client_id', '01:7a:1c:3e:00:11:22', 'dhcp_leases', 'weak'],
      ['hostname', 'annas-iphone.home.arpa', 'pihole', 'weak'],
      ['ip', '10.0.0.20', 'scan', 'weak'],
      ['mac', '00:00:5E:00:01:01', 'netbios', 'excluded'],
    ]);
    for (const k of keys) expect(k.reason.length).toBeGreaterThan(10);
  });

  it('gives a host with nothing but an address one weak key', () => {
    expect(identityKeysOf({ ip: '10.0.0.9', mac: null, hostname: null, probes: {} })).toEqual([
      { kind: 'ip', value: '10.0.0.9', source: 'scan', strength: 'weak', reason: expect.any(String) },
    ]);
  });

  it('always gives known kinds and strengths, each key once, in a stable order', () => {
    const nameArb = fc.oneof(fc.constantFrom('iphone.local', 'nas.local', 'localhost', 'DESKTOP-4F7Q2KD'), fc.string({ maxLength: 20 }));
    fc.assert(
      fc.property(
        fc.record({
          ip: fc.ipV4(),
          mac: fc.option(fc.oneof(fc.constantFrom('00:11:32:aa:bb:cc', '00:00:5E:00:01:01', '7a:1c:3e:00:11:22'), fc.string({ maxLength: 17 }))),
          hostname: fc.option(nameArb),
          dhcpClientId: fc.option(fc.string({ maxLength: 30 })),
          probes: fc.record(
            {
              mdns: fc.record({
                names: fc.array(nameArb, { maxLength: 3 }),
                services: fc.constant<string[]>([]),
                instances: fc.constant<string[]>([]),
                txt: fc.constant<Record<string, string>>({}),
              }),
              snmp: fc.record({
                community: fc.constant('public'),
                sysDescr: fc.constant(null),
                sysObjectID: fc.constant(null),
                sysName: fc.constant(null),
                engineId: fc.option(fc.stringMatching(/^[0-9a-f]{0,30}$/)),
              }),
            },
            { requiredKeys: [] },
          ),
        }),
        (input) => {
          const a = identityKeysOf(input);
          expect(identityKeysOf(structuredClone(input))).toEqual(a);
          const seen = new Set<string>();
          for (const k of a) {
            expect(IDENTITY_KEY_KINDS).toContain(k.kind);
            expect(KEY_STRENGTHS).toContain(k.strength);
            expect(k.value).not.toBe('');
            const id = `${k.kind} ${k.value}`;
            expect(seen.has(id)).toBe(false);
            seen.add(id);
          }
          expect(a.some((k) => k.kind === 'ip')).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
