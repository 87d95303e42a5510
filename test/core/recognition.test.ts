import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEVICE_TYPES } from '../../src/core/device-types.js';
import type { ProbeResults } from '../../src/core/probe-results.js';
import { reasonOf, recognise, type RecognitionInput, type RecognitionPort } from '../../src/core/recognition.js';

const ports = (...list: (number | `${number}/udp`)[]): RecognitionPort[] =>
  list.map((p) =>
    typeof p === 'number'
      ? { port: p, protocol: 'tcp', service: null, product: null, version: null }
      : { port: Number(p.split('/')[0]), protocol: 'udp', service: null, product: null, version: null },
  );

function input(over: Partial<RecognitionInput> = {}): RecognitionInput {
  return { probes: {}, mac: null, ouiVendor: null, hostname: null, openPorts: [], ...over };
}

const SYNOLOGY_SNMP: ProbeResults['snmp'] = {
  community: 'public',
  sysDescr: 'Linux DiskStation 4.4.302+ #72806 SMP Thu Sep 5 13:44:21 CST 2024 x86_64 GNU/Linux synology_geminilake_920+',
  sysObjectID: '1.3.6.1.4.1.8072.3.2.10',
  sysName: 'DiskStation',
  engineId: '80001f8880a1b2c3d4',
};

const mdns = (services: string[], txt: Record<string, string> = {}, names: string[] = []): ProbeResults['mdns'] => ({
  names,
  services,
  instances: [],
  txt,
});

describe('recognise', () => {
  it('recognises a Synology NAS from SNMP, and agreeing sources raise the confidence', () => {
    const snmpOnly = recognise(input({ probes: { snmp: SYNOLOGY_SNMP } }));
    expect(snmpOnly).toMatchObject({ device_type: 'nas', vendor: 'Synology', os_name: 'DSM' });
    const agreeing = recognise(
      input({
        probes: { snmp: SYNOLOGY_SNMP, mdns: mdns(['_http._tcp', '_smb._tcp'], {}, ['diskstation.local']) },
        mac: '00:11:32:AA:BB:CC',
        ouiVendor: 'Synology Incorporated',
        openPorts: ports(22, 139, 445, 5000, 5001),
      }),
    );
    expect(agreeing).toMatchObject({ device_type: 'nas', vendor: 'Synology', os_name: 'DSM' });
    expect(agreeing.type_confidence).toBeGreaterThan(snmpOnly.type_confidence);
    expect(agreeing.confidence.vendor).toBeGreaterThan(snmpOnly.confidence.vendor);
    // The kernel says Linux: that supports DSM (built on it) rather than contradicting it, and its
    // version is the kernel's, not DSM's.
    expect(agreeing.os_version).toBeNull();
    expect(agreeing.cpes).toEqual(expect.arrayContaining(['cpe:/o:synology:diskstation_manager', 'cpe:/o:linux:linux_kernel:4.4.302']));
    expect(reasonOf(agreeing)).toBe('Synology NAS (SNMP, mDNS, MAC vendor)');
    const snmpEvidence = agreeing.evidence.find((e) => e.rule === 'synology-snmp' && e.field === 'device_type');
    expect(snmpEvidence).toEqual({
      field: 'device_type',
      value: 'nas',
      source: 'snmp',
      detail: 'SNMP sysDescr "Linux DiskStation 4.4.302+ #72806 SMP Thu Sep 5 13:44:21 CST 2024 x86_64 GNU/Lin..." matches Synology DSM',
      confidence: 90,
      rule: 'synology-snmp',
    });
  });

  it('quotes the part of a long value that matched', () => {
    const sysDescr = 'Linux nas 4.4.302+ #72806 SMP Thu Sep 5 13:44:21 CST 2024 x86_64 GNU/Linux synology_geminilake_920+';
    const r = recognise(input({ probes: { snmp: { ...SYNOLOGY_SNMP, sysDescr } } }));
    expect(r.evidence.find((e) => e.rule === 'synology-snmp')?.detail).toBe(
      'SNMP sysDescr "...#72806 SMP Thu Sep 5 13:44:21 CST 2024 x86_64 GNU/Linux synology_geminilake_920+" matches Synology DSM',
    );
  });

  it('lowers the confidence when sources contradict each other, and keeps the losing evidence', () => {
    const alone = recognise(input({ probes: { snmp: SYNOLOGY_SNMP } }));
    const conflict = recognise(
      input({
        probes: {
          snmp: SYNOLOGY_SNMP,
          ssdp: {
            location: 'http://10.0.0.5:8080/description.xml',
            server: null,
            friendlyName: 'NAS',
            manufacturer: 'QNAP Systems, Inc.',
            modelName: 'TS-453D',
            modelNumber: null,
            udn: 'uuid:1',
            deviceType: null,
          },
        },
      }),
    );
    expect(conflict.device_type).toBe('nas');
    expect(conflict.vendor).toBe('Synology');
    expect(conflict.confidence.vendor).toBeLessThan(alone.confidence.vendor);
    // The QNAP model belongs to the vendor that lost: it is not given to the Synology.
    expect(conflict.model).toBeNull();
    expect(conflict.evidence.some((e) => e.field === 'vendor' && e.value === 'QNAP' && e.source === 'ssdp')).toBe(true);
  });

  it('gives an OUI alone a low type confidence', () => {
    const r = recognise(input({ mac: '00:11:32:01:02:03', ouiVendor: 'Synology Incorporated' }));
    expect(r.vendor).toBe('Synology');
    expect(r.device_type).toBe('nas');
    expect(r.type_confidence).toBeLessThanOrEqual(50);
    expect(reasonOf(r)).toBe('Synology NAS (MAC vendor)');
    const apple = recognise(input({ mac: 'A4:83:E7:01:02:03', ouiVendor: 'Apple, Inc.' }));
    expect(apple).toMatchObject({ device_type: 'unknown', type_confidence: 0, vendor: 'Apple' });
    expect(reasonOf(apple)).toBe('Apple device (MAC vendor)');
  });

  it.each([
    ['00:0C:29:4F:8E:35', 'VMware'],
    ['08:00:27:12:34:56', 'VirtualBox'],
    ['52:54:00:12:34:56', 'QEMU/KVM'],
    ['00:15:5D:01:02:03', 'Microsoft Hyper-V'],
    ['00:16:3E:01:02:03', 'Xen'],
    ['00:1C:42:01:02:03', 'Parallels'],
    ['BC:24:11:01:02:03', 'Proxmox'],
  ])('recognises a virtual machine by its MAC %s', (mac, vendor) => {
    // QEMU's range is locally administered, so the registry has no vendor for it: the prefix alone says it.
    const r = recognise(input({ mac, ouiVendor: null, openPorts: ports(22) }));
    expect(r).toMatchObject({ device_type: 'virtual_machine', vendor });
    expect(reasonOf(r)).toBe(`${vendor} virtual machine (MAC vendor)`);
  });

  it('recognises a phone with a randomised MAC from its mDNS model code', () => {
    const r = recognise(
      input({
        mac: '7A:1C:3E:00:11:22', // locally administered: no registry vendor
        ouiVendor: null,
        probes: { mdns: mdns(['_apple-mobdev2._tcp', '_companion-link._tcp'], { model: 'iPhone14,2' }, ['annas-iphone.local']) },
        openPorts: ports(62078),
      }),
    );
    expect(r).toMatchObject({ device_type: 'phone', vendor: 'Apple', model: 'iPhone14,2', os_name: 'iOS' });
    expect(r.type_confidence).toBeGreaterThanOrEqual(95);
    expect(r.cpes).toContain('cpe:/o:apple:iphone_os');
    expect(reasonOf(r)).toBe('Apple phone (mDNS, open ports)');
    expect(r.evidence.find((e) => e.rule === 'apple-iphone-sync-port')?.detail).toBe('Open port 62078/tcp matches the iPhone/iPad sync port (62078)');
  });

  it('tells iPads, Macs, Apple TVs and HomePods apart by their model codes', () => {
    const kind = (model: string) => recognise(input({ probes: { mdns: mdns(['_device-info._tcp'], { model }) } }));
    expect(kind('iPad13,4')).toMatchObject({ device_type: 'tablet', os_name: 'iPadOS' });
    expect(kind('MacBookPro18,3')).toMatchObject({ device_type: 'laptop', os_name: 'macOS', model: 'MacBookPro18,3' });
    expect(kind('Macmini9,1')).toMatchObject({ device_type: 'workstation', os_name: 'macOS' });
    expect(kind('AppleTV6,2')).toMatchObject({ device_type: 'media_player', os_name: 'tvOS' });
    expect(kind('AudioAccessory5,1')).toMatchObject({ device_type: 'speaker', vendor: 'Apple' });
  });

  it('recognises a Windows workstation from NetBIOS, SMB and RDP', () => {
    const r = recognise(
      input({
        probes: { netbios: { name: 'DESKTOP-4F7Q2KD', workgroup: 'WORKGROUP', mac: null } },
        openPorts: ports(135, 139, 445, 3389),
      }),
    );
    expect(r).toMatchObject({ device_type: 'workstation', os_name: 'Windows', cpes: ['cpe:/o:microsoft:windows'] });
    expect(r.confidence.os_name).toBeGreaterThan(90);
    expect(reasonOf(r)).toBe('Windows computer (NetBIOS, open ports)');
  });

  it('recognises a printer from its ports, IPP over mDNS and its make and model', () => {
    const r = recognise(
      input({
        probes: { mdns: mdns(['_ipp._tcp', '_pdl-datastream._tcp'], { ty: 'Brother HL-L2350DW series' }) },
        ouiVendor: 'Brother Industries, LTD.',
        openPorts: ports(80, 515, 631, 9100),
      }),
    );
    expect(r).toMatchObject({ device_type: 'printer', vendor: 'Brother', model: 'HL-L2350DW' });
    expect(r.type_confidence).toBeGreaterThan(90);
    expect(r.evidence.find((e) => e.rule === 'printer-ports')?.detail).toBe('Open ports 9100/tcp, 515/tcp match raw printing and LPD ports');
  });

  it('prefers the specific type that a broader one supports (Shelly: smart home, not just IoT)', () => {
    const r = recognise(
      input({
        ouiVendor: 'Espressif Inc.',
        probes: { mdns: mdns(['_shelly._tcp', '_http._tcp'], { gen: '2', app: 'Plus1PM', ver: '1.0.8' }, ['shellyplus1pm-a8032ab12345.local']) },
      }),
    );
    expect(r).toMatchObject({ device_type: 'smart_home', vendor: 'Shelly', model: 'Shelly Plus1PM' });
    // Espressif makes the Wi-Fi chip, not the device: it is no vendor, and its `iot` supports `smart_home`.
    expect(r.evidence.some((e) => e.field === 'vendor' && /espressif/i.test(e.value))).toBe(false);
    expect(r.type_confidence).toBeGreaterThan(90);
  });

  it('weights nmap by its accuracy and reads its family and CPEs', () => {
    const match = (accuracy: number) =>
      recognise(
        input({
          nmapOs: [
            {
              name: 'MikroTik RouterOS 6.45',
              accuracy,
              vendor: 'MikroTik',
              family: 'RouterOS',
              generation: '6.X',
              type: 'router',
              cpe: ['cpe:/o:mikrotik:routeros:6'],
            },
          ],
        }),
      );
    const sure = match(100);
    const unsure = match(60);
    expect(sure).toMatchObject({ device_type: 'router', os_name: 'RouterOS', cpes: ['cpe:/o:mikrotik:routeros:6'] });
    expect(unsure.type_confidence).toBeLessThan(sure.type_confidence);
    expect(sure.evidence.find((e) => e.rule === 'nmap-type-router')?.detail).toBe(
      'Nmap OS class "MikroTik|RouterOS|6.X|router" (accuracy 100%) matches nmap\'s device class (router)',
    );
  });

  it('takes the OS version only from the winning OS', () => {
    const r = recognise(
      input({
        probes: {
          snmp: {
            community: 'public',
            sysDescr: 'pfSense gw.home.arpa 2.7.2-RELEASE FreeBSD 14.0-CURRENT amd64',
            sysObjectID: '1.3.6.1.4.1.8072.3.2.8',
            sysName: 'gw',
            engineId: null,
          },
          ssh: [{ port: 22, banner: 'SSH-2.0-OpenSSH_9.6 FreeBSD-20240104', keyType: 'ssh-ed25519', fingerprint: 'SHA256:x' }],
        },
      }),
    );
    expect(r).toMatchObject({ device_type: 'firewall', os_name: 'pfSense', os_version: '2.7.2' });
    expect(r.cpes).toEqual(expect.arrayContaining(['cpe:/a:netgate:pfsense:2.7.2', 'cpe:/o:freebsd:freebsd:14.0']));
    expect(r.cpes).not.toContain('cpe:/a:netgate:pfsense');
  });

  it('says nothing when nothing is known', () => {
    const r = recognise(input({ openPorts: ports(22, 443) }));
    expect(r).toEqual({
      device_type: 'unknown',
      type_confidence: 0,
      vendor: null,
      model: null,
      os_name: null,
      os_version: null,
      confidence: { vendor: 0, model: 0, os_name: 0, os_version: 0 },
      cpes: [],
      evidence: [],
    });
    expect(reasonOf(r)).toBe('Not recognised');
  });
});

/* ------------------------------------------------------------------------------------------------
 * Properties
 * --------------------------------------------------------------------------------------------- */

const text = (pool: string[]) => fc.oneof(fc.constantFrom(...pool), fc.string({ maxLength: 40 }));
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

const inputArb: fc.Arbitrary<RecognitionInput> = fc.record({
  probes: fc.record(
    {
      mdns: optional(
        fc.record({
          names: fc.array(text(['diskstation.local', 'annas-iphone.local', 'homeassistant.local']), { maxLength: 3 }),
          services: fc.array(text(['_ipp._tcp', '_googlecast._tcp', '_hap._tcp', '_shelly._tcp', '_esphomelib._tcp', '_airplay._tcp']), {
            maxLength: 4,
          }),
          instances: fc.constant([]),
          txt: fc.dictionary(
            fc.constantFrom('model', 'md', 'ty', 'version', 'app'),
            text(['iPhone14,2', 'Chromecast', 'HP LaserJet Pro M404dn', 'Plus1PM', '2024.1.0']),
          ),
        }),
      ),
      snmp: optional(
        fc.record({
          community: fc.constant('public'),
          sysDescr: fc.option(
            text([
              SYNOLOGY_SNMP.sysDescr!,
              'RouterOS RB4011iGS+',
              'Linux OpenWrt 5.15.137 #0 SMP',
              'Cisco IOS Software, C2960 Software, Version 15.0(2)SE11',
            ]),
          ),
          sysObjectID: fc.option(text(['1.3.6.1.4.1.14988.1', '1.3.6.1.4.1.311.1.1.3.1.1', '1.3.6.1.4.1.8072.3.2.10'])),
          sysName: fc.constant(null),
          engineId: fc.constant(null),
        }),
      ),
      http: optional(
        fc.array(
          fc.record({
            port: fc.constantFrom(80, 443, 5000, 8006),
            tls: fc.boolean(),
            status: fc.constant(200),
            title: fc.option(text(['Synology DiskStation', 'pfSense - Login', 'Home Assistant', 'OpenWrt - LuCI', 'Proxmox Virtual Environment'])),
            server: fc.option(text(['nginx', 'Microsoft-IIS/10.0', 'App-webs/', 'pve-api-daemon/3.0'])),
            faviconHash: fc.constant(null),
          }),
          { maxLength: 2 },
        ),
      ),
      nmapOs: optional(
        fc.array(
          fc.record({
            name: text(['Linux 5.0 - 5.14', 'Microsoft Windows 10 1809 - 21H2']),
            accuracy: fc.integer({ min: 0, max: 100 }),
            vendor: fc.option(text(['Linux', 'Microsoft', 'Apple'])),
            family: fc.option(text(['Linux', 'Windows', 'iOS', 'embedded'])),
            generation: fc.option(text(['5.X', '10'])),
            type: fc.option(text(['general purpose', 'router', 'phone', 'printer'])),
            cpe: fc.array(text(['cpe:/o:linux:linux_kernel:5', 'cpe:/o:microsoft:windows_10']), { maxLength: 2 }),
          }),
          { maxLength: 2 },
        ),
      ),
    },
    { requiredKeys: [] },
  ),
  mac: fc.option(fc.constantFrom('00:11:32:01:02:03', '00:0C:29:01:02:03', '52:54:00:01:02:03', '7A:1C:3E:00:11:22', 'not a mac')),
  ouiVendor: fc.option(text(['Synology Incorporated', 'Apple, Inc.', 'Espressif Inc.', 'Routerboard.com', 'Brother Industries, LTD.'])),
  hostname: fc.option(text(['DESKTOP-4F7Q2KD', 'raspberrypi', 'Johns-iPhone', 'BRN3C2AF4A1B2C3'])),
  openPorts: fc.array(
    fc.record({
      port: fc.constantFrom(22, 80, 135, 139, 445, 515, 3389, 5000, 8009, 8008, 9100, 62078, 8123),
      protocol: fc.constantFrom('tcp', 'udp'),
      service: fc.constant(null),
      product: fc.option(text(['Microsoft Windows RPC', 'Samba smbd', 'MikroTik RouterOS sshd'])),
      version: fc.constant(null),
    }),
    { maxLength: 6 },
  ),
});

describe('recognise: properties', () => {
  it('is deterministic, keeps confidences within 0–100 and the type within the §15 list', () => {
    fc.assert(
      fc.property(inputArb, (i) => {
        const a = recognise(i);
        const b = recognise(structuredClone(i));
        expect(b).toEqual(a);
        expect(reasonOf(b)).toBe(reasonOf(a));
        expect(DEVICE_TYPES).toContain(a.device_type);
        expect(a.type_confidence === 0).toBe(a.device_type === 'unknown');
        for (const c of [a.type_confidence, ...Object.values(a.confidence), ...a.evidence.map((e) => e.confidence)]) {
          expect(Number.isInteger(c) && c >= 0 && c <= 100).toBe(true);
        }
        for (const [field, value] of [
          ['vendor', a.vendor],
          ['model', a.model],
          ['os_name', a.os_name],
          ['os_version', a.os_version],
        ] as const) {
          expect(a.confidence[field] === 0).toBe(value === null);
          // What was chosen is backed by evidence for it.
          if (value !== null) expect(a.evidence.some((e) => e.field === field && e.value === value)).toBe(true);
        }
        expect(new Set(a.cpes).size).toBe(a.cpes.length);
      }),
      { numRuns: 300 },
    );
  });

  it('never lets more evidence for the winning type lower its confidence', () => {
    fc.assert(
      fc.property(inputArb, (i) => {
        const before = recognise(i);
        if (before.device_type !== 'virtual_machine') return;
        const after = recognise({ ...i, mac: '00:0C:29:01:02:03' });
        expect(after.type_confidence).toBeGreaterThanOrEqual(before.type_confidence);
      }),
      { numRuns: 200 },
    );
  });
});
