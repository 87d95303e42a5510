/**
 * Real UDP services on loopback for scans to find: a responder that answers every datagram, one
 * that receives and never answers (open|filtered to a scanner), a port nothing is bound to
 * (closed: the kernel answers ICMP port unreachable), and an SNMP agent answering sysDescr.
 */
import dgram from 'node:dgram';

export interface UdpListener {
  host: string;
  port: number;
  /** Datagrams received so far. */
  received: Buffer[];
  close(): Promise<void>;
}

/** A random loopback address of its own (127.x.y.z, z ≥ 2), so parallel test files do not meet. */
export function randomLoopback(): string {
  const byte = (min: number) => min + Math.floor(Math.random() * (250 - min));
  return `127.${byte(10)}.${byte(0)}.${byte(2)}`;
}

/** Binds a UDP socket on `host`:`port` (0: any free port); `answer` returns the reply to a datagram, or null for none. */
export function udpResponder(host: string, answer: (message: Buffer) => Buffer | null, port = 0): Promise<UdpListener> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket('udp4');
    const received: Buffer[] = [];
    socket.on('message', (message, remote) => {
      received.push(message);
      const reply = answer(message);
      if (reply) socket.send(reply, remote.port, remote.address);
    });
    socket.once('error', reject);
    socket.bind(port, host, () => {
      socket.off('error', reject);
      socket.on('error', () => {});
      resolve({
        host,
        port: socket.address().port,
        received,
        close: () => new Promise<void>((done) => socket.close(() => done())),
      });
    });
  });
}

/** Answers every datagram (an empty one too) with `payload`. */
export function echoingUdpResponder(host: string, payload = 'netwarden-test-reply', port = 0): Promise<UdpListener> {
  return udpResponder(host, () => Buffer.from(payload), port);
}

/** Receives and never answers: to a scanner, open|filtered. */
export function silentUdpResponder(host: string, port = 0): Promise<UdpListener> {
  return udpResponder(host, () => null, port);
}

/** A UDP port on `host` that nothing is bound to (bound, then released). */
export async function closedUdpPort(host: string): Promise<number> {
  const l = await silentUdpResponder(host);
  await l.close();
  return l.port;
}

function ber(tag: number, content: Buffer): Buffer {
  if (content.length > 255) throw new Error('BER content too long for this test helper');
  const length = content.length < 0x80 ? Buffer.from([content.length]) : Buffer.from([0x81, content.length]);
  return Buffer.concat([Buffer.from([tag]), length, content]);
}

const SYS_DESCR_OID = Buffer.from([0x2b, 0x06, 0x01, 0x02, 0x01, 0x01, 0x01, 0x00]);

/**
 * An SNMP v1/v2c agent whose read community is `community`: a get or get-next request with it is
 * answered with a GetResponse carrying `sysDescr`; any other datagram is ignored (as real agents do).
 */
export function snmpResponder(host: string, sysDescr: string, community = 'public', port = 161): Promise<UdpListener> {
  return udpResponder(
    host,
    (message) => {
      const at = message.indexOf(Buffer.concat([Buffer.from([0x04, community.length]), Buffer.from(community)]));
      if (message[0] !== 0x30 || at < 0) return null;
      // The request id: the first INTEGER inside the PDU (0xa0) after the community.
      const pdu = at + 2 + community.length;
      // GetRequest (0xa0) or GetNextRequest (0xa1), as nmap's payload for 161 sends.
      if ((message[pdu] !== 0xa0 && message[pdu] !== 0xa1) || message[pdu + 2] !== 0x02) return null;
      const idLength = message[pdu + 3];
      const requestId = message.subarray(pdu + 4, pdu + 4 + idLength);
      const varbind = ber(0x30, Buffer.concat([ber(0x06, SYS_DESCR_OID), ber(0x04, Buffer.from(sysDescr))]));
      const response = ber(0xa2, Buffer.concat([ber(0x02, requestId), ber(0x02, Buffer.from([0])), ber(0x02, Buffer.from([0])), ber(0x30, varbind)]));
      return ber(0x30, Buffer.concat([ber(0x02, Buffer.from([1])), ber(0x04, Buffer.from(community)), response]));
    },
    port,
  );
}
