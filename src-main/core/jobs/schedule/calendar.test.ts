import { describe, expect, it } from 'vitest';
import { CalendarError, dayType, isWorkday, nextWorkday, validateCalendar } from './calendar';
import { cnCalendar } from './fixtures.test-helpers';
import type { Calendar } from './types';

describe('dayType / isWorkday', () => {
  it('classifies dates with make-up workday > holiday > weekday precedence', () => {
    expect(dayType(cnCalendar, '2026-09-18')).toBe('workday'); // Friday
    expect(dayType(cnCalendar, '2026-09-19')).toBe('weekend'); // Saturday
    expect(dayType(cnCalendar, '2026-09-20')).toBe('extra_workday'); // Sunday, 补班
    expect(dayType(cnCalendar, '2026-10-01')).toBe('holiday'); // Thursday
    expect(dayType(cnCalendar, '2026-10-03')).toBe('holiday'); // Saturday inside the holiday
    expect(dayType(cnCalendar, '2026-10-10')).toBe('extra_workday'); // Saturday, 补班
    expect(dayType(cnCalendar, '2026-10-11')).toBe('weekend');
    expect(isWorkday(cnCalendar, '2026-09-20')).toBe(true);
    expect(isWorkday(cnCalendar, '2026-10-07')).toBe(false);
    expect(isWorkday(cnCalendar, '2026-10-08')).toBe(true);
  });

  it('rejects a malformed date', () => {
    expect(() => dayType(cnCalendar, '2026-10-32')).toThrow(CalendarError);
  });
});

describe('nextWorkday', () => {
  it('skips weekends and holidays, honours make-up days', () => {
    expect(nextWorkday(cnCalendar, '2026-09-30')).toBe('2026-10-08');
    expect(nextWorkday(cnCalendar, '2026-10-01')).toBe('2026-10-08');
    expect(nextWorkday(cnCalendar, '2026-09-19')).toBe('2026-09-20'); // Saturday → make-up Sunday
    expect(nextWorkday(cnCalendar, '2026-10-09')).toBe('2026-10-10'); // Friday → make-up Saturday
    expect(nextWorkday(cnCalendar, '2026-10-11')).toBe('2026-10-12');
    expect(nextWorkday(cnCalendar, '2026-12-31')).toBe('2027-01-01'); // no 2027 holidays listed
  });

  it('is strict unless inclusive', () => {
    expect(nextWorkday(cnCalendar, '2026-10-08')).toBe('2026-10-09');
    expect(nextWorkday(cnCalendar, '2026-10-08', true)).toBe('2026-10-08');
    expect(nextWorkday(cnCalendar, '2026-10-03', true)).toBe('2026-10-08');
  });

  it('gives up after 366 days with a clear error', () => {
    const never: Calendar = { ...cnCalendar, id: 'never', workdays: [], extraWorkdays: [] };
    expect(() => nextWorkday(never, '2026-01-01')).toThrow(
      "calendar 'never' has no workday within 366 days after 2026-01-01",
    );
    const farAway: Calendar = { ...never, id: 'far', extraWorkdays: ['2027-01-02'] };
    expect(nextWorkday(farAway, '2026-01-01')).toBe('2027-01-02'); // 366 days later: still found
  });
});

describe('validateCalendar', () => {
  it('accepts a good calendar', () => {
    expect(validateCalendar(cnCalendar)).toEqual([]);
  });

  it('reports each problem with its field', () => {
    const bad: Calendar = {
      id: '',
      name: 'Broken',
      timezone: 'Mars/Olympus',
      workdays: [1, 2, 2, 8],
      holidays: ['2026-10-01', '2026-02-30', '2026/10/02'],
      extraWorkdays: ['2026-10-01'],
    };
    const issues = validateCalendar(bad);
    expect(issues.map((i) => [i.field, i.severity])).toEqual([
      ['calendar.id', 'error'],
      ['calendar.timezone', 'error'],
      ['calendar.workdays', 'error'],
      ['calendar.workdays', 'error'],
      ['calendar.holidays', 'error'],
      ['calendar.holidays', 'error'],
      ['calendar.extraWorkdays', 'error'],
    ]);
    const messages = issues.map((i) => i.message);
    expect(messages).toContain("'Mars/Olympus' is not a known IANA time zone (for example 'Asia/Shanghai')");
    expect(messages).toContain('workday 2 is listed twice');
    expect(messages).toContain('workday 8 is not an ISO weekday; use 1 (Monday) … 7 (Sunday)');
    expect(messages).toContain("'2026-02-30' in holidays is not a valid YYYY-MM-DD date");
    expect(messages).toContain('2026-10-01 is both a holiday and a make-up workday; a date can only be one of them');
  });

  it('flags a calendar with no workday at all, and redundant make-up days as warnings', () => {
    const none: Calendar = { ...cnCalendar, workdays: [], extraWorkdays: [] };
    expect(validateCalendar(none)).toEqual([
      {
        field: 'calendar.workdays',
        message: 'the calendar has no workdays and no make-up workdays, so no date is ever a workday',
        severity: 'error',
      },
    ]);
    const redundant: Calendar = { ...cnCalendar, extraWorkdays: ['2026-10-09'] }; // a Friday
    expect(validateCalendar(redundant)).toEqual([
      {
        field: 'calendar.extraWorkdays',
        message: '2026-10-09 is already an ordinary workday, so listing it as a make-up workday changes nothing',
        severity: 'warning',
      },
    ]);
  });
});
