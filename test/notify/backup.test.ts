/**
 * Notification tables are part of every backup: channels (secrets included: a backup is the whole
 * database), the delivery log and changes held for digests come back exactly after a restore.
 */
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { openBackup } from '../../src/store/backup.js';
import { restoreBackup } from '../../src/store/restore.js';
import { testDatabases, type OpenedDatabase } from '../helpers/databases.js';
import { dumpTables } from '../helpers/tables.js';

describe.each(testDatabases())('notification tables in backups ($kind)', (database) => {
  const opened: OpenedDatabase[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((o) => o.cleanup()));
  });

  it('backs up and restores channels, deliveries and held changes', async () => {
    const source = await database.open();
    const target = await database.open();
    opened.push(source, target);
    const store = source.store;
    const now = new Date().toISOString();
    const channel = await store.notifications.createChannel(
      {
        name: 'digest hook',
        type: 'webhook',
        enabled: true,
        config: { url: 'http://127.0.0.1:9/x', secret: 'kept-in-backups' },
        filters: { change_types: ['port_opened'], min_severity: 'medium', zones: null, untrusted_only: true, scan_events: [], events: [] },
        digest: '0 8 * * *',
        quiet_hours: { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' },
        updated_at: now,
      },
      now,
    );
    const scan = await store.scans.create({ status: 'completed', profile: 'quick', subnet: '127.0.0.0/30', scan_type: 'network' });
    await store.notifications.createDelivery({
      channel_id: channel.id,
      event: 'scan.changes',
      scan_id: scan.id,
      payload: '{"x":1}',
      created_at: now,
      next_attempt_at: now,
    });
    const change = {
      id: 1,
      scan_id: scan.id,
      change_type: 'port_opened' as const,
      severity: 'high' as const,
      device_id: null,
      device_ip: '127.0.0.1',
      device_mac: null,
      port: 23,
      protocol: 'tcp',
      old_value: null,
      new_value: 'telnet',
      description: 'Port 23/tcp opened',
      detected_at: now,
    };
    await store.notifications.hold(channel.id, [change], now);

    const backup = await openBackup(store.handle, { version: '0.0.0-test' });
    const chunks: Buffer[] = [];
    for await (const chunk of backup.stream) chunks.push(chunk as Buffer);
    await backup.finished;
    await restoreBackup(target.store.handle, Readable.from([Buffer.concat(chunks)]), { audit: { actor: 'test', actorType: 'system' } });

    const before = await dumpTables(store);
    const after = await dumpTables(target.store);
    for (const table of ['notification_channels', 'notification_deliveries', 'notification_held']) {
      expect(before[table], table).toHaveLength(1);
      expect(after[table], table).toEqual(before[table]);
    }
    expect((await target.store.notifications.getChannel(channel.id))?.config.secret).toBe('kept-in-backups');
  });
});
