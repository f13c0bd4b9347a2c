/**
 * DST checked against an independent oracle: `dst-oracle.py` (Python's zoneinfo, which knows
 * nothing of this library) states the rules on its own terms.
 *
 * - The committed fixture holds every offset change of 11 zones in 2026–2027, ±3 hours of
 *   interval slots around each, and a window in every gap and every repeated hour. It was made
 *   with `/usr/bin/python3 src-main/core/jobs/schedule/dst-oracle.py fixture > dst-oracle.fixture.json`.
 * - Where a python3 with zoneinfo is installed, the last test asks the oracle live for a whole
 *   year of 15-minute slots in the same zones.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { expectedSlots, windowFor } from './slots';
import type { SlotOccurrence } from './types';

interface IntervalCase { zone: string; everyS: number; from: number; to: number; first: number; keys: string[] }
interface GapWindow { zone: string; date: string; start: string; end: string; cron: string; slotAt: number; opensAt: number; closesAt: number }
interface RepeatWindow { zone: string; date: string; start: string; end: string; opensAt: number; closesAt: number }
interface Fixture { years: number[]; intervals: IntervalCase[]; gapWindows: GapWindow[]; repeatWindows: RepeatWindow[] }

const script = fileURLToPath(new URL('./dst-oracle.py', import.meta.url));
const fixture = JSON.parse(readFileSync(fileURLToPath(new URL('./dst-oracle.fixture.json', import.meta.url)), 'utf8')) as Fixture;
const ZONES = [...new Set(fixture.intervals.map((c) => c.zone))];
const iso = (ms: number): string => new Date(ms).toISOString();
const DAY = 86_400_000;

/** `at key` lines, as the oracle lists slots: slot i is due at first + i * everyS. */
function oracleLines(first: number, everyS: number, keys: string[]): string[] {
  return keys.map((k, i) => `${iso(first + i * everyS * 1000)} ${k}`);
}
const lines = (slots: SlotOccurrence[]): string[] => slots.map((o) => `${iso(o.at)} ${o.slot}`);

/** A repeated hour's second pass, as the oracle writes it: the key ends in an offset. */
const SECOND_PASS = /T\d{2}:\d{2}(?::\d{2})?[+-]\d{2}:\d{2}$/;

describe('interval slots around every offset change of 11 zones (oracle fixture)', () => {
  it('covers what it claims: 11 zones, both years, repeated hours in every zone', () => {
    expect(ZONES).toHaveLength(11);
    expect(fixture.years).toEqual([2026, 2027]);
    for (const zone of ZONES) expect(fixture.intervals.some((c) => c.zone === zone && c.keys.some((k) => SECOND_PASS.test(k)))).toBe(true);
  });

  it.each(fixture.intervals.map((c) => [`${c.zone} every ${c.everyS} s from ${iso(c.from)}`, c] as const))('%s', (_name, c) => {
    const got = expectedSlots({ schedule: { everyS: c.everyS, timezone: c.zone } }, c.from, c.to);
    expect(lines(got)).toEqual(oracleLines(c.first, c.everyS, c.keys));
    // `local` is the wall-clock reading, without the offset that tells the two passes apart.
    expect(got.map((o) => o.local)).toEqual(c.keys.map((k) => k.replace(/[+-]\d{2}:\d{2}$/, '')));
  });

  it('the repeated hour keeps one slot every 15 minutes: 4 per zone and change (2 on Lord Howe, whose clocks go back 30 min)', () => {
    const perZone = new Map<string, number>();
    for (const c of fixture.intervals.filter((x) => x.everyS === 900)) {
      const got = expectedSlots({ schedule: { everyS: 900, timezone: c.zone } }, c.from, c.to);
      perZone.set(c.zone, (perZone.get(c.zone) ?? 0) + got.filter((o) => SECOND_PASS.test(o.slot)).length);
    }
    // Two fall-back changes per zone over the two years.
    for (const [zone, n] of perZone) expect([zone, n]).toEqual([zone, zone === 'Australia/Lord_Howe' ? 4 : 8]);
  });
});

describe('execution windows in DST gaps and repeated hours (oracle fixture)', () => {
  it.each(fixture.gapWindows.map((w) => [`${w.zone} ${w.date} ${w.start}–${w.end}`, w] as const))('%s: opens with its shifted slot and keeps its length', (_name, w) => {
    const day = Date.parse(`${w.date}T00:00:00Z`);
    const occ = expectedSlots({ schedule: { cron: w.cron, timezone: w.zone } }, day - DAY, day + 2 * DAY).find((o) => o.slot === w.date);
    expect(occ && { at: iso(occ.at), shifted: occ.shifted }).toEqual({ at: iso(w.slotAt), shifted: 'dst_gap' });
    const win = windowFor(occ!, { start: w.start, end: w.end, recheckEveryS: 60 }, w.zone);
    expect({ opensAt: iso(win.opensAt), closesAt: iso(win.closesAt ?? 0) }).toEqual({ opensAt: iso(w.opensAt), closesAt: iso(w.closesAt) });
  });

  it.each(fixture.repeatWindows.map((w) => [`${w.zone} ${w.date} ${w.start}–${w.end}`, w] as const))('%s: covers both passes', (_name, w) => {
    const day = Date.parse(`${w.date}T00:00:00Z`);
    const [h, m] = w.start.split(':').map(Number);
    const occ = expectedSlots({ schedule: { cron: `${m} ${h} * * *`, timezone: w.zone } }, day - DAY, day + 2 * DAY).find((o) => o.slot === w.date);
    expect(occ && iso(occ.at)).toBe(iso(w.opensAt)); // a cron time that occurs twice runs at the first
    const window = { start: w.start, end: w.end, recheckEveryS: 60 };
    expect(windowFor(occ!, window, w.zone)).toEqual({ opensAt: w.opensAt, closesAt: w.closesAt });
    // An interval slot in the second pass has the same local date, hence the same window.
    const second = expectedSlots({ schedule: { everyS: 300, timezone: w.zone } }, w.opensAt, w.closesAt).find((o) => SECOND_PASS.test(o.slot));
    expect(second && windowFor(second, window, w.zone).closesAt).toBe(w.closesAt);
  });
});

/** A python3 that can run the oracle, or why there is none. */
function findPython(): { bin: string } | { why: string } {
  for (const bin of ['/usr/bin/python3', 'python3']) {
    const r = spawnSync(bin, ['-c', 'import zoneinfo; zoneinfo.ZoneInfo("Europe/London")'], { encoding: 'utf8' });
    if (r.status === 0) return { bin };
  }
  return { why: 'no python3 with zoneinfo and a tz database on this machine; the committed fixture above still runs' };
}
const python = findPython();

describe('live oracle', () => {
  it.skipIf('why' in python)(`a whole year of 15-minute slots in 11 zones equals the oracle's${'why' in python ? ` (skipped: ${python.why})` : ''}`, () => {
    const from = Date.UTC(2026, 0, 1);
    const to = Date.UTC(2027, 0, 1);
    const r = spawnSync((python as { bin: string }).bin, [script, 'interval', '900', String(from / 1000), String(to / 1000), ...ZONES], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
    expect(r.status, r.stderr).toBe(0);
    const oracle = JSON.parse(r.stdout) as Record<string, { first: number; keys: string[] }>;
    for (const zone of ZONES) {
      const want = oracle[zone]!;
      const got = expectedSlots({ schedule: { everyS: 900, timezone: zone } }, from, to);
      expect(got.length).toBe(want.keys.length);
      expect(lines(got)).toEqual(oracleLines(want.first, 900, want.keys));
    }
  });
});
