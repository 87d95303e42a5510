import type { Kysely, Transaction } from 'kysely';
import { matchHosts } from '../core/identity.js';
import { isLocallyAdministered } from '../core/mac.js';
import { ipv4ToInt } from '../core/net.js';
import { isOpenPort, type DiscoveredHost, type ScannedHost, type ScannedPort } from '../core/model.js';
import type { Database } from './schema.js';
import { IDS_PER_STATEMENT, chunks, rowsPerInsert } from '../util/batches.js';
import { portColumns } from './port-rows.js';

export interface SeenDevice {
  deviceId: number;
  ip: string;
  isNew: boolean;
  /** The device's IP before this scan, when it changed. */
  previousIp: string | null;
}

/** A decision of identity resolution that is not the plain one (src/core/identity.ts), for the scan's log. */
export interface IdentityNote {
  ip: string;
  mac: string | null;
  /** The device the host was recorded as; null when it was not recorded. */
  deviceId: number | null;
  reason: string;
}

export interface DiscoveryRecord {
  seen: SeenDevice[];
  notes: IdentityNote[];
}

/** Writes scan results into the device inventory, one transaction per phase. */
export class InventoryWriter {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly onWrite: () => void,
  ) {}

  /**
   * Records the live hosts of a discovery: new devices are created, known ones (matched by MAC,
   * else IP; the rules are in src/core/identity.ts) get their address, MAC, vendor and hostname
   * refreshed. Label, zone, trust and notes are never touched. Whatever the engine reported, this
   * does not violate devices.identity: hosts that cannot be placed are left out, with a note.
   * Presence (online, missed scans) is not decided here but when the scan completes
   * (ScanEvaluator, core/presence.ts): a scan that fails after discovery changes no presence.
   */
  async recordDiscovery(scanId: number, hosts: DiscoveredHost[], at: string): Promise<DiscoveryRecord> {
    const record = await this.db.transaction().execute(async (trx) => {
      const known = await trx.selectFrom('devices').select(['id', 'identity', 'ip_address', 'mac_address', 'last_seen']).execute();
      const previousIp = new Map(known.map((d) => [d.id, d.ip_address]));
      const { decisions, dropped } = matchHosts(hosts, known);
      const seen: SeenDevice[] = [];
      const notes: IdentityNote[] = dropped.map(({ host, reason }) => ({ ip: String(host.ip), mac: host.mac, deviceId: null, reason }));
      for (const decision of decisions) {
        const { host } = decision;
        const common = {
          identity: decision.identity,
          ip_address: host.ip,
          ip_sort: ipv4ToInt(host.ip),
          last_seen: at,
          last_scan_id: scanId,
        };
        let deviceId = decision.deviceId;
        if (deviceId === null) {
          const row = await trx
            .insertInto('devices')
            .values({
              ...common,
              mac_address: host.mac,
              mac_randomized: host.mac && isLocallyAdministered(host.mac) ? 1 : 0,
              hostname: host.hostname,
              vendor: host.vendor,
              first_seen: at,
            })
            .returning('id')
            .executeTakeFirstOrThrow();
          deviceId = row.id;
          seen.push({ deviceId, ip: host.ip, isNew: true, previousIp: null });
        } else {
          await trx
            .updateTable('devices')
            .set({
              ...common,
              ...(host.mac ? { mac_address: host.mac, mac_randomized: isLocallyAdministered(host.mac) ? 1 : 0 } : {}),
              ...(host.vendor ? { vendor: host.vendor } : {}),
              ...(host.hostname ? { hostname: host.hostname } : {}),
            })
            .where('id', '=', deviceId)
            .execute();
          const before = previousIp.get(deviceId) ?? null;
          seen.push({ deviceId, ip: host.ip, isNew: false, previousIp: before !== host.ip ? before : null });
        }
        if (decision.reason) notes.push({ ip: host.ip, mac: host.mac, deviceId, reason: decision.reason });
        await recordIp(trx, deviceId, host.ip, at);
      }
      return { seen, notes };
    });
    this.onWrite();
    return record;
  }

  /** Replaces the current ports of each scanned device and refreshes OS details. One transaction. */
  async recordPorts(results: { deviceId: number; host: ScannedHost }[], at: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      for (const { deviceId, host } of results) {
        const existing = await trx.selectFrom('ports').select(['port', 'protocol', 'first_seen']).where('device_id', '=', deviceId).execute();
        const firstSeen = new Map(existing.map((p) => [`${p.protocol}/${p.port}`, p.first_seen]));
        await trx.deleteFrom('ports').where('device_id', '=', deviceId).execute();
        // Closed ports are only listed when few were scanned; they are not part of the inventory.
        const rows = dedupe(host.ports.filter((p) => p.state !== 'closed')).map((p) => ({
          device_id: deviceId,
          ...portColumns(p),
          first_seen: firstSeen.get(`${p.protocol}/${p.port}`) ?? at,
          last_seen: at,
        }));
        for (const batch of chunks(rows, rowsPerInsert(12))) await trx.insertInto('ports').values(batch).execute();
        if (host.os_name || host.device_type) {
          await trx
            .updateTable('devices')
            .set({ ...(host.os_name ? { os_name: host.os_name } : {}), ...(host.device_type ? { device_type: host.device_type } : {}) })
            .where('id', '=', deviceId)
            .execute();
        }
      }
    });
    this.onWrite();
  }

  /** Stores how each device looked in this scan (its current ports and risk), for /api/scans/{id}/devices. */
  async recordSnapshots(scanId: number, deviceIds: number[]): Promise<void> {
    if (deviceIds.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const ids of chunks(deviceIds, IDS_PER_STATEMENT)) {
        const devices = await trx.selectFrom('devices').selectAll().where('id', 'in', ids).execute();
        const ports = await trx
          .selectFrom('ports')
          .select(['device_id', 'port', 'protocol', 'state', 'service', 'product', 'version'])
          .where('device_id', 'in', ids)
          .orderBy('port')
          .execute();
        const byDevice = new Map<number, typeof ports>();
        for (const p of ports) (byDevice.get(p.device_id) ?? byDevice.set(p.device_id, []).get(p.device_id)!).push(p);
        const rows = devices.map((d) => {
          const list = (byDevice.get(d.id) ?? []).map(({ device_id: _, ...p }) => p);
          return {
            scan_id: scanId,
            device_id: d.id,
            ip_address: d.ip_address,
            ip_sort: d.ip_sort,
            mac_address: d.mac_address,
            hostname: d.hostname,
            vendor: d.vendor,
            os_name: d.os_name,
            ports: JSON.stringify(list),
            open_port_count: list.filter(isOpenPort).length,
            risk_level: d.risk_level,
            risk_score: d.risk_score,
          };
        });
        for (const batch of chunks(rows, rowsPerInsert(13))) await trx.insertInto('device_snapshots').values(batch).execute();
      }
    });
    this.onWrite();
  }
}

async function recordIp(trx: Transaction<Database>, deviceId: number, ip: string, at: string): Promise<void> {
  await trx
    .insertInto('ip_history')
    .values({ device_id: deviceId, ip_address: ip, first_seen: at, last_seen: at })
    .onConflict((oc) => oc.columns(['device_id', 'ip_address']).doUpdateSet({ last_seen: at }))
    .execute();
}

function dedupe(ports: ScannedPort[]): ScannedPort[] {
  const seen = new Map<string, ScannedPort>();
  for (const p of ports) seen.set(`${p.protocol}/${p.port}`, p);
  return [...seen.values()];
}
