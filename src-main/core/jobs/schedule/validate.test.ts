import { describe, expect, it } from 'vitest';
import { validateSchedule } from './validate';
import { cnCalendar, weekdaysUtc } from './fixtures.test-helpers';
import type { Calendar, Schedule, ValidationIssue } from './types';

const daily: Schedule = { cron: '0 9 * * *', timezone: 'Asia/Shanghai' };
const fields = (issues: ValidationIssue[]): string[] => issues.map((i) => `${i.severity} ${i.field}`);

describe('validateSchedule: consistent settings', () => {
  it('returns nothing for the spec example job', () => {
    expect(
      validateSchedule(daily, { start: '09:00', end: '10:00', recheckEveryS: 300 }, cnCalendar, 'skip'),
    ).toEqual([]);
    expect(validateSchedule({ everyS: 300 })).toEqual([]);
    expect(validateSchedule({ cron: '0 9 * * 1-5', timezone: 'UTC' }, { start: '08:00', end: '24:00', recheckEveryS: 60 })).toEqual([]);
  });
});

describe('validateSchedule: schedule', () => {
  it('unknown zone', () => {
    expect(validateSchedule({ cron: '0 9 * * *', timezone: 'Asia/Beijing' })).toEqual([
      { field: 'schedule.timezone', severity: 'error', message: "'Asia/Beijing' is not a known IANA time zone (for example 'Europe/Berlin')" },
    ]);
    expect(fields(validateSchedule({ everyS: 60, timezone: 'PST8PDT-ish' }))).toEqual(['error schedule.timezone']);
  });

  it('cron without a zone', () => {
    const issues = validateSchedule({ cron: '0 9 * * *' } as unknown as Schedule);
    expect(issues).toEqual([
      { field: 'schedule.timezone', severity: 'error', message: 'a cron schedule needs a time zone, because its times are wall-clock times' },
    ]);
  });

  it('bad cron', () => {
    expect(validateSchedule({ cron: '0 9 * *', timezone: 'UTC' })).toEqual([
      {
        field: 'schedule.cron',
        severity: 'error',
        message: "cron '0 9 * *' has 4 fields; exactly 5 are required (minute hour day-of-month month day-of-week).",
      },
    ]);
    expect(validateSchedule({ cron: '0 0 30 2 *', timezone: 'UTC' })).toEqual([
      {
        field: 'schedule.cron',
        severity: 'error',
        message: "cron '0 0 30 2 *' matches no date at all (for example February 30), so it never fires",
      },
    ]);
  });

  it('everyS < 1, fractional or not a number', () => {
    expect(validateSchedule({ everyS: 0 })).toEqual([
      { field: 'schedule.everyS', severity: 'error', message: 'everyS is 0; an interval must be at least 1 second' },
    ]);
    expect(validateSchedule({ everyS: -5 })[0]?.message).toBe('everyS is -5; an interval must be at least 1 second');
    expect(validateSchedule({ everyS: 2.5 })[0]?.message).toBe('everyS is 2.5; use a whole number of seconds');
    expect(validateSchedule({ everyS: '60' } as unknown as Schedule)[0]?.message).toBe('everyS must be a number of seconds');
  });

  it('neither or both kinds', () => {
    expect(fields(validateSchedule({} as unknown as Schedule))).toEqual(['error schedule']);
    expect(validateSchedule({ cron: '0 9 * * *', timezone: 'UTC', everyS: 60 } as unknown as Schedule)[0]?.message).toBe(
      'schedule has both cron and everyS; use one of them',
    );
  });
});

describe('validateSchedule: window', () => {
  it('end not after start', () => {
    expect(validateSchedule(daily, { start: '10:00', end: '09:00', recheckEveryS: 300 })).toEqual([
      {
        field: 'window.end',
        severity: 'error',
        message: 'window end 09:00 is not after its start 10:00; windows cannot cross midnight or be empty (use 24:00 for end of day)',
      },
    ]);
    expect(fields(validateSchedule(daily, { start: '09:00', end: '09:00', recheckEveryS: 300 }))).toEqual(['error window.end']);
  });

  it('malformed times', () => {
    expect(fields(validateSchedule(daily, { start: '9am', end: '25:00', recheckEveryS: 300 }))).toEqual([
      'error window.start',
      'error window.end',
    ]);
  });

  it('recheckEveryS <= 0 or longer than the window', () => {
    expect(validateSchedule(daily, { start: '09:00', end: '10:00', recheckEveryS: 0 })).toEqual([
      {
        field: 'window.recheckEveryS',
        severity: 'error',
        message: 'recheckEveryS is 0; the window must be re-checked every N seconds with N > 0',
      },
    ]);
    expect(validateSchedule(daily, { start: '09:00', end: '10:00', recheckEveryS: 7200 })).toEqual([
      {
        field: 'window.recheckEveryS',
        severity: 'error',
        message:
          'recheckEveryS is 7200 s but the window 09:00–10:00 lasts only 3600 s, so the first re-check would come after the window has closed',
      },
    ]);
  });

  it('a cron that never fires inside its window', () => {
    expect(validateSchedule({ cron: '0 8 * * *', timezone: 'UTC' }, { start: '09:00', end: '10:00', recheckEveryS: 300 })).toEqual([
      {
        field: 'window',
        severity: 'error',
        message: "cron '0 8 * * *' fires only at 08:00 local time, all outside the window 09:00–10:00, so it never fires inside its window",
      },
    ]);
    // The end is exclusive: 10:00 is outside 09:00–10:00.
    expect(fields(validateSchedule({ cron: '0 10 * * *', timezone: 'UTC' }, { start: '09:00', end: '10:00', recheckEveryS: 300 }))).toEqual([
      'error window',
    ]);
    expect(
      validateSchedule({ cron: '*/10 0-5 * * *', timezone: 'UTC' }, { start: '09:00', end: '10:00', recheckEveryS: 300 })[0]?.message,
    ).toBe("cron '*/10 0-5 * * *' fires only at 00:00, 00:10, 00:20, 00:30, … (36 times a day) local time, all outside the window 09:00–10:00, so it never fires inside its window");
    expect(validateSchedule({ cron: '50 9 * * *', timezone: 'UTC' }, { start: '09:00', end: '10:00', recheckEveryS: 300 })).toEqual([]);
  });
});

describe('validateSchedule: calendar', () => {
  it('calendarPolicy without a calendar', () => {
    expect(validateSchedule(daily, undefined, undefined, 'next_workday')).toEqual([
      {
        field: 'calendarPolicy',
        severity: 'error',
        message: "calendarPolicy 'next_workday' is set but the job has no calendar, so there are no non-workdays to move",
      },
    ]);
  });

  it('an invalid calendar is reported field by field', () => {
    const bad: Calendar = { ...cnCalendar, extraWorkdays: ['2026-10-01'] };
    expect(validateSchedule(daily, undefined, bad, 'skip')).toEqual([
      {
        field: 'calendar.extraWorkdays',
        severity: 'error',
        message: '2026-10-01 is both a holiday and a make-up workday; a date can only be one of them',
      },
    ]);
  });

  it('a weekly cron on a day that is never a workday, with skip: never runs', () => {
    expect(validateSchedule({ cron: '0 9 * * 6', timezone: 'UTC' }, undefined, weekdaysUtc, 'skip')).toEqual([
      {
        field: 'calendarPolicy',
        severity: 'error',
        message:
          "cron '0 9 * * 6' fires only on Saturday, which is never a workday in calendar 'mon-fri' and no make-up workday falls on it; with calendarPolicy 'skip' the job never runs",
      },
    ]);
    // A weekend-only job fires on make-up Saturdays only: a warning, not an error.
    const cnUtc = { ...cnCalendar, timezone: 'Asia/Shanghai' };
    expect(validateSchedule({ cron: '0 9 * * SAT,SUN', timezone: 'Asia/Shanghai' }, undefined, cnUtc, 'skip')).toEqual([
      {
        field: 'calendarPolicy',
        severity: 'warning',
        message:
          "cron '0 9 * * SAT,SUN' fires only on Saturday and Sunday, which is not a workday in calendar 'cn-workdays'; with calendarPolicy 'skip' it runs only on the 2 make-up workday(s) 2026-09-20, 2026-10-10",
      },
    ]);
    // next_workday moves them instead: consistent.
    expect(validateSchedule({ cron: '0 9 * * 6', timezone: 'UTC' }, undefined, weekdaysUtc, 'next_workday')).toEqual([]);
  });

  it('a monthly cron whose every fire is a holiday, with skip: never runs (simulated)', () => {
    const yearly: Schedule = { cron: '0 9 1 10 *', timezone: 'Asia/Shanghai' }; // 1 October only
    const issues = validateSchedule(yearly, undefined, cnCalendar, 'skip');
    expect(issues).toEqual([
      {
        field: 'calendarPolicy',
        severity: 'error',
        message:
          "every one of the 1 occurrences of cron '0 9 1 10 *' (2026-10-01 … 2026-10-01) falls on a non-workday of calendar 'cn-workdays'; with calendarPolicy 'skip' the job never runs (use 'next_workday' or change the cron)",
      },
    ]);
    // With an explicit reference year starting 2026-09-01 the answer is the same.
    expect(fields(validateSchedule(yearly, undefined, cnCalendar, 'skip', { fromMs: Date.UTC(2026, 8, 1) }))).toEqual([
      'error calendarPolicy',
    ]);
  });

  it('warns about zone mismatches and next_workday on sub-daily jobs', () => {
    expect(validateSchedule({ cron: '0 9 * * *', timezone: 'Europe/Berlin' }, undefined, cnCalendar)).toEqual([
      {
        field: 'calendar.timezone',
        severity: 'warning',
        message: "calendar 'cn-workdays' is meant for Asia/Shanghai but the job runs in Europe/Berlin; its dates are read as dates in Europe/Berlin",
      },
    ]);
    expect(fields(validateSchedule({ everyS: 3600 }, undefined, weekdaysUtc, 'skip'))).toEqual(['warning schedule.timezone']);
    expect(fields(validateSchedule({ cron: '0 * * * *', timezone: 'UTC' }, undefined, weekdaysUtc, 'next_workday'))).toEqual([
      'warning calendarPolicy',
    ]);
  });
});
