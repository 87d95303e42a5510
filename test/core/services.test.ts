import { describe, expect, it } from 'vitest';
import { describePort, normalizePort, normalizeProduct } from '../../src/core/services.js';
import { parseNmapXml } from '../../src/core/nmap-xml.js';
import type { ScannedPort } from '../../src/core/model.js';

const port = (fields: Partial<ScannedPort>): ScannedPort => ({
  port: 8080,
  protocol: 'tcp',
  state: 'open',
  service: null,
  product: null,
  version: null,
  extra_info: null,
  cpe: [],
  ...fields,
});

describe('describePort', () => {
  it.each([
    [{ port: 8081, service: 'blackice-icecap', service_guessed: true }, 'unidentified service (nmap guesses blackice-icecap)'],
    [{ service: 'http-proxy', product: 'Apache httpd', version: '2.4.49' }, 'web server (Apache httpd 2.4.49)'],
    [{ service: 'http-proxy', product: 'Apache/2.4.49 (Unix)' }, 'web server (Apache httpd 2.4.49)'],
    [{ service: 'http-proxy', product: 'Squid http proxy', version: '4.13' }, 'web proxy (Squid http proxy 4.13)'],
    [{ port: 443, service: 'https', product: 'nginx', version: '1.18.0' }, 'web server over TLS (nginx 1.18.0)'],
    [{ port: 443, service: 'https' }, 'web server over TLS'],
    [{ port: 22, service: 'ssh', product: 'OpenSSH', version: '8.9p1' }, 'SSH remote login (OpenSSH 8.9p1)'],
    [{ port: 3389, service: 'ms-wbt-server' }, 'Windows Remote Desktop'],
    [{ port: 445, service: 'microsoft-ds', product: 'Samba smbd', version: '4.15.13' }, 'SMB file sharing (Samba smbd 4.15.13)'],
    [{ port: 3389, service: 'ms-wbt-server', service_guessed: true }, 'unidentified service (nmap guesses ms-wbt-server)'],
    [{ port: 41234, service: null }, 'unidentified service'],
    [{ port: 41234, service: 'unknown', product: 'Foo/1.2' }, 'unidentified service (Foo 1.2)'],
    [{ port: 9999, service: 'abyss', product: 'Abyss httpd', version: '2.6' }, 'web server (Abyss httpd 2.6)'],
    [{ port: 12345, service: 'netbus', product: 'Something', version: '1' }, 'Something 1'],
    [{ port: 12345, service: 'netbus' }, null],
  ])('%j → %s', (fields, expected) => {
    expect(describePort(port(fields as Partial<ScannedPort>))).toBe(expected);
  });
});

describe('normalizeProduct', () => {
  it.each([
    ['Apache/2.4.49 (Unix)', 'Apache httpd', '2.4.49', 'Unix', 'cpe:/a:apache:http_server:2.4.49'],
    ['nginx/1.18.0', 'nginx', '1.18.0', null, 'cpe:/a:igor_sysoev:nginx:1.18.0'],
    ['Microsoft-IIS/10.0', 'Microsoft IIS httpd', '10.0', null, 'cpe:/a:microsoft:internet_information_services:10.0'],
    ['lighttpd/1.4.59', 'lighttpd', '1.4.59', null, 'cpe:/a:lighttpd:lighttpd:1.4.59'],
  ])('reads %s into product and version', (raw, product, version, extra, cpe) => {
    const out = normalizeProduct(port({ service: 'http', product: raw }));
    expect(out).toMatchObject({ product, version, extra_info: extra });
    expect(out.cpe).toContain(cpe);
  });

  it('keeps what nmap already parsed, and products that are not a raw header', () => {
    const parsed = port({ service: 'http', product: 'Apache httpd', version: '2.4.49', cpe: ['cpe:/a:apache:http_server:2.4.49'] });
    expect(normalizeProduct(parsed)).toBe(parsed);
    const words = port({ service: 'ssh', product: 'OpenSSH' });
    expect(normalizeProduct(words)).toBe(words);
    const noVersion = port({ service: 'http', product: 'Apache' });
    expect(normalizeProduct(noVersion)).toBe(noVersion);
  });

  it('keeps extra info and CPEs already there', () => {
    const out = normalizeProduct(port({ product: 'Apache/2.4.49 (Unix)', extra_info: 'PHP', cpe: ['cpe:/o:linux:linux_kernel'] }));
    expect(out.extra_info).toBe('Unix; PHP');
    expect(out.cpe).toEqual(['cpe:/o:linux:linux_kernel', 'cpe:/a:apache:http_server:2.4.49']);
  });
});

describe('normalizePort', () => {
  it('makes a web server nmap named http-proxy after port 8080 a plain web server, and leaves proxies alone', () => {
    expect(normalizePort(port({ service: 'http-proxy', product: 'Apache/2.4.49 (Unix)' }))).toMatchObject({
      service: 'http',
      product: 'Apache httpd',
      version: '2.4.49',
    });
    expect(normalizePort(port({ service: 'http-proxy', product: 'nginx', version: '1.18.0' })).service).toBe('http');
    expect(normalizePort(port({ service: 'http-proxy', product: 'Squid http proxy', version: '4.13' })).service).toBe('http-proxy');
    expect(normalizePort(port({ service: 'http-proxy' })).service).toBe('http-proxy');
    expect(normalizePort(port({ service: 'ssh', product: 'OpenSSH' })).service).toBe('ssh');
  });
});

describe('nmap XML: guessed services and the Server header script', () => {
  const xml = `<?xml version="1.0"?><nmaprun><host><status state="up"/><address addr="10.0.0.5" addrtype="ipv4"/><ports>
<port protocol="tcp" portid="8081"><state state="open"/><service name="blackice-icecap" method="table" conf="3"/></port>
<port protocol="tcp" portid="8080"><state state="open"/><service name="http" method="probed" conf="10"/><script id="http-server-header" output="Apache/2.4.49 (Unix)"><elem>Apache/2.4.49 (Unix)</elem></script></port>
<port protocol="tcp" portid="22"><state state="open"/><service name="ssh" product="OpenSSH" version="8.9p1" method="probed" conf="10"/></port>
</ports></host><runstats><finished exit="success"/></runstats></nmaprun>`;

  it('keeps method="table" as service_guessed and the header as the product', () => {
    const [host] = parseNmapXml(xml).hosts;
    const [guessed, web, ssh] = host.ports;
    expect(guessed).toMatchObject({ port: 8081, service: 'blackice-icecap', service_guessed: true });
    expect(web).toMatchObject({ port: 8080, service: 'http', product: 'Apache/2.4.49 (Unix)', version: null });
    expect(web.service_guessed).toBeUndefined();
    expect(ssh.service_guessed).toBeUndefined();
    expect(normalizeProduct(web)).toMatchObject({ product: 'Apache httpd', version: '2.4.49' });
    expect(describePort(guessed)).toBe('unidentified service (nmap guesses blackice-icecap)');
  });
});
