import { describe, expect, it } from 'vitest';
import { granularityOf, parseSlotKey, shiftBusinessDate, slotKeyAt, slotKeyOfLocal } from './slot-key';
import { ScheduleError } from './types';

describe('granularityOf', () => {
  it('classifies crons by their fields', () => {
    const g = (cron: string): string => granularityOf({ cron, timezone: 'UTC' });
    expect(g('0 9 * * *')).toBe('day');
    expect(g('30 17 * * 5')).toBe('week');
    expect(g('0 9 * * MON')).toBe('week');
    expect(g('0 9 1 * *')).toBe('month');
    expect(g('0 9 * * 1-5')).toBe('minute'); // day-of-week not a single value
    expect(g('0 9,17 * * *')).toBe('minute'); // hour not a single value
    expect(g('*/15 * * * *')).toBe('minute');
    expect(g('0 9 1 * 1')).toBe('minute'); // both day fields restricted
    expect(g('0 9 L * *')).toBe('minute');
    expect(g('@daily')).toBe('day');
  });

  it('intervals are always minute-grained', () => {
    expect(granularityOf({ everyS: 86_400 })).toBe('minute');
    expect(granularityOf({ everyS: 30, timezone: 'Europe/Berlin' })).toBe('minute');
  });
});

describe('slot keys', () => {
  it('day / month / minute keys in the job zone', () => {
    // 2026-11-30T01:00Z is 09:00 in Shanghai; 2026-11-29T23:30Z is already the 30th there.
    expect(slotKeyAt(Date.UTC(2026, 10, 30, 1), 'Asia/Shanghai', 'day')).toBe('2026-11-30');
    expect(slotKeyAt(Date.UTC(2026, 10, 29, 23, 30), 'Asia/Shanghai', 'day')).toBe('2026-11-30');
    expect(slotKeyAt(Date.UTC(2026, 10, 29, 23, 30), 'UTC', 'day')).toBe('2026-11-29');
    expect(slotKeyAt(Date.UTC(2026, 10, 30, 1), 'Asia/Shanghai', 'month')).toBe('2026-11');
    expect(slotKeyAt(Date.UTC(2026, 10, 30, 1), 'Asia/Shanghai', 'minute')).toBe('2026-11-30T09:00');
    expect(slotKeyAt(Date.UTC(2026, 10, 30, 1, 0, 30), 'Asia/Shanghai', 'minute', true)).toBe('2026-11-30T09:00:30');
  });

  it('ISO week keys use the ISO week-year around New Year', () => {
    const wk = (date: string): string => slotKeyOfLocal(date, 'week');
    expect(wk('2026-11-30')).toBe('2026-W49');
    expect(wk('2026-11-29')).toBe('2026-W48');
    expect(wk('2026-12-31')).toBe('2026-W53');
    expect(wk('2027-01-01')).toBe('2026-W53');
    expect(wk('2027-01-03')).toBe('2026-W53');
    expect(wk('2027-01-04')).toBe('2027-W01');
    expect(wk('2020-12-31')).toBe('2020-W53');
    expect(wk('2021-01-03')).toBe('2020-W53');
    expect(wk('2024-12-30')).toBe('2025-W01');
    expect(wk('2026-01-01')).toBe('2026-W01');
  });

  it('keys from a nominal local time', () => {
    expect(slotKeyOfLocal('2026-03-08T02:30', 'minute')).toBe('2026-03-08T02:30');
    expect(slotKeyOfLocal('2026-03-08T02:30', 'day')).toBe('2026-03-08');
    expect(slotKeyOfLocal('2026-02-28T23:59:59', 'minute')).toBe('2026-02-28T23:59:59');
    expect(() => slotKeyOfLocal('2026-02-30T09:00', 'day')).toThrow(ScheduleError);
  });
});

describe('shiftBusinessDate', () => {
  it.each([
    ['2026-01-01', -1, '2025-12-31'],
    ['2025-12-31', 1, '2026-01-01'],
    ['2026-03-01', -1, '2026-02-28'],
    ['2024-03-01', -1, '2024-02-29'],
    ['2024-02-28', 1, '2024-02-29'],
    ['2024-02-29', 1, '2024-03-01'],
    ['2000-02-28', 1, '2000-02-29'],
    ['2100-02-28', 1, '2100-03-01'],
    ['2026-04-30', 1, '2026-05-01'],
    ['2026-05-31', -31, '2026-04-30'],
    ['2026-11-30', 0, '2026-11-30'],
    ['2026-12-31', 366, '2028-01-01'],
  ] as const)('%s %+d → %s', (date, days, expected) => {
    expect(shiftBusinessDate(date, days)).toBe(expected);
  });

  it('rejects malformed input', () => {
    expect(() => shiftBusinessDate('2026-02-29', 1)).toThrow(/not a valid/);
    expect(() => shiftBusinessDate('2026-1-1', 1)).toThrow(ScheduleError);
    expect(() => shiftBusinessDate('2026-01-01', 0.5)).toThrow(/integer/);
  });
});

describe('parseSlotKey', () => {
  it('parses every key shape back to local dates', () => {
    expect(parseSlotKey('2026-11-30')).toEqual({ granularity: 'day', date: '2026-11-30', endDate: '2026-11-30' });
    expect(parseSlotKey('2026-W48')).toEqual({ granularity: 'week', date: '2026-11-23', endDate: '2026-11-29' });
    expect(parseSlotKey('2026-W53')).toEqual({ granularity: 'week', date: '2026-12-28', endDate: '2027-01-03' });
    expect(parseSlotKey('2020-W53')).toEqual({ granularity: 'week', date: '2020-12-28', endDate: '2021-01-03' });
    expect(parseSlotKey('2025-W01')).toEqual({ granularity: 'week', date: '2024-12-30', endDate: '2025-01-05' });
    expect(parseSlotKey('2024-02')).toEqual({ granularity: 'month', date: '2024-02-01', endDate: '2024-02-29' });
    expect(parseSlotKey('2026-11-30T09:00')).toEqual({
      granularity: 'minute',
      date: '2026-11-30',
      endDate: '2026-11-30',
      time: '09:00',
    });
    expect(parseSlotKey('2026-11-30T09:00:30').time).toBe('09:00:30');
    // The second pass of a repeated hour (an interval slot) keeps its offset.
    expect(parseSlotKey('2026-10-25T01:15+00:00')).toEqual({ granularity: 'minute', date: '2026-10-25', endDate: '2026-10-25', time: '01:15', offset: '+00:00' });
    expect(parseSlotKey('2026-11-01T01:00:30-05:00')).toMatchObject({ time: '01:00:30', offset: '-05:00' });
  });

  it('slotKeyAt names the second pass of a repeated hour with its offset', () => {
    expect(slotKeyAt(Date.UTC(2026, 9, 25, 0, 15), 'Europe/London', 'minute')).toBe('2026-10-25T01:15');
    expect(slotKeyAt(Date.UTC(2026, 9, 25, 1, 15), 'Europe/London', 'minute')).toBe('2026-10-25T01:15+00:00');
    expect(slotKeyAt(Date.UTC(2026, 9, 25, 2, 15), 'Europe/London', 'minute')).toBe('2026-10-25T02:15');
    expect(slotKeyAt(Date.UTC(2026, 9, 25, 1, 15), 'Europe/London', 'day')).toBe('2026-10-25');
  });

  it('round-trips keys through their first date', () => {
    for (const key of ['2026-W01', '2026-W53', '2027-W01', '2026-12', '2026-12-31']) {
      const p = parseSlotKey(key);
      expect(slotKeyOfLocal(p.date, p.granularity)).toBe(key);
    }
  });

  it('rejects malformed keys', () => {
    for (const bad of ['2027-W53', '2026-W00', '2026-13', '2026-02-30', '2026-11-30T24:00', '2026-10-25+00:00', '2026-10-25T01:15+0000', 'yesterday', '']) {
      expect(() => parseSlotKey(bad), bad).toThrow(ScheduleError);
    }
  });
});
