/** Two nmap reports of the same network for comparisons and timelines (issue 22): the second examines fewer ports. */
interface HostSpec {
  ip: string;
  mac: string;
  ports: { port: number; service: string; product?: string; version?: string }[];
}

/** An nmap -oX report of `target` examining `services` (nmap's -p list) that found `hosts`. */
export function nmapReport(target: string, services: string, hosts: HostSpec[]): string {
  const host = (h: HostSpec) =>
    `<host><status state="up" reason="arp-response"/><address addr="${h.ip}" addrtype="ipv4"/><address addr="${h.mac}" addrtype="mac" vendor="Xensource"/>
<ports>${h.ports
      .map(
        (p) =>
          `<port protocol="tcp" portid="${p.port}"><state state="open" reason="syn-ack"/><service name="${p.service}"${p.product ? ` product="${p.product}"` : ''}${p.version ? ` version="${p.version}"` : ''} method="probed" conf="10"/></port>`,
      )
      .join('')}</ports></host>`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE nmaprun>
<nmaprun scanner="nmap" args="nmap -n -sV -p ${services} ${target}" start="1764150000" version="7.93" xmloutputversion="1.05">
<scaninfo type="syn" protocol="tcp" numservices="1" services="${services}"/>
${hosts.map(host).join('\n')}
<runstats><finished time="1764150003" elapsed="3.00" exit="success"/><hosts up="${hosts.length}" down="0" total="16"/></runstats>
</nmaprun>`;
}

export const MAC = (n: number) => `00:16:3E:22:00:0${n}`;

/** The first report examines 1-1000 and 3306 on 10.66.0.0/28. */
export const FIRST = nmapReport('10.66.0.0/28', '1-1000,3306', [
  {
    ip: '10.66.0.2',
    mac: MAC(1),
    ports: [
      { port: 22, service: 'ssh', product: 'OpenSSH', version: '8.0' },
      { port: 3306, service: 'mysql', product: 'MariaDB' },
    ],
  },
  { ip: '10.66.0.3', mac: MAC(2), ports: [{ port: 80, service: 'http', product: 'nginx' }] },
  { ip: '10.66.0.4', mac: MAC(3), ports: [{ port: 22, service: 'ssh', product: 'OpenSSH', version: '9.6' }] },
  { ip: '10.66.0.5', mac: MAC(4), ports: [{ port: 22, service: 'ssh', product: 'OpenSSH', version: '9.6' }] },
]);

/**
 * The second examines only 22 and 80: 3306 on .2 is not examined (never "closed"); .2's SSH is newer;
 * .3 closed 80 and opened 22; .4 is gone; MAC 4 moved from .5 to .9 and opened 80; .7 is new.
 */
export const SECOND = nmapReport('10.66.0.0/28', '22,80', [
  { ip: '10.66.0.2', mac: MAC(1), ports: [{ port: 22, service: 'ssh', product: 'OpenSSH', version: '8.2' }] },
  { ip: '10.66.0.3', mac: MAC(2), ports: [{ port: 22, service: 'ssh', product: 'OpenSSH', version: '9.6' }] },
  { ip: '10.66.0.7', mac: MAC(5), ports: [{ port: 80, service: 'http', product: 'nginx' }] },
  {
    ip: '10.66.0.9',
    mac: MAC(4),
    ports: [
      { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.6' },
      { port: 80, service: 'http', product: 'nginx' },
    ],
  },
]);
