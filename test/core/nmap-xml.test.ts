import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NmapXmlReader, parseNmapReport, parseNmapXml, readNmapStream, splitHostElements } from '../../src/core/nmap-xml.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/nmap/${name}`, import.meta.url), 'utf8');

describe('parseNmapXml on recorded runs', () => {
  it('maps a SYN + version scan of a loopback host', () => {
    const run = parseNmapXml(fixture('loopback-ports.xml'));
    expect(run.exit).toBe('success');
    expect(run.hosts).toHaveLength(1);
    const [host] = run.hosts;
    expect(host.ip).toBe('127.0.0.5');
    expect(host.mac).toBeNull();
    const open = host.ports.filter((p) => p.state === 'open');
    expect(open.map((p) => p.port)).toEqual([18521, 18522, 18555]);
    expect(open.find((p) => p.port === 18522)).toEqual({
      port: 18522,
      protocol: 'tcp',
      state: 'open',
      service: 'ssh',
      product: 'OpenSSH',
      version: '8.9p1 Ubuntu 3ubuntu0.10',
      extra_info: 'Ubuntu Linux; protocol 2.0',
      cpe: ['cpe:/a:openbsd:openssh:8.9p1', 'cpe:/o:linux:linux_kernel'],
    });
    expect(open.find((p) => p.port === 18521)).toMatchObject({
      service: 'ftp',
      product: 'vsftpd',
      version: '2.3.4',
      cpe: ['cpe:/a:vsftpd:vsftpd:2.3.4'],
    });
  });

  it('lists every live host of a discovery run', () => {
    const run = parseNmapXml(fixture('loopback-discovery.xml'));
    expect(run.hosts.map((h) => h.ip)).toEqual(['127.0.0.4', '127.0.0.5', '127.0.0.6', '127.0.0.7']);
    expect(run.hosts.every((h) => h.ports.length === 0)).toBe(true);
  });

  it('reads MAC, vendor, hostname, OS and TLS-wrapped services', () => {
    const xml = `<?xml version="1.0"?><nmaprun scanner="nmap">
      <host><status state="up" reason="arp-response"/>
        <address addr="10.66.0.11" addrtype="ipv4"/><address addr="02:42:0a:42:00:0b" addrtype="mac" vendor="Acme"/>
        <hostnames><hostname name="nas.lan" type="PTR"/></hostnames>
        <ports><port protocol="tcp" portid="443"><state state="open"/><service name="http" tunnel="ssl" product="nginx" version="1.18.0"><cpe>cpe:/a:igor_sysoev:nginx:1.18.0</cpe></service></port>
        <port protocol="tcp" portid="8081"><state state="filtered"/><service name="blackice-icecap" method="table"/></port></ports>
        <os><osmatch name="Linux 4.15 - 5.8" accuracy="96"><osclass type="general purpose"/></osmatch><osmatch name="Linux 2.6" accuracy="90"/></os>
      </host>
      <host><status state="down"/><address addr="10.66.0.99" addrtype="ipv4"/></host>
      <runstats><finished exit="success" elapsed="2.5"/></runstats></nmaprun>`;
    const run = parseNmapXml(xml);
    expect(run.down).toEqual(['10.66.0.99']);
    expect(run.elapsedSeconds).toBe(2.5);
    expect(run.hosts[0]).toMatchObject({
      ip: '10.66.0.11',
      mac: '02:42:0A:42:00:0B',
      vendor: 'Acme',
      hostname: 'nas.lan',
      os_name: 'Linux 4.15 - 5.8',
      device_type: 'general purpose',
    });
    expect(run.hosts[0].ports.map((p) => [p.port, p.state, p.service])).toEqual([
      [443, 'open', 'https'],
      [8081, 'filtered', 'blackice-icecap'],
    ]);
  });

  it('rejects a document that is not an nmap run', () => {
    expect(() => parseNmapXml('<html></html>')).toThrow(/nmaprun/);
  });
});

describe('readNmapStream', () => {
  it('emits progress and finished hosts from chunks split anywhere, each once', () => {
    const xml = fixture('loopback-discovery.xml') + '<taskprogress task="SYN Stealth Scan" time="1" percent="42.50" remaining="12" etc="2"/>';
    for (const size of [1, 7, 64, 100_000]) {
      let rest = '';
      const events = [];
      for (let i = 0; i < xml.length; i += size) {
        const read = readNmapStream(rest + xml.slice(i, i + size));
        rest = read.rest;
        events.push(...read.events);
      }
      expect(events.filter((e) => e.kind === 'host').map((e) => (e.kind === 'host' ? e.ip : ''))).toEqual([
        '127.0.0.4',
        '127.0.0.5',
        '127.0.0.6',
        '127.0.0.7',
      ]);
      expect(events.filter((e) => e.kind === 'task')).toEqual([{ kind: 'task', task: 'SYN Stealth Scan', percent: 42.5, remaining: 12 }]);
    }
  });
});

describe('NmapXmlReader', () => {
  it('gives what parseNmapXml gives for the whole document, from chunks split anywhere, each host as soon as it is complete', () => {
    for (const name of ['loopback-ports.xml', 'loopback-discovery.xml']) {
      const xml = fixture(name);
      const whole = parseNmapXml(xml);
      for (const size of [1, 13, 256, 100_000]) {
        const reader = new NmapXmlReader();
        const hosts = [];
        for (let i = 0; i < xml.length; i += size) {
          for (const event of reader.push(xml.slice(i, i + size))) {
            if (event.kind === 'host' && event.up) {
              // Complete when reported: everything up to the end of its element has been read.
              expect(xml.slice(0, i + size)).toContain(`<address addr="${event.ip}"`);
              hosts.push(event.host);
            }
          }
        }
        expect(hosts).toEqual(whole.hosts);
        expect(reader.finish()).toEqual(whole);
      }
    }
  });

  it('reports hosts that are down, and the error nmap gives', () => {
    const reader = new NmapXmlReader();
    reader.push('<?xml version="1.0"?><nmaprun scanner="nmap"><host><status state="down"/><address addr="10.66.0.99" addrtype="ipv4"/></host>');
    reader.push('<runstats><finished time="1" elapsed="0.5" exit="error" errormsg="Failed to open device"/></runstats></nmaprun>');
    expect(reader.finish()).toEqual({ hosts: [], down: ['10.66.0.99'], exit: 'error', error: 'Failed to open device', elapsedSeconds: 0.5 });
  });

  it('refuses output that is not an nmap run', () => {
    const reader = new NmapXmlReader();
    reader.push('<html></html>');
    expect(() => reader.finish()).toThrow(/nmaprun/);
  });
});

describe('parseNmapReport of a large report, host by host', () => {
  // A report above the size at which it is cut into hosts, from a recorded one's hosts repeated at other addresses.
  const recorded = readFileSync(new URL('../fixtures/nmap-import/lab-sv.xml', import.meta.url), 'utf8');
  const hostElements = recorded.match(/<host[\s>][\s\S]*?<\/host>/g)!;
  const hosts = Array.from({ length: 1500 }, (_, i) =>
    hostElements[i % hostElements.length].replace(/addr="10\.66\.0\.\d+" addrtype="ipv4"/, `addr="10.77.${i >> 8}.${i & 255}" addrtype="ipv4"`),
  );
  const head = recorded.slice(0, recorded.indexOf('<host'));
  const tail = recorded.slice(recorded.lastIndexOf('</host>') + '</host>'.length);
  const large = head + hosts.join('\n') + tail;

  it('cuts the report into its hosts and gives what the whole parse gives', () => {
    const split = splitHostElements(large);
    expect(split?.hosts).toHaveLength(1500);
    // A processing instruction among the hosts makes it parse the whole document.
    const at = large.indexOf('</host>') + '</host>'.length;
    const whole = large.slice(0, at) + '<?note between hosts?>' + large.slice(at);
    expect(splitHostElements(whole)).toBeNull();
    const report = parseNmapReport(large);
    expect(report.hosts.length).toBeGreaterThan(0);
    expect(report).toEqual(parseNmapReport(whole));
  });

  it('parses the whole document when a host is hidden in a comment or nested in another element', () => {
    const at = large.indexOf('</host>') + '</host>'.length;
    const commented = large.slice(0, at) + '<!-- <host><status state="up"/><address addr="10.9.9.9" addrtype="ipv4"/></host> -->' + large.slice(at);
    expect(splitHostElements(commented)).toBeNull();
    expect(parseNmapReport(commented)).toEqual(parseNmapReport(large));
    const nested =
      large.slice(0, at) + '<extra><host><status state="up"/><address addr="10.9.9.9" addrtype="ipv4"/></host></extra>' + large.slice(at);
    const split = splitHostElements(nested);
    expect(split?.hosts).toHaveLength(1501);
    // The host inside <extra> is not one of the run's, as the whole parse reads it.
    expect(parseNmapReport(nested)).toEqual(parseNmapReport(large));
    const inPrologue = `<!-- <host> -->` + large;
    expect(splitHostElements(inPrologue)).toBeNull();
  });
});
