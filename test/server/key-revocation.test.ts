/**
 * API keys are verified from memory (src/auth/api-key-cache.ts), so revocation must still reach
 * every instance: two real `netwarden serve` processes on one database (SQLite file, and
 * PostgreSQL when TEST_DATABASE_URL is set). A key revoked on one instance is refused there on its
 * very next request and by the other within about a second; so is a key revoked with
 * `netwarden keys revoke` while both run. Polled, never timed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliDatastore, type ServeProcess, bodyOf, cliDatastores, client, runCli, sessionCookieOf, startServe } from '../cli/helpers.js';

const ADMIN = { username: 'admin', password: 'correct horse battery' };

describe.each(cliDatastores())('revoking an API key with two server processes on one database ($kind)', ({ create }) => {
  let ds: CliDatastore;
  let a: ServeProcess;
  let b: ServeProcess;
  let cookie: string;

  beforeAll(async () => {
    ds = await create();
    a = await startServe(ds);
    const setup = await client(a.baseUrl)('/api/auth/setup', { method: 'POST', json: ADMIN });
    expect(setup.status).toBe(201);
    cookie = sessionCookieOf(setup);
    b = await startServe(ds);
  }, 60_000);

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await ds?.cleanup();
  });

  async function newKey(name: string): Promise<{ id: number; key: string }> {
    const created = await client(a.baseUrl)('/api/keys', { method: 'POST', cookie, json: { name } });
    expect(created.status).toBe(201);
    const body = await bodyOf(created);
    // Used on both instances first, so each holds it as verified.
    for (const server of [a, b]) {
      for (let i = 0; i < 3; i++) expect((await client(server.baseUrl)('/api/stats', { key: body.key })).status).toBe(200);
    }
    return { id: body.id, key: body.key };
  }

  const statusOn = async (server: ServeProcess, key: string) => (await client(server.baseUrl)('/api/stats', { key })).status;

  it('refuses a key revoked on A at once on A, and on B within about a second', async () => {
    const { id, key } = await newKey('revoked-on-a');
    expect((await client(a.baseUrl)(`/api/keys/${id}`, { method: 'DELETE', cookie })).status).toBe(200);
    expect(await statusOn(a, key)).toBe(401);
    await expect.poll(() => statusOn(b, key), { timeout: 10_000, interval: 100 }).toBe(401);
    // And it stays refused on both.
    expect(await statusOn(a, key)).toBe(401);
    expect(await statusOn(b, key)).toBe(401);
  });

  it('refuses a key revoked with `netwarden keys revoke` on both running instances', async () => {
    const { id, key } = await newKey('revoked-by-cli');
    const other = await newKey('still-good');
    const revoked = await runCli(ds, ['keys', 'revoke', String(id)]);
    expect(revoked.code, revoked.stderr).toBe(0);
    await expect.poll(() => statusOn(a, key), { timeout: 10_000, interval: 100 }).toBe(401);
    await expect.poll(() => statusOn(b, key), { timeout: 10_000, interval: 100 }).toBe(401);
    // The other key is unaffected.
    expect(await statusOn(a, other.key)).toBe(200);
    expect(await statusOn(b, other.key)).toBe(200);
  });
});
