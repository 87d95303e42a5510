import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * The addresses of the devices online after the last completed scan whose address lies in
 * [low, high] (as integers, devices.ip_sort): the hosts a scan of that block expects to find up,
 * which the scan manager port-scans while discovery still runs (src/engines/pipeline.ts).
 */
export async function onlineAddressesBetween(db: Kysely<Database>, low: number, high: number): Promise<string[]> {
  const rows = await db
    .selectFrom('devices')
    .select('ip_address')
    .where('online', '=', 1)
    .where('ip_sort', '>=', low)
    .where('ip_sort', '<=', high)
    // In address order on both stores (PostgreSQL's heap order moves as rows are rewritten).
    .orderBy('ip_sort')
    .execute();
  return rows.map((r) => r.ip_address);
}
