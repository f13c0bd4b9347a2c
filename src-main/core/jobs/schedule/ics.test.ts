import { describe, expect, it } from 'vitest';
import { IcsParseError, parseIcsCalendar } from './ics';
import { dayType, validateCalendar } from './calendar';
import type { Calendar } from './types';

/** Mainland China 2026 holiday feed (the shape published by public CN holiday calendars). */
const CN_ICS = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//Example//China Holidays 2026//CN',
  'CALSCALE:GREGORIAN',
  'X-WR-CALNAME:中国法定节假日 2026',
  'X-WR-TIMEZONE:Asia/Shanghai',
  'BEGIN:VEVENT',
  'UID:2026-spring-festival@example.cn',
  'DTSTAMP:20251104T000000Z',
  'DTSTART;VALUE=DATE:20260215',
  'DTEND;VALUE=DATE:20260224',
  'SUMMARY:春节 休',
  'CATEGORIES:法定节假日',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:2026-spring-festival-makeup-1@example.cn',
  'DTSTAMP:20251104T000000Z',
  'DTSTART;VALUE=DATE:20260214',
  'SUMMARY:春节 补班',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:2026-spring-festival-makeup-2@example.cn',
  'DTSTAMP:20251104T000000Z',
  'DTSTART;VALUE=DATE:20260228',
  'DTEND;VALUE=DATE:20260301',
  'SUMMARY:春节调休',
  'CATEGORIES:上班',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:2026-national-day@example.cn',
  'DTSTAMP:20251104T000000Z',
  'DTSTART;VALUE=DATE:20261001',
  'DTEND;VALUE=DATE:20261008',
  'SUMMARY:国庆节、中秋节 休',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:2026-national-day-makeup-sunday@example.cn',
  'DTSTAMP:20251104T000000Z',
  'DTSTART;VALUE=DATE:20260920',
  'DTEND;VALUE=DATE:20260921',
  'SUMMARY:国庆节 补班',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:2026-national-day-makeup-saturday@example.cn',
  'DTSTAMP:20251104T000000Z',
  'DTSTART;TZID=Asia/Shanghai:20261010T090000',
  'DTEND;TZID=Asia/Shanghai:20261010T180000',
  'SUMMARY:调休上班',
  'END:VEVENT',
  'END:VCALENDAR',
  '',
].join('\r\n');

/** US federal holidays, Google-Calendar style, with a yearly rule and a timed UTC event. */
const US_ICS = `BEGIN:VCALENDAR
PRODID:-//Google Inc//Google Calendar 70.9054//EN
VERSION:2.0
CALSCALE:GREGORIAN
METHOD:PUBLISH
X-WR-CALNAME:Holidays in United States
BEGIN:VEVENT
DTSTART;VALUE=DATE:20260101
DTEND;VALUE=DATE:20260102
RRULE:FREQ=YEARLY;COUNT=3
DTSTAMP:20260101T000000Z
UID:new-years-day@example.com
SUMMARY:New Year's Day
CATEGORIES:Public holiday
END:VEVENT
BEGIN:VEVENT
DTSTART;VALUE=DATE:20260703
DTEND;VALUE=DATE:20260704
DTSTAMP:20260101T000000Z
UID:independence-day-observed@example.com
SUMMARY:Independence Day (observed)
END:VEVENT
BEGIN:VEVENT
DTSTART;VALUE=DATE:20261126
DTEND;VALUE=DATE:20261127
DTSTAMP:20260101T000000Z
UID:thanksgiving@example.com
SUMMARY:Thanksgiving Day
END:VEVENT
BEGIN:VEVENT
DTSTART:20261127T050000Z
DTEND:20261128T050000Z
DTSTAMP:20260101T000000Z
UID:day-after-thanksgiving@example.com
SUMMARY:Company holiday (office closed)
END:VEVENT
BEGIN:VEVENT
DTSTART;VALUE=DATE:20261225
DTEND;VALUE=DATE:20261226
DTSTAMP:20260101T000000Z
UID:christmas@example.com
SUMMARY:Christmas Day
END:VEVENT
BEGIN:VEVENT
DTSTART;VALUE=DATE:20261224
DTEND;VALUE=DATE:20261225
DTSTAMP:20260101T000000Z
UID:christmas-eve@example.com
STATUS:CANCELLED
SUMMARY:Christmas Eve
END:VEVENT
END:VCALENDAR
`;

describe('parseIcsCalendar: Chinese calendar', () => {
  const data = parseIcsCalendar(CN_ICS);

  it('expands multi-day all-day events with DTEND exclusive', () => {
    expect(data.holidays).toEqual([
      '2026-02-15', '2026-02-16', '2026-02-17', '2026-02-18', '2026-02-19', '2026-02-20', '2026-02-21',
      '2026-02-22', '2026-02-23',
      '2026-10-01', '2026-10-02', '2026-10-03', '2026-10-04', '2026-10-05', '2026-10-06', '2026-10-07',
    ]);
  });

  it('recognises make-up workdays by SUMMARY or CATEGORIES, including a Sunday and a timed event', () => {
    expect(data.extraWorkdays).toEqual(['2026-02-14', '2026-02-28', '2026-09-20', '2026-10-10']);
    expect(data.name).toBe('中国法定节假日 2026');
    expect(data.timezone).toBe('Asia/Shanghai');
    expect(data.warnings).toEqual([]);
  });

  it('feeds a valid Calendar in which the 补班 Sunday is a workday', () => {
    const cal: Calendar = {
      id: 'cn',
      name: data.name ?? 'cn',
      timezone: data.timezone ?? 'Asia/Shanghai',
      workdays: [1, 2, 3, 4, 5],
      holidays: data.holidays,
      extraWorkdays: data.extraWorkdays,
    };
    expect(validateCalendar(cal)).toEqual([]);
    expect(dayType(cal, '2026-09-20')).toBe('extra_workday');
    expect(dayType(cal, '2026-02-17')).toBe('holiday');
  });
});

describe('parseIcsCalendar: US calendar', () => {
  it('imports holidays, expands a yearly rule, ignores cancelled events', () => {
    const data = parseIcsCalendar(US_ICS, { timezone: 'America/New_York' });
    expect(data.holidays).toEqual([
      '2026-01-01',
      '2026-07-03',
      '2026-11-26',
      '2026-11-27', // 05:00Z–05:00Z next day is exactly 27 Nov in New York (end exclusive)
      '2026-12-25',
      '2027-01-01',
      '2028-01-01',
    ]);
    expect(data.extraWorkdays).toEqual([]);
    expect(data.name).toBe('Holidays in United States');
    expect(data.warnings).toEqual(["event 'Christmas Eve' is cancelled and was ignored"]);
  });

  it('without a zone, dates timed UTC events by their UTC date and says so', () => {
    const data = parseIcsCalendar(US_ICS);
    expect(data.holidays).toContain('2026-11-28'); // 05:00Z on the 28th is still the 28th in UTC
    expect(data.warnings).toContain(
      'timed events in UTC were dated by their UTC date; pass a timezone to date them locally',
    );
  });

  it('warns about an unbounded rule and expands it for the given years', () => {
    const text = US_ICS.replace('RRULE:FREQ=YEARLY;COUNT=3', 'RRULE:FREQ=YEARLY');
    const data = parseIcsCalendar(text, { timezone: 'America/New_York', recurrenceYears: 2 });
    expect(data.holidays.filter((d) => d.endsWith('-01-01'))).toEqual(['2026-01-01', '2027-01-01']);
    expect(data.warnings).toContain(
      "event 'New Year's Day' repeats without end; it was expanded for 2 years (2026–2027)",
    );
  });
});

describe('parseIcsCalendar: edge cases', () => {
  it('keeps a date marked both ways as a make-up workday, with a warning', () => {
    const text = CN_ICS.replace('DTSTART;VALUE=DATE:20260920', 'DTSTART;VALUE=DATE:20261007').replace(
      'DTEND;VALUE=DATE:20260921',
      'DTEND;VALUE=DATE:20261008',
    );
    const data = parseIcsCalendar(text);
    expect(data.extraWorkdays).toContain('2026-10-07');
    expect(data.holidays).not.toContain('2026-10-07');
    expect(data.warnings).toEqual([
      '2026-10-07 is marked both as a holiday and as a make-up workday; it was kept as a make-up workday',
    ]);
  });

  it('"non-working day" is a holiday, not a make-up day', () => {
    const text = CN_ICS.replace('SUMMARY:春节 补班', 'SUMMARY:Non-working day');
    expect(parseIcsCalendar(text).holidays).toContain('2026-02-14');
  });

  it('throws IcsParseError with a clear message for bad text', () => {
    expect(() => parseIcsCalendar('')).toThrow(new IcsParseError('the .ics text is empty'));
    expect(() => parseIcsCalendar('BEGIN:VCALENDAR\r\nX-WR-CALNAME:half \ud83d\r\nEND:VCALENDAR\r\n')).toThrow(
      new IcsParseError('the .ics text is not valid Unicode (it holds an unpaired UTF-16 surrogate)'),
    );
    expect(() => parseIcsCalendar('hello world')).toThrow(IcsParseError);
    expect(() => parseIcsCalendar('hello world')).toThrow(/^not valid iCalendar text: /);
    expect(() => parseIcsCalendar('BEGIN:VEVENT\r\nSUMMARY:x\r\nEND:VEVENT\r\n')).toThrow(
      'no BEGIN:VCALENDAR … END:VCALENDAR block found',
    );
    expect(() => parseIcsCalendar(CN_ICS, { timezone: 'Nowhere/City' })).toThrow(IcsParseError);
  });

  it('an empty calendar is not an error, just a warning', () => {
    const data = parseIcsCalendar('BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nEND:VCALENDAR\r\n');
    expect(data).toEqual({ holidays: [], extraWorkdays: [], warnings: ['the calendar contains no events'] });
  });
});
