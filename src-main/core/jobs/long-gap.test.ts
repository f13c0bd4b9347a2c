/**
 * A long sleep with a short-interval job (issue 25 item 7): a +1 day wake with an every-second job
 * wrote a missed run and ~2 audit rows per slot (86 400 slots, 120 000 rows) while claims waited
 * seconds. A gap's misses cost O(1) rows per job: the newest slots one by one (every policy keeps
 * doing what it does with them), the older ones one range row per decision — which still answers
 * "why didn't it run at T" for any T in it. Injected clock; real agents over the socket.
 */
import { describe, expect, it } from 'vitest';
import type { JobSpecInput } from '../../common/job-schema';
import { assertInvariants, startJobsHarness, succeed, type JobsHarness } from '../tests/jobs.testkit';
import { slotScanMeter } from './schedule';
import { ONE_BY_ONE } from './slot-walk';

const DAY = 86_400_000;
const START = '2026-11-30T00:00:00.500Z';

interface Slept {
  h: JobsHarness;
  jobId: string;
  sleptFrom: number;
  wokeAt: number;
  /** Rows the wake-up wrote. */
  runs: number;
  audit: number;
  /** Slot occurrences the schedule library computed for the wake-up. */
  scanned: number;
}

async function sleepWith(days: number, spec: Partial<JobSpecInput> = {}): Promise<Slept> {
  const h = await startJobsHarness({ start: START });
  await h.agent('ops', succeed());
  const jobId = h.createJob({ name: 'tick', role: 'ops', schedule: { everyS: 1 }, ...spec });
  await h.advance(3000);
  const count = (table: string) => (h.core.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  const [runs0, audit0] = [count('runs'), count('audit')];
  const sleptFrom = h.clock.now();
  h.clock.jump(days * DAY); // the laptop sleeps: wall time moves, no timer runs
  const wokeAt = h.clock.now();
  slotScanMeter.considered = 0;
  // The gap detector's pulse notices the jump; the runner works off the gap in its passes.
  await h.advance(6000);
  await h.settle();
  const scanned = slotScanMeter.considered;
  return { h, jobId, sleptFrom, wokeAt, runs: count('runs') - runs0, audit: count('audit') - audit0, scanned };
}

describe('a one-day sleep with an every-second job', () => {
  it('costs O(1) rows: one range row for the older slots, the newest one by one; a two-day sleep writes exactly as many', async () => {
    const one = await sleepWith(1, { missedWindow: 'skip_and_alert' });
    const two = await sleepWith(2, { missedWindow: 'skip_and_alert' });
    // ONE_BY_ONE decided one by one, one range row, and the slots of the 6 s after the wake.
    expect(one.runs).toBeLessThanOrEqual(ONE_BY_ONE + 10);
    expect(one.audit).toBeLessThan(10 * ONE_BY_ONE);
    expect([two.runs, two.audit]).toEqual([one.runs, one.audit]);
    // The wake-up counted the older slots instead of computing each.
    expect(one.scanned).toBeLessThan(5000);
    expect(two.scanned).toBeLessThan(5000);

    const { h, jobId, sleptFrom, wokeAt } = one;
    const ranges = h.runs(jobId).filter((r) => r.range);
    expect(ranges).toHaveLength(1);
    const range = ranges[0]!;
    const inGap = (r: { slotAt: string }) => Date.parse(r.slotAt) > sleptFrom && Date.parse(r.slotAt) <= wokeAt;
    const oneByOne = h.runs(jobId).filter((r) => !r.range && inGap(r));
    // Every slot of the gap is accounted for, once: the range's and the newest ones.
    const gapSlots = Math.floor(wokeAt / 1000) - Math.floor(sleptFrom / 1000);
    expect(range.range!.slots + oneByOne.length).toBe(gapSlots);
    expect(oneByOne.filter((r) => r.disposition !== 'missed')).toEqual([]);
    expect(range).toMatchObject({ status: 'skipped', disposition: 'missed' });
    expect(range.lastError).toMatch(new RegExp(`^${range.range!.slots} slots from ${range.slot} to ${range.range!.lastSlot} `));
    // One alert for the range (and one per slot decided one by one).
    expect(h.audit('run.alert').filter((e) => e.subject === `run:${range.id}`)).toHaveLength(1);
    // The dead-man's switch passes the range in one look, and reports nothing the runner reported.
    await h.advance(2 * h.core.config.sweepIntervalS * 1000);
    const watch = h.core.db.prepare('SELECT checked_to FROM inbox_watch WHERE job_id = ?').get(jobId) as { checked_to: number };
    expect(watch.checked_to).toBeGreaterThan(Date.parse(range.range!.lastAt));
    expect(h.core.inbox.list({ kind: 'dead_man' }).items).toEqual([]);
    assertInvariants(h.core);
  });

  it('"why didn\'t it run at T" for any T in the range: missed, naming the range; the ledger and the runs list show it', async () => {
    const { h, jobId, sleptFrom } = await sleepWith(1);
    const range = h.runs(jobId).find((r) => r.range)!;
    for (const t of [sleptFrom + 7_777_123, sleptFrom + 12 * 3600_000 + 500, Date.parse(range.range!.lastAt)]) {
      const x = h.core.jobs.explain(jobId, t);
      const slot = new Date(Math.floor(t / 1000) * 1000).toISOString().slice(0, 19);
      expect(x.slot?.slot).toBe(slot);
      expect(x.tense).toBe('past');
      expect(x.run?.id).toBe(range.id);
      expect(x.outcome).toContain(`slot ${slot} did not run: the window passed while Gaffer could not act on it: one of ${range.range!.slots} slots from ${range.slot} to ${range.range!.lastSlot}`);
    }
    // The ledger of an hour inside the gap: every slot missed, by the range's row.
    const from = sleptFrom + 5 * 3600_000;
    const l = h.core.jobs.ledger(jobId, { from, to: from + 3600_000, limit: 5000 });
    expect(l.items).toHaveLength(3600);
    expect(l.counts).toEqual({ missed: 3600 });
    expect(new Set(l.items.map((e) => e.run?.id))).toEqual(new Set([range.id]));
    // GET /runs over that hour lists the range row (its own slot is older than the hour).
    expect(h.core.jobs.listRuns({ job: jobId, from, to: from + 3600_000 }).items.map((r) => r.id)).toEqual([range.id]);
    // A slot of it cannot be backfilled (no row of its own) but can be run by hand, once.
    const inside = new Date(Math.floor((from + 1000) / 1000) * 1000).toISOString().slice(0, 19);
    expect(() => h.core.jobs.requestBackfill(jobId, { slot: inside, reason: 'needed', actor: 'op' })).toThrow(/is one of \d+ slots decided as one row .* run it by hand/);
    const byHand = h.core.jobs.triggerNow(jobId, { slot: inside, reason: 'needed', actor: 'op' });
    expect(byHand).toMatchObject({ created: true, run: { slot: inside, trigger: 'manual' } });
    expect(h.core.jobs.triggerNow(jobId, { slot: inside, reason: 'again', actor: 'op' }).created).toBe(false);
  });

  it('run_now keeps queueing its newest missed slots for backfill (at most the cap per tick); the range is not queued', async () => {
    const { h, jobId } = await sleepWith(1, { missedWindow: 'run_now', toleranceS: 1, backfillCapPerTick: 3 });
    const range = h.runs(jobId).find((r) => r.range)!;
    expect(range).toMatchObject({ status: 'failed', disposition: 'missed' });
    expect(range.lastError).toMatch(/not queued for backfill/);
    const backfills = h.core.jobs.listBackfills({ job: jobId, limit: 1000 }).items;
    expect(backfills.length).toBeGreaterThan(ONE_BY_ONE - 10);
    expect(backfills.length).toBeLessThanOrEqual(ONE_BY_ONE);
    expect(backfills.some((b) => b.runId === range.id)).toBe(false);
    // Ticks go on dispatching them, three at a time.
    expect(backfills.filter((b) => b.status !== 'queued').length).toBeGreaterThanOrEqual(3);
    assertInvariants(h.core);
  });

  it('fold_into_next: the next run covers the range (named by its first slot) and the newest folded slots', async () => {
    const { h, jobId } = await sleepWith(1, { missedWindow: 'fold_into_next' });
    const range = h.runs(jobId).find((r) => r.range)!;
    expect(range.coveredBy).not.toBeNull();
    const cover = h.core.jobs.getRun(range.coveredBy!).run;
    expect(cover.covers[0]).toBe(range.slot);
    expect(cover.covers.length).toBeLessThanOrEqual(ONE_BY_ONE + 1);
    expect(cover.status).toBe('success');
    expect(h.core.jobs.getRun(range.id).run.disposition).toBe('backfilled');
    assertInvariants(h.core);
  });

  it('a step back into the range never claims its slots again', async () => {
    const { h, jobId } = await sleepWith(1);
    const before = h.audit('run.claim').length;
    h.clock.jump(-3 * 3600_000); // back into the range's hours
    await h.advance(20_000);
    await h.settle();
    const claims = h.audit('run.claim').slice(before);
    expect(claims).toEqual([]);
    assertInvariants(h.core);
    void jobId;
  });
});

describe('a long sleep of a job the runner cannot count (a calendar): scanned in bounded calls, one range per decision', () => {
  it('every 5 s on workdays across a weekend: missed, skipped by the calendar, missed — three ranges', async () => {
    const h = await startJobsHarness({ start: '2026-12-04T22:00:00.500Z' }); // a Friday evening
    await h.agent('ops', succeed());
    h.core.jobs.createCalendar({ id: 'weekdays', name: 'Weekdays', timezone: 'UTC', workdays: [1, 2, 3, 4, 5], holidays: [], extraWorkdays: [] }, { actor: 'test' });
    const jobId = h.createJob({ name: 'poll', role: 'ops', schedule: { everyS: 5 }, calendar: 'weekdays' });
    await h.advance(10_000);
    const runs0 = h.runs(jobId).length;
    h.clock.jump(3 * DAY); // until Monday evening: 51 840 slots, over several of the runner's calls
    await h.advance(10_000);
    await h.settle();
    const ranges = h.runs(jobId).filter((r) => r.range);
    expect(ranges.map((r) => [r.disposition, r.slot.slice(0, 10), r.range!.lastSlot.slice(0, 10)])).toEqual([
      ['missed', '2026-12-04', '2026-12-04'],
      ['skipped_calendar', '2026-12-05', '2026-12-06'],
      ['missed', '2026-12-07', '2026-12-07'],
    ]);
    expect(h.runs(jobId).length - runs0).toBeLessThanOrEqual(ONE_BY_ONE + 10);
    // Each slot once: the ranges and the rows one by one add up to the slots of the gap.
    const l = h.core.jobs.ledger(jobId, { from: '2026-12-05T00:00:00.000Z', to: '2026-12-06T00:00:00.000Z', limit: 5000 });
    expect(l.counts).toEqual({ skipped_calendar: 5000 });
    expect(h.core.jobs.explain(jobId, '2026-12-06T13:00:02.000Z').outcome).toMatch(/^slot 2026-12-06T13:00:00 did not run: not a workday in the job calendar: one of \d+ slots from 2026-12-05T00:00:00 to 2026-12-06T23:59:55/);
    assertInvariants(h.core);
  });
});

describe('one run per slot key, wherever it is due', () => {
  it('a key that ran at another instant (the job moved to another zone) is not claimed again', async () => {
    const h = await startJobsHarness({ start: '2026-11-29T23:50:00.000Z' });
    await h.agent('ops', succeed());
    const jobId = h.createJob({ name: 'hourly', role: 'ops', schedule: { cron: '0 * * * *', timezone: 'Asia/Tokyo' } });
    await h.advanceTo('2026-11-30T00:30:00.000Z'); // 09:30 in Tokyo: the 09:00 slot ran
    expect(h.run(jobId, '2026-11-30T09:00')).toMatchObject({ status: 'success' });
    h.core.jobs.update(jobId, { schedule: { cron: '0 * * * *', timezone: 'UTC' } }, { actor: 'test' });
    await h.advanceTo('2026-11-30T09:30:00.000Z'); // 09:00 UTC: the same key again
    expect(h.runs(jobId).filter((r) => r.slot === '2026-11-30T09:00')).toHaveLength(1);
    // Nothing written for the key found taken: one claim row for it.
    expect(h.audit('run.claim').filter((a) => a.detail.jobId === jobId && a.detail.slot === '2026-11-30T09:00')).toHaveLength(1);
    expect(h.run(jobId, '2026-11-30T08:00')).toMatchObject({ status: 'success' });
    // And the runner goes on (a second claim of the key would fail every pass from here on).
    await h.advanceTo('2026-11-30T10:30:00.000Z');
    expect(h.run(jobId, '2026-11-30T10:00')).toMatchObject({ status: 'success' });
    assertInvariants(h.core);
  });
});
