/**
 * The rules of a schedule (CONTRACT §7, §13), without I/O: which cron patterns and time zones are
 * accepted, when a pattern runs next, and which slot is due after a pause (missed slots).
 *
 * Cron patterns are the classic five fields, minute hour day-of-month month day-of-week, with
 * `*`, lists (`1,15`), ranges (`1-5`), steps (`*\/15`, `0-30/5`) and the names `jan`…`dec` and
 * `sun`…`sat` (any case). Day-of-week 0 and 7 are both Sunday. When both day fields are
 * restricted a day matching either runs (as in Vixie cron). Times are read in the schedule's IANA
 * time zone; croner decides what happens at daylight-saving changes (a time in the gap runs at
 * the first valid time after it; a repeated time runs once).
 *
 * croner reads more than this (seconds and years fields, `L`, `W`, `#`, `?`, nicknames such as
 * `@daily`). Those are refused here, before croner sees the pattern: a pattern a user saves should
 * mean the same in any cron they know, and the web UI's presets and the docs only use the five
 * classic fields. A six-field pattern with seconds is accepted only by `CronTiming` with
 * `{ seconds: true }`, which the scheduler's tests use; nothing reachable from the API or the CLI
 * passes it.
 */
import { Cron } from 'croner';
import { InvalidInputError } from '../util/errors.js';

/** A schedule's field value is invalid; the message names the field (`cron: …`). */
export class InvalidScheduleError extends InvalidInputError {
  override readonly code = 'NW_INVALID_SCHEDULE';
}

const FIELDS = [
  { name: 'minute', range: '0-59', names: null },
  { name: 'hour', range: '0-23', names: null },
  { name: 'day-of-month', range: '1-31', names: null },
  { name: 'month', range: '1-12', names: ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'] },
  { name: 'day-of-week', range: '0-7 (0 and 7 are Sunday)', names: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] },
] as const;

const SECONDS_FIELD = { name: 'second', range: '0-59', names: null } as const;

/** One item of a field's list: `*` or a value or a range, with an optional step. */
const ITEM = /^(\*|([0-9]{1,2}|[a-z]{3})(-([0-9]{1,2}|[a-z]{3}))?)(\/[0-9]{1,2})?$/;

export const CRON_HELP = 'five fields: minute hour day-of-month month day-of-week, such as "0 3 * * *" (03:00 daily) or "*/15 * * * mon-fri"';

/** Pattern syntax, checked before croner sees it; returns the pattern with single spaces between fields. */
function checkSyntax(text: string, seconds: boolean): string {
  if (typeof text !== 'string' || text.trim() === '') throw new InvalidScheduleError(`cron: is empty; use ${CRON_HELP}`);
  if (text.length > 200) throw new InvalidScheduleError('cron: must be at most 200 characters');
  const parts = text.trim().split(/\s+/);
  const fields = seconds && parts.length === 6 ? [SECONDS_FIELD, ...FIELDS] : FIELDS;
  if (parts.length !== fields.length) {
    const hint =
      parts.length === 6
        ? ' (a seconds field is not supported)'
        : parts.length === 1 && parts[0].startsWith('@')
          ? ' (nicknames such as @daily are not supported)'
          : '';
    throw new InvalidScheduleError(`cron: has ${parts.length} field${parts.length === 1 ? '' : 's'}${hint}; use ${CRON_HELP}`);
  }
  parts.forEach((part, i) => {
    const field = fields[i];
    for (const item of part.toLowerCase().split(',')) {
      const m = ITEM.exec(item);
      const names = [m?.[2], m?.[4]].filter((v): v is string => v !== undefined && /^[a-z]/.test(v));
      const namesOk = names.every((n) => (field.names as readonly string[] | null)?.includes(n));
      if (!m || !namesOk) {
        const allowed = field.names ? `numbers ${field.range} or names ${field.names[0]}-${field.names.at(-1)}` : `numbers ${field.range}`;
        throw new InvalidScheduleError(
          `cron: the ${field.name} field '${part}' is not valid; use ${allowed} with *, lists (1,3), ranges (1-5) and steps (*/2)`,
        );
      }
    }
  });
  return parts.join(' ');
}

/** croner's messages start with its class name ("CronPattern: …"); the user needs the rest. */
function cronerMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/^Cron\w*:\s*/, '');
}

/**
 * When a validated pattern runs, in its time zone. Wraps croner so that the rest of the code sees
 * plain Dates and never croner's own options.
 */
export class CronTiming {
  private readonly cron: Cron;
  readonly pattern: string;

  /**
   * Throws InvalidScheduleError naming `cron` or `timezone`. `seconds` admits a sixth, leading
   * seconds field: for tests only (the scheduler's end-to-end test), never from user input.
   */
  constructor(pattern: string, timezone: string, options: { seconds?: boolean } = {}) {
    const zone = validateTimezone(timezone);
    this.pattern = checkSyntax(pattern, options.seconds === true);
    const sixFields = this.pattern.split(' ').length === 6;
    try {
      this.cron = new Cron(this.pattern, { timezone: zone, paused: true, mode: sixFields ? '6-part' : '5-part' });
    } catch (err) {
      throw new InvalidScheduleError(`cron: ${cronerMessage(err)}`);
    }
    // "0 0 31 2 *" is well formed and never runs: refused rather than saved as a schedule that never fires.
    if (this.next(new Date()) === null)
      throw new InvalidScheduleError('cron: never matches a date (such as 31 February); check the day and month fields');
  }

  /** The first slot strictly after `after`, or null when there is none. */
  next(after: Date): Date | null {
    return this.cron.nextRun(after);
  }

  /** The next `count` slots strictly after `after`. */
  nextRuns(count: number, after: Date): Date[] {
    return this.cron.nextRuns(count, after);
  }

  /** The latest slot at or before `at`, or null when there is none. */
  latestAtOrBefore(at: Date): Date | null {
    return this.cron.previousRuns(1, new Date(at.getTime() + 1))[0] ?? null;
  }
}

/** Checks an IANA time zone name (`UTC`, `Europe/Berlin`); returns it as given. */
export function validateTimezone(value: unknown): string {
  const problem = 'timezone: must be an IANA time zone name such as UTC or Europe/Berlin';
  if (typeof value !== 'string' || value.trim() === '' || value !== value.trim() || value.length > 100) {
    throw new InvalidScheduleError(problem);
  }
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
  } catch {
    throw new InvalidScheduleError(`${problem}; '${value}' is not one`);
  }
  return value;
}

/** Checks a pattern (and its time zone) as the API accepts it: five fields. Returns the normalised pattern. */
export function validateCron(pattern: unknown, timezone: string): string {
  if (typeof pattern !== 'string') throw new InvalidScheduleError(`cron: must be a string with ${CRON_HELP}`);
  return new CronTiming(pattern, timezone).pattern;
}

/** Checks a schedule name: 1–`max` characters after trimming; returns it trimmed. */
export function validateScheduleName(value: string, max: number): string {
  const name = value.trim();
  if (!name) throw new InvalidScheduleError('name: must not be blank');
  if (name.length > max) throw new InvalidScheduleError(`name: must be at most ${max} characters`);
  return name;
}

/** What the scheduler does with a schedule whose `next_run_at` has come. */
export interface DueSlot {
  /** The slot to run now: the latest slot at or before now. */
  slot: Date;
  /** Earlier slots that passed without running (the service was down or stalled); null if none. */
  missed: { first: Date; last: Date; count: number } | null;
  /** The slot after `slot`: the schedule's next_run_at once this one is claimed. */
  following: Date | null;
}

/** Counting missed slots stops here (the count then reads "at least"): a per-minute schedule down for a month has 43,200. */
const MISSED_COUNT_LIMIT = 10_000;

/**
 * The slot due at `now` for a schedule whose stored next slot is `stored`, or null when
 * `stored` is still in the future.
 *
 * CONTRACT §7: a slot missed while the service was down runs once if it is less than one period
 * old, and is audited as missed otherwise. The latest slot at or before now is always less than
 * one period old (the next slot after it is still in the future), so it runs; every earlier one
 * that never ran is reported in `missed`, which the scheduler audits once, not once per slot.
 */
export function dueSlot(timing: CronTiming, stored: Date, now: Date): DueSlot | null {
  if (stored.getTime() > now.getTime()) return null;
  const latest = timing.latestAtOrBefore(now);
  const slot = latest && latest.getTime() > stored.getTime() ? latest : stored;
  let missed: DueSlot['missed'] = null;
  if (slot.getTime() > stored.getTime()) {
    let count = 1;
    for (let t = timing.next(stored); t && t.getTime() < slot.getTime() && count < MISSED_COUNT_LIMIT; t = timing.next(t)) count++;
    const last = timing.latestAtOrBefore(new Date(slot.getTime() - 1)) ?? stored;
    missed = { first: stored, last: last.getTime() < stored.getTime() ? stored : last, count };
  }
  return { slot, missed, following: timing.next(now) };
}
