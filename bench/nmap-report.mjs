// Synthetic nmap reports shared by the import and HTTP benchmarks: shaped exactly as
// `nmap -n -sV -v -oX` writes one (the prolog, <scaninfo>, <host> elements with status, IPv4 and MAC
// addresses with vendors, <ports> with closed and open ports, services with product, version, extra
// info and CPEs, hosts down listed as -v lists them, <runstats>), hosts in 10.77.0.0/16 and up
// (data only, never contacted). The same seed gives the same reports.
import { mulberry32 } from './prng.mjs';

const VENDORS = [
  ['B8:27:EB', 'Raspberry Pi Foundation'],
  ['00:1C:42', 'Parallels'],
  ['3C:22:FB', 'Apple'],
  ['F4:F5:D8', 'Google'],
  ['00:17:88', 'Philips Lighting BV'],
  ['50:C7:BF', 'Tp-link Technologies'],
  ['00:11:32', 'Synology Incorporated'],
  ['AC:84:C6', 'Tp-link Technologies'],
];

/** [port, name, product, version, extrainfo, cpe] as nmap-service-probes identifies them. */
const SERVICES = [
  [22, 'ssh', 'OpenSSH', '8.9p1 Ubuntu 3ubuntu0.6', 'Ubuntu Linux; protocol 2.0', ['cpe:/a:openbsd:openssh:8.9p1', 'cpe:/o:linux:linux_kernel']],
  [22, 'ssh', 'OpenSSH', '7.4', 'protocol 2.0', ['cpe:/a:openbsd:openssh:7.4']],
  [22, 'ssh', 'Dropbear sshd', '2019.78', 'protocol 2.0', ['cpe:/a:matt_johnston:dropbear_ssh_server:2019.78']],
  [23, 'telnet', 'BusyBox telnetd', null, null, ['cpe:/a:busybox:busybox']],
  [53, 'domain', 'dnsmasq', '2.85', null, ['cpe:/a:thekelleys:dnsmasq:2.85']],
  [80, 'http', 'nginx', '1.18.0', '(Ubuntu)', ['cpe:/a:igor_sysoev:nginx:1.18.0']],
  [80, 'http', 'Apache httpd', '2.4.49', '(Unix)', ['cpe:/a:apache:http_server:2.4.49']],
  [80, 'http', 'lighttpd', '1.4.59', null, ['cpe:/a:lighttpd:lighttpd:1.4.59']],
  [139, 'netbios-ssn', 'Samba smbd', '4.6.2', null, ['cpe:/a:samba:samba']],
  [443, 'http', 'nginx', '1.24.0', null, ['cpe:/a:igor_sysoev:nginx:1.24.0']],
  [445, 'microsoft-ds', null, null, null, []],
  [3306, 'mysql', 'MySQL', '5.7.33', null, ['cpe:/a:mysql:mysql:5.7.33']],
  [3389, 'ms-wbt-server', 'Microsoft Terminal Services', null, null, ['cpe:/o:microsoft:windows']],
  [5000, 'http', 'Werkzeug httpd', '2.0.2', 'Python 3.10.12', ['cpe:/a:python:python:3.10.12']],
  [8080, 'http-proxy', null, null, null, []],
  [8123, 'http', 'aiohttp', '3.9.1', 'Python 3.11', ['cpe:/a:aiohttp:aiohttp:3.9.1']],
  [9100, 'jetdirect', null, null, null, []],
];

const escape = (s) => String(s).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
const ipOf = (i) => `10.77.${Math.floor(i / 256)}.${i % 256}`;

/**
 * The hosts of a first report: index → {mac, vendor, services}. `portsPerHost`: exactly that many
 * open ports each (at most 13, the distinct ports of the catalogue); 0: 2 to 6 at random.
 */
export function inventory(random, hosts, portsPerHost = 0) {
  const out = new Map();
  for (let i = 1; out.size < hosts; i++) {
    if (i % 43 === 0) continue; // Addresses left free: hosts down.
    const [oui, vendor] = VENDORS[Math.floor(random() * VENDORS.length)];
    const mac = `${oui}:${[0, 0, 0]
      .map(() =>
        Math.floor(random() * 256)
          .toString(16)
          .padStart(2, '0')
          .toUpperCase(),
      )
      .join(':')}`;
    const count = portsPerHost > 0 ? Math.min(portsPerHost, 13) : 2 + Math.floor(random() * 5);
    const services = new Map();
    while (services.size < count) {
      const s = SERVICES[Math.floor(random() * SERVICES.length)];
      services.set(s[0], s);
    }
    out.set(i, { mac, vendor, services });
  }
  return out;
}

/** A second report: about 5 % of the hosts changed (1 % gone, 1 % new, ports opened, closed, versions changed). */
export function drift(first, random) {
  const second = new Map([...first].map(([i, h]) => [i, { ...h, services: new Map(h.services) }]));
  const ids = [...second.keys()];
  const pick = () => ids[Math.floor(random() * ids.length)];
  const n = Math.round(first.size * 0.01);
  for (let k = 0; k < n; k++) second.delete(pick());
  for (let k = 0, i = 1; k < n; i++) {
    if (second.has(i) || first.has(i) || i % 43 !== 0) continue;
    second.set(i, {
      mac: `02:77:00:00:${(k >> 8).toString(16).padStart(2, '0')}:${(k & 255).toString(16).padStart(2, '0')}`.toUpperCase(),
      vendor: null,
      services: new Map([[22, SERVICES[0]]]),
    });
    k++;
  }
  for (let k = 0; k < n; k++) second.get(pick())?.services.set(23, SERVICES[3]);
  for (let k = 0; k < n; k++) {
    const h = second.get(pick());
    if (h && h.services.size > 1) h.services.delete([...h.services.keys()][0]);
  }
  for (let k = 0; k < n * 2; k++) {
    const h = second.get(pick());
    if (h?.services.has(22)) h.services.set(22, SERVICES[1]);
  }
  return second;
}

const PORTS = '1-1000,3306,3389,5000,8080,8123,9100';

/** The smallest 10.77.0.0/<prefix> holding every host index (and the hosts down listed before them). */
export function networkOf(hosts) {
  const highest = Math.max(...hosts.keys(), 1023);
  return `10.77.0.0/${32 - Math.ceil(Math.log2(highest + 1))}`;
}

/** The report's XML for `hosts` (from inventory() or drift()), with `down` hosts down listed first. */
export function report(hosts, startSeconds, down = 24) {
  const args = `nmap -n -sV -v -p ${PORTS} -oX report.xml ${networkOf(hosts)}`;
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE nmaprun>',
    '<?xml-stylesheet href="file:///usr/bin/../share/nmap/nmap.xsl" type="text/xsl"?>',
    `<!-- Nmap 7.93 scan initiated as: ${args} -->`,
    `<nmaprun scanner="nmap" args="${args}" start="${startSeconds}" startstr="" version="7.93" xmloutputversion="1.05">`,
    `<scaninfo type="syn" protocol="tcp" numservices="1006" services="${PORTS}"/>`,
    '<verbose level="1"/>',
    '<debugging level="0"/>',
  ];
  let listed = 0;
  for (let i = 1; listed < down && i < 1024; i++) {
    if (hosts.has(i)) continue;
    out.push(`<host><status state="down" reason="no-response" reason_ttl="0"/>\n<address addr="${ipOf(i)}" addrtype="ipv4"/>\n</host>`);
    listed++;
  }
  for (const [i, h] of [...hosts].sort((a, b) => a[0] - b[0])) {
    const ports = [...h.services.values()]
      .sort((a, b) => a[0] - b[0])
      .map(([port, name, product, version, extra, cpe]) => {
        const attrs = [
          `name="${name}"`,
          product && `product="${escape(product)}"`,
          version && `version="${escape(version)}"`,
          extra && `extrainfo="${escape(extra)}"`,
        ]
          .filter(Boolean)
          .join(' ');
        const method = product ? 'method="probed" conf="10"' : 'method="table" conf="3"';
        return `<port protocol="tcp" portid="${port}"><state state="open" reason="syn-ack" reason_ttl="64"/><service ${attrs} ${method}>${cpe.map((c) => `<cpe>${c}</cpe>`).join('')}</service></port>`;
      });
    out.push(
      `<host starttime="${startSeconds}" endtime="${startSeconds + 30}"><status state="up" reason="arp-response" reason_ttl="0"/>`,
      `<address addr="${ipOf(i)}" addrtype="ipv4"/>`,
      `<address addr="${h.mac}" addrtype="mac"${h.vendor ? ` vendor="${escape(h.vendor)}"` : ''}/>`,
      '<hostnames>\n</hostnames>',
      `<ports><extraports state="closed" count="${1006 - h.services.size}">\n<extrareasons reason="reset" count="${1006 - h.services.size}" proto="tcp" ports="1-21"/>\n</extraports>`,
      ...ports,
      '</ports>',
      '<times srtt="512" rttvar="200" to="100000"/>',
      '</host>',
    );
  }
  out.push(
    `<runstats><finished time="${startSeconds + 300}" timestr="" summary="" elapsed="300.00" exit="success"/><hosts up="${hosts.size}" down="${listed}" total="${hosts.size + listed}"/>`,
    '</runstats>',
    '</nmaprun>',
  );
  return out.join('\n') + '\n';
}

/** The first report and its drifted second (`first`, `second` XML; `firstHosts`, `secondHosts` maps), from `seed`. */
export function reportPair({ hosts, portsPerHost = 0, seed = 20261126, down = 24 }) {
  const random = mulberry32(seed);
  const firstHosts = inventory(random, hosts, portsPerHost);
  const secondHosts = drift(firstHosts, random);
  return { firstHosts, secondHosts, first: report(firstHosts, 1795600000, down), second: report(secondHosts, 1795686400, down) };
}
