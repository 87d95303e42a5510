import { describe, expect, it } from 'vitest';
import { Value } from '@sinclair/typebox/value';
import {
  buildCveIndex,
  canonicalProductKey,
  CveEntrySchema,
  cvssBaseScore,
  matchCves,
  parseCpe,
  productKeyForName,
  sortCveMatches,
  validateCveEntry,
  windowsReleasesIn,
  type CveEntry,
  type CveMatch,
} from '../../src/core/cve/index.js';
import { loadShippedCves, shippedFamilies } from '../../src/cve/dataset.js';
import type { ScannedPort } from '../../src/core/model.js';

const shipped = loadShippedCves();
const index = buildCveIndex(shipped);

function port(p: Partial<ScannedPort> & { port: number }): ScannedPort {
  return { protocol: 'tcp', state: 'open', service: null, product: null, version: null, extra_info: null, cpe: [], ...p };
}

function ids(matches: CveMatch[]): string[] {
  return matches.map((m) => m.id);
}

function find(matches: CveMatch[], id: string): CveMatch | undefined {
  return matches.find((m) => m.id === id);
}

describe('cvssBaseScore', () => {
  it.each<[string, number | null]>([
    ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 9.8],
    ['CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:H/A:H', 8.1],
    ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H', 10.0],
    ['CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:C/C:H/I:H/A:H', 9.9],
    ['CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:C/C:H/I:H/A:H', 9.0],
    ['CVSS:3.0/AV:N/AC:H/PR:N/UI:N/S:U/C:N/I:H/A:N', 5.9],
    ['CVSS:3.1/AV:L/AC:H/PR:L/UI:N/S:U/C:H/I:H/A:H', 7.0],
    ['CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:L/A:H', 7.7],
    ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:H', 8.2],
    ['CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N', 6.1],
    ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:N', 0],
    ['AV:N/AC:L/Au:N/C:C/I:C/A:C', 10.0],
    ['AV:N/AC:L/Au:N/C:P/I:P/A:P', 7.5],
    ['AV:N/AC:M/Au:N/C:P/I:N/A:N', 4.3],
    ['AV:N/AC:H/Au:N/C:P/I:N/A:N', 2.6],
    ['CVSS:3.1/AV:N/AC:L', null],
    ['CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:N/VA:N/SC:N/SI:N/SA:N', null],
    ['nonsense', null],
  ])('%s → %j', (vector, expected) => {
    expect(cvssBaseScore(vector)).toBe(expected);
  });
});

describe('parseCpe and product names', () => {
  it.each([
    ['cpe:/a:openbsd:openssh:8.9p1', { part: 'a', vendor: 'openbsd', product: 'openssh', version: '8.9p1' }],
    ['cpe:/a:igor_sysoev:nginx', { part: 'a', vendor: 'igor_sysoev', product: 'nginx', version: null }],
    ['cpe:/o:microsoft:windows', { part: 'o', vendor: 'microsoft', product: 'windows', version: null }],
    ['cpe:/a:acme:thttpd:2.25b_29dec2003', { part: 'a', vendor: 'acme', product: 'thttpd', version: '2.25b_29dec2003' }],
    ['cpe:2.3:a:openbsd:openssh:8.5:p1:*:*:*:*:*:*', { part: 'a', vendor: 'openbsd', product: 'openssh', version: '8.5' }],
    ['cpe:2.3:a:pureftpd:pure-ftpd:*:*:*:*:*:*:*:*', { part: 'a', vendor: 'pureftpd', product: 'pure-ftpd', version: null }],
    ['cpe:2.3:a:vendor:prod\\:uct:1.0:*:*:*:*:*:*:*', { part: 'a', vendor: 'vendor', product: 'prod:uct', version: '1.0' }],
  ])('%s', (text, expected) => {
    expect(parseCpe(text)).toEqual(expected);
  });

  it.each([['not a cpe'], ['cpe:/x:a:b'], ['cpe:/a::']])('%s is not a CPE', (text) => {
    expect(parseCpe(text)).toBeNull();
  });

  it.each([
    ['OpenSSH', 'openbsd:openssh'],
    ['Apache httpd', 'apache:http_server'],
    ['nginx', 'f5:nginx'],
    ['vsftpd', 'beasts:vsftpd'],
    ['ProFTPD', 'proftpd:proftpd'],
    ['Exim smtpd', 'exim:exim'],
    ['Postfix smtpd', 'postfix:postfix'],
    ['Dovecot imapd', 'dovecot:dovecot'],
    ['Dovecot pop3d', 'dovecot:dovecot'],
    ['MySQL', 'oracle:mysql'],
    ['MariaDB', 'mariadb:mariadb'],
    ['PostgreSQL DB', 'postgresql:postgresql'],
    ['Redis key-value store', 'redis:redis'],
    ['MongoDB', 'mongodb:mongodb'],
    ['Elasticsearch REST API', 'elastic:elasticsearch'],
    ['Memcached', 'memcached:memcached'],
    ['MiniUPnP', 'miniupnp_project:miniupnpd'],
    ['Microsoft IIS httpd', 'microsoft:internet_information_services'],
    ['Samba smbd', 'samba:samba'],
    ['Dropbear sshd', 'dropbear_ssh_project:dropbear_ssh'],
    ['lighttpd', 'lighttpd:lighttpd'],
    ['BusyBox httpd', 'busybox:busybox'],
    ['GoAhead WebServer', 'embedthis:goahead'],
    ['RealVNC', 'realvnc:realvnc'],
    ['RealVNC Enterprise', 'realvnc:realvnc'],
    ['Pure-FTPd', 'pureftpd:pure-ftpd'],
    ['  apache   HTTPD ', 'apache:http_server'],
    ['Apache Tomcat/Coyote JSP engine', null],
    ['Microsoft Terminal Services', null],
    [null, null],
  ])('product %j → %j', (name, key) => {
    expect(productKeyForName(name)).toBe(key);
  });

  it.each([
    ['igor_sysoev:nginx', 'f5:nginx'],
    ['nginx:nginx', 'f5:nginx'],
    ['vsftpd:vsftpd', 'beasts:vsftpd'],
    ['vsftpd_project:vsftpd', 'beasts:vsftpd'],
    ['matt_johnston:dropbear_ssh_server', 'dropbear_ssh_project:dropbear_ssh'],
    ['mysql:mysql', 'oracle:mysql'],
    ['redislabs:redis', 'redis:redis'],
    ['goahead:goahead_webserver', 'embedthis:goahead'],
    ['vnc:realvnc', 'realvnc:realvnc'],
    ['apache:tomcat', 'apache:tomcat'],
  ])('CPE %s → %s', (cpe, key) => {
    expect(canonicalProductKey(cpe)).toBe(key);
  });
});

describe('windowsReleasesIn', () => {
  it.each<[(string | null)[], string[]]>([
    [['Microsoft Windows XP microsoft-ds'], ['xp']],
    [['Microsoft Windows 7 - 10 microsoft-ds'], ['10', '2008r2', '2012', '2012r2', '7', '8', '8.1']],
    [['Microsoft Windows Server 2008 R2 - 2012 microsoft-ds'], ['2008r2', '2012', '8']],
    [['Microsoft Windows 2003 or 2008 microsoft-ds'], ['2003', '2008']],
    [['Microsoft Windows 10 1709 - 1909'], ['10']],
    [['Microsoft Windows Server 2016 Standard 14393'], ['2016']],
    [['cpe:/o:microsoft:windows_xp'], ['xp']],
    [['cpe:/o:microsoft:windows_server_2008:r2'], ['2008r2']],
    [['cpe:/o:microsoft:windows_7::sp1'], ['7']],
    [['cpe:/o:microsoft:windows', 'Microsoft Terminal Services', 'Microsoft Windows RPC'], []],
    [[null], []],
  ])('%j → %j', (texts, expected) => {
    expect([...windowsReleasesIn(texts)].sort()).toEqual(expected.sort());
  });
});

describe('matchCves on the shipped dataset', () => {
  const ssh = (version: string, extra: string | null = 'protocol 2.0'): ScannedPort =>
    port({ port: 22, service: 'ssh', product: 'OpenSSH', version, extra_info: extra, cpe: [`cpe:/a:openbsd:openssh:${version.split(' ')[0]}`] });

  it.each<[string, string | null, 'confirmed' | 'likely' | null]>([
    ['9.7p1', 'protocol 2.0', 'confirmed'],
    ['8.5p1', 'protocol 2.0', 'confirmed'],
    ['8.4p1', 'protocol 2.0', null],
    ['9.8p1', 'protocol 2.0', null],
    ['9.9p1', 'protocol 2.0', null],
    ['4.3p2', 'protocol 2.0', 'confirmed'],
    ['4.4p1', 'protocol 2.0', null],
    ['8.9p1 Ubuntu 3ubuntu0.10', 'Ubuntu Linux; protocol 2.0', 'likely'],
    ['9.2p1 Debian 2+deb12u3', 'protocol 2.0', 'likely'],
    // Native engine: the distribution is in extra info, not in the version.
    ['9.2p1', 'Debian 2+deb12u3; protocol 2.0', 'likely'],
    ['9.3 FreeBSD-20230719', null, 'likely'],
  ])('regreSSHion on OpenSSH %s (%s) → %s', (version, extra, confidence) => {
    const m = find(matchCves([ssh(version, extra)], index), 'CVE-2024-6387');
    expect(m?.confidence ?? null).toBe(confidence);
  });

  it('fills the contract fields and says why a distribution package is only likely', () => {
    const [m] = matchCves([ssh('8.9p1 Ubuntu 3ubuntu0.10', 'Ubuntu Linux; protocol 2.0')], index).filter((x) => x.id === 'CVE-2024-6387');
    expect(m).toMatchObject({
      id: 'CVE-2024-6387',
      severity: 'high',
      cvss_score: 8.1,
      confidence: 'likely',
      port: 22,
      protocol: 'tcp',
      matched_product: 'OpenSSH',
      matched_version: '8.9p1 Ubuntu 3ubuntu0.10',
      kev: false,
    });
    expect(m.references[0]).toBe('https://nvd.nist.gov/vuln/detail/CVE-2024-6387');
    expect(m.description).toMatch(/LoginGraceTime/);
    expect(m.remediation).toMatch(/9\.8p1/);
    expect(m.remediation).toMatch(/packaged by Ubuntu, which may have backported the fix/);
    expect(m.confidence_reason).toMatch(/backport/);
  });

  it('matches the vsftpd 2.3.4 backdoor from the CPE alone, on a non-standard port', () => {
    const matches = matchCves([port({ port: 2121, service: 'ftp', cpe: ['cpe:/a:vsftpd:vsftpd:2.3.4'] })], index);
    expect(find(matches, 'CVE-2011-2523')).toMatchObject({
      confidence: 'confirmed',
      severity: 'critical',
      port: 2121,
      matched_product: 'vsftpd',
      matched_version: '2.3.4',
    });
    expect(ids(matchCves([port({ port: 21, service: 'ftp', product: 'vsftpd', version: '3.0.3' })], index))).not.toContain('CVE-2011-2523');
  });

  it('matches Apache 2.4.49 path traversal as known exploited, not 2.4.51', () => {
    const apache = (v: string): ScannedPort =>
      port({ port: 80, service: 'http', product: 'Apache httpd', version: v, extra_info: '(Unix)', cpe: [`cpe:/a:apache:http_server:${v}`] });
    const m49 = matchCves([apache('2.4.49')], index);
    expect(find(m49, 'CVE-2021-41773')).toMatchObject({ confidence: 'confirmed', kev: true, severity: 'high' });
    expect(find(m49, 'CVE-2021-42013')).toMatchObject({ confidence: 'confirmed', kev: true, severity: 'critical' });
    const m51 = ids(matchCves([apache('2.4.51')], index));
    expect(m51).not.toContain('CVE-2021-41773');
    expect(m51).not.toContain('CVE-2021-42013');
    expect(m51).toContain('CVE-2022-22720');
  });

  it("maps nmap's igor_sysoev:nginx CPE to NVD's nginx entries and reports each CVE once per port", () => {
    const matches = matchCves(
      [port({ port: 443, service: 'https', product: 'nginx', version: '1.18.0', cpe: ['cpe:/a:igor_sysoev:nginx:1.18.0'] })],
      index,
    );
    expect(find(matches, 'CVE-2021-23017')).toMatchObject({ confidence: 'confirmed', cvss_score: 7.7 });
    expect(new Set(ids(matches)).size).toBe(matches.length);
    // nginx 1.20.1 (stable fix) and Ubuntu's 1.18.0 package
    expect(ids(matchCves([port({ port: 80, product: 'nginx', version: '1.20.1' })], index))).not.toContain('CVE-2021-23017');
    expect(
      find(matchCves([port({ port: 80, product: 'nginx', version: '1.18.0', extra_info: 'Ubuntu' })], index), 'CVE-2021-23017')?.confidence,
    ).toBe('likely');
  });

  it('does not match versioned entries when the version is unknown', () => {
    expect(matchCves([port({ port: 22, service: 'ssh', product: 'OpenSSH', cpe: ['cpe:/a:openbsd:openssh'] })], index)).toEqual([]);
    expect(
      matchCves([port({ port: 445, service: 'netbios-ssn', product: 'Samba smbd', version: '3.X - 4.X', cpe: ['cpe:/a:samba:samba'] })], index),
    ).toEqual([]);
    expect(matchCves([port({ port: 8080, service: 'http-proxy' })], index)).toEqual([]);
  });

  it('skips ports that are not open', () => {
    expect(
      matchCves(
        [
          { ...ssh('9.7p1'), state: 'closed' },
          { ...ssh('9.7p1'), state: 'filtered' },
        ],
        index,
      ),
    ).toEqual([]);
  });

  it('matches SMB on Windows as likely, version-independent (EternalBlue, SMBGhost)', () => {
    const smb = port({
      port: 445,
      service: 'microsoft-ds',
      product: 'Microsoft Windows 7 - 10 microsoft-ds',
      extra_info: 'workgroup: WORKGROUP',
      cpe: ['cpe:/o:microsoft:windows'],
    });
    const matches = matchCves([smb], index);
    expect(find(matches, 'CVE-2017-0144')).toMatchObject({
      confidence: 'likely',
      kev: true,
      port: 445,
      matched_product: 'Microsoft Windows 7 - 10 microsoft-ds',
      matched_version: null,
    });
    expect(find(matches, 'CVE-2020-0796')).toMatchObject({ confidence: 'likely', severity: 'critical' });
    expect(find(matches, 'CVE-2017-0144')!.confidence_reason).toMatch(/patch level/);
    expect(ids(matches)).not.toContain('CVE-2008-4250');
  });

  it('drops Windows entries for releases the scan rules out', () => {
    const xp = matchCves(
      [port({ port: 445, service: 'microsoft-ds', product: 'Microsoft Windows XP microsoft-ds', cpe: ['cpe:/o:microsoft:windows_xp'] })],
      index,
    );
    expect(ids(xp)).toEqual(expect.arrayContaining(['CVE-2017-0144', 'CVE-2008-4250']));
    expect(ids(xp)).not.toContain('CVE-2020-0796');
    const server2019 = matchCves([port({ port: 445, service: 'microsoft-ds' })], index, { os_name: 'Microsoft Windows Server 2019' });
    expect(ids(server2019)).toEqual([]);
    const server2016 = matchCves([port({ port: 445, service: 'microsoft-ds' })], index, { os_name: 'Microsoft Windows Server 2016' });
    expect(ids(server2016)).toContain('CVE-2017-0144');
  });

  it('uses the host OS for SMB found by the native engine (no product)', () => {
    const bare = port({ port: 445, service: 'microsoft-ds' });
    expect(matchCves([bare], index)).toEqual([]);
    expect(ids(matchCves([bare], index, { os_name: 'Microsoft Windows 10' }))).toContain('CVE-2017-0144');
  });

  it('never treats Samba as Windows SMB', () => {
    const samba = port({ port: 445, service: 'netbios-ssn', product: 'Samba smbd', version: '4.6.2', cpe: ['cpe:/a:samba:samba:4.6.2'] });
    const matches = matchCves([samba], index, { os_name: 'Linux 4.15' });
    expect(ids(matches)).not.toContain('CVE-2017-0144');
    expect(find(matches, 'CVE-2017-7494')).toMatchObject({ confidence: 'confirmed', kev: true });
  });

  it('matches RDP: BlueKeep on Windows 7, DejaBlue but not BlueKeep on Windows 10', () => {
    const rdp = (cpe: string): ScannedPort => port({ port: 3389, service: 'ms-wbt-server', product: 'Microsoft Terminal Services', cpe: [cpe] });
    const generic = ids(matchCves([rdp('cpe:/o:microsoft:windows')], index));
    expect(generic).toEqual(expect.arrayContaining(['CVE-2019-0708', 'CVE-2019-1181']));
    const win7 = ids(matchCves([rdp('cpe:/o:microsoft:windows_7')], index));
    expect(win7).toEqual(expect.arrayContaining(['CVE-2019-0708', 'CVE-2019-1181']));
    const win10 = ids(matchCves([rdp('cpe:/o:microsoft:windows_10')], index));
    expect(win10).toContain('CVE-2019-1181');
    expect(win10).not.toContain('CVE-2019-0708');
    // xrdp is not Windows
    expect(ids(matchCves([port({ port: 3389, service: 'ms-wbt-server', product: 'xrdp', cpe: ['cpe:/a:jay_sorg:xrdp'] })], index))).toEqual([]);
    // msrpc on Windows: no SMB/RDP entries
    expect(matchCves([port({ port: 135, service: 'msrpc', product: 'Microsoft Windows RPC', cpe: ['cpe:/o:microsoft:windows'] })], index)).toEqual(
      [],
    );
  });

  it('caps Windows component entries at likely (IIS 7.5 and MS15-034)', () => {
    const iis = matchCves(
      [
        port({
          port: 80,
          service: 'http',
          product: 'Microsoft IIS httpd',
          version: '7.5',
          cpe: ['cpe:/a:microsoft:internet_information_services:7.5', 'cpe:/o:microsoft:windows'],
        }),
      ],
      index,
    );
    expect(find(iis, 'CVE-2015-1635')).toMatchObject({ confidence: 'likely', kev: true, severity: 'critical' });
    expect(ids(iis)).not.toContain('CVE-2017-0144');
    const iis6 = matchCves([port({ port: 80, product: 'Microsoft IIS httpd', version: '6.0' })], index);
    expect(ids(iis6)).toContain('CVE-2017-7269');
  });

  it('matches the Debian/Ubuntu Redis Lua escape only when the package is Debian or Ubuntu', () => {
    const redis = (extra: string | null, cpe: string[] = []): ScannedPort =>
      port({
        port: 6379,
        service: 'redis',
        product: 'Redis key-value store',
        version: '6.0.16',
        extra_info: extra,
        cpe: ['cpe:/a:redislabs:redis:6.0.16', ...cpe],
      });
    expect(ids(matchCves([redis(null)], index))).not.toContain('CVE-2022-0543');
    expect(find(matchCves([redis(null, ['cpe:/o:debian:debian_linux'])], index), 'CVE-2022-0543')).toMatchObject({
      confidence: 'likely',
      kev: true,
      severity: 'critical',
    });
    expect(find(matchCves([redis('Ubuntu')], index), 'CVE-2022-0543')?.confidence).toBe('likely');
  });

  it.each<[string, boolean]>([
    ['1.3.5', true],
    ['1.3.5a', false],
    ['1.3.5rc2', false],
    ['1.3.6', false],
  ])('ProFTPD %s has the mod_copy CVE-2015-3306: %s', (version, expected) => {
    const matches = matchCves([port({ port: 21, service: 'ftp', product: 'ProFTPD', version, cpe: [`cpe:/a:proftpd:proftpd:${version}`] })], index);
    expect(ids(matches).includes('CVE-2015-3306')).toBe(expected);
  });

  it('reads nmap version ranges: confirmed only when the whole range is affected', () => {
    const pg = (version: string): string[] =>
      ids(
        matchCves([port({ port: 5432, service: 'postgresql', product: 'PostgreSQL DB', version, cpe: ['cpe:/a:postgresql:postgresql:9.6'] })], index),
      );
    expect(pg('9.6.7 - 9.6.12')).toContain('CVE-2020-25695');
    expect(pg('9.6.7 - 9.6.12')).not.toContain('CVE-2018-1058');
    expect(pg('9.6.0 or later')).toEqual([]);
  });

  it('handles MySQL and MariaDB version suffixes', () => {
    expect(
      find(matchCves([port({ port: 3306, product: 'MySQL', version: '5.7.10-log', cpe: ['cpe:/a:mysql:mysql:5.7.10-log'] })], index), 'CVE-2016-0639')
        ?.confidence,
    ).toBe('confirmed');
    const maria = matchCves([port({ port: 3306, product: 'MariaDB', version: '10.3.27-MariaDB-0+deb10u1' })], index);
    expect(find(maria, 'CVE-2021-27928')).toMatchObject({ confidence: 'likely' });
  });

  it("reads nmap's MariaDB-as-MySQL handshake version as MariaDB, not MySQL 5.5.5", () => {
    const nmapMaria = port({
      port: 3306,
      service: 'mysql',
      product: 'MySQL',
      version: '5.5.5-10.3.27-MariaDB-0+deb10u1',
      cpe: ['cpe:/a:mariadb:mariadb:5.5.5-10.3.27-MariaDB-0+deb10u1'],
    });
    const matches = matchCves([nmapMaria], index);
    expect(ids(matches)).not.toContain('CVE-2012-2122');
    expect(find(matches, 'CVE-2021-27928')).toMatchObject({ confidence: 'likely', matched_version: '10.3.27-MariaDB-0+deb10u1' });
    const bionic = port({
      port: 3306,
      product: 'MySQL',
      version: '5.5.5-10.1.44-MariaDB-1~bionic',
      cpe: ['cpe:/a:mariadb:mariadb:5.5.5-10.1.44-MariaDB-1~bionic'],
    });
    expect(ids(matchCves([bionic], index))).toEqual([]);
    const old = port({ port: 3306, product: 'MySQL', version: '5.5.5-10.0.20-MariaDB' });
    expect(find(matchCves([old], index), 'CVE-2016-6662')?.confidence).toBe('confirmed');
  });

  it('matches several ports and sorts by port, then severity', () => {
    const matches = sortCveMatches(
      matchCves(
        [
          port({ port: 80, product: 'Apache httpd', version: '2.4.49' }),
          ssh('9.7p1'),
          port({ port: 11211, protocol: 'udp', state: 'open', service: 'memcached', product: 'Memcached', version: '1.4.25' }),
        ],
        index,
      ),
    );
    // A port that did not answer (open|filtered) is not open: it gets no CVE, as it gets no risk finding.
    const silent = port({ port: 11211, protocol: 'udp', state: 'open|filtered', service: 'memcached', product: 'Memcached', version: '1.4.25' });
    expect(matchCves([silent], index)).toEqual([]);
    expect(matches[0].port).toBe(22);
    expect(matches.at(-1)!.port).toBe(11211);
    expect(find(matches, 'CVE-2018-1000115')).toMatchObject({ protocol: 'udp', confidence: 'confirmed' });
    const http = matches.filter((m) => m.port === 80).map((m) => m.cvss_score ?? 0);
    expect(http).toEqual([...http].sort((a, b) => b - a));
  });

  it('gives the same answer with or without the memo, and accepts a plain array', () => {
    const ports = [ssh('8.9p1 Ubuntu 3ubuntu0.10', 'Ubuntu Linux; protocol 2.0'), port({ port: 80, product: 'nginx', version: '1.18.0' })];
    const first = matchCves(ports, index);
    const second = matchCves(ports, index);
    expect(second).toEqual(first);
    expect(matchCves(ports, shipped)).toEqual(first);
  });
});

describe('matchCves on a custom dataset', () => {
  const entry = (id: string, affected: CveEntry['affected'], score = 7.5): CveEntry => ({
    id,
    cvss_score: score,
    cvss_vector: null,
    cvss_version: null,
    description: `${id} test`,
    remediation: null,
    references: [],
    kev: false,
    affected,
  });

  it('confirmed wins over likely when two entries of one CVE match', () => {
    const idx = buildCveIndex([
      entry('CVE-2000-0001', [
        { cpe: 'openbsd:openssh', versionIndependent: true },
        { cpe: 'openbsd:openssh', versionEndExcluding: '9.0' },
      ]),
    ]);
    const [m] = matchCves([port({ port: 22, product: 'OpenSSH', version: '8.0' })], idx);
    expect(m.confidence).toBe('confirmed');
    expect(matchCves([port({ port: 22, product: 'OpenSSH', version: '9.1' })], idx)[0].confidence).toBe('likely');
  });

  it('matches products outside the alias table by their CPE', () => {
    const idx = buildCveIndex([
      entry('CVE-2000-0002', [{ cpe: 'apache:tomcat', versionStartIncluding: '9.0.0', versionEndExcluding: '9.0.31' }], 9.8),
    ]);
    const [m] = matchCves([port({ port: 8009, service: 'ajp13', product: 'Apache Jserv', cpe: ['cpe:/a:apache:tomcat:9.0.30'] })], idx);
    expect(m).toMatchObject({
      id: 'CVE-2000-0002',
      confidence: 'confirmed',
      matched_product: 'Apache Jserv',
      matched_version: '9.0.30',
      severity: 'critical',
    });
  });

  it('reports entries whose ranges cannot be read instead of failing', () => {
    const idx = buildCveIndex([entry('CVE-2000-0003', [{ cpe: 'openbsd:openssh', versionEndExcluding: 'latest' }])]);
    expect(idx.rejected).toEqual([{ id: 'CVE-2000-0003', reason: expect.stringMatching(/not a version/) }]);
    expect(matchCves([port({ port: 22, product: 'OpenSSH', version: '8.0' })], idx)).toEqual([]);
  });

  it('scores unscored CVEs as medium', () => {
    const idx = buildCveIndex([{ ...entry('CVE-2000-0004', [{ cpe: 'openbsd:openssh', versionEndExcluding: '9.0' }]), cvss_score: null }]);
    expect(matchCves([port({ port: 22, product: 'OpenSSH', version: '8.0' })], idx)[0].severity).toBe('medium');
  });
});

describe('validateCveEntry', () => {
  const good = {
    id: 'CVE-2024-6387',
    cvss_score: 8.1,
    cvss_vector: 'CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:H/A:H',
    cvss_version: '3.1',
    description: 'regreSSHion',
    remediation: 'Upgrade OpenSSH to 9.8p1 or later.',
    references: ['https://nvd.nist.gov/vuln/detail/CVE-2024-6387'],
    kev: false,
    published: '2024-07-01',
    affected: [{ cpe: 'openbsd:openssh', versionStartIncluding: '8.5p1', versionEndExcluding: '9.8p1' }],
  };

  it('accepts a valid record, and the schema agrees', () => {
    expect(validateCveEntry(good)).toEqual([]);
    expect(Value.Check(CveEntrySchema, good)).toBe(true);
    for (const e of shipped) expect(Value.Check(CveEntrySchema, e), e.id).toBe(true);
  });

  it('names every wrong field, in field order, prefixed with the id', () => {
    const bad = {
      ...good,
      id: 'CVE-24-1',
      cvss_score: 11,
      cvss_vector: 5,
      cvss_version: '3.2',
      description: ' ',
      remediation: 1,
      references: ['ftp://x'],
      kev: 'no',
      published: 'July',
      last_modified: 3,
      severity: 'high',
    };
    expect(validateCveEntry(bad)).toEqual([
      "CVE-24-1: unknown field 'severity'",
      'CVE-24-1: id must look like CVE-2024-6387',
      'CVE-24-1: cvss_score must be 0-10 or null',
      'CVE-24-1: cvss_vector must be a string or null',
      'CVE-24-1: cvss_version must be 2.0, 3.0, 3.1, 4.0 or null',
      'CVE-24-1: description must be a non-empty string',
      'CVE-24-1: remediation must be a string or null',
      'CVE-24-1: references must be an array of URLs',
      'CVE-24-1: kev must be true or false',
      'CVE-24-1: published must be a date (YYYY-MM-DD)',
      'CVE-24-1: last_modified must be a string',
    ]);
    expect(Value.Check(CveEntrySchema, bad)).toBe(false);
    expect(validateCveEntry([])).toEqual(['not an object']);
    expect(validateCveEntry({})).toEqual([
      '?: id must look like CVE-2024-6387',
      '?: cvss_score must be 0-10 or null',
      '?: cvss_vector must be a string or null',
      '?: cvss_version must be 2.0, 3.0, 3.1, 4.0 or null',
      '?: description must be a non-empty string',
      '?: remediation must be a string or null',
      '?: references must be an array of URLs',
      '?: kev must be true or false',
      '?: affected must be a non-empty array',
    ]);
  });

  it('checks the score and version against the vector unless told not to', () => {
    expect(validateCveEntry({ ...good, cvss_score: 9.8 })).toEqual(['CVE-2024-6387: cvss_score 9.8 disagrees with its vector (8.1)']);
    expect(validateCveEntry({ ...good, cvss_vector: 'CVSS:3.1/AV:N', cvss_version: '2.0' })).toEqual([
      "CVE-2024-6387: cvss_vector 'CVSS:3.1/AV:N' is not a CVSS v2/v3 vector",
      'CVE-2024-6387: cvss_version 2.0 disagrees with the vector (3.1)',
    ]);
    expect(validateCveEntry({ ...good, cvss_score: 9.8, cvss_version: '3.0' }, { checkScore: false })).toEqual([]);
  });

  it('names what is wrong with each affected product', () => {
    expect(validateCveEntry({ ...good, affected: [] })).toEqual(['CVE-2024-6387: affected must be a non-empty array']);
    expect(validateCveEntry({ ...good, affected: [] }, { allowEmptyAffected: true })).toEqual([]);
    const affected = [
      'openssh',
      {
        cpe: 'OpenBSD:OpenSSH',
        services: 'ssh',
        windowsReleases: ['7', 'vista sp2'],
        versionIndependent: false,
        maxConfidence: 'confirmed',
        vendor: 'x',
      },
      { cpe: 'openbsd:openssh', versionIndependent: true, versionEndExcluding: '9.8p1' },
      { cpe: 'openbsd:openssh', versionStartIncluding: '9.8p1', versionEndExcluding: '8.5p1' },
      { cpe: 'openbsd:openssh', versionEndExcluding: 'latest' },
    ];
    expect(validateCveEntry({ ...good, affected })).toEqual([
      'CVE-2024-6387: affected item must be an object',
      "CVE-2024-6387: affected: unknown field 'vendor'",
      "CVE-2024-6387: affected cpe 'OpenBSD:OpenSSH' must be vendor:product in lower case",
      'CVE-2024-6387: affected services must be an array of strings',
      "CVE-2024-6387: unknown Windows release 'vista sp2'",
      'CVE-2024-6387: versionIndependent must be true when given',
      "CVE-2024-6387: maxConfidence must be 'likely' when given",
      'CVE-2024-6387: a version-independent entry cannot have version bounds',
      'CVE-2024-6387: range start 9.8p1 is not below its end 8.5p1',
      "CVE-2024-6387: affected openbsd:openssh: versionEndExcluding 'latest' is not a version",
    ]);
    expect(validateCveEntry({ ...good, affected: [{ cpe: 'openbsd:openssh', version: 9 }] })).toContain(
      'CVE-2024-6387: affected version must be a string',
    );
  });
});

describe('the shipped dataset', () => {
  it('holds at least 150 valid CVEs with unique ids', () => {
    expect(shipped.length).toBeGreaterThanOrEqual(150);
    expect(new Set(shipped.map((e) => e.id)).size).toBe(shipped.length);
    for (const e of shipped) expect(validateCveEntry(e)).toEqual([]);
    expect(index.rejected).toEqual([]);
  });

  it('scores agree with vectors, v3 is used where it exists, every CVE links to NVD', () => {
    for (const e of shipped) {
      expect(e.cvss_vector, e.id).not.toBeNull();
      expect(cvssBaseScore(e.cvss_vector!), e.id).toBe(e.cvss_score);
      expect(e.references[0], e.id).toBe(`https://nvd.nist.gov/vuln/detail/${e.id}`);
      expect(e.remediation, e.id).toBeTruthy();
      if (e.kev) expect(e.references, e.id).toContain(`https://www.cisa.gov/known-exploited-vulnerabilities-catalog?field_cve=${e.id}`);
    }
  });

  it('covers every product family the issue names', () => {
    const families = [...shippedFamilies().keys()];
    for (const f of [
      'OpenSSH',
      'Dropbear',
      'Apache httpd',
      'nginx',
      'lighttpd',
      'Microsoft IIS',
      'Samba',
      'Windows SMB',
      'vsftpd',
      'ProFTPD',
      'Pure-FTPd',
      'Exim',
      'Postfix',
      'Dovecot',
      'MySQL/MariaDB',
      'PostgreSQL',
      'Redis',
      'MongoDB',
      'Elasticsearch',
      'Memcached',
      'MiniUPnPd',
      'Embedded web servers and BusyBox',
      'Windows RDP',
      'VNC servers',
    ]) {
      expect(families, f).toContain(f);
    }
    const keys = new Set(index.byProduct.keys());
    for (const k of [
      'openbsd:openssh',
      'dropbear_ssh_project:dropbear_ssh',
      'apache:http_server',
      'f5:nginx',
      'lighttpd:lighttpd',
      'microsoft:internet_information_services',
      'samba:samba',
      'microsoft:windows',
      'beasts:vsftpd',
      'proftpd:proftpd',
      'pureftpd:pure-ftpd',
      'exim:exim',
      'postfix:postfix',
      'dovecot:dovecot',
      'oracle:mysql',
      'mariadb:mariadb',
      'postgresql:postgresql',
      'redis:redis',
      'mongodb:mongodb',
      'elastic:elasticsearch',
      'memcached:memcached',
      'miniupnp_project:miniupnpd',
      'busybox:busybox',
      'embedthis:goahead',
      'realvnc:realvnc',
    ]) {
      expect(keys, k).toContain(k);
    }
  });

  it.each([
    ['CVE-2024-6387', false],
    ['CVE-2023-38408', false],
    ['CVE-2016-6210', false],
    ['CVE-2018-15473', false],
    ['CVE-2020-15778', false],
    ['CVE-2021-41617', false],
    ['CVE-2023-51385', false],
    ['CVE-2023-48795', false],
    ['CVE-2021-41773', true],
    ['CVE-2021-42013', true],
    ['CVE-2021-40438', true],
    ['CVE-2022-22720', false],
    ['CVE-2023-25690', false],
    ['CVE-2024-38476', false],
    ['CVE-2021-23017', false],
    ['CVE-2013-2028', false],
    ['CVE-2015-1635', true],
    ['CVE-2017-7269', true],
    ['CVE-2017-7494', true],
    ['CVE-2017-0144', true],
    ['CVE-2020-0796', true],
    ['CVE-2011-2523', false],
    ['CVE-2015-3306', true],
    ['CVE-2019-12815', false],
    ['CVE-2019-10149', true],
    ['CVE-2019-15846', false],
    ['CVE-2020-28017', false],
    ['CVE-2022-0543', true],
    ['CVE-2021-32761', false],
    ['CVE-2015-1427', true],
    ['CVE-2014-3120', true],
    ['CVE-2018-1000115', false],
    ['CVE-2017-17562', true],
    ['CVE-2019-0708', true],
    ['CVE-2019-1181', false],
    ['CVE-2006-2369', false],
  ])('includes %s (known exploited: %s)', (id, kev) => {
    const e = shipped.find((x) => x.id === id);
    expect(e, id).toBeDefined();
    expect(e!.kev).toBe(kev);
  });
});

describe("matchCves: recognition's CPEs (HostContext.cpes)", () => {
  const upnp = {
    cpe: 'cpe:/a:miniupnp_project:miniupnpd:2.1',
    source: 'ssdp',
    detail: 'UPnP SERVER "Linux UPnP/1.1 MiniUPnPd/2.1" matches MiniUPnPd',
  };

  it('matches a versioned CPE on the device itself, likely, saying where it came from', () => {
    const matches = matchCves([port({ port: 80, service: 'http' })], index, { cpes: [upnp] });
    const m = find(matches, 'CVE-2019-12107')!;
    expect(m).toMatchObject({ port: null, protocol: null, confidence: 'likely', matched_product: 'MiniUPnP', matched_version: '2.1' });
    expect(m.identified_by).toContain('cpe:/a:miniupnp_project:miniupnpd:2.1, recognised from UPnP');
    expect(m.confidence_reason).toMatch(/comes from recognition/);
    // Outside the affected ranges: nothing.
    expect(find(matches, 'CVE-2013-0229')).toBeUndefined();
    expect(ids(matchCves([], index, { cpes: [{ ...upnp, cpe: 'cpe:/a:miniupnp_project:miniupnpd:2.3.4' }] }))).toEqual([]);
  });

  it('puts the match on the port that names the product without a version; leaves a port that has one alone', () => {
    const bare = matchCves([port({ port: 5000, service: 'upnp', product: 'MiniUPnP' })], index, { cpes: [upnp] });
    expect(find(bare, 'CVE-2019-12107')).toMatchObject({
      port: 5000,
      protocol: 'tcp',
      matched_product: 'MiniUPnP',
      matched_version: '2.1',
      confidence: 'likely',
    });
    // The port's own version (2.3) stands: the device's claim of 2.1 adds nothing.
    const versioned = matchCves([port({ port: 5000, service: 'upnp', product: 'MiniUPnP', version: '2.3' })], index, { cpes: [upnp] });
    expect(find(versioned, 'CVE-2019-12107')).toBeUndefined();
  });

  it('ignores a CPE without a version, an unknown product and Windows', () => {
    const cpes = [
      { ...upnp, cpe: 'cpe:/a:miniupnp_project:miniupnpd' },
      { ...upnp, cpe: 'cpe:/o:mikrotik:routeros:6.40' },
      { ...upnp, cpe: 'cpe:/o:microsoft:windows:10' },
    ];
    expect(matchCves([port({ port: 80, service: 'http' })], index, { cpes })).toEqual([]);
  });
});
