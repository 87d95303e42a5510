import { sql, type Kysely, type Transaction } from 'kysely';
import { insertManyWith, insertTuples, isPostgres, updateManyById, type Tuple } from './bulk.js';
import { covers, emptyCoverage, examineSegments, parseSegments, unionCoverage, type PortCoverage } from '../core/coverage.js';
import { groupBy } from '../util/group-by.js';
import { matchHosts } from '../core/identity.js';
import { isLocallyAdministered } from '../core/mac.js';
import { ipv4ToInt } from '../core/net.js';
import type { DiscoveredHost, FactSource, ScannedHost, ScannedPort } from '../core/model.js';
import type { Database } from './schema.js';
import { IDS_PER_STATEMENT, chunks } from '../util/batches.js';
import { portColumns, portsHash, type PortColumns } from './port-rows.js';
import { evidenceOfField, fieldPattern } from './evidence.js';

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

/**
 * The known devices among `decisions` whose stored vendor is the one recognition set (the device's
 * evidence names it as its vendor) while the host shows the same MAC with a vendor of the MAC
 * registry's that differs from it (`Hewlett Packard` where recognition said `HP`, `Hon Hai` where
 * UPnP said `Sony`): discovery keeps their vendor. Recognition read that registry name as one of its
 * hits (rule `oui-vendor`) and chose its vendor over it; writing the registry's name back would
 * have every rescan change the vendor twice (a search re-index and a `recognition` decision per
 * device per scan). A host with another MAC gets the registry's name, and recognition decides again.
 * Only devices whose vendor would change are looked up.
 */
async function recognisedVendors(
  trx: Transaction<Database>,
  decisions: readonly { host: DiscoveredHost; deviceId: number | null }[],
  knownById: ReadonlyMap<number, { vendor: string | null; mac_address: string | null }>,
): Promise<Set<number>> {
  const candidates = new Map<number, string>();
  for (const { host, deviceId } of decisions) {
    if (deviceId === null || !host.vendor || !host.mac) continue;
    const before = knownById.get(deviceId);
    if (!before || before.vendor === null || before.vendor === host.vendor || before.mac_address !== host.mac) continue;
    candidates.set(deviceId, before.vendor);
  }
  const out = new Set<number>();
  for (const part of chunks([...candidates.keys()], IDS_PER_STATEMENT)) {
    const rows = await trx
      .selectFrom('device_evidence')
      .select(['device_id', 'evidence'])
      .where('device_id', 'in', part)
      .where('evidence', 'like', fieldPattern('vendor'))
      .execute();
    for (const r of rows) {
      if (evidenceOfField(r.evidence, 'vendor').some((e) => e.value === candidates.get(r.device_id))) out.add(r.device_id);
    }
  }
  return out;
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
      const known = await trx
        .selectFrom('devices')
        .select(['id', 'identity', 'ip_address', 'mac_address', 'mac_randomized', 'mac_source', 'vendor', 'hostname', 'hostname_source', 'last_seen'])
        .execute();
      const knownById = new Map(known.map((d) => [d.id, d]));
      const { decisions, dropped } = matchHosts(hosts, known);
      const seen: SeenDevice[] = [];
      const notes: IdentityNote[] = dropped.map(({ host, reason }) => ({ ip: String(host.ip), mac: host.mac, deviceId: null, reason }));
      // Statements per batch, not per host: known devices whose recorded facts did not change only
      // get their sighting (one UPDATE per batch of ids); the others are updated one by one, before
      // new devices are inserted (an identity a changed device gives up may be a new device's).
      const unchanged: number[] = [];
      const fresh: typeof decisions = [];
      const created = new Map<string, number>();
      const recognised = await recognisedVendors(trx, decisions, knownById);
      for (const decision of decisions) {
        const { host } = decision;
        if (decision.deviceId === null) {
          fresh.push(decision);
          continue;
        }
        const deviceId = decision.deviceId;
        const before = knownById.get(deviceId);
        const patch = {
          identity: decision.identity,
          ip_address: host.ip,
          ip_sort: ipv4ToInt(host.ip),
          ...(host.mac ? { mac_address: host.mac, mac_randomized: isLocallyAdministered(host.mac) ? 1 : 0, mac_source: sourceOf(host, 'mac') } : {}),
          // The MAC's vendor (the IEEE registry's name, CONTRACT §15 field provenance) does not replace
          // the vendor recognition set for the same MAC: recognition weighed that name already.
          ...(host.vendor && !recognised.has(deviceId) ? { vendor: host.vendor } : {}),
          ...(host.hostname ? { hostname: host.hostname, hostname_source: sourceOf(host, 'hostname') } : {}),
        } as const;
        const same =
          before !== undefined &&
          before.identity === patch.identity &&
          before.ip_address === patch.ip_address &&
          (patch.mac_address === undefined ||
            (before.mac_address === patch.mac_address && before.mac_randomized === patch.mac_randomized && before.mac_source === patch.mac_source)) &&
          (patch.vendor === undefined || before.vendor === patch.vendor) &&
          (patch.hostname === undefined || (before.hostname === patch.hostname && before.hostname_source === patch.hostname_source));
        if (same) unchanged.push(deviceId);
        else
          await trx
            .updateTable('devices')
            .set({ ...patch, last_seen: at, last_scan_id: scanId })
            .where('id', '=', deviceId)
            .execute();
      }
      for (const ids of chunks(unchanged, IDS_PER_STATEMENT)) {
        await trx.updateTable('devices').set({ last_seen: at, last_scan_id: scanId }).where('id', 'in', ids).execute();
      }
      const rows = await insertManyWith<{ id: number; identity: string }>(
        trx,
        'devices',
        NEW_DEVICE_COLUMNS,
        fresh.map(({ host, identity }) => ({
          identity,
          ip_address: host.ip,
          ip_sort: ipv4ToInt(host.ip),
          last_seen: at,
          last_scan_id: scanId,
          mac_address: host.mac,
          mac_randomized: host.mac && isLocallyAdministered(host.mac) ? 1 : 0,
          hostname: host.hostname,
          vendor: host.vendor,
          first_seen: at,
          hostname_source: host.hostname ? sourceOf(host, 'hostname') : null,
          mac_source: host.mac ? sourceOf(host, 'mac') : null,
        })),
        'returning id, identity',
      );
      for (const r of rows) created.set(r.identity, r.id);
      // In the matcher's order, as the scan's log and events report them.
      for (const { host, identity, deviceId: known, reason } of decisions) {
        const deviceId = known ?? created.get(identity)!;
        const previous = known === null ? null : (knownById.get(known)?.ip_address ?? null);
        seen.push({ deviceId, ip: host.ip, isNew: known === null, previousIp: previous !== host.ip ? previous : null });
        if (reason) notes.push({ ip: host.ip, mac: host.mac, deviceId, reason });
      }
      await recordIps(trx, seen, at);
      return { seen, notes };
    });
    this.onWrite();
    return record;
  }

  /**
   * Records the ports `scan` examined (`scan.examined`, on each host it reached: one result per
   * device; without a scan, as test fixtures record ports, every port counts as examined) and refreshes OS details, in one transaction (CONTRACT §14). Only the examined ports
   * change: each is now what the scan found (open or filtered: a row; closed: no row), verified by
   * this scan; a port outside the list keeps its last known state and counts one more port scan
   * that did not verify it. An open port found outside the list counts as examined. Each device
   * records this as its last port recording (`ports_verified_at`, `ports_verified_by`), which the
   * ports it verified refer to (`verified_with_device`, migration 022), so a device whose ports come
   * out as the inventory already holds them has no port row written; the others have their ports
   * rewritten, keeping each port's first sighting. Each device's coverage (core/coverage.ts) and the scan's count of
   * hosts examined are updated with them.
   */
  async recordPorts(
    results: { deviceId: number; host: ScannedHost }[],
    at: string,
    scan: { id: number; examined: PortCoverage } | null = null,
  ): Promise<void> {
    const scanId = scan?.id ?? null;
    const examined = scan?.examined ?? EVERY_PORT;
    // The last result for a device wins, as when they were written one after the other.
    const byDevice = new Map(results.map((r) => [r.deviceId, r.host]));
    // Devices this scan examined alike mostly hold the same coverage text (the same scans' segments):
    // its segments after this scan, and whether this scan was counted, are worked out once per text.
    const examinedAlike = new Map<string, { counted: boolean; after: string | null }>();
    const segmentsAfter = (text: string | null, examinedHere: PortCoverage) => {
      const compute = () => {
        const segments = parseSegments(text);
        return {
          // A retried upload of the same scan counts nothing twice.
          counted: scanId !== null && segments.some((s) => s.scan_id === scanId),
          after: scanId !== null ? JSON.stringify(examineSegments(segments, scanId, at, examinedHere)) : null,
        };
      };
      if (examinedHere !== examined) return compute();
      const key = text ?? '';
      let found = examinedAlike.get(key);
      if (!found) examinedAlike.set(key, (found = compute()));
      return found;
    };
    await this.db.transaction().execute(async (trx) => {
      let newlyExamined = 0;
      for (const ids of chunks([...byDevice.keys()], IDS_PER_STATEMENT)) {
        const devices = await trx
          .selectFrom('devices')
          .select(['id', 'os_name', 'device_type', 'ports_hash', 'port_coverage', 'ports_verified_at', 'ports_verified_by'])
          .where('id', 'in', ids)
          .execute();
        const unchanged: number[] = [];
        const rewritten: RewrittenDevice[] = [];
        // Each device's recording, written in one UPDATE … FROM per batch (on PostgreSQL a row
        // updated three times is three row versions): its coverage, its last port recording
        // (migration 022: its ports marked verified_with_device are verified now), and its ports'
        // hash, new where its ports are rewritten.
        const recorded = new Map<
          number,
          { id: number; port_coverage: string | null; ports_verified_at: string; ports_verified_by: number | null; ports_hash: string | null }
        >();
        // OS details that changed, by the columns they set: one UPDATE … FROM per kind and batch, not one per device.
        const osUpdates = new Map<string, { id: number; os_name?: string; device_type?: string }[]>();
        for (const device of devices) {
          const host = byDevice.get(device.id)!;
          // Closed ports are only listed when few were scanned; they are not part of the inventory.
          const found = dedupe(host.ports.filter((p) => p.state !== 'closed')).map(portColumns);
          const outside = found.filter((p) => !covers(examined, p.port, p.protocol));
          const examinedHere = outside.length === 0 ? examined : unionCoverage(examined, coverageOfPorts(outside));
          const { counted, after } = segmentsAfter(device.port_coverage, examinedHere);
          if (!counted) newlyExamined++;
          recorded.set(device.id, {
            id: device.id,
            port_coverage: after ?? device.port_coverage,
            ports_verified_at: at,
            ports_verified_by: scanId,
            ports_hash: device.ports_hash,
          });
          // Equal hashes: the stored ports are exactly the ones found, all of them examined now.
          if (portsHash(found) === device.ports_hash) unchanged.push(device.id);
          else
            rewritten.push({
              deviceId: device.id,
              found,
              examined: examinedHere,
              counted,
              before: { at: device.ports_verified_at, by: device.ports_verified_by },
            });
          const os = {
            ...(host.os_name && host.os_name !== device.os_name ? { os_name: host.os_name } : {}),
            ...(host.device_type && host.device_type !== device.device_type ? { device_type: host.device_type } : {}),
          };
          const kind = Object.keys(os).join(',');
          if (kind) {
            const rows = osUpdates.get(kind) ?? [];
            rows.push({ id: device.id, ...os });
            osUpdates.set(kind, rows);
          }
        }
        for (const [kind, rows] of osUpdates) {
          await updateManyById(trx, 'devices', Object.fromEntries(kind.split(',').map((c) => [c, 'text'])), rows);
        }
        if (unchanged.length) {
          // Their ports are exactly what was found, all verified now: only rows not yet marked so are written (none, after the first time).
          await trx
            .updateTable('ports')
            .set({ verified_with_device: 1, unverified_scans: 0 })
            .where('device_id', 'in', unchanged)
            .where((eb) => eb.or([eb('verified_with_device', '=', 0), eb('unverified_scans', '!=', 0)]))
            .execute();
        }
        if (rewritten.length > 0) await this.rewritePorts(trx, rewritten, at, scanId, recorded);
        await updateManyById(trx, 'devices', RECORDING_COLUMNS, [...recorded.values()]);
      }
      if (newlyExamined > 0 && scanId !== null) {
        await trx
          .updateTable('scans')
          .set((eb) => ({ hosts_examined: sql<number>`coalesce(${eb.ref('hosts_examined')}, 0) + ${newlyExamined}` }))
          .where('id', '=', scanId)
          .execute();
      }
    });
    this.onWrite();
  }

  /**
   * Rewrites the ports of the devices whose ports change: the ports found, and those the scan did
   * not examine as they were (each port keeps its first sighting); sets their hash in `recorded`.
   */
  private async rewritePorts(
    trx: Transaction<Database>,
    rewritten: RewrittenDevice[],
    at: string,
    scanId: number | null,
    recorded: Map<number, { ports_hash: string | null }>,
  ): Promise<void> {
    // Only the devices whose ports change are read back: the ports kept, and each port's first sighting.
    const changedIds = rewritten.map((r) => r.deviceId);
    const stored = groupBy(
      await trx.selectFrom('ports').selectAll().where('device_id', 'in', changedIds).orderBy('id').execute(),
      (p) => p.device_id,
    );
    // Tuples in the column order of PORT_COLUMNS.
    const inserts: Tuple[] = [];
    for (const { deviceId, found, examined: examinedHere, counted, before: verified } of rewritten) {
      const before = stored.get(deviceId) ?? [];
      const firstSeen = new Map(before.map((p) => [`${p.protocol}/${p.port}`, p.first_seen]));
      const kept = before.filter((p) => !covers(examinedHere, p.port, p.protocol));
      for (const c of found) {
        inserts.push(portTuple(deviceId, c, firstSeen.get(`${c.protocol}/${c.port}`) ?? at, at, at, scanId, 0, 1));
      }
      // A kept port verified with the device's last recording takes that recording's time and scan as its own.
      for (const p of kept) {
        const [verifiedAt, verifiedBy] = p.verified_with_device ? [verified.at, verified.by] : [p.last_verified_at, p.verified_by_scan_id];
        inserts.push(portTuple(deviceId, p, p.first_seen, p.last_seen, verifiedAt, verifiedBy, p.unverified_scans + (counted ? 0 : 1), 0));
      }
      recorded.get(deviceId)!.ports_hash = portsHash([...found, ...kept]);
    }
    await trx.deleteFrom('ports').where('device_id', 'in', changedIds).execute();
    await insertTuples(trx, 'ports', PORT_COLUMNS, inserts);
  }

  /**
   * Stores how each device looked in this scan (its current ports and risk, with the coverage that
   * says which ports' state it knows: ports this scan did not examine keep their last known state),
   * for /api/scans/{id}/devices and as the next scan's baseline: one INSERT … SELECT per batch of
   * devices, the ports' JSON built by the database, so nothing travels to this process and back.
   */
  async recordSnapshots(scanId: number, deviceIds: number[]): Promise<void> {
    if (deviceIds.length === 0) return;
    // One aggregate over the batch's ports (not a subquery per device); SQLite orders inside the
    // aggregate since 3.44 (better-sqlite3 bundles a later one).
    const portsJson = isPostgres(this.db)
      ? sql`json_agg(json_build_object('port', port, 'protocol', protocol, 'state', state, 'service', service, 'product', product, 'version', version) order by port)::text`
      : sql`json_group_array(json_object('port', port, 'protocol', protocol, 'state', state, 'service', service, 'product', product, 'version', version) order by port)`;
    await this.db.transaction().execute(async (trx) => {
      for (const ids of chunks(deviceIds, IDS_PER_STATEMENT)) {
        const list = sql.join(ids);
        await sql`insert into device_snapshots (scan_id, device_id, ip_address, ip_sort, mac_address, hostname, vendor, os_name, ports, open_port_count, risk_level, risk_score, ports_hash, port_coverage)
          select cast(${scanId} as integer), d.id, d.ip_address, d.ip_sort, d.mac_address, d.hostname, d.vendor, d.os_name, coalesce(p.ports, '[]'), coalesce(p.open, 0),
            d.risk_level, d.risk_score, d.ports_hash, d.port_coverage
          from devices d left join (
            select device_id, ${portsJson} as ports, sum(case when lower(trim(state)) = 'open' then 1 else 0 end) as open
            from ports where device_id in (${list}) group by device_id
          ) p on p.device_id = d.id
          where d.id in (${list})`.execute(trx);
      }
    });
    this.onWrite();
  }
}

/** Where a host's hostname or MAC came from: the name source that filled it (core/name-sources.ts), else the scan. */
function sourceOf(host: DiscoveredHost, fact: 'hostname' | 'mac'): FactSource {
  return (fact === 'hostname' ? host.hostname_source : host.mac_source) ?? 'scan';
}

async function recordIps(trx: Transaction<Database>, seen: SeenDevice[], at: string): Promise<void> {
  // One row per device and address: PostgreSQL refuses to upsert the same row twice in a statement.
  const rows = [
    ...new Map(seen.map((s) => [`${s.deviceId} ${s.ip}`, { device_id: s.deviceId, ip_address: s.ip, first_seen: at, last_seen: at }])).values(),
  ];
  await insertManyWith(
    trx,
    'ip_history',
    { device_id: 'integer', ip_address: 'text', first_seen: 'text', last_seen: 'text' },
    rows,
    'on conflict (device_id, ip_address) do update set last_seen = excluded.last_seen',
  );
}

/** A device whose ports recordPorts rewrites. */
interface RewrittenDevice {
  deviceId: number;
  found: PortColumns[];
  examined: PortCoverage;
  counted: boolean;
  /** The device's last port recording, which its ports marked verified_with_device were verified by until now. */
  before: { at: string | null; by: number | null };
}

/** The columns of a device's port recording, written once per device (recordPorts). */
const RECORDING_COLUMNS = { port_coverage: 'text', ports_verified_at: 'text', ports_verified_by: 'integer', ports_hash: 'text' } as const;

const NEW_DEVICE_COLUMNS = {
  identity: 'text',
  ip_address: 'text',
  ip_sort: 'bigint',
  last_seen: 'text',
  last_scan_id: 'integer',
  mac_address: 'text',
  mac_randomized: 'integer',
  hostname: 'text',
  vendor: 'text',
  first_seen: 'text',
  hostname_source: 'text',
  mac_source: 'text',
} as const;
/** Column order of the tuples recordPorts builds: keep both in step. */
const PORT_COLUMNS = {
  device_id: 'integer',
  port: 'integer',
  protocol: 'text',
  state: 'text',
  service: 'text',
  product: 'text',
  version: 'text',
  extra_info: 'text',
  cpe: 'text',
  first_seen: 'text',
  last_seen: 'text',
  service_guessed: 'integer',
  last_verified_at: 'text',
  verified_by_scan_id: 'integer',
  unverified_scans: 'integer',
  verified_with_device: 'integer',
} as const;

/** A port row as a tuple in the column order of PORT_COLUMNS. */
function portTuple(
  deviceId: number,
  c: PortColumns,
  firstSeen: string,
  lastSeen: string,
  verifiedAt: string | null,
  verifiedBy: number | null,
  unverifiedScans: number,
  withDevice: 0 | 1,
): Tuple {
  return [
    deviceId,
    c.port,
    c.protocol,
    c.state,
    c.service,
    c.product,
    c.version,
    c.extra_info,
    c.cpe,
    firstSeen,
    lastSeen,
    c.service_guessed,
    verifiedAt,
    verifiedBy,
    unverifiedScans,
    withDevice,
  ];
}

/** Every TCP and UDP port: what a port write without a scan (a test fixture) examined. */
const EVERY_PORT: PortCoverage = { tcp: [{ low: 1, high: 65535 }], udp: [{ low: 1, high: 65535 }] };

/** The ports given, as a coverage (each port on its own). */
function coverageOfPorts(ports: readonly { port: number; protocol: string }[]): PortCoverage {
  const out = emptyCoverage();
  for (const p of ports) {
    const protocol = p.protocol.trim().toLowerCase();
    if (protocol === 'tcp' || protocol === 'udp') out[protocol].push({ low: p.port, high: p.port });
  }
  return unionCoverage(out);
}

function dedupe(ports: ScannedPort[]): ScannedPort[] {
  const seen = new Map<string, ScannedPort>();
  for (const p of ports) seen.set(`${p.protocol}/${p.port}`, p);
  return [...seen.values()];
}
