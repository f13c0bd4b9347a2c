import { afterEach, describe, expect, it } from 'vitest';
import type { LedgerBucket } from '../../common/job-schema';
import { makeTestCore, type TestCore } from '../tests/test-core';

let core: TestCore | undefined;
afterEach(() => {
  core?.close();
  core = undefined;
});

const who = { actor: 'operator:test' };

function workdayJob(c: TestCore, cron: string): string {
  c.jobs.createCalendar({ id: 'weekdays', name: 'Weekdays', timezone: 'UTC', workdays: [1, 2, 3, 4, 5], holidays: [], extraWorkdays: [] }, who);
  return c.jobs.create({ name: 'often', role: 'etl', schedule: { cron, timezone: 'UTC' }, calendar: 'weekdays', calendarPolicy: 'skip' }, who).job.id;
}

describe('the ledger before a job existed', () => {
  it('a slot before the job was created is "before the job existed", even on a day the calendar skips', () => {
    core = makeTestCore(); // now: Monday 2026-11-30 08:00 UTC
    const id = workdayJob(core, '0 9 * * *');
    const l = core.jobs.ledger(id, { from: '2026-11-27T00:00:00.000Z', to: '2026-12-02T00:00:00.000Z' });
    expect(l.items.map((e) => [e.slot, e.disposition])).toEqual([
      ['2026-11-27', 'before_job'],
      ['2026-11-28', 'before_job'],
      ['2026-11-29', 'before_job'],
      ['2026-11-30', 'scheduled'],
      ['2026-12-01', 'scheduled'],
    ]);
  });
});

describe('the ledger of a disabled job', () => {
  it('a slot that fell due while the job was disabled reads "skipped: disabled", not "no run recorded"', () => {
    core = makeTestCore(); // now: Monday 2026-11-30 08:00 UTC
    const id = core.jobs.create({ name: 'idle', role: 'etl', schedule: { cron: '0 9 * * *', timezone: 'UTC' } }, who).job.id;
    core.clock.advance(24 * 3_600_000); // Tuesday 08:00: Monday's slot was due while enabled, and nothing ran it here
    core.jobs.setEnabled(id, false, { reason: 'retired', actor: 'operator:test' });
    core.clock.advance(48 * 3_600_000); // Thursday 08:00: Tuesday's and Wednesday's slots fell due while disabled
    const l = core.jobs.ledger(id, { from: '2026-11-30T00:00:00.000Z', to: '2026-12-04T00:00:00.000Z' });
    expect(l.items.map((e) => [e.slot, e.disposition])).toEqual([
      ['2026-11-30', 'not_evaluated'],
      ['2026-12-01', 'skipped_disabled'],
      ['2026-12-02', 'skipped_disabled'],
      ['2026-12-03', 'scheduled'],
    ]);
    const days = core.jobs.ledgerBuckets(id, { from: '2026-11-30T00:00:00.000Z', to: '2026-12-04T00:00:00.000Z' });
    expect(days.buckets.map((b) => b.counts)).toEqual([{ not_evaluated: 1 }, { skipped_disabled: 1 }, { skipped_disabled: 1 }, { scheduled: 1 }]);
  });

  it('a job created disabled: every slot due since reads "skipped: disabled"', () => {
    core = makeTestCore();
    const id = core.jobs.create({ name: 'off', role: 'etl', schedule: { cron: '0 * * * *', timezone: 'UTC' }, enabled: false }, who).job.id;
    core.clock.advance(3 * 3_600_000 + 1); // 11:00 and a moment
    const l = core.jobs.ledger(id, { from: '2026-11-30T07:00:00.000Z', to: '2026-11-30T13:00:00.000Z' });
    expect(l.items.map((e) => e.disposition)).toEqual(['before_job', 'skipped_disabled', 'skipped_disabled', 'skipped_disabled', 'skipped_disabled', 'scheduled']);
  });
});

describe('the ledger by day and hour', () => {
  it('counts every slot of a range once per local day, by disposition', () => {
    core = makeTestCore();
    const id = workdayJob(core, '*/15 * * * *');
    core.clock.advance(48 * 3_600_000); // Wednesday 08:00: Monday and Tuesday are past
    const r = core.jobs.ledgerBuckets(id, { from: '2026-11-28T00:00:00.000Z', to: '2026-12-06T00:00:00.000Z' });
    expect(r.by).toBe('day');
    expect(r.next).toBeNull();
    const day = (k: string) => r.buckets.find((b) => b.key === k)!;
    expect(r.buckets.map((b) => b.key)).toEqual(['2026-11-28', '2026-11-29', '2026-11-30', '2026-12-01', '2026-12-02', '2026-12-03', '2026-12-04', '2026-12-05']);
    expect(day('2026-11-28').counts).toEqual({ before_job: 96 });
    expect(day('2026-11-30')).toMatchObject({ slots: 96, counts: { before_job: 32, not_evaluated: 64 } });
    expect(day('2026-12-05').counts).toEqual({ skipped_calendar: 96 });
    expect(day('2026-12-03').counts).toEqual({ scheduled: 96 });
    const hours = core.jobs.ledgerBuckets(id, { from: '2026-11-30T00:00:00.000Z', to: '2026-12-01T00:00:00.000Z', by: 'hour' });
    expect(hours.buckets).toHaveLength(24);
    expect(hours.buckets[8]).toMatchObject({ key: '2026-11-30T08', first: '2026-11-30T08:00:00.000Z', slots: 4 });
  });

  it('pages a range with more slots than one call reads, counting each slot once', () => {
    core = makeTestCore();
    const id = workdayJob(core, '* * * * *');
    const from = '2026-11-30T00:00:00.000Z';
    const to = '2026-12-30T00:00:00.000Z';
    const totals = new Map<string, LedgerBucket>();
    let cursor: string | null = from;
    let calls = 0;
    while (cursor !== null) {
      const r = core.jobs.ledgerBuckets(id, { from: cursor, to });
      calls++;
      for (const b of r.buckets) {
        const t = totals.get(b.key);
        totals.set(b.key, t ? { ...t, slots: t.slots + b.slots } : b);
      }
      cursor = r.next;
    }
    expect(calls).toBeGreaterThan(1);
    expect(totals.size).toBe(30);
    for (const b of totals.values()) expect(b.slots).toBe(1440);
  });
});

describe('runs across jobs, by time', () => {
  it('filters runs by the slot time (from inclusive, to exclusive)', () => {
    core = makeTestCore();
    const id = workdayJob(core, '0 9 * * *');
    core.jobs.triggerNow(id, { reason: 'r', actor: 'op', slot: '2026-11-27' });
    core.jobs.triggerNow(id, { reason: 'r', actor: 'op', slot: '2026-11-26' });
    const all = core.jobs.listRuns({});
    expect(all.items.map((r) => r.slot)).toEqual(['2026-11-27', '2026-11-26']);
    expect(core.jobs.listRuns({ from: '2026-11-27T09:00:00.000Z' }).items.map((r) => r.slot)).toEqual(['2026-11-27']);
    expect(core.jobs.listRuns({ to: '2026-11-27T09:00:00.000Z' }).items.map((r) => r.slot)).toEqual(['2026-11-26']);
  });
});
