/**
 * POST /api/scans/import (CONTRACT §11, §13) against the real server, with real nmap reports
 * recorded on loopback and in the namespace lab (test/fixtures/nmap-import/README.md).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { GatedEngine } from '../helpers/gated-engine.js';
import { FixedEngineSelector } from '../fuzz/inert-services.js';
import { startReceiver, type Receiver } from '../helpers/receivers.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'nmap-import');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');

const SCAN_KEYS = [
  'scan_id',
  'status',
  'profile',
  'subnet',
  'scan_type',
  'target',
  'started_at',
  'completed_at',
  'duration_seconds',
  'devices_found',
  'error',
  'triggered_by',
  'progress',
  'runner',
  'agent_id',
  'warnings',
  'ports_examined',
  'hosts_examined',
];

describe.each(testDatabases())('nmap report import ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let cookie: string;

  beforeAll(async () => {
    ({ server, key, cookie } = await startServerWithAdmin(database));
  });
  afterAll(() => server?.close());

  const importXml = (
    xml: string,
    headers: Record<string, string> = { 'Content-Type': 'application/xml' },
    auth: { key?: string; cookie?: string } = { key },
  ) => server.request('/api/scans/import', { method: 'POST', body: xml, headers, ...auth });

  async function imported(xml: string, contentType = 'application/xml'): Promise<any> {
    const res = await importXml(xml, { 'Content-Type': contentType });
    expect(res.status, await res.clone().text()).toBe(201);
    return readJson(res);
  }

  const get = async (path: string) => {
    const res = await server.request(path, { key });
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    return readJson(res);
  };

  const scanCount = async () => (await server.request('/api/scans?limit=1', { key })).headers.get('x-total-count');

  it('imports a -sV report as a completed scan: devices, ports, services, CPEs, risk and CVEs', async () => {
    const scan = await imported(fixture('loopback-sv-1.xml'));
    expect(Object.keys(scan).sort()).toEqual([...SCAN_KEYS].sort());
    expect(scan).toMatchObject({
      status: 'completed',
      triggered_by: 'import',
      runner: 'import',
      subnet: '127.0.0.20/30',
      profile: 'normal',
      scan_type: 'network',
      devices_found: 4,
      error: null,
      warnings: [],
      agent_id: null,
    });
    expect(scan.completed_at).toMatch(/Z$/);
    expect(await get(`/api/scans/${scan.scan_id}`)).toEqual(scan);

    const devices = await get(`/api/devices?scan_id=${scan.scan_id}`);
    expect(devices.map((d: any) => d.ip_address)).toEqual(['127.0.0.20', '127.0.0.21', '127.0.0.22', '127.0.0.23']);
    const byIp = new Map<string, any>(devices.map((d: any) => [d.ip_address, d]));
    expect(byIp.get('127.0.0.21').open_ports).toEqual([2222, 8080]);
    expect(byIp.get('127.0.0.22').open_ports).toEqual([2121, 8081]);
    expect(byIp.get('127.0.0.20').open_ports).toEqual([]);
    // Apache 2.4.49 (path traversal) and vsftpd 2.3.4 (backdoor) carry known CVEs: the risk is as for a scan.
    for (const ip of ['127.0.0.21', '127.0.0.22']) expect(['high', 'critical']).toContain(byIp.get(ip).risk_level);

    const detail = await get(`/api/devices/${byIp.get('127.0.0.21').id}`);
    const apache = detail.ports.find((p: any) => p.port === 8080);
    expect(apache).toMatchObject({ protocol: 'tcp', state: 'open', service: 'http', product: 'Apache httpd', version: '2.4.49' });
    expect(apache.cpe).toEqual(['cpe:/a:apache:http_server:2.4.49']);
    const ssh = detail.ports.find((p: any) => p.port === 2222);
    expect(ssh).toMatchObject({ service: 'ssh', product: 'OpenSSH', version: '7.4' });
    expect(detail.cves.map((c: any) => c.id)).toContain('CVE-2021-41773');

    // The first scan of the subnet has nothing to compare with (as for a scan): no changes.
    expect(await get(`/api/changes?scan_id=${scan.scan_id}`)).toEqual([]);

    // Audited with who imported it.
    const audit = await get('/api/audit-logs?action=scan_imported');
    const entry = audit.find((a: any) => a.resource_id === String(scan.scan_id));
    expect(entry).toBeDefined();
    expect(entry.details).toMatchObject({ subnet: '127.0.0.20/30', devices_found: 4, nmap_version: '7.93' });
  });

  it('compares a later report of the same subnet with the previous one: the changes between them', async () => {
    const scan = await imported(fixture('loopback-sv-2.xml'), 'text/xml');
    expect(scan).toMatchObject({ status: 'completed', subnet: '127.0.0.20/30', devices_found: 4 });
    const changes = await get(`/api/changes?scan_id=${scan.scan_id}`);
    const summary = changes.map((c: any) => `${c.change_type} ${c.device_ip}:${c.port}`).sort();
    expect(summary).toEqual(['port_closed 127.0.0.22:8081', 'port_opened 127.0.0.21:8081']);
    const devices = await get(`/api/devices?scan_id=${scan.scan_id}`);
    expect(devices.find((d: any) => d.ip_address === '127.0.0.21').open_ports).toEqual([2222, 8080, 8081]);
    expect(devices.find((d: any) => d.ip_address === '127.0.0.22').open_ports).toEqual([2121]);
  });

  it('imports a lab report: MACs and vendors; hosts down are not devices', async () => {
    const scan = await imported(fixture('lab-sv.xml'));
    expect(scan).toMatchObject({ status: 'completed', subnet: '10.66.0.8/29', devices_found: 3, warnings: [] });
    const devices = await get(`/api/devices?scan_id=${scan.scan_id}`);
    expect(devices.map((d: any) => [d.ip_address, d.mac_address, d.vendor])).toEqual([
      ['10.66.0.11', 'B8:27:EB:66:00:01', 'Raspberry Pi Foundation'],
      ['10.66.0.12', '00:1C:42:66:00:02', 'Parallels'],
      ['10.66.0.14', '00:16:3E:66:00:04', 'Xensource'],
    ]);
    expect(devices.find((d: any) => d.ip_address === '10.66.0.14').open_ports).toEqual([8080]);
    const all = await get('/api/devices?limit=1000');
    expect(all.some((d: any) => d.ip_address === '10.66.0.13')).toBe(false);
  });

  it('imports an -A report of one address: subnet /32, intensive, OS and device type', async () => {
    const scan = await imported(fixture('loopback-a.xml'));
    expect(scan).toMatchObject({ status: 'completed', subnet: '127.0.0.21/32', profile: 'intensive', devices_found: 1 });
    const [device] = await get(`/api/devices?scan_id=${scan.scan_id}`);
    expect(device.os_name).toBe('Linux 5.0 - 5.2');
    const detail = await get(`/api/devices/${device.id}`);
    // nmap's class `general purpose` is no type of CONTRACT §15's list: recognition (core/recognition.ts) finds none here.
    expect(detail.device_type).toBe('unknown');
    expect(detail.type_confidence).toBe(0);
  });

  it('refuses a truncated report with 400 and records nothing', async () => {
    const before = await scanCount();
    const xml = fixture('loopback-sv-1.xml');
    for (const cut of [xml.slice(0, 2000), xml.slice(0, xml.indexOf('<runstats>')), xml.slice(0, 40)]) {
      const res = await importXml(cut);
      expect(res.status).toBe(400);
      expect((await readJson(res)).detail).toMatch(/^body: not well-formed XML at line \d+/);
    }
    const empty = await importXml('');
    expect(empty.status).toBe(400);
    expect(await scanCount()).toBe(before);
  });

  describe('documents with a DTD', () => {
    let receiver: Receiver;
    beforeAll(async () => {
      receiver = await startReceiver();
    });
    afterAll(() => receiver?.close());

    const report = fixture('loopback-sn.xml');
    const withDoctype = (doctype: string, entityUse = '') =>
      report.replace('<!DOCTYPE nmaprun>', doctype).replace('<verbose level="0"/>', `<verbose level="0"/>${entityUse}`);

    it('refuses internal subsets, external identifiers and entity declarations with 400, fetching nothing', async () => {
      const before = await scanCount();
      const cases: [string, RegExp][] = [
        [withDoctype(`<!DOCTYPE nmaprun [<!ENTITY x SYSTEM "${receiver.url}/dtd-entity">]>`, '<x>&x;</x>'), /internal DTD subset/],
        [withDoctype('<!DOCTYPE nmaprun [<!ENTITY x SYSTEM "file:///etc/passwd">]>', '<x>&x;</x>'), /internal DTD subset/],
        [withDoctype('<!DOCTYPE nmaprun [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>', '<x>&b;</x>'), /internal DTD subset/],
        [withDoctype(`<!DOCTYPE nmaprun SYSTEM "${receiver.url}/external.dtd">`), /external DTD/],
        [withDoctype(`<!DOCTYPE nmaprun PUBLIC "-//NMAP//DTD//EN" "${receiver.url}/public.dtd">`), /external DTD/],
        [report.replace('<verbose level="0"/>', '<!ENTITY y "z"><verbose level="0"/>'), /declares an entity/],
        [withDoctype('<!DOCTYPE html>'), /not nmap's/],
      ];
      for (const [xml, detail] of cases) {
        const res = await importXml(xml);
        const body = await readJson(res);
        expect(res.status, xml.slice(0, 200)).toBe(400);
        expect(body.detail).toMatch(detail);
      }
      expect(receiver.requests).toEqual([]);
      expect(await scanCount()).toBe(before);
    });

    it("accepts nmap's own <!DOCTYPE nmaprun> (every fixture has it)", () => {
      expect(report).toContain('<!DOCTYPE nmaprun>');
    });
  });

  it('refuses values out of bounds with 400 naming the host and element, records nothing, and never shows SQL', async () => {
    const before = await scanCount();
    const report = fixture('loopback-sv-1.xml');
    // Host 2 (127.0.0.21) has 2222 open with OpenSSH 7.4; host 3 (127.0.0.22) has 2121 open.
    const openPort = (value: string) => report.replace('portid="2222"><state state="open"', `portid="${value}"><state state="open"`);
    const withName = (name: string) => report.replace('<hostnames>\n</hostnames>', `<hostnames><hostname name="${name}" type="PTR"/></hostnames>`);
    const cases: [string, string, RegExp][] = [
      [
        'octal',
        report.replace('addr="127.0.0.21"', 'addr="127.0.0.021"'),
        /^host 2 address "127\.0\.0\.021": must be an IPv4 address in dotted-quad form/,
      ],
      ['leading zero', report.replace('addr="127.0.0.22"', 'addr="010.0.0.1"'), /^host 3 address "010\.0\.0\.1": /],
      ['hex', report.replace('addr="127.0.0.21"', 'addr="0x7f.0.0.21"'), /^host 2 address "0x7f\.0\.0\.21": /],
      ['not an address', report.replace('addr="127.0.0.21"', 'addr="127.0.0.999"'), /^host 2 address "127\.0\.0\.999": /],
      ['port too large', openPort('70000'), /^host 2 port "70000": must be a port number from 1 to 65535$/],
      ['port beyond integers', openPort('99999999999'), /^host 2 port "99999999999": /],
      ['port 0', openPort('0'), /^host 2 port "0": /],
      ['port not a number', openPort('abc'), /^host 2 port "abc": /],
      ['port fraction', openPort('21.5'), /^host 2 port "21\.5": /],
      ['hostname', withName('a'.repeat(254)), /^host 1 hostname: is 254 characters long; at most 253 are accepted$/],
      [
        'product',
        report.replace('product="OpenSSH"', `product="${'p'.repeat(257)}"`),
        /^host 2 port 2222 product: is 257 characters long; at most 256/,
      ],
      ['version', report.replace('version="7.4"', `version="${'v'.repeat(257)}"`), /^host 2 port 2222 version: /],
      ['extrainfo', report.replace('extrainfo="protocol 2.0"', `extrainfo="${'e'.repeat(257)}"`), /^host 2 port 2222 extrainfo: /],
      [
        'script output',
        report.replace(
          '<cpe>cpe:/a:openbsd:openssh:7.4</cpe></service>',
          `<cpe>cpe:/a:openbsd:openssh:7.4</cpe></service><script id="vulners" output="${'x'.repeat(70_000)}"/>`,
        ),
        /^host 2 port 2222 script "vulners" output: is 70000 characters long; at most 65536/,
      ],
    ];
    for (const [name, xml, detail] of cases) {
      expect(xml, name).not.toBe(report);
      const res = await importXml(xml);
      const body = await readJson(res);
      expect(res.status, `${name}: ${JSON.stringify(body)}`).toBe(400);
      expect(body.detail, name).toMatch(detail);
      expect(body.detail, name).not.toMatch(/sql|constraint|integer|insert|select/i);
    }
    expect(await scanCount()).toBe(before);
    expect((await get('/api/scans?limit=100')).filter((x: any) => x.status !== 'completed')).toEqual([]);
  });

  it('removes line breaks and control characters from hostnames: no forged line reaches a device or a change', async () => {
    const report = fixture('loopback-sn.xml').replace(
      '<hostnames>\n</hostnames>',
      '<hostnames><hostname name="printer&#10;New device: 6.6.6.6&#13;&#x2028;x&#7;" type="PTR"/></hostnames>',
    );
    const scan = await imported(report);
    const devices = await get(`/api/devices?scan_id=${scan.scan_id}`);
    const named = devices.filter((d: any) => d.hostname !== null);
    expect(
      named.map((d: any) => d.hostname),
      JSON.stringify(named.map((d: any) => d.hostname)),
    ).toEqual(['printer New device: 6.6.6.6 x']);
    const changes = await get('/api/changes?limit=1000');
    expect(JSON.stringify(changes)).not.toMatch(/\\n|\\r|\\u2028|\\u0007/);
  });

  it('refuses well-formed XML that is not an nmap report, and a report with nothing to import', async () => {
    for (const xml of ['<?xml version="1.0"?><html><body>hi</body></html>', '<scan><nmaprun/></scan>', '<nmaprun scanner="nmap"/>']) {
      const res = await importXml(xml);
      expect(res.status, xml).toBe(400);
      expect((await readJson(res)).detail).toMatch(/^body: /);
    }
  });

  it('refuses a report holding a NUL character with 400 and records nothing, as any body', async () => {
    const before = await scanCount();
    const res = await importXml(fixture('loopback-sv-1.xml').replace('<runstats>', '<!-- \u0000 --><runstats>'));
    expect(res.status).toBe(400);
    expect(await readJson(res)).toMatchObject({ code: 'NW_VALIDATION', detail: 'body: must not contain the NUL character' });
    expect(await scanCount()).toBe(before);
  });

  it('reads a report with a byte order mark as the same report', async () => {
    const scan = await imported(`\ufeff${fixture('loopback-a.xml')}`);
    expect(scan.status).toBe('completed');
  });

  it('refuses a report beyond 50 MiB with 413 naming the limit', async () => {
    const base = fixture('loopback-sn.xml');
    const padding = `<!-- ${'x'.repeat(51 * 1024 * 1024)} -->`;
    const res = await importXml(base.replace('<verbose', `${padding}<verbose`));
    expect(res.status).toBe(413);
    expect((await readJson(res)).detail).toBe('body: request body is larger than the 50 MiB limit');
  });

  it('refuses other content types with 415 and needs authentication', async () => {
    const xml = fixture('loopback-sn.xml');
    for (const type of ['application/json', 'text/plain', 'multipart/form-data; boundary=x']) {
      const res = await importXml(xml, { 'Content-Type': type });
      expect(res.status, type).toBe(415);
      expect((await readJson(res)).detail).toMatch(/application\/xml/);
    }
    const anonymous = await importXml(xml, { 'Content-Type': 'application/xml' }, {});
    expect(anonymous.status).toBe(401);
    expect(await readJson(anonymous)).toEqual({ detail: 'Not authenticated' });
  });

  it('skips IPv6 hosts, naming each in the warnings; a report of IPv6 hosts only is a 400', async () => {
    // With the session this time (the web UI's way).
    const res = await importXml(fixture('mixed-ipv6.xml'), { 'Content-Type': 'application/xml', Origin: server.baseUrl }, { cookie });
    expect(res.status, await res.clone().text()).toBe(201);
    const scan = await readJson(res);
    expect(scan).toMatchObject({ status: 'completed', subnet: '127.0.0.20/30', profile: 'quick', devices_found: 4 });
    expect(scan.warnings).toEqual(['Skipped IPv6 host ::1 (up): Netwarden records IPv4 devices only']);
    const only = await importXml(fixture('ipv6-sv.xml'));
    expect(only.status).toBe(400);
    expect((await readJson(only)).detail).toMatch(/no IPv4 host \(1 IPv6 host\)/);
  });

  it('describes the endpoint in the OpenAPI document', async () => {
    const doc = await (await fetch(`${server.baseUrl}/openapi.json`)).json();
    const op = doc.paths['/api/scans/import'].post;
    expect(Object.keys(op.requestBody.content).sort()).toEqual(['application/xml', 'text/xml']);
    expect(Object.keys(op.responses).sort()).toEqual(['201', '400', '401', '403', '409', '413', '415']);
    expect(op.description).toMatch(/DOCTYPE nmaprun/);
  });
});

describe.each(testDatabases())('nmap report import beside running scans ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  const engine = new GatedEngine();

  beforeAll(async () => {
    ({ server, key } = await startServerWithAdmin(database, {
      engines: new FixedEngineSelector(engine),
      scanAllow: ['127.0.0.0/8'],
      settings: { scanning: { max_parallel_scans: 1 } },
    }));
  });
  afterAll(() => server?.close());

  const importXml = (xml: string) =>
    server.request('/api/scans/import', { method: 'POST', body: xml, headers: { 'Content-Type': 'application/xml' }, key });

  it('answers 409 naming a running scan of an overlapping target, and imports once it has ended', async () => {
    engine.hold('127.0.0.0/24');
    const trigger = await server.request('/api/scan/trigger?subnet=127.0.0.0/24&profile=quick', { method: 'POST', key });
    expect(trigger.status).toBe(200);
    const { scan_id: running } = await readJson(trigger);
    const busy = await importXml(fixture('loopback-sv-1.xml'));
    expect(busy.status).toBe(409);
    expect(await readJson(busy)).toEqual({ detail: 'A scan is already running', code: 'NW_SCAN_BUSY', scan_id: running });
    // Another target imports meanwhile, outside the allowed scan targets too: an import scans nothing.
    const lab = await importXml(fixture('lab-sv.xml'));
    expect(lab.status, await lab.clone().text()).toBe(201);
    engine.release('127.0.0.0/24');
    await server.app.services.scans.waitFor(running);
    const later = await importXml(fixture('loopback-sv-1.xml'));
    expect(later.status, await later.clone().text()).toBe(201);
  });

  it('refuses a report whose subnet exceeds scanning.max_hosts', async () => {
    const wide = fixture('loopback-sn.xml')
      .replace(/127\.0\.0\.20\/30/g, '10.0.0.0/8')
      .replace(/127\.0\.0\./g, '10.0.0.');
    const res = await importXml(wide);
    expect(res.status).toBe(400);
    expect((await readJson(res)).detail).toMatch(/10\.0\.0\.0\/8 .*scanning\.max_hosts/);
  });
});
