/**
 * Free-text device search (`q`) through the search index of migration 009 finds exactly what the
 * plain scan finds: the same LIKE the store ran before the index, over the same joined columns,
 * run here directly as the reference. Over generated devices whose text mixes cases, non-ASCII
 * letters (whose case SQLite's LIKE does not fold but the trigram index does), LIKE's special
 * characters and quotes; terms short and long; before and after devices are edited and deleted
 * (the index follows by triggers on SQLite, by the expression index on PostgreSQL).
 */
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ipv4ToInt } from '../../src/core/net.js';
import type { Store } from '../../src/store/index.js';
import { testDatabases, type OpenedDatabase } from '../helpers/databases.js';

const AT = '2026-01-05T10:00:00.000Z';
const COLUMNS = ['ip_address', 'mac_address', 'hostname', 'vendor', 'label', 'notes', 'os_name', 'device_type', 'zone'] as const;
const SEPARATOR = '\u001f';

const WORDS = [
  'Raspberry',
  'NAS',
  'nas',
  'Größe',
  'ÉCOLE',
  'école',
  'İstanbul',
  'straße',
  'STRASSE',
  '100%',
  'a_b',
  'back\\slash',
  'say "hi"',
  'cam-01',
  'b8:27:eb',
  'Ωmega',
  'ωMEGA',
  '日本語',
  'lan',
  'LAN',
  'x',
];

const TERMS = [
  ...WORDS,
  ...WORDS.map((w) => w.toUpperCase()),
  ...[
    '%',
    '_',
    '\\',
    '%_',
    '0%',
    'a%b',
    'a_b',
    'k\\s',
    '"',
    '""',
    'y "h',
    'é',
    'É',
    'éc',
    'ÉCO',
    'Éco',
    'İ',
    'i̇',
    'ß',
    'SS',
    'ss',
    'ωm',
    'Ωm',
    'ΩME',
  ],
  ...[
    '1',
    '22',
    '443',
    '8080',
    '10.',
    '10.66',
    '.1',
    ':27',
    'a',
    'ab',
    'ra',
    'ras',
    'rasp',
    '  lan  ',
    'nothing-here',
    `nas${SEPARATOR}`,
    '日本',
    '本語',
  ],
];

function generate(count: number, seed: number) {
  // A small seeded generator (an LCG): the same devices on every run.
  let state = seed;
  const random = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
  const text = () => {
    if (random() < 0.25) return null;
    const parts = Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(WORDS));
    return parts.join(pick([' ', '', '-', '.']));
  };
  return Array.from({ length: count }, (_, i) => {
    const ip = `10.66.${Math.floor(i / 250)}.${(i % 250) + 1}`;
    return {
      identity: `ip:${ip}`,
      ip_address: ip,
      ip_sort: ipv4ToInt(ip),
      mac_address: random() < 0.5 ? `b8:27:eb:00:${(i >> 8).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}` : null,
      hostname: text(),
      vendor: text(),
      label: text(),
      notes: text(),
      os_name: text(),
      device_type: text(),
      zone: text(),
      mac_randomized: 0,
      is_trusted: 0,
      risk_level: 'none',
      risk_score: 0,
      online: 1,
      first_seen: AT,
      last_seen: AT,
      ports: [22, 443, 8080, 1].filter(() => random() < 0.3),
    };
  });
}

/** The store's search before migration 009, run directly: one LIKE over the joined columns (or each column), or an open port. */
async function referenceSearch(store: Store, term: string): Promise<number[]> {
  const db = store.db as unknown as Kysely<unknown>;
  const search = term.trim();
  const pattern = `%${search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const lower = (e: ReturnType<typeof sql>) => (store.dialect === 'postgres' ? sql`lower(${e})` : e);
  const joined = sql.join(
    COLUMNS.map((c) => sql`coalesce(${sql.ref(c)}, '')`),
    sql` || ${sql.lit(SEPARATOR)} || `,
  );
  const text = search.includes(SEPARATOR)
    ? sql.join(
        COLUMNS.map((c) => sql`lower(${sql.ref(c)}) like ${pattern} escape '\\'`),
        sql` or `,
      )
    : sql`${lower(sql`(${joined})`)} like ${pattern} escape '\\'`;
  const port = /^\d{1,5}$/.test(search) && Number(search) <= 65535 ? Number(search) : null;
  const byPort = port === null ? sql`` : sql` or id in (select device_id from ports where port = ${port} and state = 'open')`;
  const { rows } = await sql<{ id: number }>`select id from devices where ${text}${byPort} order by id`.execute(db);
  return rows.map((r) => Number(r.id));
}

async function indexedSearch(store: Store, term: string): Promise<{ ids: number[]; total: number }> {
  const { rows, total } = await store.devices.list({ search: term, limit: 100_000, offset: 0 });
  return { ids: rows.map((r) => r.id).sort((a, b) => a - b), total };
}

async function expectSameResults(store: Store) {
  for (const term of TERMS) {
    const expected = await referenceSearch(store, term);
    const found = await indexedSearch(store, term);
    expect({ term, ids: found.ids, total: found.total }).toEqual({ term, ids: expected, total: expected.length });
    // A small page of a counted search walks the address index with the plain test instead (ids
    // follow addresses here, so the first page is the lowest ids).
    const page = await store.devices.list({ search: term, limit: 3, offset: 0 });
    expect({ term, ids: page.rows.map((r) => r.id) }).toEqual({ term, ids: expected.slice(0, 3) });
  }
}

describe.each(testDatabases())('device search index ($kind)', (database) => {
  let opened: OpenedDatabase;
  let store: Store;

  beforeAll(async () => {
    opened = await database.open();
    store = opened.store;
    for (const { ports, ...device } of generate(400, 9)) {
      const row = await store.devices.insert(device);
      for (const port of ports) {
        await sql`insert into ports (device_id, port, protocol, state, first_seen, last_seen) values (${row.id}, ${port}, 'tcp', ${port === 1 ? 'closed' : 'open'}, ${AT}, ${AT})`.execute(
          store.db,
        );
      }
    }
  });
  afterAll(() => opened?.cleanup());

  it('finds exactly what the plain scan finds', async () => {
    // Sanity: the generated terms find something and nothing, so the comparison means something.
    expect((await referenceSearch(store, 'école')).length).toBeGreaterThan(0);
    expect((await referenceSearch(store, 'ÉCOLE')).length).toBeGreaterThan(0);
    expect(await referenceSearch(store, 'nothing-here')).toEqual([]);
    await expectSameResults(store);
  });

  it('still does after devices are edited and deleted', async () => {
    const db = store.db as unknown as Kysely<unknown>;
    await store.devices.updateUserFieldsMany([1, 2, 3, 50], { label: 'Renamed ÉCOLE 100%', notes: null, zone: 'lan_b' });
    await store.devices.update(4, { hostname: 'Ωmega-cam-zq', vendor: null, os_name: 'Größe' });
    await store.devices.update(5, { risk_score: 10 }); // not a searched column
    await sql`delete from devices where id in (6, 7, 8)`.execute(db);
    const rows = generate(3, 77);
    for (const [i, { ports: _ports, ...device }] of rows.entries()) {
      await store.devices.insert({ ...device, identity: `ip:10.99.0.${i}`, ip_address: `10.99.0.${i}`, ip_sort: ipv4ToInt(`10.99.0.${i}`) });
    }
    expect(await indexedSearch(store, 'renamed')).toEqual({ ids: [1, 2, 3, 50], total: 4 });
    expect((await indexedSearch(store, 'mega-cam-zq')).ids).toEqual([4]);
    await expectSameResults(store);
    // SQLite: the triggers delete a row's entries by the text indexed for it (migration 023): after
    // the edits and deletes the index holds exactly the entries an index built afresh holds.
    if (store.dialect === 'sqlite') {
      await sql`insert into devices_search (devices_search) values ('integrity-check')`.execute(db);
      const joined = sql.join(
        COLUMNS.map((c) => sql`coalesce(${sql.ref(c)}, '')`),
        sql` || ${sql.lit(SEPARATOR)} || `,
      );
      await sql`create virtual table temp.fresh_search using fts5(searched, content='', tokenize='trigram')`.execute(db);
      await sql`insert into temp.fresh_search (rowid, searched) select id, ${joined} from devices`.execute(db);
      await sql`create virtual table temp.kept_terms using fts5vocab(main, devices_search, instance)`.execute(db);
      await sql`create virtual table temp.fresh_terms using fts5vocab(temp, fresh_search, instance)`.execute(db);
      const entries = async (table: string) =>
        (
          await sql<{ e: string }>`select term || ' ' || doc || ' ' || "offset" as e from ${sql.table(`temp.${table}`)} order by 1`.execute(db)
        ).rows.map((r) => r.e);
      const kept = await entries('kept_terms');
      expect(kept.length).toBeGreaterThan(1000);
      expect(kept).toEqual(await entries('fresh_terms'));
    }
  });

  it('has the index', async () => {
    const db = store.db as unknown as Kysely<unknown>;
    const { rows } =
      store.dialect === 'postgres'
        ? await sql<{
            name: string;
          }>`select indexname as name from pg_indexes where schemaname = current_schema() and indexname = 'devices_search'`.execute(db)
        : await sql<{ name: string }>`select name from pragma_table_list where schema = 'main' and type = 'virtual'`.execute(db);
    expect(rows.map((r) => r.name)).toEqual(['devices_search']);
  });
});
