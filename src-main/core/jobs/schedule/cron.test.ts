import { describe, expect, it } from 'vitest';
import { cronOccurrences, intervalInstants, normalizeCron, validateCron } from './cron';
import { ScheduleError } from './types';

const iso = (ms: number): string => new Date(ms).toISOString();

describe('validateCron', () => {
  it('accepts classic expressions, names, L/W/# and nicknames', () => {
    for (const ok of ['0 9 * * *', '*/5 * * * *', '0 9 * * MON-FRI', '30 2 1,15 * *', '0 9 L * *', '0 9 * * 1#2', '@daily', ' 0  9 * * * ']) {
      expect(validateCron(ok), ok).toBeNull();
    }
    expect(normalizeCron('@hourly')).toBe('0 * * * *');
    expect(normalizeCron(' 0  9 * * * ')).toBe('0 9 * * *');
  });

  it('explains field-count problems', () => {
    expect(validateCron('')).toBe('cron expression is empty');
    expect(validateCron('0 9 * *')).toBe(
      "cron '0 9 * *' has 4 fields; exactly 5 are required (minute hour day-of-month month day-of-week).",
    );
    expect(validateCron('0 0 9 * * *')).toMatch(/has 6 fields; .*Seconds and year fields are not supported/);
    expect(validateCron('@reboot')).toMatch(/nickname '@reboot' is not supported/);
  });

  it('explains out-of-range values in the user numbering', () => {
    expect(validateCron('61 * * * *')).toBe("invalid cron '61 * * * *': minute value 61 is out of range 0-59");
    expect(validateCron('0 24 * * *')).toBe("invalid cron '0 24 * * *': hour value 24 is out of range 0-23");
    expect(validateCron('0 9 32 * *')).toBe("invalid cron '0 9 32 * *': day-of-month value 32 is out of range 1-31");
    expect(validateCron('0 9 * 13 *')).toBe("invalid cron '0 9 * 13 *': month value 13 is out of range 1-12");
    expect(validateCron('0 9 * * 8')).toBe("invalid cron '0 9 * * 8': day-of-week value 8 is out of range 0-7");
  });

  it('passes through other syntax errors and rejects ?', () => {
    expect(validateCron('*/0 * * * *')).toMatch(/^invalid cron '\*\/0 \* \* \* \*': .*stepping/);
    expect(validateCron('a b c d e')).toMatch(/illegal characters/);
    expect(validateCron('0 9 ? * *')).toMatch(/uses '\?'/);
    expect(validateCron(42)).toBe('cron expression must be a string');
  });
});

describe('cronOccurrences: wall clock in a zone', () => {
  it('daily 02:30 in New York across spring forward: shifted to 03:00, not dropped', () => {
    const occ = cronOccurrences('30 2 * * *', 'America/New_York', Date.UTC(2026, 2, 7), Date.UTC(2026, 2, 10));
    expect(occ.map((o) => [o.local, iso(o.at), o.dst])).toEqual([
      ['2026-03-07T02:30', '2026-03-07T07:30:00.000Z', 'exact'],
      ['2026-03-08T02:30', '2026-03-08T07:00:00.000Z', 'gap'],
      ['2026-03-09T02:30', '2026-03-09T06:30:00.000Z', 'exact'],
    ]);
    expect(occ.every((o) => !o.skipped)).toBe(true);
  });

  it('daily 02:30 in New York under skip: the gap day is flagged, not lost', () => {
    const occ = cronOccurrences('30 2 * * *', 'America/New_York', Date.UTC(2026, 2, 7), Date.UTC(2026, 2, 10), 'skip');
    expect(occ.map((o) => o.skipped)).toEqual([false, true, false]);
  });

  it('daily 01:30 in New York across fall back: one occurrence, the first (EDT) one', () => {
    const occ = cronOccurrences('30 1 * * *', 'America/New_York', Date.UTC(2026, 9, 31), Date.UTC(2026, 10, 3));
    expect(occ.map((o) => [o.local, iso(o.at)])).toEqual([
      ['2026-10-31T01:30', '2026-10-31T05:30:00.000Z'],
      ['2026-11-01T01:30', '2026-11-01T05:30:00.000Z'],
      ['2026-11-02T01:30', '2026-11-02T06:30:00.000Z'],
    ]);
    expect(occ[1]?.dst).toBe('ambiguous');
  });

  it('daily 02:30 in Berlin across both changes', () => {
    const spring = cronOccurrences('30 2 * * *', 'Europe/Berlin', Date.UTC(2026, 2, 28), Date.UTC(2026, 2, 31));
    expect(spring.map((o) => iso(o.at))).toEqual([
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:00:00.000Z', // 03:00 CEST, first instant after the gap
      '2026-03-30T00:30:00.000Z',
    ]);
    const fall = cronOccurrences('30 2 * * *', 'Europe/Berlin', Date.UTC(2026, 9, 24), Date.UTC(2026, 9, 27));
    expect(fall.map((o) => iso(o.at))).toEqual([
      '2026-10-24T00:30:00.000Z',
      '2026-10-25T00:30:00.000Z', // 02:30 CEST; the 02:30 CET repeat does not fire
      '2026-10-26T01:30:00.000Z',
    ]);
  });

  it('a range is half-open on instants', () => {
    const at = Date.UTC(2026, 5, 1, 9);
    expect(cronOccurrences('0 9 * * *', 'UTC', at, at + 1)).toHaveLength(1);
    expect(cronOccurrences('0 9 * * *', 'UTC', at - 60_000, at)).toHaveLength(0);
    expect(cronOccurrences('0 9 * * *', 'UTC', at + 1, at + 60_000)).toHaveLength(0);
  });

  it('throws ScheduleError for a bad expression', () => {
    expect(() => cronOccurrences('0 25 * * *', 'UTC', 0, 1)).toThrow(ScheduleError);
  });
});

describe('intervalInstants', () => {
  it('is anchored at the Unix epoch, so slots do not depend on when you ask', () => {
    const a = intervalInstants(300, Date.UTC(2026, 0, 1, 0, 2), Date.UTC(2026, 0, 1, 0, 16));
    expect(a.map(iso)).toEqual(['2026-01-01T00:05:00.000Z', '2026-01-01T00:10:00.000Z', '2026-01-01T00:15:00.000Z']);
    // 7 s does not divide a day: still stable multiples of 7000 ms since the epoch.
    const b = intervalInstants(7, 1_000_000_000_001, 1_000_000_021_001);
    // 1e12 / 7000 = 142857142.86 → the first multiple is 142857143 × 7000.
    expect(b).toEqual([1_000_000_001_000, 1_000_000_008_000, 1_000_000_015_000]);
  });

  it('rejects a bad period', () => {
    expect(() => intervalInstants(0, 0, 1)).toThrow(/at least|>= 1/);
    expect(() => intervalInstants(1.5, 0, 1)).toThrow(ScheduleError);
  });
});
