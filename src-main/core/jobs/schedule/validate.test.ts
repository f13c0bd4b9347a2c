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
      { field: 'schedule.everyS', severity: 'error', message: 'the interval is 0 s; it must be at least 1 second' },
    ]);
    expect(validateSchedule({ everyS: -5 })[0]?.message).toBe('the interval is -5 s; it must be at least 1 second');
    expect(validateSchedule({ everyS: 2.5 })[0]?.message).toBe('the interval is 2.5 s; use a whole number of seconds');
    expect(validateSchedule({ everyS: '60' } as unknown as Schedule)[0]?.message).toBe('the interval must be a number of seconds');
  });

  it('neither or both kinds', () => {
    expect(fields(validateSchedule({} as unknown as Schedule))).toEqual(['error schedule']);
    expect(validateSchedule({ cron: '0 9 * * *', timezone: 'UTC', everyS: 60 } as unknown as Schedule)[0]?.message).toBe(
      'the schedule has both a cron and an interval; use one of them',
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
        message: 're-checking every 0 s is not possible; the window must be re-checked every N seconds with N > 0',
      },
    ]);
    expect(validateSchedule(daily, { start: '09:00', end: '10:00', recheckEveryS: 7200 })).toEqual([
      {
        field: 'window.recheckEveryS',
        severity: 'error',
        message:
          're-checking every 7200 s is longer than the window 09:00–10:00 (3600 s), so the first re-check would come after the window has closed',
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
        message: "“move it to the next workday” is chosen for non-workdays but the job has no calendar, so there are none to move",
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
          "cron '0 9 * * 6' fires only on Saturday, which is never a workday in calendar 'mon-fri' and no make-up workday falls on it; with “skip the slot” the job never runs",
      },
    ]);
    // A weekend-only job fires on make-up Saturdays only: a warning, not an error.
    const cnUtc = { ...cnCalendar, timezone: 'Asia/Shanghai' };
    expect(validateSchedule({ cron: '0 9 * * SAT,SUN', timezone: 'Asia/Shanghai' }, undefined, cnUtc, 'skip')).toEqual([
      {
        field: 'calendarPolicy',
        severity: 'warning',
        message:
          "cron '0 9 * * SAT,SUN' fires only on Saturday and Sunday, which is not a workday in calendar 'cn-workdays'; with “skip the slot” it runs only on the 2 make-up workday(s) 2026-09-20, 2026-10-10",
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
          "every one of the 1 occurrences of cron '0 9 1 10 *' (2026-10-01 … 2026-10-01) falls on a non-workday of calendar 'cn-workdays'; with “skip the slot” the job never runs (choose “move it to the next workday” or change the cron)",
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

describe('validateSchedule: cron day fields, windows and DST', () => {
  it('warns when both day fields are restricted: cron fires on a day matching EITHER', () => {
    const [leap] = validateSchedule({ cron: '0 0 29 2 1', timezone: 'UTC' });
    expect(leap).toMatchObject({ field: 'schedule.cron', severity: 'warning' });
    expect(leap?.message).toMatch(/it runs on every Monday in February as well as on day 29 of the month, not only when both match.*'0 0 29 2 \+1'/);
    expect(validateSchedule({ cron: '0 9 1,15 * MON-FRI', timezone: 'UTC' })[0]?.message).toMatch(/every Monday, Tuesday, Wednesday, Thursday or Friday as well as on the days of the month '1,15'/);
    expect(validateSchedule({ cron: '0 9 1 * 1#1', timezone: 'UTC' })[0]?.message).toMatch(/every day matching '1#1' as well as on day 1 of the month/);
    // One day field restricted, or '+' (both must match): nothing to warn about.
    for (const cron of ['0 9 * * MON-FRI', '0 0 29 2 *', '0 9 L * *', '0 0 29 2 +1']) expect(validateSchedule({ cron, timezone: 'UTC' }), cron).toEqual([]);
  });

  const nyGap = { cron: '30 2 * * *', timezone: 'America/New_York' };
  const from = Date.UTC(2026, 11, 1);
  it('a window whose start lies in a DST gap warns, naming the day and what the window does then', () => {
    expect(validateSchedule(nyGap, { start: '02:30', end: '02:45', recheckEveryS: 60 }, undefined, undefined, { fromMs: from })).toEqual([
      {
        field: 'window.start',
        severity: 'warning',
        message: 'on 2027-03-14 the clocks in America/New_York jump from 02:00 to 03:00, so the window start 02:30 does not exist: on that day the window opens at 03:00, with its slot, and keeps its 15 min',
      },
    ]);
    // Without a reference instant nothing is simulated (the check needs the coming year).
    expect(validateSchedule(nyGap, { start: '02:30', end: '02:45', recheckEveryS: 60 })).toEqual([]);
  });

  it('a window whose end lies in a gap warns that it keeps its length; one across the gap does not warn', () => {
    expect(fields(validateSchedule({ cron: '30 1 * * *', timezone: 'America/New_York' }, { start: '01:00', end: '02:45', recheckEveryS: 60 }, undefined, undefined, { fromMs: from }))).toEqual(['warning window.end']);
    expect(validateSchedule({ cron: '30 1 * * *', timezone: 'America/New_York' }, { start: '01:30', end: '03:30', recheckEveryS: 60 }, undefined, undefined, { fromMs: from })).toEqual([]);
    // A zone whose clocks skip midnight: a window ending at 24:00 on the day before.
    expect(validateSchedule({ cron: '30 23 * * *', timezone: 'America/Santiago' }, { start: '23:00', end: '24:00', recheckEveryS: 60 }, undefined, undefined, { fromMs: from })[0]?.message).toMatch(
      /^on 2027-09-04 the clocks in America\/Santiago jump from 00:00 to 01:00, so the window end 24:00 does not exist/,
    );
  });

  it('an interval with a window warns that only slots inside the window can start', () => {
    expect(validateSchedule({ everyS: 3600 }, { start: '09:00', end: '10:00', recheckEveryS: 60 })).toEqual([
      expect.objectContaining({ field: 'window', severity: 'warning', message: expect.stringMatching(/slots due after it closes are recorded as missed/) }),
    ]);
    expect(validateSchedule({ everyS: 86_400 }, { start: '09:00', end: '10:00', recheckEveryS: 60 })).toEqual([]);
  });
});
