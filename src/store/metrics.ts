import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import { openPortCount } from './port-rows.js';

/** Upper bounds (seconds) of the scan duration histogram's buckets; `+Inf` is implied. */
export const SCAN_DURATION_BUCKETS = [1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 21_600] as const;

/** What GET /metrics reports from the database: the same on every instance sharing it. */
export interface MetricsSnapshot {
  /** Devices per risk level over the whole inventory (levels without devices are absent). */
  devicesByRisk: { risk_level: string; count: number }[];
  devicesOnline: number;
  /** Open port rows over the inventory, as GET /api/stats counts them. */
  openPorts: number;
  scansByStatus: { status: string; count: number }[];
  /** Durations of completed scans: cumulative counts per bucket of SCAN_DURATION_BUCKETS, their number and sum. */
  scanDurations: { buckets: number[]; count: number; sum: number };
  changes: { change_type: string; severity: string; count: number }[];
  /** Notification deliveries by channel type and delivery status. */
  notifications: { type: string; status: string; count: number }[];
}

/**
 * Aggregates for the Prometheus endpoint, read at scrape time: a handful of grouped counts, each
 * one statement (on indexed columns where there is one), so any instance reports the same values.
 */
export class MetricsStore {
  constructor(private readonly db: Kysely<Database>) {}

  async snapshot(): Promise<MetricsSnapshot> {
    const below = (bound: number) => sql<number>`coalesce(sum(case when duration_seconds <= ${bound} then 1 else 0 end), 0)`;
    const [risk, online, ports, scans, durations, changes, notifications] = await Promise.all([
      this.db
        .selectFrom('devices')
        .select((eb) => ['risk_level', eb.fn.countAll<number>().as('n')])
        .groupBy('risk_level')
        .execute(),
      this.db
        .selectFrom('devices')
        .select(sql<number>`coalesce(sum(online), 0)`.as('n'))
        .executeTakeFirstOrThrow(),
      openPortCount(this.db),
      this.db
        .selectFrom('scans')
        .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
        .groupBy('status')
        .execute(),
      this.db
        .selectFrom('scans')
        .where('status', '=', 'completed')
        .where('duration_seconds', 'is not', null)
        .select((eb) => [
          eb.fn.countAll<number>().as('n'),
          sql<number>`coalesce(sum(duration_seconds), 0)`.as('total'),
          ...SCAN_DURATION_BUCKETS.map((bound, i) => below(bound).as(`b${i}`)),
        ])
        .executeTakeFirstOrThrow(),
      this.db
        .selectFrom('changes')
        .select((eb) => ['change_type', 'severity', eb.fn.countAll<number>().as('n')])
        .groupBy(['change_type', 'severity'])
        .execute(),
      this.db
        .selectFrom('notification_deliveries as d')
        .innerJoin('notification_channels as c', 'c.id', 'd.channel_id')
        .select((eb) => ['c.type as type', 'd.status as status', eb.fn.countAll<number>().as('n')])
        .groupBy(['c.type', 'd.status'])
        .execute(),
    ]);
    const bucketRow = durations as unknown as Record<string, unknown>;
    return {
      devicesByRisk: risk.map((r) => ({ risk_level: r.risk_level, count: Number(r.n) })),
      devicesOnline: Number(online.n),
      openPorts: ports,
      scansByStatus: scans.map((r) => ({ status: r.status, count: Number(r.n) })),
      scanDurations: {
        buckets: SCAN_DURATION_BUCKETS.map((_, i) => Number(bucketRow[`b${i}`])),
        count: Number(durations.n),
        sum: Number(durations.total),
      },
      changes: changes.map((r) => ({ change_type: r.change_type, severity: r.severity, count: Number(r.n) })),
      notifications: notifications.map((r) => ({ type: r.type, status: r.status, count: Number(r.n) })),
    };
  }
}
