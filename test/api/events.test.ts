/**
 * GET /api/events (CONTRACT §10) over real HTTP: the events of real scans of loopback in order
 * with their ids, replay with Last-Event-ID, keep-alive comments, authentication, and that
 * neither a client that leaves nor a server that closes leaves anything behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { httpListener, type Listener } from '../helpers/listeners.js';
import { triggerScan, waitForScan } from '../helpers/scans.js';
import { readJson, startServerWithAdmin, type TestServer } from '../helpers/server.js';
import { openSse, type SseStream } from '../helpers/sse.js';

const KEEP_ALIVE_MS = 100;

describe.each(testDatabases())('live events ($kind)', (database) => {
  let server: TestServer;
  let key: string;
  let cookie: string;
  const streams: SseStream[] = [];

  const connect = async (headers: Record<string, string> = { 'X-API-Key': key }, query = ''): Promise<SseStream> => {
    const stream = await openSse(`${server.baseUrl}/api/events${query}`, headers);
    streams.push(stream);
    return stream;
  };
  /** Listeners the server registers itself (the notifier), counted before any stream opened. */
  let ownListeners = 0;
  const subscribers = () => server.app.services.events.subscribers - ownListeners;
  const waitForSubscribers = async (n: number) => {
    for (let i = 0; subscribers() !== n; i++) {
      if (i > 500) throw new Error(`expected ${n} subscribers, have ${subscribers()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  beforeAll(async () => {
    ({ server, key, cookie } = await startServerWithAdmin(database, { eventKeepAliveMs: KEEP_ALIVE_MS }));
    ownListeners = server.app.services.events.subscribers;
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    await server?.close();
  });

  it('answers with an unbuffered, uncompressed event stream and a first comment', async () => {
    const stream = await connect();
    expect(stream.status).toBe(200);
    expect(stream.response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(stream.response.headers['cache-control']).toBe('no-cache, no-transform');
    expect(stream.response.headers['x-accel-buffering']).toBe('no');
    expect(stream.response.headers['content-encoding']).toBeUndefined();
    await stream.until((s) => s.comments.length > 0, 'the opening comment');
    stream.close();
  });

  describe('a scan’s events', () => {
    let listener: Listener;
    let live: SseStream;
    let first: any;
    let second: any;

    beforeAll(async () => {
      listener = await httpListener('127.0.0.1', 'events-test');
      const res = await server.request('/api/config', { method: 'PUT', key, json: { scanning: { port_range: String(listener.port) } } });
      expect(res.status).toBe(200);
      live = await connect();
      // The baseline: the listener's port open.
      first = await triggerScan(server, key, { subnet: '127.0.0.1/32', profile: 'normal' });
      expect((await waitForScan(server, key, first.scan_id)).status).toBe('completed');
      // The change: the port closed.
      await listener.close();
      second = await triggerScan(server, key, { subnet: '127.0.0.1/32', profile: 'normal' });
      expect((await waitForScan(server, key, second.scan_id)).status).toBe('completed');
      await live.until((s) => s.parsed().some((e) => e.event === 'scan_finished' && e.data.scan_id === second.scan_id), 'the second scan_finished');
    }, 180_000);

    it('has increasing ids and the scan’s events in order: started, progress, changes, devices, new devices, finished', async () => {
      const events = live.parsed();
      const ids = events.map((e) => e.id);
      expect(ids.every((id) => Number.isInteger(id) && id > 0)).toBe(true);
      for (let i = 1; i < ids.length; i++) expect(ids[i]).toBe(ids[i - 1] + 1);

      for (const scan of [first, second]) {
        const mine = events.filter((e) => (e.event.startsWith('scan_') ? e.data.scan_id === scan.scan_id : true));
        const names = mine.map((e) => e.event);
        const start = names.indexOf('scan_started');
        const end = names.indexOf('scan_finished', start);
        expect(start).toBeGreaterThanOrEqual(0);
        expect(end).toBeGreaterThan(start);
        const during = names.slice(start + 1, end);
        expect(during).toContain('scan_progress');
        // Progress first, then the scan's changes, then the devices it changed (and their risk levels), then the devices it saw first.
        const outcome = ['change', 'device_updated', 'risk_changed', 'device_new'];
        const firstChange = during.findIndex((n) => outcome.includes(n));
        if (firstChange !== -1) {
          expect(during.slice(firstChange).every((n) => outcome.includes(n))).toBe(true);
          if (during.includes('device_updated')) expect(during.slice(during.indexOf('device_updated')).every((n) => n !== 'change')).toBe(true);
          if (during.includes('device_new')) expect(during.slice(during.indexOf('device_new')).every((n) => n === 'device_new')).toBe(true);
        }
        // The first scan saw the device for the first time, the second did not.
        expect(during.filter((n) => n === 'device_new')).toHaveLength(scan === first ? 1 : 0);
        expect(mine[start].data).toMatchObject({ scan_id: scan.scan_id, status: 'running', subnet: '127.0.0.1/32', profile: 'normal' });
        expect(mine[end].data).toEqual(await readJson(await server.request(`/api/scans/${scan.scan_id}`, { key })));
      }
    });

    it('publishes each change of the scan as stored, with its database id', async () => {
      const stored = await readJson(await server.request(`/api/changes?scan_id=${second.scan_id}`, { key }));
      expect(stored.map((c: any) => c.change_type)).toEqual(['port_closed']);
      const published = live
        .parsed()
        .filter((e) => e.event === 'change')
        .map((e) => e.data);
      expect(published).toEqual([...stored].reverse());
      expect(published[0]).toMatchObject({ id: expect.any(Number), port: listener.port, device_ip: '127.0.0.1', scan_id: second.scan_id });
    });

    it('publishes the summary of the device the scan changed', async () => {
      const [change] = live.parsed().filter((e) => e.event === 'change');
      const updates = live.parsed().filter((e) => e.event === 'device_updated' && e.id > change.id);
      expect(updates.map((e) => e.data.id)).toEqual([change.data.device_id]);
      const [device] = await readJson(await server.request(`/api/devices?q=127.0.0.1`, { key }));
      expect(updates[0].data).toEqual(device);
      expect(updates[0].data).toMatchObject({ open_ports: [], online: true, missed_scans: 0 });
    });

    it('replays exactly the missed events after Last-Event-ID, then continues live', async () => {
      const all = live.parsed();
      const startOfSecond = all.find((e) => e.event === 'scan_started' && e.data.scan_id === second.scan_id)!;
      const after = startOfSecond.id - 1;
      const replay = await connect({ 'X-API-Key': key, 'Last-Event-ID': String(after) });
      const expected = all.filter((e) => e.id > after);
      await replay.until((s) => s.events.length >= expected.length, 'the replay');
      expect(replay.parsed()).toEqual(expected);

      // Then live events follow on the same stream.
      const res = await server.request(`/api/devices/${expected.find((e) => e.event === 'device_updated')!.data.id}`, {
        method: 'PUT',
        key,
        json: { label: 'loopback' },
      });
      expect(res.status).toBe(200);
      await replay.until((s) => s.events.length > expected.length, 'the live event after the replay');
      const next = replay.parsed()[expected.length];
      expect(next).toMatchObject({ id: all[all.length - 1].id + 1, event: 'device_updated', data: { label: 'loopback', ip_address: '127.0.0.1' } });
      replay.close();
    });

    it('takes the id from ?last_event_id= for clients without headers; the header wins over it', async () => {
      // The bus's last id, not the last this test's own stream has read so far: on a busy machine the
      // stream may still be delivering the previous scan's final events.
      const last = server.app.services.events.lastId;
      const byQuery = await connect({ 'X-API-Key': key }, `?last_event_id=${last - 2}`);
      await byQuery.until((s) => s.events.length >= 2, 'the replay by query');
      expect(byQuery.parsed().map((e) => e.id)).toEqual([last - 1, last]);

      const both = await connect({ 'X-API-Key': key, 'Last-Event-ID': String(last - 1) }, `?last_event_id=0`);
      await both.until((s) => s.events.length >= 1, 'the replay by header');
      await both.until((s) => s.comments.includes('keep-alive'), 'a keep-alive after the replay');
      expect(both.parsed().map((e) => e.id)).toEqual([last]);

      // An id from the future (another process, or before a restart) replays nothing.
      const future = await connect({ 'X-API-Key': key, 'Last-Event-ID': String(last + 1000) });
      await future.until((s) => s.comments.includes('keep-alive'), 'a keep-alive');
      expect(future.events).toEqual([]);
      for (const s of [byQuery, both, future]) s.close();
    });

    afterAll(async () => {
      live?.close();
      await listener?.close().catch(() => {});
    });
  });

  it('sends the events of a quick scan (started, progress, finished) and nothing else for it', async () => {
    const stream = await connect({ Cookie: cookie });
    const scan = await triggerScan(server, key, { subnet: '127.0.0.1/32', profile: 'quick' });
    await waitForScan(server, key, scan.scan_id);
    await stream.until((s) => s.events.some((e) => e.event === 'scan_finished'), 'scan_finished');
    const names = stream.parsed().map((e) => e.event);
    expect(names[0]).toBe('scan_started');
    expect(names.at(-1)).toBe('scan_finished');
    expect(names.slice(1, -1).length).toBeGreaterThan(0);
    // Nothing changed: the device was there before and is there now.
    expect(new Set(names.slice(1, -1))).toEqual(new Set(['scan_progress']));
    for (const e of stream.parsed().filter((x) => x.event === 'scan_progress')) {
      expect(e.data).toMatchObject({ scan_id: scan.scan_id, progress: { phase: expect.any(String), percent: expect.any(Number) } });
    }
    stream.close();
  }, 120_000);

  it('sends a keep-alive comment at the configured interval', async () => {
    const stream = await connect();
    await stream.until((s) => s.comments.filter((c) => c === 'keep-alive').length >= 2, 'two keep-alive comments');
    stream.close();
  });

  it('unsubscribes a client that disconnects', async () => {
    await waitForSubscribers(0);
    const a = await connect();
    const b = await connect();
    await waitForSubscribers(2);
    a.close();
    await waitForSubscribers(1);
    b.close();
    await waitForSubscribers(0);
  });

  it('answers 401 {"detail":"Not authenticated"} without a key, with a bad key and with a revoked key', async () => {
    const created = await readJson(await server.request('/api/keys', { method: 'POST', cookie, json: { name: 'events-revoked' } }));
    const stream = await connect({ 'X-API-Key': created.key });
    expect(stream.status).toBe(200);
    expect((await server.request(`/api/keys/${created.id}`, { method: 'DELETE', cookie })).status).toBe(200);
    // The open stream of the revoked key is ended at the next keep-alive.
    await stream.ended;

    const attempts: Record<string, string>[] = [
      {},
      { 'X-API-Key': 'svc_' + 'A'.repeat(43) },
      { 'X-API-Key': created.key },
      { Authorization: `Bearer ${created.key}` },
    ];
    for (const headers of attempts) {
      const res = await fetch(`${server.baseUrl}/api/events`, { headers });
      expect(res.status).toBe(401);
      expect(await res.text()).toBe('{"detail":"Not authenticated"}');
    }
  });

  it('refuses a Last-Event-ID or last_event_id that is not an event id (400 naming it)', async () => {
    for (const [query, headers, field] of [
      ['', { 'Last-Event-ID': 'abc' }, 'Last-Event-ID'],
      ['?last_event_id=-1', {}, 'last_event_id'],
      ['?last_event_id=x', {}, 'last_event_id'],
      ['?since=1', {}, 'since'],
    ] as const) {
      const res = await fetch(`${server.baseUrl}/api/events${query}`, { headers: { 'X-API-Key': key, ...headers } });
      expect(res.status, `${query} ${JSON.stringify(headers)}`).toBe(400);
      expect((await res.json()).detail).toMatch(new RegExp(`^${field}: `));
    }
  });

  it('is described in the OpenAPI document as text/event-stream with every event', async () => {
    const doc = await readJson(await server.request('/openapi.json'));
    const op = doc.paths['/api/events'].get;
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401']));
    const schema = op.responses['200'].content['text/event-stream'].schema;
    const names = (schema.anyOf ?? schema.oneOf).map((s: any) => s.properties.event.enum?.[0] ?? s.properties.event.const);
    expect(names).toEqual([
      'scan_queued',
      'scan_started',
      'scan_progress',
      'scan_finished',
      'change',
      'device_updated',
      'device_new',
      'device_offline',
      'device_online',
      'risk_changed',
    ]);
    expect(op.parameters.map((p: any) => `${p.in}:${p.name}`).sort()).toEqual(['header:last-event-id', 'query:last_event_id']);
  });
});

describe.each(testDatabases())('live events at shutdown ($kind)', (database) => {
  it('ends open streams when the server closes, so closing does not hang', async () => {
    const { server, key } = await startServerWithAdmin(database);
    const stream = await openSse(`${server.baseUrl}/api/events`, { 'X-API-Key': key });
    expect(stream.status).toBe(200);
    await server.close();
    await stream.ended;
    expect(server.app.services.events.subscribers).toBe(0);
  });
});
