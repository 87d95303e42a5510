/**
 * runProbes on one loopback host answering everything at once (mDNS, SSDP with its description,
 * NetBIOS, SNMP, HTTP, HTTPS, SSH): every probe's result comes back in one ProbeResults; the
 * settings switch probes off; the host's bound and cancel end it promptly with what answered.
 */
import type { Answer } from 'dns-packet';
import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  carriesHttp,
  carriesSsh,
  carriesTls,
  DEFAULT_PROBE_SETTINGS,
  ProbeSettingsSchema,
  runProbes,
  type ProbeHost,
} from '../../src/probes/index.js';
import { isUnicastHost } from '../../src/probes/common.js';
import { greetingServer, makeSelfSignedCert, silentServer, type Listener } from '../scan/native/listeners.js';
import { mdnsResponder, netbiosResponder, snmpAgent, ssdpResponder, udpResponder, type SnmpAgent, type UdpResponder } from './responders.js';
import { webServer, type WebServer } from './servers.js';

const HOST = '127.0.0.1';

const closers: { close(): Promise<void> }[] = [];
let host: ProbeHost;
let ports: { mdns: number; ssdp: number; netbios: number; snmp: number };
let silentUdp: UdpResponder;
let silentTcp: Listener;

beforeAll(async () => {
  const cert = await makeSelfSignedCert('nas.local', 'DNS:nas.local,IP:127.0.0.1');
  if (!cert) throw new Error('openssl could not make a test certificate (apt-get install openssl)');
  const keep = <T extends { close(): Promise<void> }>(value: T): T => {
    closers.push(value);
    return value;
  };
  const web = keep<WebServer>(
    await webServer(HOST, {
      '/': (_req, res) => {
        res.setHeader('Server', 'Apache/2.4.57');
        res.end('<title>NAS</title>');
      },
      '/desc.xml': (_req, res) => res.end('<root><device><modelName>DS920+</modelName><UDN>uuid:nas-1</UDN></device></root>'),
    }),
  );
  const secure = keep<WebServer>(await webServer(HOST, { '/': (_req, res) => res.end('<title>NAS secure</title>') }, cert));
  const ssh = keep<Listener>(await greetingServer(HOST, 'SSH-2.0-OpenSSH_9.2p1\r\n'));
  const mdns = keep<UdpResponder>(
    await mdnsResponder(HOST, [
      { name: '_services._dns-sd._udp.local', type: 'PTR', data: '_smb._tcp.local' },
      { name: '1.0.0.127.in-addr.arpa', type: 'PTR', data: 'nas.local' },
    ] satisfies Answer[]),
  );
  const ssdp = keep<UdpResponder>(await ssdpResponder(HOST, { LOCATION: `http://${HOST}:${web.port}/desc.xml`, SERVER: 'Linux UPnP/1.0' }));
  const netbios = keep<UdpResponder>(await netbiosResponder(HOST, [{ name: 'NAS', suffix: 0 }], Buffer.from([2, 0, 0, 0, 0, 1])));
  const snmp = keep<SnmpAgent>(
    await snmpAgent(HOST, { communities: ['public'], sysDescr: 'Linux nas 5.10', sysObjectID: '1.3.6.1.4.1.6574.1', sysName: 'nas' }),
  );
  silentUdp = keep(await udpResponder(HOST, () => {}));
  silentTcp = keep(await silentServer(HOST));
  ports = { mdns: mdns.port, ssdp: ssdp.port, netbios: netbios.port, snmp: snmp.port };
  host = {
    ip: HOST,
    openTcpPorts: [
      { port: web.port, service: 'http' },
      { port: secure.port, service: 'https' },
      { port: ssh.port, service: 'ssh' },
    ],
  };
});
afterAll(async () => {
  await Promise.all(closers.map((c) => c.close()));
});

describe('runProbes', () => {
  it('runs every probe that applies and gathers their results', async () => {
    const results = await runProbes(host, { ...DEFAULT_PROBE_SETTINGS, probe_timeout_ms: 2500 }, undefined, { ports, keyscanPath: null });
    const [web, secure, ssh] = host.openTcpPorts;
    expect(results.mdns).toMatchObject({ names: ['nas.local'], services: ['_smb._tcp'] });
    expect(results.ssdp).toMatchObject({ modelName: 'DS920+', udn: 'uuid:nas-1', server: 'Linux UPnP/1.0' });
    expect(results.netbios).toEqual({ name: 'NAS', workgroup: null, mac: '02:00:00:00:00:01' });
    expect(results.snmp).toMatchObject({ community: 'public', sysName: 'nas', sysObjectID: '1.3.6.1.4.1.6574.1' });
    expect(results.http?.map((h) => [h.port, h.tls, h.title, h.server])).toEqual(
      [
        [web.port, false, 'NAS', 'Apache/2.4.57'],
        [secure.port, true, 'NAS secure', null],
      ].sort((a, b) => (a[0] as number) - (b[0] as number)),
    );
    expect(results.tls?.map((t) => [t.port, t.subject, t.selfSigned])).toEqual([[secure.port, 'CN=nas.local', true]]);
    expect(results.ssh).toEqual([{ port: ssh.port, banner: 'SSH-2.0-OpenSSH_9.2p1', keyType: null, fingerprint: null }]);
  });

  it('runs only the probes the settings enable', async () => {
    const results = await runProbes(host, { ...DEFAULT_PROBE_SETTINGS, probes: ['netbios', 'ssh'] }, undefined, { ports, keyscanPath: null });
    expect(Object.keys(results).sort()).toEqual(['netbios', 'ssh']);
    expect(await runProbes(host, { ...DEFAULT_PROBE_SETTINGS, probes: [] }, undefined, { ports })).toEqual({});
  });

  it('holds the host bound and stops on cancel, keeping what answered', async () => {
    const quiet: ProbeHost = {
      ip: HOST,
      openTcpPorts: [
        { port: silentTcp.port, service: 'http' },
        { port: host.openTcpPorts[2].port, service: 'ssh' },
      ],
    };
    const silentPorts = { mdns: silentUdp.port, ssdp: silentUdp.port, netbios: ports.netbios, snmp: silentUdp.port };
    const started = Date.now();
    const bounded = await runProbes(quiet, { ...DEFAULT_PROBE_SETTINGS, probe_timeout_ms: 5000, host_timeout_ms: 700 }, undefined, {
      ports: silentPorts,
      keyscanPath: null,
      concurrency: 8,
    });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(bounded).toEqual({
      netbios: { name: 'NAS', workgroup: null, mac: '02:00:00:00:00:01' },
      ssh: [expect.objectContaining({ banner: 'SSH-2.0-OpenSSH_9.2p1' })],
    });

    const controller = new AbortController();
    const cancelStart = Date.now();
    const pending = runProbes(quiet, { ...DEFAULT_PROBE_SETTINGS, probe_timeout_ms: 10_000, host_timeout_ms: 30_000 }, controller.signal, {
      ports: silentPorts,
      keyscanPath: null,
    });
    setTimeout(() => controller.abort(), 300);
    await pending;
    expect(Date.now() - cancelStart).toBeLessThan(2500);
  });

  it('keeps its bounds when given out-of-range times', async () => {
    const results = await runProbes(host, { ...DEFAULT_PROBE_SETTINGS, probe_timeout_ms: Number.NaN, host_timeout_ms: Number.NaN }, undefined, {
      ports,
      keyscanPath: null,
    });
    expect(results.netbios?.name).toBe('NAS');
    expect(results.snmp?.sysName).toBe('nas');
  });

  it('never probes a group or broadcast address', async () => {
    // Checked on the pure predicate runProbes asks first: no socket is given such an address, not
    // even in a test (should the guard ever break, a test must not send to a group).
    expect(isUnicastHost('255.255.255.255')).toBe(false);
    expect(isUnicastHost('0.0.0.0')).toBe(false);
    expect(await runProbes({ ip: 'not-an-ip', openTcpPorts: [{ port: 80, service: 'http' }] })).toEqual({});
  });

  it('picks the ports that carry HTTP, TLS and SSH', () => {
    expect(carriesHttp({ port: 8080, service: 'http-proxy' })).toBe(true);
    expect(carriesHttp({ port: 5000, service: 'upnp' })).toBe(true); // the port's usual name: nothing recognised, 5000 is a web port
    expect(carriesHttp({ port: 5000, service: 'rtsp' })).toBe(false);
    expect(carriesHttp({ port: 22, service: 'ssh' })).toBe(false);
    expect(carriesTls({ port: 443, service: 'https' })).toBe(true);
    expect(carriesTls({ port: 8443, service: null })).toBe(true);
    expect(carriesTls({ port: 9999, service: 'ssl/http' })).toBe(true);
    expect(carriesTls({ port: 80, service: 'http' })).toBe(false);
    expect(carriesSsh({ port: 2222, service: 'ssh' })).toBe(true);
    expect(carriesSsh({ port: 22, service: null })).toBe(true);
    expect(carriesSsh({ port: 22, service: 'telnet' })).toBe(false);
  });

  it('describes its settings with a TypeBox schema the defaults satisfy', () => {
    expect(Value.Check(ProbeSettingsSchema, DEFAULT_PROBE_SETTINGS)).toBe(true);
    expect(Value.Check(ProbeSettingsSchema, { ...DEFAULT_PROBE_SETTINGS, probes: ['mdns', 'telnet'] })).toBe(false);
    expect(Value.Check(ProbeSettingsSchema, { ...DEFAULT_PROBE_SETTINGS, snmp_communities: [''] })).toBe(false);
  });
});
