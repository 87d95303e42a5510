/**
 * What the network map (core/topology.ts) reads: the devices (not archived) a page at a time in
 * address order, the devices that may be gateways, the subnets completed scans targeted, and the
 * switch layer (which device hangs off which switch or access point, store/device-links.ts).
 */
import { sql, type Kysely } from 'kysely';
import { GATEWAY_DEVICE_TYPES, type Attachment, type TopologyDevice } from '../core/topology.js';
import { DeviceLinkStore } from './device-links.js';
import type { RiskLevel } from '../core/severity.js';
import type { Database } from './schema.js';

export interface TopologyFilters {
  /** Only addresses in [low, high] (a subnet filter). */
  range?: { low: number; high: number };
  zone?: string;
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
   * The devices (archived left out) matching the filters in address order, `pageSize` at a time:
   * keyset pages on the address index, so only one page is held at a time.
   */
  async *iterate(filters: TopologyFilters, pageSize: number): AsyncGenerator<TopologyDevice[]> {
    let base = this.db.selectFrom('devices').where('status', '<>', 'archived');
    if (filters.range) base = base.where('ip_sort', '>=', filters.range.low).where('ip_sort', '<=', filters.range.high);
    if (filters.zone !== undefined) base = base.where('zone', '=', filters.zone);
    let after: { ipSort: number; id: number } | null = null;
    for (;;) {
      let page = base.select(COLUMNS);
      if (after) page = page.where(sql<boolean>`(${sql.ref('ip_sort')}, ${sql.ref('id')}) > (${after.ipSort}, ${after.id})`);
      const rows = (await page.orderBy('ip_sort').orderBy('id').limit(pageSize).execute()) as Row[];
      if (rows.length === 0) return;
      yield rows.map(toDevice);
      if (rows.length < pageSize) return;
      const last = rows[rows.length - 1];
      after = { ipSort: Number(last.ip_sort), id: last.id };
    }
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
