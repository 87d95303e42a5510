import { type Kysely, sql } from 'kysely';
import type { Database } from './schema.js';
import { openPortCount } from './port-rows.js';
import type { Stats, TrendPoint } from '../schemas/stats.js';
import { AT_RISK_LEVELS } from '../core/severity.js';
import { VersionedCache } from './versioned-cache.js';

export type { Stats, TrendPoint } from '../schemas/stats.js';

/**
 * Longest the counts are reused even when no write was seen. Writes are seen through the store's
 * data version: at once for this process's, within a second for other processes' on the database.
 */
const CACHE_MS = 60_000;

export class StatsStore {
  private readonly cache: VersionedCache<Stats>;

  constructor(
    private readonly db: Kysely<Database>,
    version: () => Promise<number>,
  ) {
    this.cache = new VersionedCache(version, CACHE_MS, 1);
  }

  /** Counts over the inventory, recomputed only after the data changed (GET /api/stats). */
  stats(): Promise<Stats> {
    return this.cache.get('stats', () => this.compute());
  }

  private async compute(): Promise<Stats> {
    const count = (level: string) => sql<number>`coalesce(sum(case when risk_level = ${level} then 1 else 0 end), 0)`;
    const [devices, ports, scans] = await Promise.all([
      this.db
        .selectFrom('devices')
        .select((eb) => [
          eb.fn.countAll<number>().as('total'),
          count('critical').as('critical'),
          count('high').as('high'),
          count('medium').as('medium'),
          count('low').as('low'),
          sql<number>`coalesce(sum(online), 0)`.as('online'),
        ])
        .where('status', '<>', 'archived')
        .executeTakeFirstOrThrow(),
      // Archived devices are left out of the stats (CONTRACT §18).
      openPortCount(this.db, { excludeArchived: true }),
      this.db
        .selectFrom('scans')
        .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('completed_at').as('last')])
        .where('status', '=', 'completed')
        .executeTakeFirstOrThrow(),
    ]);
    const counts = { critical: Number(devices.critical), high: Number(devices.high), medium: Number(devices.medium), low: Number(devices.low) };
    return {
      total_devices: Number(devices.total),
      devices_at_risk: AT_RISK_LEVELS.reduce((n, level) => n + counts[level], 0),
      ...counts,
      online_devices: Number(devices.online),
      open_ports: ports,
      total_scans: Number(scans.n),
      last_scan: scans.last ?? null,
    };
  }

  /** One point per completed network scan finished within the last `days` days, oldest first. */
  async trends(days: number, now = new Date()): Promise<TrendPoint[]> {
    const since = new Date(now.getTime() - days * 86_400_000).toISOString();
    const level = (l: string) => sql<number>`coalesce(sum(case when s.risk_level = ${l} then 1 else 0 end), 0)`;
    const rows = await this.db
      .selectFrom('scans as sc')
      .leftJoin('device_snapshots as s', 's.scan_id', 'sc.id')
      .where('sc.status', '=', 'completed')
      .where('sc.scan_type', '=', 'network')
      .where('sc.completed_at', '>=', since)
      .groupBy(['sc.id', 'sc.completed_at'])
      .orderBy('sc.completed_at')
      .orderBy('sc.id')
      .select((eb) => [
        'sc.id as scan_id',
        'sc.completed_at as timestamp',
        eb.fn.count<number>('s.id').as('devices'),
        sql<number>`coalesce(sum(case when s.risk_level in (${sql.join([...AT_RISK_LEVELS])}) then 1 else 0 end), 0)`.as('at_risk'),
        level('critical').as('critical'),
        level('high').as('high'),
        sql<number>`coalesce(sum(s.open_port_count), 0)`.as('open_ports'),
        sql<number>`coalesce(avg(s.risk_score), 0)`.as('avg_risk_score'),
        eb
          .selectFrom('changes as c')
          .whereRef('c.scan_id', '=', 'sc.id')
          .select((e) => e.fn.countAll<number>().as('n'))
          .as('changes'),
      ])
      .execute();
    return rows.map((r) => ({
      scan_id: r.scan_id,
      timestamp: r.timestamp as string,
      devices: Number(r.devices),
      at_risk: Number(r.at_risk),
      critical: Number(r.critical),
      high: Number(r.high),
      open_ports: Number(r.open_ports),
      avg_risk_score: Math.round(Number(r.avg_risk_score) * 10) / 10,
      changes: Number(r.changes ?? 0),
    }));
  }
}
