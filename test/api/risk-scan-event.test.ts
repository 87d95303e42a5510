/**
 * `risk_changed` from scans (CONTRACT §17, §18): a scan (here nmap reports imported through
 * POST /api/scans/import, recorded by the same path as a scan) that changes a device's risk level
 * publishes `risk_changed` with reason `scan` on the live event stream; one that leaves it alone
 * publishes none. A webhook channel whose `filters.events` names `risk.changed` gets a message for
 * each, the lower risk titled as good news.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { startReceiver, type Receiver } from '../helpers/receivers.js';
import { openSse, type SseStream } from '../helpers/sse.js';
import { waitFor } from '../helpers/wait.js';

const IP = '127.0.0.31';
let reports = 0;
/** A service scan (`nmap -n -sV -p 22,23`) of one host with `open` of those ports open. */
function serviceReport(open: { port: number; service: string }[]): string {
  const start = 1795656544 + ++reports * 60;
  const ports = [22, 23]
    .map((port) => {
      const o = open.find((p) => p.port === port);
      return o
        ? `<port protocol="tcp" portid="${port}"><state state="open" reason="syn-ack" reason_ttl="64"/><service name="${o.service}" method="probed" conf="10"/></port>`
        : `<port protocol="tcp" portid="${port}"><state state="closed" reason="reset" reason_ttl="64"/><service name="x" method="table" conf="3"/></port>`;
    })
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE nmaprun>
<nmaprun scanner="nmap" args="nmap -n -sV -p 22,23 -oX r.xml ${IP}" start="${start}" version="7.93" xmloutputversion="1.05">
<scaninfo type="syn" protocol="tcp" numservices="2" services="22-23"/>
<verbose level="0"/>
<debugging level="0"/>
<host starttime="${start}" endtime="${start}"><status state="up" reason="localhost-response" reason_ttl="0"/>
<address addr="${IP}" addrtype="ipv4"/>
<hostnames>
</hostnames>
<ports>${ports}
</ports>
</host>
<runstats><finished time="${start}" elapsed="1.00" exit="success"/><hosts up="1" down="0" total="1"/>
</runstats>
</nmaprun>
`;
}

describe.each(testDatabases())('risk_changed from scans ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let stream: SseStream;
  let receiver: Receiver;

  beforeAll(async () => {
    ({ server, key } = await startServerWithAdmin(database));
    stream = await openSse(`${server.baseUrl}/api/events`, { 'X-API-Key': key });
    receiver = await startReceiver();
    const res = await server.request('/api/notifications/channels', {
      method: 'POST',
      key,
      json: { name: 'risk', type: 'webhook', config: { url: `${receiver.url}/hook` }, filters: { events: ['risk.changed'] } },
    });
    expect(res.status, await res.clone().text()).toBe(201);
  });
  afterAll(async () => {
    await server?.close();
    await stream?.ended;
    await receiver?.close();
  });

  const importReport = async (xml: string) => {
    const res = await server.request('/api/scans/import', { method: 'POST', key, body: xml, headers: { 'Content-Type': 'application/xml' } });
    expect(res.status, await res.clone().text()).toBe(201);
    return readJson(res);
  };
  const device = async () => {
    const devices: any[] = await readJson(await server.request(`/api/devices?limit=1000&q=${IP}`, { key }));
    const d = devices.find((x) => x.ip_address === IP);
    expect(d).toBeDefined();
    return d;
  };
  const riskEvents = () => stream.parsed().filter((e) => e.event === 'risk_changed');

  it('publishes risk_changed with reason scan when a scan raises or lowers a level, none when it stays', async () => {
    await importReport(serviceReport([{ port: 22, service: 'ssh' }]));
    const first = await device();
    const calm = first.risk_level;
    expect(calm).not.toBe('critical');

    // Telnet opens: the level rises to critical.
    await importReport(
      serviceReport([
        { port: 22, service: 'ssh' },
        { port: 23, service: 'telnet' },
      ]),
    );
    expect((await device()).risk_level).toBe('critical');
    await stream.until(() => riskEvents().length >= 1, 'risk_changed after telnet opened', 20_000);
    expect(riskEvents().map((e) => e.data)).toMatchObject([
      {
        device_id: first.id,
        ip_address: IP,
        before: { level: calm, score: first.risk_score },
        after: { level: 'critical', score: expect.any(Number) },
        reason: 'scan',
      },
    ]);

    // The same ports again: the level stays, no event.
    await importReport(
      serviceReport([
        { port: 22, service: 'ssh' },
        { port: 23, service: 'telnet' },
      ]),
    );
    // Telnet closes: back down.
    await importReport(serviceReport([{ port: 22, service: 'ssh' }]));
    await stream.until(() => riskEvents().length >= 2, 'risk_changed after telnet closed', 20_000);
    const events = riskEvents().map((e) => e.data);
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({ device_id: first.id, before: { level: 'critical' }, after: { level: calm }, reason: 'scan' });

    // The channel that asked for risk.changed hears of both: the rise with its level, the fall as good news.
    const riskMessages = () => receiver.requests.map((r) => r.json()).filter((m) => m.event === 'risk.changed');
    await waitFor('two risk.changed messages', async () => riskMessages().length >= 2);
    const [up, down] = riskMessages();
    // The webhook body carries the event, the summary and the device with its risk change (CONTRACT §9).
    expect(up).toMatchObject({
      scan: null,
      changes: [],
      device: { device: { id: first.id }, risk: { before: { level: calm }, after: { level: 'critical' }, reason: 'scan' } },
    });
    expect(up.summary).toMatch(
      new RegExp(`^The risk of ${IP.replace(/\./g, '\\.')} went up from ${calm} \\(\\d+\\) to critical \\(\\d+\\), after a scan\\.$`),
    );
    expect(down).toMatchObject({
      scan: null,
      device: { device: { id: first.id, open_ports: [22] }, risk: { before: { level: 'critical' }, after: { level: calm }, reason: 'scan' } },
    });
    expect(down.summary).toMatch(
      new RegExp(`^The risk of ${IP.replace(/\./g, '\\.')} went down from critical \\(\\d+\\) to ${calm} \\(\\d+\\), after a scan\\.$`),
    );
    expect(riskMessages()).toHaveLength(2);
  });
});
