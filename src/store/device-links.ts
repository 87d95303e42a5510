/**
 * Which device hangs off which switch or access point (migration 021, core/device-links.ts): the
 * links the UniFi controller and the switches' SNMP tables state, one row per device and source.
 * A source's rows are replaced whenever it is read again (`replace`): the controller's all at once
 * (its lists are the whole site), a switch's own rows when that switch answered. Deleting and
 * merging devices keep the rows on both sides consistent (store/device-merge.ts).
 */
import type { Kysely } from 'kysely';
import {
  chooseLinks,
  LINK_SOURCES,
  type DeviceLink,
  type LinkedDevice,
  type LinkParentKind,
  type LinkSource,
  type LinkVia,
} from '../core/device-links.js';
import { normalizeMac } from '../core/mac.js';
import { IDS_PER_STATEMENT, chunks } from '../util/batches.js';
import { insertMany } from './bulk.js';
import type { Database } from './schema.js';

/** Which of a source's rows a refresh replaces: all of them, or those of the given parents (the switches that answered). */
export type LinkScope = { all: true } | { parents: readonly number[] };

/** Which devices' links to read: those (not archived) in an address range and a zone. */
export interface LinkFilters {
  range?: { low: number; high: number };
  zone?: string;
}

export interface StoredLink extends DeviceLink {
  scanId: number | null;
  seenAt: string;
}

const LINK_COLUMNS = {
  device_id: 'integer',
  parent_device_id: 'integer',
  parent_kind: 'text',
  via: 'text',
  port: 'text',
  source: 'text',
  scan_id: 'integer',
  seen_at: 'text',
} as const;

export class DeviceLinkStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly onWrite: () => void,
  ) {}

  /** The devices holding these MACs (normalised upper-case colon form), by MAC. */
  async devicesByMac(macs: readonly string[]): Promise<Map<string, LinkedDevice>> {
    const out = new Map<string, LinkedDevice>();
    const wanted = [...new Set(macs.map((m) => normalizeMac(m)).filter((m): m is string => m !== null))];
    for (const part of chunks(wanted, IDS_PER_STATEMENT)) {
      const rows = await this.db
        .selectFrom('devices')
        .select(['id', 'mac_address', 'device_type'])
        .where('mac_address', 'in', part)
        .orderBy('id')
        .execute();
      for (const r of rows) if (r.mac_address && !out.has(r.mac_address)) out.set(r.mac_address, { id: r.id, deviceType: r.device_type });
    }
    return out;
  }

  /** These devices (those that exist), by id. */
  async devicesById(ids: readonly number[]): Promise<Map<number, LinkedDevice>> {
    const out = new Map<number, LinkedDevice>();
    for (const part of chunks([...new Set(ids)], IDS_PER_STATEMENT)) {
      const rows = await this.db.selectFrom('devices').select(['id', 'device_type']).where('id', 'in', part).execute();
      for (const r of rows) out.set(r.id, { id: r.id, deviceType: r.device_type });
    }
    return out;
  }

  /** The devices at these addresses, by address. */
  async devicesByIp(ips: readonly string[]): Promise<Map<string, LinkedDevice>> {
    const out = new Map<string, LinkedDevice>();
    for (const part of chunks([...new Set(ips)], IDS_PER_STATEMENT)) {
      const rows = await this.db
        .selectFrom('devices')
        .select(['id', 'ip_address', 'device_type'])
        .where('ip_address', 'in', part)
        .orderBy('id')
        .execute();
      for (const r of rows) if (!out.has(r.ip_address)) out.set(r.ip_address, { id: r.id, deviceType: r.device_type });
    }
    return out;
  }

  /**
   * Replaces `source`'s rows in `scope` by `links` (one per device: a later one of the same device
   * is ignored), and any row of `source` for a device now linked, in one transaction.
   */
  async replace(
    source: LinkSource,
    scope: LinkScope,
    links: readonly Omit<DeviceLink, 'source'>[],
    scanId: number | null,
    at: string,
  ): Promise<void> {
    const rows = new Map<number, Omit<DeviceLink, 'source'>>();
    for (const link of links) if (link.deviceId !== link.parentDeviceId && !rows.has(link.deviceId)) rows.set(link.deviceId, link);
    await this.db.transaction().execute(async (trx) => {
      if ('all' in scope) {
        await trx.deleteFrom('device_links').where('source', '=', source).execute();
      } else {
        for (const part of chunks([...scope.parents], IDS_PER_STATEMENT))
          await trx.deleteFrom('device_links').where('source', '=', source).where('parent_device_id', 'in', part).execute();
        for (const part of chunks([...rows.keys()], IDS_PER_STATEMENT))
          await trx.deleteFrom('device_links').where('source', '=', source).where('device_id', 'in', part).execute();
      }
      // Only devices that still exist (a device deleted while the source was read is left out).
      const present = new Set<number>();
      const ids = [...new Set([...rows.values()].flatMap((l) => [l.deviceId, l.parentDeviceId]))];
      for (const part of chunks(ids, IDS_PER_STATEMENT))
        for (const r of await trx.selectFrom('devices').select('id').where('id', 'in', part).execute()) present.add(r.id);
      const values = [...rows.values()]
        .filter((l) => present.has(l.deviceId) && present.has(l.parentDeviceId))
        .map((l) => ({
          device_id: l.deviceId,
          parent_device_id: l.parentDeviceId,
          parent_kind: l.parentKind,
          via: l.via,
          port: l.port,
          source,
          scan_id: scanId,
          seen_at: at,
        }));
      if (values.length > 0) await insertMany(trx, 'device_links', LINK_COLUMNS, values);
    });
    this.onWrite();
  }

  /**
   * The stored links, in device order; with `below`, only those of devices (not archived) whose
   * address lies in `range` and whose zone is `zone` (the map's filters).
   */
  async list(below?: LinkFilters): Promise<StoredLink[]> {
    let query = this.db.selectFrom('device_links as l').selectAll('l').orderBy('l.device_id').orderBy('l.source');
    if (below && (below.range || below.zone !== undefined)) {
      // The devices the filters keep first (a subnet's or a zone's from their index), then their links.
      let devices = this.db.selectFrom('devices').select('id').where('status', '<>', 'archived');
      if (below.range) devices = devices.where('ip_sort', '>=', below.range.low).where('ip_sort', '<=', below.range.high);
      if (below.zone !== undefined) devices = devices.where('zone', '=', below.zone);
      query = query.where('l.device_id', 'in', devices);
    } else if (below) {
      // Every device not archived: the links first, each one's device looked up by its key (an `in (…)` over every
      // device made SQLite list 100,000 ids for a table of a few links).
      query = query.where((eb) =>
        eb.exists(eb.selectFrom('devices as d').select('d.id').whereRef('d.id', '=', 'l.device_id').where('d.status', '<>', 'archived')),
      );
    }
    const rows = await query.execute();
    return rows
      .filter((r) => (LINK_SOURCES as readonly string[]).includes(r.source))
      .map((r) => ({
        deviceId: r.device_id,
        parentDeviceId: r.parent_device_id,
        parentKind: r.parent_kind as LinkParentKind,
        via: r.via as LinkVia,
        port: r.port,
        source: r.source as LinkSource,
        scanId: r.scan_id,
        seenAt: r.seen_at,
      }));
  }

  /** One link per device (core/device-links.ts chooseLinks): what the map draws. */
  async chosen(below?: LinkFilters): Promise<DeviceLink[]> {
    return chooseLinks(await this.list(below));
  }
}
