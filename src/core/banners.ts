/**
 * Service identification from what a TCP service says: its greeting (SSH, FTP, SMTP, POP3, IMAP,
 * MySQL…), its answer to `HEAD / HTTP/1.0`, and its TLS certificate. Pure functions, no I/O: the
 * native scan engine collects the evidence, this module turns it into service, product, version,
 * extra info and CPEs. Product names and CPE vendor:product pairs follow nmap's
 * nmap-service-probes so both engines describe the same software the same way.
 */

export interface ServiceInfo {
  service: string | null;
  product: string | null;
  version: string | null;
  extra_info: string | null;
  cpe: string[];
}

export interface TlsEvidence {
  /** Certificate subject common name. */
  subjectCN: string | null;
  /** Node's `subjectaltname` form: `DNS:example.com, IP Address:10.0.0.1`. */
  altNames: string | null;
  /** Negotiated protocol such as `TLSv1.3`. */
  protocol: string | null;
}

export interface ServiceEvidence {
  port: number;
  /** Set when the conversation ran inside TLS. */
  tls: TlsEvidence | null;
  /** What the server sent before we said anything (inside TLS when `tls` is set). */
  greeting: Uint8Array | null;
  /** The answer to our `HEAD / HTTP/1.0` request. */
  response: Uint8Array | null;
}

/** A partial identification: the fields a matcher recognised. */
interface Match {
  service: string;
  product?: string | null;
  version?: string | null;
  extra?: (string | null | undefined)[];
  cpe?: string[];
}

const EMPTY: ServiceInfo = { service: null, product: null, version: null, extra_info: null, cpe: [] };

/* ------------------------------------------------------------------------------------------------
 * Well-known ports (names as in nmap-services), the fallback when nothing was recognised.
 * --------------------------------------------------------------------------------------------- */

const WELL_KNOWN: Record<number, string> = {
  7: 'echo', 13: 'daytime', 20: 'ftp-data', 21: 'ftp', 22: 'ssh', 23: 'telnet', 25: 'smtp',
  37: 'time', 43: 'whois', 49: 'tacacs', 53: 'domain', 67: 'dhcps', 69: 'tftp', 79: 'finger', 80: 'http',
  81: 'hosts2-ns', 88: 'kerberos-sec', 102: 'iso-tsap', 110: 'pop3', 111: 'rpcbind', 113: 'ident', 119: 'nntp',
  123: 'ntp', 135: 'msrpc', 137: 'netbios-ns', 139: 'netbios-ssn', 143: 'imap', 161: 'snmp', 179: 'bgp',
  389: 'ldap', 427: 'svrloc', 443: 'https', 445: 'microsoft-ds', 465: 'smtps', 500: 'isakmp', 502: 'mbap',
  512: 'exec', 513: 'login', 514: 'shell', 515: 'printer', 548: 'afp', 554: 'rtsp', 587: 'submission',
  631: 'ipp', 636: 'ldapssl', 873: 'rsync', 990: 'ftps', 993: 'imaps', 995: 'pop3s', 1080: 'socks',
  1194: 'openvpn', 1433: 'ms-sql-s', 1521: 'oracle', 1723: 'pptp', 1883: 'mqtt', 1900: 'upnp', 2049: 'nfs',
  2375: 'docker', 2376: 'docker', 3000: 'ppp', 3128: 'squid-http', 3268: 'globalcatLDAP', 3306: 'mysql',
  3389: 'ms-wbt-server', 3689: 'rendezvous', 5000: 'upnp', 5060: 'sip', 5222: 'xmpp-client', 5353: 'mdns',
  5432: 'postgresql', 5601: 'esmagent', 5672: 'amqp', 5900: 'vnc', 5985: 'wsman', 5986: 'wsmans',
  6379: 'redis', 6443: 'sun-sr-https', 6667: 'irc', 7000: 'afs3-fileserver', 8000: 'http-alt', 8008: 'http',
  8080: 'http-proxy', 8081: 'blackice-icecap', 8443: 'https-alt', 8883: 'secure-mqtt', 8888: 'sun-answerbook',
  9000: 'cslistener', 9090: 'zeus-admin', 9100: 'jetdirect', 9200: 'wap-wsp', 9418: 'git', 11211: 'memcache',
  27017: 'mongod', 49152: 'unknown', 62078: 'iphone-sync',
};

/** nmap-services name for a TCP port, or null when the port has no usual service. */
export function wellKnownService(port: number): string | null {
  return WELL_KNOWN[port] ?? null;
}

/** Ports where a client speaks first with HTTP: send the request at once instead of waiting. */
export const HTTP_PORTS: ReadonlySet<number> = new Set([
  80, 81, 443, 591, 2375, 3000, 4443, 5000, 5601, 5985, 5986, 7001, 8000, 8008, 8009, 8080, 8081, 8088, 8090, 8181,
  8443, 8888, 9000, 9090, 9200, 9443, 10443,
]);

/** Ports usually spoken inside TLS from the first byte (implicit TLS). */
export const TLS_PORTS: ReadonlySet<number> = new Set([
  443, 465, 563, 636, 853, 989, 990, 992, 993, 994, 995, 2376, 3269, 4443, 5061, 5986, 6443, 6697, 8443, 8883,
  9443, 10443,
]);

/** Services named for their TLS-wrapped form (nmap-services names). */
const TLS_NAMES: Record<string, string> = {
  http: 'https', imap: 'imaps', pop3: 'pop3s', smtp: 'smtps', ftp: 'ftps', ldap: 'ldapssl', nntp: 'nntps',
  irc: 'ircs', telnet: 'telnets', mqtt: 'secure-mqtt',
};

/* ------------------------------------------------------------------------------------------------
 * Helpers
 * --------------------------------------------------------------------------------------------- */

function cpeOf(vendorProduct: string, version?: string | null): string {
  const v = version ? `:${version.toLowerCase().replace(/[^a-z0-9._~+-]/g, '_')}` : '';
  return `cpe:/a:${vendorProduct}${v}`;
}

/** Bytes as Latin-1 text: every byte maps to one character, nothing is lost or replaced. */
export function bytesToText(bytes: Uint8Array | null | undefined): string {
  if (!bytes || bytes.length === 0) return '';
  let out = '';
  for (let i = 0; i < bytes.length; i += 8192) {
    out += String.fromCharCode(...bytes.subarray(i, i + 8192));
  }
  return out;
}

/** The first line without its line ending, control characters removed. */
function firstLine(text: string): string {
  return clean(text.split(/\r?\n/, 1)[0] ?? '');
}

function clean(text: string): string {
  // eslint-disable-next-line no-control-regex -- stripping control characters is the point
  return text.replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '').trim();
}

/** Distribution patch level in an OpenSSH comment, e.g. `Debian-2+deb12u3` → `Debian 2+deb12u3`. */
function distroComment(comment: string | undefined): string | null {
  if (!comment) return null;
  const c = comment.trim();
  if (c === '') return null;
  const m = c.match(/^(Debian|Ubuntu|Raspbian|FreeBSD|NetBSD_Secure_Shell|DragonFly|Devuan)[-_ ](\S+)/);
  if (m) return `${m[1].replace(/_/g, ' ')} ${m[2]}`;
  return c.length <= 60 ? c : `${c.slice(0, 57)}...`;
}

function joinExtra(parts: (string | null | undefined)[]): string | null {
  const kept = parts.map((p) => (p ?? '').trim()).filter((p) => p !== '');
  return kept.length > 0 ? kept.join('; ') : null;
}

function finish(m: Match): ServiceInfo {
  return {
    service: m.service,
    product: m.product ?? null,
    version: m.version ?? null,
    extra_info: joinExtra(m.extra ?? []),
    cpe: m.cpe ?? [],
  };
}

/* ------------------------------------------------------------------------------------------------
 * SSH
 * --------------------------------------------------------------------------------------------- */

/** `SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3` and friends. */
export function parseSshBanner(text: string): ServiceInfo | null {
  const m = text.match(/^SSH-(\d+\.\d+)-([^\s\r\n]+)(?:[ \t]+([^\r\n]*))?/);
  if (!m) return null;
  const [, protocol, software, comment] = m;
  const proto = `protocol ${protocol}`;
  let r: RegExpMatchArray | null;
  if ((r = software.match(/^OpenSSH_for_Windows_([\w.]+)/))) {
    return finish({ service: 'ssh', product: 'OpenSSH', version: r[1], extra: ['for Windows', proto], cpe: [cpeOf('openbsd:openssh', r[1]), 'cpe:/o:microsoft:windows'] });
  }
  if ((r = software.match(/^OpenSSH_([\w.+]+?)(?:[-_](hpn\w+|\w*FIPS\w*|PKIX\S*))?$/)) || (r = software.match(/^OpenSSH_([\w.]+)/))) {
    const version = r[1];
    const distro = distroComment(comment);
    const cpe = [cpeOf('openbsd:openssh', version)];
    if (distro?.startsWith('Debian') || distro?.startsWith('Raspbian')) cpe.push('cpe:/o:debian:debian_linux');
    else if (distro?.startsWith('Ubuntu')) cpe.push('cpe:/o:canonical:ubuntu_linux');
    else if (distro?.startsWith('FreeBSD')) cpe.push('cpe:/o:freebsd:freebsd');
    return finish({ service: 'ssh', product: 'OpenSSH', version, extra: [distro, r[2] ? `${r[2]} patch` : null, proto], cpe });
  }
  if ((r = software.match(/^dropbear(?:_([\w.-]+))?$/i))) {
    const version = r[1] ?? null;
    return finish({ service: 'ssh', product: 'Dropbear sshd', version, extra: [proto], cpe: [cpeOf('matt_johnston:dropbear_ssh_server', version)] });
  }
  if ((r = software.match(/^libssh[_-]?([\w.-]+)?$/))) {
    const version = r[1] ?? null;
    return finish({ service: 'ssh', product: 'libssh', version, extra: [proto], cpe: [cpeOf('libssh:libssh', version)] });
  }
  if ((r = software.match(/^Cisco-([\d.]+)$/))) {
    return finish({ service: 'ssh', product: 'Cisco SSH', version: r[1], extra: [proto], cpe: [cpeOf('cisco:ssh', r[1]), 'cpe:/o:cisco:ios'] });
  }
  if (software === 'ROSSSH') return finish({ service: 'ssh', product: 'MikroTik RouterOS sshd', extra: [proto], cpe: ['cpe:/o:mikrotik:routeros'] });
  if (software === 'Go') return finish({ service: 'ssh', product: 'Golang x/crypto/ssh server', extra: [proto] });
  if ((r = software.match(/^AsyncSSH_([\w.]+)$/))) return finish({ service: 'ssh', product: 'AsyncSSH', version: r[1], extra: [proto] });
  if ((r = software.match(/^paramiko_([\w.]+)$/))) return finish({ service: 'ssh', product: 'Paramiko Python sshd', version: r[1], extra: [proto], cpe: [cpeOf('paramiko:paramiko', r[1])] });
  // Unknown implementation: keep its self-description as product and version when it looks like `name_1.2`.
  if ((r = software.match(/^([A-Za-z][\w.-]*?)[_-](\d[\w.-]*)$/))) {
    return finish({ service: 'ssh', product: r[1], version: r[2], extra: [distroComment(comment), proto] });
  }
  return finish({ service: 'ssh', product: null, extra: [software ? `software ${software}` : null, proto] });
}

/* ------------------------------------------------------------------------------------------------
 * FTP, SMTP (both greet with 220)
 * --------------------------------------------------------------------------------------------- */

export function parseFtpBanner(text: string): ServiceInfo | null {
  if (!/^(?:220|120|421|500|530|550)[ -]/.test(text)) return null;
  let r: RegExpMatchArray | null;
  if ((r = text.match(/vsFTPd ([\w.-]+)/i))) return finish({ service: 'ftp', product: 'vsftpd', version: r[1], cpe: [cpeOf('vsftpd:vsftpd', r[1])] });
  if (/^500 OOPS: /.test(text)) return finish({ service: 'ftp', product: 'vsftpd', extra: ['broken'], cpe: [cpeOf('vsftpd:vsftpd')] });
  if ((r = text.match(/ProFTPD (\d[\w.]*)/))) {
    const distro = text.match(/ProFTPD \S+ Server \((Debian|Ubuntu)\)/)?.[1];
    return finish({ service: 'ftp', product: 'ProFTPD', version: r[1], extra: [distro], cpe: [cpeOf('proftpd:proftpd', r[1])] });
  }
  if (/ProFTPD/.test(text)) return finish({ service: 'ftp', product: 'ProFTPD', cpe: [cpeOf('proftpd:proftpd')] });
  if ((r = text.match(/Pure-?FTPd(?: (\d[\w.]*))?/i))) {
    return finish({ service: 'ftp', product: 'Pure-FTPd', version: r[1] ?? null, cpe: [cpeOf('pureftpd:pure-ftpd', r[1])] });
  }
  if ((r = text.match(/FileZilla Server(?: version)?(?: (\d[\w.]*(?: beta)?))?/i))) {
    const version = r[1] ?? null;
    return finish({ service: 'ftp', product: 'FileZilla ftpd', version, cpe: [cpeOf('filezilla-project:filezilla_server', version?.replace(/ /g, '_')), 'cpe:/o:microsoft:windows'] });
  }
  if ((r = text.match(/Microsoft FTP Service(?: \(Version (\d[^)]*)\))?/))) {
    const version = r[1] ?? null;
    return finish({ service: 'ftp', product: 'Microsoft ftpd', version, cpe: [cpeOf('microsoft:ftp_service', version), 'cpe:/o:microsoft:windows'] });
  }
  if ((r = text.match(/\bwu-([\d.]+\S*)/))) return finish({ service: 'ftp', product: 'WU-FTPD', version: r[1], cpe: [cpeOf('washington_university:wu-ftpd', r[1])] });
  if (/\bFTP\b|FTPd|ftpd/i.test(text)) return finish({ service: 'ftp' });
  return null;
}

export function parseSmtpBanner(text: string): ServiceInfo | null {
  const first = firstLine(text);
  if (!/^(?:220|421|554)[ -]/.test(first)) return null;
  let r: RegExpMatchArray | null;
  if ((r = first.match(/^220[ -](\S+) E?SMTP Postfix(?: \(([^)]*)\))?/)) || (r = first.match(/^220[ -](\S+) .*\bPostfix\b(?: \(([^)]*)\))?/))) {
    return finish({ service: 'smtp', product: 'Postfix smtpd', extra: [r[2], `host ${r[1]}`], cpe: [cpeOf('postfix:postfix')] });
  }
  if ((r = first.match(/^220[ -](\S+) E?SMTP Exim (V?\d[\w.]*)/))) {
    return finish({ service: 'smtp', product: 'Exim smtpd', version: r[2], extra: [`host ${r[1]}`], cpe: [cpeOf('exim:exim', r[2])] });
  }
  if ((r = first.match(/^220[ -](\S+) .*\bExim\b/))) return finish({ service: 'smtp', product: 'Exim smtpd', extra: [`host ${r[1]}`], cpe: [cpeOf('exim:exim')] });
  if ((r = first.match(/^220[ -](\S+) E?SMTP Sendmail (\d[^;/ ]*)(?:\/([^; ]+))?/))) {
    return finish({ service: 'smtp', product: 'Sendmail', version: r[2], extra: [r[3] ? `config ${r[3]}` : null, `host ${r[1]}`], cpe: [cpeOf('sendmail:sendmail', r[2])] });
  }
  if ((r = first.match(/^220[ -](\S+) .*\bSendmail\b/))) return finish({ service: 'smtp', product: 'Sendmail', extra: [`host ${r[1]}`], cpe: [cpeOf('sendmail:sendmail')] });
  if ((r = first.match(/^220[ -](\S+) E?SMTP OpenSMTPD/))) return finish({ service: 'smtp', product: 'OpenSMTPD', extra: [`host ${r[1]}`], cpe: [cpeOf('openbsd:opensmtpd')] });
  if ((r = first.match(/^220[ -](\S+) Microsoft ESMTP MAIL Service(?:, Version: ([\w.]+))?/))) {
    return finish({ service: 'smtp', product: 'Microsoft Exchange smtpd', version: r[2] ?? null, extra: [`host ${r[1]}`], cpe: [cpeOf('microsoft:exchange_server'), 'cpe:/o:microsoft:windows'] });
  }
  if ((r = first.match(/^220[ -](\S+) .*\bqmail\b/i))) return finish({ service: 'smtp', product: 'qmail smtpd', extra: [`host ${r[1]}`], cpe: [cpeOf('djb:qmail')] });
  if ((r = first.match(/^220[ -](\S+) .*\bHaraka(?:\/([\d.]+))?/))) return finish({ service: 'smtp', product: 'Haraka smtpd', version: r[2] ?? null, extra: [`host ${r[1]}`] });
  if ((r = first.match(/^220[ -](\S+) E?SMTP\b/i)) || (r = first.match(/^220[ -](\S+) .*\bE?SMTP\b/i))) {
    return finish({ service: 'smtp', extra: [/^[\w.-]+$/.test(r[1]) ? `host ${r[1]}` : null] });
  }
  if (/\bSMTP\b|\bmail\b|\bMTA\b/i.test(first) && !/\bFTP\b/i.test(first)) return finish({ service: 'smtp' });
  return null;
}

/* ------------------------------------------------------------------------------------------------
 * POP3, IMAP
 * --------------------------------------------------------------------------------------------- */

export function parsePop3Banner(text: string): ServiceInfo | null {
  const first = firstLine(text);
  if (!/^\+OK\b/.test(first)) return null;
  let r: RegExpMatchArray | null;
  if (/\bDovecot\b/i.test(first)) {
    const distro = first.match(/Dovecot \((Debian|Ubuntu)\)/i)?.[1];
    return finish({ service: 'pop3', product: 'Dovecot pop3d', extra: [distro], cpe: [cpeOf('dovecot:dovecot')] });
  }
  if (/^\+OK Hello there\./.test(first)) return finish({ service: 'pop3', product: 'Courier pop3d', cpe: [cpeOf('courier-mta:courier')] });
  if ((r = first.match(/Cyrus POP3 v?(\d[\w.-]*)/))) return finish({ service: 'pop3', product: 'Cyrus pop3d', version: r[1], cpe: [cpeOf('cmu:cyrus_imap_server', r[1])] });
  if ((r = first.match(/Qpopper \(version (\d[\w.]*)\)/i))) return finish({ service: 'pop3', product: 'Qpopper pop3d', version: r[1], cpe: [cpeOf('qualcomm:qpopper', r[1])] });
  if (/Microsoft Exchange/i.test(first)) return finish({ service: 'pop3', product: 'Microsoft Exchange pop3d', cpe: [cpeOf('microsoft:exchange_server'), 'cpe:/o:microsoft:windows'] });
  return finish({ service: 'pop3' });
}

export function parseImapBanner(text: string): ServiceInfo | null {
  const first = firstLine(text);
  if (!/^\* (?:OK|PREAUTH|BYE)\b/.test(first)) return null;
  let r: RegExpMatchArray | null;
  if (/\bDovecot\b/i.test(first)) {
    const distro = first.match(/Dovecot \((Debian|Ubuntu)\)/i)?.[1];
    return finish({ service: 'imap', product: 'Dovecot imapd', extra: [distro], cpe: [cpeOf('dovecot:dovecot')] });
  }
  if ((r = first.match(/Cyrus IMAP4? (?:Murder )?v?(\d[\w.+-]*?)(?:-(?:Debian|Red Hat|OS X)[^ ]*)? server ready/))) {
    return finish({ service: 'imap', product: 'Cyrus imapd', version: r[1], cpe: [cpeOf('cmu:cyrus_imap_server', r[1])] });
  }
  if (/Courier-IMAP/.test(first)) return finish({ service: 'imap', product: 'Courier Imapd', cpe: [cpeOf('courier-mta:courier')] });
  if ((r = first.match(/Microsoft Exchange Server (\d+)? ?IMAP4/))) {
    return finish({ service: 'imap', product: 'Microsoft Exchange imapd', version: r[1] ?? null, cpe: [cpeOf('microsoft:exchange_server', r[1]), 'cpe:/o:microsoft:windows'] });
  }
  if ((r = first.match(/\bUW IMAP4rev1 (?:server )?(?:v|version )?(\d[\w.-]*)/i)) || (r = first.match(/IMAP4rev1 (20\d\d\.[\w.-]+) at/))) {
    return finish({ service: 'imap', product: 'UW imapd', version: r[1], cpe: [cpeOf('university_of_washington:imap_toolkit', r[1])] });
  }
  if (/IMAP|ready/i.test(first)) return finish({ service: 'imap' });
  return null;
}

/* ------------------------------------------------------------------------------------------------
 * MySQL / MariaDB (binary handshake), VNC, telnet
 * --------------------------------------------------------------------------------------------- */

/**
 * MySQL's initial handshake packet: 3-byte little-endian length, sequence id 0, protocol version
 * 10, then the server version as a NUL-terminated string. An error packet (0xff) carries a message.
 */
export function parseMysqlHandshake(bytes: Uint8Array): ServiceInfo | null {
  if (bytes.length < 6) return null;
  const length = bytes[0] | (bytes[1] << 8) | (bytes[2] << 16);
  if (bytes[3] !== 0 || length < 2 || length > 1024) return null;
  if (bytes[4] === 0x0a) {
    const end = bytes.indexOf(0, 5);
    if (end < 0 || end - 5 > 80) return null;
    const raw = bytesToText(bytes.subarray(5, end));
    if (!/^\d+\.\d+[\w.+~:-]*$/.test(raw)) return null;
    const maria = raw.match(/^(?:5\.5\.5-)?(\d+\.\d+\.\d+)-MariaDB(?:-(.+))?$/);
    if (maria) {
      return finish({ service: 'mysql', product: 'MariaDB', version: maria[1], extra: [maria[2] ? `package ${maria[2]}` : null], cpe: [cpeOf('mariadb:mariadb', maria[1])] });
    }
    const mysql = raw.match(/^(\d+\.\d+\.\d+)(?:-(.+))?$/);
    const version = mysql ? mysql[1] : raw;
    return finish({ service: 'mysql', product: 'MySQL', version, extra: [mysql?.[2] ? mysql[2] : null], cpe: [cpeOf('mysql:mysql', version)] });
  }
  if (bytes[4] === 0xff) {
    const message = clean(bytesToText(bytes.subarray(7, 4 + length)));
    if (/MariaDB/.test(message)) return finish({ service: 'mysql', product: 'MariaDB', extra: [/not allowed/.test(message) ? 'unauthorized' : null], cpe: [cpeOf('mariadb:mariadb')] });
    if (/MySQL|not allowed to connect|Too many connections|blocked because/i.test(message)) {
      const extra = /not allowed/.test(message) ? 'unauthorized' : /Too many/.test(message) ? 'Too many connections' : /blocked/.test(message) ? 'blocked - too many connection errors' : null;
      return finish({ service: 'mysql', product: 'MySQL', extra: [extra], cpe: [cpeOf('mysql:mysql')] });
    }
  }
  return null;
}

function parseMiscGreeting(text: string, bytes: Uint8Array): ServiceInfo | null {
  let r: RegExpMatchArray | null;
  if ((r = text.match(/^RFB (\d{3})\.(\d{3})\n/))) {
    return finish({ service: 'vnc', product: 'VNC', extra: [`protocol ${Number(r[1])}.${Number(r[2])}`] });
  }
  if (bytes[0] === 0xff && bytes.length >= 3 && bytes[1] >= 0xfb && bytes[1] <= 0xfe) return finish({ service: 'telnet' });
  if (/^AMQP/.test(text)) return finish({ service: 'amqp' });
  if ((r = text.match(/^-ERR (?:unknown command|wrong number of arguments|operation not permitted|NOAUTH)/))) {
    return finish({ service: 'redis', product: 'Redis key-value store', cpe: [cpeOf('redislabs:redis')] });
  }
  if (/^-NOAUTH Authentication required/.test(text)) return finish({ service: 'redis', product: 'Redis key-value store', extra: ['authentication required'], cpe: [cpeOf('redislabs:redis')] });
  if ((r = text.match(/^RTSP\/1\.0 \d{3}/))) {
    const server = text.match(/\r?\nServer: ([^\r\n]+)/i)?.[1];
    return finish({ service: 'rtsp', product: server ? clean(server) : null });
  }
  return null;
}

/* ------------------------------------------------------------------------------------------------
 * HTTP
 * --------------------------------------------------------------------------------------------- */

export interface HttpHead {
  httpVersion: string;
  status: number;
  reason: string;
  /** Header names in lower case; repeated headers joined with `, `. */
  headers: Record<string, string>;
}

/** Status line and headers of an HTTP response; null when the text is not an HTTP response. */
export function parseHttpHead(text: string): HttpHead | null {
  const m = text.match(/^HTTP\/(\d(?:\.\d)?) (\d{3})(?: ([^\r\n]*))?\r?\n/);
  if (!m) return null;
  const headers: Record<string, string> = {};
  const endOfHead = text.search(/\r?\n\r?\n/);
  const head = text.slice(m[0].length, endOfHead < 0 ? text.length : endOfHead + 1);
  for (const line of head.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = clean(line.slice(colon + 1));
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) continue;
    headers[name] = headers[name] !== undefined ? `${headers[name]}, ${value}` : value;
  }
  return { httpVersion: m[1], status: Number(m[2]), reason: clean(m[3] ?? ''), headers };
}

interface ServerRule {
  /** Case-insensitive product token as it appears before `/version`. */
  token: string;
  product: string;
  cpe?: string;
  extraCpe?: string[];
}

const SERVER_RULES: ServerRule[] = [
  { token: 'nginx', product: 'nginx', cpe: 'igor_sysoev:nginx' },
  { token: 'apache', product: 'Apache httpd', cpe: 'apache:http_server' },
  { token: 'lighttpd', product: 'lighttpd', cpe: 'lighttpd:lighttpd' },
  { token: 'microsoft-iis', product: 'Microsoft IIS httpd', cpe: 'microsoft:internet_information_services', extraCpe: ['cpe:/o:microsoft:windows'] },
  { token: 'microsoft-httpapi', product: 'Microsoft HTTPAPI httpd', extraCpe: ['cpe:/o:microsoft:windows'] },
  { token: 'openresty', product: 'OpenResty web app server', cpe: 'openresty:ngx_openresty' },
  { token: 'caddy', product: 'Caddy httpd', cpe: 'matt_holt:caddy' },
  { token: 'apache-coyote', product: 'Apache Tomcat/Coyote JSP engine', cpe: 'apache:coyote_http_connector' },
  { token: 'jetty', product: 'Jetty', cpe: 'mortbay:jetty' },
  { token: 'werkzeug', product: 'Werkzeug httpd' },
  { token: 'gunicorn', product: 'Gunicorn', cpe: 'gunicorn:gunicorn' },
  { token: 'simplehttp', product: 'SimpleHTTPServer', cpe: 'python:simplehttpserver' },
  { token: 'basehttp', product: 'BaseHTTPServer', cpe: 'python:basehttpserver' },
  { token: 'mini_httpd', product: 'mini_httpd', cpe: 'acme:mini_httpd' },
  { token: 'thttpd', product: 'thttpd', cpe: 'acme:thttpd' },
  { token: 'boa', product: 'Boa', cpe: 'boa:boa' },
  { token: 'goahead-webs', product: 'GoAhead WebServer', cpe: 'goahead:goahead_webserver' },
  { token: 'cherrypy', product: 'CherryPy httpd', cpe: 'cherrypy:cherrypy' },
  { token: 'tornadoserver', product: 'Tornado httpd', cpe: 'tornadoweb:tornado' },
  { token: 'webrick', product: 'WEBrick httpd', cpe: 'ruby-lang:webrick' },
  { token: 'cowboy', product: 'Cowboy httpd', cpe: 'ninenines:cowboy' },
  { token: 'squid', product: 'Squid http proxy', cpe: 'squid-cache:squid' },
  { token: 'varnish', product: 'Varnish http accelerator', cpe: 'varnish-cache:varnish' },
  { token: 'uvicorn', product: 'Uvicorn' },
  { token: 'kestrel', product: 'Kestrel httpd', cpe: 'microsoft:kestrel' },
  { token: 'envoy', product: 'Envoy proxy', cpe: 'envoyproxy:envoy' },
  { token: 'traefik', product: 'Traefik', cpe: 'traefik:traefik' },
  { token: 'minio', product: 'MinIO', cpe: 'minio:minio' },
  { token: 'cupsd', product: 'CUPS', cpe: 'apple:cups' },
  { token: 'cups', product: 'CUPS', cpe: 'apple:cups' },
  { token: 'micro_httpd', product: 'micro_httpd', cpe: 'acme:micro_httpd' },
  { token: 'mongoose', product: 'Mongoose httpd', cpe: 'cesanta:mongoose' },
  { token: 'tengine', product: 'Tengine httpd', cpe: 'alibaba:tengine' },
  { token: 'h2o', product: 'H2O http server', cpe: 'dena:h2o' },
  { token: 'python', product: 'Python http.server', cpe: 'python:python' },
];

const SERVER_BY_TOKEN = new Map(SERVER_RULES.map((r) => [r.token, r]));

/**
 * Product and version from an HTTP `Server` header: `nginx/1.18.0 (Ubuntu)` → nginx 1.18.0,
 * extra `Ubuntu`; `Apache/2.4.57 (Debian) OpenSSL/3.0.11` → Apache httpd 2.4.57, extra
 * `Debian; OpenSSL/3.0.11`; `Jetty(9.4.44.v20210927)` → Jetty 9.4.44.v20210927.
 */
export function parseServerHeader(value: string): Omit<ServiceInfo, 'service'> {
  const text = clean(value).slice(0, 300);
  if (text === '') return { product: null, version: null, extra_info: null, cpe: [] };
  // Jetty's `Jetty(9.4.44.v20210927)` form.
  const jetty = text.match(/^Jetty\(([\w.-]+)\)/i);
  if (jetty) return { product: 'Jetty', version: jetty[1], extra_info: null, cpe: [cpeOf('mortbay:jetty', jetty[1])] };
  // First token `name[/version]` followed by comments `(…)` and further `name/version` tokens.
  const m = text.match(/^([A-Za-z][\w.+-]*?)(?:[/ ]v?(\d[\w.+~-]*))?(?=$|[\s(;,])(.*)$/);
  if (!m) return { product: text.slice(0, 80), version: null, extra_info: null, cpe: [] };
  const [, token, version = null, restText] = m;
  const rest = restText.trim();
  const comments: string[] = [];
  const others: string[] = [];
  for (const part of rest.match(/\([^)]*\)|[^\s()]+/g) ?? []) {
    if (part.startsWith('(')) comments.push(part.slice(1, -1).trim());
    else others.push(part);
  }
  const rule = SERVER_BY_TOKEN.get(token.toLowerCase());
  // Werkzeug and SimpleHTTP name the Python version after them: `Werkzeug/2.0.1 Python/3.9.7`.
  const python = (others.find((o) => /^Python\//.test(o)) ?? '').match(/^Python\/([\w.+]+)$/);
  const extraParts = [...comments, others.filter((o) => !python || !/^Python\//.test(o)).join(' ')];
  if (python) extraParts.push(`Python ${python[1]}`);
  const cpe: string[] = [];
  if (rule?.cpe) cpe.push(cpeOf(rule.cpe, version));
  if (python && rule && rule.token !== 'python') cpe.push(cpeOf('python:python', python[1]));
  if (rule?.extraCpe) cpe.push(...rule.extraCpe);
  return {
    product: rule ? rule.product : token,
    version,
    extra_info: joinExtra(extraParts),
    cpe,
  };
}

export function parseHttpResponse(text: string): ServiceInfo | null {
  const head = parseHttpHead(text);
  if (!head) return null;
  const server = head.headers['server'];
  const info: ServiceInfo = server ? { service: 'http', ...parseServerHeader(server) } : { ...EMPTY, service: 'http' };
  if (!server) {
    const powered = head.headers['x-powered-by'];
    if (powered && /^Express$/i.test(powered)) return { ...info, product: 'Node.js', extra_info: 'Express middleware', cpe: [cpeOf('nodejs:node.js')] };
    if (/^Basic realm=|^Digest realm=/i.test(head.headers['www-authenticate'] ?? '')) {
      const realm = (head.headers['www-authenticate'] ?? '').match(/realm="?([^",]*)/i)?.[1];
      return { ...info, extra_info: realm ? `realm ${clean(realm).slice(0, 60)}` : null };
    }
  }
  return info;
}

/** True when an answer to a plain-text request says the port wants TLS. */
export function looksLikeTlsOnly(bytes: Uint8Array | null): boolean {
  if (!bytes || bytes.length === 0) return false;
  // A TLS record (alert 0x15 or handshake 0x16) with version 3.x.
  if ((bytes[0] === 0x15 || bytes[0] === 0x16) && bytes[1] === 0x03) return true;
  const text = bytesToText(bytes.subarray(0, 2048));
  return /plain HTTP request was sent to HTTPS port|speaking plain HTTP to an SSL-enabled server|Client sent an HTTP request to an HTTPS server|The plain HTTP request was sent/i.test(text);
}

/* ------------------------------------------------------------------------------------------------
 * Everything together
 * --------------------------------------------------------------------------------------------- */

/** Parses a greeting (what the server says first). */
export function parseGreeting(bytes: Uint8Array, port: number): ServiceInfo | null {
  if (bytes.length === 0) return null;
  const mysql = parseMysqlHandshake(bytes);
  if (mysql) return mysql;
  const text = bytesToText(bytes.subarray(0, 8192));
  const ssh = parseSshBanner(text);
  if (ssh) return ssh;
  if (/^500 OOPS: /.test(text)) return parseFtpBanner(text);
  if (/^(?:220|421|554)[ -]/.test(text)) {
    // FTP and SMTP both greet with 220; the text usually says which, the port decides otherwise.
    const smtpPort = [25, 465, 587, 2525].includes(port);
    const ftpPort = [21, 990, 2121].includes(port);
    const saysFtp = /\bFTP\b|FTPd|ftpd|FileZilla|ProFTPD/i.test(text);
    const saysSmtp = /\bE?SMTP\b|Postfix|Exim|Sendmail|\bMTA\b|\bmail\b/i.test(firstLine(text));
    if (saysFtp && !saysSmtp) return parseFtpBanner(text) ?? finish({ service: 'ftp' });
    if (saysSmtp && !saysFtp) return parseSmtpBanner(text) ?? finish({ service: 'smtp' });
    if (ftpPort) return parseFtpBanner(text) ?? finish({ service: 'ftp' });
    if (smtpPort) return parseSmtpBanner(text) ?? finish({ service: 'smtp' });
    return parseSmtpBanner(text) ?? parseFtpBanner(text);
  }
  const pop3 = parsePop3Banner(text);
  if (pop3) return pop3;
  const imap = parseImapBanner(text);
  if (imap) return imap;
  const http = parseHttpResponse(text);
  if (http) return http;
  return parseMiscGreeting(text, bytes);
}

/** Summary of a TLS certificate for extra_info: `cert CN=example.com; SAN=DNS:example.com, …`. */
export function describeCertificate(tls: TlsEvidence): string | null {
  const parts: string[] = [];
  if (tls.subjectCN) parts.push(`cert CN=${clean(tls.subjectCN).slice(0, 100)}`);
  if (tls.altNames) {
    const names = clean(tls.altNames).replace(/IP Address:/g, 'IP:');
    parts.push(`SAN=${names.length > 160 ? `${names.slice(0, 157)}...` : names}`);
  }
  return parts.length > 0 ? parts.join('; ') : null;
}

/**
 * The service on a port from everything collected about it. Recognised greetings win, then the
 * HTTP answer, then the well-known port name; TLS wraps the name (`http` → `https`) and adds the
 * certificate names to extra_info.
 */
export function identifyService(evidence: ServiceEvidence): ServiceInfo {
  let info: ServiceInfo | null = null;
  if (evidence.greeting && evidence.greeting.length > 0) info = parseGreeting(evidence.greeting, evidence.port);
  if ((!info || info.product === null) && evidence.response && evidence.response.length > 0) {
    const fromResponse = parseGreeting(evidence.response, evidence.port);
    if (fromResponse && (!info || fromResponse.service === info.service || info.service === null)) info = fromResponse;
  }
  const recognised = info !== null && info.service !== null;
  if (!info) info = { ...EMPTY, service: wellKnownService(evidence.port) };
  if (evidence.tls) {
    let service = info.service;
    // A protocol recognised inside TLS takes its TLS name; a port-table name already is one (443 → https).
    if (recognised && service && TLS_NAMES[service]) service = TLS_NAMES[service];
    else if (!recognised) service = TLS_PORTS.has(evidence.port) && service ? service : 'ssl';
    const cert = describeCertificate(evidence.tls);
    info = { ...info, service, extra_info: joinExtra([info.extra_info, cert]) };
  }
  if (info.extra_info && info.extra_info.length > 255) info = { ...info, extra_info: `${info.extra_info.slice(0, 252)}...` };
  return info;
}
