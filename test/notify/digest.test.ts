import { OutboundGuard } from '../../src/util/outbound.js';
/**
 * Digests and quiet hours with the notifier's clock moved by the test (no waiting for wall-clock
 * hours): changes collected into one digest at the cron's slot, each slot sent once across
 * instances; messages held in quiet hours and released when they end; critical changes never held.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { ChannelFilters, QuietHours } from '../../src/core/notify-rules.js';
import { EventBus } from '../../src/events/bus.js';
import { Notifier } from '../../src/notify/notifier.js';
import type { Store } from '../../src/store/index.js';
import { toScanRecord } from '../../src/store/scans.js';
import { testDatabases } from '../helpers/databases.js';
import { FAST_RETRIES, type Receiver } from '../helpers/receivers.js';
import { waitFor } from '../helpers/wait.js';
import { notifierEachTest } from './notifier-fixtures.js';

const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const FILTERS: ChannelFilters = { change_types: null, min_severity: 'low', zones: null, untrusted_only: false, scan_events: ['failed'], events: [] };

describe.each(testDatabases())('digests and quiet hours ($kind)', (database) => {
  let store: Store;
  let receiver: Receiver;
  let offset = 0;
  const now = () => new Date(Date.now() + offset);
  const setClock = (iso: string) => {
    offset = Date.parse(iso) - Date.now();
  };
  const events = new EventBus();
  const notifiers = notifierEachTest(database, (bed) => {
    ({ store, receiver } = bed);
  });

  function notifier(owner: string, bus = events): Notifier {
    const n = new Notifier({
      store,
      events: bus,
      log,
      version: '1.0.0',
      ownerId: owner,
      policy: FAST_RETRIES,
      now,
      digestCheckMs: 3_600_000,
      guard: OutboundGuard.fromEnvironment(process.env),
    });
    notifiers.push(n);
    n.start();
    return n;
  }

  async function channel(options: { digest?: string; quiet_hours?: QuietHours; filters?: Partial<ChannelFilters> }) {
    return store.notifications.createChannel(
      {
        name: 'watch',
        type: 'webhook',
        enabled: true,
        config: { url: `${receiver.url}/hook`, secret: null },
        filters: { ...FILTERS, ...options.filters },
        digest: options.digest ?? null,
        quiet_hours: options.quiet_hours ?? null,
        updated_at: now().toISOString(),
      },
      now().toISOString(),
    );
  }

  let nextIp = 10;
  /** A completed scan with the given changes (severities), announced on the bus as the scan manager does. */
  async function scanWith(severities: Array<'critical' | 'high' | 'medium' | 'low' | 'info'>, status: 'completed' | 'failed' = 'completed') {
    const scan = await store.scans.create({
      status,
      profile: 'normal',
      subnet: '10.9.0.0/24',
      scan_type: 'network',
      completed_at: now().toISOString(),
    });
    for (const severity of severities) {
      const ip = `10.9.0.${nextIp++}`;
      const device = await store.devices.insert({
        identity: `ip:${ip}`,
        ip_address: ip,
        ip_sort: nextIp,
        first_seen: now().toISOString(),
        last_seen: now().toISOString(),
      });
      await store.changes.insertMany([
        {
          scan_id: scan.id,
          change_type: 'port_opened',
          severity,
          device_id: device.id,
          device_ip: ip,
          port: 23,
          protocol: 'tcp',
          new_value: 'telnet',
          description: `Port 23/tcp (telnet) opened on ${ip}`,
          detected_at: now().toISOString(),
        },
      ]);
    }
    events.publish('scan_finished', toScanRecord(scan));
    return scan;
  }

  const deliveries = async () => (await store.notifications.listDeliveries({ limit: 100, offset: 0 })).rows;

  it('collects matching changes and sends them as one digest at the slot, once across instances', async () => {
    setClock('2026-11-25T06:00:00Z');
    await channel({ digest: '0 8 * * *' });
    const a = notifier('instance-a');
    const b = notifier('instance-b', new EventBus());
    await scanWith(['high', 'low']);
    await scanWith(['medium', 'info']);
    await a.idle();
    // Nothing sent yet: the changes wait for 08:00.
    expect(await deliveries()).toEqual([]);
    setClock('2026-11-25T07:59:00Z');
    expect(await a.tickDigests()).toBe(0);

    setClock('2026-11-25T08:00:30Z');
    const sent = await Promise.all([a.tickDigests(), b.tickDigests(), a.tickDigests()]);
    expect(sent.reduce((x, y) => x + y, 0)).toBe(1);
    await receiver.waitFor(1);
    await waitFor('the digest sent', async () => (await deliveries()).every((d) => d.status === 'sent'));
    const [d] = await deliveries();
    expect(d).toMatchObject({ event: 'digest', status: 'sent', scan_id: null });
    const body = receiver.requests[0].json();
    expect(body.event).toBe('digest');
    expect(body.scan).toBeNull();
    // The info change is below the default minimum severity (low).
    expect(body.changes.map((c: { severity: string }) => c.severity).sort()).toEqual(['high', 'low', 'medium']);
    expect(body.summary).toMatch(/^3 changes from 2 scans: 3 ports opened; worst severity high\.$/);

    // The next slot with nothing collected sends nothing; a failed scan is still told at once.
    setClock('2026-11-26T08:00:30Z');
    expect(await a.tickDigests()).toBe(0);
    await scanWith([], 'failed');
    await a.idle();
    await receiver.waitFor(2);
    expect(receiver.requests[1].json().event).toBe('scan.failed');
  });

  it('holds messages inside quiet hours until they end, but never a critical change', async () => {
    // 22:30 in Berlin (UTC+1 in November): inside 22:00–07:00.
    setClock('2026-11-25T21:30:00Z');
    await channel({ quiet_hours: { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' } });
    const n = notifier('instance-a');
    await scanWith(['medium']);
    await n.idle();
    const [held] = await deliveries();
    expect(held).toMatchObject({ status: 'pending', attempts: 0, event: 'scan.changes', next_attempt_at: '2026-11-26T06:00:00.000Z' });

    await scanWith(['critical', 'low']);
    await n.idle();
    await receiver.waitFor(1);
    const urgent = receiver.requests[0].json();
    expect(urgent.changes.map((c: { severity: string }) => c.severity)).toEqual(['critical', 'low']);
    expect((await deliveries()).find((d) => d.id === held.id)).toMatchObject({ status: 'pending' });
    expect(receiver.requests).toHaveLength(1);

    // 07:00 in Berlin: the held message goes out.
    setClock('2026-11-26T06:00:01Z');
    n.worker.wake();
    await receiver.waitFor(2);
    expect(receiver.requests[1].json().changes.map((c: { severity: string }) => c.severity)).toEqual(['medium']);
    await waitFor('the held message sent', async () => (await deliveries()).find((d) => d.id === held.id)?.status === 'sent');
  });

  it('holds a digest due in quiet hours, using the quiet hours time zone for its cron', async () => {
    // 23:00 in New York is 04:00Z the next day: the digest "0 23 * * *" fires inside 22:00–06:00 there.
    setClock('2026-11-25T20:00:00Z');
    await channel({ digest: '0 23 * * *', quiet_hours: { start: '22:00', end: '06:00', timezone: 'America/New_York' } });
    const n = notifier('instance-a');
    await scanWith(['high']);
    await n.idle();
    setClock('2026-11-26T04:00:10Z');
    expect(await n.tickDigests()).toBe(1);
    const [d] = await deliveries();
    expect(d).toMatchObject({ event: 'digest', status: 'pending', next_attempt_at: '2026-11-26T11:00:00.000Z' });
    expect(receiver.requests).toHaveLength(0);
  });
});
