/**
 * What the usual port numbers mean, in one place: the service a port usually runs (names as in
 * nmap-services, so both engines and the risk rules speak one language), which ports speak TLS
 * from the first byte, which protocols speak first, and which ports discovery probes.
 */

/** nmap-services names of TCP ports: the fallback name when nothing was recognised on a port. */
const WELL_KNOWN_SERVICES: Readonly<Record<number, string>> = {
  7: 'echo',
  13: 'daytime',
  20: 'ftp-data',
  21: 'ftp',
  22: 'ssh',
  23: 'telnet',
  25: 'smtp',
  37: 'time',
  43: 'whois',
  49: 'tacacs',
  53: 'domain',
  67: 'dhcps',
  69: 'tftp',
  79: 'finger',
  80: 'http',
  81: 'hosts2-ns',
  88: 'kerberos-sec',
  102: 'iso-tsap',
  110: 'pop3',
  111: 'rpcbind',
  113: 'ident',
  119: 'nntp',
  123: 'ntp',
  135: 'msrpc',
  137: 'netbios-ns',
  139: 'netbios-ssn',
  143: 'imap',
  161: 'snmp',
  179: 'bgp',
  389: 'ldap',
  427: 'svrloc',
  443: 'https',
  445: 'microsoft-ds',
  465: 'smtps',
  500: 'isakmp',
  502: 'mbap',
  512: 'exec',
  513: 'login',
  514: 'shell',
  515: 'printer',
  548: 'afp',
  554: 'rtsp',
  587: 'submission',
  631: 'ipp',
  636: 'ldapssl',
  873: 'rsync',
  990: 'ftps',
  993: 'imaps',
  995: 'pop3s',
  1080: 'socks',
  1194: 'openvpn',
  1433: 'ms-sql-s',
  1521: 'oracle',
  1723: 'pptp',
  1883: 'mqtt',
  1900: 'upnp',
  2049: 'nfs',
  2375: 'docker',
  2376: 'docker',
  3000: 'ppp',
  3128: 'squid-http',
  3268: 'globalcatLDAP',
  3306: 'mysql',
  3389: 'ms-wbt-server',
  3689: 'rendezvous',
  5000: 'upnp',
  5060: 'sip',
  5222: 'xmpp-client',
  5353: 'mdns',
  5432: 'postgresql',
  5601: 'esmagent',
  5672: 'amqp',
  5900: 'vnc',
  5985: 'wsman',
  5986: 'wsmans',
  6379: 'redis',
  6443: 'sun-sr-https',
  6667: 'irc',
  7000: 'afs3-fileserver',
  8000: 'http-alt',
  8008: 'http',
  8080: 'http-proxy',
  8081: 'blackice-icecap',
  8443: 'https-alt',
  8883: 'secure-mqtt',
  8888: 'sun-answerbook',
  9000: 'cslistener',
  9090: 'zeus-admin',
  9100: 'jetdirect',
  9200: 'wap-wsp',
  9418: 'git',
  11211: 'memcache',
  27017: 'mongod',
  49152: 'unknown',
  62078: 'iphone-sync',
};

/** nmap-services name for a TCP port, or null when the port has no usual service. */
export function wellKnownService(port: number): string | null {
  return WELL_KNOWN_SERVICES[port] ?? null;
}

/**
 * Ports usually spoken inside TLS from the first byte (implicit TLS), with the plain protocol each
 * one wraps: FTP's TLS port is 990 (989 carries its data), LDAP's are 636 and the global catalog's 3269.
 */
const IMPLICIT_TLS_PORTS: Readonly<Record<number, string>> = {
  443: 'http',
  465: 'smtp',
  563: 'nntp',
  636: 'ldap',
  853: 'domain',
  989: 'ftp-data',
  990: 'ftp',
  992: 'telnet',
  993: 'imap',
  994: 'irc',
  995: 'pop3',
  2376: 'docker',
  3269: 'ldap',
  4443: 'http',
  5061: 'sip',
  5986: 'wsman',
  6443: 'http',
  6697: 'irc',
  8443: 'http',
  8883: 'mqtt',
  9443: 'http',
  10443: 'http',
};

/** Ports usually spoken inside TLS from the first byte (implicit TLS). */
export const TLS_PORTS: ReadonlySet<number> = new Set(Object.keys(IMPLICIT_TLS_PORTS).map(Number));

/** The implicit-TLS ports of a plain protocol: `ldap` → 636, 3269. */
export function tlsPortsOf(protocol: string): number[] {
  return [...TLS_PORTS].filter((port) => IMPLICIT_TLS_PORTS[port] === protocol);
}

/** The nmap-services name of a protocol's TLS-wrapped form (`http` → `https`). */
export const TLS_SERVICE_NAMES: Readonly<Record<string, string>> = {
  http: 'https',
  imap: 'imaps',
  pop3: 'pop3s',
  smtp: 'smtps',
  ftp: 'ftps',
  ldap: 'ldapssl',
  nntp: 'nntps',
  irc: 'ircs',
  telnet: 'telnets',
  mqtt: 'secure-mqtt',
};

/** Service names that say the service is TLS-wrapped (nmap's, and the other names tools use). */
export const TLS_WRAPPED_NAMES: ReadonlySet<string> = new Set([
  ...Object.values(TLS_SERVICE_NAMES),
  'ssl',
  'tls',
  'https-alt',
  'ftps-data',
  'ldaps',
  'docker-s',
  'wsmans',
  'sip-tls',
  'sips',
]);

/** Ports where a client speaks first with HTTP: send the request at once instead of waiting. */
export const HTTP_PORTS: ReadonlySet<number> = new Set([
  80, 81, 443, 591, 2375, 3000, 4443, 5000, 5601, 5985, 5986, 7001, 8000, 8008, 8009, 8080, 8081, 8088, 8090, 8181, 8443, 8888, 9000, 9090, 9200,
  9443, 10443,
]);

/** Ports whose protocols speak first (SSH, FTP, SMTP, POP3, IMAP, MySQL, VNC…): worth waiting longer for their greeting. */
export const GREETING_PORTS: ReadonlySet<number> = new Set([
  21, 22, 23, 25, 110, 119, 143, 220, 465, 587, 990, 992, 993, 995, 1433, 2121, 2222, 2525, 3306, 5900, 5901, 6667,
]);

/** FTP and SMTP both greet with 220: when the greeting does not say which, these ports decide. */
export const FTP_PORTS: ReadonlySet<number> = new Set([21, 990, 2121]);
export const SMTP_PORTS: ReadonlySet<number> = new Set([25, 465, 587, 2525]);

/**
 * Ports most devices answer on (open or refused), probed to find hosts that ignore ping: web, SSH,
 * SMB, RDP, DNS, iOS lockdown, alt-web. The native engine probes these in this order; nmap's list
 * also has 5000 (UPnP / NAS admin pages).
 */
export const DISCOVERY_PORTS: readonly number[] = [80, 443, 22, 445, 139, 3389, 8080, 53, 62078, 8443];
export const NMAP_DISCOVERY_PORTS: readonly number[] = [22, 80, 443, 445, 3389, 8080, 8443, 139, 53, 5000, 62078];
