import { describe, expect, it } from 'vitest';
import { RUN_DISPOSITIONS, type Backfill, type LedgerBucket, type LedgerEntry, type Run } from '../../../src-main/common/job-schema';
import { allRunsQuery, backfillActions, bucketRow, dueRows, canApproveRun, canRequestBackfill, canRetryRun, completingBackfill, filterLedger, filterOfAllRunsQuery, heatClassOf, heatGrid, heatTitle, heatTotals, slotTimeline } from './logic';
import { backfillReasonWords, runErrorView, runLink, settledWords } from '../../lib/run-words';
import { runLine } from './OutcomeCell';

const bucket = (key: string, counts: LedgerBucket['counts']): LedgerBucket => ({ key, first: `${key}T00:00:00.000Z`, slots: Object.values(counts).reduce((n, x) => n + (x ?? 0), 0), counts });

function entry(slot: string, disposition: LedgerEntry['disposition'], at?: string, extra: Partial<LedgerEntry> = {}): LedgerEntry {
  const local = slot.length === 10 ? `${slot}T09:00` : slot;
  return { slot, at: at ?? `${local.slice(0, 10)}T01:00:00.000Z`, local, expected: 'due', disposition, status: null, run: null, backfills: [], ...extra };
}

describe('heat-map bucketing', () => {
  it('maps every disposition to the operator’s colours', () => {
    expect(RUN_DISPOSITIONS.map((d) => [d, heatClassOf(d)])).toEqual([
      ['waiting', 'pending'],
      ['dispatched', 'pending'],
      ['running', 'pending'],
      ['verifying', 'pending'],
      ['retry_scheduled', 'pending'],
      ['ran', 'ok'],
      ['already_done', 'ok'],
      ['skipped_calendar', 'skipped_calendar'],
      ['skipped_dst', 'skipped_calendar'],
      ['skipped_overlap', 'skipped'],
      ['skipped_not_ready', 'not_ready'],
      ['skipped_paused', 'skipped'],
      ['skipped_kill_switch', 'skipped'],
      ['skipped_disabled', 'skipped'],
      ['skipped_maintenance', 'skipped'],
      ['skipped_quota', 'skipped'],
      ['skipped_budget', 'skipped'],
      ['missed', 'missed'],
      ['folded', 'backfilled'],
      ['failed', 'failed'],
      ['held', 'held'],
      ['backfilled', 'backfilled'],
      ['rejected', 'failed'],
    ]);
    expect(heatClassOf('scheduled')).toBe('upcoming');
    expect(heatClassOf('not_evaluated')).toBe('missed');
    expect(heatClassOf('before_job')).toBe('before_job');
  });

  it('builds Monday-first weeks ending the week after today from the day counts; a day shows its worst slot', () => {
    const days: LedgerBucket[] = [
      bucket('2026-11-23', { ran: 1 }),
      bucket('2026-11-24', { ran: 1, failed: 1, skipped_not_ready: 1 }),
      bucket('2026-11-26', { held: 1 }),
      bucket('2026-11-28', { skipped_calendar: 1 }),
      bucket('2026-11-30', { waiting: 1 }),
      bucket('2026-12-01', { scheduled: 1 }),
    ];
    const grid = heatGrid(days, '2026-11-30', 2);
    expect(grid).toHaveLength(3);
    expect(grid.map((c) => c[0]!.day)).toEqual(['2026-11-23', '2026-11-30', '2026-12-07']);
    const day = (d: string) => grid.flat().find((x) => x.day === d)!;
    expect(day('2026-11-23')).toMatchObject({ cls: 'ok', slots: 1, future: false });
    expect(day('2026-11-24')).toMatchObject({ cls: 'failed', slots: 3, counts: { ok: 1, failed: 1, not_ready: 1 } });
    expect(day('2026-11-26')).toMatchObject({ cls: 'held' });
    expect(day('2026-11-28').cls).toBe('skipped_calendar');
    expect(day('2026-11-29')).toMatchObject({ cls: 'none', slots: 0 });
    expect(day('2026-12-01')).toMatchObject({ cls: 'upcoming', future: true });
    expect(heatTitle(day('2026-11-24'))).toBe('2026-11-24: 3 slots — 1 failed, 1 skipped: not ready, 1 ran ok');
  });

  it('the legend counts slots due by now since the job exists: no upcoming slot is pending, nothing before the job', () => {
    const days = [bucket('2026-11-20', { before_job: 96 }), bucket('2026-11-30', { ran: 40, waiting: 2, scheduled: 54 }), bucket('2026-12-01', { scheduled: 96 })];
    expect(heatTotals(days)).toEqual({ ok: 40, pending: 2 });
  });

  it('a day or hour row groups its slots the way the operator reads them', () => {
    expect(bucketRow(bucket('2026-11-30', { ran: 50, backfilled: 2, failed: 3, missed: 1, skipped_calendar: 4, waiting: 1, scheduled: 30, before_job: 5 }))).toEqual({
      key: '2026-11-30',
      slots: 96,
      ok: 52,
      problems: 4,
      skipped: 4,
      pending: 1,
      upcoming: 30,
      before: 5,
      cls: 'failed',
    });
  });
});

describe('a backfilled slot', () => {
  const bf = (p: Partial<Backfill>) => ({ id: 3, status: 'done', reason: 'failed', createdAt: '2026-11-30T10:00:00.000Z', dispatchedAt: '2026-11-30T11:00:00.000Z', finishedAt: '2026-11-30T11:05:00.000Z', instanceId: 'inst_b', actor: 'runner', ...p }) as Backfill;
  const run = { createdAt: '2026-11-30T09:00:00.000Z', triggeredAt: '2026-11-30T09:00:01.000Z', startedAt: '2026-11-30T09:00:02.000Z', finishedAt: '2026-11-30T09:01:00.000Z', status: 'failed' } as Run;
  it('its timeline carries the backfill after the failed attempt, and the backfill that completed it gives the instance', () => {
    expect(slotTimeline(run, [bf({})]).map((t) => t.what)).toEqual(['claimed', 'triggered', 'started', 'finished (failed)', 'queued for backfill #3 (it failed)', 'backfill #3 dispatched to inst_b', 'backfill #3 done']);
    expect(dueRows([bucketRow(bucket('2026-12-08', { scheduled: 96 })), bucketRow(bucket('2026-11-01', { before_job: 96 })), bucketRow(bucket('2026-11-30', { before_job: 30, ran: 66 }))]).map((r) => r.key)).toEqual(['2026-11-30']);
    expect(slotTimeline(run, [bf({ dispatchedAt: null, instanceId: null })]).at(-1)!.what).toBe('backfill #3 marked done by hand');
    expect(completingBackfill([bf({ id: 1, status: 'failed' }), bf({ id: 2 })])!.id).toBe(2);
    expect(completingBackfill([bf({ status: 'queued' })])).toBeNull();
  });

  it('an approved run that then succeeded reads so — not as a failed backfill', () => {
    const approval = { decision: 'approved' as const, note: 'yes, goodwill refund', by: 'operator:browser', at: '2026-11-30T10:30:00.000Z' };
    const backfilled = { status: 'failed' as const, disposition: 'backfilled' as const, trigger: 'schedule' as const };
    expect(settledWords(backfilled, [bf({ reason: 'needs_human', approval })])).toBe('approved by you, then succeeded');
    expect(settledWords(backfilled, [bf({ reason: 'needs_human', approval: { ...approval, by: 'ops-lead' } })])).toBe('approved by ops-lead, then succeeded');
    expect(runLine(backfilled, [bf({ reason: 'needs_human', approval })])).toBe('approved by you, then succeeded');
    expect(runLine(backfilled, [bf({ approval: null })])).toBe('failed, then ran again and succeeded');
    expect(runLine(backfilled, [bf({ approval: null, dispatchedAt: null })])).toBe('marked done by hand');
    expect(runLine({ ...backfilled, trigger: 'manual' }, [bf({ reason: 'missed', approval: null })])).toBe('missed, then ran later and succeeded · run by hand');
    // Any other run reads as its status.
    expect(runLine({ status: 'failed', disposition: 'failed', trigger: 'schedule' })).toBe('failed');
    expect(slotTimeline(run, [bf({ reason: 'needs_human', approval })]).map((t) => t.what)).toEqual([
      'claimed',
      'triggered',
      'started',
      'finished (failed)',
      'queued for backfill #3 (needed a human)',
      'approved by you: “yes, goodwill refund”',
      'backfill #3 dispatched to inst_b',
      'backfill #3 done',
    ]);
    expect(backfillReasonWords('budget')).toBe('held at its spend cap');
    expect(backfillReasonWords('some_new_reason')).toBe('some new reason');
  });

  it('Retry now applies to a run that failed for good and has not run again; a toast about a run links to its slot', () => {
    const failed = { status: 'failed', disposition: 'failed', held: false } as Run;
    expect(canRetryRun({ run: failed, backfills: [] })).toBe(true);
    expect(canRetryRun({ run: failed, backfills: [bf({ status: 'queued' })] })).toBe(true);
    expect(canRetryRun({ run: failed, backfills: [bf({ status: 'dispatched' })] })).toBe(false);
    expect(canRetryRun({ run: { ...failed, disposition: 'backfilled' }, backfills: [bf({})] })).toBe(false);
    expect(canRetryRun({ run: { ...failed, disposition: 'held', held: true }, backfills: [bf({ status: 'held' })] })).toBe(false);
    expect(canRetryRun({ run: { ...failed, disposition: 'rejected' }, backfills: [] })).toBe(false);
    expect(canRetryRun({ run: { ...failed, status: 'running', disposition: 'running' }, backfills: [] })).toBe(false);
    expect(canRetryRun({ run: null, backfills: [] })).toBe(false);
    expect(runLink({ jobId: 'job_a', slot: '2026-12-04' })).toEqual({ label: 'Open the run', view: 'runs', param: 'job_a', query: { slot: '2026-12-04' } });
  });

  it('an error of a slot that succeeded later reads as an earlier attempt’s', () => {
    expect(runErrorView({ lastError: 'timeout', disposition: 'backfilled' })).toEqual({ text: 'timeout', earlier: true, verification: false });
    expect(runErrorView({ lastError: 'timeout', disposition: 'ran' })).toEqual({ text: 'timeout', earlier: true, verification: false });
    expect(runErrorView({ lastError: 'timeout', disposition: 'failed' })).toEqual({ text: 'timeout', earlier: false, verification: false });
    expect(runErrorView({ lastError: null, disposition: 'failed' })).toBeNull();
  });

  it('says a failed verification in words: the agent said done, the checks said no', () => {
    const lastError = 'verification failed: tests: exited with 1; build: no commit over main';
    expect(runErrorView({ lastError, disposition: 'retry_scheduled' })).toEqual({
      text: 'the agent said done, but the checks failed: tests: exited with 1; build: no commit over main',
      earlier: false,
      verification: true,
    });
    expect(runErrorView({ lastError, disposition: 'ran' })).toMatchObject({ earlier: true, verification: true });
  });
});

describe('runs of every job: the filter in the address bar', () => {
  it('reads the operator’s days as instants (to included) and drops what the server would refuse', () => {
    const f = filterOfAllRunsQuery({ all: '1', job: 'job_a', status: 'failed', disposition: 'nope', from: '2026-11-01', to: '2026-11-30' });
    expect(f.job).toBe('job_a');
    expect(f.status).toBe('failed');
    expect(f.disposition).toBeUndefined();
    expect(f.from).toBe(new Date(2026, 10, 1).toISOString());
    expect(f.to).toBe(new Date(2026, 11, 1).toISOString());
    expect(allRunsQuery({ all: '1', job: '', status: 'failed', slot: 'x' })).toEqual({ all: '1', status: 'failed' });
  });
});

describe('slot list and backfill actions', () => {
  const run = (status: Run['status']) => ({ status }) as Run;
  it('filters: due so far (newest first), problems, with a run, upcoming (soonest first)', () => {
    const now = Date.parse('2026-11-30T12:00:00.000Z');
    const items = [entry('2026-11-27', 'before_job'), entry('2026-11-28', 'ran', undefined, { run: run('success') }), entry('2026-11-29', 'skipped_not_ready', undefined, { run: run('skipped') }), entry('2026-11-30', 'not_evaluated'), entry('2026-12-01', 'scheduled'), entry('2026-12-02', 'scheduled')];
    expect(filterLedger(items, 'past', now).map((e) => e.slot)).toEqual(['2026-11-30', '2026-11-29', '2026-11-28']);
    expect(filterLedger(items, 'problems', now).map((e) => e.slot)).toEqual(['2026-11-30', '2026-11-29']);
    expect(filterLedger(items, 'runs', now).map((e) => e.slot)).toEqual(['2026-11-29', '2026-11-28']);
    expect(filterLedger(items, 'upcoming', now).map((e) => e.slot)).toEqual(['2026-12-01', '2026-12-02']);
    expect(filterLedger(items, 'all', now)).toHaveLength(6);
  });

  it('which backfill actions apply, and which slots can be queued by hand', () => {
    expect(backfillActions({ status: 'queued' })).toEqual(['run_now', 'cancel', 'mark_done']);
    expect(backfillActions({ status: 'held' })).toEqual(['run_now', 'cancel', 'mark_done']);
    expect(backfillActions({ status: 'dispatched' })).toEqual([]);
    expect(backfillActions({ status: 'done' })).toEqual([]);
    expect(canRequestBackfill({ run: run('failed'), backfills: [] })).toBe(true);
    expect(canRequestBackfill({ run: run('success'), backfills: [] })).toBe(false);
    expect(canRequestBackfill({ run: run('running'), backfills: [] })).toBe(false);
    expect(canRequestBackfill({ run: null, backfills: [] })).toBe(false);
    expect(canRequestBackfill({ run: run('skipped'), backfills: [{ status: 'queued' } as never] })).toBe(false);
    // A failed run a backfill completed: nothing left to queue.
    expect(canRequestBackfill({ run: { status: 'failed', disposition: 'backfilled' } as Run, backfills: [{ status: 'done' } as never] })).toBe(false);
  });
});

describe('canApproveRun', () => {
  it('a held run waits for approval; one already backfilled or rejected does not, nor no run', () => {
    expect(canApproveRun({ held: true, disposition: 'held' })).toBe(true);
    expect(canApproveRun({ held: true, disposition: 'rejected' })).toBe(false);
    expect(canApproveRun({ held: true, disposition: 'backfilled' })).toBe(false);
    expect(canApproveRun({ held: false, disposition: 'failed' })).toBe(false);
    expect(canApproveRun(null)).toBe(false);
  });
});
