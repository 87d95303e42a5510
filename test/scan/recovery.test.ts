/**
 * Ending scans whose owner is gone, and only those: a scan another live instance runs (its lease
 * renewed) is never touched; one whose process died on this host, whose lease ran out, or that has
 * no owner is failed with its duration and an audit entry, once, by whichever instance sees it.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ScanManager } from '../../src/scan/manager.js';
import { hostIdentity, newOwner } from '../../src/scan/owner.js';
import { createLogger } from '../../src/logger.js';
import type { Store } from '../../src/store/index.js';
import { freshDatabaseEachTest, testDatabases } from '../helpers/databases.js';
import { startScan } from '../helpers/queue.js';

/** A pid that belonged to a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

describe.each(testDatabases())('abandoned scans ($kind)', (database) => {
  let store: Store;
  freshDatabaseEachTest(database, (opened) => {
    store = opened.store;
  });

  const manager = () => new ScanManager({ store, log: createLogger('silent'), scanAllow: ['127.0.0.0/8'] });
  const minutesFromNow = (m: number) => new Date(Date.now() + m * 60_000).toISOString();
  const startedAgo = new Date(Date.now() - 90_000).toISOString();

  async function running(owner: { owner_id: string | null; owner_host: string | null; owner_pid: number | null; lease_expires_at: string | null }) {
    return store.scans.create({
      status: 'running',
      profile: 'normal',
      subnet: '127.0.0.0/30',
      scan_type: 'network',
      started_at: startedAgo,
      ...owner,
    });
  }

  it('fails only scans whose owner is gone, with duration and one audit entry each', async () => {
    const here = hostIdentity();
    const liveElsewhere = await running({ owner_id: 'other', owner_host: 'other-host/1', owner_pid: 4242, lease_expires_at: minutesFromNow(1) });
    const liveHere = await running({ owner_id: 'sibling', owner_host: here, owner_pid: process.pid, lease_expires_at: minutesFromNow(1) });
    const expired = await running({ owner_id: 'gone', owner_host: 'other-host/1', owner_pid: 4242, lease_expires_at: minutesFromNow(-1) });
    const deadHere = await running({ owner_id: 'crashed', owner_host: here, owner_pid: deadPid(), lease_expires_at: minutesFromNow(1) });
    const ownerless = await running({ owner_id: null, owner_host: null, owner_pid: null, lease_expires_at: null });

    const [first, second] = [manager(), manager()];
    const ended = (await Promise.all([first.recoverAbandoned(), second.recoverAbandoned()])).flat().sort((a, b) => a - b);
    expect(ended).toEqual([expired.id, deadHere.id, ownerless.id].sort((a, b) => a - b));

    for (const id of [liveElsewhere.id, liveHere.id]) expect((await store.scans.get(id))?.status).toBe('running');
    for (const scan of [expired, deadHere, ownerless]) {
      const row = await store.scans.get(scan.id);
      expect(row?.status).toBe('failed');
      expect(row?.error).toMatch(/^Interrupted: the server stopped while this scan was running \(/);
      expect(row?.duration_seconds).toBeGreaterThanOrEqual(89);
      expect(row?.active_slot).toBeNull();
    }
    expect((await store.scans.get(expired.id))?.error).toMatch(/stopped renewing its lease/);
    expect((await store.scans.get(deadHere.id))?.error).toMatch(/on this host has stopped/);
    const audit = await store.audit.list({ action: 'scan_failed', limit: 50, offset: 0 });
    expect(audit.rows.map((r) => Number(r.resource_id)).sort((a, b) => a - b)).toEqual(ended);
  });

  it('cancels a scan whose owner is gone at once, and asks a live owner instead', async () => {
    const orphan = await running({ owner_id: 'gone', owner_host: 'other-host/1', owner_pid: 1, lease_expires_at: minutesFromNow(-1) });
    await manager().cancel(orphan.id);
    expect(await store.scans.get(orphan.id)).toMatchObject({ status: 'cancelled', error: 'Cancelled', active_slot: null });

    // A live owner elsewhere: the request is recorded for it to act on.
    const owner = newOwner();
    const scan = await startScan(
      store,
      { profile: 'normal', subnet: '127.0.0.0/30', scan_type: 'network', started_at: startedAgo },
      { ownerId: owner.id, host: 'other-host/1', pid: 4242, leaseExpiresAt: minutesFromNow(1) },
    );
    if (!scan) throw new Error('not started');
    const cancelling = manager().cancel(scan.id);
    await new Promise((r) => setTimeout(r, 300));
    expect(await store.scans.renewLease(scan.id, owner.id, minutesFromNow(1))).toBe('cancel_requested');
    await store.scans.finish(scan.id, owner.id, { status: 'cancelled', error: 'Cancelled', completed_at: new Date().toISOString() });
    await cancelling;
    expect((await store.scans.get(scan.id))?.status).toBe('cancelled');
  });
});
