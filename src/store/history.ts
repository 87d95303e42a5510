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

  private async devicesOf(scan: ScanRow): Promise<ComparedDevice[]> {
    const rows = await this.db
      .selectFrom('device_snapshots as s')
      .leftJoin('devices as d', 'd.id', 's.device_id')
      .select(['s.device_id', 's.ip_address', 's.mac_address', 's.hostname', 's.ports', 's.risk_level', 's.risk_score', 's.port_coverage', 'd.label'])
      .where('s.scan_id', '=', scan.id)
      .execute();
    return rows.map((r) => ({
      deviceId: r.device_id,
      ip: r.ip_address,
      mac: r.mac_address,
      hostname: r.hostname,
      label: r.label ?? null,
      ports: JSON.parse(r.ports) as PortState[],
      riskLevel: r.risk_level,
      riskScore: r.risk_score,
      examined: examinedInSnapshot(scan, r.port_coverage),
    }));
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
    const result = compareScans({ scan: a, devices: await this.devicesOf(current) }, { scan: b, devices: await this.devicesOf(previous) });
    return {
      current: toScanRecord(current),
      previous: toScanRecord(previous),
      summary: result.summary,
      devices: options.includeUnchanged ? result.devices : result.devices.filter((d) => d.status !== 'unchanged'),
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
