/**
 * Which Netwarden processes are using a data directory right now. `serve` (and every CLI command
 * that opens the store) leaves a small marker file in `<data dir>/run/` while it runs, so that
 * `netwarden restore` can refuse to replace the data under a live service. A marker whose process
 * has died (killed, crashed) is stale: restore notices that and removes it.
 */
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { nowIso } from './clock.js';
import { processAlive } from '../util/process.js';

export interface RunMarker {
  pid: number;
  hostname: string;
  /** `serve`, or the CLI command (`backup`, `scan`, …). */
  command: string;
  /** The datastore, without credentials. */
  database: string;
  started_at: string;
}

export interface LiveMarker extends RunMarker {
  file: string;
  /**
   * False when the marker was written on another host (or container): whether that process still
   * runs cannot be checked from here, so it counts as running.
   */
  verified: boolean;
}

function markerDir(dataDir: string): string {
  return join(dataDir, 'run');
}

function thisHost(): string {
  return hostname().replace(/[^A-Za-z0-9.-]/g, '_') || 'localhost';
}

/**
 * Records this process as using `dataDir` until it exits (or `release` is called). Throws when the
 * marker cannot be written (read-only data directory); callers decide whether that matters.
 */
export function markRunning(dataDir: string, command: string, database: string): () => void {
  const dir = markerDir(dataDir);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${thisHost()}.${process.pid}.json`);
  const marker: RunMarker = { pid: process.pid, hostname: hostname(), command, database, started_at: nowIso() };
  // Written aside and renamed, so a reader never sees half a marker.
  writeFileSync(`${file}.tmp`, `${JSON.stringify(marker)}\n`);
  renameSync(`${file}.tmp`, file);
  const release = () => {
    process.removeListener('exit', release);
    rmSync(file, { force: true });
  };
  process.once('exit', release);
  return release;
}

/** The markers of processes other than this one that are (or may be) using `dataDir`. */
export function liveMarkers(dataDir: string): LiveMarker[] {
  const dir = markerDir(dataDir);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  const live: LiveMarker[] = [];
  for (const name of names) {
    const file = join(dir, name);
    let marker: RunMarker;
    try {
      marker = JSON.parse(readFileSync(file, 'utf8')) as RunMarker;
    } catch {
      continue; // removed meanwhile, or not ours
    }
    if (!Number.isSafeInteger(marker.pid)) continue;
    if (marker.hostname !== hostname()) {
      live.push({ ...marker, file, verified: false });
      continue;
    }
    // Our own pid can only be a leftover (e.g. the same pid 1 in a new container).
    if (marker.pid !== process.pid && processAlive(marker.pid)) {
      live.push({ ...marker, file, verified: true });
    } else {
      rmSync(file, { force: true });
    }
  }
  return live;
}

/** One line per live marker, for an operator's message. */
export function describeMarkers(markers: LiveMarker[]): string {
  return markers
    .map((m) =>
      m.verified
        ? `netwarden ${m.command} (pid ${m.pid}, since ${m.started_at})`
        : `netwarden ${m.command} on host ${m.hostname} (pid ${m.pid}, since ${m.started_at}; cannot be checked from here, marker ${m.file})`,
    )
    .join('; ');
}
