/**
 * SSDP / UPnP, asked by unicast: an M-SEARCH sent straight to the host's UDP 1900 (UPnP 1.1
 * allows a unicast search; its HOST names the device, not the SSDP multicast group, which is
 * never addressed), then the device description its LOCATION points to, fetched only when that
 * URL is on the probed host itself (a description elsewhere is someone else's, and following it
 * would send traffic where the scan was not asked to go). The XML is read without entity
 * expansion, up to a cap: friendlyName, manufacturer, modelName, modelNumber, UDN, deviceType.
 */
import { isIP } from 'node:net';
import { XMLParser } from 'fast-xml-parser';
import type { SsdpResult } from '../core/probe-results.js';
import { deadlineSignal, portOf, quietly, UdpPeer, type ProbeOptions } from './common.js';
import { fetchBounded } from './fetch.js';
import { cleanText, decodeEntities } from './text.js';

export const SSDP_PORT = 1900;

/** One SSDP answer is a few hundred bytes of headers; more is not an answer. */
const MAX_ANSWER_BYTES = 8 * 1024;
/** Device descriptions are a few KiB; a big one with many embedded devices stays far below this. */
const MAX_DESCRIPTION_BYTES = 256 * 1024;

const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  parseTagValue: false,
  processEntities: false,
  htmlEntities: false,
  trimValues: true,
});

function searchRequest(host: string, port: number, target: string): Buffer {
  const authority = isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
  return Buffer.from(
    `M-SEARCH * HTTP/1.1\r\nHOST: ${authority}\r\nMAN: "ssdp:discover"\r\nMX: 1\r\nST: ${target}\r\nUSER-AGENT: Netwarden UPnP/1.1\r\n\r\n`,
    'latin1',
  );
}

/** The headers of an SSDP answer (`HTTP/1.1 200 OK`), names lower-case; null when it is not one. */
export function parseSsdpAnswer(datagram: Buffer): Map<string, string> | null {
  const lines = datagram.toString('latin1').split(/\r?\n/);
  if (!/^HTTP\/1\.[01] 200\b/i.test(lines[0] ?? '')) return null;
  const headers = new Map<string, string>();
  for (const line of lines.slice(1, 64)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return headers;
}

/** LOCATION as a URL when it is http(s) on the probed host itself; null otherwise. */
export function descriptionUrl(location: string | null, host: string): URL | null {
  if (!location) return null;
  try {
    const url = new URL(location);
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    if (url.username || url.password) return null;
    return hostname === host ? url : null;
  } catch {
    return null;
  }
}

type Node = Record<string, unknown>;

function field(node: Node | undefined, name: string): string | null {
  const value = node?.[name];
  if (typeof value === 'string' || typeof value === 'number') return cleanText(decodeEntities(String(value)));
  return null;
}

/** The root device's fields of a UPnP device description. */
export function parseDescription(
  xml: string,
): Pick<SsdpResult, 'friendlyName' | 'manufacturer' | 'modelName' | 'modelNumber' | 'udn' | 'deviceType'> {
  let device: Node | undefined;
  try {
    const doc = parser.parse(xml) as Node;
    const root = doc.root as Node | undefined;
    const found = root && typeof root === 'object' ? root.device : undefined;
    device = (Array.isArray(found) ? found[0] : found) as Node | undefined;
    if (device && typeof device !== 'object') device = undefined;
  } catch {
    device = undefined;
  }
  return {
    friendlyName: field(device, 'friendlyName'),
    manufacturer: field(device, 'manufacturer'),
    modelName: field(device, 'modelName'),
    modelNumber: field(device, 'modelNumber'),
    udn: field(device, 'UDN'),
    deviceType: field(device, 'deviceType'),
  };
}

export async function probeSsdp(host: string, options: ProbeOptions = {}): Promise<SsdpResult | null> {
  return quietly(() => run(host, options));
}

async function run(host: string, options: ProbeOptions): Promise<SsdpResult | null> {
  const port = portOf(options, SSDP_PORT);
  const signal = deadlineSignal(options);
  // Devices often answer a search from another socket than their 1900 one: any port of the host's address.
  const peer = await UdpPeer.open(host, port, { maxBytes: MAX_ANSWER_BYTES, maxMessages: 32, anySourcePort: true });
  if (!peer) return null;
  let answer: Map<string, string> | null = null;
  try {
    // The root device's answer carries the description's LOCATION; ssdp:all for devices that
    // answer only that. Sent twice: UDP may lose one, and it costs two small datagrams.
    for (const target of ['upnp:rootdevice', 'ssdp:all', 'upnp:rootdevice']) peer.send(searchRequest(host, port, target));
    while (!signal.aborted) {
      const datagram = await peer.next(60_000, signal);
      if (!datagram) break;
      const headers = parseSsdpAnswer(datagram);
      if (!headers) continue;
      if (!answer || (!answer.get('location') && headers.get('location'))) answer = headers;
      if (answer.get('location')) break;
    }
  } finally {
    peer.close();
  }
  if (!answer) return null;
  const location = cleanText(answer.get('location'), 2048);
  const result: SsdpResult = {
    location,
    server: cleanText(answer.get('server')),
    friendlyName: null,
    manufacturer: null,
    modelName: null,
    modelNumber: null,
    udn: null,
    deviceType: null,
  };
  const url = descriptionUrl(location, host);
  if (url && !signal.aborted) {
    const fetched = await fetchBounded(url, { signal, maxBytes: MAX_DESCRIPTION_BYTES });
    if (fetched && fetched.status === 200 && !fetched.truncated) Object.assign(result, parseDescription(fetched.body.toString('utf8')));
  }
  // The USN names the device too (`uuid:…::upnp:rootdevice`) when the description could not be read.
  if (!result.udn) {
    const usn = /^(uuid:[^:\s]+)/i.exec(answer.get('usn') ?? '');
    if (usn) result.udn = cleanText(usn[1]);
  }
  return result;
}
