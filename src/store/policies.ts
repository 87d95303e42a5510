import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { ZonePolicies, ZonePolicy } from '../core/policies.js';

/** Zone policies (CONTRACT §17): one row per zone, the policy as JSON; replaced as a whole. */
export class PolicyStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly onWrite: () => void,
  ) {}

  async get(): Promise<ZonePolicies> {
    const rows = await this.db.selectFrom('zone_policies').selectAll().orderBy('zone').execute();
    const out: ZonePolicies = {};
    for (const r of rows) out[r.zone] = JSON.parse(r.policy) as ZonePolicy;
    return out;
  }

  /** Replaces every policy with `policies` (`{}` clears them all). */
  async replace(policies: ZonePolicies): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('zone_policies').execute();
      const rows = Object.entries(policies).map(([zone, policy]) => ({ zone, policy: JSON.stringify(policy) }));
      if (rows.length > 0) await trx.insertInto('zone_policies').values(rows).execute();
    });
    this.onWrite();
  }
}
