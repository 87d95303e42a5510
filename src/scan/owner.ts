/**
 * Who runs a scan. Each process that runs scans has an owner identity (a random id per start, its
 * host and pid), written on the scan with a lease it renews while the scan runs. Another process
 * may end the scan only when its owner is gone: the lease ran out, or the owner was on this same
 * host and its process no longer exists. Then the engine's child process (nmap, in its own process
 * group) may still be running, with nobody to read its output: it is ended too, after checking the
 * process is still nmap (a process id can be reused).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { ScanRow } from '../store/schema.js';
import { processAlive } from '../util/process.js';

/** How long a scan's claim holds without renewal; a dead owner loses its scans within this (plus one check). */
export const SCAN_LEASE_MS = 30_000;
/** How often the owner renews its lease and looks for a cancel asked through another instance. */
export const LEASE_RENEW_MS = 2_000;
/** How often every instance looks for scans whose owner is gone. */
export const ORPHAN_CHECK_MS = 10_000;

export interface ScanOwner {
  id: string;
  host: string;
  pid: number;
}

/**
 * The host part of an owner: the host name plus the kernel's boot id, so that a reboot (pids
 * start again) or another machine never reads as "this host".
 */
export function hostIdentity(): string {
  let boot = '';
  try {
    boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim().slice(0, 8);
  } catch {
    /* not Linux: the host name alone */
  }
  return boot ? `${hostname()}/${boot}` : hostname();
}

export function newOwner(): ScanOwner {
  return { id: randomUUID(), host: hostIdentity(), pid: process.pid };
}

/** Why a scan's owner counts as gone, or null while it may still be running the scan. */
export function ownerGone(
  scan: Pick<ScanRow, 'owner_id' | 'owner_host' | 'owner_pid' | 'lease_expires_at'>,
  me: ScanOwner,
  now: number,
): string | null {
  if (scan.owner_id === me.id) return null;
  if (!scan.owner_id) return 'it has no owner (left by an earlier version or a crash before it started)';
  if (scan.owner_host === me.host && scan.owner_pid !== null && !processAlive(scan.owner_pid)) {
    return `its process (pid ${scan.owner_pid}) on this host has stopped`;
  }
  if (!scan.lease_expires_at || Date.parse(scan.lease_expires_at) <= now) {
    return `its owner (${scan.owner_host ?? 'unknown host'}, pid ${scan.owner_pid ?? '?'}) stopped renewing its lease`;
  }
  return null;
}

/**
 * Ends the engine process groups a dead owner left behind on this host: `engine_pgid` and every
 * group of `engine_pgids` (a scan overlaps several nmap runs). Returns the groups killed, empty
 * when there was nothing (safe) to kill: a group is ended only while its leader is still nmap.
 */
export function endOrphanedEngines(scan: Pick<ScanRow, 'owner_host' | 'engine_pgid' | 'engine_pgids'>, me: ScanOwner): number[] {
  if (scan.owner_host !== me.host) return [];
  const groups = new Set(recordedGroups(scan.engine_pgids));
  if (scan.engine_pgid !== null) groups.add(scan.engine_pgid);
  const killed: number[] = [];
  for (const pgid of groups) {
    if (pgid <= 1 || !isNmap(pgid)) continue;
    try {
      process.kill(-pgid, 'SIGKILL');
      killed.push(pgid);
    } catch {
      // Gone meanwhile.
    }
  }
  return killed.sort((a, b) => a - b);
}

/** The integers of a stored `engine_pgids` list; nothing from a value that is not one. */
function recordedGroups(text: string | null): number[] {
  if (!text) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter((p): p is number => Number.isSafeInteger(p)) : [];
  } catch {
    return [];
  }
}

function isNmap(pid: number): boolean {
  try {
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    return /(^|\/)nmap$/.test(argv0);
  } catch {
    return false;
  }
}
