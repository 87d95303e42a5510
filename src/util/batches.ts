/**
 * Splitting work into statements of a bounded size. SQLite allows 32,766 bound parameters per
 * statement and PostgreSQL 65,535; staying far below keeps each statement quick to prepare and
 * each transaction short.
 */

/** Bound parameters one statement may carry. */
export const PARAMETERS_PER_STATEMENT = 5_000;

/** Ids in one `in (…)` list. */
export const IDS_PER_STATEMENT = 500;

/** Rows one multi-row insert may carry, given how many columns each row binds. */
export function rowsPerInsert(columns: number): number {
  return Math.max(1, Math.floor(PARAMETERS_PER_STATEMENT / columns));
}

/** Consecutive slices of at most `size` items. */
export function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  if (!(size >= 1)) throw new RangeError(`chunk size must be at least 1, not ${size}`);
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}
