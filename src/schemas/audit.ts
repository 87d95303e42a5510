/** An audit log entry as the API shows it: the one definition. */
import { type Static, Type } from '@sinclair/typebox';
import { Nullable, StringEnum, Timestamp } from './common.js';

/** Who acted: a user, an API key, or the service itself (CLI, jobs, recovery). */
export const ACTOR_TYPES = ['user', 'api_key', 'system'] as const;

export const AuditRecord = Type.Object({
  id: Type.Integer(),
  timestamp: Timestamp,
  action: Type.String(),
  actor: Nullable(Type.String()),
  actor_type: StringEnum(ACTOR_TYPES),
  resource_type: Nullable(Type.String()),
  resource_id: Nullable(Type.String()),
  details: Nullable(Type.Record(Type.String(), Type.Unknown())),
  ip_address: Nullable(Type.String()),
  user_agent: Nullable(Type.String()),
  success: Type.Boolean(),
});

export type AuditRecord = Static<typeof AuditRecord>;
export type ActorType = (typeof ACTOR_TYPES)[number];
