/**
 * Where the ranking of frequent TCP ports comes from (`scanning.top_ports`): the installed nmap's
 * `nmap-services` file when there is one, else core's built-in list. The file is read once and
 * read again only when it changes (nmap upgraded); core/top-ports.ts parses it.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { BUILTIN_FREQUENT_PORTS, parseNmapServices } from '../core/top-ports.js';

export interface PortRanking {
  /** TCP ports, most frequent first. */
  ports: readonly number[];
  /** The nmap-services file read, or `builtin`. */
  source: string;
}

/**
 * Where nmap keeps its data files: `$NMAPDIR`, beside the binary NETWARDEN_NMAP_PATH names
 * (`<prefix>/bin/nmap` → `<prefix>/share/nmap`), then the usual install locations. The two
 * variables are read by config/environment.ts and passed in (the scan engines hold them).
 */
export function nmapServicesCandidates(env: { NMAPDIR?: string; NETWARDEN_NMAP_PATH?: string } = {}): string[] {
  const dirs: string[] = [];
  if (env.NMAPDIR) dirs.push(env.NMAPDIR);
  const binary = env.NETWARDEN_NMAP_PATH;
  if (binary && isAbsolute(binary)) dirs.push(join(dirname(dirname(binary)), 'share', 'nmap'));
  dirs.push('/usr/share/nmap', '/usr/local/share/nmap', '/opt/homebrew/share/nmap', '/opt/local/share/nmap');
  return dirs.map((d) => join(d, 'nmap-services'));
}

let cached: { path: string; mtimeMs: number; size: number; ranking: PortRanking } | undefined;

/** The ranking from the first readable nmap-services file among `candidates` that lists TCP ports; the built-in one otherwise. */
export function frequentTcpPorts(candidates: readonly string[] = nmapServicesCandidates()): PortRanking {
  for (const path of candidates) {
    let stat;
    try {
      stat = statSync(path);
    } catch {
      continue;
    }
    if (!stat.isFile()) continue;
    if (cached && cached.path === path && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) return cached.ranking;
    let ports: number[];
    try {
      ports = parseNmapServices(readFileSync(path, 'latin1'));
    } catch {
      continue;
    }
    if (ports.length === 0) continue;
    const ranking = { ports, source: path };
    cached = { path, mtimeMs: stat.mtimeMs, size: stat.size, ranking };
    return ranking;
  }
  return BUILTIN;
}

const BUILTIN: PortRanking = { ports: BUILTIN_FREQUENT_PORTS, source: 'builtin' };
