import { describe, expect, it } from 'vitest';
import { expectedSlots, nextSlots, slotAt, windowFor } from './slots';
import { cnCalendar, weekdaysUtc } from './fixtures.test-helpers';
import { ScheduleError, type SlotOccurrence, type SlotSpec } from './types';

const iso = (ms: number): string => new Date(ms).toISOString();
const H = 3_600_000;
const D = 24 * H;
const brief = (o: SlotOccurrence): string =>
  `${o.slot} ${iso(o.at).slice(0, 16)}Z ${o.disposition}${o.shifted ? ' shifted' : ''}${o.movedFrom ? ` from ${o.movedFrom}` : ''}`;

function assertUniqueAndOrdered(list: SlotOccurrence[]): void {
  expect(new Set(list.map((o) => o.slot)).size).toBe(list.length);
  const misordered: string[] = [];
  for (let i = 1; i < list.length; i++) {
    const a = list[i - 1]!;
    const b = list[i]!;
    if (!(a.at < b.at || (a.at === b.at && a.slot < b.slot))) misordered.push(`${brief(a)} / ${brief(b)}`);
  }
  expect(misordered).toEqual([]);
}

describe('expectedSlots: daily keys', () => {
  it('Asia/Shanghai (no DST) daily 09:00', () => {
    const spec: SlotSpec = { schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' } };
    const s = expectedSlots(spec, Date.UTC(2026, 10, 29), Date.UTC(2026, 11, 2));
    expect(s).toEqual([
      { slot: '2026-11-29', at: Date.UTC(2026, 10, 29, 1), local: '2026-11-29T09:00', disposition: 'due' },
      { slot: '2026-11-30', at: Date.UTC(2026, 10, 30, 1), local: '2026-11-30T09:00', disposition: 'due' },
      { slot: '2026-12-01', at: Date.UTC(2026, 11, 1, 1), local: '2026-12-01T09:00', disposition: 'due' },
    ]);
  });

  it('a whole year of a Shanghai daily job with a calendar: 365 distinct days', () => {
    const spec: SlotSpec = { schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' }, calendar: cnCalendar };
    const s = expectedSlots(spec, Date.UTC(2025, 11, 31, 16), Date.UTC(2026, 11, 31, 16));
    expect(s).toHaveLength(365);
    expect(s[0]?.slot).toBe('2026-01-01');
    expect(s[364]?.slot).toBe('2026-12-31');
    // 2026: 261 Mon–Fri days, minus 5 holidays on weekdays (Oct 1,2,5,6,7), plus 2 make-up days.
    expect(s.filter((o) => o.disposition === 'due')).toHaveLength(261 - 5 + 2);
    assertUniqueAndOrdered(s);
  });
});

describe('expectedSlots: DST, New York', () => {
  const daily = (dst?: 'skip'): SlotSpec => ({
    schedule: { cron: '30 2 * * *', timezone: 'America/New_York' },
    ...(dst ? { dstGapPolicy: dst } : {}),
  });

  it('daily 02:30 across spring forward: shifted, flagged, not dropped', () => {
    const s = expectedSlots(daily(), Date.UTC(2026, 2, 7), Date.UTC(2026, 2, 10));
    expect(s.map(brief)).toEqual([
      '2026-03-07 2026-03-07T07:30Z due',
      '2026-03-08 2026-03-08T07:00Z due shifted',
      '2026-03-09 2026-03-09T06:30Z due',
    ]);
    expect(s[1]?.local).toBe('2026-03-08T02:30'); // nominal time, not the shifted one
  });

  it('daily 02:30 across spring forward under skip: reported as dst_skip', () => {
    const s = expectedSlots(daily('skip'), Date.UTC(2026, 2, 7), Date.UTC(2026, 2, 10));
    expect(s.map(brief)).toEqual([
      '2026-03-07 2026-03-07T07:30Z due',
      '2026-03-08 2026-03-08T07:00Z dst_skip',
      '2026-03-09 2026-03-09T06:30Z due',
    ]);
  });

  it('daily 02:30 across fall back: exactly one per day', () => {
    const s = expectedSlots(daily(), Date.UTC(2026, 9, 31), Date.UTC(2026, 10, 3));
    expect(s.map(brief)).toEqual([
      '2026-10-31 2026-10-31T06:30Z due',
      '2026-11-01 2026-11-01T07:30Z due',
      '2026-11-02 2026-11-02T07:30Z due',
    ]);
  });

  it('hourly across spring forward: 24 local hours, 02:00 shifted onto 03:00, nothing lost', () => {
    const spec: SlotSpec = { schedule: { cron: '0 * * * *', timezone: 'America/New_York' } };
    // Local day 2026-03-08 runs from 05:00Z to 04:00Z next day (23 real hours).
    const s = expectedSlots(spec, Date.UTC(2026, 2, 8, 5), Date.UTC(2026, 2, 9, 4));
    expect(s).toHaveLength(24);
    expect(s.map((o) => o.slot)).toEqual(Array.from({ length: 24 }, (_, h) => `2026-03-08T${String(h).padStart(2, '0')}:00`).sort());
    expect(s.slice(0, 5).map(brief)).toEqual([
      '2026-03-08T00:00 2026-03-08T05:00Z due',
      '2026-03-08T01:00 2026-03-08T06:00Z due',
      '2026-03-08T02:00 2026-03-08T07:00Z due shifted',
      '2026-03-08T03:00 2026-03-08T07:00Z due',
      '2026-03-08T04:00 2026-03-08T08:00Z due',
    ]);
    assertUniqueAndOrdered(s);
  });

  it('hourly across spring forward under skip', () => {
    const spec: SlotSpec = { schedule: { cron: '0 * * * *', timezone: 'America/New_York' }, dstGapPolicy: 'skip' };
    const s = expectedSlots(spec, Date.UTC(2026, 2, 8, 5), Date.UTC(2026, 2, 9, 4));
    expect(s.filter((o) => o.disposition === 'dst_skip').map((o) => o.slot)).toEqual(['2026-03-08T02:00']);
    expect(s.filter((o) => o.disposition === 'due')).toHaveLength(23);
  });

  it('hourly across fall back: 25 real hours, 24 slots, 01:00 runs once (EDT)', () => {
    const spec: SlotSpec = { schedule: { cron: '0 * * * *', timezone: 'America/New_York' } };
    const s = expectedSlots(spec, Date.UTC(2026, 10, 1, 4), Date.UTC(2026, 10, 2, 5));
    expect(s).toHaveLength(24);
    expect(s.slice(0, 4).map(brief)).toEqual([
      '2026-11-01T00:00 2026-11-01T04:00Z due',
      '2026-11-01T01:00 2026-11-01T05:00Z due',
      '2026-11-01T02:00 2026-11-01T07:00Z due',
      '2026-11-01T03:00 2026-11-01T08:00Z due',
    ]);
    expect(s.some((o) => o.at === Date.UTC(2026, 10, 1, 6))).toBe(false);
    assertUniqueAndOrdered(s);
  });

  it('5-minute interval across fall back: 25 real hours of slots, the second pass keyed with its offset', () => {
    const spec: SlotSpec = { schedule: { everyS: 300, timezone: 'America/New_York' } };
    const s = expectedSlots(spec, Date.UTC(2026, 10, 1, 4), Date.UTC(2026, 10, 2, 5));
    expect(s).toHaveLength(25 * 12);
    expect(s.find((o) => o.slot === '2026-11-01T01:30')?.at).toBe(Date.UTC(2026, 10, 1, 5, 30));
    expect(s.find((o) => o.slot === '2026-11-01T01:30-05:00')?.at).toBe(Date.UTC(2026, 10, 1, 6, 30));
    // A query covering only the second pass returns its own slots.
    const second = expectedSlots(spec, Date.UTC(2026, 10, 1, 6), Date.UTC(2026, 10, 1, 7));
    expect(second).toHaveLength(12);
    expect(second.every((o) => o.slot.endsWith('-05:00') && o.local === o.slot.slice(0, 16))).toBe(true);
    assertUniqueAndOrdered(s);
  });

  it('5-minute interval across spring forward: 23 hours of slots, none invented', () => {
    const spec: SlotSpec = { schedule: { everyS: 300, timezone: 'America/New_York' } };
    const s = expectedSlots(spec, Date.UTC(2026, 2, 8, 5), Date.UTC(2026, 2, 9, 4));
    expect(s).toHaveLength(23 * 12);
    expect(s.some((o) => o.slot.startsWith('2026-03-08T02:'))).toBe(false);
    expect(s.every((o) => o.disposition === 'due' && !o.shifted)).toBe(true);
  });
});

describe('expectedSlots: DST, Berlin', () => {
  it('hourly across spring forward (2026-03-29) and fall back (2026-10-25)', () => {
    const spec: SlotSpec = { schedule: { cron: '0 * * * *', timezone: 'Europe/Berlin' } };
    const spring = expectedSlots(spec, Date.UTC(2026, 2, 28, 23), Date.UTC(2026, 2, 29, 22));
    expect(spring).toHaveLength(24);
    expect(spring.slice(1, 4).map(brief)).toEqual([
      '2026-03-29T01:00 2026-03-29T00:00Z due',
      '2026-03-29T02:00 2026-03-29T01:00Z due shifted',
      '2026-03-29T03:00 2026-03-29T01:00Z due',
    ]);
    const fall = expectedSlots(spec, Date.UTC(2026, 9, 24, 22), Date.UTC(2026, 9, 25, 23));
    expect(fall).toHaveLength(24);
    expect(fall.slice(1, 4).map(brief)).toEqual([
      '2026-10-25T01:00 2026-10-24T23:00Z due',
      '2026-10-25T02:00 2026-10-25T00:00Z due',
      '2026-10-25T03:00 2026-10-25T02:00Z due',
    ]);
    assertUniqueAndOrdered(fall);
  });

  it('daily 02:30 over the whole year: 365 slots, one shifted, none doubled', () => {
    const spec: SlotSpec = { schedule: { cron: '30 2 * * *', timezone: 'Europe/Berlin' } };
    const s = expectedSlots(spec, Date.UTC(2025, 11, 31, 23), Date.UTC(2026, 11, 31, 23));
    expect(s).toHaveLength(365);
    expect(s.filter((o) => o.shifted).map((o) => o.slot)).toEqual(['2026-03-29']);
    expect(s.find((o) => o.slot === '2026-10-25')?.at).toBe(Date.UTC(2026, 9, 25, 0, 30));
    assertUniqueAndOrdered(s);
  });
});

describe('expectedSlots: calendars', () => {
  const base = { schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' }, calendar: cnCalendar } as const;
  const shanghai = (y: number, m: number, d: number, h = 9): number => Date.UTC(y, m - 1, d, h - 8);

  it('skip: non-workdays are reported as calendar_skip, the make-up Sunday runs', () => {
    const s = expectedSlots({ ...base, calendarPolicy: 'skip' }, shanghai(2026, 9, 18, 0), shanghai(2026, 9, 22, 0));
    expect(s.map((o) => [o.slot, o.dayType, o.disposition])).toEqual([
      ['2026-09-18', 'workday', 'due'],
      ['2026-09-19', 'weekend', 'calendar_skip'],
      ['2026-09-20', 'extra_workday', 'due'],
      ['2026-09-21', 'workday', 'due'],
    ]);
    expect(s[1]?.at).toBe(shanghai(2026, 9, 19)); // when it would have run
  });

  it('next_workday: Golden Week slots move to 2026-10-08 and keep their own keys', () => {
    const spec: SlotSpec = { ...base, calendarPolicy: 'next_workday' };
    const s = expectedSlots(spec, shanghai(2026, 9, 30, 0), shanghai(2026, 10, 11, 0));
    expect(s.map(brief)).toEqual([
      '2026-09-30 2026-09-30T01:00Z due',
      '2026-10-01 2026-10-08T01:00Z due from 2026-10-01',
      '2026-10-02 2026-10-08T01:00Z due from 2026-10-02',
      '2026-10-03 2026-10-08T01:00Z due from 2026-10-03',
      '2026-10-04 2026-10-08T01:00Z due from 2026-10-04',
      '2026-10-05 2026-10-08T01:00Z due from 2026-10-05',
      '2026-10-06 2026-10-08T01:00Z due from 2026-10-06',
      '2026-10-07 2026-10-08T01:00Z due from 2026-10-07',
      '2026-10-08 2026-10-08T01:00Z due',
      '2026-10-09 2026-10-09T01:00Z due',
      '2026-10-10 2026-10-10T01:00Z due', // make-up Saturday
    ]);
    expect(s[1]).toMatchObject({ local: '2026-10-08T09:00', dayType: 'holiday', movedFrom: '2026-10-01' });
    // The week before: the Saturday moves to the make-up Sunday, not to Monday.
    const before = expectedSlots(spec, shanghai(2026, 9, 19, 0), shanghai(2026, 9, 21, 0));
    expect(before.map(brief)).toEqual([
      '2026-09-19 2026-09-20T01:00Z due from 2026-09-19',
      '2026-09-20 2026-09-20T01:00Z due',
    ]);
  });

  it('next_workday: Saturday 2026-12-05 fires Monday 09:00 with movedFrom', () => {
    const spec: SlotSpec = {
      schedule: { cron: '0 9 * * *', timezone: 'UTC' },
      calendar: weekdaysUtc,
      calendarPolicy: 'next_workday',
    };
    const monday = expectedSlots(spec, Date.UTC(2026, 11, 7), Date.UTC(2026, 11, 8));
    expect(monday).toEqual([
      { slot: '2026-12-05', at: Date.UTC(2026, 11, 7, 9), local: '2026-12-07T09:00', dayType: 'weekend', disposition: 'due', movedFrom: '2026-12-05' },
      { slot: '2026-12-06', at: Date.UTC(2026, 11, 7, 9), local: '2026-12-07T09:00', dayType: 'weekend', disposition: 'due', movedFrom: '2026-12-06' },
      { slot: '2026-12-07', at: Date.UTC(2026, 11, 7, 9), local: '2026-12-07T09:00', dayType: 'workday', disposition: 'due' },
    ]);
    // Nothing is due on the weekend itself.
    expect(expectedSlots(spec, Date.UTC(2026, 11, 5), Date.UTC(2026, 11, 7))).toEqual([]);
  });

  it('consecutive intervals partition the slots (moves, skips and all)', () => {
    for (const calendarPolicy of ['skip', 'next_workday'] as const) {
      const spec: SlotSpec = { ...base, calendarPolicy };
      const from = shanghai(2026, 9, 1, 0);
      const to = shanghai(2026, 11, 1, 0);
      const whole = expectedSlots(spec, from, to);
      const pieces: SlotOccurrence[] = [];
      for (let t = from; t < to; t += 7 * H) pieces.push(...expectedSlots(spec, t, Math.min(t + 7 * H, to)));
      expect(pieces).toEqual(whole);
      assertUniqueAndOrdered(whole);
    }
  });
});

describe('expectedSlots: granularity and intervals', () => {
  it('weekly cron uses ISO week keys across New Year', () => {
    const spec: SlotSpec = { schedule: { cron: '0 9 * * 1', timezone: 'UTC' } };
    const s = expectedSlots(spec, Date.UTC(2026, 11, 20), Date.UTC(2027, 0, 12));
    expect(s.map((o) => o.slot)).toEqual(['2026-W52', '2026-W53', '2027-W01', '2027-W02']);
    expect(s[1]?.local).toBe('2026-12-28T09:00');
  });

  it('monthly cron uses month keys', () => {
    const spec: SlotSpec = { schedule: { cron: '0 6 1 * *', timezone: 'Europe/Berlin' } };
    const s = expectedSlots(spec, Date.UTC(2026, 10, 15), Date.UTC(2027, 1, 15));
    expect(s.map((o) => [o.slot, iso(o.at)])).toEqual([
      ['2026-12', '2026-12-01T05:00:00.000Z'],
      ['2027-01', '2027-01-01T05:00:00.000Z'],
      ['2027-02', '2027-02-01T05:00:00.000Z'],
    ]);
  });

  it('a coarser granularity override: the first occurrence of the period owns the key, whatever the query', () => {
    const spec: SlotSpec = { schedule: { cron: '0 9,17 * * *', timezone: 'UTC' }, granularity: 'day' };
    const s = expectedSlots(spec, Date.UTC(2026, 5, 1), Date.UTC(2026, 5, 3));
    expect(s.map((o) => [o.slot, o.local])).toEqual([
      ['2026-06-01', '2026-06-01T09:00'],
      ['2026-06-02', '2026-06-02T09:00'],
    ]);
    expect(expectedSlots(spec, Date.UTC(2026, 5, 1, 12), Date.UTC(2026, 5, 1, 20))).toEqual([]);
  });

  it('sub-minute intervals get second keys', () => {
    const spec: SlotSpec = { schedule: { everyS: 30 } };
    const s = expectedSlots(spec, Date.UTC(2026, 10, 30, 9), Date.UTC(2026, 10, 30, 9, 1, 30));
    expect(s.map((o) => [o.slot, o.local])).toEqual([
      ['2026-11-30T09:00:00', '2026-11-30T09:00:00'],
      ['2026-11-30T09:00:30', '2026-11-30T09:00:30'],
      ['2026-11-30T09:01:00', '2026-11-30T09:01:00'],
    ]);
  });

  it('a year of a 5-minute UTC job: 365 × 288 slots, all distinct', () => {
    const spec: SlotSpec = { schedule: { everyS: 300 } };
    const s = expectedSlots(spec, Date.UTC(2026, 0, 1), Date.UTC(2027, 0, 1));
    expect(s).toHaveLength(365 * 288);
    expect(s[0]?.slot).toBe('2026-01-01T00:00');
    expect(s[s.length - 1]?.slot).toBe('2026-12-31T23:55');
    expect(new Set(s.map((o) => o.slot)).size).toBe(365 * 288);
  });

  it('a year of a */5 cron in New York: 365 × 288 minus the spring-forward hour plus nothing', () => {
    const spec: SlotSpec = { schedule: { cron: '*/5 * * * *', timezone: 'America/New_York' }, dstGapPolicy: 'skip' };
    const s = expectedSlots(spec, Date.UTC(2026, 0, 1, 5), Date.UTC(2027, 0, 1, 5));
    expect(s).toHaveLength(365 * 288); // every local time has a slot
    expect(s.filter((o) => o.disposition === 'dst_skip')).toHaveLength(12);
    assertUniqueAndOrdered(s);
  });
});

describe('expectedSlots: half-open interval edges', () => {
  const spec: SlotSpec = { schedule: { cron: '0 9 * * *', timezone: 'UTC' } };
  const at = Date.UTC(2026, 5, 1, 9);
  it('includes from, excludes to', () => {
    expect(expectedSlots(spec, at, at + 1).map((o) => o.slot)).toEqual(['2026-06-01']);
    expect(expectedSlots(spec, at - D, at)).toHaveLength(1); // only 2026-05-31
    expect(expectedSlots(spec, at - D, at)[0]?.slot).toBe('2026-05-31');
    expect(expectedSlots(spec, at + 1, at + D)).toEqual([]);
    expect(expectedSlots(spec, at, at)).toEqual([]);
    expect(expectedSlots(spec, at + 5, at)).toEqual([]);
  });

  it('throws ScheduleError for bad input', () => {
    expect(() => expectedSlots({ schedule: { cron: '0 9 * *', timezone: 'UTC' } }, 0, D)).toThrow(ScheduleError);
    expect(() => expectedSlots({ schedule: { cron: '0 9 * * *', timezone: 'Mars/Base' } }, 0, D)).toThrow(/unknown time zone/);
    expect(() => expectedSlots({ schedule: { everyS: 0 } }, 0, D)).toThrow(/everyS/);
  });
});

describe('nextSlots', () => {
  it('returns skipped entries interleaved, stopping at the count-th due one', () => {
    const spec: SlotSpec = { schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' }, calendar: cnCalendar };
    const s = nextSlots(spec, Date.UTC(2026, 8, 30, 1), 2); // right at 2026-09-30 09:00 Shanghai: strictly after
    expect(s.map((o) => `${o.slot} ${o.disposition}`)).toEqual([
      '2026-10-01 calendar_skip',
      '2026-10-02 calendar_skip',
      '2026-10-03 calendar_skip',
      '2026-10-04 calendar_skip',
      '2026-10-05 calendar_skip',
      '2026-10-06 calendar_skip',
      '2026-10-07 calendar_skip',
      '2026-10-08 due',
      '2026-10-09 due',
    ]);
  });

  it('finds yearly slots far ahead and stops at the horizon for a job that never runs', () => {
    const yearly: SlotSpec = { schedule: { cron: '0 0 1 1 *', timezone: 'UTC' } };
    expect(nextSlots(yearly, Date.UTC(2026, 0, 1), 3).map((o) => o.slot)).toEqual(['2027-01', '2028-01', '2029-01']);
    const weekendOnly: SlotSpec = { schedule: { cron: '0 9 * * 6', timezone: 'UTC' }, calendar: weekdaysUtc };
    const s = nextSlots(weekendOnly, Date.UTC(2026, 0, 1), 1, { horizonMs: 30 * D });
    // Saturdays 3, 10, 17 and 24 January; the 31st at 09:00 is past the 30-day horizon.
    expect(s.map((o) => `${o.slot} ${o.disposition}`)).toEqual([
      '2026-W01 calendar_skip',
      '2026-W02 calendar_skip',
      '2026-W03 calendar_skip',
      '2026-W04 calendar_skip',
    ]);
  });

  it('intervals: the next slots after an instant', () => {
    const s = nextSlots({ schedule: { everyS: 3600 } }, Date.UTC(2026, 0, 1, 10, 0), 2);
    expect(s.map((o) => iso(o.at))).toEqual(['2026-01-01T11:00:00.000Z', '2026-01-01T12:00:00.000Z']);
  });
});

describe('slotAt', () => {
  it('explains an instant: the slot it falls in and the next one', () => {
    const spec: SlotSpec = { schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' }, calendar: cnCalendar };
    const r = slotAt(spec, Date.UTC(2026, 9, 3, 6)); // Saturday afternoon in Golden Week
    expect(r.current).toMatchObject({ slot: '2026-10-03', disposition: 'calendar_skip', dayType: 'holiday' });
    expect(r.next).toMatchObject({ slot: '2026-10-04', disposition: 'calendar_skip' });
    const exact = slotAt(spec, Date.UTC(2026, 9, 8, 1));
    expect(exact.current?.slot).toBe('2026-10-08');
    expect(exact.next?.slot).toBe('2026-10-09');
  });

  it('finds a slot long before the instant, and null before any', () => {
    const yearly: SlotSpec = { schedule: { cron: '0 0 1 1 *', timezone: 'UTC' } };
    const r = slotAt(yearly, Date.UTC(2026, 6, 1));
    expect(r.current?.slot).toBe('2026-01');
    expect(r.next?.slot).toBe('2027-01');
    const never: SlotSpec = { schedule: { cron: '0 0 30 2 *', timezone: 'UTC' } };
    expect(slotAt(never, Date.UTC(2026, 6, 1), { horizonMs: 400 * D })).toEqual({ current: null, next: null });
  });
});

describe('windowFor', () => {
  const window = { start: '09:00', end: '10:00', recheckEveryS: 300 };
  it('opens at the window start or the due time, whichever is later', () => {
    const occ = { at: Date.UTC(2026, 10, 30, 0, 30), local: '2026-11-30T08:30' }; // Shanghai 08:30
    expect(windowFor(occ, window, 'Asia/Shanghai')).toEqual({ opensAt: Date.UTC(2026, 10, 30, 1), closesAt: Date.UTC(2026, 10, 30, 2) });
    const late = { at: Date.UTC(2026, 10, 30, 1, 20), local: '2026-11-30T09:20' };
    expect(windowFor(late, window, 'Asia/Shanghai')).toEqual({ opensAt: late.at, closesAt: Date.UTC(2026, 10, 30, 2) });
  });

  it('without a window there is no close', () => {
    expect(windowFor({ at: 123, local: '1970-01-01T00:00' }, undefined, 'UTC')).toEqual({ opensAt: 123, closesAt: null });
  });

  it('is DST aware: the window is 1 real hour on a gap day when it straddles the gap', () => {
    const w = { start: '01:30', end: '03:30', recheckEveryS: 600 };
    const occ = { at: Date.UTC(2026, 2, 8, 6, 30), local: '2026-03-08T01:30' }; // NY 01:30 EST
    const r = windowFor(occ, w, 'America/New_York');
    expect(iso(r.opensAt)).toBe('2026-03-08T06:30:00.000Z');
    expect(iso(r.closesAt ?? 0)).toBe('2026-03-08T07:30:00.000Z'); // 03:30 EDT
    // Fall back: an ambiguous end takes the later instant, so the window covers both 01:xx passes.
    const fb = windowFor({ at: Date.UTC(2026, 10, 1, 4, 30), local: '2026-11-01T00:30' }, { start: '00:30', end: '01:45', recheckEveryS: 60 }, 'America/New_York');
    expect(iso(fb.closesAt ?? 0)).toBe('2026-11-01T06:45:00.000Z');
  });

  it('uses the local date the slot is due on (moved slots get the window of their new day)', () => {
    const spec: SlotSpec = { schedule: { cron: '0 9 * * *', timezone: 'UTC' }, calendar: weekdaysUtc, calendarPolicy: 'next_workday' };
    const [sat] = expectedSlots(spec, Date.UTC(2026, 11, 7), Date.UTC(2026, 11, 8));
    expect(sat?.slot).toBe('2026-12-05');
    expect(windowFor(sat!, { start: '09:00', end: '24:00', recheckEveryS: 60 }, 'UTC')).toEqual({
      opensAt: Date.UTC(2026, 11, 7, 9),
      closesAt: Date.UTC(2026, 11, 8),
    });
  });

  it('rejects a contradictory window', () => {
    const occ = { at: 0, local: '1970-01-01T00:00' };
    expect(() => windowFor(occ, { start: '10:00', end: '09:00', recheckEveryS: 60 }, 'UTC')).toThrow(/must be after/);
    expect(() => windowFor(occ, { start: '9:00', end: '10:00', recheckEveryS: 60 }, 'UTC')).toThrow(/not HH:MM/);
  });
});

describe('expectedSlots: any split of a range gives the same slots', () => {
  // Deterministic pseudo-random cut points (LCG), so failures are reproducible.
  function cuts(from: number, to: number, seed: number): number[] {
    const out = [from];
    let x = seed;
    let t = from;
    while (t < to) {
      x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
      t = Math.min(to, t + 1 + (x % (9 * H)));
      out.push(t);
    }
    return out;
  }

  const specs: Array<[string, SlotSpec, number, number]> = [
    ['hourly NY across spring forward, skip', { schedule: { cron: '0 * * * *', timezone: 'America/New_York' }, dstGapPolicy: 'skip' }, Date.UTC(2026, 2, 6), Date.UTC(2026, 2, 11)],
    ['*/20 Berlin across fall back', { schedule: { cron: '*/20 * * * *', timezone: 'Europe/Berlin' } }, Date.UTC(2026, 9, 23), Date.UTC(2026, 9, 28)],
    ['7-minute interval NY across fall back', { schedule: { everyS: 420, timezone: 'America/New_York' } }, Date.UTC(2026, 9, 30), Date.UTC(2026, 10, 3)],
    ['interval with calendar and next_workday', { schedule: { everyS: 5400, timezone: 'Asia/Shanghai' }, calendar: cnCalendar, calendarPolicy: 'next_workday' }, Date.UTC(2026, 8, 25), Date.UTC(2026, 9, 12)],
    ['half-hourly with day keys (coarser than the schedule)', { schedule: { cron: '*/30 * * * *', timezone: 'America/New_York' }, granularity: 'day' }, Date.UTC(2026, 2, 6), Date.UTC(2026, 2, 11)],
    ['weekly Saturday job moved to the next workday', { schedule: { cron: '0 23 * * 6', timezone: 'Asia/Shanghai' }, calendar: cnCalendar, calendarPolicy: 'next_workday' }, Date.UTC(2026, 8, 1), Date.UTC(2026, 10, 1)],
  ];

  it.each(specs)('%s', (_name, spec, from, to) => {
    const whole = expectedSlots(spec, from, to);
    expect(whole.length).toBeGreaterThan(0);
    for (const seed of [1, 2, 3]) {
      const points = cuts(from, to, seed);
      const pieces: SlotOccurrence[] = [];
      for (let i = 1; i < points.length; i++) pieces.push(...expectedSlots(spec, points[i - 1]!, points[i]!));
      expect(pieces).toEqual(whole);
    }
    assertUniqueAndOrdered(whole);
  });

  it('7-minute interval NY: the repeated hour keeps every 7-minute step of both passes', () => {
    const spec: SlotSpec = { schedule: { everyS: 420, timezone: 'America/New_York' } };
    const s = expectedSlots(spec, Date.UTC(2026, 10, 1, 5), Date.UTC(2026, 10, 1, 7));
    // First pass 05:00Z–06:00Z (01:xx EDT), second pass 06:00Z–07:00Z (01:xx EST, keys with -05:00).
    const firstPass = s.filter((o) => o.at < Date.UTC(2026, 10, 1, 6));
    const secondPass = s.filter((o) => o.at >= Date.UTC(2026, 10, 1, 6));
    expect(firstPass.every((o) => /^2026-11-01T01:\d\d$/.test(o.slot))).toBe(true);
    expect(secondPass.every((o) => /^2026-11-01T01:\d\d-05:00$/.test(o.slot))).toBe(true);
    expect(s.map((o) => o.at)).toEqual(Array.from({ length: s.length }, (_, i) => s[0]!.at + i * 420_000));
    expect(s.length).toBe(Math.ceil((2 * 3_600_000 - (s[0]!.at - Date.UTC(2026, 10, 1, 5))) / 420_000));
  });

  it('interval slots with next_workday move to the same local time on the next workday', () => {
    const spec: SlotSpec = { schedule: { everyS: 6 * 3600, timezone: 'Asia/Shanghai' }, calendar: cnCalendar, calendarPolicy: 'next_workday' };
    // Slots at 02:00, 08:00, 14:00, 20:00 Shanghai (multiples of 6 h UTC). Saturday 2026-09-19 → Sunday 20 (make-up day).
    const s = expectedSlots(spec, Date.UTC(2026, 8, 19, 16), Date.UTC(2026, 8, 20, 16));
    expect(s.map((o) => `${o.slot} ${o.local}${o.movedFrom ? ' moved' : ''}`)).toEqual([
      '2026-09-19T02:00 2026-09-20T02:00 moved',
      '2026-09-20T02:00 2026-09-20T02:00',
      '2026-09-19T08:00 2026-09-20T08:00 moved',
      '2026-09-20T08:00 2026-09-20T08:00',
      '2026-09-19T14:00 2026-09-20T14:00 moved',
      '2026-09-20T14:00 2026-09-20T14:00',
      '2026-09-19T20:00 2026-09-20T20:00 moved',
      '2026-09-20T20:00 2026-09-20T20:00',
    ]);
  });
});
