/** Building blocks of the record schemas: TypeBox helpers every resource uses. */
import { type TSchema, Type } from '@sinclair/typebox';

/** A string enum that validates with one clear "must be one of" error (TypeBox unions give several). */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC, e.g. 2026-11-22T02:48:08.123Z' });
