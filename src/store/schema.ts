/**
 * Table types for Kysely. The same schema runs on SQLite and PostgreSQL, so it sticks to
 * types both store identically: integers, reals and text. Timestamps are ISO 8601 UTC strings
 * (they sort correctly as text), flags are 0/1 integers and structured values are JSON text.
 */
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

/** 0 or 1: SQLite has no boolean type, so both dialects store flags as integers. */
export type Flag = number;
/** JSON document serialised to text. */
export type JsonText = string;

export interface UsersTable {
  id: Generated<number>;
  username: string;
  password_hash: string;
  created_at: string;
  password_changed_at: string;
}

export interface SessionsTable {
  /** SHA-256 of the cookie token: a leaked table row cannot be replayed as a cookie. */
  id: string;
  user_id: number;
  created_at: string;
  expires_at: string;
  last_seen_at: string;
  ip_address: string | null;
  user_agent: string | null;
}

export interface ApiKeysTable {
  id: Generated<number>;
  name: string;
  /** First characters of the key, shown to users and used as the indexed lookup. */
  prefix: string;
  /** SHA-256 of the whole key, hex. */
  key_hash: string;
  created_by: number | null;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

export interface AuditLogsTable {
  id: Generated<number>;
  timestamp: string;
  action: string;
  actor: string | null;
  actor_type: string;
  resource_type: string | null;
  resource_id: string | null;
  details: JsonText | null;
  ip_address: string | null;
  user_agent: string | null;
  success: Flag;
}

export interface SettingsTable {
  key: string;
  value: JsonText;
  updated_at: string;
}

export interface ScansTable {
  id: Generated<number>;
  status: string;
  profile: string;
  subnet: string;
  scan_type: string;
  target: string | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  duration_seconds: number | null;
  devices_found: Generated<number>;
  error: string | null;
  triggered_by: string | null;
  progress: JsonText | null;
  /** The slot (1..scanning.max_parallel_scans) a running scan holds, else NULL; unique, so no two scans hold one slot. */
  active_slot: number | null;
  /** The process running the scan: a random id per process start, its host name and pid. */
  owner_id: string | null;
  owner_host: string | null;
  owner_pid: number | null;
  /** The owner renews this while it runs the scan; past it, another instance may end the scan. */
  lease_expires_at: string | null;
  /** Process group of the engine's child process (nmap), to end it if its owner died. */
  engine_pgid: number | null;
  /** Every engine process group running at once (JSON array of integers; a scan overlaps several nmap runs). */
  engine_pgids: JsonText | null;
  /** Set by an instance asked to cancel a scan another instance runs; the owner then stops it. */
  cancel_requested_at: string | null;
  /** The schedule this scan was run for (a slot or "run now"); NULL for other scans and once the schedule is deleted. */
  schedule_id: number | null;
  /** The scanned IPv4 range as unsigned integers (overlap checks between active scans). */
  target_low: number | null;
  target_high: number | null;
  /** The agent the scan is routed to (its target lies in the agent's networks); NULL: the server's workers. */
  agent_id: number | null;
  /** Who runs or ran the scan: `worker <name>`, `agent <name>`, or `import` (an nmap report brought in). */
  runner: string | null;
  /** The queue's job for this scan (pg-boss's id on PostgreSQL, a local id on SQLite). */
  job_id: string | null;
  /** JSON array of strings: problems that did not stop the scan. */
  warnings: JsonText | null;
  /** When an agent's uploaded results began to be recorded (a retried upload is recorded once). */
  upload_started_at: string | null;
  /** The ports the scan examined, canonical ranges (`1-1000,8080`); NULL for discovery-only scans and older ones (migration 013). */
  port_list: Generated<string | null>;
  /** How many hosts' ports the scan examined (migration 014); NULL for discovery-only scans and while none was recorded. */
  hosts_examined: Generated<number | null>;
}

export interface AgentNetworksTable {
  agent_id: number;
  /** First and last address of one of the agent's networks, as unsigned integers. */
  low: number;
  high: number;
}

export interface AgentsTable {
  id: Generated<number>;
  name: string;
  /** JSON array of canonical IPv4 CIDRs the agent scans. */
  networks: JsonText;
  /** `nwa_` plus 8 characters, in clear, for lookup and display. */
  token_prefix: string;
  /** SHA-256 (hex) of the whole token. */
  token_hash: string;
  created_by: string | null;
  created_at: string;
  last_seen_at: string | null;
  version: string | null;
  hostname: string | null;
  engine: string | null;
  revoked_at: string | null;
}

export interface DevicesTable {
  id: Generated<number>;
  /** `mac:<mac>` when a MAC was ever seen, else `ip:<address>`. Unique. */
  identity: string;
  ip_address: string;
  /** IPv4 address as an unsigned integer, for numeric ordering. */
  ip_sort: number;
  mac_address: string | null;
  mac_randomized: Generated<Flag>;
  hostname: string | null;
  /** Where hostname came from (core/model.ts FACT_SOURCES); null without a hostname. Migration 011. */
  hostname_source: string | null;
  /** Where mac_address came from (core/model.ts FACT_SOURCES); null without a MAC. Migration 011. */
  mac_source: string | null;
  vendor: string | null;
  device_type: string | null;
  os_name: string | null;
  label: string | null;
  zone: string | null;
  is_trusted: Generated<Flag>;
  notes: string | null;
  risk_level: Generated<string>;
  risk_score: Generated<number>;
  risk_summary: string | null;
  first_seen: string;
  last_seen: string;
  last_scan_id: number | null;
  online: Generated<Flag>;
  /** Consecutive completed network scans of its address that did not see it (core/presence.ts). */
  missed_scans: Generated<number>;
  /** Hash of the device's stored ports (port-rows.ts portsHash); null: not computed yet. */
  ports_hash: string | null;
  /** Hash of the OS and ports the device's risk and CVEs were last computed from (scan/evaluate.ts); null: never. */
  assessed_input: string | null;
  /** Fingerprint of the risk rules and CVE dataset of that computation; null: never. */
  assessed_with: string | null;
  /** JSON segments `[{scan_id, at, ports}]`: which scan last examined which of its ports, and when (core/coverage.ts, migration 014). */
  port_coverage: Generated<JsonText | null>;
  /** When the device's ports were last recorded from a port scan, and by which scan (migration 022): the verification of its ports marked verified_with_device. */
  ports_verified_at: Generated<string | null>;
  ports_verified_by: Generated<number | null>;
  /** Recognition's answer (core/recognition.ts, migration 015): model, OS version and how sure the type is (0–100). */
  model: Generated<string | null>;
  os_version: Generated<string | null>;
  type_confidence: Generated<number>;
  /** The best name the probes found (mDNS, NetBIOS, SNMP, UPnP); the summary's `name` without a label (migration 015). */
  discovered_name: Generated<string | null>;
  /** Digest of the device's stored evidence (device_evidence), written with it; null: not known (migration 025). */
  evidence_digest: Generated<string | null>;
  /** JSON object `{field: set_at}` of the fields a person set (`name`, `device_type`): scans never write them (migration 015). */
  user_fields: Generated<JsonText>;
  /** `new`, `known` or `archived` (core/device-status.ts, migration 016). */
  status: Generated<string>;
  /** Whether `device_offline` / `device_online` events are published for it (migration 016). */
  watch_offline: Generated<Flag>;
  watch_online: Generated<Flag>;
  /** Its own presence.offline_after_scans ("can sleep"); null: the setting's (migration 019). */
  offline_after_scans: Generated<number | null>;
}

/** A key a device was seen with (core/identity-keys.ts, migration 015); a strong one belongs to one device only. */
export interface DeviceIdentityKeysTable {
  id: Generated<number>;
  device_id: number;
  kind: string;
  value: string;
  strength: string;
  source: string;
  first_seen: string;
  last_seen: string;
}

/** One recognition of a device: its hits (migrations 015, 032). */
export interface DeviceEvidenceTable {
  id: Generated<number>;
  device_id: number;
  /** The hits of one recognition of the device, as JSON (src/store/evidence.ts; migration 032). */
  evidence: string;
  /** When they were last read. */
  observed_at: string;
}

/** A device hanging off a switch or access point, as one source states it (migration 021). */
export interface DeviceLinksTable {
  id: Generated<number>;
  device_id: number;
  parent_device_id: number;
  parent_kind: string;
  via: string;
  port: string | null;
  source: string;
  scan_id: number | null;
  seen_at: string;
}

/** Why a scan decided what it did about a device (migration 015). */
export interface IdentityDecisionsTable {
  id: Generated<number>;
  device_id: number;
  scan_id: number | null;
  rule: string;
  explanation: string;
  at: string;
}

export interface DeviceSnapshotsTable {
  id: Generated<number>;
  scan_id: number;
  device_id: number;
  ip_address: string;
  ip_sort: number;
  mac_address: string | null;
  hostname: string | null;
  vendor: string | null;
  os_name: string | null;
  /** JSON array of the device's ports after this scan (those it did not examine as last known): `[{port, protocol, state, service, product, version}]`. */
  ports: JsonText;
  open_port_count: number;
  risk_level: string;
  risk_score: number;
  /** The device's ports_hash when the snapshot was taken (migration 006); null for older snapshots. */
  ports_hash: string | null;
  /** The device's port_coverage when the snapshot was taken (migration 014): the ports whose state it knows; null for older snapshots. */
  port_coverage: Generated<JsonText | null>;
}

export interface PortsTable {
  id: Generated<number>;
  device_id: number;
  port: number;
  protocol: string;
  state: string;
  service: string | null;
  product: string | null;
  version: string | null;
  extra_info: string | null;
  /** JSON array of CPE strings. */
  cpe: JsonText;
  first_seen: string;
  last_seen: string;
  /** 1: the service name is only the port number's usual service (nmap's method="table"), nothing answered as it (migration 013). */
  service_guessed: Generated<Flag>;
  /** When a scan last examined the port on its device, and which (migration 014). */
  last_verified_at: Generated<string | null>;
  verified_by_scan_id: Generated<number | null>;
  /** Port scans of its device since then that did not examine it (core/coverage.ts STALE_AFTER_SCANS). */
  unverified_scans: Generated<number>;
  /** 1: verified by the device's last port recording, so the two columns above are the device's ports_verified_at and ports_verified_by (migration 022). */
  verified_with_device: Generated<Flag>;
}

export interface RiskFindingsTable {
  id: Generated<number>;
  device_id: number;
  scan_id: number | null;
  port: number | null;
  protocol: string | null;
  severity: string;
  score: number;
  service: string | null;
  title: string;
  description: string;
  recommendation: string;
  /** JSON array of CVE ids. */
  cve_ids: JsonText;
  /** Migration 017; null on rows written before it (until their device is assessed again). */
  finding_key: string | null;
  kind: string | null;
  cvss_score: number | null;
  /**
   * Migration 024: the finding's title, description and recommendation (finding_texts), its own
   * three columns then empty; null on older rows, whose own columns hold them.
   */
  text_id: number | null;
}

/** Each distinct finding text once (migration 024). */
export interface FindingTextsTable {
  id: Generated<number>;
  /** Digest of the three texts (store/evaluation.ts textKey). */
  text_key: string;
  title: string;
  description: string;
  recommendation: string;
}

export interface RiskAcceptancesTable {
  id: Generated<number>;
  device_id: number;
  finding_key: string;
  reason: string;
  created_by: string;
  created_at: string;
  expires_at: string | null;
  ended_at: string | null;
  /** `removed` or `expired` once ended. */
  end_reason: string | null;
}

export interface ZonePoliciesTable {
  zone: string;
  /** JSON of core/policies.ts ZonePolicy. */
  policy: string;
}

export interface IntelKevTable {
  cve_id: string;
  date_added: string | null;
  due_date: string | null;
  ransomware: number;
}

export interface IntelEpssTable {
  cve_id: string;
  score: number;
  percentile: number;
  as_of: string;
}

export interface IntelSourcesTable {
  source: string;
  imported_at: string;
  as_of: string | null;
  entries: number;
  detail: string | null;
}

export interface CveMatchesTable {
  id: Generated<number>;
  device_id: number;
  scan_id: number | null;
  cve_id: string;
  severity: string;
  cvss_score: number | null;
  /**
   * Only what differs from the dataset's remediation (a distribution's backport note appended);
   * null: the dataset's. The description and references are the dataset's (migration 006).
   */
  remediation: string | null;
  confidence: string;
  port: number | null;
  matched_product: string | null;
  matched_version: string | null;
}

export interface IpHistoryTable {
  id: Generated<number>;
  device_id: number;
  ip_address: string;
  first_seen: string;
  last_seen: string;
}

export interface ChangesTable {
  id: Generated<number>;
  scan_id: number;
  change_type: string;
  severity: string;
  device_id: number | null;
  device_ip: string | null;
  device_mac: string | null;
  port: number | null;
  protocol: string | null;
  old_value: string | null;
  new_value: string | null;
  description: string;
  detected_at: string;
}

/** Failed logins per key (`ip:<address>` or `user:<name>`), counted in a fixed window. */
export interface LoginFailuresTable {
  key: string;
  failures: number;
  window_start: string;
}

/** A named lock with an expiry: work that must happen once across instances takes it first. */
export interface LeasesTable {
  name: string;
  owner: string;
  expires_at: string;
}

/**
 * One row (id 1): a counter every process bumps after writing inventory data, so that another
 * instance's cached counts (stats, device totals) know the data changed (migration 007).
 */
export interface DataVersionTable {
  id: number;
  version: number;
}

/** Messages of the event relay too long for a PostgreSQL notification (migration 012). */
export interface RelayMessagesTable {
  id: Generated<number>;
  created_at: string;
  body: string;
}

export interface NotificationChannelsTable {
  id: Generated<number>;
  name: string;
  type: string;
  enabled: Flag;
  /** The type's config, secrets included (the API masks them). */
  config: JsonText;
  filters: JsonText;
  /** Five-field cron, or null: messages go out after each scan. */
  digest: string | null;
  /** `{start, end, timezone}` or null. */
  quiet_hours: JsonText | null;
  /** The last digest slot an instance claimed (ISO); moved forward by a conditional update. */
  digest_last_slot: string | null;
  created_at: string;
  updated_at: string;
}

/** A cron schedule of scans (CONTRACT §7). */
export interface SchedulesTable {
  id: Generated<number>;
  /** Unique, 1–100 characters. */
  name: string;
  /** Five fields (minute hour day-of-month month day-of-week). */
  cron: string;
  /** IANA time zone the cron pattern is read in. */
  timezone: string;
  profile: string;
  /** CIDR; NULL scans the configured network.subnet at the time a run is recorded. */
  subnet: string | null;
  enabled: Flag;
  /** The next slot (UTC) while enabled, else NULL; instances claim a slot by moving this on. */
  next_run_at: string | null;
  /** When a run was last recorded for this schedule (a slot that fired, or "run now"). */
  last_run_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface NotificationDeliveriesTable {
  id: Generated<number>;
  channel_id: number;
  event: string;
  status: string;
  attempts: Generated<number>;
  last_error: string | null;
  scan_id: number | null;
  /** The composed message (without its delivery id and send time), JSON. */
  payload: JsonText;
  created_at: string;
  first_attempt_at: string | null;
  /** When a pending delivery is due: now, a retry's time, or the end of quiet hours. */
  next_attempt_at: string | null;
  sent_at: string | null;
  claimed_by: string | null;
  claimed_until: string | null;
}

/** A change collected for a channel's next digest. */
export interface NotificationHeldTable {
  id: Generated<number>;
  channel_id: number;
  scan_id: number | null;
  /** The change record, JSON. */
  change: JsonText;
  created_at: string;
}

/** One row (id 1): the fingerprint devices were fully evaluated with, and the re-evaluation under way (migration 006). */
export interface EvaluationStateTable {
  id: number;
  fingerprint: string | null;
  target: string | null;
  devices_total: Generated<number>;
  devices_done: Generated<number>;
  started_at: string | null;
  finished_at: string | null;
}

/** A merge of devices into one (migration 016): what it moved and removed, to undo it. */
export interface DeviceMergesTable {
  id: Generated<number>;
  /** The device that was kept. */
  device_id: number;
  /** JSON array of the ids of the devices merged into it. */
  merged_ids: JsonText;
  /** JSON (store/device-merge.ts MergeSnapshot). */
  snapshot: JsonText;
  created_at: string;
  created_by: string | null;
  undone_at: string | null;
}

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  api_keys: ApiKeysTable;
  audit_logs: AuditLogsTable;
  settings: SettingsTable;
  scans: ScansTable;
  devices: DevicesTable;
  device_snapshots: DeviceSnapshotsTable;
  ports: PortsTable;
  risk_findings: RiskFindingsTable;
  finding_texts: FindingTextsTable;
  cve_matches: CveMatchesTable;
  ip_history: IpHistoryTable;
  changes: ChangesTable;
  login_failures: LoginFailuresTable;
  leases: LeasesTable;
  agents: AgentsTable;
  agent_networks: AgentNetworksTable;
  data_version: DataVersionTable;
  notification_channels: NotificationChannelsTable;
  notification_deliveries: NotificationDeliveriesTable;
  notification_held: NotificationHeldTable;
  schedules: SchedulesTable;
  evaluation_state: EvaluationStateTable;
  relay_messages: RelayMessagesTable;
  device_identity_keys: DeviceIdentityKeysTable;
  device_evidence: DeviceEvidenceTable;
  identity_decisions: IdentityDecisionsTable;
  risk_acceptances: RiskAcceptancesTable;
  zone_policies: ZonePoliciesTable;
  intel_kev: IntelKevTable;
  intel_epss: IntelEpssTable;
  intel_sources: IntelSourcesTable;
  device_merges: DeviceMergesTable;
  device_links: DeviceLinksTable;
}

export type UserRow = Selectable<UsersTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type AuditLogRow = Selectable<AuditLogsTable>;
export type ScanRow = Selectable<ScansTable>;
export type NewScan = Insertable<ScansTable>;
export type ScanUpdate = Updateable<ScansTable>;
export type DeviceRow = Selectable<DevicesTable>;
export type NewDevice = Insertable<DevicesTable>;
export type DeviceSnapshotRow = Selectable<DeviceSnapshotsTable>;
export type PortRow = Selectable<PortsTable>;
export type RiskFindingRow = Selectable<RiskFindingsTable>;
export type CveMatchRow = Selectable<CveMatchesTable>;
export type EvaluationStateRow = Selectable<EvaluationStateTable>;
export type ScheduleRow = Selectable<SchedulesTable>;
export type NewSchedule = Insertable<SchedulesTable>;
export type ScheduleUpdate = Updateable<SchedulesTable>;
export type ChangeRow = Selectable<ChangesTable>;
export type NewChange = Insertable<ChangesTable>;
export type NotificationChannelRow = Selectable<NotificationChannelsTable>;
export type NotificationDeliveryRow = Selectable<NotificationDeliveriesTable>;
export type NotificationHeldRow = Selectable<NotificationHeldTable>;
