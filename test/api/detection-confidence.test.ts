/**
 * How sure a CVE finding is (issue 23 §4, CONTRACT §17): `GET /api/findings?order=priority` grades
 * each CVE finding `confirmed` or `likely`. Two hosts of one imported nmap report (the form nmap
 * -sV writes) run OpenSSH 7.4: one with the upstream version only, one packaged by Debian, whose
 * banner version ("7.4p1 Debian 10+deb9u7") a back-ported fix does not change. The first one's
 * CVEs are confirmed; the second one's likely, saying why and naming the distribution, and its
 * device's CVE list says the same. Rule findings have no grade.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';

const UPSTREAM = '127.0.0.41';
const DEBIAN = '127.0.0.42';

function host(ip: string, version: string, cpe: string): string {
  return `<host starttime="1795656544" endtime="1795656548"><status state="up" reason="localhost-response" reason_ttl="0"/>
<address addr="${ip}" addrtype="ipv4"/>
<hostnames>
</hostnames>
<ports><port protocol="tcp" portid="22"><state state="open" reason="syn-ack" reason_ttl="64"/><service name="ssh" product="OpenSSH" version="${version}" extrainfo="protocol 2.0" ostype="Linux" method="probed" conf="10"><cpe>${cpe}</cpe><cpe>cpe:/o:linux:linux_kernel</cpe></service></port>
</ports>
<times srtt="2" rttvar="1582" to="100000"/>
</host>`;
}

const REPORT = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE nmaprun>
<nmaprun scanner="nmap" args="nmap -n -sV -p 22 -oX r.xml 127.0.0.40/30" start="1795656544" version="7.93" xmloutputversion="1.05">
<scaninfo type="syn" protocol="tcp" numservices="1" services="22"/>
<verbose level="0"/>
<debugging level="0"/>
${host(UPSTREAM, '7.4', 'cpe:/a:openbsd:openssh:7.4')}
${host(DEBIAN, '7.4p1 Debian 10+deb9u7', 'cpe:/a:openbsd:openssh:7.4p1')}
<runstats><finished time="1795656548" elapsed="4.00" exit="success"/><hosts up="2" down="2" total="4"/>
</runstats>
</nmaprun>
`;

describe.each(testDatabases())('detection confidence of CVE findings ($kind)', (database) => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    ({ server, key } = await startServerWithAdmin(database));
    const res = await server.request('/api/scans/import', { method: 'POST', key, body: REPORT, headers: { 'Content-Type': 'application/xml' } });
    expect(res.status, await res.clone().text()).toBe(201);
  });
  afterAll(() => server?.close());

  const get = async (path: string): Promise<any> => {
    const res = await server.request(path, { key });
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    return readJson(res);
  };

  it('grades a version read from a distribution banner likely, naming the distribution, and an upstream one confirmed', async () => {
    const findings: any[] = await get('/api/findings?order=priority&limit=1000');
    const cves = (ip: string) => findings.filter((f) => f.device_ip === ip && f.kind === 'cve');
    const upstream = cves(UPSTREAM);
    const debian = cves(DEBIAN);
    expect(upstream.length).toBeGreaterThan(0);
    expect(debian.length).toBeGreaterThan(0);
    for (const f of upstream) expect(f, f.cve_id).toMatchObject({ product_name: 'OpenSSH', confidence: 'confirmed' });
    for (const f of debian) {
      expect(f, f.cve_id).toMatchObject({ product_name: 'OpenSSH', confidence: 'likely' });
      expect(f.confidence_reason).toMatch(/banner.*Debian/);
    }
    // The same CVEs are open on both: the grade, not the match, differs.
    expect(new Set(debian.map((f) => f.cve_id))).toEqual(new Set(upstream.map((f) => f.cve_id)));
    for (const f of findings.filter((x) => x.kind !== 'cve')) expect([f.confidence, f.confidence_reason]).toEqual([null, null]);

    // The device's own CVE list carries the grade and the back-port note in its remediation.
    const [device] = (await get(`/api/devices?limit=10&q=${DEBIAN}`)).filter((d: any) => d.ip_address === DEBIAN);
    const detail = await get(`/api/devices/${device.id}`);
    expect(detail.cves.length).toBe(debian.length);
    for (const c of detail.cves) {
      expect(c.confidence, c.id).toBe('likely');
      expect(c.remediation).toMatch(/Debian/);
    }
  });
});
