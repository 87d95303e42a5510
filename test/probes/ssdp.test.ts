/**
 * The SSDP probe against a real responder on loopback and a real HTTP server serving the device
 * description: the unicast M-SEARCH answer's headers and the description's fields come back; a
 * LOCATION on another host is never fetched; oversized or hostile descriptions, silence and
 * cancel give what is safe (or null), never an exception.
 */
import dgram from 'node:dgram';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { descriptionUrl, parseDescription, probeSsdp } from '../../src/probes/ssdp.js';
import { assertLoopback, freeUdpPort, ssdpResponder, udpResponder, type UdpResponder } from './responders.js';

const HOST = '127.0.0.1';

const DESCRIPTION = `<?xml version="1.0"?>
<root xmlns="urn:schemas-upnp-org:device-1-0">
  <specVersion><major>1</major><minor>0</minor></specVersion>
  <device>
    <deviceType>urn:schemas-upnp-org:device:MediaRenderer:1</deviceType>
    <friendlyName>Living Room &amp; Kitchen</friendlyName>
    <manufacturer>Sonos, Inc.</manufacturer>
    <modelName>Sonos One</modelName>
    <modelNumber>S18</modelNumber>
    <UDN>uuid:RINCON_48A6B8000001400</UDN>
    <deviceList><device><friendlyName>embedded</friendlyName></device></deviceList>
  </device>
</root>`;

interface DescriptionServer {
  port: number;
  requests: string[];
  close(): Promise<void>;
}

function descriptionServer(host: string, body: string | Buffer): Promise<DescriptionServer> {
  assertLoopback(host);
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    res.setHeader('Content-Type', 'text/xml');
    res.end(body);
  });
  return new Promise((resolve) =>
    server.listen(0, host, () =>
      resolve({
        port: (server.address() as AddressInfo).port,
        requests,
        close: () => new Promise<void>((done) => server.close(() => done())),
      }),
    ),
  );
}

const closers: (() => Promise<void>)[] = [];
async function track<T extends UdpResponder | DescriptionServer>(p: Promise<T>): Promise<T> {
  const value = await p;
  closers.push(() => value.close());
  return value;
}
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

describe('SSDP probe', () => {
  it('reads the search answer and the device description on the host itself, by unicast only', async () => {
    const desc = await track(descriptionServer(HOST, DESCRIPTION));
    const location = `http://${HOST}:${desc.port}/desc.xml`;
    const responder = await track(
      ssdpResponder(HOST, { LOCATION: location, SERVER: 'Linux UPnP/1.0 Sonos/70.3', USN: 'uuid:RINCON_48A6B8000001400::upnp:rootdevice' }),
    );
    const sends = vi.spyOn(dgram.Socket.prototype, 'send');
    const result = await probeSsdp(HOST, { port: responder.port, timeoutMs: 3000 });
    const destinations = sends.mock.calls.flatMap((args) => args.filter((a): a is string => typeof a === 'string'));
    sends.mockRestore();
    expect(result).toEqual({
      location,
      server: 'Linux UPnP/1.0 Sonos/70.3',
      friendlyName: 'Living Room & Kitchen',
      manufacturer: 'Sonos, Inc.',
      modelName: 'Sonos One',
      modelNumber: 'S18',
      udn: 'uuid:RINCON_48A6B8000001400',
      deviceType: 'urn:schemas-upnp-org:device:MediaRenderer:1',
    });
    expect(desc.requests).toEqual(['/desc.xml']);
    // The M-SEARCH went to the host's address and port, never to the SSDP group.
    const search = responder.received[0].msg.toString('latin1');
    expect(search).toContain(`HOST: ${HOST}:${responder.port}`);
    expect(search).toContain('MAN: "ssdp:discover"');
    expect(new Set(destinations)).toEqual(new Set([HOST]));
  });

  it('accepts an answer from another port of the host (devices answer from a socket of their own)', async () => {
    const other = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => other.bind(0, HOST, resolve));
    try {
      const responder = await track(
        udpResponder(HOST, (_msg, _reply, from) => {
          other.send(
            Buffer.from('HTTP/1.1 200 OK\r\nSERVER: Roku/12.0 UPnP/1.0\r\nUSN: uuid:roku-1::upnp:rootdevice\r\n\r\n'),
            from.port,
            from.address,
          );
        }),
      );
      expect(await probeSsdp(HOST, { port: responder.port, timeoutMs: 500 })).toMatchObject({
        server: 'Roku/12.0 UPnP/1.0',
        udn: 'uuid:roku-1',
        location: null,
      });
    } finally {
      other.close();
    }
  });

  it('never follows a LOCATION on another host', async () => {
    const elsewhere = await track(descriptionServer('127.0.0.2', DESCRIPTION));
    const location = `http://127.0.0.2:${elsewhere.port}/desc.xml`;
    const responder = await track(ssdpResponder(HOST, { LOCATION: location, SERVER: 'miniupnpd/2.2', USN: 'uuid:abc-123::upnp:rootdevice' }));
    const result = await probeSsdp(HOST, { port: responder.port, timeoutMs: 1500 });
    expect(result).toMatchObject({ location, server: 'miniupnpd/2.2', friendlyName: null, modelName: null, udn: 'uuid:abc-123' });
    expect(elsewhere.requests).toEqual([]);
  });

  it('reads no entity declared in the description (no expansion) and no description over the cap', async () => {
    const bomb = `<?xml version="1.0"?><!DOCTYPE root [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>
<root><device><friendlyName>&b;&b;</friendlyName><modelName>Box</modelName></device></root>`;
    const desc = await track(descriptionServer(HOST, bomb));
    const responder = await track(ssdpResponder(HOST, { LOCATION: `http://${HOST}:${desc.port}/d.xml` }));
    const result = await probeSsdp(HOST, { port: responder.port, timeoutMs: 2000 });
    expect(result?.modelName).toBe('Box');
    expect(result?.friendlyName ?? '').not.toContain('aaaaaaaaaa');

    const huge = await track(descriptionServer(HOST, `<root><device><modelName>Big</modelName>${' '.repeat(2 * 1024 * 1024)}</device></root>`));
    const responder2 = await track(ssdpResponder(HOST, { LOCATION: `http://${HOST}:${huge.port}/d.xml` }));
    const result2 = await probeSsdp(HOST, { port: responder2.port, timeoutMs: 2000 });
    expect(result2).toMatchObject({ location: `http://${HOST}:${huge.port}/d.xml`, modelName: null });
  });

  it('stops at once when the host says nothing listens on the port', async () => {
    const port = await freeUdpPort(HOST);
    const started = Date.now();
    expect(await probeSsdp(HOST, { port, timeoutMs: 5000 })).toBeNull();
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('returns null on silence, garbage or cancel, promptly', async () => {
    const silent = await track(udpResponder(HOST, () => {}));
    const started = Date.now();
    expect(await probeSsdp(HOST, { port: silent.port, timeoutMs: 300 })).toBeNull();
    expect(Date.now() - started).toBeLessThan(2000);

    const garbage = await track(
      udpResponder(HOST, (_msg, reply) => {
        reply(Buffer.from('HTTP/1.1 404 Not Found\r\n\r\n'));
        reply(Buffer.alloc(30_000, 0x41));
        reply(Buffer.from([0, 1, 2, 3]));
      }),
    );
    expect(await probeSsdp(HOST, { port: garbage.port, timeoutMs: 300 })).toBeNull();

    const controller = new AbortController();
    const cancelStart = Date.now();
    const pending = probeSsdp(HOST, { port: silent.port, timeoutMs: 20_000, signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toBeNull();
    expect(Date.now() - cancelStart).toBeLessThan(2000);
  });

  it('accepts a description URL only on the probed host, over http(s), without credentials', () => {
    expect(descriptionUrl('http://10.0.0.5:49152/rootDesc.xml', '10.0.0.5')?.port).toBe('49152');
    expect(descriptionUrl('http://10.0.0.6:49152/rootDesc.xml', '10.0.0.5')).toBeNull();
    expect(descriptionUrl('http://evil.example/rootDesc.xml', '10.0.0.5')).toBeNull();
    expect(descriptionUrl('file:///etc/passwd', '10.0.0.5')).toBeNull();
    expect(descriptionUrl('http://u:p@10.0.0.5/d.xml', '10.0.0.5')).toBeNull();
    expect(descriptionUrl('not a url', '10.0.0.5')).toBeNull();
  });

  it('reads nothing from XML that is not a device description', () => {
    for (const xml of ['', '<<<', '<root><device>text</device></root>', '<root><device><modelName><b>x</b></modelName></device></root>']) {
      expect(parseDescription(xml)).toMatchObject({ modelName: null, friendlyName: null });
    }
  });
});
