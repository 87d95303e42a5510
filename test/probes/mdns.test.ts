/**
 * The mDNS probe against a real responder on loopback answering unicast (legacy) DNS-SD queries:
 * what a NAS advertises comes back as names, service types, instances and TXT; silence, a foreign
 * sender, garbage and cancel give null promptly, never an exception.
 */
import dgram from 'node:dgram';
import type { Answer } from 'dns-packet';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { probeMdns, reverseName } from '../../src/probes/mdns.js';
import { isUnicastHost } from '../../src/probes/common.js';
import { mdnsResponder, udpResponder, type UdpResponder } from './responders.js';

const HOST = '127.0.0.1';

const NAS: Answer[] = [
  { name: '_services._dns-sd._udp.local', type: 'PTR', data: '_http._tcp.local' },
  { name: '_services._dns-sd._udp.local', type: 'PTR', data: '_smb._tcp.local' },
  { name: '1.0.0.127.in-addr.arpa', type: 'PTR', data: 'NAS.local' },
  { name: '_http._tcp.local', type: 'PTR', data: 'NAS Web._http._tcp.local' },
  { name: 'NAS Web._http._tcp.local', type: 'SRV', data: { target: 'NAS.local', port: 5000, priority: 0, weight: 0 } },
  { name: 'NAS Web._http._tcp.local', type: 'TXT', data: ['path=/webman', 'vendor=Synology'] },
  { name: '_smb._tcp.local', type: 'PTR', data: 'NAS._smb._tcp.local' },
  { name: 'NAS._smb._tcp.local', type: 'SRV', data: { target: 'NAS.local', port: 445, priority: 0, weight: 0 } },
  { name: 'NAS._smb._tcp.local', type: 'TXT', data: [''] },
  { name: 'nas._device-info._tcp.local', type: 'TXT', data: ['model=DS920+', 'vendor=Synology Inc.'] },
  { name: 'NAS.local', type: 'A', data: HOST },
];

const open: UdpResponder[] = [];
async function track<T extends UdpResponder>(r: Promise<T>): Promise<T> {
  const responder = await r;
  open.push(responder);
  return responder;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

describe('mDNS probe', () => {
  it('reads the names, service types, instances and TXT a host advertises, asking it alone by unicast', async () => {
    const responder = await track(mdnsResponder(HOST, NAS, { withAdditionals: ['_http._tcp.local'] }));
    const connects = vi.spyOn(dgram.Socket.prototype, 'connect');
    const sends = vi.spyOn(dgram.Socket.prototype, 'send');
    const joins = vi.spyOn(dgram.Socket.prototype, 'addMembership');
    const result = await probeMdns(HOST, { port: responder.port, timeoutMs: 3000 });
    // The probe's socket is connected to the host's port (the kernel sends nowhere else); no
    // datagram addressed to a group, no group joined.
    const connected = connects.mock.calls.map((args) => [args[0], args[1]]);
    const destinations = sends.mock.calls.flatMap((args) => args.filter((a): a is string => typeof a === 'string'));
    const joined = joins.mock.calls.length;
    connects.mockRestore();
    sends.mockRestore();
    joins.mockRestore();
    expect(connected).toEqual([[responder.port, HOST]]);
    expect(destinations.every((d) => d === HOST)).toBe(true);
    expect(joined).toBe(0);
    expect(result).not.toBeNull();
    expect(result!.names).toContain('nas.local');
    expect(result!.services.sort()).toEqual(['_http._tcp', '_smb._tcp']);
    expect(result!.instances.sort()).toEqual(['NAS Web._http._tcp.local', 'NAS._smb._tcp.local']);
    // _device-info's model (asked by the host's name) and a service's TXT keys, lower-case.
    expect(result!.txt).toMatchObject({ model: 'DS920+', vendor: 'Synology Inc.', path: '/webman' });
    // Every query came to the responder's unicast address from an ephemeral port (legacy unicast, not 5353).
    expect(responder.received.length).toBeGreaterThanOrEqual(5);
    for (const { from } of responder.received) {
      expect(from.address).toBe(HOST);
      expect(from.port).not.toBe(5353);
    }
  });

  it('gives the device-info TXT priority over a service TXT with the same key', async () => {
    const records: Answer[] = [
      { name: '_services._dns-sd._udp.local', type: 'PTR', data: '_airplay._tcp.local' },
      { name: '_airplay._tcp.local', type: 'PTR', data: 'Living Room._airplay._tcp.local' },
      { name: 'Living Room._airplay._tcp.local', type: 'TXT', data: ['model=AppleTV-service', 'features=0x5A7FFFF7'] },
      { name: 'Living Room._airplay._tcp.local', type: 'SRV', data: { target: 'living-room.local', port: 7000 } },
      { name: 'living room._device-info._tcp.local', type: 'TXT', data: ['model=AppleTV6,2'] },
    ];
    const responder = await track(mdnsResponder(HOST, records));
    const result = await probeMdns(HOST, { port: responder.port, timeoutMs: 3000 });
    expect(result!.txt.model).toBe('AppleTV6,2');
    expect(result!.txt.features).toBe('0x5A7FFFF7');
    expect(result!.names).toEqual(['living-room.local']);
  });

  it('keeps within its caps when a host advertises far too much', async () => {
    const flood: Answer[] = [];
    for (let i = 0; i < 100; i++) {
      flood.push({ name: '_services._dns-sd._udp.local', type: 'PTR', data: `_svc${i}._tcp.local` });
      flood.push({ name: `_svc${i}._tcp.local`, type: 'PTR', data: `Instance ${i}._svc${i}._tcp.local` });
      flood.push({ name: `Instance ${i}._svc${i}._tcp.local`, type: 'TXT', data: [`key${i}=${'v'.repeat(200)}`] });
    }
    for (let i = 0; i < 40; i++) flood.push({ name: '1.0.0.127.in-addr.arpa', type: 'PTR', data: `name${i}.local` });
    const responder = await track(mdnsResponder(HOST, flood, { firstQuestionOnly: false }));
    const started = Date.now();
    const result = await probeMdns(HOST, { port: responder.port, timeoutMs: 2000 });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(result!.services).toHaveLength(32);
    expect(result!.names).toHaveLength(16);
    expect(result!.instances.length).toBeLessThanOrEqual(64);
    expect(Object.keys(result!.txt).length).toBeLessThanOrEqual(128);
    // The probe asked each service type once and at most 24 instances' SRV and TXT, not all 100.
    expect(responder.received.length).toBeLessThanOrEqual(3 + 32 + 24 * 2 + 8);
  });

  it('returns null when nothing answers, within its time', async () => {
    const silent = await track(udpResponder(HOST, () => {}));
    const started = Date.now();
    expect(await probeMdns(HOST, { port: silent.port, timeoutMs: 400 })).toBeNull();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(silent.received.length).toBeGreaterThan(0);
  });

  it('stops at once when the host says nothing listens on the port', async () => {
    const closed = await track(udpResponder(HOST, () => {}));
    await closed.close();
    open.pop();
    const started = Date.now();
    expect(await probeMdns(HOST, { port: closed.port, timeoutMs: 5000 })).toBeNull();
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('stops at once when cancelled', async () => {
    const silent = await track(udpResponder(HOST, () => {}));
    const controller = new AbortController();
    const started = Date.now();
    const pending = probeMdns(HOST, { port: silent.port, timeoutMs: 20_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toBeNull();
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('ignores answers sent from another address than the host asked', async () => {
    const other = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => other.bind(0, '127.0.0.3', resolve));
    try {
      // Asked on 127.0.0.1; the "answer" comes from 127.0.0.3: a spoofed or stray reply.
      const relay = await track(
        udpResponder('127.0.0.1', (msg, _reply, from) => {
          const fake = Buffer.from(msg);
          fake[2] = 0x84; // QR + AA: a response carrying the question back
          other.send(fake, from.port, from.address);
        }),
      );
      expect(await probeMdns('127.0.0.1', { port: relay.port, timeoutMs: 500 })).toBeNull();
    } finally {
      other.close();
    }
  });

  it('survives garbage and oversized answers without throwing', async () => {
    const garbage = await track(
      udpResponder(HOST, (_msg, reply) => {
        reply(Buffer.from('not a DNS packet at all'));
        reply(Buffer.alloc(60_000, 0xff));
      }),
    );
    expect(await probeMdns(HOST, { port: garbage.port, timeoutMs: 500 })).toBeNull();
  });

  it('refuses to address the broadcast address', async () => {
    // The refusal is decided before any socket exists (isUnicastHost), so a group is checked there
    // and never handed to the probe itself.
    // (A pure predicate: nothing is sent to the address in this assertion.)
    expect(isUnicastHost('255.255.255.255')).toBe(false);
    expect(await probeMdns('not-an-ip', { timeoutMs: 200 })).toBeNull();
  });

  it('names the reverse-lookup record of an address', () => {
    expect(reverseName('192.168.1.20')).toBe('20.1.168.192.in-addr.arpa');
    expect(reverseName('fe80::1')).toBe(`1.${'0.'.repeat(27)}0.8.e.f.ip6.arpa`);
  });
});
