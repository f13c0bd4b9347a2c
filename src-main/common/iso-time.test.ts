import { describe, expect, it } from 'vitest';
import { isoTime } from './iso-time';

describe('isoTime', () => {
  it('matches toISOString for random instants, for runs within one second, and at the edges', () => {
    const instants: number[] = [0, 1, 9, 10, 99, 100, 999, 1000, Date.UTC(2026, 11, 31, 23, 59, 59, 999), Date.UTC(2027, 0, 1), 253_402_300_799_999];
    for (let i = 0; i < 20_000; i++) instants.push(Math.floor(Math.random() * 253_402_300_800_000));
    const base = Date.UTC(2026, 10, 30, 23, 0, 0, 0);
    for (let i = 0; i < 3000; i++) instants.push(base + i, base + 7_200_000 + i, base - i);
    for (const ms of instants) expect(isoTime(ms), String(ms)).toBe(new Date(ms).toISOString());
  });

  it('defers to toISOString outside years 0000–9999 and for fractional milliseconds, and throws like it on invalid times', () => {
    for (const ms of [-1, -62_198_755_200_000, 253_402_300_800_000, 8.64e15, 1234.5]) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    expect(() => isoTime(NaN)).toThrow(RangeError);
    expect(() => isoTime(8.64e15 + 1)).toThrow(RangeError);
  });
});
