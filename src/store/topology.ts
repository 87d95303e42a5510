/**
 * What the network map (core/topology.ts) reads: the devices (not archived) a page at a time, the
 * devices changed since a mark (the API keeps the devices and reads again only those), the subnets
 * completed scans targeted, and the switch layer (which device hangs off which switch or access
 * point, store/device-links.ts).
 */
import { sql, type Kysely } from 'kysely';
import type { Attachment, TopologyDevice } from '../core/topology.js';
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

/**
 * Where a reading of the devices' changes stood (changesSince): on SQLite this connection's
 * `PRAGMA data_version` (it moves only when another connection commits) and the last change read; on
 * PostgreSQL the snapshot it was read at (the first transaction not yet started, those running).
 */
export type ChangeMark = { kind: 'sqlite'; dataVersion: number; seq: number } | { kind: 'postgres'; xmax: bigint; running: bigint[] };

/** The columns a map's device node is drawn from: a change of any other column leaves the map as it was. */
const DRAWN_COLUMNS = ['ip_address', 'ip_sort', 'label', 'discovered_name', 'hostname', 'device_type', 'risk_level', 'online', 'zone', 'status'];

/** 2^32: PostgreSQL's row transaction ids (xmin) are 32-bit, its snapshots' 64-bit. */
const XID_SPAN = 4294967296n;

export class TopologyStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: 'sqlite' | 'postgres' = 'sqlite',
  ) {}

  /**
   * The ids of the devices that may have changed (inserted, changed in a drawn column, archived,
   * deleted) since `mark`, with the mark to pass next time; `ids: null` when that is not known (no
   * mark, or another process wrote on SQLite): read everything again.
   *
   * SQLite: temporary triggers on this connection (TEMP: nothing in the database file, nothing in a
   * backup) note the id of every device this process inserts, deletes or changes in a drawn column,
   * with a number that only grows (the mark holds the last one read);
   * a write by any other connection moves `PRAGMA data_version`, and then everything is read again.
   * PostgreSQL: a row's `xmin` is the transaction that wrote it; rows written by a transaction that
   * had not ended at the mark's snapshot (running then, or started after) are the changed ones.
   * On PostgreSQL deletions are not seen: `count`, the devices not archived counted in the same pass over the table as
   * the changes, lets the caller notice them (SQLite's delete trigger notes them, and it answers no count).
   */
  async changesSince(mark: ChangeMark | null): Promise<{ mark: ChangeMark; ids: number[] | null; count?: number }> {
    if (this.dialect === 'postgres') {
      // 'xmin:xmax:xip,…': transactions from xmax on had not started, those listed were running; every other one had ended.
      const { rows } = await sql<{ snapshot: string }>`select pg_current_snapshot()::text as snapshot`.execute(this.db);
      const [, xmax, xip] = rows[0].snapshot.split(':');
      const next: ChangeMark = { kind: 'postgres', xmax: BigInt(xmax), running: xip ? xip.split(',').map((x) => BigInt(x)) : [] };
      // Older than half the 32-bit range: the rows' transaction ids could have wrapped around.
      if (!mark || mark.kind !== 'postgres' || next.xmax - mark.xmax >= XID_SPAN / 2n) return { mark: next, ids: null };
      // A row written by a transaction that had ended at the mark was read then; the others are the changed ones.
      const running = `{${mark.running.map((x) => (x % XID_SPAN).toString()).join(',')}}`;
      // One pass over the table for both: the changed rows and how many devices are not archived.
      const changed = await sql<{ ids: (number | string)[]; live: number | string }>`
        select coalesce(array_agg(id) filter (where age(xmin) <= age(${(mark.xmax % XID_SPAN).toString()}::xid) or xmin = any(${running}::xid[])), '{}') as ids,
          count(*) filter (where status <> 'archived') as live
        from devices`.execute(this.db);
      return { mark: next, ids: changed.rows[0].ids.map((id) => Number(id)), count: Number(changed.rows[0].live) };
    }
    const version = await sql<{ data_version: number }>`pragma data_version`.execute(this.db);
    const dataVersion = Number(version.rows[0].data_version);
    if (mark && mark.kind === 'sqlite' && mark.dataVersion === dataVersion) {
      try {
        const changed = await sql<{
          device_id: number;
          seq: number;
        }>`select device_id, seq from temp.topology_changed where seq > ${mark.seq}`.execute(this.db);
        let seq = mark.seq;
        for (const row of changed.rows) seq = Math.max(seq, Number(row.seq));
        return { mark: { kind: 'sqlite', dataVersion, seq }, ids: changed.rows.map((r) => Number(r.device_id)) };
      } catch {
        // The connection was opened again (the temporary table went with the old one): read everything.
      }
    }
    await this.watchChanges();
    const top = await sql<{ seq: number | null }>`select max(seq) as seq from temp.topology_changed`.execute(this.db);
    return { mark: { kind: 'sqlite', dataVersion, seq: Number(top.rows[0]?.seq ?? 0) }, ids: null };
  }

  /** SQLite: the temporary table and triggers of changesSince, on this connection (again after it was reopened). */
  private async watchChanges(): Promise<void> {
    const columns = DRAWN_COLUMNS.map((c) => `"${c}"`).join(', ');
    // Each changed device once, with a number that only grows (a device changed again moves to the end): any reader takes
    // those past its mark, so several readers can share the table.
    const note = (id: string) =>
      `insert or replace into topology_changed (device_id, seq) values (${id}, (select coalesce(max(seq), 0) + 1 from topology_changed))`;
    const statements = [
      'create temp table if not exists topology_changed (device_id integer primary key, seq integer not null)',
      'create index if not exists temp.topology_changed_seq on topology_changed (seq)',
      `create temp trigger if not exists topology_devices_insert after insert on main.devices begin ${note('new.id')}; end`,
      `create temp trigger if not exists topology_devices_update after update of ${columns} on main.devices begin ${note('old.id')}; ${note('new.id')}; end`,
      `create temp trigger if not exists topology_devices_delete after delete on main.devices begin ${note('old.id')}; end`,
    ];
    for (const statement of statements) await sql.raw(statement).execute(this.db);
  }

  /** The devices of `ids` that are not archived (the others were deleted or archived). */
  async devicesById(ids: readonly number[]): Promise<TopologyDevice[]> {
    const out: TopologyDevice[] = [];
    for (let i = 0; i < ids.length; i += 500) {
      const rows = (await this.db
        .selectFrom('devices')
        .select(COLUMNS)
        .where('status', '<>', 'archived')
        .where('id', 'in', ids.slice(i, i + 500))
        .execute()) as Row[];
      for (const row of rows) out.push(toDevice(row));
    }
    return out;
  }

  /** The ids of the devices not archived. */
  async deviceIds(): Promise<number[]> {
    const rows = await this.db.selectFrom('devices').select('id').where('status', '<>', 'archived').execute();
    return rows.map((r) => Number(r.id));
  }

  /**
   * Every device (archived left out), `pageSize` at a time in id order (keyset pages on the primary key), so only one
   * page is held at a time.
   */
  async *iterate(pageSize: number): AsyncGenerator<TopologyDevice[]> {
    let after: number | null = null;
    for (;;) {
      let page = this.db.selectFrom('devices').select(COLUMNS).where('status', '<>', 'archived');
      if (after !== null) page = page.where('id', '>', after);
      const rows = (await page.orderBy('id').limit(pageSize).execute()) as Row[];
      if (rows.length === 0) return;
      yield rows.map(toDevice);
      if (rows.length < pageSize) return;
      after = rows[rows.length - 1].id;
    }
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
