import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

export interface FailureCount {
  /** Attempts counted in the current window, including the one just counted. */
  count: number;
  /** When the current window started (ISO 8601). */
  windowStart: string;
}

/**
 * Login attempt counters in the database, so that every instance sharing it enforces one limit.
 * Each key counts in a fixed window that starts at its first attempt; `count` increments and reads
 * in one statement, so concurrent attempts can never all see the same old value.
 */
export class LoginFailureStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Counts one attempt against `key` and returns the count in the window (a new window when the last one ended). */
  async count(key: string, now: string, windowStartsAfter: string): Promise<FailureCount> {
    const { rows } = await sql<{ failures: number; window_start: string }>`
      insert into login_failures (key, failures, window_start) values (${key}, 1, ${now})
      on conflict (key) do update set
        failures = case when login_failures.window_start <= ${windowStartsAfter} then 1 else login_failures.failures + 1 end,
        window_start = case when login_failures.window_start <= ${windowStartsAfter} then excluded.window_start else login_failures.window_start end
      returning failures, window_start`.execute(this.db);
    return { count: Number(rows[0].failures), windowStart: rows[0].window_start };
  }

  /** Takes back one counted attempt (it turned out not to be a failure). */
  async uncount(key: string): Promise<void> {
    await this.db
      .updateTable('login_failures')
      .set((eb) => ({ failures: eb('failures', '-', 1) }))
      .where('key', '=', key)
      .where('failures', '>', 0)
      .execute();
  }

  async reset(key: string): Promise<void> {
    await this.db.deleteFrom('login_failures').where('key', '=', key).execute();
  }

  /** Drops the counters whose window ended; they no longer limit anything. */
  async purge(windowStartsAfter: string): Promise<number> {
    const result = await this.db.deleteFrom('login_failures').where('window_start', '<=', windowStartsAfter).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
