/**
 * The event relay (src/events/relay.ts) between processes on one PostgreSQL schema, each process
 * stood for by its own store (own pool) and own bus: events cross in order and marked remote, are
 * never echoed or sent around again, a message longer than a notification still arrives, another
 * schema hears nothing, cache invalidations are acknowledged by every other process before they
 * are answered, and a dropped listening connection is logged and opened again. On SQLite there is nothing to relay.
 */
import pg from 'pg';
import pino from 'pino';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventBus, type NetwardenEvent } from '../../src/events/bus.js';
import { startEventRelay, type EventRelay } from '../../src/events/relay.js';
import { openStore, type Store } from '../../src/store/index.js';
import { testDatabases, type OpenedDatabase } from '../helpers/databases.js';
import { waitFor } from '../helpers/wait.js';
import type { ScanRecord } from '../../src/schemas/scan.js';

const pgUrl = process.env.TEST_DATABASE_URL;

/** A logger whose lines the test can read. */
function capturingLogger() {
  const lines: Array<{ level: number; msg: string }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: pino({ level: 'debug' }, stream), lines };
}

function scanRecord(id: number, subnet = '127.0.0.1/32'): ScanRecord {
  return {
    scan_id: id,
    status: 'running',
    profile: 'quick',
    subnet,
    scan_type: 'network',
    target: null,
    started_at: new Date().toISOString(),
    completed_at: null,
    duration_seconds: null,
    devices_found: 0,
    error: null,
    triggered_by: 'test',
    progress: null,
    runner: null,
    agent_id: null,
    warnings: [],
    ports_examined: null,
    hosts_examined: null,
  };
}

/** One process: a store of its own on the schema, a bus, a relay. */
interface Proc {
  store: Store;
  bus: EventBus;
  relay: EventRelay;
  seen: NetwardenEvent[];
  lines: Array<{ level: number; msg: string }>;
}

describe.skipIf(!pgUrl)('the event relay on PostgreSQL', () => {
  const postgres = testDatabases().find((d) => d.kind === 'postgres')!;
  let opened: OpenedDatabase;
  const procs: Proc[] = [];

  async function proc(pgSchema = opened.pgSchema!): Promise<Proc> {
    const store = await openStore({ url: opened.url, pgSchema, poolSize: 3 });
    const bus = new EventBus();
    const seen: NetwardenEvent[] = [];
    bus.subscribe((e) => seen.push(e));
    const { log, lines } = capturingLogger();
    const relay = await startEventRelay({ store, bus, log, reconnectDelaysMs: [100, 200] });
    const p = { store, bus, relay, seen, lines };
    procs.push(p);
    return p;
  }

  beforeEach(async () => {
    opened = await postgres.open();
  });

  afterEach(async () => {
    for (const p of procs.splice(0)) {
      await p.relay.stop();
      await p.store.close();
    }
    await opened.cleanup();
  });

  it('publishes one process’s events on every other’s bus, in order, marked remote, without echo or a second relay', async () => {
    const a = await proc();
    const b = await proc();
    const c = await proc();
    for (let i = 1; i <= 50; i++) a.bus.publish('scan_progress', { scan_id: 7, progress: { phase: 'ports', percent: i } } as never);
    a.bus.publish('scan_finished', scanRecord(7));
    for (const other of [b, c]) {
      await waitFor('the events on the other buses', async () => other.seen.length >= 51);
    }
    for (const other of [b, c]) {
      expect(other.seen.map((e) => e.name)).toEqual([...Array(50).fill('scan_progress'), 'scan_finished']);
      expect(other.seen.every((e) => e.remote === true)).toBe(true);
      expect(other.seen.slice(0, 50).map((e) => (e.data as { progress: { percent: number } }).progress.percent)).toEqual(
        Array.from({ length: 50 }, (_, i) => i + 1),
      );
      // Numbered by the receiving bus.
      expect(other.seen.map((e) => e.id)).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
    }
    // A sends and hears nothing back; B and C do not pass on what they received. One more event
    // from B, after which nothing else can be in flight, shows it.
    b.bus.publish('scan_started', scanRecord(8));
    await waitFor('B’s event on A', async () => a.seen.some((e) => e.name === 'scan_started'));
    await waitFor('B’s event on C', async () => c.seen.some((e) => e.name === 'scan_started'));
    expect(a.seen.filter((e) => e.remote).map((e) => e.name)).toEqual(['scan_started']);
    expect(a.seen.filter((e) => !e.remote)).toHaveLength(51);
    expect(b.seen.filter((e) => !e.remote).map((e) => e.name)).toEqual(['scan_started']);
    expect(c.seen).toHaveLength(52);
  });

  it('carries an event longer than a notification can hold, in its place among the others', async () => {
    const a = await proc();
    const b = await proc();
    const long = { ...scanRecord(9), error: 'é'.repeat(20_000) };
    a.bus.publish('scan_started', scanRecord(9));
    a.bus.publish('scan_finished', long);
    a.bus.publish('scan_queued', scanRecord(10));
    await waitFor('the three events on B', async () => b.seen.length >= 3);
    expect(b.seen.map((e) => e.name)).toEqual(['scan_started', 'scan_finished', 'scan_queued']);
    expect((b.seen[1].data as ScanRecord).error).toBe('é'.repeat(20_000));
  });

  it('keeps schemas apart: a process on another schema hears nothing', async () => {
    const other = await postgres.open();
    try {
      const a = await proc();
      const b = await proc();
      const stranger = await proc(other.pgSchema);
      const strangersPeer = await proc(other.pgSchema);
      stranger.bus.publish('scan_started', scanRecord(12));
      await waitFor('the stranger’s event on its own schema', async () => strangersPeer.seen.length >= 1);
      // PostgreSQL delivers notifications in commit order: had the stranger's crossed, B would have it before A's.
      a.bus.publish('scan_started', scanRecord(11));
      await waitFor('A’s event on B', async () => b.seen.length >= 1);
      expect(b.seen.map((e) => (e.data as ScanRecord).scan_id)).toEqual([11]);
      expect(strangersPeer.seen.map((e) => (e.data as ScanRecord).scan_id)).toEqual([12]);
    } finally {
      for (const p of procs.splice(2)) {
        await p.relay.stop();
        await p.store.close();
      }
      await other.cleanup();
    }
  });

  it('answers a revocation or a configuration change only once every other process has emptied its cache', async () => {
    const a = await proc();
    const b = await proc();
    const c = await proc();
    const remoteRevocations = new Map<Proc, number>([
      [b, 0],
      [c, 0],
    ]);
    for (const p of [b, c]) {
      p.store.apiKeys.onRevoke((origin) => {
        if (origin === 'remote') remoteRevocations.set(p, (remoteRevocations.get(p) ?? 0) + 1);
      });
    }
    for (let round = 1; round <= 3; round++) {
      const key = await a.store.apiKeys.create({
        name: `k${round}`,
        prefix: `svc_abc${round}`,
        key_hash: String(round).repeat(64),
        created_at: new Date().toISOString(),
      });
      // No waiting: when revoke() returns, B and C have been told (they acknowledged it).
      await a.store.apiKeys.revoke(key.id);
      expect([...remoteRevocations.values()]).toEqual([round, round]);
    }

    // B and C read the configuration (now cached); C changes it: B's next read has the new one.
    const before = await b.store.settings.get();
    await c.store.settings.get();
    await c.store.settings.put({ ...before, server: { ...before.server, public_url: 'https://netwarden.example' } });
    expect((await b.store.settings.get()).server.public_url).toBe('https://netwarden.example');
    expect((await a.store.settings.get()).server.public_url).toBe('https://netwarden.example');
  });

  it('does not wait for a process that left, and forgets one that stopped answering', async () => {
    const a = await proc();
    const b = await proc();
    const leaving = await proc();
    await leaving.relay.stop();
    // A process that greeted the others and then died without a word (it never acknowledges).
    await a.store.relay.send('a-process-that-died', JSON.stringify({ t: 'hello' }));
    // Notifications arrive in commit order: once B's event is on A, so are the goodbye and the greeting.
    b.bus.publish('scan_started', scanRecord(14));
    await waitFor('B’s event on A', async () => a.seen.some((e) => e.remote && e.name === 'scan_started'));
    let remote = 0;
    b.store.apiKeys.onRevoke((origin) => {
      if (origin === 'remote') remote++;
    });
    const key = await a.store.apiKeys.create({ name: 'k', prefix: 'svc_abcd', key_hash: 'x'.repeat(64), created_at: new Date().toISOString() });
    await a.store.apiKeys.revoke(key.id);
    expect(remote).toBe(1);
    // Only the dead one was waited for (the one that left said so) and then forgotten.
    expect(a.lines.filter((l) => /did not acknowledge a cache invalidation/.test(l.msg))).toHaveLength(1);
    // Forgotten: the next revocation does not wait for it again (and logs nothing more).
    const second = await a.store.apiKeys.create({ name: 'k2', prefix: 'svc_abce', key_hash: 'y'.repeat(64), created_at: new Date().toISOString() });
    await a.store.apiKeys.revoke(second.id);
    expect(remote).toBe(2);
    expect(a.lines.filter((l) => /did not acknowledge a cache invalidation/.test(l.msg))).toHaveLength(1);
  });

  it('logs a dropped listening connection and listens again', async () => {
    const a = await proc();
    const b = await proc();
    const admin = new pg.Client({ connectionString: opened.url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ pid: number }>(`select pid from pg_stat_activity where query = $1 and pid <> pg_backend_pid()`, [
        `LISTEN "netwarden:${opened.pgSchema}"`,
      ]);
      expect(rows).toHaveLength(2);
      for (const { pid } of rows) await admin.query('select pg_terminate_backend($1)', [pid]);
    } finally {
      await admin.end();
    }
    for (const p of [a, b]) {
      await waitFor('the warning', async () => p.lines.some((l) => l.level === 40 && /lost its PostgreSQL connection/.test(l.msg)));
      await waitFor('listening again', async () => p.lines.some((l) => /listening again/.test(l.msg)));
    }
    a.bus.publish('scan_started', scanRecord(13));
    await waitFor('A’s event on B after the reconnection', async () => b.seen.some((e) => e.remote && e.name === 'scan_started'));
  });
});

describe('the event relay on SQLite', () => {
  it('does nothing', async () => {
    const sqlite = testDatabases().find((d) => d.kind === 'sqlite')!;
    const opened = await sqlite.open();
    try {
      const bus = new EventBus();
      const { log, lines } = capturingLogger();
      const relay = await startEventRelay({ store: opened.store, bus, log });
      bus.publish('scan_started', scanRecord(1));
      await relay.stop();
      expect(lines).toEqual([]);
      expect(opened.store.relay.available).toBe(false);
    } finally {
      await opened.cleanup();
    }
  });
});
