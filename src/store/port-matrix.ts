/**
 * Reads for the port matrix (CONTRACT §16, §18): the open ports of the inventory grouped by zone,
 * port, protocol and service (one aggregate query), and the devices with their open ports in
 * keyset pages on the address index, so the API can stream the answer a page at a time. Archived
 * devices are left out; offline devices count with their last known ports (the ports table keeps
 * them); devices with no open port are not listed.
 */
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { PortGroup } from '../core/port-matrix.js';
import type { RiskLevel } from '../core/severity.js';
import { IDS_PER_STATEMENT } from '../util/batches.js';
import type { Database } from './schema.js';

export interface PortMatrixFilters {
  /** Addresses `low`–`high` (ip_sort values, inclusive). */
  range?: { low: number; high: number };
  zone?: string;
}

export interface MatrixDeviceRow {
  id: number;
  ip_address: string;
  name: string | null;
  zone: string | null;
  device_type: string | null;
  online: boolean;
  risk_level: RiskLevel;
  risk_score: number;
  ports: { port: number; protocol: string; service: string | null }[];
}

/** Devices per page on SQLite: one `in (…)` list of their ids reads their ports. */
export const MATRIX_PAGE_SIZE = IDS_PER_STATEMENT;
/** Devices per page on PostgreSQL, whose ports are read with one array parameter (`= any($1)`): fewer round trips. */
export const MATRIX_PAGE_SIZE_POSTGRES = 2500;

/** The device (`devices` of the query) has an open port: one probe of the ports index. */
const hasOpenPort = () => sql<boolean>`exists (select 1 from ports where ports.device_id = devices.id and ports.state = 'open')`;

export class PortMatrixReader {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: 'sqlite' | 'postgres' = 'sqlite',
  ) {}

  /**
   * The matching devices. A zone's devices are read in address order from the index on
   * `(zone, ip_sort, id, status)` (migration 020), a range's from the one on `(ip_sort, id)`; their
   * open ports from the partial index on open ports (migration 020) alone.
   */
  private devices(filters: PortMatrixFilters): SelectQueryBuilder<Database, 'devices', object> {
    let q = this.db.selectFrom('devices').where('devices.status', '<>', 'archived');
    if (filters.zone !== undefined) q = q.where('devices.zone', '=', filters.zone);
    if (filters.range) q = q.where('devices.ip_sort', '>=', filters.range.low).where('devices.ip_sort', '<=', filters.range.high);
    return q;
  }

  /**
   * Open ports of the matching devices counted per zone, port, protocol and service, and how many
   * devices have any. The ports are reached from the matching devices' ids (`device_id in (…)`, the
   * ports index), never by a pass over every port row: SQLite would otherwise walk the whole ports
   * table for one subnet's matrix.
   */
  async groups(filters: PortMatrixFilters): Promise<{ groups: PortGroup[]; total: number }> {
    const columns = ['devices.zone', 'ports.port', 'ports.protocol', 'ports.service', sql<number>`count(*)`.as('n')] as const;
    const groupBy = ['devices.zone', 'ports.port', 'ports.protocol', 'ports.service'] as const;
    const grouped =
      this.dialect === 'postgres'
        ? // PostgreSQL: from the matching devices to their open ports. Joining the ports to every device row (the form
          // below) made it read the whole devices table to learn the zone of one zone's devices (EXPLAIN, 100,000 devices).
          this.devices(filters)
            .innerJoin('ports', 'ports.device_id', 'devices.id')
            .where('ports.state', '=', 'open')
            .select(columns)
            .groupBy(groupBy)
            .execute()
        : // SQLite: the ports reached from the matching devices' ids, read from the partial index on open ports alone (it
          // holds every column asked for, so no row of ports is read). Named with `indexed by` and the literal 'open'
          // because SQLite uses a partial index only for a query that names its condition as a literal, and otherwise
          // chose an index holding neither the protocol nor the service (one zone of 100,000 devices: ~40 ms more CPU).
          sql<{ zone: string | null; port: number; protocol: string; service: string | null; n: number }>`
            select devices.zone, ports.port, ports.protocol, ports.service, count(*) as n
            from ports indexed by ports_open_device inner join devices on devices.id = ports.device_id
            where ports.device_id in ${this.devices(filters).select('devices.id')} and ports.state = ${sql.lit('open')}
            group by devices.zone, ports.port, ports.protocol, ports.service`
            .execute(this.db)
            .then((r) => r.rows);
    const [rows, count] = await Promise.all([
      grouped,
      this.devices(filters)
        .where(hasOpenPort())
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow(),
    ]);
    return {
      groups: rows.map((r) => ({ zone: r.zone, port: r.port, protocol: r.protocol, service: r.service, devices: Number(r.n) })),
      total: Number(count.n),
    };
  }

  /**
   * The matching devices with an open port, in address order, a page at a time with their open
   * ports. The next page's devices are asked for while this page's ports are read (on PostgreSQL
   * the two run on two connections of the pool).
   */
  async *pages(filters: PortMatrixFilters, pageSize?: number): AsyncGenerator<MatrixDeviceRow[]> {
    const size = this.dialect === 'postgres' ? (pageSize ?? MATRIX_PAGE_SIZE_POSTGRES) : Math.min(pageSize ?? MATRIX_PAGE_SIZE, IDS_PER_STATEMENT);
    const devicePage = (after: { ipSort: number; id: number } | null) => {
      let page = this.devices(filters)
        .where(hasOpenPort())
        .select([
          'devices.id',
          'devices.ip_sort',
          'devices.ip_address',
          'devices.label',
          'devices.discovered_name',
          'devices.zone',
          'devices.device_type',
          'devices.online',
          'devices.risk_level',
          'devices.risk_score',
        ]);
      if (after) page = page.where(sql<boolean>`(${sql.ref('devices.ip_sort')}, ${sql.ref('devices.id')}) > (${after.ipSort}, ${after.id})`);
      return page.orderBy('devices.ip_sort').orderBy('devices.id').limit(size).execute();
    };
    let pending = devicePage(null);
    for (;;) {
      const rows = await pending;
      if (rows.length === 0) return;
      const more = rows.length === size;
      if (more) {
        const last = rows[rows.length - 1];
        pending = devicePage({ ipSort: Number(last.ip_sort), id: last.id });
        // Awaited on the next turn; a failure then is thrown there, not left unhandled meanwhile.
        pending.catch(() => undefined);
      }
      const ids = rows.map((r) => r.id);
      const ports = await this.db
        .selectFrom('ports')
        .select(['device_id', 'port', 'protocol', 'service'])
        .where((eb) => (this.dialect === 'postgres' ? eb(sql`device_id`, '=', sql`any(${ids}::int[])`) : eb('device_id', 'in', ids)))
        .where('state', '=', 'open')
        .orderBy('device_id')
        .orderBy('port')
        .orderBy('protocol')
        .execute();
      const byDevice = new Map<number, MatrixDeviceRow['ports']>();
      for (const p of ports) {
        let list = byDevice.get(p.device_id);
        if (!list) byDevice.set(p.device_id, (list = []));
        list.push({ port: p.port, protocol: p.protocol.toLowerCase(), service: p.service });
      }
      yield rows.map((r) => ({
        id: r.id,
        ip_address: r.ip_address,
        name: r.label ?? r.discovered_name,
        zone: r.zone,
        device_type: r.device_type,
        online: r.online === 1,
        risk_level: r.risk_level as RiskLevel,
        risk_score: r.risk_score,
        ports: byDevice.get(r.id) ?? [],
      }));
      if (!more) return;
    }
  }
}
