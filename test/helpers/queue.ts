/**
 * The scan queue's rules as the scan manager applies them, for store-level tests: record a
 * scan and take it (or take a queued one) under the queue lock, or get undefined when the rules
 * say it may not start.
 */
import { startableScans, triggerConflict } from '../../src/core/scan-queue.js';
import type { Store } from '../../src/store/index.js';
import { insertQueued, targetRange, type ScanLease } from '../../src/store/scans.js';
import type { ScanRow } from '../../src/store/schema.js';

export function testLease(ownerId: string, ms = 45_000): ScanLease {
  return { ownerId, host: 'test-host', pid: 1, leaseExpiresAt: new Date(Date.now() + ms).toISOString() };
}

/** Records a scan of `subnet` and starts it for `owner`, as a trigger does; undefined when refused (409). */
export function startScan(
  store: Store,
  scan: { profile: string; subnet: string; scan_type: string; started_at?: string; triggered_by?: string | null },
  owner: ScanLease,
  maxParallel = 1,
): Promise<ScanRow | undefined> {
  return store.scans.underQueueLock(async (db) => {
    const active = await store.scans.activeForQueue(db);
    if (triggerConflict(active, maxParallel, targetRange(scan.subnet)!)) return undefined;
    const queued = await insertQueued(db, {
      profile: scan.profile,
      subnet: scan.subnet,
      scan_type: scan.scan_type,
      target: null,
      created_at: new Date().toISOString(),
      triggered_by: scan.triggered_by ?? null,
    });
    const pick = startableScans(await store.scans.activeForQueue(db), maxParallel, null).find((s) => s.id === queued!.id);
    return pick ? store.scans.claim(db, pick.id, pick.slot, owner, 'worker test', scan.started_at ?? new Date().toISOString()) : undefined;
  });
}

/** Starts queued scan `id` for `owner` when the rules let it start now, as a worker does; else undefined. */
export function takeScan(store: Store, id: number, owner: ScanLease, maxParallel = 1, at = new Date().toISOString()): Promise<ScanRow | undefined> {
  return store.scans.underQueueLock(async (db) => {
    const pick = startableScans(await store.scans.activeForQueue(db), maxParallel, null).find((s) => s.id === id);
    return pick ? store.scans.claim(db, pick.id, pick.slot, owner, 'worker test', at) : undefined;
  });
}
