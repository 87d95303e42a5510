/**
 * What the network map (core/topology.ts) reads: the devices (not archived) a page at a time in
 * address order, the devices that may be gateways, the subnets completed scans targeted, and the
 * switch layer (which device hangs off which switch or access point, store/device-links.ts).
 */
import { sql, type Kysely } from 'kysely';
import { GATEWAY_DEVICE_TYPES, type Attachment, type TopologyDevice, type TopologyDeviceGroup } from '../core/topology.js';
import { DeviceLinkStore } from './device-links.js';
import type { RiskLevel } from '../core/severity.js';
import type { Database } from './schema.js';

export interface TopologyFilters {
  /** Only addresses in [low, high] (a subnet filter). */
  range?: { low: number; high: number };
  zone?: string;
  /** Only these devices. */
  ids?: readonly number[];
}

const COLUMNS = ['id', 'ip_address', 'ip_sort', 'label', 'discovered_name', 'hostname', 'device_type', 'risk_level', 'online', 'zone'] as const;

type Row = {
  id: number;
  ip_address: string;
  ip_sort: number | string;
  label: string | null;
  discovered_name: string | null;
  hostname: string | null;
  device_type: string | null;
  risk_level: string;
  online: number;
  zone: string | null;
};

function toDevice(row: Row): TopologyDevice {
  return {
    id: row.id,
    ip_address: row.ip_address,
    ip_sort: Number(row.ip_sort),
    name: row.label ?? row.discovered_name,
    hostname: row.hostname,
    device_type: row.device_type,
    risk_level: row.risk_level as RiskLevel,
    online: Number(row.online) === 1,
    zone: row.zone,
  };
}

export class TopologyStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * The devices (archived left out) matching the filters, `pageSize` at a time, so only one page is
   * held at a time. With an address range (a subnet) in address order: keyset pages on the address
   * index over that range only. Without one, in id order: keyset pages on the primary key, which
   * reads the whole table at about half the cost of walking the address index and looking each row up.
   */
  async *iterate(filters: TopologyFilters, pageSize: number): AsyncGenerator<TopologyDevice[]> {
    if (filters.ids && filters.ids.length === 0) return;
    const base = this.filtered(filters);
    const byAddress = filters.range !== undefined;
    let after: { ipSort: number; id: number } | null = null;
    for (;;) {
      let page = base.select(COLUMNS);
      if (after && byAddress) {
        // The next page starts after the last one's (address, id): a range on the (ip_sort, id) index, written
        // without a row value so both stores walk the index from there.
        const { ipSort, id } = after;
        page = page.where((eb) => eb.or([eb('ip_sort', '>', ipSort), eb.and([eb('ip_sort', '=', ipSort), eb('id', '>', id)])]));
        page = page.where('ip_sort', '>=', ipSort);
      } else if (after) page = page.where('id', '>', after.id);
      page = byAddress ? page.orderBy('ip_sort').orderBy('id') : page.orderBy('id');
      const rows = (await page.limit(pageSize).execute()) as Row[];
      if (rows.length === 0) return;
      yield rows.map(toDevice);
      if (rows.length < pageSize) return;
      const last = rows[rows.length - 1];
      after = { ipSort: Number(last.ip_sort), id: last.id };
    }
  }

  /** Devices not archived matching the filters (a subnet is a range of the address index). */
  private filtered(filters: TopologyFilters) {
    let base = this.db.selectFrom('devices').where('status', '<>', 'archived');
    if (filters.range) base = base.where('ip_sort', '>=', filters.range.low).where('ip_sort', '<=', filters.range.high);
    if (filters.zone !== undefined) base = base.where('zone', '=', filters.zone);
    if (filters.ids) base = base.where('id', 'in', [...filters.ids]);
    return base;
  }

  /**
   * The devices matching the filters (but those of `exclude`) counted per /256 block of addresses,
   * risk level and presence: what the overview draws, without reading the devices one by one.
   */
  async blockCounts(filters: TopologyFilters, exclude: readonly number[]): Promise<TopologyDeviceGroup[]> {
    let query = this.filtered(filters);
    if (exclude.length > 0) query = query.where('id', 'not in', [...exclude]);
    const block = sql<number | string>`${sql.ref('ip_sort')} / 256`;
    const rows = await query
      .select([block.as('block'), 'risk_level', 'online', (eb) => eb.fn.countAll<number | string>().as('count')])
      .groupBy([block, 'risk_level', 'online'])
      .execute();
    return rows.map((r) => ({
      block: Math.floor(Number(r.block)),
      risk_level: r.risk_level as RiskLevel,
      online: Number(r.online) === 1,
      count: Number(r.count),
    }));
  }

  /** Devices (not archived) that may be a gateway: the one at `address` (the default route's gateway), routers and firewalls. */
  async gatewayCandidates(address: string | null): Promise<TopologyDevice[]> {
    const rows = (await this.db
      .selectFrom('devices')
      .select(COLUMNS)
      .where('status', '<>', 'archived')
      .where((eb) => {
        const types = eb('device_type', 'in', [...GATEWAY_DEVICE_TYPES]);
        return address ? eb.or([types, eb('ip_address', '=', address)]) : types;
      })
      .orderBy('ip_sort')
      .orderBy('id')
      .execute()) as Row[];
    return rows.map(toDevice);
  }

  /** The distinct subnets completed network scans targeted. */
  async scannedSubnets(): Promise<string[]> {
    const rows = await this.db
      .selectFrom('scans')
      .select('subnet')
      .distinct()
      .where('status', '=', 'completed')
      .where('scan_type', '=', 'network')
      .execute();
    return rows.map((r) => r.subnet);
  }

  /**
   * The switch layer: one link per device that a source confirms (a controller's or switch's
   * table; core/device-links.ts chooseLinks), as the map builder's attachments. The builder makes
   * the parents `switch` and `access_point` nodes between the subnet and their clients, with
   * `confirmed` edges naming the source; every other device stays on its subnet. Only the links of
   * the devices the filters keep are read, so a subnet's answer stays proportional to it.
   */
  async attachments(filters: TopologyFilters = {}): Promise<Attachment[]> {
    const links = await new DeviceLinkStore(this.db, () => {}).chosen(filters);
    return links.map((l) => ({
      device_id: l.deviceId,
      parent_device_id: l.parentDeviceId,
      kind: l.via,
      parent_kind: l.parentKind,
      source: l.source,
    }));
  }
}
