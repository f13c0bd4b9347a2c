import { describe, expect, it } from 'vitest';
import { addDays, isoWeekday, WEEKDAYS } from './days';

describe('calendar days', () => {
  it('adds days across month and year ends and names ISO weekdays', () => {
    expect(isoWeekday('2026-11-30')).toBe(1);
    expect(isoWeekday('2026-12-06')).toBe(7);
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2028-03-01', -1)).toBe('2028-02-29');
    expect(WEEKDAYS.map((d) => d.iso)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });
});
