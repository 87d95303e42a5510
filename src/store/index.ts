import { ApiKeyStore } from './api-keys.js';
import { AuditStore } from './audit.js';
import { ChangeStore } from './changes.js';
import { type DatabaseHandle, type DatabaseOptions, migrateToLatest, openDatabase, ping } from './db.js';
import { DeviceStore } from './devices.js';
import { EvaluationStore } from './evaluation.js';
import { LeaseStore } from './leases.js';
import { LoginFailureStore } from './login-failures.js';
import { NotificationStore } from './notifications.js';
import { RetentionStore } from './retention.js';
import { ScanStore } from './scans.js';
import { ScheduleStore } from './schedules.js';
import { SessionStore } from './sessions.js';
import { SettingsStore } from './settings.js';
import { StatsStore } from './stats.js';
import { UserStore } from './users.js';

/** Every repository over one database connection. */
export class Store {
  readonly users: UserStore;
  readonly sessions: SessionStore;
  readonly apiKeys: ApiKeyStore;
  readonly audit: AuditStore;
  readonly settings: SettingsStore;
  readonly scans: ScanStore;
  readonly devices: DeviceStore;
  readonly evaluation: EvaluationStore;
  readonly changes: ChangeStore;
  readonly stats: StatsStore;
  readonly loginFailures: LoginFailureStore;
  readonly leases: LeaseStore;
  readonly retention: RetentionStore;
  readonly notifications: NotificationStore;
  readonly schedules: ScheduleStore;
  /** Bumped by every inventory write, so cached aggregates know when they are stale. */
  private dataVersion = 0;

  constructor(readonly handle: DatabaseHandle) {
    const db = handle.db;
    const bump = () => {
      this.dataVersion++;
    };
    this.users = new UserStore(db);
    this.sessions = new SessionStore(db);
    this.apiKeys = new ApiKeyStore(db);
    this.audit = new AuditStore(db);
    this.settings = new SettingsStore(db);
    this.scans = new ScanStore(db, bump);
    this.devices = new DeviceStore(db, bump, () => this.dataVersion, handle.dialect);
    this.evaluation = new EvaluationStore(db, bump);
    this.changes = new ChangeStore(db, bump);
    this.stats = new StatsStore(db, () => this.dataVersion);
    this.loginFailures = new LoginFailureStore(db);
    this.leases = new LeaseStore(db);
    this.retention = new RetentionStore(db, bump);
    this.notifications = new NotificationStore(db);
    this.schedules = new ScheduleStore(db, bump);
  }

  /** Marks cached aggregates stale after a write made outside the repositories (e.g. the scan inventory). */
  touch(): void {
    this.dataVersion++;
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

  close(): Promise<void> {
    return this.handle.close();
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
