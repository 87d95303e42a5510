/**
 * Service identification from what a TCP service says: its greeting (SSH, FTP, SMTP, POP3, IMAP,
 * MySQL…), its answer to `HEAD / HTTP/1.0`, and its TLS certificate. Pure functions, no I/O: the
 * native scan engine collects the evidence, this module turns it into service, product, version,
 * extra info and CPEs. Product names and CPE vendor:product pairs follow nmap's
 * nmap-service-probes so both engines describe the same software the same way.
 */
import type { ScannedPort } from './model.js';
import { FTP_PORTS, SMTP_PORTS, TLS_PORTS, TLS_SERVICE_NAMES, wellKnownService } from './ports.js';

/** What identifies the service on a port: the identity fields of a port row. */
export type ServiceInfo = Pick<ScannedPort, 'service' | 'product' | 'version' | 'extra_info' | 'cpe' | 'service_guessed'>;

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
  /**
   * The answer to a read-only follow-up question asked once the service is known to be one that
   * answers it: Redis's `INFO server` (the version, which its greeting never says).
   */
  info?: Uint8Array | null;
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

const WINDOWS_CPE = 'cpe:/o:microsoft:windows';

/** One way a greeting names its software: the pattern, and what a match of it says. */
interface BannerRule {
  pattern: RegExp;
  product?: string;
  /** The capture group holding the version. */
  version?: number;
  /** CPE vendor:product, given the version when there is one. */
  cpe?: string;
  /** CPEs added as they are (the operating system; a product whose CPE carries no version). */
  fixedCpe?: string[] | ((m: RegExpMatchArray, context: string) => string[]);
  /** extra_info parts, from the match and the parser's context (the whole text, or the SSH comment). */
  extra?: (m: RegExpMatchArray, context: string) => (string | null | undefined)[];
}

/** The first rule whose pattern matches `text`, as a partial identification; null when none does. */
function matchRules(rules: readonly BannerRule[], service: string, text: string, context: string): Match | null {
  for (const rule of rules) {
    const m = text.match(rule.pattern);
    if (!m) continue;
    const version = rule.version ? (m[rule.version] ?? null) : null;
    const fixed = typeof rule.fixedCpe === 'function' ? rule.fixedCpe(m, context) : (rule.fixedCpe ?? []);
    return {
      service,
      product: rule.product ?? null,
      version,
      extra: rule.extra?.(m, context) ?? [],
      cpe: [...(rule.cpe ? [cpeOf(rule.cpe, version)] : []), ...fixed],
    };
  }
  return null;
}

/* ------------------------------------------------------------------------------------------------
 * SSH
 * --------------------------------------------------------------------------------------------- */

/** The operating system an OpenSSH distribution comment names. */
function sshDistroCpe(distro: string | null): string[] {
  if (distro?.startsWith('Debian') || distro?.startsWith('Raspbian')) return ['cpe:/o:debian:debian_linux'];
  if (distro?.startsWith('Ubuntu')) return ['cpe:/o:canonical:ubuntu_linux'];
  if (distro?.startsWith('FreeBSD')) return ['cpe:/o:freebsd:freebsd'];
  return [];
}

const OPENSSH: Omit<BannerRule, 'pattern'> = {
  product: 'OpenSSH',
  version: 1,
  cpe: 'openbsd:openssh',
  fixedCpe: (_, comment) => sshDistroCpe(distroComment(comment)),
  extra: (m, comment) => [distroComment(comment), m[2] ? `${m[2]} patch` : null],
};

/** SSH implementations by the software field of their identification string; the context is its comment. */
const SSH_RULES: readonly BannerRule[] = [
  {
    pattern: /^OpenSSH_for_Windows_([\w.]+)/,
    product: 'OpenSSH',
    version: 1,
    cpe: 'openbsd:openssh',
    fixedCpe: [WINDOWS_CPE],
    extra: () => ['for Windows'],
  },
  { pattern: /^OpenSSH_([\w.+]+?)(?:[-_](hpn\w+|\w*FIPS\w*|PKIX\S*))?$/, ...OPENSSH },
  { pattern: /^OpenSSH_([\w.]+)/, ...OPENSSH },
  { pattern: /^dropbear(?:_([\w.-]+))?$/i, product: 'Dropbear sshd', version: 1, cpe: 'matt_johnston:dropbear_ssh_server' },
  { pattern: /^libssh[_-]?([\w.-]+)?$/, product: 'libssh', version: 1, cpe: 'libssh:libssh' },
  { pattern: /^Cisco-([\d.]+)$/, product: 'Cisco SSH', version: 1, cpe: 'cisco:ssh', fixedCpe: ['cpe:/o:cisco:ios'] },
  { pattern: /^ROSSSH$/, product: 'MikroTik RouterOS sshd', fixedCpe: ['cpe:/o:mikrotik:routeros'] },
  { pattern: /^Go$/, product: 'Golang x/crypto/ssh server' },
  { pattern: /^AsyncSSH_([\w.]+)$/, product: 'AsyncSSH', version: 1 },
  { pattern: /^paramiko_([\w.]+)$/, product: 'Paramiko Python sshd', version: 1, cpe: 'paramiko:paramiko' },
];

/** `SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3` and friends. */
export function parseSshBanner(text: string): ServiceInfo | null {
  const m = text.match(/^SSH-(\d+\.\d+)-([^\s\r\n]+)(?:[ \t]+([^\r\n]*))?/);
  if (!m) return null;
  const [, protocol, software, comment] = m;
  const proto = `protocol ${protocol}`;
  const known = matchRules(SSH_RULES, 'ssh', software, comment ?? '');
  if (known) return finish({ ...known, extra: [...(known.extra ?? []), proto] });
  // Unknown implementation: keep its self-description as product and version when it looks like `name_1.2`.
  const r = software.match(/^([A-Za-z][\w.-]*?)[_-](\d[\w.-]*)$/);
  if (r) return finish({ service: 'ssh', product: r[1], version: r[2], extra: [distroComment(comment), proto] });
  return finish({ service: 'ssh', product: null, extra: [software ? `software ${software}` : null, proto] });
}

/* ------------------------------------------------------------------------------------------------
 * FTP, SMTP (both greet with 220)
 * --------------------------------------------------------------------------------------------- */

/** FTP servers by their greeting (the whole text). */
const FTP_RULES: readonly BannerRule[] = [
  { pattern: /vsFTPd ([\w.-]+)/i, product: 'vsftpd', version: 1, cpe: 'vsftpd:vsftpd' },
  { pattern: /^500 OOPS: /, product: 'vsftpd', cpe: 'vsftpd:vsftpd', extra: () => ['broken'] },
  {
    pattern: /ProFTPD (\d[\w.]*)/,
    product: 'ProFTPD',
    version: 1,
    cpe: 'proftpd:proftpd',
    extra: (_, text) => [text.match(/ProFTPD \S+ Server \((Debian|Ubuntu)\)/)?.[1]],
  },
  { pattern: /ProFTPD/, product: 'ProFTPD', cpe: 'proftpd:proftpd' },
  { pattern: /Pure-?FTPd(?: (\d[\w.]*))?/i, product: 'Pure-FTPd', version: 1, cpe: 'pureftpd:pure-ftpd' },
  {
    pattern: /FileZilla Server(?: version)?(?: (\d[\w.]*(?: beta)?))?/i,
    product: 'FileZilla ftpd',
    version: 1,
    cpe: 'filezilla-project:filezilla_server',
    fixedCpe: [WINDOWS_CPE],
  },
  {
    pattern: /Microsoft FTP Service(?: \(Version (\d[^)]*)\))?/,
    product: 'Microsoft ftpd',
    version: 1,
    cpe: 'microsoft:ftp_service',
    fixedCpe: [WINDOWS_CPE],
  },
  { pattern: /\bwu-([\d.]+\S*)/, product: 'WU-FTPD', version: 1, cpe: 'washington_university:wu-ftpd' },
  // An FTP server that does not say which.
  { pattern: /\bFTP\b|FTPd|ftpd/i },
];

export function parseFtpBanner(text: string): ServiceInfo | null {
  if (!/^(?:220|120|421|500|530|550)[ -]/.test(text)) return null;
  const known = matchRules(FTP_RULES, 'ftp', text, text);
  return known && finish(known);
}

const host = (m: RegExpMatchArray): string => `host ${m[1]}`;

/** Mail servers by the first line of their greeting; group 1 is the host name they give. */
const SMTP_RULES: readonly BannerRule[] = [
  // Postfix's default banner names no version; `smtpd_banner = $myhostname ESMTP $mail_name ($mail_version)`
  // puts it in the parentheses, where a distribution build puts its name (`(Debian/GNU)`).
  {
    pattern: /^220[ -](\S+) E?SMTP Postfix(?: \((?:(\d+\.\d+(?:\.\d+)?)|([^)]*))\))?/,
    product: 'Postfix smtpd',
    version: 2,
    cpe: 'postfix:postfix',
    extra: (m) => [m[3], host(m)],
  },
  {
    pattern: /^220[ -](\S+) .*\bPostfix\b(?: \((?:(\d+\.\d+(?:\.\d+)?)|([^)]*))\))?/,
    product: 'Postfix smtpd',
    version: 2,
    cpe: 'postfix:postfix',
    extra: (m) => [m[3], host(m)],
  },
  { pattern: /^220[ -](\S+) E?SMTP Exim (V?\d[\w.]*)/, product: 'Exim smtpd', version: 2, cpe: 'exim:exim', extra: (m) => [host(m)] },
  { pattern: /^220[ -](\S+) .*\bExim\b/, product: 'Exim smtpd', cpe: 'exim:exim', extra: (m) => [host(m)] },
  {
    pattern: /^220[ -](\S+) E?SMTP Sendmail (\d[^;/ ]*)(?:\/([^; ]+))?/,
    product: 'Sendmail',
    version: 2,
    cpe: 'sendmail:sendmail',
    extra: (m) => [m[3] ? `config ${m[3]}` : null, host(m)],
  },
  { pattern: /^220[ -](\S+) .*\bSendmail\b/, product: 'Sendmail', cpe: 'sendmail:sendmail', extra: (m) => [host(m)] },
  { pattern: /^220[ -](\S+) E?SMTP OpenSMTPD/, product: 'OpenSMTPD', cpe: 'openbsd:opensmtpd', extra: (m) => [host(m)] },
  {
    pattern: /^220[ -](\S+) Microsoft ESMTP MAIL Service(?:, Version: ([\w.]+))?/,
    product: 'Microsoft Exchange smtpd',
    version: 2,
    fixedCpe: ['cpe:/a:microsoft:exchange_server', WINDOWS_CPE],
    extra: (m) => [host(m)],
  },
  { pattern: /^220[ -](\S+) .*\bqmail\b/i, product: 'qmail smtpd', cpe: 'djb:qmail', extra: (m) => [host(m)] },
  { pattern: /^220[ -](\S+) .*\bHaraka(?:\/([\d.]+))?/, product: 'Haraka smtpd', version: 2, extra: (m) => [host(m)] },
  // A mail server that does not say which: the host, when it looks like a host name.
  { pattern: /^220[ -](\S+) E?SMTP\b/i, extra: (m) => [/^[\w.-]+$/.test(m[1]) ? host(m) : null] },
  { pattern: /^220[ -](\S+) .*\bE?SMTP\b/i, extra: (m) => [/^[\w.-]+$/.test(m[1]) ? host(m) : null] },
];

export function parseSmtpBanner(text: string): ServiceInfo | null {
  const first = firstLine(text);
  if (!/^(?:220|421|554)[ -]/.test(first)) return null;
  const known = matchRules(SMTP_RULES, 'smtp', first, first);
  if (known) return finish(known);
  if (/\bSMTP\b|\bmail\b|\bMTA\b/i.test(first) && !/\bFTP\b/i.test(first)) return finish({ service: 'smtp' });
  return null;
}

/* ------------------------------------------------------------------------------------------------
 * POP3, IMAP
 * --------------------------------------------------------------------------------------------- */

const dovecotDistro = (_: RegExpMatchArray, first: string): (string | undefined)[] => [first.match(/Dovecot \((Debian|Ubuntu)\)/i)?.[1]];

/** POP3 servers by the first line of their greeting. */
const POP3_RULES: readonly BannerRule[] = [
  { pattern: /\bDovecot\b/i, product: 'Dovecot pop3d', cpe: 'dovecot:dovecot', extra: dovecotDistro },
  { pattern: /^\+OK Hello there\./, product: 'Courier pop3d', cpe: 'courier-mta:courier' },
  { pattern: /Cyrus POP3 v?(\d[\w.-]*)/, product: 'Cyrus pop3d', version: 1, cpe: 'cmu:cyrus_imap_server' },
  { pattern: /Qpopper \(version (\d[\w.]*)\)/i, product: 'Qpopper pop3d', version: 1, cpe: 'qualcomm:qpopper' },
  { pattern: /Microsoft Exchange/i, product: 'Microsoft Exchange pop3d', fixedCpe: ['cpe:/a:microsoft:exchange_server', WINDOWS_CPE] },
];

export function parsePop3Banner(text: string): ServiceInfo | null {
  const first = firstLine(text);
  if (!/^\+OK\b/.test(first)) return null;
  return finish(matchRules(POP3_RULES, 'pop3', first, first) ?? { service: 'pop3' });
}

/** IMAP servers by the first line of their greeting. */
const IMAP_RULES: readonly BannerRule[] = [
  { pattern: /\bDovecot\b/i, product: 'Dovecot imapd', cpe: 'dovecot:dovecot', extra: dovecotDistro },
  {
    pattern: /Cyrus IMAP4? (?:Murder )?v?(\d[\w.+-]*?)(?:-(?:Debian|Red Hat|OS X)[^ ]*)? server ready/,
    product: 'Cyrus imapd',
    version: 1,
    cpe: 'cmu:cyrus_imap_server',
  },
  { pattern: /Courier-IMAP/, product: 'Courier Imapd', cpe: 'courier-mta:courier' },
  {
    pattern: /Microsoft Exchange Server (\d+)? ?IMAP4/,
    product: 'Microsoft Exchange imapd',
    version: 1,
    cpe: 'microsoft:exchange_server',
    fixedCpe: [WINDOWS_CPE],
  },
  {
    pattern: /\bUW IMAP4rev1 (?:server )?(?:v|version )?(\d[\w.-]*)/i,
    product: 'UW imapd',
    version: 1,
    cpe: 'university_of_washington:imap_toolkit',
  },
  { pattern: /IMAP4rev1 (20\d\d\.[\w.-]+) at/, product: 'UW imapd', version: 1, cpe: 'university_of_washington:imap_toolkit' },
  // An IMAP server that does not say which.
  { pattern: /IMAP|ready/i },
];

export function parseImapBanner(text: string): ServiceInfo | null {
  const first = firstLine(text);
  if (!/^\* (?:OK|PREAUTH|BYE)\b/.test(first)) return null;
  const known = matchRules(IMAP_RULES, 'imap', first, first);
  return known && finish(known);
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
      return finish({
        service: 'mysql',
        product: 'MariaDB',
        version: maria[1],
        extra: [maria[2] ? `package ${maria[2]}` : null],
        cpe: [cpeOf('mariadb:mariadb', maria[1])],
      });
    }
    const mysql = raw.match(/^(\d+\.\d+\.\d+)(?:-(.+))?$/);
    const version = mysql ? mysql[1] : raw;
    return finish({ service: 'mysql', product: 'MySQL', version, extra: [mysql?.[2] ? mysql[2] : null], cpe: [cpeOf('mysql:mysql', version)] });
  }
  if (bytes[4] === 0xff) {
    const message = clean(bytesToText(bytes.subarray(7, 4 + length)));
    if (/MariaDB/.test(message))
      return finish({
        service: 'mysql',
        product: 'MariaDB',
        extra: [/not allowed/.test(message) ? 'unauthorized' : null],
        cpe: [cpeOf('mariadb:mariadb')],
      });
    if (/MySQL|not allowed to connect|Too many connections|blocked because/i.test(message)) {
      const extra = /not allowed/.test(message)
        ? 'unauthorized'
        : /Too many/.test(message)
          ? 'Too many connections'
          : /blocked/.test(message)
            ? 'blocked - too many connection errors'
            : null;
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
  if (/^-NOAUTH Authentication required/.test(text))
    return finish({ service: 'redis', product: 'Redis key-value store', extra: ['authentication required'], cpe: [cpeOf('redislabs:redis')] });
  if ((r = text.match(/^RTSP\/1\.0 \d{3}/))) {
    const server = text.match(/\r?\nServer: ([^\r\n]+)/i)?.[1];
    return finish({ service: 'rtsp', product: server ? clean(server) : null });
  }
  return null;
}

/**
 * True when the answer to the HTTP request is Redis's error for a command it does not know: a Redis,
 * which answers `INFO` unless it wants a password (Redis checks the command before the password).
 */
export function isRedisAnswer(bytes: Uint8Array | null): boolean {
  if (!bytes || bytes.length === 0) return false;
  return /^-ERR (?:unknown command|wrong number of arguments)/.test(bytesToText(bytes.subarray(0, 200)));
}

/** What the native engine asks a Redis (read-only; the server section only). */
export const REDIS_INFO_REQUEST = 'INFO server\r\n';

/**
 * Redis's (or Valkey's) answer to `INFO`: a RESP bulk string (`$1234\r\n# Server\r\nredis_version:7.2.4…`)
 * of `key:value` lines. The version, the mode and the OS line, with the CPE for CVE matching;
 * null when the text is not an INFO answer.
 */
export function parseRedisInfo(text: string): ServiceInfo | null {
  const body = text.replace(/^\$\d+\r?\n/, '');
  const fields = new Map<string, string>();
  for (const line of body.split(/\r?\n/)) {
    const m = line.match(/^([a-z_]+):(.*)$/);
    if (m) fields.set(m[1], clean(m[2]));
  }
  const redisVersion = fields.get('redis_version');
  if (!redisVersion || !/^\d+\.\d+(?:\.\d+)?$/.test(redisVersion)) return null;
  const mode = fields.get('redis_mode');
  const os = fields.get('os');
  const extra = [mode ? `mode ${mode}` : null, os ? `os ${os.slice(0, 60)}` : null];
  const valkey = fields.get('valkey_version');
  if (fields.get('server_name') === 'valkey' && valkey && /^\d+\.\d+(?:\.\d+)?$/.test(valkey)) {
    return finish({ service: 'redis', product: 'Valkey', version: valkey, extra: [...extra, `Redis ${redisVersion} compatible`] });
  }
  return finish({ service: 'redis', product: 'Redis key-value store', version: redisVersion, extra, cpe: [cpeOf('redislabs:redis', redisVersion)] });
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

// Looked up by token, so the order is free: first those with a CPE of their own, then the others.
const SERVER_RULES: ServerRule[] = [
  { token: 'nginx', product: 'nginx', cpe: 'igor_sysoev:nginx' },
  { token: 'apache', product: 'Apache httpd', cpe: 'apache:http_server' },
  { token: 'lighttpd', product: 'lighttpd', cpe: 'lighttpd:lighttpd' },
  { token: 'openresty', product: 'OpenResty web app server', cpe: 'openresty:ngx_openresty' },
  { token: 'caddy', product: 'Caddy httpd', cpe: 'matt_holt:caddy' },
  { token: 'apache-coyote', product: 'Apache Tomcat/Coyote JSP engine', cpe: 'apache:coyote_http_connector' },
  { token: 'jetty', product: 'Jetty', cpe: 'mortbay:jetty' },
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
  { token: 'microsoft-iis', product: 'Microsoft IIS httpd', cpe: 'microsoft:internet_information_services', extraCpe: [WINDOWS_CPE] },
  { token: 'microsoft-httpapi', product: 'Microsoft HTTPAPI httpd', extraCpe: [WINDOWS_CPE] },
  { token: 'werkzeug', product: 'Werkzeug httpd' },
  { token: 'uvicorn', product: 'Uvicorn' },
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
    if (powered && /^Express$/i.test(powered))
      return { ...info, product: 'Node.js', extra_info: 'Express middleware', cpe: [cpeOf('nodejs:node.js')] };
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
  return /plain HTTP request was sent to HTTPS port|speaking plain HTTP to an SSL-enabled server|Client sent an HTTP request to an HTTPS server|The plain HTTP request was sent/i.test(
    text,
  );
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
    const smtpPort = SMTP_PORTS.has(port);
    const ftpPort = FTP_PORTS.has(port);
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
  if (info?.service === 'redis' && evidence.info && evidence.info.length > 0) {
    const text = bytesToText(evidence.info.subarray(0, 16384));
    const fromInfo = parseRedisInfo(text);
    if (fromInfo) info = fromInfo;
    else if (/^-NOAUTH\b/.test(text)) info = { ...info, extra_info: joinExtra([info.extra_info, 'authentication required']) };
  }
  const recognised = info !== null && info.service !== null;
  if (!info) {
    const guess = wellKnownService(evidence.port);
    info = { ...EMPTY, service: guess, ...(guess !== null && !evidence.tls ? { service_guessed: true } : {}) };
  }
  if (evidence.tls) {
    let service = info.service;
    // A protocol recognised inside TLS takes its TLS name; a port-table name already is one (443 → https).
    if (recognised && service && TLS_SERVICE_NAMES[service]) service = TLS_SERVICE_NAMES[service];
    else if (!recognised) service = TLS_PORTS.has(evidence.port) && service ? service : 'ssl';
    const cert = describeCertificate(evidence.tls);
    info = { ...info, service, extra_info: joinExtra([info.extra_info, cert]) };
  }
  if (info.extra_info && info.extra_info.length > 255) info = { ...info, extra_info: `${info.extra_info.slice(0, 252)}...` };
  return info;
}
