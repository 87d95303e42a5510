/**
 * The live-event bus keeps its replay within a count and a size, and bounds each event's data
 * (src/events/payload.ts); the HTTP and memory side is test/server/event-memory.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { EVENT_DATA_MAX_BYTES, EVENT_REPLAY_LIMIT, EVENT_REPLAY_MAX_BYTES, EventBus } from '../../src/events/bus.js';
import { boundEventData } from '../../src/events/payload.js';
import type { DeviceSummary } from '../../src/schemas/device.js';

function summary(fields: Partial<DeviceSummary> = {}): DeviceSummary {
  return {
    id: 1,
    ip_address: '127.0.0.1',
    mac_address: null,
    hostname: 'host',
    vendor: null,
    device_type: null,
    os_name: null,
    label: null,
    zone: null,
    is_trusted: false,
    notes: null,
    risk_level: 'low',
    risk_score: 0,
    open_ports: [22],
    first_seen: '2026-01-01T00:00:00.000Z',
    last_seen: '2026-01-01T00:00:00.000Z',
    last_scan_id: null,
    online: true,
    ...fields,
  } as DeviceSummary;
}

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

describe('event data bounds', () => {
  it('leaves data within the limit untouched, however large its legitimate parts', () => {
    const data = summary({ notes: 'é'.repeat(10_000), open_ports: Array.from({ length: 65_535 }, (_, i) => i + 1) });
    const bounded = boundEventData(data);
    expect(bounded.trimmed).toBe(false);
    expect(bounded.data).toBe(data);
  });

  it('cuts the longest texts of larger data, ending them in …, and keeps its shape', () => {
    const hostname = `${'a'.repeat(3 * 1024 * 1024)}.example`;
    const data = summary({ hostname, notes: 'kept whole' });
    const bounded = boundEventData(data);
    expect(bounded.trimmed).toBe(true);
    expect(bytes(bounded.data)).toBeLessThanOrEqual(EVENT_DATA_MAX_BYTES);
    expect(bounded.bytes).toBe(bytes(bounded.data));
    expect(bounded.data.hostname?.endsWith('…')).toBe(true);
    expect(hostname.startsWith(bounded.data.hostname!.slice(0, -1))).toBe(true);
    expect({ ...bounded.data, hostname }).toEqual(data);
    // The original is not changed.
    expect(data.hostname).toBe(hostname);
  });

  it('never splits a surrogate pair, and shortens lists when texts alone are not enough', () => {
    const emoji = '😀'.repeat(400_000);
    const cut = boundEventData(summary({ hostname: emoji })).data.hostname!;
    expect(cut.endsWith('…')).toBe(true);
    expect(Buffer.from(cut, 'utf8').toString('utf8')).toBe(cut);
    expect(cut.includes('\ufffd')).toBe(false);

    const many = { scan_id: 1, warnings: Array.from({ length: 200_000 }, (_, i) => `warning ${i}`) };
    const bounded = boundEventData(many);
    expect(bytes(bounded.data)).toBeLessThanOrEqual(EVENT_DATA_MAX_BYTES);
    expect(bounded.data.warnings[0]).toBe('warning 0');
    expect(bounded.data.scan_id).toBe(1);
  });
});

describe('event replay bounds', () => {
  it('publishes and replays the bounded data', () => {
    const bus = new EventBus();
    const seen: unknown[] = [];
    bus.subscribe((event) => seen.push(event.data));
    const event = bus.publish('device_updated', summary({ hostname: 'x'.repeat(2 * 1024 * 1024) }));
    expect(bytes(event.data)).toBeLessThanOrEqual(EVENT_DATA_MAX_BYTES);
    expect(seen).toEqual([event.data]);
    expect(bus.since(0)).toEqual([event]);
  });

  it('keeps at most EVENT_REPLAY_LIMIT events and EVENT_REPLAY_MAX_BYTES of data, dropping the oldest', () => {
    const bus = new EventBus();
    for (let i = 0; i < EVENT_REPLAY_LIMIT + 10; i++) bus.publish('device_updated', summary({ id: i }));
    expect(bus.kept.events).toBe(EVENT_REPLAY_LIMIT);
    expect(bus.since(0)[0].id).toBe(11);

    // Large (but legitimate) events: the size decides how many are kept.
    const big = 'n'.repeat(EVENT_DATA_MAX_BYTES - 1000);
    for (let i = 0; i < 40; i++) bus.publish('device_updated', summary({ id: i, notes: big }));
    expect(bus.kept.bytes).toBeLessThanOrEqual(EVENT_REPLAY_MAX_BYTES);
    const kept = bus.since(0);
    expect(kept.length).toBe(bus.kept.events);
    expect(kept.length).toBeGreaterThanOrEqual(15);
    expect(kept.length).toBeLessThan(40);
    // The newest are the ones kept, in order.
    expect(kept.at(-1)?.id).toBe(bus.lastId);
    expect(kept.map((e) => e.id)).toEqual(kept.map((_, i) => bus.lastId - kept.length + 1 + i));
  });
});
