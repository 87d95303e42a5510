/**
 * The NetBIOS probe against a real node-status responder on loopback: the workstation name, the
 * workgroup and the MAC come back; a cut, garbage or foreign answer never throws; silence and
 * cancel give null promptly.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { nbstatRequest, parseNbstat, probeNetbios } from '../../src/probes/netbios.js';
import { freeUdpPort, nbstatAnswer, netbiosResponder, udpResponder, type NbName, type UdpResponder } from './responders.js';

const HOST = '127.0.0.1';
const MAC = Buffer.from([0x00, 0x11, 0x32, 0xab, 0xcd, 0xef]);
const NAMES: NbName[] = [
  { name: 'DISKSTATION', suffix: 0x00 },
  { name: 'DISKSTATION', suffix: 0x03 },
  { name: 'DISKSTATION', suffix: 0x20 },
  { name: '__MSBROWSE__', suffix: 0x01, group: true },
  { name: 'WORKGROUP', suffix: 0x00, group: true },
  { name: 'WORKGROUP', suffix: 0x1e, group: true },
];

const open: UdpResponder[] = [];
async function track(r: Promise<UdpResponder>): Promise<UdpResponder> {
  const responder = await r;
  open.push(responder);
  return responder;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.close()));
});

describe('NetBIOS probe', () => {
  it('reads the name, workgroup and MAC of a node status answer', async () => {
    const responder = await track(netbiosResponder(HOST, NAMES, MAC));
    const result = await probeNetbios(HOST, { port: responder.port, timeoutMs: 2000 });
    expect(result).toEqual({ name: 'DISKSTATION', workgroup: 'WORKGROUP', mac: '00:11:32:AB:CD:EF' });
    // The query asks for the wildcard name's status (type NBSTAT, class IN).
    const query = responder.received[0].msg;
    expect(query.subarray(13, 15).toString('latin1')).toBe('CK'); // '*' (0x2A) in first-level encoding
    expect(query.readUInt16BE(query.length - 4)).toBe(0x21);
  });

  it('reports no MAC when the host says all zeros (Samba does)', async () => {
    const responder = await track(netbiosResponder(HOST, [{ name: 'PRINTER01', suffix: 0x20 }], Buffer.alloc(6)));
    expect(await probeNetbios(HOST, { port: responder.port, timeoutMs: 2000 })).toEqual({ name: 'PRINTER01', workgroup: null, mac: null });
  });

  it('stops at once when the host says nothing listens on the port', async () => {
    const port = await freeUdpPort(HOST);
    const started = Date.now();
    expect(await probeNetbios(HOST, { port, timeoutMs: 5000 })).toBeNull();
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('returns null on silence, garbage and cancel, promptly', async () => {
    const silent = await track(udpResponder(HOST, () => {}));
    const started = Date.now();
    expect(await probeNetbios(HOST, { port: silent.port, timeoutMs: 300 })).toBeNull();
    expect(Date.now() - started).toBeLessThan(2000);
    // Asked again after a short silence (UDP may lose one).
    expect(silent.received.length).toBe(2);

    const garbage = await track(
      udpResponder(HOST, (msg, reply) => {
        reply(Buffer.alloc(7000, 0xff));
        reply(msg.subarray(0, 20));
      }),
    );
    expect(await probeNetbios(HOST, { port: garbage.port, timeoutMs: 300 })).toBeNull();

    const controller = new AbortController();
    const cancelStart = Date.now();
    const pending = probeNetbios(HOST, { port: silent.port, timeoutMs: 20_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toBeNull();
    expect(Date.now() - cancelStart).toBeLessThan(2000);
  });

  it('parses any prefix or corruption of an answer without throwing, reading nothing past its end', () => {
    const answer = nbstatAnswer(nbstatRequest(0x1234), NAMES, MAC);
    expect(parseNbstat(answer, 0x1234)?.names).toHaveLength(NAMES.length);
    expect(parseNbstat(answer, 0x4321)).toBeNull(); // another query's answer
    for (let cut = 0; cut < answer.length; cut++) {
      const parsed = parseNbstat(answer.subarray(0, cut), 0x1234);
      if (parsed) expect(parsed.names.length).toBeLessThanOrEqual(NAMES.length);
    }
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.nat(answer.length - 1), (noise, at) => {
        const corrupt = Buffer.from(answer);
        Buffer.from(noise).copy(corrupt, at);
        expect(() => parseNbstat(corrupt)).not.toThrow();
        expect(() => parseNbstat(Buffer.from(noise))).not.toThrow();
      }),
    );
  });
});
