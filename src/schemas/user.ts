/** A user account as the API shows it (never its password hash): the one definition. */
import { type Static, Type } from '@sinclair/typebox';
import { Timestamp } from './common.js';

export const UserRecord = Type.Object({
  id: Type.Integer(),
  username: Type.String(),
  created_at: Timestamp,
  password_changed_at: Timestamp,
  current: Type.Boolean({ description: 'Whether this is the user of the session making the request (false for an API key)' }),
});

export type UserRecord = Static<typeof UserRecord>;
