import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * Named leases: a row per piece of work that must happen once across every instance sharing the
 * database (the daily retention run, a schedule's slot). Taking one is a single statement that
 * succeeds only when the lease is free, expired, or already ours.
 */
export class LeaseStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * True when `owner` now holds `name` until `expiresAt`. With `renew`, a lease `owner` already
   * holds is extended; without it, only a free or expired lease is taken (work due once a period).
   */
  async acquire(name: string, owner: string, now: string, expiresAt: string, { renew = false } = {}): Promise<boolean> {
    const mine = renew ? sql`or leases.owner = excluded.owner` : sql``;
    const { rows } = await sql<{ owner: string }>`
      insert into leases (name, owner, expires_at) values (${name}, ${owner}, ${expiresAt})
      on conflict (name) do update set owner = excluded.owner, expires_at = excluded.expires_at
        where leases.expires_at <= ${now} ${mine}
      returning owner`.execute(this.db);
    return rows.length === 1 && rows[0].owner === owner;
  }

  async release(name: string, owner: string): Promise<void> {
    await this.db.deleteFrom('leases').where('name', '=', name).where('owner', '=', owner).execute();
  }
}
