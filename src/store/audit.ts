import type { Kysely } from 'kysely';
import type { AuditAction } from '../core/audit-actions.js';
import { nowIso } from './clock.js';
import type { ActorType, AuditRecord } from '../schemas/audit.js';
import type { AuditLogRow, Database } from './schema.js';

export type { ActorType } from '../schemas/audit.js';

export interface AuditEntry {
  action: AuditAction;
  actor: string | null;
  actorType: ActorType;
  resourceType?: string | null;
  resourceId?: string | number | null;
  details?: Record<string, unknown> | null;
  ipAddress?: string | null;
  userAgent?: string | null;
  success: boolean;
}

export interface AuditQuery {
  action?: string;
  actor?: string;
  limit: number;
  offset: number;
}

export class AuditStore {
  constructor(private readonly db: Kysely<Database>) {}

  async write(entry: AuditEntry): Promise<void> {
    await this.db
      .insertInto('audit_logs')
      .values({
        timestamp: nowIso(),
        action: entry.action,
        actor: entry.actor,
        actor_type: entry.actorType,
        resource_type: entry.resourceType ?? null,
        resource_id: entry.resourceId == null ? null : String(entry.resourceId),
        details: entry.details ? JSON.stringify(entry.details) : null,
        ip_address: entry.ipAddress ?? null,
        // Browsers send long user agents; a hostile client could send a huge one.
        user_agent: entry.userAgent ? entry.userAgent.slice(0, 512) : null,
        success: entry.success ? 1 : 0,
      })
      .execute();
  }

  async list(query: AuditQuery): Promise<{ rows: AuditRecord[]; total: number }> {
    let base = this.db.selectFrom('audit_logs');
    if (query.action) base = base.where('action', '=', query.action);
    if (query.actor) base = base.where('actor', '=', query.actor);
    const [rows, total] = await Promise.all([
      base.selectAll().orderBy('id', 'desc').limit(query.limit).offset(query.offset).execute(),
      base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { rows: rows.map(toRecord), total: Number(total.n) };
  }
}

function toRecord(row: AuditLogRow): AuditRecord {
  return {
    id: row.id,
    timestamp: row.timestamp,
    action: row.action,
    actor: row.actor,
    actor_type: row.actor_type as ActorType,
    resource_type: row.resource_type,
    resource_id: row.resource_id,
    details: row.details ? (JSON.parse(row.details) as Record<string, unknown>) : null,
    ip_address: row.ip_address,
    user_agent: row.user_agent,
    success: row.success === 1,
  };
}
