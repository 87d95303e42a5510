/**
 * The SNMP probe against net-snmp's own agent on loopback: sysDescr, sysObjectID, sysName and the
 * engine ID come back with the community that answered; a wrong community is silence; an agent
 * without snmpEngineID still gives the system group; silence, garbage and cancel give null promptly.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { probeSnmp } from '../../src/probes/snmp.js';
import { freeUdpPort, snmpAgent, udpResponder, type SnmpAgent, type UdpResponder } from './responders.js';

const HOST = '127.0.0.1';
const SYSTEM = {
  sysDescr: 'Cisco IOS Software, C2960 Software (C2960-LANBASEK9-M), Version 15.0(2)SE11',
  sysObjectID: '1.3.6.1.4.1.9.1.1208',
  sysName: 'core-switch',
};

const open: (SnmpAgent | UdpResponder)[] = [];
async function track<T extends SnmpAgent | UdpResponder>(r: Promise<T>): Promise<T> {
  const value = await r;
  open.push(value);
  return value;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

describe('SNMP probe', () => {
  it('reads the system group and engine ID with the first community that answers', async () => {
    const agent = await track(snmpAgent(HOST, { communities: ['s3cret'], ...SYSTEM, engineId: '800000090300001132abcdef' }));
    const result = await probeSnmp(HOST, { port: agent.port, communities: ['public', 's3cret'], timeoutMs: 2000 });
    expect(result).toEqual({ community: 's3cret', ...SYSTEM, engineId: '800000090300001132abcdef' });
  });

  it('asks public by default, and gives null when no community is accepted', async () => {
    const agent = await track(snmpAgent(HOST, { communities: ['public'], ...SYSTEM, engineId: '8000000903aabbccddeeff' }));
    expect(await probeSnmp(HOST, { port: agent.port, timeoutMs: 2000 })).toMatchObject({ community: 'public', sysName: 'core-switch' });

    const closed = await track(snmpAgent(HOST, { communities: ['only-this'], ...SYSTEM }));
    const started = Date.now();
    expect(await probeSnmp(HOST, { port: closed.port, communities: ['public', 'private'], timeoutMs: 600 })).toBeNull();
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('gives the system group of an agent that has no snmpEngineID object', async () => {
    const agent = await track(snmpAgent(HOST, { communities: ['public'], ...SYSTEM }));
    expect(await probeSnmp(HOST, { port: agent.port, timeoutMs: 2000 })).toEqual({ community: 'public', ...SYSTEM, engineId: null });
  });

  it("walks a switch's bridge forwarding table and LLDP neighbours with the community that answered", async () => {
    const bridge = Array.from({ length: 70 }, (_, i) => ({
      mac: `02:00:00:00:01:${i.toString(16).padStart(2, '0').toUpperCase()}`,
      port: 1 + (i % 24),
    }));
    const agent = await track(
      snmpAgent(HOST, {
        communities: ['s3cret'],
        ...SYSTEM,
        bridge: [...bridge, { mac: '00:11:22:33:44:55', port: 0 }],
        lldp: [{ localPort: 24, chassisMac: 'AA:BB:CC:00:00:01', sysName: 'core' }],
      }),
    );
    const result = await probeSnmp(HOST, { port: agent.port, communities: ['public', 's3cret'], timeoutMs: 4000 });
    expect(result).toMatchObject({ community: 's3cret', sysName: 'core-switch' });
    // Every row over several GETBULKs, in the agent's (MAC) order; port 0 (port unknown) left out.
    expect(result?.bridge).toEqual([...bridge].sort((a, b) => a.mac.localeCompare(b.mac)));
    expect(result?.lldp).toEqual([{ localPort: 24, chassisMac: 'AA:BB:CC:00:00:01', sysName: 'core' }]);
  });

  it('reads at most the row limit of a table, and nothing once cancelled', async () => {
    const bridge = Array.from({ length: 100 }, (_, i) => ({ mac: `02:00:00:00:02:${i.toString(16).padStart(2, '0').toUpperCase()}`, port: 1 }));
    const agent = await track(snmpAgent(HOST, { communities: ['public'], ...SYSTEM, bridge }));
    const result = await probeSnmp(HOST, { port: agent.port, timeoutMs: 4000, maxRows: { bridge: 40 } });
    expect(result?.bridge).toEqual(bridge.slice(0, 40));
    const cancelled = new AbortController();
    cancelled.abort();
    expect(await probeSnmp(HOST, { port: agent.port, timeoutMs: 4000, signal: cancelled.signal })).toBeNull();
  });

  it('leaves the tables out of a host that is no bridge, and when asked not to walk', async () => {
    const agent = await track(snmpAgent(HOST, { communities: ['public'], ...SYSTEM, bridge: [{ mac: '02:00:00:00:00:09', port: 3 }] }));
    expect(await probeSnmp(HOST, { port: agent.port, timeoutMs: 2000, tables: false })).toEqual({ community: 'public', ...SYSTEM, engineId: null });
    const plain = await track(snmpAgent(HOST, { communities: ['public'], ...SYSTEM }));
    const result = await probeSnmp(HOST, { port: plain.port, timeoutMs: 2000 });
    expect(result).toEqual({ community: 'public', ...SYSTEM, engineId: null });
  });

  it('stops at once when the host says nothing listens on the port', async () => {
    const port = await freeUdpPort(HOST);
    const started = Date.now();
    expect(await probeSnmp(HOST, { port, timeoutMs: 5000 })).toBeNull();
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('returns null on silence, garbage and cancel, promptly', async () => {
    const silent = await track(udpResponder(HOST, () => {}));
    expect(await probeSnmp(HOST, { port: silent.port, timeoutMs: 300 })).toBeNull();

    const garbage = await track(
      udpResponder(HOST, (_msg, reply) => {
        reply(Buffer.from([0x30, 0x82, 0xff, 0xff, 0x02, 0x01]));
        reply(Buffer.alloc(40_000, 0x30));
      }),
    );
    expect(await probeSnmp(HOST, { port: garbage.port, timeoutMs: 300 })).toBeNull();

    const controller = new AbortController();
    const started = Date.now();
    const pending = probeSnmp(HOST, { port: silent.port, timeoutMs: 20_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toBeNull();
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
