import { describe, expect, it } from 'vitest';
import { allTimeZones, dateInZone, formatInZone, isValidZone, localInZone, offsetLabel, searchZones, zonedWallToUtc } from './zones';

describe('time-zone helpers', () => {
  it('wall time in a zone → instant, across DST', () => {
    expect(new Date(zonedWallToUtc('2026-12-01T09:00', 'Asia/Shanghai')!).toISOString()).toBe('2026-12-01T01:00:00.000Z');
    expect(new Date(zonedWallToUtc('2026-07-01T09:00', 'Europe/Berlin')!).toISOString()).toBe('2026-07-01T07:00:00.000Z');
    // Spring forward: 02:30 does not exist in Berlin on 2026-03-29 → shifted forward to 03:30 CEST.
    expect(new Date(zonedWallToUtc('2026-03-29T02:30', 'Europe/Berlin')!).toISOString()).toBe('2026-03-29T01:30:00.000Z');
    // Fall back: 02:30 happens twice on 2026-10-25 → the earlier (CEST).
    expect(new Date(zonedWallToUtc('2026-10-25T02:30', 'Europe/Berlin')!).toISOString()).toBe('2026-10-25T00:30:00.000Z');
    expect(new Date(zonedWallToUtc('2026-03-08T02:30', 'America/New_York')!).toISOString()).toBe('2026-03-08T07:30:00.000Z');
    expect(zonedWallToUtc('yesterday', 'UTC')).toBeNull();
    expect(zonedWallToUtc('2026-01-01T00:00', 'Mars/Olympus')).toBeNull();
  });

  it('instant → local time and date in a zone; labels', () => {
    const t = Date.parse('2026-11-30T20:00:00.000Z');
    expect(localInZone(t, 'Asia/Shanghai')).toBe('2026-12-01T04:00');
    expect(dateInZone(t, 'America/Los_Angeles')).toBe('2026-11-30');
    expect(offsetLabel(t, 'Asia/Shanghai')).toBe('UTC+08:00');
    expect(offsetLabel(t, 'America/New_York')).toBe('UTC−05:00');
    expect(formatInZone(t, 'Asia/Shanghai', t)).toBe('Tue 1 Dec 04:00');
    expect(formatInZone(t, 'Asia/Shanghai', Date.parse('2025-06-01T00:00:00Z'))).toBe('Tue 1 Dec 2026 04:00');
  });

  it('knows the zones and finds them by any part of the name', () => {
    expect(isValidZone('Europe/Berlin')).toBe(true);
    expect(isValidZone('Nowhere/City')).toBe(false);
    expect(allTimeZones()).toContain('UTC');
    expect(allTimeZones().length).toBeGreaterThan(300);
    expect(searchZones('berl')[0]).toBe('Europe/Berlin');
    expect(searchZones('new york')[0]).toBe('America/New_York');
    expect(searchZones('shanghai')[0]).toBe('Asia/Shanghai');
    expect(searchZones('utc')[0]).toBe('UTC');
    expect(searchZones('', ['A', 'B'], 1)).toEqual(['A']);
  });
});
