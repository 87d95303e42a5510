import { describe, expect, it } from 'vitest';
import { CronTiming, InvalidScheduleError, dueSlot, validateCron, validateTimezone } from '../../src/core/schedule.js';

const at = (iso: string) => new Date(iso);
const isoList = (dates: Date[]) => dates.map((d) => d.toISOString());

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidScheduleError);
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('cron patterns', () => {
  it('accepts five fields with *, lists, ranges, steps and month and day names', () => {
    for (const pattern of [
      '0 3 * * *',
      '*/15 * * * *',
      '0,30 8-18 * * mon-fri',
      '0 0 1 jan,jul *',
      '5 4 * * SUN',
      '0 0-12/3 1-15 * 1,3,5',
      '0 3 * * 7',
      '  0   3 * *   * ',
    ]) {
      expect(() => validateCron(pattern, 'UTC'), pattern).not.toThrow();
    }
    expect(validateCron('  0   3 * *   * ', 'UTC')).toBe('0 3 * * *');
  });

  it('refuses anything but five fields, naming cron', () => {
    expect(refusal(() => validateCron('* * * * * *', 'UTC'))).toMatch(/^cron: has 6 fields \(a seconds field is not supported\)/);
    expect(refusal(() => validateCron('0 0 3 * * * 2026', 'UTC'))).toMatch(/^cron: has 7 fields/);
    expect(refusal(() => validateCron('* * * *', 'UTC'))).toMatch(/^cron: has 4 fields/);
    expect(refusal(() => validateCron('', 'UTC'))).toMatch(/^cron: is empty/);
    expect(refusal(() => validateCron('@daily', 'UTC'))).toMatch(/^cron: .*nicknames/);
  });

  it("refuses croner's extensions and values out of range, naming cron", () => {
    for (const pattern of [
      '0 0 L * *',
      '0 0 15W * *',
      '0 0 * * fri#2',
      '0 0 ? * *',
      '0 0 * * 5L',
      '5/5 * * * *',
      'x * * * *',
      '0 0 * * mon-funday',
    ]) {
      expect(
        refusal(() => validateCron(pattern, 'UTC')),
        pattern,
      ).toMatch(/^cron: /);
    }
    expect(refusal(() => validateCron('0 0 * mon *', 'UTC'))).toMatch(/^cron: the month field 'mon' is not valid/);
    expect(refusal(() => validateCron('0 jan * * *', 'UTC'))).toMatch(/^cron: the hour field/);
    expect(refusal(() => validateCron('61 * * * *', 'UTC'))).toMatch(/^cron: .*minute/);
    expect(refusal(() => validateCron('0 24 * * *', 'UTC'))).toMatch(/^cron: .*hour/);
    expect(refusal(() => validateCron('*/0 * * * *', 'UTC'))).toMatch(/^cron: /);
    expect(refusal(() => validateCron('0 0 31 2 *', 'UTC'))).toMatch(/^cron: never matches/);
  });

  it('admits a leading seconds field only when asked (the scheduler test hook)', () => {
    expect(() => new CronTiming('* * * * * *', 'UTC')).toThrow(/cron: has 6 fields/);
    const timing = new CronTiming('*/2 * * * * *', 'UTC', { seconds: true });
    expect(isoList(timing.nextRuns(2, at('2026-05-01T00:00:00.500Z')))).toEqual(['2026-05-01T00:00:02.000Z', '2026-05-01T00:00:04.000Z']);
  });
});

describe('time zones', () => {
  it('accepts IANA names and refuses empty, unknown and offset forms, naming timezone', () => {
    for (const zone of ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata']) expect(validateTimezone(zone)).toBe(zone);
    for (const zone of ['', ' ', 'Mars/Olympus', '+01:00', 'Europe/Berlin ', 'x'.repeat(101)]) {
      expect(
        refusal(() => validateTimezone(zone)),
        JSON.stringify(zone),
      ).toMatch(/^timezone: must be an IANA time zone name/);
    }
    expect(refusal(() => new CronTiming('0 3 * * *', 'Mars/Olympus'))).toMatch(/^timezone: /);
  });

  it('reads the pattern in the time zone, across daylight saving time', () => {
    const berlin = new CronTiming('0 3 * * *', 'Europe/Berlin');
    // 03:00 in Berlin is 02:00Z in winter and 01:00Z in summer (the change is on 29 March 2026).
    expect(isoList(berlin.nextRuns(3, at('2026-03-27T12:00:00Z')))).toEqual([
      '2026-03-28T02:00:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T01:00:00.000Z',
    ]);
    const weekdays = new CronTiming('30 9 * * mon-fri', 'America/New_York');
    // Friday 1 May 2026, then Monday 4 May.
    expect(isoList(weekdays.nextRuns(2, at('2026-04-30T14:00:00Z')))).toEqual(['2026-05-01T13:30:00.000Z', '2026-05-04T13:30:00.000Z']);
  });
});

describe('due and missed slots', () => {
  const hourly = new CronTiming('0 * * * *', 'UTC');

  it('is not due before the stored slot', () => {
    expect(dueSlot(hourly, at('2026-05-01T10:00:00Z'), at('2026-05-01T09:59:59.999Z'))).toBeNull();
  });

  it('runs a slot that has just come, and names the following one', () => {
    expect(dueSlot(hourly, at('2026-05-01T10:00:00Z'), at('2026-05-01T10:00:00.400Z'))).toEqual({
      slot: at('2026-05-01T10:00:00Z'),
      missed: null,
      following: at('2026-05-01T11:00:00Z'),
    });
  });

  it('runs a slot missed by less than one period, once', () => {
    expect(dueSlot(hourly, at('2026-05-01T10:00:00Z'), at('2026-05-01T10:59:00Z'))).toEqual({
      slot: at('2026-05-01T10:00:00Z'),
      missed: null,
      following: at('2026-05-01T11:00:00Z'),
    });
  });

  it('after a longer pause runs the latest slot and reports the older ones as missed, together', () => {
    expect(dueSlot(hourly, at('2026-05-01T10:00:00Z'), at('2026-05-01T13:20:00Z'))).toEqual({
      slot: at('2026-05-01T13:00:00Z'),
      missed: { first: at('2026-05-01T10:00:00Z'), last: at('2026-05-01T12:00:00Z'), count: 3 },
      following: at('2026-05-01T14:00:00Z'),
    });
    const daily = new CronTiming('0 3 * * *', 'UTC');
    expect(dueSlot(daily, at('2026-05-01T03:00:00Z'), at('2026-05-10T02:00:00Z'))?.missed).toEqual({
      first: at('2026-05-01T03:00:00Z'),
      last: at('2026-05-08T03:00:00Z'),
      count: 8,
    });
  });
});
