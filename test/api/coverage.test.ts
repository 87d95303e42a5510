/**
 * The inventory tells the truth about what was examined (CONTRACT §14, issue 19 §1): a scan, an
 * nmap import or an agent's upload changes only the ports it examined; a port it did not examine
 * keeps its last known state, shown stale with when and by which scan it was last verified, and no
 * change is reported for it; a later scan that examines it again and finds it closed reports
 * exactly one port_closed. Over HTTP against the real server, real scans of real loopback
 * listeners, both stores.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { bannerListener, closedPort, type Listener } from '../helpers/listeners.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';

describe.each(testDatabases())('coverage-aware inventory ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let cookie: string;

  beforeEach(async () => {
    // The native engine (no nmap needed, and quick on loopback); no OS detection, which needs privileges.
    ({ server, key, cookie } = await startServerWithAdmin(database, { settings: { scanning: { engine: 'native', os_detection: false } } }));
  });
  afterEach(async () => {
    await server?.close();
  });

  const get = async (path: string) => {
    const res = await server.request(path, { key });
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    return readJson(res);
  };
  const setPortRange = async (portRange: string) => {
    const res = await server.request('/api/config', { method: 'PUT', key, json: { scanning: { port_range: portRange } } });
    expect(res.status, await res.clone().text()).toBe(200);
  };
  const deviceAt = async (ip: string) => {
    const devices = await get('/api/devices');
    const summary = devices.find((d: any) => d.ip_address === ip);
    expect(summary, `a device at ${ip}`).toBeDefined();
    return { summary, detail: await get(`/api/devices/${summary.id}`) };
  };
  const portOf = (detail: any, port: number) => detail.ports.find((p: any) => p.port === port && p.protocol === 'tcp');
  const changesOf = async (scanId: number) =>
    (await get(`/api/changes?scan_id=${scanId}`)).map((c: any) => `${c.change_type} ${c.device_ip}:${c.port ?? ''}`).sort();

  it('a scan with a narrower port list keeps the ports it did not examine; the next full scan reports the closed one once', async () => {
    const listeners: Listener[] = [];
    try {
      const a = await bannerListener('127.0.0.1', 'SSH-2.0-Netwarden_test\r\n');
      const b = await bannerListener('127.0.0.1', 'SSH-2.0-Netwarden_test\r\n');
      listeners.push(a, b);
      const closed = await closedPort('127.0.0.1');
      const [first, second] = [a.port, b.port].sort((x, y) => x - y);
      const wide = [first, second, closed].sort((x, y) => x - y).join(',');
      const scan = async () => {
        const started = await triggerScan(server, key, { subnet: '127.0.0.1/32', profile: 'normal' });
        return waitForScan(server, key, started.scan_id);
      };

      await setPortRange(wide);
      const one = await scan();
      expect(one).toMatchObject({ status: 'completed', ports_examined: wide, hosts_examined: 1 });
      let { summary, detail } = await deviceAt('127.0.0.1');
      expect(summary.open_ports).toEqual([first, second]);
      for (const p of [first, second]) {
        expect(portOf(detail, p)).toMatchObject({ state: 'open', verified_by_scan_id: one.scan_id, stale: false });
      }
      const verifiedFirst = portOf(detail, second).last_verified_at;
      expect(Date.parse(verifiedFirst)).toBeGreaterThanOrEqual(Date.parse(one.started_at));
      expect(Date.parse(verifiedFirst)).toBeLessThanOrEqual(Date.parse(one.completed_at));

      // Scan 2 examines only the first port.
      await setPortRange(String(first));
      const two = await scan();
      expect(two).toMatchObject({ status: 'completed', ports_examined: String(first), hosts_examined: 1 });
      expect(await get(`/api/scans/${two.scan_id}`)).toEqual(two);
      ({ summary, detail } = await deviceAt('127.0.0.1'));
      expect(summary.open_ports).toEqual([first, second]);
      expect(summary).toMatchObject({ ports_examined: wide, stale_ports: 1, ports_examined_at: verifiedFirst });
      expect(portOf(detail, first)).toMatchObject({ state: 'open', verified_by_scan_id: two.scan_id, stale: false });
      expect(portOf(detail, second)).toMatchObject({ state: 'open', verified_by_scan_id: one.scan_id, last_verified_at: verifiedFirst, stale: true });
      expect(detail.coverage.map((c: any) => [c.scan_id, c.ports_examined])).toEqual([
        [two.scan_id, String(first)],
        [one.scan_id, [second, closed].sort((x, y) => x - y).join(',')],
      ]);
      expect(await changesOf(two.scan_id)).toEqual([]);
      // The scan's own record of the device holds the port it kept.
      const snapshot = (await get(`/api/scans/${two.scan_id}/devices`)).find((d: any) => d.ip_address === '127.0.0.1');
      expect(snapshot.open_ports).toEqual([first, second]);

      // Scan 3 examines both again; the second listener is gone.
      const gone = listeners.findIndex((l) => l.port === second);
      await listeners.splice(gone, 1)[0].close();
      await setPortRange(wide);
      const three = await scan();
      expect(three).toMatchObject({ status: 'completed', ports_examined: wide, hosts_examined: 1 });
      expect(await changesOf(three.scan_id)).toEqual([`port_closed 127.0.0.1:${second}`]);
      ({ summary, detail } = await deviceAt('127.0.0.1'));
      expect(summary).toMatchObject({ open_ports: [first], stale_ports: 0 });
      expect(portOf(detail, second)).toBeUndefined();
      expect(portOf(detail, first)).toMatchObject({ verified_by_scan_id: three.scan_id, stale: false });

      // And only once: the next scan finds it closed again and reports nothing.
      const four = await scan();
      expect(await changesOf(four.scan_id)).toEqual([]);
      const all = (await get('/api/changes')).filter((c: any) => c.change_type === 'port_closed' || c.change_type === 'port_opened');
      expect(all.map((c: any) => `${c.change_type} ${c.port} ${c.scan_id}`)).toEqual([`port_closed ${second} ${three.scan_id}`]);
    } finally {
      for (const l of listeners) await l.close();
    }
  }, 300_000);

  it('says what "no finding" covers and when, from the scans that examined the device, not from today\'s settings', async () => {
    const listener = await bannerListener('127.0.0.1', 'SSH-2.0-Netwarden_test\r\n');
    try {
      const closed = await closedPort('127.0.0.1');
      const list = [listener.port, closed].sort((x, y) => x - y);
      await setPortRange(list.join(','));
      const started = await triggerScan(server, key, { subnet: '127.0.0.1/32', profile: 'normal' });
      const scan = await waitForScan(server, key, started.scan_id);
      expect(scan.status).toBe('completed');
      let { detail } = await deviceAt('127.0.0.1');
      expect(detail.risk_details.findings).toEqual([]);
      const at = detail.coverage[0].examined_at;
      const when = `${at.slice(0, 16).replace('T', ' ')} UTC`;
      const expected = `No risky services or known vulnerabilities found in TCP ports ${list[0]}, ${list[1]} (scan #${scan.scan_id}, ${when})`;
      expect(detail.risk_details.summary).toBe(expected);

      // Today's settings say something else: the statement still says what was examined.
      await setPortRange('1-1000');
      ({ detail } = await deviceAt('127.0.0.1'));
      expect(detail.risk_details.summary).toBe(expected);
    } finally {
      await listener.close();
    }
  }, 120_000);

  it('an nmap import examining fewer ports keeps the others; a later import examining them reports the closed one once', async () => {
    const ip = '127.0.0.40';
    const report = (services: string, open: number[]) => `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE nmaprun>
<nmaprun scanner="nmap" args="nmap -n -sV -p ${services} ${ip}" start="1764150000" version="7.93" xmloutputversion="1.05">
<scaninfo type="connect" protocol="tcp" numservices="1" services="${services}"/>
<host><status state="up" reason="conn-refused"/><address addr="${ip}" addrtype="ipv4"/>
<ports>${open
      .map(
        (p) =>
          `<port protocol="tcp" portid="${p}"><state state="open" reason="syn-ack"/><service name="${p === 22 ? 'ssh' : 'mysql'}" product="${p === 22 ? 'OpenSSH' : 'MariaDB'}" method="probed" conf="10"/></port>`,
      )
      .join('')}</ports>
</host>
<runstats><finished time="1764150003" elapsed="3.00" exit="success"/><hosts up="1" down="0" total="1"/></runstats>
</nmaprun>`;
    const importXml = async (xml: string) => {
      const res = await server.request('/api/scans/import', { method: 'POST', body: xml, headers: { 'Content-Type': 'application/xml' }, key });
      expect(res.status, await res.clone().text()).toBe(201);
      return readJson(res);
    };

    const one = await importXml(report('1-1000,3306', [22, 3306]));
    expect(one).toMatchObject({ status: 'completed', ports_examined: '1-1000,3306', hosts_examined: 1 });
    const two = await importXml(report('22', [22]));
    expect(two).toMatchObject({ status: 'completed', ports_examined: '22', hosts_examined: 1 });
    expect(await changesOf(two.scan_id)).toEqual([]);
    const before = await deviceAt(ip);
    let { summary } = before;
    const { detail } = before;
    expect(summary.open_ports).toEqual([22, 3306]);
    expect(summary.stale_ports).toBe(1);
    expect(portOf(detail, 3306)).toMatchObject({ state: 'open', product: 'MariaDB', verified_by_scan_id: one.scan_id, stale: true });
    expect(portOf(detail, 3306).last_verified_at).toBe(detail.coverage.find((c: any) => c.scan_id === one.scan_id).examined_at);
    expect(portOf(detail, 22)).toMatchObject({ verified_by_scan_id: two.scan_id, stale: false });
    // The MariaDB finding stays: a port not examined is not a risk gone.
    expect(detail.risk_details.findings.map((f: any) => f.port)).toContain(3306);

    const three = await importXml(report('1-1000,3306', [22]));
    expect(await changesOf(three.scan_id)).toEqual([`port_closed ${ip}:3306`]);
    ({ summary } = await deviceAt(ip));
    expect(summary).toMatchObject({ open_ports: [22], stale_ports: 0, ports_examined: '1-1000,3306' });
  });

  it('an agent upload changes only the ports the agent was handed; the closed one is reported once', async () => {
    const network = '127.0.0.64/28';
    const ip = '127.0.0.65';
    const run = randomUUID();
    const res = await server.request('/api/agents', { method: 'POST', cookie, json: { name: 'site-c', networks: [network] } });
    expect(res.status).toBe(201);
    const { token } = await readJson(res);
    const headers = { Authorization: `Bearer ${token}` };
    const port = (n: number) => ({
      port: n,
      protocol: 'tcp',
      state: 'open',
      service: n === 22 ? 'ssh' : 'mysql',
      product: null,
      version: null,
      extra_info: null,
      cpe: [],
    });
    /** Queues a scan of the agent's network, takes it as the agent, and uploads `open` as found on .65. */
    const agentScan = async (open: number[]) => {
      const started = await triggerScan(server, key, { subnet: network, profile: 'normal' });
      const next = await server.request('/api/agent/jobs/next', {
        method: 'POST',
        headers,
        json: { run_id: run, version: '1', engine: 'nmap', wait_seconds: 5 },
      });
      expect(next.status).toBe(200);
      const job = await readJson(next);
      expect(job.scan_id).toBe(started.scan_id);
      const upload = {
        run_id: run,
        engine: 'nmap',
        hosts: [{ ip, mac: null, vendor: null, hostname: null }],
        ports: [{ ip, mac: null, vendor: null, hostname: null, os_name: null, device_type: null, ports: open.map(port) }],
      };
      const done = await server.request(`/api/agent/scans/${job.scan_id}/results`, { method: 'POST', headers, json: upload });
      expect(done.status, await done.clone().text()).toBe(200);
      return { job, scan: await readJson(done) };
    };

    await setPortRange('1-1000,3306');
    const one = await agentScan([22, 3306]);
    expect(one.job.ports).toBe('1-1000,3306');
    // Settings changed while the agent ran do not change what it examined.
    await setPortRange('1-10');
    expect(await get(`/api/scans/${one.scan.scan_id}`)).toMatchObject({ ports_examined: '1-1000,3306', hosts_examined: 1 });

    await setPortRange('22');
    const two = await agentScan([22]);
    expect(two.scan).toMatchObject({ status: 'completed', ports_examined: '22', hosts_examined: 1 });
    expect(await changesOf(two.scan.scan_id)).toEqual([]);
    const { summary, detail } = await deviceAt(ip);
    expect(summary.open_ports).toEqual([22, 3306]);
    expect(portOf(detail, 3306)).toMatchObject({ verified_by_scan_id: one.scan.scan_id, stale: true });

    await setPortRange('1-1000,3306');
    const three = await agentScan([22]);
    expect(await changesOf(three.scan.scan_id)).toEqual([`port_closed ${ip}:3306`]);
    expect((await deviceAt(ip)).summary).toMatchObject({ open_ports: [22], stale_ports: 0 });
  });
});
