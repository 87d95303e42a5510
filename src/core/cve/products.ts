/**
 * Which dataset products a port is. nmap's product names and CPEs and NVD's CPE vendor:product
 * names differ for the same software (`Apache httpd`, `apache:httpd`, `apache:http_server`): an
 * alias table maps them all to one key per product, under which the dataset is indexed.
 */
import type { ScannedPort } from '../model.js';
import { parseCpe } from './cpe.js';

interface ProductAlias {
  /** Stable group id (the first CPE). */
  id: string;
  /** Name shown when the port has no product name of its own. */
  label: string;
  /** Every CPE vendor:product that names this product (nmap's, NVD's old and new names). */
  cpes: string[];
  /** nmap / native-engine product names, compared case-insensitively. */
  names?: string[];
  /** Product name patterns for names that vary (`RealVNC Enterprise`). */
  patterns?: RegExp[];
}

/**
 * nmap's product names and CPEs (nmap-service-probes, 7.93) and NVD's CPE names for the products
 * the dataset covers. Products not listed still match when the port's CPE equals the dataset's.
 */
export const PRODUCT_ALIASES: readonly ProductAlias[] = [
  { id: 'openbsd:openssh', label: 'OpenSSH', cpes: ['openbsd:openssh'], names: ['OpenSSH'] },
  {
    id: 'dropbear_ssh_project:dropbear_ssh',
    label: 'Dropbear sshd',
    cpes: ['dropbear_ssh_project:dropbear_ssh', 'matt_johnston:dropbear_ssh_server', 'matt_johnston:dropbear_ssh'],
    names: ['Dropbear sshd'],
  },
  { id: 'apache:http_server', label: 'Apache httpd', cpes: ['apache:http_server', 'apache:httpd'], names: ['Apache httpd'] },
  { id: 'f5:nginx', label: 'nginx', cpes: ['f5:nginx', 'nginx:nginx', 'igor_sysoev:nginx', 'f5:nginx_open_source'], names: ['nginx'] },
  { id: 'lighttpd:lighttpd', label: 'lighttpd', cpes: ['lighttpd:lighttpd'], names: ['lighttpd'] },
  {
    id: 'microsoft:internet_information_services',
    label: 'Microsoft IIS httpd',
    cpes: ['microsoft:internet_information_services', 'microsoft:iis'],
    names: ['Microsoft IIS httpd', 'Microsoft IIS WebDAV'],
  },
  { id: 'samba:samba', label: 'Samba smbd', cpes: ['samba:samba'], names: ['Samba smbd'] },
  { id: 'beasts:vsftpd', label: 'vsftpd', cpes: ['beasts:vsftpd', 'vsftpd:vsftpd', 'vsftpd_project:vsftpd'], names: ['vsftpd'] },
  { id: 'proftpd:proftpd', label: 'ProFTPD', cpes: ['proftpd:proftpd', 'proftpd_project:proftpd'], names: ['ProFTPD'] },
  { id: 'pureftpd:pure-ftpd', label: 'Pure-FTPd', cpes: ['pureftpd:pure-ftpd', 'pure-ftpd:pure-ftpd'], names: ['Pure-FTPd'] },
  { id: 'exim:exim', label: 'Exim smtpd', cpes: ['exim:exim'], names: ['Exim smtpd'] },
  { id: 'postfix:postfix', label: 'Postfix smtpd', cpes: ['postfix:postfix'], names: ['Postfix smtpd'] },
  {
    id: 'dovecot:dovecot',
    label: 'Dovecot',
    cpes: ['dovecot:dovecot'],
    names: ['Dovecot imapd', 'Dovecot pop3d', 'Dovecot', 'Dovecot ManageSieve', 'Dovecot Pigeonhole sieve'],
  },
  { id: 'oracle:mysql', label: 'MySQL', cpes: ['oracle:mysql', 'mysql:mysql', 'oracle:mysql_server'], names: ['MySQL'] },
  { id: 'mariadb:mariadb', label: 'MariaDB', cpes: ['mariadb:mariadb'], names: ['MariaDB'] },
  { id: 'postgresql:postgresql', label: 'PostgreSQL', cpes: ['postgresql:postgresql'], names: ['PostgreSQL DB', 'PostgreSQL'] },
  { id: 'redis:redis', label: 'Redis', cpes: ['redis:redis', 'redislabs:redis'], names: ['Redis key-value store', 'Redis'] },
  { id: 'mongodb:mongodb', label: 'MongoDB', cpes: ['mongodb:mongodb'], names: ['MongoDB'] },
  {
    id: 'elastic:elasticsearch',
    label: 'Elasticsearch',
    cpes: ['elastic:elasticsearch', 'elasticsearch:elasticsearch'],
    names: ['Elasticsearch REST API', 'Elasticsearch'],
  },
  { id: 'memcached:memcached', label: 'Memcached', cpes: ['memcached:memcached', 'memcachedb:memcached'], names: ['Memcached'] },
  {
    id: 'miniupnp_project:miniupnpd',
    label: 'MiniUPnP',
    cpes: ['miniupnp_project:miniupnpd', 'miniupnp:miniupnpd'],
    names: ['MiniUPnP', 'miniupnpd'],
  },
  { id: 'busybox:busybox', label: 'BusyBox', cpes: ['busybox:busybox'], patterns: [/^busybox\b/i] },
  {
    id: 'embedthis:goahead',
    label: 'GoAhead WebServer',
    cpes: ['embedthis:goahead', 'goahead:goahead_webserver', 'embedthis:goahead_webserver'],
    names: ['GoAhead WebServer', 'GoAhead-Webs'],
  },
  { id: 'boa:boa', label: 'Boa', cpes: ['boa:boa'], names: ['Boa', 'Boa HTTPd', 'Boa httpd'] },
  { id: 'acme:mini_httpd', label: 'mini_httpd', cpes: ['acme:mini_httpd', 'acme_labs:mini_httpd'], names: ['mini_httpd'] },
  { id: 'acme:thttpd', label: 'thttpd', cpes: ['acme:thttpd', 'acme_labs:thttpd'], names: ['thttpd'] },
  { id: 'realvnc:realvnc', label: 'RealVNC', cpes: ['realvnc:realvnc', 'realvnc:vnc', 'vnc:realvnc'], patterns: [/^realvnc\b/i] },
  { id: 'tigervnc:tigervnc', label: 'TigerVNC', cpes: ['tigervnc:tigervnc'], names: ['TigerVNC'] },
  { id: 'uvnc:ultravnc', label: 'UltraVNC', cpes: ['uvnc:ultravnc', 'ultravnc:ultravnc'], names: ['UltraVNC', 'Ultr@VNC'] },
  { id: 'tightvnc:tightvnc', label: 'TightVNC', cpes: ['tightvnc:tightvnc', 'glavsoft:tightvnc'], names: ['TightVNC'] },
  {
    id: 'libvncserver_project:libvncserver',
    label: 'LibVNCServer',
    cpes: ['libvncserver_project:libvncserver', 'libvnc_project:libvncserver'],
    names: ['LibVNCServer'],
  },
  { id: 'neutrinolabs:xrdp', label: 'xrdp', cpes: ['neutrinolabs:xrdp', 'jay_sorg:xrdp'], names: ['xrdp'] },
  { id: 'libssh:libssh', label: 'libssh', cpes: ['libssh:libssh'], names: ['libssh'] },
];

/** The dataset key for Windows' own network services (SMB, RDP): entries use it with `services`. */
export const WINDOWS_KEY = 'microsoft:windows';
/** Services Windows itself answers on, where a Windows product or OS CPE identifies the host. */
const WINDOWS_SERVICES = new Set(['microsoft-ds', 'netbios-ssn', 'ms-wbt-server', 'msrpc']);

const aliasByCpe = new Map<string, ProductAlias>();
const aliasByName = new Map<string, ProductAlias>();
for (const alias of PRODUCT_ALIASES) {
  for (const cpe of alias.cpes) aliasByCpe.set(cpe, alias);
  for (const name of alias.names ?? []) aliasByName.set(normaliseName(name), alias);
}

function normaliseName(name: string): string {
  return name.trim().replace(/\s+/g, ' ').toLowerCase();
}

/** The key under which a dataset vendor:product is indexed: its alias group, else itself. */
export function canonicalProductKey(cpe: string): string {
  const key = cpe.toLowerCase();
  return aliasByCpe.get(key)?.id ?? key;
}

/** A product name's alias group key, or null when the name is not in the alias table. */
export function productKeyForName(name: string | null | undefined): string | null {
  if (!name) return null;
  const n = normaliseName(name);
  const exact = aliasByName.get(n);
  if (exact) return exact.id;
  for (const alias of PRODUCT_ALIASES) if (alias.patterns?.some((p) => p.test(n))) return alias.id;
  return null;
}

/** The name a match shows when the port has no product name of its own. */
export function labelFor(key: string): string {
  return PRODUCT_ALIASES.find((a) => a.id === key)?.label ?? (key === WINDOWS_KEY ? 'Microsoft Windows' : key);
}

/** True when the port or the host says Windows (a Samba server answering SMB is not Windows). */
export function isWindowsHost(port: ScannedPort, os: string): boolean {
  return (
    !/samba/i.test(port.product ?? '') &&
    (/windows/i.test(os) ||
      /^microsoft (?:windows|terminal service)/i.test(port.product ?? '') ||
      port.cpe.some((c) => /^cpe:\/o:microsoft:windows/i.test(c)))
  );
}

/** One thing a port is: a dataset product key and the version the scan saw for it. */
export interface Identity {
  key: string;
  version: string | null;
}

/**
 * nmap reports MariaDB as product `MySQL` with the handshake's version `5.5.5-10.3.39-MariaDB-0+deb12u1`
 * (the `5.5.5-` prefix is a compatibility marker): that is MariaDB 10.3.39, not MySQL 5.5.5.
 */
function normaliseIdentity(key: string, version: string | null): Identity {
  if (version && /mariadb/i.test(version) && (key === 'oracle:mysql' || key === 'mariadb:mariadb')) {
    return { key: 'mariadb:mariadb', version: version.replace(/^\s*5\.5\.5-(?=\d)/, '') };
  }
  return { key, version };
}

/** The products a port is, by its CPEs and its product name, each once (with the best version seen). */
export function identify(port: ScannedPort, service: string, windowsHost: boolean): Identity[] {
  const out: Identity[] = [];
  const add = (rawKey: string, rawVersion: string | null): void => {
    const { key, version } = normaliseIdentity(rawKey, rawVersion);
    const existing = out.find((i) => i.key === key);
    if (existing) {
      if (!existing.version && version) existing.version = version;
    } else {
      out.push({ key, version });
    }
  };
  // The reported version (with its distribution suffix) is richer than a CPE's; prefer it.
  for (const raw of port.cpe) {
    const cpe = parseCpe(raw);
    if (!cpe || cpe.part !== 'a') continue;
    add(canonicalProductKey(`${cpe.vendor}:${cpe.product}`), port.version ?? cpe.version?.replace(/_/g, ' ') ?? null);
  }
  const byName = productKeyForName(port.product);
  if (byName) add(byName, port.version);
  if (windowsHost && WINDOWS_SERVICES.has(service)) add(WINDOWS_KEY, null);
  return out;
}
