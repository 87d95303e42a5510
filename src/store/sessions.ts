import type { Kysely, Selectable } from 'kysely';
import { nowIso } from './clock.js';
import type { Database, SessionsTable } from './schema.js';

export type SessionRow = Selectable<SessionsTable> & { username: string };

export class SessionStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(row: Selectable<SessionsTable>): Promise<void> {
    await this.db.insertInto('sessions').values(row).execute();
  }

  /** The session with this id and its user, if it has not expired. */
  findActive(id: string, now = nowIso()): Promise<SessionRow | undefined> {
    return this.db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .selectAll('sessions')
      .select('users.username')
      .where('sessions.id', '=', id)
      .where('sessions.expires_at', '>', now)
      .executeTakeFirst();
  }

  async touch(id: string, at = nowIso()): Promise<void> {
    await this.db.updateTable('sessions').set({ last_seen_at: at }).where('id', '=', id).execute();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('id', '=', id).execute();
  }

  /** Ends every session of a user except `keepId` (pass null to end all). */
  async deleteForUser(userId: number, keepId: string | null): Promise<number> {
    let q = this.db.deleteFrom('sessions').where('user_id', '=', userId);
    if (keepId) q = q.where('id', '!=', keepId);
    const result = await q.executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async purgeExpired(now = nowIso()): Promise<number> {
    const result = await this.db.deleteFrom('sessions').where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
