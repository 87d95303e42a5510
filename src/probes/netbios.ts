/**
 * NetBIOS name service node status (NBSTAT, RFC 1002 §4.2.17–18), unicast to the host's UDP 137:
 * the names it has registered (the workstation's own, its workgroup or domain) and the MAC it
 * reports. The answer is parsed field by field against its own length: a short, long or odd answer
 * gives what it holds, or null.
 */
import { randomInt } from 'node:crypto';
import type { NetbiosResult } from '../core/probe-results.js';
import { deadlineSignal, portOf, quietly, timeoutOf, UdpPeer, type ProbeOptions } from './common.js';
import { cleanText } from './text.js';

export const NETBIOS_PORT = 137;

/** A status answer lists at most 255 names of 18 bytes, plus headers and statistics: well under 8 KiB. */
const MAX_ANSWER_BYTES = 8 * 1024;

const NBSTAT = 0x21;
const GROUP_FLAG = 0x8000;

/** The wildcard name `*` in first-level encoding: each nibble of the 16 padded bytes as 'A' + nibble. */
function encodedWildcard(): Buffer {
  const raw = Buffer.alloc(16, 0);
  raw[0] = 0x2a;
  const out = Buffer.alloc(34);
  out[0] = 32;
  for (let i = 0; i < 16; i++) {
    out[1 + i * 2] = 0x41 + (raw[i] >> 4);
    out[2 + i * 2] = 0x41 + (raw[i] & 0x0f);
  }
  out[33] = 0;
  return out;
}

export function nbstatRequest(id: number): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id & 0xffff, 0);
  header.writeUInt16BE(0x0000, 2); // a query, no recursion: node status is asked of the node itself
  header.writeUInt16BE(1, 4); // one question
  const tail = Buffer.alloc(4);
  tail.writeUInt16BE(NBSTAT, 0);
  tail.writeUInt16BE(1, 2); // class IN
  return Buffer.concat([header, encodedWildcard(), tail]);
}

/** Skips a (possibly compressed) DNS-style name; the offset after it, or -1 when it runs off the end. */
function skipName(buf: Buffer, offset: number): number {
  for (let guard = 0; guard < 64 && offset < buf.length; guard++) {
    const len = buf[offset];
    if (len === 0) return offset + 1;
    if ((len & 0xc0) === 0xc0) return offset + 2 <= buf.length ? offset + 2 : -1;
    offset += 1 + len;
  }
  return -1;
}

export interface NbstatName {
  name: string;
  suffix: number;
  group: boolean;
}

/** The names and MAC of a node status answer; null when it is not one. */
export function parseNbstat(buf: Buffer, expectedId?: number): { names: NbstatName[]; mac: string | null } | null {
  if (buf.length < 12) return null;
  if (expectedId !== undefined && buf.readUInt16BE(0) !== (expectedId & 0xffff)) return null;
  if ((buf.readUInt16BE(2) & 0x8000) === 0) return null; // not a response
  if (buf.readUInt16BE(6) < 1) return null; // no answer record
  let offset = 12;
  // A response may echo the question (QDCOUNT); skip it.
  for (let q = buf.readUInt16BE(4); q > 0; q--) {
    offset = skipName(buf, offset);
    if (offset < 0 || offset + 4 > buf.length) return null;
    offset += 4;
  }
  offset = skipName(buf, offset);
  if (offset < 0 || offset + 10 > buf.length) return null;
  if (buf.readUInt16BE(offset) !== NBSTAT) return null;
  const rdLength = buf.readUInt16BE(offset + 8);
  offset += 10;
  const end = Math.min(buf.length, offset + rdLength);
  if (offset >= end) return null;
  const count = buf[offset++];
  const names: NbstatName[] = [];
  for (let i = 0; i < count && offset + 18 <= end; i++, offset += 18) {
    const name = cleanText(buf.subarray(offset, offset + 15).toString('latin1'), 15);
    const suffix = buf[offset + 15];
    const flags = buf.readUInt16BE(offset + 16);
    if (name) names.push({ name, suffix, group: (flags & GROUP_FLAG) !== 0 });
  }
  let mac: string | null = null;
  if (names.length === count && offset + 6 <= end) {
    const bytes = buf.subarray(offset, offset + 6);
    if (bytes.some((b) => b !== 0)) mac = [...bytes].map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':');
  }
  return { names, mac };
}

/** The workstation name (unique, suffix 0x00 or 0x20) and the workgroup (group, suffix 0x00). */
export function nbstatResult(parsed: { names: NbstatName[]; mac: string | null }): NetbiosResult | null {
  const own =
    parsed.names.find((n) => !n.group && n.suffix === 0x00) ??
    parsed.names.find((n) => !n.group && n.suffix === 0x20) ??
    parsed.names.find((n) => !n.group && n.name !== '__MSBROWSE__');
  if (!own) return null;
  const workgroup = parsed.names.find((n) => n.group && n.suffix === 0x00 && n.name !== '__MSBROWSE__');
  return { name: own.name, workgroup: workgroup?.name ?? null, mac: parsed.mac };
}

export async function probeNetbios(host: string, options: ProbeOptions = {}): Promise<NetbiosResult | null> {
  return quietly(() => run(host, options));
}

async function run(host: string, options: ProbeOptions): Promise<NetbiosResult | null> {
  const port = portOf(options, NETBIOS_PORT);
  const signal = deadlineSignal(options);
  const peer = await UdpPeer.open(host, port, { maxBytes: MAX_ANSWER_BYTES, maxMessages: 8 });
  if (!peer) return null;
  try {
    const id = randomInt(1, 0xffff);
    const request = nbstatRequest(id);
    peer.send(request);
    let resent = false;
    const firstWait = Math.min(400, timeoutOf(options) / 3);
    while (!signal.aborted) {
      // One resend after a short wait: UDP may lose the first.
      const datagram = await peer.next(resent ? 60_000 : firstWait, signal);
      if (!datagram) {
        if (resent || signal.aborted) break;
        resent = true;
        peer.send(request);
        continue;
      }
      const parsed = parseNbstat(datagram, id);
      if (parsed) return nbstatResult(parsed);
    }
    return null;
  } finally {
    peer.close();
  }
}
