/** The time plan: windows, first-look decisions, placeholders (pure). */
import { describe, expect, it } from 'vitest';
import { normalizeJobSpec, type JobSpecInput } from '../../common/job-schema';
import { firstLook, JobPlan, resolvePlaceholders, unknownPlaceholders } from './plan';
import { expectedSlots } from './schedule';

const plan = (s: Partial<JobSpecInput>) => new JobPlan(normalizeJobSpec({ name: 'x', role: 'r', schedule: { everyS: 300 }, ...s } as JobSpecInput), undefined);
const t = (iso: string) => Date.parse(iso);

describe('windows and first look', () => {
  it('without a window a slot stays open until the next one; run_now adds its tolerance', () => {
    const p = plan({ missedWindow: 'run_now', toleranceS: 120 });
    const [occ] = p.slots(t('2026-11-30T00:05:00Z'), t('2026-11-30T00:05:01Z'));
    expect(p.windowOf(occ!)).toEqual({ opensAt: t('2026-11-30T00:05:00Z'), closesAt: t('2026-11-30T00:10:00Z'), latestStart: t('2026-11-30T00:12:00Z'), explicit: false });
    const w = p.windowOf(occ!);
    expect(firstLook(occ!, w, t('2026-11-30T00:07:00Z'), 'run_now')).toEqual({ kind: 'open', late: false });
    expect(firstLook(occ!, w, t('2026-11-30T00:11:00Z'), 'run_now')).toEqual({ kind: 'open', late: true });
    expect(firstLook(occ!, w, t('2026-11-30T00:13:00Z'), 'run_now')).toMatchObject({ kind: 'missed', outcome: { status: 'failed', disposition: 'missed', backfill: true } });
    expect(firstLook(occ!, w, t('2026-11-30T00:13:00Z'), 'fold_into_next')).toMatchObject({ kind: 'missed', outcome: { status: 'skipped', disposition: 'folded', backfill: false } });
    expect(firstLook(occ!, w, t('2026-11-30T00:13:00Z'), 'skip_and_alert', { paused: true, killSwitch: false })).toMatchObject({ kind: 'missed', outcome: { disposition: 'skipped_paused', alert: false } });
  });

  it('an execution window on the local date of the slot (zone aware)', () => {
    const p = new JobPlan(normalizeJobSpec({ name: 'x', role: 'r', schedule: { cron: '0 8 * * *', timezone: 'Asia/Shanghai' }, window: { start: '09:00', end: '10:00', recheckEveryS: 300 } }), undefined);
    const [occ] = p.slots(t('2026-11-30T00:00:00Z'), t('2026-12-01T00:00:00Z'));
    expect(p.windowOf(occ!)).toMatchObject({ opensAt: t('2026-11-30T01:00:00Z'), closesAt: t('2026-11-30T02:00:00Z'), explicit: true });
  });
});

describe('first look at a slot due after its own window', () => {
  it('says so instead of "Gaffer was not running"', () => {
    const p = plan({ schedule: { everyS: 3600 }, window: { start: '09:00', end: '10:00', recheckEveryS: 60 } });
    const [late] = p.slots(t('2026-11-30T12:00:00Z'), t('2026-11-30T12:00:01Z'));
    const look = firstLook(late!, p.windowOf(late!), t('2026-11-30T12:00:00Z'), 'skip_and_alert');
    expect(look).toMatchObject({ kind: 'missed', outcome: { disposition: 'missed' } });
    expect(look.kind === 'missed' && look.outcome.reason).toBe('slot 2026-11-30T12:00 is due at 2026-11-30T12:00, after its window closed at 2026-11-30T10:00:00.000Z, so it could not start; skipped (policy skip_and_alert)');
    // A slot inside its window, first looked at after the window: the runner was away.
    const [inside] = p.slots(t('2026-11-30T09:00:00Z'), t('2026-11-30T09:00:01Z'));
    const away = firstLook(inside!, p.windowOf(inside!), t('2026-11-30T11:00:00Z'), 'skip_and_alert');
    expect(away.kind === 'missed' && away.outcome.reason).toMatch(/^the window closed 3600 s before the runner could look at the slot \(Gaffer was not running\)/);
  });
});

describe('interval slots, queried in small windows, match one big query (fast path of the library)', () => {
  it.each(['UTC', 'America/New_York', 'Europe/Berlin', 'Australia/Lord_Howe'])('%s around a fall-back change', (zone) => {
    const spec = { schedule: { everyS: 600, timezone: zone } };
    const from = t('2026-10-24T00:00:00Z');
    const to = t('2026-11-03T00:00:00Z');
    const all = expectedSlots(spec, from, to).map((o) => o.slot);
    const pieces: string[] = [];
    for (let a = from; a < to; a += 7 * 60_000) pieces.push(...expectedSlots(spec, a, Math.min(to, a + 7 * 60_000)).map((o) => o.slot));
    expect(pieces).toEqual(all);
    expect(new Set(all).size).toBe(all.length);
  });

  it.each([
    ['Europe/Berlin', '2026-10-25T01:00:00Z'],
    ['Europe/Berlin', '2026-03-29T01:00:00Z'],
    ['America/New_York', '2026-11-01T06:00:00Z'],
    ['Australia/Lord_Howe', '2026-04-04T15:00:00Z'],
  ])('a 10-second job in %s, 61-second pieces across the change at %s', (zone, change) => {
    const spec = { schedule: { everyS: 10, timezone: zone } };
    const from = t(change) - 3 * 3600_000;
    const to = t(change) + 3 * 3600_000;
    const all = expectedSlots(spec, from, to).map((o) => `${o.slot}@${o.at}`);
    const pieces: string[] = [];
    for (let a = from; a < to; a += 61_000) pieces.push(...expectedSlots(spec, a, Math.min(to, a + 61_000)).map((o) => `${o.slot}@${o.at}`));
    expect(pieces).toEqual(all);
  });
});

describe('placeholders', () => {
  it('resolve business dates exactly across month and year ends', () => {
    expect(resolvePlaceholders('/d/{yesterday}/{date}/{date-7}/{tomorrow}/{month}/{slot}', '2027-01-01').text).toBe('/d/2026-12-31/2027-01-01/2026-12-25/2027-01-02/2027-01/2027-01-01');
    expect(resolvePlaceholders('{yesterday}', '2028-03-01T09:30').text).toBe('2028-02-29');
    expect(resolvePlaceholders('{yesterday}', '2026-W01').text).toBe('2025-12-28'); // the Monday of ISO week 1 is 2025-12-29
    expect(unknownPlaceholders('{today} {date+2} {week-1}')).toEqual(['{today}', '{week-1}']);
  });
});
