import { describe, expect, it } from 'vitest';
import {
  bytesToText,
  describeCertificate,
  identifyService,
  looksLikeTlsOnly,
  parseGreeting,
  parseHttpHead,
  parseHttpResponse,
  parseMysqlHandshake,
  parseRedisInfo,
  parseServerHeader,
  parseSshBanner,
  type ServiceEvidence,
} from '../../src/core/banners.js';
import { wellKnownService } from '../../src/core/ports.js';

const bytes = (text: string): Uint8Array => Buffer.from(text, 'latin1');

type Row = [banner: string, service: string, product: string | null, version: string | null, cpe: string[], extra?: string | null];

describe('parseSshBanner', () => {
  it.each<Row>([
    [
      'SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n',
      'ssh',
      'OpenSSH',
      '9.2p1',
      ['cpe:/a:openbsd:openssh:9.2p1', 'cpe:/o:debian:debian_linux'],
      'Debian 2+deb12u3; protocol 2.0',
    ],
    [
      'SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n',
      'ssh',
      'OpenSSH',
      '9.2p1',
      ['cpe:/a:openbsd:openssh:9.2p1', 'cpe:/o:debian:debian_linux'],
      'Debian 2; protocol 2.0',
    ],
    [
      'SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.6\r\n',
      'ssh',
      'OpenSSH',
      '8.9p1',
      ['cpe:/a:openbsd:openssh:8.9p1', 'cpe:/o:canonical:ubuntu_linux'],
      'Ubuntu 3ubuntu0.6; protocol 2.0',
    ],
    ['SSH-2.0-OpenSSH_7.4\r\n', 'ssh', 'OpenSSH', '7.4', ['cpe:/a:openbsd:openssh:7.4'], 'protocol 2.0'],
    ['SSH-2.0-OpenSSH_9.6\r\n', 'ssh', 'OpenSSH', '9.6', ['cpe:/a:openbsd:openssh:9.6'], 'protocol 2.0'],
    ['SSH-1.99-OpenSSH_3.9p1\n', 'ssh', 'OpenSSH', '3.9p1', ['cpe:/a:openbsd:openssh:3.9p1'], 'protocol 1.99'],
    ['SSH-2.0-OpenSSH_7.4p1-hpn14v12\r\n', 'ssh', 'OpenSSH', '7.4p1', ['cpe:/a:openbsd:openssh:7.4p1'], 'hpn14v12 patch; protocol 2.0'],
    [
      'SSH-2.0-OpenSSH_8.4p1 Raspbian-5+deb11u3\r\n',
      'ssh',
      'OpenSSH',
      '8.4p1',
      ['cpe:/a:openbsd:openssh:8.4p1', 'cpe:/o:debian:debian_linux'],
      'Raspbian 5+deb11u3; protocol 2.0',
    ],
    [
      'SSH-2.0-OpenSSH_9.3 FreeBSD-20230719\r\n',
      'ssh',
      'OpenSSH',
      '9.3',
      ['cpe:/a:openbsd:openssh:9.3', 'cpe:/o:freebsd:freebsd'],
      'FreeBSD 20230719; protocol 2.0',
    ],
    [
      'SSH-2.0-OpenSSH_for_Windows_8.1\r\n',
      'ssh',
      'OpenSSH',
      '8.1',
      ['cpe:/a:openbsd:openssh:8.1', 'cpe:/o:microsoft:windows'],
      'for Windows; protocol 2.0',
    ],
    ['SSH-2.0-dropbear_2022.83\r\n', 'ssh', 'Dropbear sshd', '2022.83', ['cpe:/a:matt_johnston:dropbear_ssh_server:2022.83'], 'protocol 2.0'],
    ['SSH-2.0-dropbear\r\n', 'ssh', 'Dropbear sshd', null, ['cpe:/a:matt_johnston:dropbear_ssh_server'], 'protocol 2.0'],
    ['SSH-2.0-libssh_0.9.6\r\n', 'ssh', 'libssh', '0.9.6', ['cpe:/a:libssh:libssh:0.9.6'], 'protocol 2.0'],
    ['SSH-2.0-Cisco-1.25\r\n', 'ssh', 'Cisco SSH', '1.25', ['cpe:/a:cisco:ssh:1.25', 'cpe:/o:cisco:ios'], 'protocol 2.0'],
    ['SSH-2.0-ROSSSH\r\n', 'ssh', 'MikroTik RouterOS sshd', null, ['cpe:/o:mikrotik:routeros'], 'protocol 2.0'],
    ['SSH-2.0-Go\r\n', 'ssh', 'Golang x/crypto/ssh server', null, [], 'protocol 2.0'],
    ['SSH-2.0-AsyncSSH_2.13.0\r\n', 'ssh', 'AsyncSSH', '2.13.0', [], 'protocol 2.0'],
    ['SSH-2.0-paramiko_3.4.0\r\n', 'ssh', 'Paramiko Python sshd', '3.4.0', ['cpe:/a:paramiko:paramiko:3.4.0'], 'protocol 2.0'],
    ['SSH-2.0-mod_sftp/0.9.9\r\n', 'ssh', null, null, [], 'software mod_sftp/0.9.9; protocol 2.0'],
    ['SSH-2.0-WeOnlyDo 2.4.3\r\n', 'ssh', null, null, [], 'software WeOnlyDo; protocol 2.0'],
    ['SSH-2.0-SSHServer_1.2\r\n', 'ssh', 'SSHServer', '1.2', [], 'protocol 2.0'],
  ])('%j', (banner, service, product, version, cpe, extra) => {
    const info = parseSshBanner(banner);
    expect(info).toEqual({ service, product, version, cpe, extra_info: extra ?? null });
  });

  it('is not fooled by other text', () => {
    expect(parseSshBanner('220 ftp ready\r\n')).toBeNull();
    expect(parseSshBanner('HTTP/1.1 200 OK\r\n')).toBeNull();
  });
});

describe('parseGreeting: FTP, SMTP, POP3, IMAP and others', () => {
  it.each<[string, number, string, string | null, string | null, string[]]>([
    // FTP
    ['220 (vsFTPd 3.0.3)\r\n', 21, 'ftp', 'vsftpd', '3.0.3', ['cpe:/a:vsftpd:vsftpd:3.0.3']],
    ['220 (vsFTPd 2.3.4)\r\n', 40021, 'ftp', 'vsftpd', '2.3.4', ['cpe:/a:vsftpd:vsftpd:2.3.4']],
    ['220 vsFTPd 2.0.5 ready...\r\n', 21, 'ftp', 'vsftpd', '2.0.5', ['cpe:/a:vsftpd:vsftpd:2.0.5']],
    ['500 OOPS: vsftpd: refusing to run with writable root inside chroot()\r\n', 21, 'ftp', 'vsftpd', null, ['cpe:/a:vsftpd:vsftpd']],
    ['220 ProFTPD 1.3.5e Server (Debian) [::ffff:192.168.1.10]\r\n', 21, 'ftp', 'ProFTPD', '1.3.5e', ['cpe:/a:proftpd:proftpd:1.3.5e']],
    ['220 ProFTPD Server (ProFTPD Default Installation) [192.168.1.5]\r\n', 21, 'ftp', 'ProFTPD', null, ['cpe:/a:proftpd:proftpd']],
    [
      '220---------- Welcome to Pure-FTPd [privsep] [TLS] ----------\r\n220-You are user number 1 of 50 allowed.\r\n220 This is a private system\r\n',
      21,
      'ftp',
      'Pure-FTPd',
      null,
      ['cpe:/a:pureftpd:pure-ftpd'],
    ],
    [
      '220-FileZilla Server 0.9.60 beta\r\n220-written by Tim Kosse\r\n220 Please visit https://filezilla-project.org/\r\n',
      21,
      'ftp',
      'FileZilla ftpd',
      '0.9.60 beta',
      ['cpe:/a:filezilla-project:filezilla_server:0.9.60_beta', 'cpe:/o:microsoft:windows'],
    ],
    ['220 Microsoft FTP Service\r\n', 21, 'ftp', 'Microsoft ftpd', null, ['cpe:/a:microsoft:ftp_service', 'cpe:/o:microsoft:windows']],
    ['220 NAS FTP server ready.\r\n', 21, 'ftp', null, null, []],
    ['220 Welcome\r\n', 21, 'ftp', null, null, []],
    // SMTP
    ['220 mail.example.com ESMTP Postfix (Debian/GNU)\r\n', 25, 'smtp', 'Postfix smtpd', null, ['cpe:/a:postfix:postfix']],
    ['220 mx.example.org ESMTP Postfix\r\n', 2525, 'smtp', 'Postfix smtpd', null, ['cpe:/a:postfix:postfix']],
    ['220 mail.example.com ESMTP Postfix (3.7.6)\r\n', 25, 'smtp', 'Postfix smtpd', '3.7.6', ['cpe:/a:postfix:postfix:3.7.6']],
    ['220 mail.example.com ESMTP Postfix (2.11)\r\n', 587, 'smtp', 'Postfix smtpd', '2.11', ['cpe:/a:postfix:postfix:2.11']],
    ['220 mx.example.net Mail Service (Postfix) ready Postfix (3.8.1)\r\n', 25, 'smtp', 'Postfix smtpd', '3.8.1', ['cpe:/a:postfix:postfix:3.8.1']],
    ['220 mail.example.com ESMTP Postfix (Ubuntu)\r\n', 25, 'smtp', 'Postfix smtpd', null, ['cpe:/a:postfix:postfix']],
    ['220 mx1.example.net ESMTP Exim 4.96 Mon, 01 Jan 2024 10:00:00 +0000\r\n', 25, 'smtp', 'Exim smtpd', '4.96', ['cpe:/a:exim:exim:4.96']],
    [
      '220 host.example.com ESMTP Sendmail 8.15.2/8.15.2; Mon, 1 Jan 2024 10:00:00 GMT\r\n',
      25,
      'smtp',
      'Sendmail',
      '8.15.2',
      ['cpe:/a:sendmail:sendmail:8.15.2'],
    ],
    ['220 smtp.example.com ESMTP OpenSMTPD\r\n', 25, 'smtp', 'OpenSMTPD', null, ['cpe:/a:openbsd:opensmtpd']],
    [
      '220 EXCH01.corp.local Microsoft ESMTP MAIL Service ready at Mon, 1 Jan 2024 10:00:00 +0000\r\n',
      25,
      'smtp',
      'Microsoft Exchange smtpd',
      null,
      ['cpe:/a:microsoft:exchange_server', 'cpe:/o:microsoft:windows'],
    ],
    ['220 relay.example.com ESMTP\r\n', 25, 'smtp', null, null, []],
    ['220 Welcome\r\n', 25, 'smtp', null, null, []],
    // POP3 / IMAP
    ['+OK Dovecot ready.\r\n', 110, 'pop3', 'Dovecot pop3d', null, ['cpe:/a:dovecot:dovecot']],
    ['+OK Dovecot (Debian) ready.\r\n', 110, 'pop3', 'Dovecot pop3d', null, ['cpe:/a:dovecot:dovecot']],
    ['+OK Hello there.\r\n', 110, 'pop3', 'Courier pop3d', null, ['cpe:/a:courier-mta:courier']],
    ['+OK POP3 server ready\r\n', 110, 'pop3', null, null, []],
    [
      '* OK [CAPABILITY IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE LITERAL+ STARTTLS AUTH=PLAIN] Dovecot (Debian) ready.\r\n',
      143,
      'imap',
      'Dovecot imapd',
      null,
      ['cpe:/a:dovecot:dovecot'],
    ],
    [
      '* OK [CAPABILITY IMAP4rev1 LITERAL+ ID ENABLE] mail.example.com Cyrus IMAP 3.6.1 server ready\r\n',
      143,
      'imap',
      'Cyrus imapd',
      '3.6.1',
      ['cpe:/a:cmu:cyrus_imap_server:3.6.1'],
    ],
    [
      '* OK mail.example.com Cyrus IMAP4 v2.4.17-Debian-2.4.17 server ready\r\n',
      143,
      'imap',
      'Cyrus imapd',
      '2.4.17',
      ['cpe:/a:cmu:cyrus_imap_server:2.4.17'],
    ],
    [
      '* OK [CAPABILITY IMAP4rev1 UIDPLUS CHILDREN NAMESPACE] Courier-IMAP ready. Copyright 1998-2018 Double Precision, Inc.\r\n',
      143,
      'imap',
      'Courier Imapd',
      null,
      ['cpe:/a:courier-mta:courier'],
    ],
    ['* OK IMAP4rev1 Service Ready\r\n', 143, 'imap', null, null, []],
    // Others
    ['RFB 003.008\n', 5900, 'vnc', 'VNC', null, []],
    [
      "-ERR unknown command 'HEAD', with args beginning with: '/' 'HTTP/1.0' \r\n",
      6379,
      'redis',
      'Redis key-value store',
      null,
      ['cpe:/a:redislabs:redis'],
    ],
    ['RTSP/1.0 200 OK\r\nCSeq: 1\r\nServer: GStreamer RTSP server\r\n\r\n', 554, 'rtsp', 'GStreamer RTSP server', null, []],
  ])('%j on %i', (banner, port, service, product, version, cpe) => {
    const info = parseGreeting(bytes(banner), port);
    expect(info).not.toBeNull();
    expect(info?.service).toBe(service);
    expect(info?.product).toBe(product);
    expect(info?.version).toBe(version);
    expect(info?.cpe).toEqual(cpe);
  });

  it('keeps the host name and distribution of an SMTP greeting in extra_info', () => {
    expect(parseGreeting(bytes('220 mail.example.com ESMTP Postfix (Debian/GNU)\r\n'), 25)?.extra_info).toBe('Debian/GNU; host mail.example.com');
    expect(parseGreeting(bytes('220 ProFTPD 1.3.5e Server (Debian) [::ffff:192.168.1.10]\r\n'), 21)?.extra_info).toBe('Debian');
  });

  it('recognises telnet option negotiation', () => {
    expect(parseGreeting(Uint8Array.from([0xff, 0xfd, 0x18, 0xff, 0xfd, 0x20]), 23)?.service).toBe('telnet');
  });

  it('returns null for what it does not know', () => {
    expect(parseGreeting(bytes('hello there\n'), 12345)).toBeNull();
    expect(parseGreeting(new Uint8Array(0), 22)).toBeNull();
  });
});

function mysqlHandshake(version: string): Uint8Array {
  const body = Buffer.concat([
    Buffer.from([0x0a]),
    Buffer.from(version, 'latin1'),
    Buffer.from([0]),
    Buffer.from([1, 0, 0, 0]),
    Buffer.alloc(20, 0x41),
    Buffer.from([0]),
  ]);
  const header = Buffer.from([body.length & 0xff, (body.length >> 8) & 0xff, 0, 0]);
  return Buffer.concat([header, body]);
}

function mysqlError(message: string): Uint8Array {
  const body = Buffer.concat([Buffer.from([0xff, 0x6a, 0x04]), Buffer.from(message, 'latin1')]);
  return Buffer.concat([Buffer.from([body.length, 0, 0, 0]), body]);
}

describe('parseMysqlHandshake', () => {
  it.each<[string, string, string, string, string | null]>([
    ['8.0.36', 'MySQL', '8.0.36', 'cpe:/a:mysql:mysql:8.0.36', null],
    ['5.7.42-log', 'MySQL', '5.7.42', 'cpe:/a:mysql:mysql:5.7.42', 'log'],
    ['8.0.35-0ubuntu0.22.04.1', 'MySQL', '8.0.35', 'cpe:/a:mysql:mysql:8.0.35', '0ubuntu0.22.04.1'],
    ['5.5.5-10.11.6-MariaDB-0+deb12u1', 'MariaDB', '10.11.6', 'cpe:/a:mariadb:mariadb:10.11.6', 'package 0+deb12u1'],
    ['11.2.2-MariaDB', 'MariaDB', '11.2.2', 'cpe:/a:mariadb:mariadb:11.2.2', null],
  ])('%s', (version, product, v, cpe, extra) => {
    const info = parseMysqlHandshake(mysqlHandshake(version));
    expect(info).toEqual({ service: 'mysql', product, version: v, extra_info: extra, cpe: [cpe] });
    expect(parseGreeting(mysqlHandshake(version), 3306)?.product).toBe(product);
  });

  it('reads error packets', () => {
    const info = parseMysqlHandshake(mysqlError("Host '10.0.0.5' is not allowed to connect to this MySQL server"));
    expect(info).toMatchObject({ service: 'mysql', product: 'MySQL', extra_info: 'unauthorized', cpe: ['cpe:/a:mysql:mysql'] });
    expect(parseMysqlHandshake(mysqlError("Host '10.0.0.5' is not allowed to connect to this MariaDB server"))?.product).toBe('MariaDB');
  });

  it('rejects what is not a handshake', () => {
    expect(parseMysqlHandshake(bytes('SSH-2.0-OpenSSH_9.2p1\r\n'))).toBeNull();
    expect(parseMysqlHandshake(Uint8Array.from([1, 0, 0, 0, 0x0a]))).toBeNull();
  });
});

describe('parseServerHeader', () => {
  it.each<[string, string | null, string | null, string | null, string[]]>([
    ['nginx/1.18.0', 'nginx', '1.18.0', null, ['cpe:/a:igor_sysoev:nginx:1.18.0']],
    ['nginx/1.18.0 (Ubuntu)', 'nginx', '1.18.0', 'Ubuntu', ['cpe:/a:igor_sysoev:nginx:1.18.0']],
    ['nginx', 'nginx', null, null, ['cpe:/a:igor_sysoev:nginx']],
    ['Apache/2.4.57 (Debian)', 'Apache httpd', '2.4.57', 'Debian', ['cpe:/a:apache:http_server:2.4.57']],
    [
      'Apache/2.4.41 (Ubuntu) OpenSSL/1.1.1f mod_wsgi/4.6.8 Python/3.8',
      'Apache httpd',
      '2.4.41',
      'Ubuntu; OpenSSL/1.1.1f mod_wsgi/4.6.8; Python 3.8',
      ['cpe:/a:apache:http_server:2.4.41', 'cpe:/a:python:python:3.8'],
    ],
    ['Apache', 'Apache httpd', null, null, ['cpe:/a:apache:http_server']],
    ['Apache/2.2.15 (CentOS)', 'Apache httpd', '2.2.15', 'CentOS', ['cpe:/a:apache:http_server:2.2.15']],
    ['lighttpd/1.4.69', 'lighttpd', '1.4.69', null, ['cpe:/a:lighttpd:lighttpd:1.4.69']],
    ['Microsoft-IIS/10.0', 'Microsoft IIS httpd', '10.0', null, ['cpe:/a:microsoft:internet_information_services:10.0', 'cpe:/o:microsoft:windows']],
    ['Microsoft-HTTPAPI/2.0', 'Microsoft HTTPAPI httpd', '2.0', null, ['cpe:/o:microsoft:windows']],
    ['openresty/1.21.4.1', 'OpenResty web app server', '1.21.4.1', null, ['cpe:/a:openresty:ngx_openresty:1.21.4.1']],
    ['Caddy', 'Caddy httpd', null, null, ['cpe:/a:matt_holt:caddy']],
    ['Apache-Coyote/1.1', 'Apache Tomcat/Coyote JSP engine', '1.1', null, ['cpe:/a:apache:coyote_http_connector:1.1']],
    ['Jetty(9.4.44.v20210927)', 'Jetty', '9.4.44.v20210927', null, ['cpe:/a:mortbay:jetty:9.4.44.v20210927']],
    ['Werkzeug/2.0.1 Python/3.9.7', 'Werkzeug httpd', '2.0.1', 'Python 3.9.7', ['cpe:/a:python:python:3.9.7']],
    ['gunicorn/20.1.0', 'Gunicorn', '20.1.0', null, ['cpe:/a:gunicorn:gunicorn:20.1.0']],
    ['gunicorn', 'Gunicorn', null, null, ['cpe:/a:gunicorn:gunicorn']],
    [
      'SimpleHTTP/0.6 Python/3.11.2',
      'SimpleHTTPServer',
      '0.6',
      'Python 3.11.2',
      ['cpe:/a:python:simplehttpserver:0.6', 'cpe:/a:python:python:3.11.2'],
    ],
    ['mini_httpd/1.30 26Oct2018', 'mini_httpd', '1.30', '26Oct2018', ['cpe:/a:acme:mini_httpd:1.30']],
    ['Boa/0.94.14rc21', 'Boa', '0.94.14rc21', null, ['cpe:/a:boa:boa:0.94.14rc21']],
    ['GoAhead-Webs', 'GoAhead WebServer', null, null, ['cpe:/a:goahead:goahead_webserver']],
    ['CherryPy/18.8.0', 'CherryPy httpd', '18.8.0', null, ['cpe:/a:cherrypy:cherrypy:18.8.0']],
    ['TornadoServer/6.3.3', 'Tornado httpd', '6.3.3', null, ['cpe:/a:tornadoweb:tornado:6.3.3']],
    ['WEBrick/1.7.0 (Ruby/3.1.2/2022-04-12)', 'WEBrick httpd', '1.7.0', 'Ruby/3.1.2/2022-04-12', ['cpe:/a:ruby-lang:webrick:1.7.0']],
    ['squid/5.7', 'Squid http proxy', '5.7', null, ['cpe:/a:squid-cache:squid:5.7']],
    ['uvicorn', 'Uvicorn', null, null, []],
    ['Kestrel', 'Kestrel httpd', null, null, ['cpe:/a:microsoft:kestrel']],
    ['CUPS/2.4 IPP/2.1', 'CUPS', '2.4', 'IPP/2.1', ['cpe:/a:apple:cups:2.4']],
    ['cloudflare', 'cloudflare', null, null, []],
    ['MyAppliance/3.2.1', 'MyAppliance', '3.2.1', null, []],
    ['', null, null, null, []],
  ])('%j', (header, product, version, extra, cpe) => {
    expect(parseServerHeader(header)).toEqual({ product, version, extra_info: extra, cpe });
  });
});

describe('parseHttpHead / parseHttpResponse', () => {
  it('parses the status line and headers', () => {
    const head = parseHttpHead(
      'HTTP/1.1 301 Moved Permanently\r\nServer: nginx/1.24.0\r\nLocation: https://x/\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\nbody: not a header\r\n',
    );
    expect(head).toEqual({
      httpVersion: '1.1',
      status: 301,
      reason: 'Moved Permanently',
      headers: { server: 'nginx/1.24.0', location: 'https://x/', 'set-cookie': 'a=1, b=2' },
    });
  });

  it('takes products from the Server header', () => {
    expect(parseHttpResponse('HTTP/1.0 200 OK\r\nServer: Apache/2.4.57 (Debian)\r\n\r\n')).toEqual({
      service: 'http',
      product: 'Apache httpd',
      version: '2.4.57',
      extra_info: 'Debian',
      cpe: ['cpe:/a:apache:http_server:2.4.57'],
    });
    expect(parseHttpResponse('HTTP/1.1 200 OK\r\nX-Powered-By: Express\r\n\r\n')).toMatchObject({
      service: 'http',
      product: 'Node.js',
      cpe: ['cpe:/a:nodejs:node.js'],
    });
    expect(parseHttpResponse('HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm="Router"\r\n\r\n')).toMatchObject({
      service: 'http',
      product: null,
      extra_info: 'realm Router',
    });
    expect(parseHttpResponse('HTTP/1.1 200 OK\r\n\r\n')).toEqual({ service: 'http', product: null, version: null, extra_info: null, cpe: [] });
    expect(parseHttpResponse('SSH-2.0-OpenSSH_9.2p1\r\n')).toBeNull();
  });
});

describe('looksLikeTlsOnly', () => {
  it.each<[Uint8Array | null, boolean]>([
    [Uint8Array.from([0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x46]), true],
    [Uint8Array.from([0x16, 0x03, 0x03, 0x00, 0x10]), true],
    [bytes('HTTP/1.1 400 Bad Request\r\nServer: nginx\r\n\r\n<html><head><title>400 The plain HTTP request was sent to HTTPS port</title>'), true],
    [
      bytes(
        "HTTP/1.1 400 Bad Request\r\n\r\nYour browser sent a request that this server could not understand.<br />\nReason: You're speaking plain HTTP to an SSL-enabled server port.",
      ),
      true,
    ],
    [bytes('HTTP/1.1 200 OK\r\n\r\n'), false],
    [null, false],
  ])('%#', (data, expected) => {
    expect(looksLikeTlsOnly(data)).toBe(expected);
  });
});

describe('identifyService', () => {
  const base: ServiceEvidence = { port: 0, tls: null, greeting: null, response: null };

  it('prefers the greeting, then the HTTP answer, then the port table', () => {
    expect(identifyService({ ...base, port: 2222, greeting: bytes('SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n') })).toMatchObject({
      service: 'ssh',
      product: 'OpenSSH',
    });
    expect(identifyService({ ...base, port: 8080, response: bytes('HTTP/1.1 200 OK\r\nServer: nginx/1.18.0\r\n\r\n') })).toEqual({
      service: 'http',
      product: 'nginx',
      version: '1.18.0',
      extra_info: null,
      cpe: ['cpe:/a:igor_sysoev:nginx:1.18.0'],
    });
    expect(identifyService({ ...base, port: 5432 })).toEqual({
      service: 'postgresql',
      product: null,
      version: null,
      extra_info: null,
      cpe: [],
      service_guessed: true,
    });
    expect(identifyService({ ...base, port: 41234 })).toEqual({ service: null, product: null, version: null, extra_info: null, cpe: [] });
    // An SSH server on a web port says who it is before the HTTP request is answered.
    expect(identifyService({ ...base, port: 8080, response: bytes('SSH-2.0-OpenSSH_9.6\r\nInvalid SSH identification string.\r\n') })).toMatchObject({
      service: 'ssh',
      version: '9.6',
    });
  });

  it('names TLS-wrapped protocols and reports the certificate', () => {
    const tls = { subjectCN: 'nas.example.lan', altNames: 'DNS:nas.example.lan, IP Address:192.168.1.20', protocol: 'TLSv1.3' };
    expect(identifyService({ ...base, port: 443, tls, response: bytes('HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\n\r\n') })).toEqual({
      service: 'https',
      product: 'nginx',
      version: '1.22.1',
      extra_info: 'cert CN=nas.example.lan; SAN=DNS:nas.example.lan, IP:192.168.1.20',
      cpe: ['cpe:/a:igor_sysoev:nginx:1.22.1'],
    });
    expect(identifyService({ ...base, port: 993, tls, greeting: bytes('* OK [CAPABILITY IMAP4rev1] Dovecot ready.\r\n') })).toMatchObject({
      service: 'imaps',
      product: 'Dovecot imapd',
    });
    expect(identifyService({ ...base, port: 465, tls, greeting: bytes('220 mail.example.com ESMTP Postfix\r\n') })).toMatchObject({
      service: 'smtps',
      product: 'Postfix smtpd',
    });
    expect(identifyService({ ...base, port: 8443, tls })).toMatchObject({
      service: 'https-alt',
      product: null,
      extra_info: 'cert CN=nas.example.lan; SAN=DNS:nas.example.lan, IP:192.168.1.20',
    });
    expect(identifyService({ ...base, port: 40443, tls: { subjectCN: null, altNames: null, protocol: 'TLSv1.2' } })).toMatchObject({
      service: 'ssl',
      extra_info: null,
    });
  });

  it('bounds extra_info', () => {
    const tls = { subjectCN: 'x'.repeat(500), altNames: `DNS:${'y'.repeat(500)}`, protocol: null };
    const info = identifyService({ ...base, port: 443, tls });
    expect(info.extra_info?.length).toBeLessThanOrEqual(255);
    expect(describeCertificate({ subjectCN: null, altNames: null, protocol: null })).toBeNull();
  });
});

describe('helpers', () => {
  it('wellKnownService uses nmap-services names', () => {
    expect(wellKnownService(22)).toBe('ssh');
    expect(wellKnownService(445)).toBe('microsoft-ds');
    expect(wellKnownService(3389)).toBe('ms-wbt-server');
    expect(wellKnownService(8080)).toBe('http-proxy');
    expect(wellKnownService(41234)).toBeNull();
  });

  it('bytesToText keeps every byte', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    const text = bytesToText(all);
    expect(text.length).toBe(256);
    expect(Buffer.from(text, 'latin1').equals(Buffer.from(all))).toBe(true);
  });
});

describe('parseRedisInfo', () => {
  const INFO =
    '$412\r\n# Server\r\nredis_version:7.2.4\r\nredis_git_sha1:00000000\r\nredis_mode:standalone\r\nos:Linux 6.1.0-18-amd64 x86_64\r\narch_bits:64\r\ntcp_port:6379\r\n\r\n';

  it('reads the version, mode and OS of INFO server', () => {
    expect(parseRedisInfo(INFO)).toEqual({
      service: 'redis',
      product: 'Redis key-value store',
      version: '7.2.4',
      extra_info: 'mode standalone; os Linux 6.1.0-18-amd64 x86_64',
      cpe: ['cpe:/a:redislabs:redis:7.2.4'],
    });
  });

  it('tells Valkey from Redis', () => {
    expect(
      parseRedisInfo('# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\nredis_mode:standalone\r\n'),
    ).toMatchObject({
      product: 'Valkey',
      version: '8.0.1',
      extra_info: 'mode standalone; Redis 7.2.4 compatible',
    });
  });

  it('gives up on what is not an INFO answer', () => {
    expect(parseRedisInfo('-NOAUTH Authentication required.\r\n')).toBeNull();
    expect(parseRedisInfo('redis_version:banana\r\n')).toBeNull();
    expect(parseRedisInfo('')).toBeNull();
  });

  it('gives identifyService the version when the native engine asked', () => {
    const base: ServiceEvidence = {
      port: 6379,
      tls: null,
      greeting: null,
      response: bytes("-ERR unknown command 'HEAD', with args beginning with: '/' 'HTTP/1.0' \r\n"),
    };
    expect(identifyService({ ...base, info: bytes(INFO) })).toMatchObject({
      service: 'redis',
      version: '7.2.4',
      cpe: ['cpe:/a:redislabs:redis:7.2.4'],
    });
    expect(identifyService({ ...base, info: bytes('-NOAUTH Authentication required.\r\n') })).toMatchObject({
      service: 'redis',
      version: null,
      extra_info: 'authentication required',
    });
    expect(identifyService(base)).toMatchObject({ service: 'redis', version: null, extra_info: null });
    // INFO text on a port that is not Redis is not read.
    expect(
      identifyService({ port: 8080, tls: null, greeting: null, response: bytes('HTTP/1.1 200 OK\r\n\r\n'), info: bytes(INFO) }).version,
    ).toBeNull();
  });
});
