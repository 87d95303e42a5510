import type { Kysely } from 'kysely';
import { nowIso } from './clock.js';
import type { Database, UserRow } from './schema.js';

export class UserStore {
  constructor(private readonly db: Kysely<Database>) {}

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  findByUsername(username: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
  }

  findById(id: number): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async create(username: string, passwordHash: string): Promise<UserRow> {
    const now = nowIso();
    return this.db
      .insertInto('users')
      .values({ username, password_hash: passwordHash, created_at: now, password_changed_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /**
   * Creates the first user only while no user exists. Returns undefined when one already does;
   * the check and the insert share a serializable transaction so two concurrent set-ups cannot
   * both win (PostgreSQL's default isolation would let both see an empty table).
   */
  async createFirst(username: string, passwordHash: string): Promise<UserRow | undefined> {
    try {
      return await this.db
        .transaction()
        .setIsolationLevel('serializable')
        .execute(async (trx) => {
          const existing = await trx.selectFrom('users').select('id').limit(1).executeTakeFirst();
          if (existing) return undefined;
          const now = nowIso();
          return trx
            .insertInto('users')
            .values({ username, password_hash: passwordHash, created_at: now, password_changed_at: now })
            .returningAll()
            .executeTakeFirstOrThrow();
        });
    } catch (err) {
      // PostgreSQL: a concurrent set-up committed first (serialization failure or the same username).
      if (['40001', '23505'].includes((err as { code?: string }).code ?? '')) return undefined;
      throw err;
    }
  }

  async setPassword(id: number, passwordHash: string): Promise<void> {
    await this.db.updateTable('users').set({ password_hash: passwordHash, password_changed_at: nowIso() }).where('id', '=', id).execute();
  }

  list(): Promise<UserRow[]> {
    return this.db.selectFrom('users').selectAll().orderBy('id').execute();
  }
}
