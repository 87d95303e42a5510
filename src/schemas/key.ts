/** An API key as the API shows it (never the key itself, except once when created): the one definition. */
import { type Static, Type } from '@sinclair/typebox';
import { Nullable, StringEnum, Timestamp } from './common.js';

export const API_KEY_STATUSES = ['active', 'revoked', 'expired'] as const;

export const KeyRecord = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  prefix: Type.String({ description: 'First characters of the key, to recognise it' }),
  created_at: Timestamp,
  last_used_at: Nullable(Timestamp),
  expires_at: Nullable(Timestamp),
  revoked_at: Nullable(Timestamp),
  status: StringEnum(API_KEY_STATUSES),
});

export const CreatedKey = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  key: Type.String({ description: 'The key itself: shown only in this response' }),
  prefix: Type.String(),
  created_at: Timestamp,
  expires_at: Nullable(Timestamp),
});

export type KeyRecord = Static<typeof KeyRecord>;
export type CreatedKey = Static<typeof CreatedKey>;
export type ApiKeyStatus = (typeof API_KEY_STATUSES)[number];
