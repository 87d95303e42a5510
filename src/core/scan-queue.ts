/**
 * Which scans may run at once (CONTRACT §7, §12): at most `scanning.max_parallel_scans`, never two
 * whose targets overlap, and queued scans start oldest first. Pure: the store gives the active
 * scans (read under the queue lock), these rules decide.
 */

/** A queued or running scan as the rules see it: its IPv4 range and who may run it. */
export interface ActiveScan {
  id: number;
  status: 'queued' | 'running';
  /** First and last address of its target, as unsigned integers. */
  low: number;
  high: number;
  /** The agent it is routed to; null for the server's own workers. */
  agentId: number | null;
  /** The active slot a running scan holds (1..max_parallel_scans). */
  slot: number | null;
}

export function rangesOverlap(a: { low: number; high: number }, b: { low: number; high: number }): boolean {
  return a.low <= b.high && b.low <= a.high;
}

/**
 * The scan a new trigger must wait for (CONTRACT §3, §12: 409 with its id), or null when it may
 * be recorded: one whose target overlaps, else, when every slot is taken or promised to a queued
 * scan, the running scan (or the oldest queued one).
 */
export function triggerConflict(active: readonly ActiveScan[], maxParallel: number, target: { low: number; high: number }): ActiveScan | null {
  const overlapping = active.find((s) => rangesOverlap(s, target));
  if (overlapping) return overlapping;
  if (active.length < maxParallel) return null;
  return active.find((s) => s.status === 'running') ?? active[0] ?? null;
}

/**
 * The queued scans of one lane (the server's workers: agentId null, or one agent) that may start
 * now, oldest first, each with the slot it takes. A queued scan is passed over while its target
 * overlaps a running scan or an older queued scan of the lane (so scans of one target run in the
 * order they were asked for), and nothing starts once every slot is taken.
 */
export function startableScans(active: readonly ActiveScan[], maxParallel: number, lane: number | null): { id: number; slot: number }[] {
  const running = active.filter((s) => s.status === 'running');
  const taken = new Set(running.map((s) => s.slot));
  const freeSlots: number[] = [];
  for (let slot = 1; slot <= maxParallel; slot++) if (!taken.has(slot)) freeSlots.push(slot);
  const blocking: { low: number; high: number }[] = [...running];
  const out: { id: number; slot: number }[] = [];
  const queued = active.filter((s) => s.status === 'queued').sort((a, b) => a.id - b.id);
  for (const scan of queued) {
    if (running.length + out.length >= maxParallel || freeSlots.length === 0) break;
    const free = !blocking.some((b) => rangesOverlap(b, scan));
    // Every queued scan, startable or not, holds back younger ones with an overlapping target.
    blocking.push(scan);
    if (!free || scan.agentId !== lane) continue;
    out.push({ id: scan.id, slot: freeSlots.shift()! });
  }
  return out;
}
