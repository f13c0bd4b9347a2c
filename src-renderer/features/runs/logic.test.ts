import { describe, expect, it } from 'vitest';
import { RUN_DISPOSITIONS, type LedgerEntry, type Run } from '../../../src-main/common/job-schema';
import { backfillActions, canRequestBackfill, filterLedger, heatClassOf, heatGrid, heatTitle, heatTotals } from './logic';

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
      ['retry_scheduled', 'pending'],
      ['ran', 'ok'],
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
    expect(heatClassOf('scheduled')).toBe('pending');
    expect(heatClassOf('not_evaluated')).toBe('missed');
    expect(heatClassOf('before_job')).toBe('none');
  });

  it('builds Monday-first weeks ending the week after today; a day shows its worst slot', () => {
    const items = [
      entry('2026-11-23', 'ran'),
      entry('2026-11-24T09:00', 'ran'),
      entry('2026-11-24T10:00', 'failed'),
      entry('2026-11-24T11:00', 'skipped_not_ready'),
      entry('2026-11-28', 'skipped_calendar'),
      entry('2026-12-01', 'scheduled'),
      // No local time (a slot not in the current schedule): dated in the job's zone.
      { ...entry('old-key', 'held', '2026-11-25T20:00:00.000Z'), local: null },
    ];
    const grid = heatGrid(items, 'Asia/Shanghai', '2026-11-30', 2);
    expect(grid).toHaveLength(3);
    expect(grid.map((c) => c[0]!.day)).toEqual(['2026-11-23', '2026-11-30', '2026-12-07']);
    const day = (d: string) => grid.flat().find((x) => x.day === d)!;
    expect(day('2026-11-23')).toMatchObject({ cls: 'ok', slots: 1, future: false });
    expect(day('2026-11-24')).toMatchObject({ cls: 'failed', slots: 3, counts: { ok: 1, failed: 1, not_ready: 1 } });
    expect(day('2026-11-26')).toMatchObject({ cls: 'held' }); // 20:00Z on the 25th is the 26th in Shanghai
    expect(day('2026-11-28').cls).toBe('skipped_calendar');
    expect(day('2026-11-29')).toMatchObject({ cls: 'none', slots: 0 });
    expect(day('2026-12-01')).toMatchObject({ cls: 'pending', future: true });
    expect(heatTitle(day('2026-11-24'))).toBe('2026-11-24: 3 slots — 1 failed, 1 skipped: not ready, 1 ran ok');
    expect(heatTotals(items)).toMatchObject({ ok: 2, failed: 1, not_ready: 1, held: 1, pending: 1, skipped_calendar: 1 });
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
  });
});
