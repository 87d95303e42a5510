import type { Insertable, Kysely } from 'kysely';
import { nowIso } from './clock.js';
import type { ApiKeyStatus, KeyRecord } from '../schemas/key.js';
import type { ApiKeyRow, ApiKeysTable, Database } from './schema.js';

export type { ApiKeyStatus } from '../schemas/key.js';

export function apiKeyStatus(key: Pick<ApiKeyRow, 'revoked_at' | 'expires_at'>, now = nowIso()): ApiKeyStatus {
  if (key.revoked_at) return 'revoked';
  if (key.expires_at && key.expires_at <= now) return 'expired';
  return 'active';
}

/** The record `GET /api/keys` and `netwarden keys list` show for a stored key. */
export function toKeyRecord(row: ApiKeyRow): KeyRecord {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
    status: apiKeyStatus(row),
  };
}

/** Listeners must not throw (nor reject): a revocation is done when they are told. */
export type RevokeListener = (origin: 'local' | 'remote') => void | Promise<void>;

export class ApiKeyStore {
  /**
   * Told after every revocation: `local` when it went through this store (the revoking call
   * waits for them: the event relay tells the other instances before the revocation is
   * answered), `remote` when another process said it revoked one (see revokedElsewhere).
   * The API key cache forgets what it holds either way.
   */
  private readonly revokeListeners = new Set<RevokeListener>();

  constructor(private readonly db: Kysely<Database>) {}

  onRevoke(listener: RevokeListener): () => void {
    this.revokeListeners.add(listener);
    return () => this.revokeListeners.delete(listener);
  }

  /** Another process on this database revoked a key (the event relay says so): tells the listeners, writes nothing. */
  revokedElsewhere(): void {
    for (const listener of this.revokeListeners) void listener('remote');
  }

  /**
   * A value that changes whenever a key is created, revoked, removed or given another expiry by
   * any process on this database: other instances compare it to notice such a change made
   * elsewhere. Every key's id, revocation and expiry (a deployment has a handful of keys; read
   * at most once a second per instance).
   */
  async revocationMark(): Promise<string> {
    const rows = await this.db.selectFrom('api_keys').select(['id', 'revoked_at', 'expires_at']).orderBy('id').execute();
    return rows.map((r) => `${r.id}:${r.revoked_at ?? ''}:${r.expires_at ?? ''}`).join(',');
  }

  create(row: Insertable<ApiKeysTable>): Promise<ApiKeyRow> {
    return this.db.insertInto('api_keys').values(row).returningAll().executeTakeFirstOrThrow();
  }

  list(): Promise<ApiKeyRow[]> {
    return this.db.selectFrom('api_keys').selectAll().orderBy('id', 'desc').execute();
  }

  get(id: number): Promise<ApiKeyRow | undefined> {
    return this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Candidate keys for a presented key: same prefix. The caller compares hashes. */
  findByPrefix(prefix: string): Promise<ApiKeyRow[]> {
    return this.db.selectFrom('api_keys').selectAll().where('prefix', '=', prefix).execute();
  }

  async markUsed(id: number, at = nowIso()): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }

  /** Revokes a key; a key already revoked keeps its original revocation time. */
  async revoke(id: number, at = nowIso()): Promise<ApiKeyRow | undefined> {
    await this.db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).execute();
    await Promise.all([...this.revokeListeners].map(async (listener) => listener('local')));
    return this.get(id);
  }
}
