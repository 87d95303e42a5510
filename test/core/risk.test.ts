import { describe, expect, it } from 'vitest';
import {
  BUILTIN_RISK_RULES,
  FIRST_FINDING_POINTS,
  assessRisk,
  compileRiskRules,
  cveSeverity,
  matchPortRules,
  portRiskSeverity,
  resolveRiskRules,
  type RiskCveInput,
  type RiskPortInput,
} from '../../src/core/risk.js';
import { RISK_SCORE_BANDS, SEVERITY_RANK, type FindingSeverity, type RiskLevel } from '../../src/core/severity.js';
import type { RiskRuleSetting } from '../../src/core/settings.js';
import type { ScannedPort } from '../../src/core/model.js';

const port = (
  p: number,
  service: string | null,
  product: string | null = null,
  version: string | null = null,
  extra: { protocol?: 'tcp' | 'udp'; state?: string; extra_info?: string | null; cpe?: string[] } = {},
): ScannedPort => ({
  port: p,
  protocol: extra.protocol ?? 'tcp',
  state: extra.state ?? 'open',
  service,
  product,
  version,
  extra_info: extra.extra_info ?? null,
  cpe: extra.cpe ?? [],
});
const udp = (p: number, service: string | null, product: string | null = null, version: string | null = null) =>
  port(p, service, product, version, { protocol: 'udp' });

/** Rule ids of the findings for one port. */
const ruleIds = (p: RiskPortInput, rules: readonly RiskRuleSetting[] = []) => matchPortRules(p, rules).map((m) => m.rule.id);
const titleOf = (id: string) => BUILTIN_RISK_RULES.find((r) => r.id === id)!.title;

describe('built-in rule table', () => {
  it('has unique, stable ids and complete texts', () => {
    const ids = BUILTIN_RISK_RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const rule of BUILTIN_RISK_RULES) {
      expect(rule.id).toMatch(/^[a-z0-9][a-z0-9_.-]*$/);
      expect(rule.title.length).toBeGreaterThan(3);
      expect(rule.description.length).toBeGreaterThan(40);
      expect(rule.recommendation.length).toBeGreaterThan(40);
      expect(['critical', 'high', 'medium', 'low']).toContain(rule.severity);
      expect((rule.ports?.length ?? 0) + (rule.services?.length ?? 0)).toBeGreaterThan(0);
    }
  });

  it.each(BUILTIN_RISK_RULES.map((r) => [r.id, r] as const))('%s fires on its own port and service', (id, rule) => {
    const p = rule.ports![0];
    const service = rule.services?.[0] ?? 'http';
    const found = assessRisk([port(p, service, null, null, { protocol: rule.protocol ?? 'tcp' })]);
    expect(found.findings.map((f) => f.title)).toContain(rule.title);
    const finding = found.findings.find((f) => f.title === rule.title)!;
    expect(finding).toMatchObject({ port: p, protocol: rule.protocol ?? 'tcp', severity: rule.severity, service, cve_ids: [] });
    expect(ruleIds(port(p, service, null, null, { protocol: rule.protocol ?? 'tcp' }))).toContain(id);
  });

  // What nmap (or the native engine) really reports for these services.
  const realistic: [string, ScannedPort, string[]][] = [
    ['telnet on 23', port(23, 'telnet', 'Linux telnetd'), ['telnet']],
    ['BusyBox telnet on 2323', port(2323, 'telnet', 'BusyBox telnetd'), ['telnet']],
    ['rexec', port(512, 'exec', 'netkit-rsh rexecd'), ['rexec']],
    ['rlogin', port(513, 'login'), ['rlogin']],
    ['rsh', port(514, 'shell', 'Netkit rshd'), ['rsh']],
    ['syslog on 514/udp is not rsh', udp(514, 'syslog'), []],
    ['vsftpd', port(21, 'ftp', 'vsftpd', '3.0.3'), ['ftp']],
    ['FTPS on 990', port(990, 'ftps', 'vsftpd'), []],
    ['TFTP', udp(69, 'tftp'), ['tftp']],
    ['Windows SMB', port(445, 'microsoft-ds', 'Microsoft Windows 7 - 10 microsoft-ds', null, { extra_info: 'workgroup: WORKGROUP' }), ['smb']],
    ['Samba on 445 (nmap calls it netbios-ssn)', port(445, 'netbios-ssn', 'Samba smbd', '4.6.2'), ['smb']],
    ['Samba on 139', port(139, 'netbios-ssn', 'Samba smbd', '3.X - 4.X'), ['netbios-ssn']],
    ['NetBIOS name service', udp(137, 'netbios-ns', 'Microsoft Windows netbios-ns'), ['netbios-ns']],
    ['MS-RPC', port(135, 'msrpc', 'Microsoft Windows RPC'), ['msrpc']],
    ['RDP', port(3389, 'ms-wbt-server', 'Microsoft Terminal Services'), ['rdp']],
    ['xrdp on 3390', port(3390, 'ms-wbt-server', 'xrdp'), ['rdp']],
    ['VNC', port(5900, 'vnc', 'VNC', null, { extra_info: 'protocol 3.8' }), ['vnc']],
    ['RealVNC on 5910', port(5910, 'vnc', 'RealVNC Enterprise', '5.3'), ['vnc']],
    ['Kibana is not Elasticsearch', port(5601, 'http', 'Elasticsearch Kibana'), []],
    [
      'ingress default certificate is not the API server',
      port(443, 'https', 'nginx', null, { extra_info: 'commonName=Kubernetes Ingress Controller Fake Certificate' }),
      [],
    ],
    ['MySQL', port(3306, 'mysql', 'MySQL', '8.0.36'), ['mysql']],
    ['MariaDB on 3307', port(3307, 'mysql', 'MariaDB', '10.11.6'), ['mysql']],
    ['PostgreSQL', port(5432, 'postgresql', 'PostgreSQL DB', '9.6.0 or later'), ['postgresql']],
    ['MSSQL', port(1433, 'ms-sql-s', 'Microsoft SQL Server 2019', '15.00.2000.00'), ['mssql']],
    ['MongoDB', port(27017, 'mongodb', 'MongoDB', '6.0.13'), ['mongodb']],
    ['Redis', port(6379, 'redis', 'Redis key-value store', '7.2.4'), ['redis']],
    [
      'Elasticsearch (nmap: http)',
      port(9200, 'http', 'Elasticsearch REST API', '8.12.0', { extra_info: 'name: node-1; cluster: docker-cluster' }),
      ['elasticsearch'],
    ],
    ['Memcached', port(11211, 'memcached', 'Memcached', '1.6.21'), ['memcached']],
    ['CouchDB (nmap: http)', port(5984, 'http', 'CouchDB httpd', '3.3.3'), ['couchdb']],
    ['Docker API', port(2375, 'docker', 'Docker', '24.0.7', { extra_info: 'API 1.43' }), ['docker-api']],
    ['Docker API over TLS', port(2376, 'docker'), ['docker-api-tls']],
    ['Docker API wrapped in TLS elsewhere', port(2377, 'ssl/docker', 'Docker', '24.0.7'), ['docker-api-tls']],
    ['Docker Registry is not the engine API', port(5000, 'http', 'Docker Registry', null, { extra_info: 'API: 2.0' }), []],
    ['Kubernetes API', port(6443, 'https', 'Golang net/http server'), ['kubernetes-api']],
    ['Kubernetes API by certificate', port(16443, 'https', null, null, { extra_info: 'commonName=kube-apiserver' }), ['kubernetes-api']],
    ['kubelet', port(10250, 'https', 'Golang net/http server'), ['kubelet']],
    ['kubelet read-only', port(10255, 'http', 'Golang net/http server'), ['kubelet-readonly']],
    ['etcd', port(2379, 'https', 'Golang net/http server'), ['etcd']],
    ['SNMP', udp(161, 'snmp', 'net-snmp; net-snmp SNMPv3 server'), ['snmp']],
    ['SSDP', udp(1900, 'upnp'), ['upnp']],
    ['MiniUPnPd on its HTTP port', port(5000, 'http', 'MiniUPnP', '2.3.3'), ['upnp']],
    ['Microsoft HTTPAPI "SSDP/UPnP" is not UPnP', port(5357, 'http', 'Microsoft HTTPAPI httpd', '2.0', { extra_info: 'SSDP/UPnP' }), []],
    ['WinRM', port(5985, 'http', 'Microsoft HTTPAPI httpd', '2.0', { extra_info: 'SSDP/UPnP' }), ['winrm']],
    ['MQTT plain', port(1883, 'mqtt', 'Mosquitto', '2.0.18'), ['mqtt']],
    ['MQTT over TLS on 8883 (tunnel lost in the name)', port(8883, 'mqtt'), []],
    ['MQTT over TLS (native name)', port(8883, 'secure-mqtt'), []],
    ['Tomcat on 8080', port(8080, 'http', 'Apache Tomcat', '9.0.85'), ['http-admin']],
    ['plain web server on 8000', port(8000, 'http', 'nginx', '1.24.0'), ['http-admin']],
    ['Webmin on 10000', port(10000, 'http', 'MiniServ', '2.105', { extra_info: 'Webmin httpd' }), ['http-admin']],
    ['Webmin with TLS', port(10000, 'https', 'MiniServ', '2.105', { extra_info: 'Webmin httpd' }), []],
    ['router admin page on 80', port(80, 'http', 'TP-LINK WR740N WAP http config'), ['http-admin']],
    ['ordinary web server on 80', port(80, 'http', 'nginx', '1.24.0'), []],
    ['HTTPS on 443', port(443, 'https', 'nginx', '1.24.0'), []],
    ['RouterOS SSH is not a web admin page', port(22, 'ssh', 'MikroTik RouterOS sshd', null, { extra_info: 'protocol 2.0' }), []],
    ['Jupyter (Tornado) on 8888', port(8888, 'http', 'Tornado httpd', '6.4'), ['jupyter']],
    ['Metasploitable bind shell', port(1524, 'bindshell', 'Metasploitable root shell'), ['backdoor-ingreslock']],
    ['port 4444 unidentified', port(4444, null), ['backdoor-metasploit']],
    ['NetBus', port(12345, 'netbus', 'NetBus trojan', '1.70'), ['backdoor-netbus']],
    ['Back Orifice', udp(31337, 'BackOrifice'), ['backdoor-back-orifice']],
    ['NFS', port(2049, 'nfs', null, '3-4', { extra_info: 'RPC #100003' }), ['nfs']],
    ['rpcbind', port(111, 'rpcbind', null, '2-4', { extra_info: 'RPC #100000' }), ['rpcbind']],
    ['rsync', port(873, 'rsync', null, null, { extra_info: 'protocol version 31' }), ['rsync']],
    ['OpenLDAP on 389', port(389, 'ldap', 'OpenLDAP', '2.2.X - 2.3.X'), ['ldap']],
    ['LDAPS on 636 (tunnel lost in the name)', port(636, 'ldap', 'OpenLDAP'), []],
    ['LDAPS (native name)', port(636, 'ldapssl'), []],
    ['X11', port(6000, 'X11', null, null, { extra_info: 'access denied' }), ['x11']],
    ['IPMI', udp(623, 'asf-rmcp', 'IPMI', '2.0'), ['ipmi']],
    ['Modbus', port(502, 'mbap'), ['modbus']],
    ['SIP', udp(5060, 'sip', 'Asterisk PBX', '18.0'), ['sip']],
    ['SIP over TLS', port(5061, 'sip-tls'), []],
    ['Java RMI', port(1099, 'java-rmi', 'Java RMI'), ['java-rmi']],
    ['CUPS', port(631, 'ipp', 'CUPS', '2.4'), ['ipp']],
    ['PPTP', port(1723, 'pptp', 'linux', null, { extra_info: 'Firmware: 1' }), ['pptp']],
    ['RTSP camera', port(554, 'rtsp', 'Hikvision IP camera rtspd'), ['rtsp']],
    ['JetDirect', port(9100, 'jetdirect'), ['jetdirect']],
    ['finger', port(79, 'finger', 'Linux fingerd'), ['finger']],
    ['SSH is not a risk in itself', port(22, 'ssh', 'OpenSSH', '9.6p1 Ubuntu 3ubuntu13', { extra_info: 'protocol 2.0' }), []],
    ['DNS', port(53, 'domain', 'dnsmasq', '2.90'), []],
  ];
  it.each(realistic)('%s', (_name, p, expected) => {
    expect(ruleIds(p).sort()).toEqual([...expected].sort());
  });
});

describe('matching by port and service', () => {
  it('finds a service on a non-standard port and says so', () => {
    const cases: [ScannedPort, string][] = [
      [port(2222, 'telnet', 'BusyBox telnetd'), 'telnet'],
      [port(6380, 'redis', 'Redis key-value store', '7.0.15'), 'redis'],
      [port(3307, 'mysql', 'MySQL', '8.0.36'), 'mysql'],
      [port(13389, 'ms-wbt-server', 'Microsoft Terminal Services'), 'rdp'],
      [port(8200, 'http', 'Elasticsearch REST API', '7.17.0'), 'elasticsearch'],
      [port(12321, 'http', 'MiniServ', '2.105', { extra_info: 'Webmin httpd' }), 'http-admin'],
      [port(8099, 'http', 'lighttpd', null, { extra_info: 'Netgear router http config' }), 'http-admin'],
      [port(31000, 'bindshell', 'Metasploitable root shell'), 'backdoor-ingreslock'],
    ];
    for (const [p, id] of cases) {
      expect(ruleIds(p), `${p.service} on ${p.port}`).toEqual([id]);
      const f = assessRisk([p]).findings[0];
      expect(f.title).toBe(titleOf(id));
      expect(f.port).toBe(p.port);
      if (BUILTIN_RISK_RULES.find((r) => r.id === id)!.ports?.includes(p.port) === false)
        expect(f.description).toContain(`non-standard port ${p.port}/tcp`);
    }
  });

  it('does not misjudge an identified service by its port', () => {
    const cases: ScannedPort[] = [
      port(23, 'ssh', 'OpenSSH', '9.2p1', { extra_info: 'protocol 2.0' }),
      port(23, 'ssh'),
      port(3306, 'http', 'nginx'),
      port(6379, 'http'),
      port(3389, 'ssh', 'OpenSSH'),
      port(445, 'http', 'Apache httpd'),
      port(9200, 'http', 'nginx', '1.24.0'),
      port(4444, 'http', 'Werkzeug httpd', '3.0.1'),
      port(1524, 'ssh', 'Dropbear sshd'),
      port(8080, 'https', 'Apache Tomcat'),
      port(8080, 'ssl/http', 'Apache Tomcat'),
      port(8080, 'ssh', 'OpenSSH'),
      port(8888, 'http-proxy', 'Squid http proxy'),
      port(2375, 'http', 'Caddy'),
      port(27017, 'http', 'Node.js Express framework'),
    ];
    for (const p of cases) expect(ruleIds(p), `${p.service} on ${p.port}`).toEqual([]);
  });

  it('matches an unidentified service by its port and says it did', () => {
    const cases: [ScannedPort, string][] = [
      [port(23, null), 'telnet'],
      [port(6379, 'unknown'), 'redis'],
      [port(3389, 'tcpwrapped'), 'rdp'],
      [port(9200, 'wap-wsp'), 'elasticsearch'], // the port-table name, nothing detected
      [port(4444, 'krb524'), 'backdoor-metasploit'],
      [port(31337, 'Elite'), 'backdoor-back-orifice'],
      [port(8888, 'sun-answerbook'), 'http-admin'],
      [port(8080, null), 'http-admin'],
      [port(2375, 'ssl'), 'docker-api-tls'],
    ];
    for (const [p, id] of cases) {
      expect(ruleIds(p), `${p.service} on ${p.port}`).toEqual([id]);
      expect(assessRisk([p]).findings[0].description).toContain(`Matched by port ${p.port}/tcp`);
    }
    // A detected service names the match as such.
    expect(assessRisk([port(23, 'telnet', 'Linux telnetd')]).findings[0].description).not.toContain('Matched by port');
    expect(assessRisk([port(23, 'telnet', 'Linux telnetd')]).findings[0].description).toContain('Detected: Linux telnetd.');
    // A generic web server on the port of a web-based service counts, but says what it answered as.
    expect(assessRisk([port(9200, 'http')]).findings[0].description).toContain('answered only as generic "http"');
  });

  it('counts only open ports', () => {
    for (const state of ['closed', 'filtered', 'open|filtered', 'closed|filtered', 'unfiltered']) {
      const ports = [port(23, 'telnet', null, null, { state }), udp(161, 'snmp'), port(3389, 'ms-wbt-server', null, null, { state })];
      ports[1].state = state;
      const risk = assessRisk(ports, []);
      expect(risk.findings, state).toEqual([]);
      expect(risk).toMatchObject({ level: 'none', score: 0 });
      expect(portRiskSeverity(ports[0])).toBeNull();
    }
    expect(assessRisk([port(23, 'telnet', null, null, { state: 'OPEN' })]).level).toBe('critical');
  });

  it('keeps the generic admin-page rule out of a port a specific rule explains', () => {
    expect(ruleIds(port(8080, 'http', 'CouchDB httpd', '3.3.3'))).toEqual(['couchdb']);
    expect(ruleIds(port(8888, 'http', 'Jupyter Notebook'))).toEqual(['jupyter']);
    expect(ruleIds(port(8888, null))).toEqual(['http-admin']);
  });

  it('reports each rule once per port even when the port is listed twice', () => {
    const risk = assessRisk([port(23, 'telnet'), port(23, 'telnet', 'Linux telnetd')]);
    expect(risk.findings).toHaveLength(1);
  });

  it('does not carry scores or mutations from one assessment to the next', () => {
    const first = assessRisk([port(23, 'telnet'), port(2323, 'telnet')]);
    expect(first.findings.map((f) => f.score)).toEqual([70, 15]);
    first.findings[1].cve_ids.push('CVE-0000-0000');
    first.findings[1].title = 'changed';
    const second = assessRisk([port(2323, 'telnet')]);
    expect(second.findings[0]).toMatchObject({ score: 70, title: titleOf('telnet'), cve_ids: [] });
  });

  it('gives the change detector the severity of a port', () => {
    expect(portRiskSeverity({ port: 23, protocol: 'tcp', state: 'open', service: 'telnet', product: null, version: null })).toBe('critical');
    expect(portRiskSeverity({ port: 22, protocol: 'tcp', state: 'open', service: 'ssh', product: 'OpenSSH', version: '9.6' })).toBeNull();
    expect(portRiskSeverity(port(23, 'telnet'), [{ id: 'telnet', severity: 'low', title: 'Telnet (lab)' }])).toBe('low');
  });
});

describe('user rules', () => {
  it('adds a rule by port (any service there) and one by service (any port)', () => {
    const rules: RiskRuleSetting[] = [
      { id: 'nas-admin', port: 5001, severity: 'high', title: 'NAS admin page', recommendation: 'Use the VPN.' },
      { id: 'plex', service: 'Plex', severity: 'low', title: 'Plex media server' },
    ];
    const risk = assessRisk([port(5001, 'https', 'nginx'), port(32400, 'plex', 'Plex Media Server'), port(22, 'ssh')], [], rules);
    expect(risk.findings.map((f) => [f.title, f.severity, f.port])).toEqual([
      ['NAS admin page', 'high', 5001],
      ['Plex media server', 'low', 32400],
    ]);
    expect(risk.findings[0].recommendation).toBe('Use the VPN.');
    expect(risk.findings[1].description).toContain('plex');
    expect(risk.findings[1].recommendation.length).toBeGreaterThan(20);
    expect(risk.level).toBe('high');
  });

  it('overrides a built-in rule with the same id', () => {
    const rules: RiskRuleSetting[] = [{ id: 'telnet', severity: 'medium', title: 'Telnet (lab switch, accepted)' }];
    const risk = assessRisk([port(23, 'telnet'), port(2323, 'telnet')], [], rules);
    expect(risk.findings.map((f) => f.severity)).toEqual(['medium', 'medium']);
    expect(risk.findings[0].title).toBe('Telnet (lab switch, accepted)');
    expect(risk.findings[0].description).toContain(BUILTIN_RISK_RULES.find((r) => r.id === 'telnet')!.description);
    expect(risk.level).toBe('medium');
    expect(risk.score).toBeLessThan(RISK_SCORE_BANDS.high.min);
  });

  it('overrides the ports, service and protocol of a built-in rule when given', () => {
    const rules: RiskRuleSetting[] = [{ id: 'redis', port: 16379, severity: 'critical', title: 'Redis', recommendation: 'Firewall it.' }];
    expect(ruleIds(port(16379, null), rules)).toEqual(['redis']);
    expect(ruleIds(port(6379, null), rules)).toEqual([]);
    expect(ruleIds(port(6380, 'redis'), rules)).toEqual(['redis']); // still found by service
    const byService: RiskRuleSetting[] = [{ id: 'rtsp', service: 'rtsp-alt', severity: 'high', title: 'Camera stream' }];
    expect(ruleIds(port(8554, 'rtsp-alt'), byService)).toEqual(['rtsp']);
    expect(ruleIds(port(8554, 'rtsp'), byService)).toEqual([]);
    const udpOnly: RiskRuleSetting[] = [{ id: 'nas-udp', port: 9999, protocol: 'udp', severity: 'low', title: 'x' }];
    expect(ruleIds(udp(9999, null), udpOnly)).toEqual(['nas-udp']);
    expect(ruleIds(port(9999, null), udpOnly)).toEqual([]);
  });

  it('enabled:false disables a built-in rule; unknown ids and empty rules do nothing', () => {
    const rules: RiskRuleSetting[] = [
      { id: 'ftp', severity: 'medium', title: 'FTP', enabled: false },
      { id: 'does-not-exist', severity: 'low', title: 'x', enabled: false },
      { id: 'matches-nothing', severity: 'critical', title: 'no port, no service' },
    ];
    const risk = assessRisk([port(21, 'ftp', 'vsftpd', '3.0.3'), port(23, 'telnet')], [], rules);
    expect(risk.findings.map((f) => f.title)).toEqual([titleOf('telnet')]);
    expect(compileRiskRules(rules).rules.some((r) => r.id === 'ftp')).toBe(false);
    expect(compileRiskRules(rules).rules).toHaveLength(BUILTIN_RISK_RULES.length);
  });

  it('compiles a settings array once', () => {
    const rules: RiskRuleSetting[] = [{ id: 'x', port: 1, severity: 'low', title: 'x' }];
    expect(resolveRiskRules(rules)).toBe(resolveRiskRules(rules));
    const set = compileRiskRules(rules);
    expect(resolveRiskRules(set)).toBe(set);
    expect(assessRisk([port(1, null)], [], set).findings).toHaveLength(1);
  });
});

describe('CVE findings', () => {
  const cve = (id: string, severity: string, cvss: number | null, p: number | null, extra: Partial<RiskCveInput> = {}): RiskCveInput => ({
    id,
    severity,
    cvss_score: cvss,
    port: p,
    confidence: 'confirmed',
    ...extra,
  });

  it('gives one finding per CVE of a port, worst first, each with its key', () => {
    const ports = [port(22, 'ssh', 'OpenSSH', '8.9p1', { extra_info: 'Ubuntu Linux; protocol 2.0' })];
    const risk = assessRisk(ports, [
      cve('CVE-2023-51385', 'medium', 6.5, 22),
      cve('CVE-2023-38408', 'critical', 9.8, 22),
      cve('CVE-2024-6387', 'high', 8.1, 22, { kev: false, remediation: 'Upgrade OpenSSH to 9.8p1 or later.' }),
    ]);
    expect(risk.findings.map((f) => [f.finding_key, f.kind, f.severity, f.cvss_score, f.cve_ids])).toEqual([
      ['cve:CVE-2023-38408:22', 'cve', 'critical', 9.8, ['CVE-2023-38408']],
      ['cve:CVE-2024-6387:22', 'cve', 'high', 8.1, ['CVE-2024-6387']],
      ['cve:CVE-2023-51385:22', 'cve', 'medium', 6.5, ['CVE-2023-51385']],
    ]);
    const f = risk.findings[0];
    expect(f).toMatchObject({ port: 22, protocol: 'tcp', service: 'ssh', severity: 'critical' });
    expect(f.title).toBe('CVE-2023-38408 in OpenSSH 8.9p1');
    expect(f.description).toContain('CVE-2023-38408 (critical, CVSS 9.8)');
    expect(f.description).toContain('Critical severity');
    expect(f.description).toContain('Matched on the detected product and version.');
    expect(f.recommendation).toContain('Update OpenSSH 8.9p1 on port 22/tcp');
    expect(f.recommendation).toContain('allow port 22 only');
    expect(risk.findings[1].recommendation).toContain('Upgrade OpenSSH to 9.8p1 or later.');
    expect(risk.level).toBe('critical');
    expect(risk.score).toBe(70 + 8 + 4);
    expect(risk.top_recommendation).toBe(f.recommendation);
  });

  it('notes known-exploited CVEs, uses the remediation, and separates ports', () => {
    const ports = [port(21, 'ftp', 'vsftpd', '2.3.4'), port(445, 'microsoft-ds', 'Microsoft Windows 7 - 10 microsoft-ds')];
    const risk = assessRisk(ports, [
      cve('CVE-2011-2523', 'critical', 9.8, 21, { kev: true, remediation: 'Replace vsftpd 2.3.4 with a clean build' }),
      cve('CVE-2017-0144', 'high', 8.1, 445, { kev: true, confidence: 'likely' }),
    ]);
    const vsftpd = risk.findings.find((f) => f.cve_ids.includes('CVE-2011-2523'))!;
    expect(vsftpd.title).toBe('CVE-2011-2523 in vsftpd 2.3.4 (actively exploited)');
    expect(vsftpd.description).toContain("CISA's Known Exploited Vulnerabilities");
    expect(vsftpd.recommendation).toMatch(/^Do this first.*Replace vsftpd 2\.3\.4 with a clean build\./);
    const smb = risk.findings.find((f) => f.cve_ids.includes('CVE-2017-0144'))!;
    expect(smb).toMatchObject({ port: 445, severity: 'high' });
    expect(smb.description).toContain('likely');
    expect(smb.description).toContain('Matched on the product only');
    // Rule findings of the same ports are listed too.
    expect(risk.findings.map((f) => [f.port, f.severity, f.cve_ids.length > 0])).toEqual([
      [21, 'critical', true],
      [445, 'high', false],
      [445, 'high', true],
      [21, 'medium', false],
    ]);
    expect(risk.findings.filter((f) => f.cve_ids.length === 0).map((f) => f.title)).toEqual([titleOf('smb'), titleOf('ftp')]);
  });

  it('handles host-level matches, duplicates and missing severities', () => {
    const risk = assessRisk(
      [],
      [
        cve('CVE-2021-0001', 'unknown', 7.5, null, { matched_product: 'Linux kernel', matched_version: '5.4' }),
        cve('CVE-2021-0001', 'unknown', 7.5, null, { kev: true }),
        cve('CVE-2021-0002', '', null, null),
      ],
    );
    expect(risk.findings).toHaveLength(2);
    expect(risk.findings[0]).toMatchObject({
      finding_key: 'cve:CVE-2021-0001:-',
      port: null,
      protocol: null,
      service: null,
      severity: 'high',
      cve_ids: ['CVE-2021-0001'],
    });
    expect(risk.findings[0].title).toBe('CVE-2021-0001 in Linux kernel 5.4 (actively exploited)');
    expect(risk.findings[1]).toMatchObject({ finding_key: 'cve:CVE-2021-0002:-', severity: 'medium', cve_ids: ['CVE-2021-0002'] });
  });

  it('maps CVE severities', () => {
    expect(cveSeverity({ severity: 'CRITICAL', cvss_score: 1 })).toBe('critical');
    expect(cveSeverity({ severity: 'moderate', cvss_score: null })).toBe('medium');
    expect(cveSeverity({ severity: 'none', cvss_score: 0 })).toBe('low');
    expect(cveSeverity({ severity: '', cvss_score: 9.0 })).toBe('critical');
    expect(cveSeverity({ severity: '', cvss_score: 6.9 })).toBe('medium');
    expect(cveSeverity({ severity: '', cvss_score: 3.1 })).toBe('low');
    expect(cveSeverity({ severity: '', cvss_score: null })).toBe('medium');
  });
});

describe('score and level', () => {
  it('is none/0 without findings', () => {
    expect(assessRisk([])).toEqual({
      level: 'none',
      score: 0,
      summary: 'No risky services or known vulnerabilities found',
      top_recommendation: null,
      findings: [],
    });
    expect(assessRisk([port(22, 'ssh', 'OpenSSH'), port(443, 'https', 'nginx')], [])).toMatchObject({ level: 'none', score: 0 });
  });

  it.each([
    ['one critical', [port(23, 'telnet')], 'critical', 70, [70]],
    ['one high', [port(3389, 'ms-wbt-server')], 'high', 40, [40]],
    ['one medium', [port(21, 'ftp')], 'medium', 15, [15]],
    ['one low', [port(111, 'rpcbind')], 'low', 5, [5]],
    ['critical + medium', [port(21, 'ftp'), port(23, 'telnet')], 'critical', 74, [70, 4]],
    ['two criticals + high', [port(23, 'telnet'), port(2375, 'docker'), port(3389, 'ms-wbt-server')], 'critical', 93, [70, 15, 8]],
    [
      'high + 2 medium + low',
      [port(445, 'microsoft-ds'), port(135, 'msrpc'), port(139, 'netbios-ssn'), port(111, 'rpcbind')],
      'high',
      49,
      [40, 4, 4, 1],
    ],
  ] as const)('%s', (_name, ports, level, score, parts) => {
    const risk = assessRisk(ports);
    expect(risk.level).toBe(level);
    expect(risk.score).toBe(score);
    expect(risk.findings.map((f) => f.score)).toEqual(parts);
  });

  it('caps at the top of the level band, and later findings add what is left', () => {
    const mediums = [21, 135, 139, 873, 1723, 3306, 5432, 1433, 389, 2049].map((p) => port(p, null));
    const risk = assessRisk(mediums);
    expect(risk.level).toBe('medium');
    expect(risk.score).toBe(RISK_SCORE_BANDS.medium.max);
    expect(risk.findings.map((f) => f.score)).toEqual([15, 4, 4, 4, 4, 4, 4, 0, 0, 0]);
    const criticals = [23, 2323, 512, 513, 514, 2375].map((p) => port(p, null));
    expect(assessRisk(criticals).score).toBe(100);
  });

  it('orders findings worst first and summarises them', () => {
    const risk = assessRisk([port(21, 'ftp'), port(111, 'rpcbind'), port(23, 'telnet'), port(2323, 'telnet'), port(3389, 'ms-wbt-server')]);
    expect(risk.findings.map((f) => [f.severity, f.port])).toEqual([
      ['critical', 23],
      ['critical', 2323],
      ['high', 3389],
      ['medium', 21],
      ['low', 111],
    ]);
    expect(risk.summary).toBe(`5 findings: ${titleOf('telnet')} (critical, ×2), ${titleOf('rdp')} (high), ${titleOf('ftp')} (medium), and 1 more`);
    expect(risk.top_recommendation).toBe(BUILTIN_RISK_RULES.find((r) => r.id === 'telnet')!.recommendation);
    expect(assessRisk([port(21, 'ftp')]).summary).toBe(`1 finding: ${titleOf('ftp')} (medium)`);
  });

  it('level and score agree with the findings for any input (property)', () => {
    // Deterministic pseudo-random generator (mulberry32) so failures reproduce.
    let seed = 0x5eed;
    const rand = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
    const severities: FindingSeverity[] = ['critical', 'high', 'medium', 'low'];
    const pool: ScannedPort[] = [
      ...BUILTIN_RISK_RULES.flatMap((r) =>
        (r.ports ?? []).map((p) => port(p, pick([null, ...(r.services ?? ['http'])]), null, null, { protocol: r.protocol ?? 'tcp' })),
      ),
      port(22, 'ssh', 'OpenSSH'),
      port(80, 'http', 'nginx'),
      port(443, 'https'),
      port(53, 'domain'),
      port(2222, 'telnet'),
      port(23, 'ssh'),
    ];
    const states = ['open', 'open', 'open', 'closed', 'filtered', 'open|filtered'];
    for (let i = 0; i < 2000; i++) {
      const ports = Array.from({ length: Math.floor(rand() * 12) }, () => ({ ...pick(pool), state: pick(states) }));
      const cves: RiskCveInput[] = Array.from({ length: rand() < 0.5 ? 0 : Math.floor(rand() * 6) }, (_, k) => ({
        id: `CVE-2024-${1000 + Math.floor(rand() * 50)}`,
        severity: pick([...severities, 'unknown']),
        cvss_score: rand() < 0.2 ? null : Math.round(rand() * 100) / 10,
        port: rand() < 0.2 ? null : (ports[k]?.port ?? 22),
        confidence: pick(['confirmed', 'likely']),
        kev: rand() < 0.1,
      }));
      const userRules: RiskRuleSetting[] =
        rand() < 0.3
          ? [
              { id: pick(BUILTIN_RISK_RULES).id, severity: pick(severities), title: 'override', enabled: rand() < 0.7 },
              { id: 'custom', port: pick(pool).port, severity: pick(severities), title: 'custom' },
            ]
          : [];
      const risk = assessRisk(ports, cves, userRules);
      const worst = risk.findings.reduce<RiskLevel>((w, f) => (SEVERITY_RANK[f.severity] > SEVERITY_RANK[w] ? f.severity : w), 'none');
      const context = JSON.stringify({ ports, cves, userRules });
      expect(risk.level, context).toBe(worst);
      expect(risk.score, context).toBeGreaterThanOrEqual(RISK_SCORE_BANDS[risk.level].min);
      expect(risk.score, context).toBeLessThanOrEqual(RISK_SCORE_BANDS[risk.level].max);
      expect(
        risk.findings.reduce((s, f) => s + f.score, 0),
        context,
      ).toBe(risk.score);
      expect(risk.top_recommendation).toBe(risk.findings[0]?.recommendation ?? null);
      for (let k = 1; k < risk.findings.length; k++) {
        expect(SEVERITY_RANK[risk.findings[k - 1].severity]).toBeGreaterThanOrEqual(SEVERITY_RANK[risk.findings[k].severity]);
        expect(risk.findings[k - 1].score).toBeGreaterThanOrEqual(risk.findings[k].score);
      }
      if (risk.findings.length > 0) expect(risk.findings[0].score).toBe(FIRST_FINDING_POINTS[risk.findings[0].severity]);
      // A device without a critical finding is never critical; one with it always is.
      expect(risk.level === 'critical', context).toBe(risk.findings.some((f) => f.severity === 'critical'));
      expect(risk.findings.every((f) => ports.some((p) => p.port === f.port && p.state === 'open') || f.cve_ids.length > 0)).toBe(true);
    }
  });
});
