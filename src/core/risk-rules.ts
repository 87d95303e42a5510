/**
 * The built-in risk rules: risky ports and services a scan can find, each with a severity, what the
 * risk is and what a home-lab administrator can do about it. Pure data; matching and scoring live
 * in `risk.ts`.
 *
 * How a rule matches an open port (see `risk.ts` for the full algorithm):
 * - by service, on any port: the detected service name is one of `services`, or the detected
 *   product / extra info matches `product` / `extraInfo` (Elasticsearch is reported by nmap as
 *   service `http`, product `Elasticsearch REST API`). Telnet on 2323 is telnet.
 * - by port, on one of `ports`: only when the service was not identified (no name, `unknown`,
 *   `tcpwrapped`, or just the port-table guess), or when what was identified is one of
 *   `portNames` (names that do not contradict the rule there: nmap-services table names, or the
 *   generic protocol the service speaks) and the product, if any, matches `portProduct`.
 *   SSH on port 23 is not telnet.
 * - `protocol` restricts the rule to TCP or UDP; `transport` restricts it to plain-text or
 *   TLS-wrapped services (`tlsPorts` are ports where the service is TLS even when the name lost it).
 * - `when` is an extra condition on every match; `generic` rules give way on a port where a more
 *   specific rule matched (a plain-HTTP admin port that turns out to be CouchDB is CouchDB).
 */

import type { FindingSeverity } from './severity.js';
import { tlsPortsOf } from './ports.js';

/** A port as a rule condition sees it (normalised by `risk.ts`). */
export interface RulePortView {
  port: number;
  protocol: string;
  /** Lower-case service name without an `ssl/` prefix; null when not identified at all. */
  service: string | null;
  product: string | null;
  version: string | null;
  extraInfo: string | null;
  /** TLS-wrapped (name says so, or a TLS port of the rule). */
  tls: boolean;
}

export interface RiskRule {
  /** Stable identifier; user rules with the same id override the rule. */
  id: string;
  severity: FindingSeverity;
  title: string;
  description: string;
  recommendation: string;
  /** The service's usual ports. */
  ports?: readonly number[];
  protocol?: 'tcp' | 'udp';
  /** Service names (lower-case, nmap naming) that identify the service on any port. */
  services?: readonly string[];
  /** Detected product that identifies the service on any port. */
  product?: RegExp;
  /** Detected extra info that identifies the service on any port. */
  extraInfo?: RegExp;
  /** On `ports`: identified names that do not contradict the rule (table names, carrier protocol). */
  portNames?: readonly string[];
  /** On `ports` with a `portNames` service: products that do not contradict the rule; default: none may be present. */
  portProduct?: RegExp;
  /** Plain-text only (a TLS-wrapped service is not this risk) or TLS only. */
  transport?: 'plain' | 'tls';
  /** Ports where the service is TLS-wrapped even when the reported name lost the tunnel. */
  tlsPorts?: readonly number[];
  /** Extra condition on every match; `how` tells whether it matched by service or by port. */
  when?: (port: RulePortView, how: 'service' | 'port') => boolean;
  /** Gives way on a port where a non-generic rule matched. */
  generic?: boolean;
}

/** Service names of plain web servers, and the nmap-services table names of the usual admin ports. */
const HTTP_NAMES = ['http', 'http-alt', 'http-proxy', 'http-mgmt', 'webmin', 'webcache'];
const ADMIN_PORT_NAMES = [
  ...HTTP_NAMES.filter((n) => n !== 'http-proxy'), // an identified proxy is not an admin page
  'sun-answerbook', // 8888
  'snet-sensor-mgmt', // 10000
  'blackice-icecap', // 8081
  'zeus-admin', // 9090
  'cslistener', // 9000
  'radan-http', // 8088
  'ddi-tcp-1', // 8888 (older tables)
  'unknown',
];

/** Product or extra info that says a web server is a device's or application's administration UI. */
const ADMIN_PRODUCT =
  /miniserv|webmin|usermin|routeros|mikrotik|openwrt|luci|dd-wrt|pfsense|opnsense|tomcat|jenkins|portainer|phpmyadmin|cockpit|proxmox|unifi|synology|qnap|ubiquiti|hikvision|dahua|boa\b|goahead|mini_httpd|micro_httpd|router|admin|http config|management|web ?ui/i;
const ADMIN_EXTRA = /\b(router|admin(istration)?|management|http config|web ?ui|web interface|config(uration)? page)\b/i;

/** Go's HTTP server: what the Kubernetes control plane, kubelet and etcd answer as. */
const GOLANG_HTTP = /golang|go-http|kube|k3s|etcd/i;

export const BUILTIN_RISK_RULES: readonly RiskRule[] = [
  /* ---------------------------------------------------------------- remote shells in clear text */
  {
    id: 'telnet',
    severity: 'critical',
    title: 'Telnet remote login exposed',
    description:
      'Telnet sends user names, passwords and the whole session in clear text, so anyone on the network path can read them. ' +
      'Telnet on routers, cameras and other IoT devices is how botnets such as Mirai take them over, usually with factory passwords.',
    recommendation:
      'Turn Telnet off (Linux: `systemctl disable --now telnet.socket` or remove telnetd from inetd; routers and cameras: disable Telnet in the admin page or install firmware without it) ' +
      'and use SSH with key authentication instead. If the device cannot turn it off, move it to an isolated IoT VLAN and block TCP 23 and 2323 to it.',
    ports: [23, 2323],
    protocol: 'tcp',
    services: ['telnet'],
    transport: 'plain',
    tlsPorts: tlsPortsOf('telnet'),
  },
  {
    id: 'rexec',
    severity: 'critical',
    title: 'rexec remote execution service exposed',
    description:
      'rexec (port 512) runs commands for anyone who sends a user name and password, both in clear text, with no protection against guessing or eavesdropping.',
    recommendation:
      'Disable rexecd (remove the `exec` line from /etc/inetd.conf or `systemctl disable --now rexec.socket`, then uninstall rsh-server) and use SSH instead.',
    ports: [512],
    protocol: 'tcp',
    services: ['exec', 'rexec'],
  },
  {
    id: 'rlogin',
    severity: 'critical',
    title: 'rlogin remote login exposed',
    description:
      'rlogin (port 513) logs in over clear text and can trust other hosts by address alone (.rhosts / hosts.equiv), so a spoofed or compromised host gets in without a password.',
    recommendation:
      'Disable rlogind (remove the `login` line from /etc/inetd.conf or `systemctl disable --now rlogin.socket`, uninstall rsh-server, delete ~/.rhosts and /etc/hosts.equiv) and use SSH instead.',
    ports: [513],
    protocol: 'tcp',
    services: ['login', 'rlogin'],
  },
  {
    id: 'rsh',
    severity: 'critical',
    title: 'rsh remote shell exposed',
    description:
      'rsh (port 514/tcp) runs commands for hosts it trusts by address alone (.rhosts / hosts.equiv), without a password and without encryption.',
    recommendation:
      'Disable rshd (remove the `shell` line from /etc/inetd.conf or `systemctl disable --now rsh.socket`, uninstall rsh-server, delete ~/.rhosts and /etc/hosts.equiv) and use SSH instead.',
    ports: [514],
    protocol: 'tcp',
    services: ['shell', 'rsh'],
  },

  /* ---------------------------------------------------------------- file transfer and sharing */
  {
    id: 'ftp',
    severity: 'medium',
    title: 'FTP (unencrypted file transfer)',
    description: 'FTP sends logins and files in clear text; servers are often left with anonymous access or share the password of a real account.',
    recommendation:
      'Replace FTP with SFTP (part of any SSH server) or FTPS. If FTP must stay, disable anonymous login (vsftpd: `anonymous_enable=NO`), ' +
      'use an account that is used nowhere else, and allow port 21 only from the machines that need it.',
    ports: [21],
    protocol: 'tcp',
    services: ['ftp'],
    transport: 'plain',
    tlsPorts: tlsPortsOf('ftp'),
  },
  {
    id: 'tftp',
    severity: 'high',
    title: 'TFTP server exposed',
    description:
      'TFTP has no authentication at all: anyone who can reach it can download (and often upload) files by name, such as device configurations and firmware.',
    recommendation:
      'Stop the TFTP server when you are not provisioning devices (`systemctl disable --now tftpd-hpa`), serve it read-only (`--secure`, no `--create`), and allow UDP 69 only from the devices that boot from it.',
    ports: [69],
    protocol: 'udp',
    services: ['tftp'],
  },
  {
    id: 'smb',
    severity: 'high',
    title: 'SMB file sharing exposed',
    description:
      'SMB (port 445) exposes file shares and Windows/Samba authentication. It is the favourite target of worms and ransomware spreading inside a network (EternalBlue/WannaCry, SMBGhost), ' +
      'and guest or weak-password shares leak data.',
    recommendation:
      'Allow 445 only from the machines that use the shares (host firewall or VLAN rules) and never forward it from the internet; disable SMBv1 ' +
      '(Windows: `Set-SmbServerConfiguration -EnableSMB1Protocol $false`; Samba: `server min protocol = SMB2_10`); remove guest access; keep the system patched.',
    ports: [445],
    protocol: 'tcp',
    services: ['microsoft-ds', 'smb'],
    portNames: ['netbios-ssn'],
    portProduct: /samba|smb|windows/i,
  },
  {
    id: 'netbios-ssn',
    severity: 'medium',
    title: 'NetBIOS session service exposed',
    description:
      'NetBIOS session service (port 139) is SMB over the legacy NetBIOS transport: it exposes shares and leaks machine, user and workgroup names.',
    recommendation:
      'Disable NetBIOS over TCP/IP (Windows: network adapter > IPv4 > Advanced > WINS > Disable NetBIOS over TCP/IP; Samba: `disable netbios = yes` and `smb ports = 445`) ' +
      'and firewall 137-139 from untrusted networks.',
    ports: [139],
    protocol: 'tcp',
    services: ['netbios-ssn'],
    when: (p) => p.port !== 445,
  },
  {
    id: 'netbios-ns',
    severity: 'low',
    title: 'NetBIOS name service answers',
    description:
      'The NetBIOS name service (137/udp) tells anyone the machine name, workgroup and logged-in user, and can be abused for name spoofing (NBNS poisoning).',
    recommendation: 'Disable NetBIOS over TCP/IP on this machine (Samba: `disable netbios = yes`, stop nmbd) unless old clients need it.',
    ports: [137],
    protocol: 'udp',
    services: ['netbios-ns'],
  },
  {
    id: 'nfs',
    severity: 'medium',
    title: 'NFS file sharing exposed',
    description:
      'NFS (port 2049) shares are often exported to any host, and NFSv3 trusts the user id the client claims, so a machine on the network can read or change files as any user.',
    recommendation:
      'Export shares only to the hosts that need them in /etc/exports (e.g. `/srv/share 192.168.1.20(rw,root_squash)`, never `*`), keep `root_squash`, prefer NFSv4 with Kerberos (`sec=krb5p`), and firewall 2049 from other networks.',
    ports: [2049],
    services: ['nfs', 'nfs_acl'],
  },
  {
    id: 'rpcbind',
    severity: 'low',
    title: 'RPC portmapper exposed',
    description:
      'rpcbind (port 111) lists the RPC services of the machine (NFS, mountd, NIS…) to anyone who asks and can be abused for UDP amplification.',
    recommendation:
      'If the machine does not serve NFSv3 or NIS, stop it (`systemctl disable --now rpcbind.service rpcbind.socket`); otherwise allow port 111 only from the NFS clients.',
    ports: [111],
    services: ['rpcbind', 'sunrpc', 'portmapper'],
  },
  {
    id: 'rsync',
    severity: 'medium',
    title: 'rsync daemon exposed',
    description:
      'The rsync daemon (port 873) lists its modules to anyone and serves them without authentication unless each module sets `auth users`; traffic is not encrypted.',
    recommendation:
      'Set `auth users` and `secrets file` on every module in /etc/rsyncd.conf, add `hosts allow = <your clients>`, or stop the daemon and use rsync over SSH.',
    ports: [873],
    protocol: 'tcp',
    services: ['rsync'],
  },

  /* ---------------------------------------------------------------- Windows and remote desktop */
  {
    id: 'msrpc',
    severity: 'medium',
    title: 'Microsoft RPC endpoint mapper exposed',
    description:
      'MS-RPC (port 135) exposes Windows remote administration interfaces and lets anyone enumerate them; it has a long history of remotely exploitable flaws and is used for lateral movement.',
    recommendation:
      'Keep Windows Defender Firewall on for Public and Private profiles, allow 135 only from management machines (Group Policy or `New-NetFirewallRule`), and keep Windows updated.',
    ports: [135],
    protocol: 'tcp',
    services: ['msrpc', 'epmap'],
  },
  {
    id: 'rdp',
    severity: 'high',
    title: 'Remote Desktop (RDP) exposed',
    description:
      'RDP (port 3389) gives a full desktop to whoever logs in; exposed RDP is constantly brute-forced and had pre-authentication remote code execution flaws (BlueKeep, DejaBlue).',
    recommendation:
      'Reach RDP through a VPN (WireGuard, Tailscale) instead of exposing it, require Network Level Authentication (System Properties > Remote), set an account lockout policy and strong passwords, keep Windows patched, and never port-forward 3389.',
    ports: [3389],
    services: ['ms-wbt-server', 'rdp'],
    product: /terminal services|xrdp|remote desktop/i,
  },
  {
    id: 'winrm',
    severity: 'medium',
    title: 'Windows Remote Management (WinRM) over HTTP',
    description:
      'WinRM on port 5985 runs PowerShell remotely for any account with admin rights; it is a prime target for password spraying and lateral movement.',
    recommendation:
      'If you do not manage this machine remotely, disable it (`Disable-PSRemoting -Force`, stop the WinRM service); otherwise use HTTPS on 5986 and restrict it to your management hosts with the Windows firewall.',
    ports: [5985],
    protocol: 'tcp',
    services: ['wsman', 'winrm'],
    portNames: ['http'],
    portProduct: /microsoft httpapi/i,
  },
  {
    id: 'vnc',
    severity: 'high',
    title: 'VNC remote desktop exposed',
    description:
      'VNC gives full control of the screen; many servers allow no or a weak password (the classic VNC password is at most 8 characters) and the session is not encrypted.',
    recommendation:
      'Make the VNC server listen on localhost only and connect through an SSH tunnel (`ssh -L 5900:localhost:5900 host`) or a VPN; set a strong password; disable the built-in HTTP viewer (port 5800).',
    ports: [5800, 5900, 5901, 5902, 5903],
    protocol: 'tcp',
    services: ['vnc', 'vnc-http', 'rfb'],
    product: /vnc/i,
  },
  {
    id: 'x11',
    severity: 'high',
    title: 'X11 display server exposed',
    description:
      'An X server listening on the network (ports 6000+) lets a client that is allowed in read every keystroke and screenshot; `xhost +` setups allow everybody.',
    recommendation:
      'Start X with `-nolisten tcp` (the default of current display managers), remove any `xhost +`, and use `ssh -X` to display remote programs.',
    ports: [6000, 6001, 6002, 6003, 6004, 6005],
    protocol: 'tcp',
    services: ['x11', 'x11:1', 'x11:2', 'x11:3', 'x11:4', 'x11:5'],
  },

  /* ---------------------------------------------------------------- databases */
  {
    id: 'mysql',
    severity: 'medium',
    title: 'MySQL/MariaDB reachable on the network',
    description:
      'The database server accepts connections from the network, so its accounts can be brute-forced and any account with a weak password or `%` host gives the data away.',
    recommendation:
      'If only local applications use it, set `bind-address = 127.0.0.1` in my.cnf; otherwise allow 3306 only from the application hosts, remove anonymous and root@`%` accounts (`mysql_secure_installation`) and require TLS (`require_secure_transport = ON`).',
    ports: [3306],
    protocol: 'tcp',
    services: ['mysql', 'mariadb'],
    product: /\b(mysql|mariadb)\b/i,
  },
  {
    id: 'postgresql',
    severity: 'medium',
    title: 'PostgreSQL reachable on the network',
    description:
      'The database server accepts connections from the network; a permissive pg_hba.conf (`trust`, or `0.0.0.0/0`) or a weak password gives the data away, and superusers can run programs on the host.',
    recommendation:
      "Set `listen_addresses = 'localhost'` in postgresql.conf if only local applications use it; otherwise list only the application hosts in pg_hba.conf with `scram-sha-256`, never `trust`, and allow 5432 only from them.",
    ports: [5432],
    protocol: 'tcp',
    services: ['postgresql', 'postgres'],
    product: /postgresql/i,
  },
  {
    id: 'mssql',
    severity: 'medium',
    title: 'Microsoft SQL Server reachable on the network',
    description:
      'SQL Server (port 1433) is constantly brute-forced for the `sa` account; a login with sysadmin rights can run system commands through xp_cmdshell.',
    recommendation:
      'Allow 1433 only from the application hosts (Windows firewall), disable the `sa` login or give it a long random password, use Windows authentication, and keep xp_cmdshell disabled.',
    ports: [1433],
    protocol: 'tcp',
    services: ['ms-sql-s', 'mssql'],
    product: /microsoft sql server/i,
  },
  {
    id: 'mongodb',
    severity: 'high',
    title: 'MongoDB reachable on the network',
    description:
      'MongoDB often runs without authentication (the default before 3.6 and in many containers); open instances are wiped and held for ransom by automated scanners within hours.',
    recommendation:
      'Enable authentication (`security.authorization: enabled` in mongod.conf and create an admin user), bind to localhost or the application network only (`net.bindIp`), and firewall 27017.',
    ports: [27017, 27018, 27019],
    protocol: 'tcp',
    services: ['mongodb', 'mongod'],
    product: /mongodb/i,
  },
  {
    id: 'redis',
    severity: 'high',
    title: 'Redis reachable on the network',
    description:
      'Redis has no password unless one is set; anyone who can connect reads and changes all data and can usually write files on the host (for example an SSH key) to take it over.',
    recommendation:
      'Set `bind 127.0.0.1 ::1` and keep `protected-mode yes` in redis.conf if only local applications use it; otherwise set `requirepass` (or ACL users), rename or disable CONFIG, and allow 6379 only from the application hosts.',
    ports: [6379],
    protocol: 'tcp',
    services: ['redis'],
    product: /\bredis\b/i,
  },
  {
    id: 'elasticsearch',
    severity: 'high',
    title: 'Elasticsearch/OpenSearch reachable on the network',
    description:
      'The search cluster answers on the network; without security enabled (the default before Elasticsearch 8) anyone can read, change or delete every index.',
    recommendation:
      'Enable security (`xpack.security.enabled: true` and set passwords with `elasticsearch-reset-password`, or the OpenSearch security plugin), set `network.host` to localhost or the application network, and firewall 9200/9300.',
    ports: [9200, 9300],
    protocol: 'tcp',
    services: ['elasticsearch', 'opensearch'],
    product: /^(?!.*(kibana|dashboards)).*(elasticsearch|opensearch)/i,
    portNames: ['http', 'wap-wsp', 'vrace'],
  },
  {
    id: 'memcached',
    severity: 'high',
    title: 'Memcached reachable on the network',
    description: 'Memcached has no authentication: anyone can read and overwrite the cache, and its UDP mode is abused for huge DDoS amplification.',
    recommendation:
      'Bind it to localhost (`-l 127.0.0.1` in /etc/memcached.conf), disable UDP (`-U 0`), and allow 11211 only from the application hosts.',
    ports: [11211],
    services: ['memcache', 'memcached'],
    product: /memcached/i,
  },
  {
    id: 'couchdb',
    severity: 'high',
    title: 'CouchDB reachable on the network',
    description:
      'CouchDB older than 3.0 starts as an "admin party" where everyone is administrator, and its HTTP API had remote code execution flaws (CVE-2017-12636, CVE-2022-24706).',
    recommendation:
      'Create an admin account and require valid users (`[chttpd] require_valid_user = true`), bind to 127.0.0.1 (`[chttpd] bind_address`) unless clients need it, and update to a current 3.x release.',
    ports: [5984],
    protocol: 'tcp',
    services: ['couchdb'],
    product: /couchdb/i,
  },

  /* ---------------------------------------------------------------- containers and clusters */
  {
    id: 'docker-api',
    severity: 'critical',
    title: 'Docker API exposed without TLS',
    description:
      'The Docker Engine API on port 2375 has no authentication: anyone who can reach it can start a privileged container and take over the host.',
    recommendation:
      'Remove `-H tcp://0.0.0.0:2375` (dockerd flags, daemon.json "hosts" or the systemd unit) and manage Docker over SSH (`DOCKER_HOST=ssh://user@host`); if remote API access is really needed use port 2376 with `--tlsverify` and client certificates.',
    ports: [2375],
    protocol: 'tcp',
    services: ['docker'],
    product: /^docker\b(?!.*registry)/i,
    transport: 'plain',
    tlsPorts: tlsPortsOf('docker'),
  },
  {
    id: 'docker-api-tls',
    severity: 'medium',
    title: 'Docker API exposed over TLS',
    description:
      'The Docker Engine API on port 2376 gives root on the host to whoever it accepts; it is only safe when dockerd verifies client certificates (`--tlsverify`).',
    recommendation:
      'Check that dockerd runs with `--tlsverify` and a CA that signs only your client certificates, and allow 2376 only from your management machine; prefer Docker over SSH (`DOCKER_HOST=ssh://user@host`).',
    ports: [2376, 2375],
    protocol: 'tcp',
    services: ['docker', 'docker-s'],
    product: /^docker\b(?!.*registry)/i,
    portNames: ['https', 'ssl', 'http'],
    portProduct: GOLANG_HTTP,
    transport: 'tls',
    tlsPorts: tlsPortsOf('docker'),
  },
  {
    id: 'kubernetes-api',
    severity: 'medium',
    title: 'Kubernetes API server reachable',
    description:
      'The Kubernetes API server (port 6443) controls the whole cluster; anonymous access, leaked kubeconfig or service-account tokens, or an unpatched version give cluster-admin.',
    recommendation:
      'Allow 6443 only from admin machines and cluster nodes (firewall or a VPN), keep `--anonymous-auth=false` where possible, rotate tokens you have shared, and keep the cluster on a supported version.',
    ports: [6443],
    protocol: 'tcp',
    services: ['kubernetes', 'kube-apiserver'],
    product: /kubernetes|kube-apiserver|\bk3s\b/i,
    extraInfo: /kube-apiserver|kubernetes\.default/i,
    portNames: ['https', 'http', 'ssl', 'sun-sr-https'],
    portProduct: GOLANG_HTTP,
  },
  {
    id: 'kubelet',
    severity: 'high',
    title: 'Kubernetes kubelet API reachable',
    description:
      'The kubelet API (port 10250) can run commands in every pod on the node; with anonymous authentication enabled (the kubelet default outside kubeadm/k3s) anyone can.',
    recommendation:
      'Set `authentication.anonymous.enabled: false` and `authorization.mode: Webhook` in the kubelet configuration, and allow 10250 only from the control plane.',
    ports: [10250],
    protocol: 'tcp',
    services: ['kubelet'],
    product: /kubelet/i,
    portNames: ['https', 'http', 'ssl'],
    portProduct: GOLANG_HTTP,
  },
  {
    id: 'kubelet-readonly',
    severity: 'high',
    title: 'Kubernetes kubelet read-only port open',
    description:
      'The kubelet read-only port (10255) serves pod specifications, often including environment variables with secrets, without any authentication.',
    recommendation: 'Disable it with `readOnlyPort: 0` in the kubelet configuration (or `--read-only-port=0`) and restart the kubelet.',
    ports: [10255],
    protocol: 'tcp',
    services: ['kubelet-ro'],
    portNames: ['http'],
    portProduct: GOLANG_HTTP,
  },
  {
    id: 'etcd',
    severity: 'high',
    title: 'etcd key-value store reachable',
    description: 'etcd (port 2379) stores every Kubernetes secret; without client certificate authentication anyone who can reach it reads them all.',
    recommendation:
      'Require client certificates (`--client-cert-auth=true` with `--trusted-ca-file`), listen only on the cluster network (`--listen-client-urls`), and firewall 2379/2380 from everything but the control plane.',
    ports: [2379, 2380],
    protocol: 'tcp',
    services: ['etcd', 'etcd-client', 'etcd-server'],
    product: /\betcd\b/i,
    portNames: ['https', 'http', 'ssl'],
    portProduct: GOLANG_HTTP,
  },

  /* ---------------------------------------------------------------- network management and IoT */
  {
    id: 'snmp',
    severity: 'medium',
    title: 'SNMP agent answers',
    description:
      'The SNMP agent answered on 161/udp; SNMPv1/v2c authenticate with a community string sent in clear text, usually the default `public` (read) or `private` (write), ' +
      'which reveals the configuration, interfaces, routes and sometimes credentials, or lets anyone change them.',
    recommendation:
      'Disable SNMP if you do not monitor the device; otherwise use SNMPv3 with authPriv (SHA + AES) and a user of its own, or at least replace `public`/`private` with a long random community, make it read-only and allow only your monitoring host.',
    ports: [161],
    protocol: 'udp',
    services: ['snmp'],
  },
  {
    id: 'ipmi',
    severity: 'high',
    title: 'IPMI/BMC management interface exposed',
    description:
      'IPMI (623/udp) controls the server below the operating system (power, console, virtual media); IPMI 2.0 hands out password hashes before login and many BMCs allow cipher 0 (no password).',
    recommendation:
      'Put the BMC on a dedicated management VLAN that only admin machines reach, disable IPMI over LAN if you use the web/Redfish interface, disable cipher 0, change the default ADMIN/root password and update the BMC firmware.',
    ports: [623],
    protocol: 'udp',
    services: ['ipmi', 'ipmi-rmcp'],
    product: /\bipmi\b/i,
    portNames: ['asf-rmcp'],
  },
  {
    id: 'upnp',
    severity: 'medium',
    title: 'UPnP/SSDP service exposed',
    description:
      'UPnP lets any program on the network open ports on the router (IGD) or control the device without authentication; SSDP (1900/udp) is abused for DDoS amplification and UPnP stacks such as MiniUPnPd and libupnp had remote code execution flaws.',
    recommendation:
      'Disable UPnP in the router or device settings unless a program you rely on needs it (game consoles, some VoIP), never let it answer on the WAN side, and update the firmware.',
    ports: [1900],
    services: ['upnp', 'ssdp'],
    product: /miniupnp|portable sdk for upnp|libupnp|upnp device sdk|intel upnp/i,
  },
  {
    id: 'mqtt',
    severity: 'medium',
    title: 'MQTT broker without TLS',
    description:
      'The MQTT broker on port 1883 carries messages and passwords in clear text, and brokers such as Mosquitto before 2.0 accept anonymous clients: anyone can read sensor data and send commands to devices.',
    recommendation:
      'Require authentication (Mosquitto: `allow_anonymous false` and a `password_file`), serve clients over TLS on 8883 (`listener 8883` with `certfile`/`keyfile`) and close 1883 or restrict it to localhost.',
    ports: [1883],
    protocol: 'tcp',
    services: ['mqtt'],
    product: /mosquitto|emqx|hivemq|vernemq|\bmqtt\b/i,
    transport: 'plain',
    tlsPorts: tlsPortsOf('mqtt'),
  },
  {
    id: 'modbus',
    severity: 'high',
    title: 'Modbus/TCP industrial control exposed',
    description:
      'Modbus/TCP (port 502) has no authentication: anyone who can reach it can read and write coils and registers of the PLC, inverter or controller behind it.',
    recommendation:
      'Put the device on an isolated VLAN reachable only from the controller or SCADA host that needs it, and use a gateway with access control if other machines need its data.',
    ports: [502],
    protocol: 'tcp',
    services: ['mbap', 'modbus'],
    product: /modbus/i,
  },
  {
    id: 'rtsp',
    severity: 'low',
    title: 'RTSP video stream server',
    description: 'An RTSP server (port 554), typically an IP camera or NVR; streams are often reachable without a password or with the factory one.',
    recommendation: 'Set a strong password on the camera and require it for RTSP, keep cameras on an isolated VLAN, and update the camera firmware.',
    ports: [554, 8554],
    protocol: 'tcp',
    services: ['rtsp'],
  },
  {
    id: 'sip',
    severity: 'low',
    title: 'SIP VoIP service exposed',
    description:
      'A SIP endpoint (port 5060) is scanned for extensions with weak passwords, which are used for toll fraud; SIP over 5060 is not encrypted.',
    recommendation:
      'Use long random passwords on every extension, allow SIP only from your provider and phones (firewall or `permit/deny` in the PBX), enable fail2ban, and prefer SIP over TLS (5061).',
    ports: [5060],
    services: ['sip', 'sip-proxy'],
    transport: 'plain',
    tlsPorts: tlsPortsOf('sip'),
  },
  {
    id: 'ldap',
    severity: 'medium',
    title: 'LDAP without TLS',
    description:
      'The directory on port 389 sends binds (user names and passwords) in clear text unless every client uses StartTLS, and often allows anonymous reads of users and groups.',
    recommendation:
      'Require TLS (LDAPS on 636, or StartTLS with `olcSecurity: tls=1` / "LDAP server signing requirements" on AD), disable anonymous binds, and allow 389 only from the servers that authenticate against it.',
    ports: [389],
    protocol: 'tcp',
    services: ['ldap'],
    transport: 'plain',
    tlsPorts: tlsPortsOf('ldap'),
  },
  {
    id: 'java-rmi',
    severity: 'high',
    title: 'Java RMI registry exposed',
    description:
      'A Java RMI registry (port 1099) exposes remote objects, and deserialization of untrusted data through it is a common route to remote code execution (JMX, old application servers).',
    recommendation:
      'Bind RMI/JMX to localhost (`-Djava.rmi.server.hostname=127.0.0.1`, `-Dcom.sun.management.jmxremote.host=127.0.0.1`), enable JMX authentication and TLS if remote access is needed, and keep Java updated.',
    ports: [1099],
    protocol: 'tcp',
    services: ['java-rmi', 'rmiregistry'],
    product: /java rmi/i,
  },
  {
    id: 'pptp',
    severity: 'medium',
    title: 'PPTP VPN server',
    description: 'PPTP (port 1723) relies on MS-CHAPv2, which is broken: captured logins can be cracked and the traffic decrypted.',
    recommendation: 'Replace PPTP with WireGuard, OpenVPN or IPsec/IKEv2 and turn the PPTP server off.',
    ports: [1723],
    protocol: 'tcp',
    services: ['pptp'],
  },
  {
    id: 'ipp',
    severity: 'low',
    title: 'Printing service (IPP/CUPS) exposed',
    description:
      'An IPP/CUPS print service (port 631) accepts jobs and shows printer details to the network; CUPS browsing (631/udp, cups-browsed) had a remote code execution chain in 2024.',
    recommendation:
      'If the machine does not share printers, stop cups-browsed (`systemctl disable --now cups-browsed`) and set `Listen localhost:631` in cupsd.conf; otherwise allow 631 only from your LAN and keep CUPS updated.',
    ports: [631],
    services: ['ipp'],
    product: /\bcups\b/i,
  },
  {
    id: 'jetdirect',
    severity: 'low',
    title: 'Raw printing port (JetDirect) open',
    description:
      'Port 9100 accepts raw print jobs without authentication, and PJL/PostScript commands sent to it can read printer settings or files and change the configuration.',
    recommendation:
      'Disable raw port 9100 printing in the printer settings if you print over IPP, set an admin password on the printer, and keep printers on a separate VLAN.',
    ports: [9100],
    protocol: 'tcp',
    services: ['jetdirect', 'pdl-datastream'],
  },
  {
    id: 'finger',
    severity: 'low',
    title: 'finger service exposed',
    description: 'finger (port 79) tells anyone which users exist and when they log in, which helps password guessing.',
    recommendation: 'Disable fingerd (remove it from inetd or uninstall it).',
    ports: [79],
    protocol: 'tcp',
    services: ['finger'],
  },

  /* ---------------------------------------------------------------- web administration */
  {
    id: 'jupyter',
    severity: 'high',
    title: 'Jupyter notebook server reachable',
    description:
      'A Jupyter server runs code on the host for anyone who gets past its token or password; servers started with an empty token or exposed with `--ip=0.0.0.0` are remote shells.',
    recommendation:
      'Listen on localhost (`c.ServerApp.ip = "127.0.0.1"`) and reach it through an SSH tunnel, or keep a password/token and serve it over HTTPS behind a reverse proxy with authentication.',
    ports: [8888],
    protocol: 'tcp',
    services: ['jupyter'],
    product: /jupyter/i,
    portNames: ['http', 'http-alt', 'sun-answerbook'],
    portProduct: /tornado/i,
    when: (p, how) => how === 'service' || p.product !== null,
  },
  {
    id: 'http-admin',
    severity: 'medium',
    title: 'Administration web interface over plain HTTP',
    description:
      'A web interface on a port used by administration consoles (8000, 8080, 8888, 10000…), or one that identifies itself as a router, NAS or application admin page, is served without TLS: ' +
      'its login and session cookies cross the network in clear text.',
    recommendation:
      'Turn on HTTPS in the interface settings (most routers, NAS and Webmin have a switch; otherwise put it behind a reverse proxy with TLS such as Caddy or nginx) and turn off plain HTTP, ' +
      'change default passwords, and allow the port only from your admin machines.',
    ports: [8000, 8008, 8080, 8081, 8088, 8888, 9000, 9090, 10000],
    protocol: 'tcp',
    product: ADMIN_PRODUCT,
    extraInfo: ADMIN_EXTRA,
    portNames: ADMIN_PORT_NAMES,
    portProduct: /^(?!.*\bproxy\b)/i, // any web server but a proxy
    transport: 'plain',
    // A product or extra-info hit counts only on a web server (RouterOS also names its SSH server).
    when: (p, how) => how === 'port' || p.service === null || HTTP_NAMES.includes(p.service),
    generic: true,
  },

  /* ---------------------------------------------------------------- backdoors */
  {
    id: 'backdoor-ingreslock',
    severity: 'critical',
    title: 'Root shell backdoor (ingreslock / bind shell)',
    description:
      'A shell listening on the network, classically on port 1524 (ingreslock), is what exploits and rootkits leave behind: whoever connects gets a command prompt, usually as root.',
    recommendation:
      'Treat the machine as compromised: disconnect it from the network, find the listening process (`ss -tlnp | grep 1524`), and rebuild the system from known-good media, then change every password that was used on it.',
    ports: [1524],
    protocol: 'tcp',
    services: ['bindshell', 'ingreslock'],
    product: /root shell|bind ?shell/i,
  },
  {
    id: 'backdoor-metasploit',
    severity: 'critical',
    title: 'Possible Metasploit listener (port 4444)',
    description:
      'Port 4444 is the default port of Metasploit payloads and handlers; an open port 4444 may be a reverse/bind shell from an attack (or a test you are running).',
    recommendation:
      'Find the listening process (`ss -tlnp | grep 4444` on Linux, `netstat -abno | findstr 4444` on Windows). If you do not know it, disconnect the machine, investigate and rebuild it from known-good media.',
    ports: [4444],
    protocol: 'tcp',
    services: ['metasploit', 'meterpreter'],
    portNames: ['krb524'],
  },
  {
    id: 'backdoor-netbus',
    severity: 'critical',
    title: 'NetBus remote administration trojan port',
    description: 'Ports 12345/12346 are used by the NetBus trojan (and copies of it), which gives full remote control of a Windows machine.',
    recommendation:
      'Find the listening process (`netstat -abno | findstr 12345`); if it is not a program you installed, disconnect the machine, scan it offline with an antivirus rescue disk and reinstall Windows.',
    ports: [12345, 12346],
    protocol: 'tcp',
    services: ['netbus'],
    product: /netbus/i,
  },
  {
    id: 'backdoor-back-orifice',
    severity: 'critical',
    title: 'Back Orifice trojan port (31337)',
    description:
      'Port 31337 ("eleet") is the default of the Back Orifice trojan and a favourite of other backdoors; it gives remote control of the machine.',
    recommendation:
      'Find the listening process (`ss -tulnp | grep 31337` or `netstat -abno | findstr 31337`); if you do not know it, disconnect the machine, investigate and rebuild it from known-good media.',
    ports: [31337],
    services: ['backorifice', 'bo2k'],
    product: /back ?orifice|bo2k/i,
    portNames: ['elite'],
  },
];
