/**
 * What a found service is, in words a person reads: nmap's service names (`blackice-icecap`,
 * `http-proxy`, `ms-wbt-server`) mean little beside the software that really answered. Also the
 * normalisation of product strings left as the server sent them (`Apache/2.4.49 (Unix)` in the
 * product field, or the http-server-header script's output) into product and version, so CVE
 * matching and the risk rules see `Apache httpd` `2.4.49`. Pure.
 */
import { parseServerHeader } from './banners.js';
import type { ScannedPort } from './model.js';

/** Plain words for nmap-services names, by kind of service; a name missing here is described by its product alone. */
const SERVICE_KINDS: Readonly<Record<string, string>> = {
  // The web
  http: 'web server',
  'http-alt': 'web server',
  'http-proxy': 'web server',
  'http-mgmt': 'web server',
  webcache: 'web server',
  'sun-answerbook': 'web server',
  https: 'web server over TLS',
  'https-alt': 'web server over TLS',
  squid: 'web proxy',
  'squid-http': 'web proxy',
  socks: 'SOCKS proxy',
  socks5: 'SOCKS proxy',
  webmin: 'Webmin administration page',
  // Remote access
  ssh: 'SSH remote login',
  telnet: 'unencrypted Telnet remote login',
  'ms-wbt-server': 'Windows Remote Desktop',
  vnc: 'VNC remote desktop',
  'vnc-http': 'VNC remote desktop web client',
  x11: 'X11 display server',
  wsman: 'Windows Remote Management',
  wsmans: 'Windows Remote Management over TLS',
  exec: 'rexec remote execution',
  login: 'rlogin remote login',
  shell: 'rsh remote shell',
  // Files and Windows networking
  ftp: 'FTP file transfer',
  ftps: 'FTP file transfer over TLS',
  'ftp-data': 'FTP data channel',
  tftp: 'TFTP file transfer',
  sftp: 'SFTP file transfer',
  'microsoft-ds': 'SMB file sharing',
  'netbios-ssn': 'NetBIOS file sharing',
  'netbios-ns': 'NetBIOS name service',
  msrpc: 'Windows RPC',
  nfs: 'NFS file sharing',
  afp: 'Apple file sharing',
  rsync: 'rsync file synchronisation',
  rpcbind: 'RPC port mapper',
  iscsi: 'iSCSI storage',
  // Directory, names and time
  domain: 'DNS server',
  mdns: 'Bonjour multicast DNS',
  ldap: 'LDAP directory',
  ldapssl: 'LDAP directory over TLS',
  'kerberos-sec': 'Kerberos authentication',
  ntp: 'NTP time server',
  snmp: 'SNMP device management',
  // Mail and chat
  smtp: 'SMTP mail server',
  smtps: 'SMTP mail server over TLS',
  submission: 'SMTP mail submission',
  pop3: 'POP3 mailbox access',
  pop3s: 'POP3 mailbox access over TLS',
  imap: 'IMAP mailbox access',
  imaps: 'IMAP mailbox access over TLS',
  irc: 'IRC chat server',
  'xmpp-client': 'XMPP chat server',
  sip: 'SIP VoIP signalling',
  // Databases, caches and brokers
  mysql: 'MySQL / MariaDB database',
  postgresql: 'PostgreSQL database',
  'ms-sql-s': 'Microsoft SQL Server database',
  oracle: 'Oracle database',
  'oracle-tns': 'Oracle database',
  mongod: 'MongoDB database',
  mongodb: 'MongoDB database',
  redis: 'Redis database',
  memcache: 'memcached cache',
  memcached: 'memcached cache',
  couchdb: 'CouchDB database',
  elasticsearch: 'Elasticsearch search engine',
  amqp: 'AMQP message broker',
  mqtt: 'MQTT message broker',
  'secure-mqtt': 'MQTT message broker over TLS',
  // Devices, media and home
  ipp: 'IPP printer',
  printer: 'LPD printer',
  jetdirect: 'JetDirect printer',
  rtsp: 'RTSP video stream',
  upnp: 'UPnP device control',
  'iphone-sync': 'iPhone / iPad sync service',
  rendezvous: 'DAAP media sharing',
  airplay: 'AirPlay receiver',
  'home-assistant': 'Home Assistant',
  plex: 'Plex media server',
  docker: 'Docker API',
  git: 'Git server',
  openvpn: 'OpenVPN',
  pptp: 'PPTP VPN',
  isakmp: 'IPsec VPN key exchange',
  mbap: 'Modbus industrial control',
  bgp: 'BGP routing',
  ident: 'ident service',
  finger: 'finger user information',
  echo: 'echo test service',
  daytime: 'daytime test service',
  ssl: 'TLS service',
  tls: 'TLS service',
};

/** Products that tell the kind better than the port's name (a proxy on port 80, a web server on 8080's `http-proxy`). */
const PRODUCT_KINDS: readonly { pattern: RegExp; kind: string }[] = [
  { pattern: /\bproxy\b|squid|varnish|haproxy|privoxy|tinyproxy/i, kind: 'web proxy' },
  {
    pattern:
      /\bhttpd?\b|nginx|\biis\b|lighttpd|caddy|jetty|tomcat|coyote|web ?server|http server|werkzeug|gunicorn|uvicorn|kestrel|openresty|tengine|cherrypy|tornado|webrick|node\.js|express/i,
    kind: 'web server',
  },
];

/** Services that say nothing was recognised. */
const UNIDENTIFIED = new Set(['unknown', 'tcpwrapped']);

export interface DescribedPort {
  service: string | null;
  product: string | null;
  version: string | null;
  service_guessed?: boolean;
}

/**
 * One line saying what answers on a port, for the port table: `web server (Apache httpd 2.4.49)`,
 * `unidentified service (nmap guesses blackice-icecap)`, `SSH remote login (OpenSSH 8.9p1)`.
 * Null when there is nothing to add to the service name itself.
 */
export function describePort(port: DescribedPort): string | null {
  const { service, product, version } = normalizeProduct(port);
  const software = [product, version].filter(Boolean).join(' ');
  if (service === null || UNIDENTIFIED.has(service)) {
    if (software) return `unidentified service (${software})`;
    return service === 'tcpwrapped' ? 'unidentified service (the connection is closed at once: a firewall or TCP wrapper)' : 'unidentified service';
  }
  if (port.service_guessed && !software) return `unidentified service (nmap guesses ${service})`;
  const kind = (product ? PRODUCT_KINDS.find((k) => k.pattern.test(product))?.kind : undefined) ?? SERVICE_KINDS[service.toLowerCase()];
  if (!kind) return software || null;
  // The service's name says TLS (https) when the product says only the kind (web server).
  const tls = / over TLS$/.test(SERVICE_KINDS[service.toLowerCase()] ?? '') && !kind.includes('TLS') ? ' over TLS' : '';
  return software ? `${kind}${tls} (${software})` : `${kind}${tls}`;
}

/** `Name/1.2.3` or `Name/v1.2 (comment)`: a product string as a server sends it, not as nmap names it. */
const RAW_PRODUCT = /^[A-Za-z][\w.+-]*\/v?\d[\w.+~-]*(?:$|[\s(;,])/;

/**
 * The port with a raw product string (`Apache/2.4.49 (Unix)`, `nginx/1.18.0`, `Microsoft-IIS/10.0`,
 * `lighttpd/1.4.59`: an HTTP Server header left unparsed) read into product, version, extra info
 * and CPEs as the native engine reads a Server header (core/banners.ts parseServerHeader). A port
 * with a version already, or whose product is not in that form, is returned unchanged.
 */
export function normalizeProduct<T extends Pick<ScannedPort, 'product' | 'version'> & Partial<Pick<ScannedPort, 'extra_info' | 'cpe'>>>(port: T): T {
  const product = port.product?.trim();
  if (!product || port.version || !RAW_PRODUCT.test(product)) return port;
  const parsed = parseServerHeader(product);
  if (parsed.product === null || parsed.version === null) return port;
  const extra = [parsed.extra_info, port.extra_info].filter(Boolean).join('; ') || null;
  const cpe = port.cpe ? [...port.cpe, ...parsed.cpe.filter((c) => !port.cpe!.includes(c))] : undefined;
  return {
    ...port,
    product: parsed.product,
    version: parsed.version,
    ...('extra_info' in port ? { extra_info: extra } : {}),
    ...(cpe ? { cpe } : {}),
  };
}

/**
 * The port as evaluation sees it (CVE matching, risk rules): normalizeProduct, and a web server
 * nmap named after port 8080's table entry (`http-proxy`) while the product says it is a web
 * server, not a proxy (`Apache httpd`), is the plain web server it is (`http`).
 */
export function normalizePort(port: ScannedPort): ScannedPort {
  const out = normalizeProduct(port);
  if (out.service !== 'http-proxy' || !out.product) return out;
  const kind = PRODUCT_KINDS.find((k) => k.pattern.test(out.product!))?.kind;
  return kind === 'web server' ? { ...out, service: 'http' } : out;
}
