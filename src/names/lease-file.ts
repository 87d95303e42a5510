/**
 * A DHCP server's lease file read from a path (dnsmasq, ISC dhcpd or Kea; the formats are parsed by
 * core/lease-files.ts). Only read, never written. The path is whatever an API client set, so a
 * failure says one thing whatever the cause (missing, a directory, unreadable, too large, in none
 * of the formats): "not a readable lease file". A different message per cause would let a client
 * probe which files exist on this machine and how large they are.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { parseLeaseFile, type LeaseFileFormat } from '../core/lease-files.js';
import type { Settings } from '../core/settings.js';
import { NameSourceError } from './http.js';
import type { NameRecord, SourceContext } from './types.js';

type Config = Pick<Settings['name_sources']['dhcp_leases'], 'path' | 'format'>;

/** Largest lease file read (a busy ISC server's file before it is rewritten can reach a few MiB). */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

/** The one answer for every failure (see above). */
export function notALeaseFile(format: LeaseFileFormat): string {
  const kind = format === 'auto' ? 'dnsmasq, ISC dhcpd or Kea' : format === 'isc' ? 'ISC dhcpd' : format === 'kea' ? 'Kea' : 'dnsmasq';
  return `not a readable ${kind} lease file (check the path, the format and that this service may read it)`;
}

export async function readLeaseFile(config: Config, ctx: Pick<SourceContext, 'signal'>): Promise<NameRecord[]> {
  const text = await readBounded(config, ctx.signal);
  const parsed = parseLeaseFile(text, config.format);
  if (parsed.leases.length === 0 && parsed.skipped > 0) throw new NameSourceError(notALeaseFile(config.format));
  return parsed.leases.map((l) => ({ ...l, source: 'dhcp_leases' as const }));
}

/** Null when `config.path` is a readable lease file that parses (an empty one included), else the one message. */
export async function leaseFileProblem(config: Config): Promise<string | null> {
  try {
    await readLeaseFile(config, { signal: AbortSignal.timeout(5000) });
    return null;
  } catch {
    return notALeaseFile(config.format);
  }
}

/** The file's text: a regular file, read through one handle (no swap between check and read), at most MAX_FILE_BYTES. */
async function readBounded(config: Config, signal: AbortSignal): Promise<string> {
  try {
    // Non-blocking: opening a FIFO for reading would otherwise wait for a writer for ever.
    const handle = await open(config.path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const info = await handle.stat();
      if (!info.isFile() || info.size > MAX_FILE_BYTES) throw new Error('not a lease file');
      const text = await handle.readFile({ encoding: 'utf8', signal });
      if (text.length > MAX_FILE_BYTES) throw new Error('not a lease file');
      return text;
    } finally {
      await handle.close();
    }
  } catch {
    throw new NameSourceError(notALeaseFile(config.format));
  }
}
