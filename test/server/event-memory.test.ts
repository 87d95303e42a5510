/**
 * Live events are bounded (CONTRACT §10, issue 19 §2): the replay buffer by bytes as well as by
 * count, and each event's data by size. A device whose hostname is a megabyte long (as a hostile
 * report, a name source or an old database could leave it) is edited 50 times through
 * PUT /api/devices/{id} on the real `netwarden serve` process; its resident memory, read from
 * /proc, grows by less than 64 MB, and the events a reconnecting client is replayed carry the
 * hostname trimmed and the notes whole.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { type CliDatastore, type ServeProcess, bodyOf, cliDatastores, client, openDatastore, sessionCookieOf, startServe } from '../cli/helpers.js';
import { ADMIN } from '../helpers/server.js';
import { openSse } from '../helpers/sse.js';

const REPORT = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'nmap-import', 'loopback-a.xml'), 'utf8');
/** The longest text a user can give a device (DEVICE_NOTES_MAX_LENGTH). */
const NOTES_MAX = 10_000;
/** Edits made: without the event bounds, their events alone would keep about half a gigabyte. */
const EDITS = 50;
/** The documented bound of one event's data (src/events/payload.ts). */
const EVENT_DATA_MAX_BYTES = 512 * 1024;

/**
 * What the server may still hold after the edits. On SQLite the search index re-tokenizes the
 * megabyte hostname for each edit (migration 023 deletes a row by its old text): native memory the
 * allocator keeps as a high-water mark, about 44 MB whether 100 or 250 edits are made (PostgreSQL
 * about 28 MB). Without the event bounds the replay buffer alone would hold about 10 MB per edit.
 */
const SETTLED_GROWTH_MAX = 64 * 1024 * 1024;
/** The server's old-space cap in this test (its idle heap is well under half of it). */
const HEAP_CAP_MB = 96;

/** Resident memory of a process, in bytes. */
function rssOf(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (!kb) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb) * 1024;
}

describe.each(cliDatastores())('device edits with a megabyte hostname ($kind)', ({ create }) => {
  let ds: CliDatastore | undefined;
  let serve: ServeProcess | undefined;
  let store: Store | undefined;
  afterEach(async () => {
    await serve?.stop();
    serve = undefined;
    await store?.close();
    store = undefined;
    await ds?.cleanup();
    ds = undefined;
  });

  it(`${EDITS} edits keep the server’s RSS growth under 64 MB; events carry bounded data`, { timeout: 120_000 }, async () => {
    ds = await create();
    // A capped old space makes V8 collect the edits' garbage as it goes (a full collection before
    // the heap may grow past the cap) instead of whenever a busy machine lets it: what stays
    // resident is then what the server keeps, however loaded the machine. Without the bounds the
    // replay buffer alone would hold ~1 GB and the process would die of it. A semi-space size of
    // its own (Node 20's default) keeps `serve` from holding the young generation small while it
    // starts (src/young-generation.ts): otherwise its growth under the edits' load, up to 32 MB of
    // V8's sizing rather than anything the server keeps, would count as growth here.
    serve = await startServe(ds, { NODE_OPTIONS: `--max-old-space-size=${HEAP_CAP_MB} --max-semi-space-size=16` });
    const http = client(serve.baseUrl);
    const cookie = sessionCookieOf(await http('/api/auth/setup', { method: 'POST', json: ADMIN }));
    const imported = await fetch(`${serve.baseUrl}/api/scans/import`, {
      method: 'POST',
      headers: { Cookie: cookie, 'Content-Type': 'application/xml' },
      body: REPORT,
    });
    expect(imported.status, await imported.clone().text()).toBe(201);
    const [device] = await bodyOf(await http('/api/devices', { cookie }));
    expect(device).toBeDefined();

    // The hostname is already in the database (it never passes through PUT, which cannot set it).
    store = await openDatastore(ds);
    const hostname = `${'h'.repeat(1024 * 1024)}.example`;
    await store.db.updateTable('devices').set({ hostname }).where('id', '=', device.id).execute();

    const edit = async (i: number) => {
      const notes = `${String(i).padStart(6, '0')} ${'n'.repeat(NOTES_MAX - 7)}`;
      const res = await http(`/api/devices/${device.id}`, { method: 'PUT', cookie, json: { notes } });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    };
    const pid = serve.child.pid as number;
    const before = rssOf(pid);
    for (let i = 0; i < EDITS; i++) await edit(i);
    // Each edit reads and answers the megabyte hostname a few times over; V8 hands that garbage
    // back at its next full collection, which an idle process gets within seconds (its memory
    // reducer). What is still resident then is what the server kept.
    let growth = rssOf(pid) - before;
    const settleBy = Date.now() + 30_000;
    while (growth >= SETTLED_GROWTH_MAX && Date.now() < settleBy) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      growth = rssOf(pid) - before;
    }
    expect(growth, `RSS grew by ${(growth / 1024 / 1024).toFixed(1)} MB`).toBeLessThan(SETTLED_GROWTH_MAX);

    // A client that missed everything is replayed what was kept: bounded events, the newest edit among them.
    const stream = await openSse(`${serve.baseUrl}/api/events`, { Cookie: cookie, 'Last-Event-ID': '0' });
    expect(stream.status).toBe(200);
    await stream.until((s) => s.events.some((e) => e.data.includes(`"${String(EDITS - 1).padStart(6, '0')} `)), 'the last edit to be replayed');
    stream.close();
    const replayed = stream.events;
    // The edits' events (the import before them published its own).
    const updates = replayed.filter((e) => e.event === 'device_updated' && /"notes":"\d{6} /.test(e.data));
    expect(updates.length).toBeGreaterThan(0);
    for (const update of updates) {
      expect(Buffer.byteLength(update.data, 'utf8')).toBeLessThanOrEqual(EVENT_DATA_MAX_BYTES);
      const data = JSON.parse(update.data) as { id: number; hostname: string; notes: string };
      expect(data.id).toBe(device.id);
      expect(data.hostname.endsWith('…')).toBe(true);
      expect(hostname.startsWith(data.hostname.slice(0, -1))).toBe(true);
      // Within the limit, a user's own text is never cut.
      expect(data.notes).toHaveLength(NOTES_MAX);
    }
    // The device itself is untouched: the whole hostname is one GET away.
    expect((await bodyOf(await http(`/api/devices/${device.id}`, { cookie }))).hostname).toBe(hostname);
  });
});
