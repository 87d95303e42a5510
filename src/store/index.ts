import { AcceptanceStore } from './acceptances.js';
import { ApiKeyStore } from './api-keys.js';
import { IntelStore } from './intel.js';
import { FindingStore } from './findings.js';
import { PolicyStore } from './policies.js';
import { AuditStore } from './audit.js';
import { ChangeStore } from './changes.js';
import { type DatabaseHandle, type DatabaseOptions, migrateToLatest, openDatabase, ping } from './db.js';
import { DeviceStore } from './devices.js';
import { DeviceMergeStore } from './device-merge.js';
import { DeviceLinkStore } from './device-links.js';
import { EvaluationStore } from './evaluation.js';
import { HistoryStore } from './history.js';
import { IdentityStore } from './identity.js';
import { LeaseStore } from './leases.js';
import { LoginFailureStore } from './login-failures.js';
import { MetricsStore } from './metrics.js';
import { NotificationStore } from './notifications.js';
import { RelayChannel } from './relay-channel.js';
import { RetentionStore } from './retention.js';
import { ScanStore } from './scans.js';
import { AgentStore } from './agents.js';
import { ScheduleStore } from './schedules.js';
import { SessionStore } from './sessions.js';
import { SettingsStore } from './settings.js';
import { StatsStore } from './stats.js';
import { UserStore } from './users.js';

/** How stale another process's inventory writes may be in this process's cached counts. */
const SHARED_VERSION_RECHECK_MS = 1000;

/** Every repository over one database connection. */
export class Store {
  readonly users: UserStore;
  readonly sessions: SessionStore;
  readonly apiKeys: ApiKeyStore;
  readonly audit: AuditStore;
  readonly settings: SettingsStore;
  readonly scans: ScanStore;
  readonly agents: AgentStore;
  readonly devices: DeviceStore;
  /** Identity keys, recognition evidence and decisions of devices (migration 015). */
  readonly identity: IdentityStore;
  /** Deleting and merging devices, undoing merges (CONTRACT §15). */
  readonly deviceMerges: DeviceMergeStore;
  /** Which device hangs off which switch or access point (migration 021). */
  readonly deviceLinks: DeviceLinkStore;
  readonly evaluation: EvaluationStore;
  readonly changes: ChangeStore;
  /** Reads over the scans' history: two scans compared, a device's timeline. */
  readonly history: HistoryStore;
  readonly stats: StatsStore;
  /** Aggregates for GET /metrics, read at scrape time. */
  readonly metrics: MetricsStore;
  readonly loginFailures: LoginFailureStore;
  readonly leases: LeaseStore;
  readonly retention: RetentionStore;
  readonly notifications: NotificationStore;
  readonly schedules: ScheduleStore;
  /** Accepted risk (CONTRACT §17). */
  readonly acceptances: AcceptanceStore;
  /** Zone policies (CONTRACT §17). */
  readonly policies: PolicyStore;
  /** KEV and EPSS (CONTRACT §18). */
  readonly intel: IntelStore;
  /** Findings across the inventory (GET /api/findings). */
  readonly findings: FindingStore;
  /** The notification channel the event relay (events/relay.ts) uses between processes on PostgreSQL. */
  readonly relay: RelayChannel;
  /** Bumped by every inventory write through this process, so cached aggregates know when they are stale. */
  private dataVersion = 0;
  /** Every process's writes (the `data_version` row), as last read, and when. */
  private sharedVersion = 0;
  private sharedReadAt = -Infinity;
  private sharedReading: Promise<void> | undefined;
  /** The increment of the shared row in flight, and whether another write happened meanwhile. */
  private publishing: Promise<void> | undefined;
  private publishAgain = false;
  private sharing = false;

  constructor(readonly handle: DatabaseHandle) {
    const db = handle.db;
    const bump = () => this.touch();
    this.users = new UserStore(db);
    this.sessions = new SessionStore(db);
    this.apiKeys = new ApiKeyStore(db);
    this.audit = new AuditStore(db);
    this.settings = new SettingsStore(db);
    this.scans = new ScanStore(db, bump, handle.dialect);
    this.agents = new AgentStore(db, bump);
    this.devices = new DeviceStore(db, bump, () => this.currentDataVersion(), handle.dialect);
    this.identity = new IdentityStore(db, bump);
    this.deviceMerges = new DeviceMergeStore(db, bump);
    this.deviceLinks = new DeviceLinkStore(db, bump);
    this.evaluation = new EvaluationStore(db, bump);
    this.changes = new ChangeStore(db, bump);
    this.history = new HistoryStore(db);
    this.stats = new StatsStore(db, () => this.currentDataVersion());
    this.metrics = new MetricsStore(db);
    this.loginFailures = new LoginFailureStore(db);
    this.leases = new LeaseStore(db);
    this.retention = new RetentionStore(db, bump);
    this.notifications = new NotificationStore(db);
    this.schedules = new ScheduleStore(db, bump);
    this.acceptances = new AcceptanceStore(db, bump);
    this.policies = new PolicyStore(db, bump);
    this.intel = new IntelStore(db, bump);
    this.findings = new FindingStore(db);
    this.relay = new RelayChannel(handle);
  }

  /**
   * Marks cached aggregates stale after a write (the repositories call it; so does the scan
   * inventory, which writes outside them): at once on this instance, and on every other through
   * the shared `data_version` row, incremented in the background (one increment in flight at a
   * time; writes meanwhile are folded into one more).
   */
  touch(): void {
    this.dataVersion++;
    if (this.sharing) this.publishWrite();
  }

  /**
   * Makes this store's writes visible to other processes' caches (the service and the CLI turn it
   * on). Off by default: the increment runs beside the caller's own statements, on a connection of
   * its own, which a store used only for tests or tools (a restore refuses while another connection
   * to the schema is open) can do without.
   */
  shareWrites(): this {
    this.sharing = true;
    return this;
  }

  private publishWrite(): void {
    if (this.publishing) {
      this.publishAgain = true;
      return;
    }
    this.publishing = this.handle.db
      .insertInto('data_version')
      .values({ id: 1, version: 1 })
      .onConflict((oc) => oc.column('id').doUpdateSet((eb) => ({ version: eb('data_version.version', '+', 1) })))
      .execute()
      .then(
        () => undefined,
        // The database is unavailable: the write being counted failed too, or will be retried.
        () => undefined,
      )
      .finally(() => {
        this.publishing = undefined;
        if (this.publishAgain) {
          this.publishAgain = false;
          this.publishWrite();
        }
      });
  }

  /**
   * A number that changes whenever inventory data changed: at once for writes through this
   * process, within SHARED_VERSION_RECHECK_MS for writes by any other process on the database
   * (the shared row is read again when the last reading is older than that).
   */
  async currentDataVersion(): Promise<number> {
    if (Date.now() - this.sharedReadAt >= SHARED_VERSION_RECHECK_MS) {
      this.sharedReading ??= this.handle.db
        .selectFrom('data_version')
        .select('version')
        .where('id', '=', 1)
        .executeTakeFirst()
        .then((row) => {
          this.sharedVersion = Number(row?.version ?? 0);
          this.sharedReadAt = Date.now();
        })
        .finally(() => {
          this.sharedReading = undefined;
        });
      await this.sharedReading;
    }
    // Both only grow, so their sum changes whenever either does.
    return this.dataVersion + this.sharedVersion;
  }

  /**
   * What currentDataVersion would answer, when it needs no reading of the shared row (read less than
   * SHARED_VERSION_RECHECK_MS ago); undefined otherwise. Lets a cached answer be served without a promise.
   */
  dataVersionIfFresh(): number | undefined {
    return Date.now() - this.sharedReadAt < SHARED_VERSION_RECHECK_MS ? this.dataVersion + this.sharedVersion : undefined;
  }

  get db() {
    return this.handle.db;
  }

  get dialect() {
    return this.handle.dialect;
  }

  ping(): Promise<void> {
    return ping(this.handle);
  }

  async close(): Promise<void> {
    await this.publishing;
    await this.handle.close();
  }
}

/** Opens the database, applies pending migrations and returns the store. */
export async function openStore(options: DatabaseOptions): Promise<Store> {
  const handle = openDatabase(options);
  try {
    await migrateToLatest(handle);
  } catch (err) {
    await handle.close();
    throw err;
  }
  return new Store(handle);
}

/**
 * The store a one-off command (`netwarden keys`, `user`, `scan`, …) works on: migrated, as `serve`
 * would; a small pool; its writes reach the running service's cached counts.
 */
export async function openCommandStore(url: string): Promise<Store> {
  return (await openStore({ url, poolSize: 2 })).shareWrites();
}
