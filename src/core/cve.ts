/**
 * Offline CVE matching: which known vulnerabilities the services a scan found are exposed to.
 * Pure functions, no I/O: the shell (src/cve/) loads the shipped dataset and imported data, this
 * module indexes it once and matches scan results against it.
 *
 * A port is identified by the CPEs nmap reports (`cpe:/a:openbsd:openssh:8.9p1`) and by its product
 * name (`OpenSSH`, `Apache httpd`, `Microsoft IIS httpd`…), both mapped through an alias table to
 * the CPE vendor:product names the dataset (and NVD) uses. Confidence:
 * - `confirmed`: product and version match an affected range;
 * - `likely`: the entry is version-independent (the scan cannot see the patch level, e.g. SMB on
 *   Windows), or the version carries a distribution suffix (the distribution may have backported
 *   the fix), or the entry says the version does not reveal the patch level.
 * A versioned entry never matches a port whose version is unknown: no guessing, no flood.
 */
import { isOpenPort, type ScannedPort } from './model.js';
import {
  compareParsed,
  compileRange,
  distroIn,
  parseVersionSpec,
  specInRange,
  type CompiledRange,
  type VersionRange,
  type VersionSpec,
} from './versions.js';
import { severityFromCvss, type Severity } from './severity.js';

export type CveConfidence = 'confirmed' | 'likely';

/** One affected product of a CVE: a CPE vendor:product with NVD-style version bounds. */
export interface CveAffected extends VersionRange {
  /** CPE vendor:product as NVD names it, e.g. `openbsd:openssh`, `apache:http_server`. */
  cpe: string;
  /** The product alone matches (no version check); confidence is at most `likely`. */
  versionIndependent?: boolean;
  /** The version says which release runs but not its patch level (Windows components): at most `likely`. */
  maxConfidence?: 'likely';
  /** Only on ports whose service is one of these (nmap names: `microsoft-ds`, `ms-wbt-server`…). */
  services?: string[];
  /** Only when the port shows one of these distributions (lower case: `debian`, `ubuntu`). */
  requiresDistro?: string[];
  /**
   * Windows releases affected (`xp`, `2003`, `vista`, `2008`, `7`, `2008r2`, `8`, `2012`, `8.1`,
   * `2012r2`, `10`, `2016`, `2019`, `2022`, `11`): a match is dropped when the scan names only other releases.
   */
  windowsReleases?: string[];
}

/** One CVE as the dataset stores it. */
export interface CveEntry {
  id: string;
  /** CVSS base score (v3.x; v2 only where no v3 exists). */
  cvss_score: number | null;
  cvss_vector: string | null;
  /** `3.1`, `3.0`, `2.0` (or `4.0` for imported records that have nothing else). */
  cvss_version: string | null;
  description: string;
  remediation: string | null;
  references: string[];
  /** Listed in CISA's Known Exploited Vulnerabilities catalog. */
  kev: boolean;
  published?: string | null;
  /** When the source last changed the record (NVD's lastModified), for imported records. */
  last_modified?: string | null;
  affected: CveAffected[];
}

/** A CVE found on a port: the device's `cves` record of the API (see /openapi.json) plus what explains it. */
export interface CveMatch {
  id: string;
  severity: Severity;
  cvss_score: number | null;
  description: string;
  remediation: string | null;
  references: string[];
  confidence: CveConfidence;
  port: number;
  matched_product: string | null;
  matched_version: string | null;
  protocol: 'tcp' | 'udp';
  cvss_vector: string | null;
  kev: boolean;
  /** Why the confidence is what it is, in words. */
  confidence_reason: string;
}

/** What the host tells beyond its ports (optional). */
export interface HostContext {
  os_name?: string | null;
}

/* ------------------------------------------------------------------------------------------------
 * Severity and CVSS
 * --------------------------------------------------------------------------------------------- */

const roundUp1 = (x: number): number => {
  // CVSS 3.1's Roundup: the smallest one-decimal number >= x, robust to floating point.
  const i = Math.round(x * 100000);
  return i % 10000 === 0 ? i / 100000 : (Math.floor(i / 10000) + 1) / 10;
};

/**
 * The base score a CVSS v3.x or v2 vector string gives, or null when the string is not a
 * complete vector. Used to check the dataset (score and vector must agree) and to fill in a
 * score an imported record lacks.
 */
export function cvssBaseScore(vector: string): number | null {
  const parts = new Map<string, string>();
  for (const item of vector.trim().split('/')) {
    const [k, v] = item.split(':');
    if (!k || v === undefined) return null;
    parts.set(k, v);
  }
  const version = parts.get('CVSS');
  if (version === '3.0' || version === '3.1') {
    const W: Record<string, Record<string, number>> = {
      AV: { N: 0.85, A: 0.62, L: 0.55, P: 0.2 },
      AC: { L: 0.77, H: 0.44 },
      UI: { N: 0.85, R: 0.62 },
      C: { H: 0.56, L: 0.22, N: 0 },
      I: { H: 0.56, L: 0.22, N: 0 },
      A: { H: 0.56, L: 0.22, N: 0 },
    };
    const scope = parts.get('S');
    const pr = parts.get('PR');
    const PR: Record<string, number> = scope === 'C' ? { N: 0.85, L: 0.68, H: 0.5 } : { N: 0.85, L: 0.62, H: 0.27 };
    const get = (k: string): number | undefined => W[k][parts.get(k) ?? ''];
    const av = get('AV'), ac = get('AC'), ui = get('UI'), c = get('C'), i = get('I'), a = get('A');
    const prW = pr ? PR[pr] : undefined;
    if ([av, ac, ui, c, i, a, prW].some((x) => x === undefined) || (scope !== 'U' && scope !== 'C')) return null;
    const iss = 1 - (1 - c!) * (1 - i!) * (1 - a!);
    const impact = scope === 'U' ? 6.42 * iss : 7.52 * (iss - 0.029) - 3.25 * Math.pow(iss - 0.02, 15);
    const exploitability = 8.22 * av! * ac! * prW! * ui!;
    if (impact <= 0) return 0;
    return scope === 'U' ? roundUp1(Math.min(impact + exploitability, 10)) : roundUp1(Math.min(1.08 * (impact + exploitability), 10));
  }
  if (version === undefined && parts.has('Au')) {
    const W: Record<string, Record<string, number>> = {
      AV: { L: 0.395, A: 0.646, N: 1.0 },
      AC: { H: 0.35, M: 0.61, L: 0.71 },
      Au: { M: 0.45, S: 0.56, N: 0.704 },
      C: { N: 0, P: 0.275, C: 0.66 },
      I: { N: 0, P: 0.275, C: 0.66 },
      A: { N: 0, P: 0.275, C: 0.66 },
    };
    const v: Record<string, number> = {};
    for (const k of Object.keys(W)) {
      const w = W[k][parts.get(k) ?? ''];
      if (w === undefined) return null;
      v[k] = w;
    }
    const impact = 10.41 * (1 - (1 - v.C) * (1 - v.I) * (1 - v.A));
    const exploitability = 20 * v.AV * v.AC * v.Au;
    const f = impact === 0 ? 0 : 1.176;
    return Math.round((0.6 * impact + 0.4 * exploitability - 1.5) * f * 10) / 10;
  }
  return null;
}

/* ------------------------------------------------------------------------------------------------
 * Product identification
 * --------------------------------------------------------------------------------------------- */

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
  { id: 'miniupnp_project:miniupnpd', label: 'MiniUPnP', cpes: ['miniupnp_project:miniupnpd', 'miniupnp:miniupnpd'], names: ['MiniUPnP', 'miniupnpd'] },
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

export interface ParsedCpe {
  part: 'a' | 'o' | 'h';
  vendor: string;
  product: string;
  version: string | null;
}

/** Parses `cpe:/a:vendor:product[:version…]` (CPE 2.2, as nmap writes it) or `cpe:2.3:a:vendor:product:version:…`. */
export function parseCpe(cpe: string): ParsedCpe | null {
  const text = cpe.trim();
  let fields: string[];
  if (/^cpe:2\.3:/i.test(text)) {
    fields = splitCpe23(text.slice(8));
  } else if (/^cpe:\//i.test(text)) {
    fields = text.slice(5).split(':').map((f) => safeDecode(f));
  } else {
    return null;
  }
  const [part, vendor, product, version] = fields;
  if ((part !== 'a' && part !== 'o' && part !== 'h') || !vendor || !product) return null;
  const v = version === undefined || version === '' || version === '*' || version === '-' ? null : version;
  return { part, vendor: vendor.toLowerCase(), product: product.toLowerCase(), version: v };
}

/** Splits a CPE 2.3 formatted string on unescaped colons and removes the escapes. */
export function splitCpe23(text: string): string[] {
  const out: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\' && i + 1 < text.length) {
      current += text[++i];
    } else if (ch === ':') {
      out.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  out.push(current);
  return out;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** One thing a port is: a dataset product key and the version the scan saw for it. */
interface Identity {
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

function identify(port: ScannedPort, service: string, windowsHost: boolean): Identity[] {
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

/* ------------------------------------------------------------------------------------------------
 * Windows releases named by the scan (to drop entries for other releases)
 * --------------------------------------------------------------------------------------------- */

const WINDOWS_ORDER = ['2000', 'xp', '2003', 'vista', '2008', '7', '2008r2', '8', '2012', '8.1', '2012r2', '10', '2016', '2019', '2022', '11', '2025'];

function windowsRelease(token: string): string | null {
  const t = token.toLowerCase().replace(/\s+/g, ' ').trim();
  if (/^(?:server )?2008 r2$/.test(t)) return '2008r2';
  if (/^(?:server )?2012 r2$/.test(t)) return '2012r2';
  if (/^longhorn$/.test(t)) return '2008';
  const plain = t.replace(/^server /, '').replace(/ (?:sp\d|service pack \d).*$/, '');
  return WINDOWS_ORDER.includes(plain) ? plain : null;
}

/** Windows releases named in nmap product strings, OS names and CPEs: `Microsoft Windows 7 - 10 microsoft-ds` → 7 … 10. */
export function windowsReleasesIn(texts: (string | null | undefined)[]): Set<string> {
  const found = new Set<string>();
  const release = String.raw`(?:server )?(?:2000|xp|2003|vista|longhorn|2008(?: r2)?|2012(?: r2)?|2016|2019|2022|2025|8\.1|7|8|10|11)`;
  const re = new RegExp(String.raw`\bwindows (?:(?:embedded|standard|ultimate|professional|enterprise|home|pro) )*(${release})(?:\s*(?:-|or)\s*(${release}))?(?![\w.])`, 'gi');
  for (const text of texts) {
    if (!text) continue;
    const normal = text.replace(/cpe:\/o:microsoft:windows_?([^\s:]*)(?::([^\s:]*))?/gi, (_, p: string, v: string | undefined) => {
      const name = p.replace(/^server_/, '').replace(/_/g, ' ');
      return ` windows ${name}${v && /^r2$/i.test(v) ? ' r2' : ''} `;
    });
    for (const m of normal.matchAll(re)) {
      const a = windowsRelease(m[1]);
      const b = m[2] ? windowsRelease(m[2]) : null;
      if (a && b && /-/.test(m[0].slice(m[0].indexOf(m[1]) + m[1].length))) {
        const i = WINDOWS_ORDER.indexOf(a);
        const j = WINDOWS_ORDER.indexOf(b);
        for (let k = Math.min(i, j); k <= Math.max(i, j); k++) found.add(WINDOWS_ORDER[k]);
      } else {
        if (a) found.add(a);
        if (b) found.add(b);
      }
    }
  }
  return found;
}

/* ------------------------------------------------------------------------------------------------
 * Index and matching
 * --------------------------------------------------------------------------------------------- */

interface IndexedAffected {
  entry: CveEntry;
  affected: CveAffected;
  range: CompiledRange | null;
}

interface MatchTemplate {
  entry: CveEntry;
  confidence: CveConfidence;
  reason: string;
  remediation: string | null;
}

export interface CveIndex {
  readonly size: number;
  readonly entries: ReadonlyMap<string, CveEntry>;
  /** Affected entries by canonical product key. */
  readonly byProduct: ReadonlyMap<string, readonly IndexedAffected[]>;
  /** Entries whose ranges could not be read (skipped, with the reason). */
  readonly rejected: readonly { id: string; reason: string }[];
  /** Memo of match results by product, version and evidence (many devices run the same software). */
  readonly memo: Map<string, MatchTemplate[]>;
  /** Memo of resolved port descriptions (service, product, version, extra info, CPEs, host OS). */
  readonly portMemo: Map<string, ResolvedMatch[]>;
}

const MEMO_LIMIT = 100_000;

/** Indexes a dataset by product once; reuse the index for every scan. */
export function buildCveIndex(entries: Iterable<CveEntry>): CveIndex {
  const byId = new Map<string, CveEntry>();
  for (const entry of entries) byId.set(entry.id, entry);
  const byProduct = new Map<string, IndexedAffected[]>();
  const rejected: { id: string; reason: string }[] = [];
  for (const entry of byId.values()) {
    for (const affected of entry.affected) {
      let range: CompiledRange | null = null;
      try {
        if (!affected.versionIndependent) range = compileRange(affected);
      } catch (err) {
        rejected.push({ id: entry.id, reason: `${affected.cpe}: ${(err as Error).message}` });
        continue;
      }
      const key = canonicalProductKey(affected.cpe);
      const list = byProduct.get(key);
      const item = { entry, affected, range };
      if (list) list.push(item);
      else byProduct.set(key, [item]);
    }
  }
  return { size: byId.size, entries: byId, byProduct, rejected, memo: new Map(), portMemo: new Map() };
}

function serviceName(service: string | null): string {
  return (service ?? '').toLowerCase().replace(/^(?:ssl|tls)\//, '');
}

const OS_DISTRO_CPE = /cpe:\/o:(?:canonical|debian|redhat|centos|fedoraproject|suse|opensuse|novell|alpinelinux|amazon|freebsd|netbsd|rocky|almalinux|raspberrypi|gentoo|mageia)\b/i;

/** Which distribution packaged this service, from the version suffix, nmap's extra info or an OS CPE. */
function distroEvidence(port: ScannedPort, version: string | null, extraDistro: string | null): string | null {
  const fromVersion = version ? (version.match(/^\s*[vV]?\d[0-9A-Za-z.]*(.*)$/s)?.[1] ?? '') : '';
  const named = distroIn(fromVersion) ?? extraDistro;
  if (named) return named;
  const os = port.cpe.find((c) => OS_DISTRO_CPE.test(c));
  if (!os) return null;
  return distroIn(os.replace(/_/g, ' ')) ?? (/canonical/i.test(os) ? 'Ubuntu' : 'the operating system vendor');
}

/**
 * The CVEs each port is exposed to. `index` is built once by buildCveIndex (an array is indexed
 * on the fly, which is slow for repeated calls). Ports that are not open are skipped. Each CVE is
 * reported once per port, with the highest confidence any affected entry gives.
 */
export function matchCves(ports: readonly ScannedPort[], index: CveIndex | readonly CveEntry[], host: HostContext = {}): CveMatch[] {
  const idx = isIndex(index) ? index : buildCveIndex(index);
  const out: CveMatch[] = [];
  const os = host.os_name ?? '';
  for (const port of ports) {
    if (!isOpenPort(port)) continue;
    // Many devices run identical software: resolve each distinct port description once.
    // nmap's extra info counts only for the distribution it names (host names, workgroups vary per device).
    const extraDistro = distroIn(port.extra_info);
    const signature = `${port.service ?? ''}\u0000${port.product ?? ''}\u0000${port.version ?? ''}\u0000${extraDistro ?? ''}\u0000${port.cpe.join('\u0001')}\u0000${os}`;
    let resolved = idx.portMemo.get(signature);
    if (!resolved) {
      resolved = resolvePort(port, idx, os, extraDistro);
      if (idx.portMemo.size >= MEMO_LIMIT) idx.portMemo.clear();
      idx.portMemo.set(signature, resolved);
    }
    for (const r of resolved) out.push(toMatch(r.template, port, r.identity));
  }
  return out;
}

interface ResolvedMatch {
  template: MatchTemplate;
  identity: Identity;
}

/** The CVEs one port description matches, each once, with the highest confidence found. */
function resolvePort(port: ScannedPort, idx: CveIndex, os: string, extraDistro: string | null): ResolvedMatch[] {
  const service = serviceName(port.service);
  const windowsHost =
    !/samba/i.test(port.product ?? '') &&
    (/windows/i.test(os) || /^microsoft (?:windows|terminal service)/i.test(port.product ?? '') || port.cpe.some((c) => /^cpe:\/o:microsoft:windows/i.test(c)));
  const identities = identify(port, service, windowsHost);
  const out: ResolvedMatch[] = [];
  const seen = new Map<string, number>();
  for (const identity of identities) {
    const candidates = idx.byProduct.get(identity.key);
    if (!candidates) continue;
    const isWindows = identity.key === WINDOWS_KEY;
    const distro = isWindows ? null : distroEvidence(port, identity.version, extraDistro);
    const windows = isWindows ? windowsReleasesIn([port.product, os, ...port.cpe]) : new Set<string>();
    const memoKey = `${identity.key}\u0000${identity.version ?? ''}\u0000${service}\u0000${distro ?? ''}\u0000${[...windows].sort().join(',')}`;
    let templates = idx.memo.get(memoKey);
    if (!templates) {
      templates = evaluate(candidates, identity, service, distro, windows);
      if (idx.memo.size >= MEMO_LIMIT) idx.memo.clear();
      idx.memo.set(memoKey, templates);
    }
    for (const template of templates) {
      const at = seen.get(template.entry.id);
      if (at !== undefined) {
        if (out[at].template.confidence === 'likely' && template.confidence === 'confirmed') out[at] = { template, identity };
        continue;
      }
      seen.set(template.entry.id, out.length);
      out.push({ template, identity });
    }
  }
  return out;
}

function isIndex(value: CveIndex | readonly CveEntry[]): value is CveIndex {
  return !Array.isArray(value) && (value as CveIndex).byProduct instanceof Map;
}

const versionSpecs = new Map<string, VersionSpec>();

function specOf(version: string | null): VersionSpec {
  if (!version) return { kind: 'unknown' };
  let spec = versionSpecs.get(version);
  if (!spec) {
    spec = parseVersionSpec(version);
    if (versionSpecs.size > 50_000) versionSpecs.clear();
    versionSpecs.set(version, spec);
  }
  return spec;
}

function evaluate(
  candidates: readonly IndexedAffected[],
  identity: Identity,
  service: string,
  distro: string | null,
  windows: Set<string>,
): MatchTemplate[] {
  const best = new Map<string, MatchTemplate>();
  const spec = specOf(identity.version);
  for (const { entry, affected, range } of candidates) {
    if (affected.services && !affected.services.includes(service)) continue;
    if (affected.requiresDistro && !(distro && affected.requiresDistro.includes(distro.toLowerCase()))) continue;
    if (affected.windowsReleases && windows.size > 0 && !affected.windowsReleases.some((r) => windows.has(r))) continue;
    let confidence: CveConfidence;
    let reason: string;
    let note: string | null = null;
    if (affected.versionIndependent || !range) {
      confidence = 'likely';
      reason = affected.requiresDistro
        ? `The product matches and the scan shows a package from ${distro}, which this CVE concerns; the scan cannot see whether the fix is installed.`
        : 'The product matches a version-independent entry: the scan cannot see the patch level, so check that the fix is installed.';
    } else {
      if (specInRange(spec, range) !== 'yes') continue;
      if (distro) {
        confidence = 'likely';
        reason = `The upstream version is in the affected range, but the service is packaged by ${distro}: distributions backport security fixes without changing the upstream version.`;
        note = `Note: this service is packaged by ${distro}, which may have backported the fix without changing the version; check the installed package against ${distro}'s security advisory before upgrading.`;
      } else if (affected.maxConfidence === 'likely') {
        confidence = 'likely';
        reason = 'The version is in the affected range, but it does not reveal the patch level: check that the update is installed.';
      } else {
        confidence = 'confirmed';
        reason = 'The product and version match an affected range.';
      }
    }
    const previous = best.get(entry.id);
    if (previous && (previous.confidence === 'confirmed' || confidence === 'likely')) continue;
    const remediation = note ? [entry.remediation, note].filter(Boolean).join(' ') : entry.remediation;
    best.set(entry.id, { entry, confidence, reason, remediation });
  }
  return [...best.values()];
}

function toMatch(t: MatchTemplate, port: ScannedPort, identity: Identity): CveMatch {
  const e = t.entry;
  return {
    id: e.id,
    severity: severityFromCvss(e.cvss_score),
    cvss_score: e.cvss_score,
    description: e.description,
    remediation: t.remediation,
    references: e.references,
    confidence: t.confidence,
    port: port.port,
    matched_product: port.product ?? labelFor(identity.key),
    matched_version: identity.key === WINDOWS_KEY ? port.version : identity.version,
    protocol: port.protocol,
    cvss_vector: e.cvss_vector,
    kev: e.kev,
    confidence_reason: t.reason,
  };
}

function labelFor(key: string): string {
  return PRODUCT_ALIASES.find((a) => a.id === key)?.label ?? (key === WINDOWS_KEY ? 'Microsoft Windows' : key);
}

/** Orders matches for display: by port, then most severe first (known exploited first on ties), then id. */
export function sortCveMatches(matches: CveMatch[]): CveMatch[] {
  return matches.sort(
    (a, b) =>
      a.port - b.port ||
      (b.cvss_score ?? -1) - (a.cvss_score ?? -1) ||
      Number(b.kev) - Number(a.kev) ||
      a.id.localeCompare(b.id),
  );
}

/* ------------------------------------------------------------------------------------------------
 * Dataset validation (shared by the loader, the importer and the tests)
 * --------------------------------------------------------------------------------------------- */

const RANGE_FIELDS = ['version', 'versionStartIncluding', 'versionStartExcluding', 'versionEndIncluding', 'versionEndExcluding'] as const;
const AFFECTED_FIELDS = new Set<string>([...RANGE_FIELDS, 'cpe', 'versionIndependent', 'maxConfidence', 'services', 'requiresDistro', 'windowsReleases']);
const ENTRY_FIELDS = new Set<string>(['id', 'cvss_score', 'cvss_vector', 'cvss_version', 'description', 'remediation', 'references', 'kev', 'published', 'last_modified', 'affected']);

export const CVE_ID_PATTERN = /^CVE-\d{4}-\d{4,}$/;

/**
 * Checks one dataset record and returns the problems found (empty when valid). Unknown fields,
 * wrong types, an unreadable range or a bad CVE id are problems; so is a score that disagrees with
 * its vector, unless `checkScore` is false (imported records keep the score their source gives).
 */
export function validateCveEntry(value: unknown, options: { allowEmptyAffected?: boolean; checkScore?: boolean } = {}): string[] {
  const problems: string[] = [];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return ['not an object'];
  const e = value as Record<string, unknown>;
  const id = typeof e.id === 'string' ? e.id : '?';
  const p = (msg: string): void => void problems.push(`${id}: ${msg}`);
  for (const k of Object.keys(e)) if (!ENTRY_FIELDS.has(k)) p(`unknown field '${k}'`);
  if (typeof e.id !== 'string' || !CVE_ID_PATTERN.test(e.id)) p('id must look like CVE-2024-6387');
  if (e.cvss_score !== null && (typeof e.cvss_score !== 'number' || e.cvss_score < 0 || e.cvss_score > 10)) p('cvss_score must be 0-10 or null');
  if (e.cvss_vector !== null && typeof e.cvss_vector !== 'string') p('cvss_vector must be a string or null');
  if (e.cvss_version !== null && !['2.0', '3.0', '3.1', '4.0'].includes(e.cvss_version as string)) p('cvss_version must be 2.0, 3.0, 3.1, 4.0 or null');
  if (options.checkScore !== false && typeof e.cvss_vector === 'string' && typeof e.cvss_score === 'number' && e.cvss_version !== '4.0') {
    const computed = cvssBaseScore(e.cvss_vector);
    if (computed === null) p(`cvss_vector '${e.cvss_vector}' is not a CVSS v2/v3 vector`);
    else if (Math.abs(computed - e.cvss_score) > 0.05) p(`cvss_score ${e.cvss_score} disagrees with its vector (${computed})`);
    const v = e.cvss_vector.match(/^CVSS:(3\.[01])\//)?.[1] ?? '2.0';
    if (e.cvss_version !== v) p(`cvss_version ${String(e.cvss_version)} disagrees with the vector (${v})`);
  }
  if (typeof e.description !== 'string' || e.description.trim() === '') p('description must be a non-empty string');
  if (e.remediation !== null && typeof e.remediation !== 'string') p('remediation must be a string or null');
  if (!Array.isArray(e.references) || e.references.some((r) => typeof r !== 'string' || !/^https?:\/\//.test(r))) p('references must be an array of URLs');
  if (typeof e.kev !== 'boolean') p('kev must be true or false');
  if (e.published !== undefined && e.published !== null && (typeof e.published !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(e.published))) {
    p('published must be a date (YYYY-MM-DD)');
  }
  if (e.last_modified !== undefined && e.last_modified !== null && typeof e.last_modified !== 'string') p('last_modified must be a string');
  if (!Array.isArray(e.affected) || (e.affected.length === 0 && !options.allowEmptyAffected)) {
    p('affected must be a non-empty array');
    return problems;
  }
  for (const a of e.affected as unknown[]) {
    if (typeof a !== 'object' || a === null) {
      p('affected item must be an object');
      continue;
    }
    const item = a as Record<string, unknown>;
    for (const k of Object.keys(item)) if (!AFFECTED_FIELDS.has(k)) p(`affected: unknown field '${k}'`);
    if (typeof item.cpe !== 'string' || !/^[^\sA-Z:]+:[^\sA-Z:]+$/.test(item.cpe)) p(`affected cpe '${String(item.cpe)}' must be vendor:product in lower case`);
    for (const f of RANGE_FIELDS) if (item[f] !== undefined && typeof item[f] !== 'string') p(`affected ${f} must be a string`);
    for (const f of ['services', 'requiresDistro', 'windowsReleases']) {
      if (item[f] !== undefined && (!Array.isArray(item[f]) || (item[f] as unknown[]).some((s) => typeof s !== 'string'))) p(`affected ${f} must be an array of strings`);
    }
    if (item.windowsReleases !== undefined && Array.isArray(item.windowsReleases)) {
      for (const r of item.windowsReleases as string[]) if (!WINDOWS_ORDER.includes(r)) p(`unknown Windows release '${r}'`);
    }
    if (item.versionIndependent !== undefined && item.versionIndependent !== true) p('versionIndependent must be true when given');
    if (item.maxConfidence !== undefined && item.maxConfidence !== 'likely') p("maxConfidence must be 'likely' when given");
    const hasRange = RANGE_FIELDS.some((f) => item[f] !== undefined);
    if (item.versionIndependent && hasRange) p('a version-independent entry cannot have version bounds');
    if (!item.versionIndependent) {
      try {
        const r = compileRange(item);
        const start = r.startIncluding ?? r.startExcluding;
        const end = r.endIncluding ?? r.endExcluding;
        if (start && end) {
          const c = compareParsed(start, end);
          if (c > 0 || (c === 0 && !(r.startIncluding && r.endIncluding))) p(`range start ${start.raw} is not below its end ${end.raw}`);
        }
      } catch (err) {
        p(`affected ${String(item.cpe)}: ${(err as Error).message}`);
      }
    }
  }
  return problems;
}
