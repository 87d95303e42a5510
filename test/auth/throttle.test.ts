import { describe, expect, it } from 'vitest';
import { LOGIN_LIMITS, LoginThrottle, RateGate, clientKey, userKey } from '../../src/auth/throttle.js';
import { openStore, type Store } from '../../src/store/index.js';
import { freshDatabaseEachTest, testDatabases, type OpenedDatabase } from '../helpers/databases.js';

describe.each(testDatabases())('login throttle over the database ($kind)', (database) => {
  let db: OpenedDatabase;
  let store: Store;
  let now: number;
  const clock = () => now;

  freshDatabaseEachTest(database, (opened) => {
    db = opened;
    store = opened.store;
    now = Date.parse('2026-11-24T10:00:00.000Z');
  });

  const user = (name: string) => [{ key: userKey(name), limit: LOGIN_LIMITS.user }];

  it('admits exactly the limit of 60 attempts made at once, counting each before it is checked', async () => {
    const throttle = new LoginThrottle(store.loginFailures, clock);
    const results = await Promise.all(Array.from({ length: 60 }, () => throttle.admit(user('admin'))));
    expect(results.filter((r) => r.ok)).toHaveLength(LOGIN_LIMITS.user.limit);
    const refused = results.filter((r) => !r.ok);
    expect(refused).toHaveLength(60 - LOGIN_LIMITS.user.limit);
    for (const r of refused) if (!r.ok) expect(r.retryAfterSeconds).toBe(15 * 60);
  });

  it('shares one count between two stores on the same database (two instances)', async () => {
    {
      // A second store over the same database, as a second instance would open it.
      const second = await openStore({ url: db.url, ...(db.pgSchema ? { pgSchema: db.pgSchema } : {}) });
      try {
        const a = new LoginThrottle(store.loginFailures, clock);
        const b = new LoginThrottle(second.loginFailures, clock);
        for (let i = 0; i < 3; i++) expect((await a.admit(user('Admin'))).ok).toBe(true);
        for (let i = 0; i < 2; i++) expect((await b.admit(user('admin'))).ok).toBe(true);
        expect((await a.admit(user('ADMIN'))).ok).toBe(false);
        expect((await b.admit(user('admin'))).ok).toBe(false);
      } finally {
        await second.close();
      }
    }
  });

  it('starts a new window once the old one has ended, and says how long to wait until then', async () => {
    const throttle = new LoginThrottle(store.loginFailures, clock);
    for (let i = 0; i < 5; i++) await throttle.admit(user('a'));
    now += 10 * 60_000;
    const refused = await throttle.admit(user('a'));
    expect(refused).toEqual({ ok: false, retryAfterSeconds: 5 * 60 });
    now += 5 * 60_000;
    expect((await throttle.admit(user('a'))).ok).toBe(true);
  });

  it('takes back a successful attempt and clears the keys it is told to', async () => {
    const throttle = new LoginThrottle(store.loginFailures, clock);
    const keys = [
      { key: clientKey('192.0.2.7'), limit: { limit: 2, windowMs: 60_000 } },
      { key: userKey('a'), limit: { limit: 2, windowMs: 60_000 } },
    ];
    const first = await throttle.admit(keys);
    const second = await throttle.admit(keys);
    if (!first.ok || !second.ok) throw new Error('expected both admitted');
    // The second attempt succeeded: the username starts afresh, the client keeps its one failure.
    await throttle.succeeded(second.admission, [userKey('a')]);
    expect((await throttle.admit([keys[1]])).ok).toBe(true);
    expect((await throttle.admit([keys[0]])).ok).toBe(true);
    expect((await throttle.admit([keys[0]])).ok).toBe(false);
  });

  it('purges counters whose window has ended, keeping current ones', async () => {
    const throttle = new LoginThrottle(store.loginFailures, clock);
    await throttle.admit(user('old'));
    now += 16 * 60_000;
    await throttle.admit(user('new'));
    expect(await throttle.purge()).toBe(1);
    const left = await store.db.selectFrom('login_failures').select('key').execute();
    expect(left.map((r) => r.key)).toEqual([userKey('new')]);
  });
});

describe('RateGate', () => {
  it('lets one event per key per interval through and counts the ones it held back', () => {
    const gate = new RateGate(60_000);
    expect(gate.pass('ip', 0)).toBe(0);
    expect(gate.pass('ip', 1_000)).toBeNull();
    expect(gate.allow('ip', 59_999)).toBe(false);
    expect(gate.pass('other', 59_999)).toBe(0);
    expect(gate.pass('ip', 60_000)).toBe(2);
    expect(gate.pass('ip', 120_000)).toBe(0);
  });

  it('keeps at most maxKeys keys, forgetting the oldest', () => {
    const gate = new RateGate(60_000, 3);
    for (const k of ['a', 'b', 'c', 'd']) gate.pass(k, 0);
    // 'a' was forgotten: it passes again at once; 'd' is still remembered.
    expect(gate.pass('a', 1)).toBe(0);
    expect(gate.pass('d', 1)).toBeNull();
  });
});
