/**
 * A DHCP server's lease file read from a path (dnsmasq, ISC dhcpd or Kea; the formats are parsed by
 * core/lease-files.ts). Only read, never written; a file that is missing, unreadable, too large or
 * in none of the formats is an error saying so.
 */
import { readFile, stat } from 'node:fs/promises';
import { parseLeaseFile } from '../core/lease-files.js';
import type { Settings } from '../core/settings.js';
import { NameSourceError } from './http.js';
import type { NameRecord, SourceContext } from './types.js';

type Config = Pick<Settings['name_sources']['dhcp_leases'], 'path' | 'format'>;

/** Largest lease file read (a busy ISC server's file before it is rewritten can reach a few MiB). */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

export async function readLeaseFile(config: Config, ctx: Pick<SourceContext, 'signal'>): Promise<NameRecord[]> {
  let text: string;
  try {
    const info = await stat(config.path);
    if (!info.isFile()) throw new NameSourceError(`${config.path} is not a file`);
    if (info.size > MAX_FILE_BYTES) throw new NameSourceError(`${config.path} is larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB`);
    text = await readFile(config.path, { encoding: 'utf8', signal: ctx.signal });
  } catch (err) {
    if (err instanceof NameSourceError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new NameSourceError(`no file at ${config.path}`);
    if (code === 'EACCES' || code === 'EPERM') throw new NameSourceError(`${config.path} is not readable by this service (permissions)`);
    throw new NameSourceError(`could not read ${config.path}: ${code ?? (err as Error).message}`);
  }
  const parsed = parseLeaseFile(text, config.format);
  if (parsed.leases.length === 0 && parsed.skipped > 0) {
    throw new NameSourceError(
      `${config.path} is not a ${config.format === 'auto' ? 'dnsmasq, ISC dhcpd or Kea' : config.format} lease file (${parsed.skipped} entries unreadable)`,
    );
  }
  return parsed.leases.map((l) => ({ ...l, source: 'dhcp_leases' as const }));
}
