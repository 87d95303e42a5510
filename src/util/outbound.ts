/**
 * Where the service's own outbound requests may go (notification deliveries and the channel test,
 * name sources, the update check): anywhere a user configured, except addresses that reach this
 * machine or its cloud provider rather than the network: loopback (127.0.0.0/8, ::1), link-local
 * (169.254.0.0/16 with the cloud metadata address 169.254.169.254, fe80::/10) and unspecified
 * (0.0.0.0/8, ::). Those are refused unless the administrator lists them in
 * NETWARDEN_OUTBOUND_ALLOW (comma-separated CIDRs; the API cannot change it).
 *
 * The check is made on the address actually connected to: an IP literal before connecting, a name
 * through the lookup the socket itself uses (`lookup` below), so a name that resolves to a refused
 * address (or changes between a check and the connection) cannot get past it.
 */
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { NetwardenError } from './errors.js';

export const OUTBOUND_ALLOW_VARIABLE = 'NETWARDEN_OUTBOUND_ALLOW';

/** Ranges refused unless allowed, with the word a refusal uses. */
const REFUSED: readonly { cidr: string; what: string }[] = [
  { cidr: '127.0.0.0/8', what: 'loopback' },
  { cidr: '169.254.0.0/16', what: 'link-local (cloud metadata)' },
  { cidr: '0.0.0.0/8', what: 'unspecified' },
  { cidr: '::1/128', what: 'loopback' },
  { cidr: 'fe80::/10', what: 'link-local' },
  { cidr: '::/128', what: 'unspecified' },
];

/** Why a destination was refused: a short sentence naming the address and the way to allow it. */
export class OutboundRefusedError extends NetwardenError {
  readonly code = 'NW_OUTBOUND_REFUSED';

  constructor(
    readonly address: string,
    what: string,
  ) {
    super(`${address} is a ${what} address, which outbound requests may not reach unless ${OUTBOUND_ALLOW_VARIABLE} allows it`);
  }
}

export type CidrParse = { ok: true; cidrs: string[] } | { ok: false; error: string };

/** `127.0.0.0/8, ::1/128` as a checked list; a bare address counts as a single host. */
export function parseAllowList(text: string): CidrParse {
  const cidrs: string[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const max = family === 6 ? 128 : 32;
    const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
    if (family === 0 || extra !== undefined || !(prefix >= 0 && prefix <= max)) {
      return { ok: false, error: `'${entry}' is not an IPv4 or IPv6 CIDR block such as 127.0.0.0/8 or ::1/128` };
    }
    cidrs.push(`${address}/${prefix}`);
  }
  return { ok: true, cidrs };
}

/** The allowance from the environment: null when unset; a malformed value throws naming the variable. */
export function outboundAllowFromEnvironment(env: Readonly<Record<string, string | undefined>>): string[] | null {
  const text = env[OUTBOUND_ALLOW_VARIABLE];
  if (text === undefined || text.trim() === '') return null;
  const parsed = parseAllowList(text);
  if (!parsed.ok) throw new Error(`${OUTBOUND_ALLOW_VARIABLE}: ${parsed.error}`);
  return parsed.cidrs;
}

function blockListOf(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address, bits] = cidr.split('/');
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    list.addSubnet(address, Number(bits ?? (type === 'ipv6' ? 128 : 32)), type);
  }
  return list;
}

function mappedIpv4(address: string): string | null {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (dotted) return dotted[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return null;
  const high = parseInt(hex[1], 16);
  const low = parseInt(hex[2], 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

const refusedLists = REFUSED.map((r) => ({ ...r, list: blockListOf([r.cidr]) }));

/** The rule one process applies; `allowed` are the refused ranges an administrator let through. */
export class OutboundGuard {
  private readonly allowed: BlockList;

  constructor(readonly allowedCidrs: readonly string[] = []) {
    this.allowed = blockListOf(allowedCidrs);
  }

  /** From NETWARDEN_OUTBOUND_ALLOW as config/environment.ts reads it (nothing allowed when unset). */
  static fromEnvironment(env: Readonly<Record<string, string | undefined>>): OutboundGuard {
    return new OutboundGuard(outboundAllowFromEnvironment(env) ?? []);
  }

  /** Throws OutboundRefusedError when `address` (an IP) may not be reached. */
  check(address: string): void {
    const bare = address.replace(/^\[|\]$/g, '');
    let family = isIP(bare);
    if (family === 0) return;
    // An IPv4-mapped IPv6 address (::ffff:127.0.0.1, or ::ffff:7f00:1 as a URL writes it) reaches the IPv4 address.
    const mapped = mappedIpv4(bare);
    const ip = mapped ?? bare;
    if (mapped) family = 4;
    const type = family === 6 ? 'ipv6' : 'ipv4';
    const refused = refusedLists.find((r) => r.list.check(ip, type));
    if (refused && !this.allowed.check(ip, type)) throw new OutboundRefusedError(ip, refused.what);
  }

  /** Checks a URL's host when it is an IP literal (a name is checked by `lookup` when connecting). */
  checkUrl(url: URL): void {
    this.check(url.hostname);
  }

  /** A drop-in for dns.lookup that refuses what `check` refuses, for net/http/tls `lookup` options. */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, options, (err, address: string | LookupAddress[], family?: number) => {
      if (err) return callback(err, '', family);
      try {
        for (const entry of Array.isArray(address) ? address : [{ address }]) this.check(entry.address);
      } catch (refusal) {
        return callback(refusal as NodeJS.ErrnoException, '', 0);
      }
      (callback as (e: null, a: string | LookupAddress[], f?: number) => void)(null, address, family);
    });
  };

  /**
   * Resolves `host` and returns one address this guard allows (for clients that cannot take a
   * `lookup`, e.g. SMTP and MQTT libraries: they connect to the address returned, so what was
   * checked is what is reached). Throws OutboundRefusedError, or the resolver's error.
   */
  async resolve(host: string): Promise<string> {
    const bare = host.replace(/^\[|\]$/g, '');
    if (isIP(bare)) {
      this.check(bare);
      return bare;
    }
    const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
      dnsLookup(bare, { all: true }, (err, list) => (err ? reject(err) : resolve(list))),
    );
    for (const entry of addresses) this.check(entry.address);
    if (addresses.length === 0) throw new Error(`${bare}: no address`);
    return addresses[0].address;
  }
}
