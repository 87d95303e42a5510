import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  MAX_NAMED_SKIPPED_HOSTS,
  ReportRejectedError,
  checkReportSafety,
  checkWellFormed,
  coveringCidr,
  nmapCommandTargets,
  planImport,
  reportPortList,
  reportProfile,
  reportSubnet,
} from '../../src/core/nmap-import.js';
import { InvalidInputError } from '../../src/util/errors.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'nmap-import');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

function rejection(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ReportRejectedError);
    expect(err).toBeInstanceOf(InvalidInputError);
    return (err as Error).message;
  }
  throw new Error('expected a ReportRejectedError');
}

describe('checkReportSafety', () => {
  const sn = fixture('loopback-sn.xml');

  it("accepts nmap's own prolog: declaration, <!DOCTYPE nmaprun>, the stylesheet and the comment", () => {
    for (const name of ['loopback-sn.xml', 'loopback-a.xml', 'lab-sv.xml', 'mixed-ipv6.xml'])
      expect(() => checkReportSafety(fixture(name))).not.toThrow();
    expect(() => checkReportSafety('\uFEFF' + sn)).not.toThrow();
    expect(() => checkReportSafety(sn.replace('<!DOCTYPE nmaprun>', ''))).not.toThrow();
  });

  it('refuses internal subsets, external identifiers, declarations anywhere and a second DOCTYPE', () => {
    const cases: [string, RegExp][] = [
      [sn.replace('<!DOCTYPE nmaprun>', '<!DOCTYPE nmaprun [<!ENTITY x "y">]>'), /internal DTD subset/],
      [sn.replace('<!DOCTYPE nmaprun>', '<!DOCTYPE nmaprun []>'), /internal DTD subset/],
      [sn.replace('<!DOCTYPE nmaprun>', '<!DOCTYPE nmaprun SYSTEM "http://127.0.0.1:9/x.dtd">'), /SYSTEM or PUBLIC/],
      [sn.replace('<!DOCTYPE nmaprun>', '<!DOCTYPE nmaprun PUBLIC "-//x//EN" "x.dtd">'), /SYSTEM or PUBLIC/],
      [sn.replace('<!DOCTYPE nmaprun>', '<!doctype nmaprun system "x.dtd">'), /SYSTEM or PUBLIC/],
      [sn.replace('<!DOCTYPE nmaprun>', '<!DOCTYPE foo>'), /not nmap's/],
      [sn.replace('<verbose', '<!ENTITY x "y"><verbose'), /declares an entity/],
      [sn.replace('<verbose', '<!ELEMENT x ANY><verbose'), /<!ELEMENT>/],
      [sn.replace('<verbose', '<!ATTLIST x y CDATA "z"><verbose'), /<!ATTLIST>/],
      [sn.replace('<verbose', '<!DOCTYPE again><verbose'), /second or misplaced DOCTYPE/],
    ];
    for (const [xml, message] of cases) expect(rejection(() => checkReportSafety(xml))).toMatch(message);
  });
});

describe('checkWellFormed', () => {
  it('accepts every recorded report and refuses one cut short, naming the line', () => {
    const xml = fixture('loopback-sv-1.xml');
    expect(() => checkWellFormed(xml)).not.toThrow();
    expect(rejection(() => checkWellFormed(xml.slice(0, xml.length - 20)))).toMatch(/^body: not well-formed XML at line \d+, column \d+: /);
    expect(rejection(() => checkWellFormed('  '))).toMatch(/is empty/);
  });
});

describe('nmapCommandTargets', () => {
  it('finds the targets among the options and their values', () => {
    expect(nmapCommandTargets('nmap -n -sV -p 22,80 -oX out.xml 192.168.1.0/24')).toEqual({ targets: ['192.168.1.0/24'], exclude: [] });
    expect(nmapCommandTargets('/usr/bin/nmap -T4 -p- --top-ports 100 -oA base --script vuln 10.0.0.1 10.0.0.2')).toEqual({
      targets: ['10.0.0.1', '10.0.0.2'],
      exclude: [],
    });
    expect(nmapCommandTargets('nmap -sn --exclude 10.0.0.5,10.0.0.6 --max-retries 2 10.0.0.0/24')).toEqual({
      targets: ['10.0.0.0/24'],
      exclude: ['10.0.0.5', '10.0.0.6'],
    });
    expect(nmapCommandTargets('nmap -sn --exclude=10.0.0.0/30 -PS22,80 -iL hosts.txt')).toEqual({ targets: [], exclude: ['10.0.0.0/30'] });
    expect(nmapCommandTargets('nmap -oX - host.example.org')).toEqual({ targets: ['host.example.org'], exclude: [] });
    expect(nmapCommandTargets('')).toEqual({ targets: [], exclude: [] });
  });
});

describe('coveringCidr and reportSubnet', () => {
  it('gives the smallest block holding every address', () => {
    expect(coveringCidr(['10.0.0.5'])).toBe('10.0.0.5/32');
    expect(coveringCidr(['127.0.0.21', '127.0.0.22'])).toBe('127.0.0.20/30');
    expect(coveringCidr(['192.168.1.1', '192.168.1.254'])).toBe('192.168.1.0/24');
    expect(coveringCidr(['192.168.1.200', '192.168.2.3'])).toBe('192.168.0.0/22');
    expect(coveringCidr(['10.0.0.1', '192.168.1.1'])).toBe('0.0.0.0/0');
    expect(coveringCidr(['255.255.255.255', '128.0.0.0'])).toBe('128.0.0.0/1');
  });

  it("takes the report's single CIDR or address target when it holds every host, else the covering block", () => {
    expect(reportSubnet('nmap -sn 192.168.1.0/24', ['192.168.1.7'])).toEqual({ cidr: '192.168.1.0/24', from: 'args' });
    expect(reportSubnet('nmap -sn 192.168.1.7/24', [])).toEqual({ cidr: '192.168.1.0/24', from: 'args' });
    expect(reportSubnet('nmap -sV 10.0.0.9', ['10.0.0.9'])).toEqual({ cidr: '10.0.0.9/32', from: 'args' });
    // A range, several targets, a name, a target not holding the hosts: the hosts decide.
    expect(reportSubnet('nmap -sn 127.0.0.1-5', ['127.0.0.1', '127.0.0.5'])).toEqual({ cidr: '127.0.0.0/29', from: 'hosts' });
    expect(reportSubnet('nmap 10.0.0.1 10.0.0.3', ['10.0.0.1', '10.0.0.3'])).toEqual({ cidr: '10.0.0.0/30', from: 'hosts' });
    expect(reportSubnet('nmap router.lan', ['192.168.1.1'])).toEqual({ cidr: '192.168.1.1/32', from: 'hosts' });
    expect(reportSubnet('nmap 10.0.0.0/30', ['10.0.0.9'])).toEqual({ cidr: '10.0.0.9/32', from: 'hosts' });
    expect(reportSubnet(null, [])).toBeNull();
    expect(reportSubnet('nmap -6 ::1', [])).toBeNull();
  });
});

describe('reportProfile and reportPortList', () => {
  it('records discovery only as quick, OS detection, scripts or every port as intensive', () => {
    expect(reportProfile({ args: 'nmap -sn x', scanned: [], osDetection: false })).toBe('quick');
    const scanned = [{ protocol: 'tcp', services: '22,80' }];
    expect(reportProfile({ args: 'nmap -sV x', scanned, osDetection: false })).toBe('normal');
    expect(reportProfile({ args: 'nmap -A x', scanned, osDetection: false })).toBe('intensive');
    expect(reportProfile({ args: 'nmap --script=vuln x', scanned, osDetection: false })).toBe('intensive');
    expect(reportProfile({ args: 'nmap x', scanned, osDetection: true })).toBe('intensive');
    expect(reportProfile({ args: 'nmap x', scanned: [{ protocol: 'tcp', services: '1-65535' }], osDetection: false })).toBe('intensive');
  });

  it('merges the ports of every <scaninfo>, leaving port 0 out', () => {
    expect(reportPortList([])).toEqual({ tcp: [], udp: [] });
    expect(
      reportPortList([
        { protocol: 'tcp', services: '1,3-4,22,80-81' },
        { protocol: 'udp', services: '53,80' },
        { protocol: 'tcp', services: '23' },
      ]),
    ).toEqual({
      tcp: [
        { low: 1, high: 1 },
        { low: 3, high: 4 },
        { low: 22, high: 23 },
        { low: 80, high: 81 },
      ],
      udp: [
        { low: 53, high: 53 },
        { low: 80, high: 80 },
      ],
    });
    expect(reportPortList([{ protocol: 'tcp', services: '0-65535' }])).toEqual({ tcp: [{ low: 1, high: 65535 }], udp: [] });
  });
});

describe('planImport on recorded reports', () => {
  it('-sV of a /30: normal, every host up, the ports of <scaninfo>', () => {
    const plan = planImport(fixture('loopback-sv-1.xml'));
    expect(plan).toMatchObject({ subnet: '127.0.0.20/30', subnetFrom: 'args', profile: 'normal', hostsDown: 0, exclude: [], warnings: [] });
    expect(plan.hosts.map((h) => h.ip)).toEqual(['127.0.0.20', '127.0.0.21', '127.0.0.22', '127.0.0.23']);
    expect(plan.portList).toEqual({
      tcp: [
        { low: 2121, high: 2121 },
        { low: 2222, high: 2222 },
        { low: 3306, high: 3306 },
        { low: 8080, high: 8081 },
      ],
      udp: [],
    });
    expect(plan.report).toEqual({
      args: 'nmap -n -sV -p 2121,2222,3306,8080,8081 -oX loopback-sv-1.xml 127.0.0.20/30',
      startedAt: '2026-11-26T01:29:04.000Z',
      nmapVersion: '7.93',
      elapsedSeconds: 3.4,
    });
  });

  it('the lab: hosts down counted, not devices; MACs kept; -- in the arguments decoded', () => {
    const plan = planImport(fixture('lab-sv.xml'));
    expect(plan).toMatchObject({ subnet: '10.66.0.8/29', profile: 'normal', hostsDown: 5 });
    expect(plan.hosts.map((h) => [h.ip, h.mac, h.vendor])).toEqual([
      ['10.66.0.11', 'B8:27:EB:66:00:01', 'Raspberry Pi Foundation'],
      ['10.66.0.12', '00:1C:42:66:00:02', 'Parallels'],
      ['10.66.0.14', '00:16:3E:66:00:04', 'Xensource'],
    ]);
    expect(plan.report.args).toContain(' --reason ');
  });

  it('-sn is quick; -O and -A intensive with the OS; IPv6 hosts are warnings', () => {
    expect(planImport(fixture('loopback-sn.xml'))).toMatchObject({ profile: 'quick', portList: { tcp: [], udp: [] } });
    const os = planImport(fixture('loopback-os.xml'));
    expect(os).toMatchObject({ subnet: '127.0.0.21/32', profile: 'intensive' });
    expect(os.hosts[0]).toMatchObject({ os_name: 'Linux 5.0 - 5.2', device_type: 'general purpose' });
    const a = planImport(fixture('loopback-a.xml'));
    expect(a.hosts[0].ports.find((p) => p.port === 8080)).toMatchObject({ product: 'Apache httpd', version: '2.4.49' });
    const mixed = planImport(fixture('mixed-ipv6.xml'));
    expect(mixed.hosts).toHaveLength(4);
    expect(mixed.warnings).toEqual(['Skipped IPv6 host ::1 (up): Netwarden records IPv4 devices only']);
    expect(rejection(() => planImport(fixture('ipv6-sv.xml')))).toMatch(/no IPv4 host \(1 IPv6 host\)/);
  });

  it('names at most MAX_NAMED_SKIPPED_HOSTS skipped hosts and counts the rest', () => {
    const host = (i: number) => `<host><status state="up"/><address addr="fd00::${i.toString(16)}" addrtype="ipv6"/></host>\n`;
    const extra = Array.from({ length: MAX_NAMED_SKIPPED_HOSTS + 5 }, (_, i) => host(i + 1)).join('');
    const plan = planImport(fixture('loopback-sn.xml').replace('<runstats>', `${extra}<runstats>`));
    expect(plan.warnings).toHaveLength(MAX_NAMED_SKIPPED_HOSTS + 1);
    expect(plan.warnings.at(-1)).toBe('Skipped 5 more hosts without an IPv4 address');
  });

  it('takes the ports listed as the ports examined when the report has no <scaninfo>', () => {
    const plan = planImport(fixture('loopback-sv-1.xml').replace(/<scaninfo[^>]*\/>\n/, ''));
    expect(plan.profile).toBe('normal');
    expect(plan.portList).toEqual({
      tcp: [
        { low: 2121, high: 2121 },
        { low: 2222, high: 2222 },
        { low: 3306, high: 3306 },
        { low: 8080, high: 8081 },
      ],
      udp: [],
    });
    expect(plan.hosts.find((h) => h.ip === '127.0.0.21')!.ports).toHaveLength(5);
  });

  it('refuses what is not an nmap report', () => {
    expect(rejection(() => planImport('<html/>'))).toMatch(/not an nmap XML report/);
    expect(rejection(() => planImport('<nmaprun scanner="nmap" args="nmap -iL list"/>'))).toMatch(/names no single IPv4 target/);
    // The single target alone is enough: a -sn of a network where nothing answered.
    expect(planImport('<nmaprun scanner="nmap" args="nmap -sn 10.66.1.0/24"/>')).toMatchObject({ subnet: '10.66.1.0/24', hosts: [] });
  });
});

describe("scripts' CPEs", () => {
  it('adds the CPEs a script keys its results by (vulners) to the port, once', () => {
    const vulners =
      '<script id="vulners" output="cpe:/a:openbsd:openssh:7.4: CVE-2023-38408 9.8"><table key="cpe:/a:openbsd:openssh:7.4"><table>' +
      '<elem key="id">CVE-2023-38408</elem><elem key="cvss">9.8</elem></table></table></script>' +
      '<script id="other" output="x"><table key="cpe:/a:example:thing:1.0"/><table key="not-a-cpe"/></script>';
    const xml = fixture('loopback-sv-1.xml').replace(
      '<cpe>cpe:/a:openbsd:openssh:7.4</cpe></service></port>',
      `<cpe>cpe:/a:openbsd:openssh:7.4</cpe></service>${vulners}</port>`,
    );
    const ssh = planImport(xml)
      .hosts.find((h) => h.ip === '127.0.0.21')!
      .ports.find((p) => p.port === 2222)!;
    expect(ssh.cpe).toEqual(['cpe:/a:openbsd:openssh:7.4', 'cpe:/a:example:thing:1.0']);
  });
});
