import { sql, type Insertable, type Kysely, type Compilable, type RawBuilder, type Updateable } from 'kysely';
import type { Database, DeviceRow, DeviceSnapshotsTable, DevicesTable, NewDevice } from './schema.js';
import { worstFirst, type FindingSeverity, type RiskLevel } from '../core/severity.js';
import type { DeviceDetail, DeviceSummary, FindingRecord } from '../schemas/device.js';
import type { ScanDevice } from '../schemas/scan.js';
import { FACT_SOURCES, isOpenPort, type FactSource } from '../core/model.js';
import { portFromRow } from './port-rows.js';
import { describePort } from '../core/services.js';
import { formatCoverage, noFindingStatement, parseSegments, segmentsCoverage, STALE_AFTER_SCANS } from '../core/coverage.js';
import { FINDING_TEXTS, type CveDescriber } from './evaluation.js';
import { VersionedCache } from './versioned-cache.js';
import { IdentityStore, parseUserFields } from './identity.js';
import { AcceptanceStore } from './acceptances.js';
import { IntelStore } from './intel.js';
import { nowIso } from './clock.js';
import { kevOf } from '../core/intel.js';
import { fixedIn } from '../core/cve/fixes.js';
import type { FindingKind } from '../core/risk.js';
import { IDS_PER_STATEMENT, chunks } from '../util/batches.js';
import type { DeviceStatus, SettableDeviceStatus } from '../core/device-status.js';

/** Columns the device list can be ordered by; ties fall back to IP address order. */
export const DEVICE_SORT_KEYS = ['ip_address', 'hostname', 'label', 'vendor', 'zone', 'risk_score', 'first_seen', 'last_seen'] as const;
export type DeviceSortKey = (typeof DEVICE_SORT_KEYS)[number];
/** Sort keys whose column is NOT NULL (migration 001). */
const NEVER_EMPTY_SORT_KEYS: ReadonlySet<DeviceSortKey> = new Set(['risk_score', 'first_seen', 'last_seen']);

/** What narrows the inventory, combined with AND: the list's and the export's filters. */
export interface DeviceFilters {
  scanId?: number;
  riskLevel?: RiskLevel;
  isTrusted?: boolean;
  zone?: string;
  /** Only addresses in [low, high] (a subnet). */
  range?: { low: number; high: number };
  online?: boolean;
  /** Case-insensitive substring of any of SEARCHED_COLUMNS, or an open port number. */
  search?: string;
  /** Only devices with this status. */
  status?: DeviceStatus;
  /** Leave archived devices out (the default list) unless `status` asks for them. */
  excludeArchived?: boolean;
}

export interface DeviceQuery extends DeviceFilters {
  sort?: DeviceSortKey;
  descending?: boolean;
  limit: number;
  offset: number;
}

/** Columns free-text search looks in. */
const SEARCHED_COLUMNS = ['ip_address', 'mac_address', 'hostname', 'vendor', 'label', 'notes', 'os_name', 'device_type', 'zone'] as const;

/** Joins the searched columns into one text, so a search evaluates one LIKE per row rather than nine. */
const SEARCH_SEPARATOR = '\u001f';

/** The columns a device summary is made of (the list reads these, not whole rows). */
const SUMMARY_COLUMNS = [
  'id',
  'ip_address',
  'mac_address',
  'mac_randomized',
  'hostname',
  'vendor',
  'device_type',
  'os_name',
  'label',
  'zone',
  'is_trusted',
  'notes',
  'risk_level',
  'risk_score',
  'first_seen',
  'last_seen',
  'last_scan_id',
  'online',
  'missed_scans',
  'port_coverage',
  'model',
  'os_version',
  'type_confidence',
  'discovered_name',
  'status',
  'watch_offline',
  'watch_online',
  'offline_after_scans',
] as const satisfies readonly (keyof DeviceRow)[];
type SummaryRow = Pick<DeviceRow, (typeof SUMMARY_COLUMNS)[number]>;

/** Longest a count of matching devices (`X-Total-Count`) is reused even when no write was seen. */
const COUNT_CACHE_MS = 60_000;

/** `text` as a LIKE pattern that matches it literally anywhere (`\` escapes `%`, `_` and itself). */
function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The user-owned fields of a device; scans never write them. */
export interface DeviceUserFields {
  label?: string | null;
  /** The device's name: its label (CONTRACT §15); a person's name is never replaced by a discovered one. */
  name?: string | null;
  /** One of core/device-types.ts; null hands the type back to discovery. */
  device_type?: string | null;
  zone?: string | null;
  is_trusted?: boolean;
  notes?: string | null;
  /** Set by a person: `known` or `archived` (`new` is only given by the service). */
  status?: SettableDeviceStatus;
  /** Partial: only the flags given change. */
  watch?: { offline?: boolean; online?: boolean };
  /** The device's own presence threshold ("can sleep"); null follows presence.offline_after_scans. */
  presence?: { offline_after_scans?: number | null };
}

/** Device inventory: identities, their current ports, findings, CVEs, IP history and per-scan snapshots. */
export class DeviceStore {
  /** Totals of recent list queries: counting 100,000 rows on every page turn is most of a page's cost. */
  private readonly counts: VersionedCache<number>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly onWrite: () => void,
    dataVersion: () => Promise<number> = async () => 0,
    private readonly dialect: 'sqlite' | 'postgres' = 'sqlite',
    private readonly acceptances: AcceptanceStore = new AcceptanceStore(db, onWrite),
    private readonly intel: IntelStore = new IntelStore(db, onWrite),
  ) {
    this.counts = new VersionedCache(dataVersion, COUNT_CACHE_MS, 200);
    this.identity = new IdentityStore(db, onWrite);
  }

  private readonly identity: IdentityStore;

  async list(query: DeviceQuery): Promise<{ rows: DeviceSummary[]; total: number }> {
    const search = query.search?.trim();
    // One query for the page and one for the count, the count kept until the data changes (for
    // later pages of the same list, and repeated requests). A search not yet counted is counted by the page query itself
    // (a window count over the matches), so the table is scanned once, not twice.
    const countKey = JSON.stringify([
      query.scanId,
      query.riskLevel,
      query.isTrusted,
      query.zone,
      query.range ?? null,
      query.online,
      search ?? '',
      query.status,
      query.excludeArchived,
    ]);
    const version = await this.counts.currentVersion();
    let total = this.counts.peek(countKey, version);

    // For a search, the database either walks the address index testing each row (stopping once
    // the page is full: quick when matches are many, but a rare term visits every row in index
    // order, 3× slower than a scan) or finds every match (through the search index of migration
    // 009, or a scan) and sorts them (`+ip_sort` keeps it off the address index; PostgreSQL would
    // otherwise walk it even when counting every match). It walks the address index only when the
    // known count says the page fills within the first quarter; then the search index is left out,
    // as gathering every candidate would cost more than the walk.
    const walkIndex = !search || (total !== undefined && (query.offset + query.limit) * 4 <= total);
    const base = this.filtered(query, walkIndex);
    let ordered = base.select(SUMMARY_COLUMNS);
    const direction = query.descending ? 'desc' : 'asc';
    const sort = query.sort ?? 'ip_address';
    if (sort !== 'ip_address') {
      // Empty values last in either direction, so sorting by label shows labelled devices first.
      // (Columns that are never empty skip that term, so an index on the column can give the order.)
      if (!NEVER_EMPTY_SORT_KEYS.has(sort)) ordered = ordered.orderBy(sql`${sql.ref(sort)} is null`);
      ordered = ordered.orderBy(sort, direction);
    }
    const count = async () => Number((await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    ordered = ordered.orderBy(walkIndex ? sql.ref('ip_sort') : sql`+ip_sort`, sort === 'ip_address' ? direction : 'asc').orderBy('id');
    const page = ordered.limit(query.limit).offset(query.offset);

    let rows: SummaryRow[];
    if (total !== undefined) {
      rows = await page.execute();
    } else if (search) {
      const withTotal = await page.select(sql<number>`count(*) over ()`.as('total_matches')).execute();
      total = withTotal.length > 0 ? Number(withTotal[0].total_matches) : await count();
      await this.counts.set(countKey, version, total);
      rows = withTotal;
    } else {
      [rows, total] = await Promise.all([page.execute(), this.counts.get(countKey, count, version)]);
    }
    const ports = await this.portsOf(rows.map((r) => r.id));
    return { rows: rows.map((r) => toSummary(r, ports.get(r.id))), total };
  }

  /**
   * Every device matching the filters, in IP address order, a page of `pageSize` summaries at a
   * time (for exports): keyset pages on the address index (`(ip_sort, id)` after the last row
   * given), so each page costs the same however far in, and only one page is held at a time. Rows
   * written meanwhile appear as they are when their page is read.
   */
  async *iterate(filters: DeviceFilters, pageSize: number): AsyncGenerator<DeviceSummary[]> {
    // Walking the address index suits an export of every match: one pass over the index in all.
    const base = this.filtered(filters, true);
    let after: { ipSort: number; id: number } | null = null;
    for (;;) {
      let page = base.select([...SUMMARY_COLUMNS, 'ip_sort']);
      if (after) page = page.where(sql<boolean>`(${sql.ref('ip_sort')}, ${sql.ref('devices.id')}) > (${after.ipSort}, ${after.id})`);
      const rows = await page.orderBy('ip_sort').orderBy('id').limit(pageSize).execute();
      if (rows.length === 0) return;
      const ports = await this.portsOf(rows.map((r) => r.id));
      yield rows.map((r) => toSummary(r, ports.get(r.id)));
      if (rows.length < pageSize) return;
      const last = rows[rows.length - 1];
      after = { ipSort: Number(last.ip_sort), id: last.id };
    }
  }

  /** The devices matching the filters; `walkIndex`: see list() (search through the address index or the search index). */
  private filtered(query: DeviceFilters, walkIndex: boolean) {
    let base = this.db.selectFrom('devices');
    if (query.scanId !== undefined) {
      const scanId = query.scanId;
      base = base.where('devices.id', 'in', (eb) =>
        eb.selectFrom('device_snapshots').select('device_snapshots.device_id').where('device_snapshots.scan_id', '=', scanId),
      );
    }
    if (query.riskLevel) base = base.where('risk_level', '=', query.riskLevel);
    if (query.isTrusted !== undefined) base = base.where('is_trusted', '=', query.isTrusted ? 1 : 0);
    if (query.zone !== undefined) base = base.where('zone', '=', query.zone);
    if (query.range) base = base.where('ip_sort', '>=', query.range.low).where('ip_sort', '<=', query.range.high);
    if (query.online !== undefined) base = base.where('online', '=', query.online ? 1 : 0);
    if (query.status !== undefined) base = base.where('status', '=', query.status);
    else if (query.excludeArchived) base = base.where('status', '<>', 'archived');
    const search = query.search?.trim();
    if (search) {
      const pattern = containsPattern(search);
      const port = /^\d{1,5}$/.test(search) ? Number(search) : null;
      const like = sql<string>`${pattern} escape '\\'`;
      const indexed = walkIndex ? null : this.indexedCandidates(search);
      base = base.where((eb) =>
        eb.or([
          ...(search.includes(SEARCH_SEPARATOR)
            ? // Could match across two columns of the joined text: look in each column instead.
              SEARCHED_COLUMNS.map((column) => eb(sql`lower(${sql.ref(column)})`, 'like', like))
            : indexed
              ? // The index narrows the rows; LIKE stays the exact test, so results are the same as without it.
                [eb.and([eb('devices.id', 'in', indexed), eb(this.searchedText(), 'like', like)])]
              : [eb(this.searchedText(walkIndex), 'like', like)]),
          ...(port !== null && port <= 65535 ? [this.withOpenPort(port)] : []),
          ...this.withInventoryText(like),
        ]),
      );
    }
    return base;
  }

  /**
   * Devices with `port` open. PostgreSQL gets `id = any(array(…))`: an array computed once, which
   * the planner can combine with the search index (a BitmapOr); `id in (…)` under an OR would be a
   * subplan tested row by row over every device.
   */
  private withOpenPort(port: number) {
    const withPort = this.db.selectFrom('ports').select('ports.device_id').where('ports.port', '=', port).where('ports.state', '=', 'open');
    return this.dialect === 'postgres'
      ? sql<boolean>`${sql.ref('devices.id')} = any(array(${withPort}))`
      : sql<boolean>`${sql.ref('devices.id')} in (${withPort})`;
  }

  /**
   * Search beyond the device's own columns (issue 21): its model, and the services, products,
   * versions and CVE ids found on it. Sub-selects, as withOpenPort, so PostgreSQL computes each once.
   */
  private withInventoryText(like: RawBuilder<string>) {
    const lowered = (column: string) => sql`lower(${sql.ref(column)}) like ${like}`;
    const onPorts = this.db
      .selectFrom('ports')
      .select('ports.device_id')
      .where(sql<boolean>`(${lowered('ports.service')} or ${lowered('ports.product')} or ${lowered('ports.version')})`);
    const withCve = this.db
      .selectFrom('cve_matches')
      .select('cve_matches.device_id')
      .where(sql<boolean>`${lowered('cve_matches.cve_id')}`);
    const member = (sub: Compilable) =>
      this.dialect === 'postgres' ? sql<boolean>`${sql.ref('devices.id')} = any(array(${sub}))` : sql<boolean>`${sql.ref('devices.id')} in (${sub})`;
    return [sql<boolean>`${lowered('devices.model')}`, member(onPorts), member(withCve)];
  }

  /**
   * SQLite: the ids of the devices whose searched text may contain `search`, from the trigram index
   * (migration 009), or null when the index cannot tell (fewer than 3 characters: no trigram).
   * The tokenizer folds case for all of Unicode, LIKE for ASCII only, so the candidates are a
   * superset of LIKE's matches as long as the term is the one the LIKE pattern was made from
   * (lower-cased here as in containsPattern). PostgreSQL needs no such step: its pg_trgm index is
   * on the very expression the LIKE tests.
   */
  private indexedCandidates(search: string) {
    if (this.dialect !== 'sqlite') return null;
    const term = search.toLowerCase();
    if ([...term].length < 3) return null;
    // An FTS5 phrase: the term's trigrams in a row; `"` is written twice inside one.
    const phrase = `"${term.replace(/"/g, '""')}"`;
    return sql<number>`(select rowid from devices_search where devices_search match ${phrase})`;
  }

  /**
   * The searched columns as one lower-case text. SQLite's lower() and LIKE both fold ASCII only,
   * so there LIKE on the plain text is the same test without the lower() call; PostgreSQL folds by
   * locale, so lower() stays.
   */
  private searchedText(offIndex = false) {
    const joined = sql.join(
      SEARCHED_COLUMNS.map((column) => sql`coalesce(${sql.ref(column)}, '')`),
      sql` || ${sql.lit(SEARCH_SEPARATOR)} || `,
    );
    if (this.dialect !== 'postgres') return sql<string>`(${joined})`;
    // `|| ''` changes nothing but the expression, so the trigram index (on exactly `lower(...)`) is not considered.
    return offIndex ? sql<string>`(lower(${joined}) || '')` : sql<string>`lower(${joined})`;
  }

  getRow(id: number): Promise<DeviceRow | undefined> {
    return this.db.selectFrom('devices').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * The full device. Its CVE matches are stored as references (migration 006): `describeCve` gives
   * each one's description, references and remediation from the dataset in use.
   */
  async get(id: number, describeCve: CveDescriber = () => undefined): Promise<DeviceDetail | undefined> {
    const row = await this.getRow(id);
    if (!row) return undefined;
    const [ports, findings, cves, history] = await Promise.all([
      this.db.selectFrom('ports').selectAll().where('device_id', '=', id).orderBy('protocol').orderBy('port').execute(),
      this.db
        .selectFrom('risk_findings as f')
        .leftJoin('finding_texts as t', 't.id', 'f.text_id')
        .selectAll('f')
        .select(FINDING_TEXTS)
        .where('f.device_id', '=', id)
        .orderBy('f.score', 'desc')
        .orderBy('f.id')
        .execute(),
      // NULLS LAST: PostgreSQL would otherwise put unscored CVEs first, SQLite last.
      this.db
        .selectFrom('cve_matches')
        .selectAll()
        .where('device_id', '=', id)
        .orderBy('cvss_score', (ob) => ob.desc().nullsLast())
        .orderBy('cve_id')
        .execute(),
      this.db.selectFrom('ip_history').selectAll().where('device_id', '=', id).orderBy('last_seen', 'desc').execute(),
    ]);
    const [accepted, intel] = await Promise.all([this.acceptances.activeOf([id], nowIso()), this.intel.factsOf(cves.map((c) => c.cve_id))]);
    const acceptanceOf = (key: string | null) => {
      const a = key === null ? undefined : accepted.get(id)?.get(key);
      return a ? { id: a.id, by: a.created_by, reason: a.reason, expires_at: a.expires_at, created_at: a.created_at } : null;
    };
    const findingRecords: FindingRecord[] = findings
      .map((f) => ({
        // Rows from before migration 017 have no key until their device is assessed again (in the background).
        finding_key: f.finding_key ?? `legacy:${f.id}`,
        kind: (f.kind ?? (f.cve_ids !== '[]' ? 'cve' : 'rule')) as FindingKind,
        acceptance: acceptanceOf(f.finding_key),
        port: f.port,
        protocol: f.protocol,
        severity: f.severity,
        score: f.score,
        service: f.service,
        title: f.title,
        description: f.description,
        recommendation: f.recommendation,
        cve_ids: JSON.parse(f.cve_ids) as string[],
      }))
      .sort((a, b) => worstFirst(a.severity as FindingSeverity, b.severity as FindingSeverity) || b.score - a.score);
    const segments = parseSegments(row.port_coverage);
    return {
      ...toSummary(row, { open: sortedOpenPorts(ports), stale: ports.filter(isStale).length }),
      hostname_source: factSource(row.hostname_source),
      mac_source: factSource(row.mac_source),
      ports: ports.map((stored) => {
        const { service_guessed, ...port } = portFromRow(stored);
        return {
          ...port,
          // Verified with the device's last port recording: its time and scan (migration 022).
          last_verified_at: stored.verified_with_device ? row.ports_verified_at : stored.last_verified_at,
          verified_by_scan_id: stored.verified_with_device ? row.ports_verified_by : stored.verified_by_scan_id,
          stale: isStale(stored),
          description: describePort({ ...port, service_guessed }),
        };
      }),
      risk_details: {
        level: row.risk_level as RiskLevel,
        score: row.risk_score,
        // Without finding, what was examined and when: from the scans that examined it (never today's settings).
        summary: row.risk_summary !== null && findingRecords.length === 0 && cves.length === 0 ? noFindingStatement(segments) : row.risk_summary,
        top_recommendation: findingRecords[0]?.recommendation ?? null,
        findings: findingRecords,
      },
      cves: cves.map((c) => {
        const text = describeCve(c.cve_id);
        return {
          id: c.cve_id,
          severity: c.severity,
          cvss_score: c.cvss_score,
          description: text?.description ?? `${c.cve_id} is no longer in the CVE dataset; the next evaluation drops this match.`,
          // Stored only when it differs from the dataset's (a distribution's backport note).
          remediation: c.remediation ?? text?.remediation ?? null,
          references: text?.references ?? [],
          confidence: c.confidence,
          port: c.port,
          matched_product: c.matched_product,
          matched_version: c.matched_version,
          fixed_in: text?.affected ? fixedIn(text.affected, c.matched_version, c.matched_product) : null,
          kev: kevOf(intel.kev.get(c.cve_id), text?.kev),
          epss: intel.epss.get(c.cve_id) ?? null,
        };
      }),
      ip_history: history.map((h) => ({ ip_address: h.ip_address, first_seen: h.first_seen, last_seen: h.last_seen })),
      coverage: segments.map((seg) => ({ scan_id: seg.scan_id, ports_examined: seg.ports, examined_at: seg.at })),
    };
  }

  async updateUserFields(id: number, fields: DeviceUserFields): Promise<void> {
    const { name, device_type, ...rest } = fields;
    const named = 'name' in fields ? name : 'label' in fields ? fields.label : undefined;
    if (named !== undefined || 'device_type' in fields) {
      // Which fields a person set, and when (migration 015): scans leave those alone.
      const row = await this.db.selectFrom('devices').select('user_fields').where('id', '=', id).executeTakeFirst();
      if (!row) return;
      const set = parseUserFields(row.user_fields);
      const patch: Updateable<DevicesTable> = {};
      const at = new Date().toISOString();
      if (named !== undefined) {
        patch.label = named || null;
        if (named) set.name = at;
        else delete set.name;
      }
      if ('device_type' in fields) {
        if (device_type) {
          patch.device_type = device_type;
          patch.type_confidence = 100;
          set.device_type = at;
        } else {
          // Handed back to discovery: what the latest recognition said, until the next scan.
          delete set.device_type;
          const discovered = await this.identity.discoveredValue(id, 'device_type');
          patch.device_type = discovered?.value ?? null;
          patch.type_confidence = discovered?.confidence ?? 0;
        }
      }
      patch.user_fields = JSON.stringify(set);
      await this.db.updateTable('devices').set(patch).where('id', '=', id).execute();
      this.onWrite();
    }
    const { label: _label, ...others } = rest;
    await this.updateUserFieldsMany([id], others);
  }

  /** Applies the same user-field change to every given device, in one statement. */
  async updateUserFieldsMany(ids: number[], fields: DeviceUserFields): Promise<void> {
    const patch: Updateable<DevicesTable> = {};
    if ('label' in fields) patch.label = fields.label || null;
    if ('zone' in fields) patch.zone = fields.zone || null;
    if ('notes' in fields) patch.notes = fields.notes || null;
    if (fields.is_trusted !== undefined) patch.is_trusted = fields.is_trusted ? 1 : 0;
    if (fields.status !== undefined) patch.status = fields.status;
    if (fields.watch?.offline !== undefined) patch.watch_offline = fields.watch.offline ? 1 : 0;
    if (fields.watch?.online !== undefined) patch.watch_online = fields.watch.online ? 1 : 0;
    if (fields.presence && 'offline_after_scans' in fields.presence) patch.offline_after_scans = fields.presence.offline_after_scans ?? null;
    if (Object.keys(patch).length === 0 || ids.length === 0) return;
    await this.db.updateTable('devices').set(patch).where('id', 'in', ids).execute();
    this.onWrite();
  }

  /** Marks the given devices `known` (acknowledged); returns the ids whose status changed. */
  async acknowledge(ids: number[]): Promise<number[]> {
    const changed: number[] = [];
    for (const part of chunks(ids, IDS_PER_STATEMENT)) {
      const rows = await this.db
        .updateTable('devices')
        .set({ status: 'known' })
        .where('id', 'in', part)
        .where('status', '<>', 'known')
        .returning('id')
        .execute();
      changed.push(...rows.map((r) => r.id));
    }
    if (changed.length) this.onWrite();
    return changed.sort((a, b) => a - b);
  }

  /**
   * When a completed scan before `beforeScanId` last saw each of the given devices (the completion
   * of the latest scan with a snapshot of it): for a device that came back, when it was last seen
   * before. Devices never seen before are left out.
   */
  async previousSightings(ids: number[], beforeScanId: number): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for (const part of chunks(ids, IDS_PER_STATEMENT)) {
      const rows = await this.db
        .selectFrom('device_snapshots as s')
        .innerJoin('scans as sc', 'sc.id', 's.scan_id')
        .select((eb) => ['s.device_id', eb.fn.max(eb.fn.coalesce('sc.completed_at', 'sc.created_at')).as('at')])
        .where('s.device_id', 'in', part)
        .where('s.scan_id', '<', beforeScanId)
        .where('sc.status', '=', 'completed')
        .groupBy('s.device_id')
        .execute();
      for (const r of rows) if (r.at !== null) out.set(r.device_id, r.at);
    }
    return out;
  }

  /** Summaries of the given devices (those that exist), in id order. */
  async summariesOf(ids: number[]): Promise<DeviceSummary[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.selectFrom('devices').select(SUMMARY_COLUMNS).where('id', 'in', ids).orderBy('id').execute();
    const ports = await this.portsOf(rows.map((r) => r.id));
    return rows.map((r) => toSummary(r, ports.get(r.id)));
  }

  /** Zones currently assigned to at least one device. */
  async assignedZones(): Promise<string[]> {
    const rows = await this.db.selectFrom('devices').select('zone').distinct().where('zone', 'is not', null).orderBy('zone').execute();
    return rows.map((r) => r.zone as string);
  }

  async scanDevices(scanId: number): Promise<ScanDevice[]> {
    const rows = await this.db
      .selectFrom('device_snapshots')
      .selectAll()
      .where('scan_id', '=', scanId)
      .orderBy('ip_sort')
      .orderBy('device_id')
      .execute();
    return rows.map((s) => ({
      device_id: s.device_id,
      ip_address: s.ip_address,
      mac_address: s.mac_address,
      hostname: s.hostname,
      vendor: s.vendor,
      os_name: s.os_name,
      open_ports: sortedOpenPorts(JSON.parse(s.ports) as { port: number; state: string }[]),
      risk_level: s.risk_level,
      risk_score: s.risk_score,
    }));
  }

  /** The devices that carry one of `macs` (normalised, upper case), with their address: who an uploaded MAC would move. */
  async holdersOfMacs(macs: readonly string[]): Promise<{ id: number; mac_address: string; ip_address: string }[]> {
    const out: { id: number; mac_address: string; ip_address: string }[] = [];
    for (const part of chunks([...new Set(macs)], IDS_PER_STATEMENT)) {
      const rows = await this.db.selectFrom('devices').select(['id', 'mac_address', 'ip_address']).where('mac_address', 'in', part).execute();
      for (const r of rows) if (r.mac_address !== null) out.push({ id: r.id, mac_address: r.mac_address, ip_address: r.ip_address });
    }
    return out;
  }

  // ---- direct writes: scans write through InventoryWriter and store.evaluation; tests build fixtures with these ----

  async insert(device: NewDevice): Promise<DeviceRow> {
    const row = await this.db.insertInto('devices').values(device).returningAll().executeTakeFirstOrThrow();
    this.onWrite();
    return row;
  }

  async update(id: number, patch: Updateable<DevicesTable>): Promise<void> {
    await this.db.updateTable('devices').set(patch).where('id', '=', id).execute();
    this.onWrite();
  }

  async insertSnapshot(snapshot: Insertable<DeviceSnapshotsTable>): Promise<void> {
    await this.db.insertInto('device_snapshots').values(snapshot).execute();
    this.onWrite();
  }

  /** Each device's open port numbers (ascending, unique) and how many of its ports are stale. */
  private async portsOf(deviceIds: number[]): Promise<Map<number, PortsSummary>> {
    const out = new Map<number, PortsSummary>();
    if (deviceIds.length === 0) return out;
    const rows = await this.db
      .selectFrom('ports')
      .select(['device_id', 'port', 'state', 'unverified_scans'])
      .where('device_id', 'in', deviceIds)
      .where((eb) => eb.or([eb('state', '=', 'open'), eb('unverified_scans', '>=', STALE_AFTER_SCANS)]))
      .orderBy('device_id')
      .orderBy('port')
      .execute();
    for (const r of rows) {
      let entry = out.get(r.device_id);
      if (!entry) out.set(r.device_id, (entry = { open: [], stale: 0 }));
      if (r.state === 'open' && entry.open[entry.open.length - 1] !== r.port) entry.open.push(r.port);
      if (isStale(r)) entry.stale++;
    }
    return out;
  }
}

/** Open port numbers, ascending and unique (a port open on both TCP and UDP counts once), as every device shape shows them. */
function sortedOpenPorts(ports: { port: number; state: string }[]): number[] {
  return [...new Set(ports.filter(isOpenPort).map((p) => p.port))].sort((a, b) => a - b);
}

/** A stored provenance (migration 011) as the API shows it: one of FACT_SOURCES, or null. */
function factSource(value: string | null): FactSource | null {
  return value !== null && (FACT_SOURCES as readonly string[]).includes(value) ? (value as FactSource) : null;
}

/** A device's open port numbers and its count of stale ports, as its summary shows them. */
interface PortsSummary {
  open: number[];
  stale: number;
}

/** Whether a stored port is stale: the latest STALE_AFTER_SCANS port scans of its device did not examine it. */
function isStale(port: { unverified_scans: number }): boolean {
  return port.unverified_scans >= STALE_AFTER_SCANS;
}

/** What a stored coverage says in a summary (a few texts are shared by most devices: read once). */
const coverageSummaries = new Map<string, { ports_examined: string | null; ports_examined_at: string | null }>();

function coverageSummary(stored: string | null): { ports_examined: string | null; ports_examined_at: string | null } {
  if (!stored) return { ports_examined: null, ports_examined_at: null };
  let summary = coverageSummaries.get(stored);
  if (!summary) {
    const segments = parseSegments(stored);
    const union = formatCoverage(segmentsCoverage(segments));
    summary = {
      ports_examined: union === '' ? null : union,
      ports_examined_at: segments.length === 0 ? null : segments.map((seg) => seg.at).reduce((a, b) => (b < a ? b : a)),
    };
    if (coverageSummaries.size >= 1000) coverageSummaries.clear();
    coverageSummaries.set(stored, summary);
  }
  return summary;
}

function toSummary(row: SummaryRow, ports: PortsSummary = { open: [], stale: 0 }): DeviceSummary {
  const openPorts = ports.open;
  return {
    id: row.id,
    ip_address: row.ip_address,
    mac_address: row.mac_address,
    mac_randomized: row.mac_randomized === 1,
    hostname: row.hostname,
    vendor: row.vendor,
    name: row.label ?? row.discovered_name,
    device_type: row.device_type,
    type_confidence: row.type_confidence,
    model: row.model,
    os_name: row.os_name,
    os_version: row.os_version,
    label: row.label,
    zone: row.zone,
    is_trusted: row.is_trusted === 1,
    notes: row.notes,
    risk_level: row.risk_level as RiskLevel,
    risk_score: row.risk_score,
    open_ports: openPorts,
    first_seen: row.first_seen,
    last_seen: row.last_seen,
    last_scan_id: row.last_scan_id,
    online: row.online === 1,
    missed_scans: row.missed_scans,
    status: row.status as DeviceStatus,
    watch: { offline: row.watch_offline === 1, online: row.watch_online === 1 },
    presence: { offline_after_scans: row.offline_after_scans },
    ...coverageSummary(row.port_coverage),
    stale_ports: ports.stale,
  };
}
