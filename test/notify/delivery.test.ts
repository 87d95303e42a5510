import { OutboundGuard } from '../../src/util/outbound.js';
/**
 * The delivery loop against real receivers on 127.0.0.1: retries on 500, 429 (Retry-After),
 * timeouts and refused connections, no retry on other 4xx, the failure in the delivery log and
 * the audit log, and pending deliveries surviving a restart.
 */
import { createHmac } from 'node:crypto';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { EventBus } from '../../src/events/bus.js';
import { Notifier } from '../../src/notify/notifier.js';
import { toScanRecord } from '../../src/store/scans.js';
import type { Store } from '../../src/store/index.js';
import { testDatabases } from '../helpers/databases.js';
import { closedPort } from '../helpers/listeners.js';
import { FAST_RETRIES, type Receiver } from '../helpers/receivers.js';
import { waitFor } from '../helpers/wait.js';
import { notifierEachTest } from './notifier-fixtures.js';

const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

// Each test waits through a few shortened retry schedules; a busy machine needs more than the default 30 s.
describe.each(testDatabases())('delivery loop ($kind)', { timeout: 90_000 }, (database) => {
  let store: Store;
  let receiver: Receiver;
  const notifiers = notifierEachTest(database, (bed) => {
    ({ store, receiver } = bed);
  });

  function notifier(owner = 'instance-a', policy = FAST_RETRIES): { notifier: Notifier; events: EventBus } {
    const events = new EventBus();
    const n = new Notifier({ store, events, log, version: '9.9.9', ownerId: owner, policy, guard: OutboundGuard.fromEnvironment(process.env) });
    notifiers.push(n);
    n.start();
    return { notifier: n, events };
  }

  async function channel(url: string, extra: Record<string, unknown> = {}) {
    const now = new Date().toISOString();
    return store.notifications.createChannel(
      {
        name: `hook-${Math.random()}`,
        type: 'webhook',
        enabled: true,
        config: { url, secret: 'shh', ...extra },
        filters: { change_types: null, min_severity: 'low', zones: null, untrusted_only: false, scan_events: ['failed'], events: [] },
        digest: null,
        quiet_hours: null,
        updated_at: now,
      },
      now,
    );
  }

  /** A failed scan, as the scan manager records and announces it. */
  async function failedScan(events: EventBus) {
    const row = await store.scans.create({
      status: 'failed',
      profile: 'quick',
      subnet: '127.0.0.0/30',
      scan_type: 'network',
      error: 'engine exploded',
    });
    events.publish('scan_finished', toScanRecord(row));
    return row;
  }

  const deliveries = async () => (await store.notifications.listDeliveries({ limit: 100, offset: 0 })).rows;
  const settled = () => waitFor('the delivery to settle', async () => (await deliveries()).find((d) => d.status !== 'pending'), 45_000);

  it('retries a 500 with growing delays and then delivers, signed, with the same delivery id', async () => {
    receiver.answer = (i) => (i < 2 ? { status: 503, body: 'busy' } : {});
    const c = await channel(`${receiver.url}/hook`);
    const { events } = notifier();
    const scan = await failedScan(events);
    const d = await settled();
    expect(d).toMatchObject({ channel_id: c.id, event: 'scan.failed', status: 'sent', attempts: 3, last_error: null, scan_id: scan.id });
    const [a, b, third] = receiver.requests;
    expect(receiver.requests).toHaveLength(3);
    for (const r of receiver.requests) {
      expect(r.headers['x-netwarden-delivery']).toBe(String(d.id));
      expect(r.headers['x-netwarden-event']).toBe('scan.failed');
      expect(r.headers['user-agent']).toBe('Netwarden/9.9.9');
      expect(r.headers['x-netwarden-signature']).toBe(`sha256=${createHmac('sha256', 'shh').update(r.body).digest('hex')}`);
      expect(r.json()).toMatchObject({ event: 'scan.failed', scan: { scan_id: scan.id, status: 'failed', error: 'engine exploded' }, changes: [] });
    }
    // Lower bounds only: each delay at least the policy's, the second longer than the first.
    expect(b.at - a.at).toBeGreaterThanOrEqual(FAST_RETRIES.retryDelaysMs[0] - 10);
    expect(third.at - b.at).toBeGreaterThanOrEqual(FAST_RETRIES.retryDelaysMs[1] - 10);
    expect(JSON.parse(third.body).summary).toContain('failed: engine exploded');
  });

  it('honours Retry-After on 429 (up to the cap)', async () => {
    receiver.answer = (i) => (i === 0 ? { status: 429, headers: { 'Retry-After': '1' } } : {});
    await channel(`${receiver.url}/hook`);
    const { events } = notifier();
    await failedScan(events);
    expect(await settled()).toMatchObject({ status: 'sent', attempts: 2 });
    const [a, b] = receiver.requests;
    expect(b.at - a.at).toBeGreaterThanOrEqual(950);
  });

  it('gives up after the last timed-out attempt within the window, logs the error and audits it', async () => {
    receiver.answer = () => 'hang';
    const c = await channel(`${receiver.url}/slow`);
    const { events } = notifier();
    await failedScan(events);
    const d = await settled();
    expect(d).toMatchObject({ status: 'failed', attempts: 4, last_error: 'timed out after 1.5 s', sent_at: null });
    expect(receiver.requests).toHaveLength(4);
    // That the planned attempts fit the window is a property of the schedule, tested without a clock in
    // compose.test.ts ('retry schedule'); here a busy machine may start one late, so no upper bound.
    const audit = await store.audit.list({ action: 'notification_failed', limit: 10, offset: 0 });
    expect(audit.rows).toHaveLength(1);
    expect(audit.rows[0]).toMatchObject({
      actor: 'system',
      actor_type: 'system',
      success: false,
      resource_type: 'notification_channel',
      resource_id: String(c.id),
      details: { delivery_id: d.id, event: 'scan.failed', attempts: 4, error: 'timed out after 1.5 s' },
    });
  });

  it('retries a refused connection, and does not retry a 404', async () => {
    await channel(`http://127.0.0.1:${await closedPort('127.0.0.1')}/x`);
    const { events } = notifier();
    await failedScan(events);
    const refused = await settled();
    expect(refused).toMatchObject({ status: 'failed', attempts: 4 });
    expect(refused.last_error).toContain('ECONNREFUSED');

    receiver.answer = () => ({ status: 404, body: 'no such hook' });
    const c = await channel(`${receiver.url}/gone`);
    await failedScan(events);
    const notFound = await waitFor('the 404 delivery', async () => (await deliveries()).find((d) => d.channel_id === c.id && d.status !== 'pending'));
    expect(notFound).toMatchObject({ status: 'failed', attempts: 1, last_error: 'HTTP 404 Not Found: no such hook' });
    expect(receiver.requests).toHaveLength(1);
    expect((await store.audit.list({ action: 'notification_failed', limit: 10, offset: 0 })).total).toBe(2);
  });

  it('resumes pending deliveries at start-up, including one abandoned mid-attempt by a stopped process', async () => {
    receiver.answer = () => 'hang';
    await channel(`${receiver.url}/hook`);
    const first = notifier('instance-a', { ...FAST_RETRIES, timeoutMs: 20_000 });
    await failedScan(first.events);
    await receiver.waitFor(1);
    // Stopped while its attempt hangs: the delivery is left pending, the attempt not counted.
    await first.notifier.stop();
    const [left] = await deliveries();
    expect(left).toMatchObject({ status: 'pending', attempts: 0 });

    receiver.answer = () => ({});
    notifier('instance-b');
    const d = await settled();
    expect(d).toMatchObject({ id: left.id, status: 'sent', attempts: 1 });
    expect(receiver.requests).toHaveLength(2);
  });

  it('marks a test message failed when its process stopped during the attempt', async () => {
    const c = await channel(`${receiver.url}/hook`);
    const old = new Date(Date.now() - 3_600_000).toISOString();
    await store.notifications.createDelivery({
      channel_id: c.id,
      event: 'test',
      scan_id: null,
      payload: '{}',
      created_at: old,
      next_attempt_at: null,
    });
    notifier();
    const d = await settled();
    expect(d).toMatchObject({ event: 'test', status: 'failed', last_error: 'interrupted: the server stopped during the test' });
    expect(receiver.requests).toHaveLength(0);
  });

  it('sends each delivery once when two instances work on the same database', async () => {
    const c = await channel(`${receiver.url}/hook`);
    notifier('instance-a');
    notifier('instance-b');
    for (let i = 0; i < 10; i++) {
      await store.notifications.createDelivery({
        channel_id: c.id,
        event: 'test',
        scan_id: null,
        payload: JSON.stringify({ event: 'test', title: 't', summary: `message ${i}`, groups: [], severity: 'info', scan: null, changes: [] }),
        created_at: new Date().toISOString(),
        next_attempt_at: new Date().toISOString(),
      });
    }
    notifiers.forEach((n) => n.worker.wake());
    await waitFor('all sent', async () => (await deliveries()).every((d) => d.status === 'sent'));
    expect(receiver.requests).toHaveLength(10);
    expect(new Set(receiver.requests.map((r) => r.headers['x-netwarden-delivery'])).size).toBe(10);
  });
});
