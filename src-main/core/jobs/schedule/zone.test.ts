import { describe, expect, it } from 'vitest';
import { IANAZone } from 'luxon';
import { offsetAt, resolveLocal, toNaive } from './zone';

const iso = (ms: number): string => new Date(ms).toISOString();

describe('zone offsets (memoised) agree with luxon', () => {
  const zones = ['America/New_York', 'Europe/Berlin', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'America/Santiago', 'Asia/Shanghai'];
  it.each(zones)('%s: every 37 minutes + 13 s through 2026', (zone) => {
    const z = IANAZone.create(zone);
    const start = Date.UTC(2026, 0, 1);
    const end = Date.UTC(2027, 0, 1);
    let checked = 0;
    for (let t = start; t < end; t += 37 * 60_000 + 13_000) {
      expect(offsetAt(zone, t)).toBe(z.offset(t) * 60_000);
      checked++;
    }
    expect(checked).toBeGreaterThan(14_000);
  });

  it('locates a transition to the second', () => {
    // New York springs forward at 2026-03-08T07:00:00Z.
    const t = Date.UTC(2026, 2, 8, 7);
    expect(offsetAt('America/New_York', t - 1000)).toBe(-5 * 3_600_000);
    expect(offsetAt('America/New_York', t)).toBe(-4 * 3_600_000);
    expect(toNaive('America/New_York', t)).toBe(Date.UTC(2026, 2, 8, 3));
  });
});

describe('resolveLocal', () => {
  it('maps a nonexistent local time to the end of the gap', () => {
    const r = resolveLocal('America/New_York', Date.UTC(2026, 2, 8, 2, 30));
    expect(r.kind).toBe('gap');
    expect(iso(r.at)).toBe('2026-03-08T07:00:00.000Z'); // 03:00 EDT
    const b = resolveLocal('Europe/Berlin', Date.UTC(2026, 2, 29, 2, 30));
    expect(b.kind).toBe('gap');
    expect(iso(b.at)).toBe('2026-03-29T01:00:00.000Z'); // 03:00 CEST
  });

  it('maps a repeated local time to the earlier instant and reports the later one', () => {
    const r = resolveLocal('America/New_York', Date.UTC(2026, 10, 1, 1, 30));
    expect(r.kind).toBe('ambiguous');
    expect(iso(r.at)).toBe('2026-11-01T05:30:00.000Z'); // 01:30 EDT
    expect(iso(r.laterAt ?? 0)).toBe('2026-11-01T06:30:00.000Z'); // 01:30 EST
    const b = resolveLocal('Europe/Berlin', Date.UTC(2026, 9, 25, 2, 30));
    expect(b.kind).toBe('ambiguous');
    expect(iso(b.at)).toBe('2026-10-25T00:30:00.000Z'); // 02:30 CEST
  });

  it('maps ordinary local times exactly, including in a half-hour zone', () => {
    expect(resolveLocal('Asia/Kathmandu', Date.UTC(2026, 5, 1, 9))).toEqual({ at: Date.UTC(2026, 5, 1, 3, 15), kind: 'exact' });
    expect(resolveLocal('America/New_York', Date.UTC(2026, 10, 1, 2, 30))).toEqual({ at: Date.UTC(2026, 10, 1, 7, 30), kind: 'exact' });
  });

  it('handles Lord Howe half-hour DST gap', () => {
    // Lord Howe: 2026-10-04 02:00 LHST (+10:30) → 02:30 LHDT (+11).
    const r = resolveLocal('Australia/Lord_Howe', Date.UTC(2026, 9, 4, 2, 15));
    expect(r.kind).toBe('gap');
    expect(iso(r.at)).toBe('2026-10-03T15:30:00.000Z');
    expect(iso(toNaive('Australia/Lord_Howe', r.at))).toBe('2026-10-04T02:30:00.000Z');
  });
});
