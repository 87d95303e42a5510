/**
 * Reads over the scans' history (CONTRACT §16, §18): two scans compared device by device, and one
 * device's timeline. The rules are pure (core/compare.ts, core/timeline.ts); this reads what they
 * need: each scan's snapshots with what the scan itself examined on each device, and the scans,
 * sightings and changes of one device.
 */
import type { Kysely } from 'kysely';
import { comparabilityProblem, compareScans, type ComparedDevice, type ComparedScan } from '../core/compare.js';
import type { PortState } from '../core/changes.js';
import { emptyCoverage, parseSegments, storedCoverage, type PortCoverage } from '../core/coverage.js';
import { presenceIntervals } from '../core/timeline.js';
import type { Comparison } from '../schemas/compare.js';
import type { Timeline } from '../schemas/timeline.js';
import { ConflictError, InvalidInputError, NotFoundError } from '../util/errors.js';
import type { ChangeRecord } from './changes.js';
import type { Database, ScanRow } from './schema.js';
import { targetRange, toScanRecord } from './scans.js';

/** A scan as the comparison reads it (a subnet that does not read as IPv4, never recorded so, is an empty range). */
function comparedScan(row: ScanRow): ComparedScan {
  const range = row.target_low !== null && row.target_high !== null ? { low: row.target_low, high: row.target_high } : targetRange(row.subnet);
  return {
    id: row.id,
    status: row.status,
    subnet: row.subnet,
    profile: row.profile,
    completedAt: row.completed_at,
    low: range?.low ?? 0,
    high: range?.high ?? -1,
    portsExamined: row.port_list,
  };
}

/**
 * The ports scan `scan` itself examined on a device, from its snapshot: the segment of the device's
 * coverage that scan holds (none: it examined none there); for a snapshot older than coverage
 * (migration 014), the scan's port list; null when neither is known (every port then counts).
 */
export function examinedInSnapshot(scan: Pick<ScanRow, 'id' | 'port_list' | 'profile'>, portCoverage: string | null): PortCoverage | null {
  if (portCoverage !== null) {
    const segment = parseSegments(portCoverage).find((s) => s.scan_id === scan.id);
    return segment ? (storedCoverage(segment.ports) ?? emptyCoverage()) : emptyCoverage();
  }
  if (scan.port_list !== null) return storedCoverage(scan.port_list);
  return scan.profile === 'quick' ? emptyCoverage() : null;
}

export class HistoryStore {
  constructor(private readonly db: Kysely<Database>) {}

  private async scan(id: number, name: string): Promise<ScanRow> {
    const row = await this.db.selectFrom('scans').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw new NotFoundError(`Scan not found: ${name} ${id}`);
    return row;
  }

  /**
   * The devices the two scans saw that may differ, as each scan saw them, read set-based (a few
   * statements, whatever the number of devices): every device both saw whose address, ports or
   * risk differ between its two snapshots (a device whose snapshots agree on all of them is
   * `unchanged` and counts in no total, so it is not read unless `all`), and every device only one
   * of them saw. The joins walk the unique `(scan_id, device_id)` index of the snapshots.
   */
  private async candidates(current: ScanRow, previous: ScanRow, all: boolean): Promise<{ current: ComparedDevice[]; previous: ComparedDevice[] }> {
    const columns = ['ip_address', 'mac_address', 'hostname', 'ports', 'risk_level', 'risk_score', 'port_coverage'] as const;
    let both = this.db
      .selectFrom('device_snapshots as c')
      .innerJoin('device_snapshots as p', (join) => join.onRef('p.device_id', '=', 'c.device_id').on('p.scan_id', '=', previous.id))
      .leftJoin('devices as d', 'd.id', 'c.device_id')
      .select(['c.device_id', 'd.label'])
      .select(columns.map((c) => `c.${c} as c_${c}` as const))
      .select(columns.map((c) => `p.${c} as p_${c}` as const))
      .where('c.scan_id', '=', current.id);
    if (!all) {
      both = both.where((eb) =>
        eb.or([
          eb('c.ip_address', '<>', eb.ref('p.ip_address')),
          eb('c.ports', '<>', eb.ref('p.ports')),
          eb('c.risk_level', '<>', eb.ref('p.risk_level')),
          eb('c.risk_score', '<>', eb.ref('p.risk_score')),
        ]),
      );
    }
    const onlyIn = (scan: ScanRow, other: ScanRow) =>
      this.db
        .selectFrom('device_snapshots as s')
        .leftJoin('devices as d', 'd.id', 's.device_id')
        .select(['s.device_id', 'd.label', ...columns.map((c) => `s.${c}` as const)])
        .where('s.scan_id', '=', scan.id)
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('device_snapshots as o')
                .select('o.device_id')
                .whereRef('o.device_id', '=', 's.device_id')
                .where('o.scan_id', '=', other.id),
            ),
          ),
        )
        .execute();
    const [pairs, added, removed] = await Promise.all([both.execute(), onlyIn(current, previous), onlyIn(previous, current)]);
    const device = (scan: ScanRow, id: number, label: string | null | undefined, r: Record<(typeof columns)[number], unknown>): ComparedDevice => ({
      deviceId: id,
      ip: r.ip_address as string,
      mac: r.mac_address as string | null,
      hostname: r.hostname as string | null,
      label: label ?? null,
      ports: JSON.parse(r.ports as string) as PortState[],
      riskLevel: r.risk_level as string,
      riskScore: r.risk_score as number,
      examined: examinedInSnapshot(scan, r.port_coverage as string | null),
    });
    const prefixed = (r: Record<string, unknown>, prefix: string) =>
      Object.fromEntries(columns.map((c) => [c, r[`${prefix}${c}`]])) as Record<(typeof columns)[number], unknown>;
    return {
      current: [
        ...pairs.map((r) => device(current, r.device_id, r.label, prefixed(r, 'c_'))),
        ...added.map((r) => device(current, r.device_id, r.label, r)),
      ],
      previous: [
        ...pairs.map((r) => device(previous, r.device_id, r.label, prefixed(r, 'p_'))),
        ...removed.map((r) => device(previous, r.device_id, r.label, r)),
      ],
    };
  }

  /**
   * Scan `currentId` compared with scan `previousId`: NotFoundError for an unknown scan,
   * ConflictError for one not completed, InvalidInputError for the same scan twice or disjoint targets.
   */
  async compare(currentId: number, previousId: number, options: { includeUnchanged?: boolean } = {}): Promise<Comparison> {
    const current = await this.scan(currentId, 'current_id');
    const previous = await this.scan(previousId, 'previous_id');
    const a = comparedScan(current);
    const b = comparedScan(previous);
    const problem = comparabilityProblem(a, b);
    if (problem) throw problem.kind === 'conflict' ? new ConflictError(problem.message) : new InvalidInputError(problem.message);
    const includeUnchanged = options.includeUnchanged ?? false;
    const devices = await this.candidates(current, previous, includeUnchanged);
    const result = compareScans({ scan: a, devices: devices.current }, { scan: b, devices: devices.previous });
    return {
      current: toScanRecord(current),
      previous: toScanRecord(previous),
      summary: result.summary,
      devices: includeUnchanged ? result.devices : result.devices.filter((d) => d.status !== 'unchanged'),
    };
  }

  /**
   * Device `deviceId`'s timeline over the last `days` days up to `now`; undefined for an unknown device.
   * `offlineAfterScans` is presence.offline_after_scans (the device's own threshold, when it has one, wins).
   */
  async timeline(deviceId: number, days: number, now: string, offlineAfterScans: number): Promise<Timeline | undefined> {
    const device = await this.db
      .selectFrom('devices')
      .select(['id', 'ip_sort', 'first_seen', 'offline_after_scans'])
      .where('id', '=', deviceId)
      .executeTakeFirst();
    if (!device) return undefined;
    const since = new Date(Date.parse(now) - days * 86_400_000).toISOString();
    const seenBy = this.db.selectFrom('device_snapshots').select('scan_id').where('device_id', '=', deviceId);
    const scans = await this.db
      .selectFrom('scans')
      .select(['id', 'completed_at'])
      .select((eb) => eb('id', 'in', seenBy).as('seen'))
      .where('status', '=', 'completed')
      .where('completed_at', '>=', since)
      .where((eb) =>
        eb.or([
          eb.and([eb('scan_type', '=', 'network'), eb('target_low', '<=', device.ip_sort), eb('target_high', '>=', device.ip_sort)]),
          eb('id', 'in', seenBy),
        ]),
      )
      .orderBy('completed_at')
      .orderBy('id')
      .execute();
    const changes = (await this.db
      .selectFrom('changes')
      .selectAll()
      .where('device_id', '=', deviceId)
      .where('detected_at', '>=', since)
      .orderBy('id')
      .execute()) as ChangeRecord[];
    const timelineScans = scans.map((s) => ({ scan_id: s.id, at: s.completed_at as string, seen: Boolean(Number(s.seen)) }));
    return {
      device_id: deviceId,
      days,
      from: since,
      to: now,
      presence: presenceIntervals(timelineScans, {
        firstSeen: device.first_seen,
        offlineAfterScans: device.offline_after_scans ?? offlineAfterScans,
        now,
      }),
      changes,
      scans: timelineScans,
    };
  }
}
