/**
 * Retention: the daily job deletes scans, snapshots, changes and audit entries older than
 * retention.days, keeps devices and each subnet's latest completed scan (the next scan's baseline),
 * and runs once a day across every instance sharing the database.
 */
import { describe, expect, it } from 'vitest';
import { LoginThrottle } from '../../src/auth/throttle.js';
import { Maintenance } from '../../src/jobs/maintenance.js';
import { createLogger } from '../../src/logger.js';
import type { Store } from '../../src/store/index.js';
import { freshDatabaseEachTest, testDatabases } from '../helpers/databases.js';

const DAY = 86_400_000;
const NOW = new Date('2026-11-24T03:00:00.000Z');
const daysAgo = (n: number) => new Date(NOW.getTime() - n * DAY).toISOString();

describe.each(testDatabases())('retention ($kind)', (database) => {
  let store: Store;
  freshDatabaseEachTest(database, (opened) => {
    store = opened.store;
  });

  const maintenance = (ownerId: string) =>
    new Maintenance({ store, log: createLogger('silent'), throttle: new LoginThrottle(store.loginFailures), ownerId });

  async function scan(subnet: string, status: string, age: number) {
    const at = daysAgo(age);
    return store.scans.create({ status, profile: 'normal', subnet, scan_type: 'network', created_at: at, started_at: at, completed_at: at });
  }

  async function history(scanId: number, deviceId: number, age: number) {
    await store.devices.insertSnapshot({
      scan_id: scanId,
      device_id: deviceId,
      ip_address: '192.168.1.10',
      ip_sort: 3232235786,
      ports: '[]',
      open_port_count: 0,
      risk_level: 'none',
      risk_score: 0,
    });
    await store.db
      .insertInto('changes')
      .values({
        scan_id: scanId,
        change_type: 'device_added',
        severity: 'info',
        device_id: deviceId,
        description: 'added',
        detected_at: daysAgo(age),
      })
      .execute();
  }

  it('deletes old history, keeps devices and each subnet’s baseline, and audits the run', async () => {
    const device = await store.devices.insert({
      identity: 'ip:192.168.1.10',
      ip_address: '192.168.1.10',
      ip_sort: 3232235786,
      first_seen: daysAgo(600),
      last_seen: daysAgo(1),
    });
    const a500 = await scan('192.168.1.0/24', 'completed', 500);
    const a400 = await scan('192.168.1.0/24', 'completed', 400);
    const aFailed = await scan('192.168.1.0/24', 'failed', 380);
    const aRecent = await scan('192.168.1.0/24', 'completed', 10);
    const bOnly = await scan('192.168.2.0/24', 'completed', 400);
    for (const s of [a500, a400, aRecent, bOnly]) await history(s.id, device.id, (Date.parse(NOW.toISOString()) - Date.parse(s.created_at)) / DAY);
    await store.devices.update(device.id, { last_scan_id: a400.id });
    await store.db
      .insertInto('audit_logs')
      .values([
        { timestamp: daysAgo(366), action: 'login_failed', actor: 'x', actor_type: 'user', success: 0 },
        { timestamp: daysAgo(2), action: 'login_failed', actor: 'y', actor_type: 'user', success: 0 },
      ])
      .execute();

    // Notification deliveries: old finished ones go, a pending one stays however old (it is still to be sent).
    const channel = await store.notifications.createChannel(
      {
        name: 'hook',
        type: 'webhook',
        enabled: true,
        config: { url: 'http://127.0.0.1:9/x', secret: null },
        filters: { change_types: null, min_severity: 'low', zones: null, untrusted_only: false, scan_events: ['failed'], events: [] },
        digest: null,
        quiet_hours: null,
        updated_at: daysAgo(400),
      },
      daysAgo(400),
    );
    const delivery = (age: number, status: string) =>
      store.db
        .insertInto('notification_deliveries')
        .values({ channel_id: channel.id, event: 'test', status, payload: '{}', created_at: daysAgo(age), next_attempt_at: daysAgo(age) })
        .execute();
    await delivery(400, 'sent');
    await delivery(390, 'failed');
    await delivery(380, 'pending');
    await delivery(5, 'sent');

    const result = await maintenance('instance-a').runRetention(NOW);
    expect(result).toEqual({ scans: 3, snapshots: 2, changes: 2, audit_entries: 1, deliveries: 2 });
    const deliveries = await store.db.selectFrom('notification_deliveries').select('status').orderBy('id').execute();
    expect(deliveries.map((d) => d.status)).toEqual(['pending', 'sent']);
    const left = (await store.scans.list(50, 0)).rows.map((r) => r.id).sort((x, y) => x - y);
    expect(left).toEqual([aRecent.id, bOnly.id].sort((x, y) => x - y));
    expect(aFailed).toBeDefined();
    const kept = await store.devices.getRow(device.id);
    expect(kept).toMatchObject({ id: device.id, last_scan_id: null });
    const changes = await store.db.selectFrom('changes').select('scan_id').execute();
    expect(changes.map((c) => c.scan_id).sort()).toEqual([aRecent.id, bOnly.id].sort());
    const audit = await store.audit.list({ limit: 10, offset: 0 });
    expect(audit.rows.map((r) => r.actor)).not.toContain('x');
    const run = await store.audit.list({ action: 'retention_run', limit: 10, offset: 0 });
    expect(run.rows).toHaveLength(1);
    expect(run.rows[0]).toMatchObject({ actor: 'system', success: true, details: { retention_days: 365, deleted: result } });
  });

  it('runs once a day across instances, and not at all with retention.days 0', async () => {
    expect(await maintenance('instance-a').runRetention(NOW)).not.toBeNull();
    expect(await maintenance('instance-a').runRetention(new Date(NOW.getTime() + 3_600_000))).toBeNull();
    expect(await maintenance('instance-b').runRetention(new Date(NOW.getTime() + 3_600_000))).toBeNull();
    expect(await maintenance('instance-b').runRetention(new Date(NOW.getTime() + DAY))).not.toBeNull();
    expect((await store.audit.list({ action: 'retention_run', limit: 10, offset: 0 })).total).toBe(2);

    const { applySettingsPatch } = await import('../../src/core/settings.js');
    const off = applySettingsPatch(await store.settings.get(), { retention: { days: 0 } });
    if (!off.ok) throw new Error(off.error);
    await store.settings.put(off.settings);
    expect(await maintenance('instance-c').runRetention(new Date(NOW.getTime() + 3 * DAY))).toBeNull();
  });
});
