/**
 * What a burst of triggers reads once instead of once per trigger (issues 26, 32), and that each
 * such read still sees a change before the next trigger: on a manual clock through real agents.
 */
import { describe, expect, it, vi } from 'vitest';
import { UsageLedger } from '../logs/usage-store';
import { EVERY_15_MIN, fail, hang, OPERATOR as op, startJobsHarness, succeed, until } from '../tests/jobs.testkit';
import { localDay } from './time-util';

describe('a burst of one role', () => {
  it('asks core/budgets for the role’s spend verdict once per pass; spend reported after it stops the next slot', async () => {
    const h = await startJobsHarness({ start: '2026-11-30T08:00:30.000Z' });
    const agent = await h.agent('ops', hang);
    h.core.budgets.put({ perRoleDailyUsd: { ops: 5 }, timezone: 'UTC', ...op });
    const jobs = ['a', 'b', 'c'].map((name) => h.createJob({ name, role: 'ops', schedule: EVERY_15_MIN, overlap: 'allow' }));
    const verdict = vi.spyOn(h.core.budgets, 'verdict');

    // A pass is cut into slices of real time; the slices of a loaded machine must not split this one.
    const slices = vi.spyOn(performance, 'now').mockReturnValue(0);
    await h.advanceTo('2026-11-30T08:15:30.000Z');
    slices.mockRestore();
    expect(agent.triggers.map((t) => t.job).sort()).toEqual(['a', 'b', 'c']);
    // Three dispatches, one question (all three were due in one pass).
    expect(verdict.mock.calls.filter(([role]) => role === 'ops')).toHaveLength(1);

    // The cap is reached between two passes: the next pass reads it afresh and dispatches nothing.
    new UsageLedger(h.core.db).add({ subject: 'task:1', attempt: 1, role: 'ops', jobId: null, instanceId: 'inst', costUsd: 5, at: h.clock.now() });
    await h.advanceTo('2026-11-30T08:30:30.000Z');
    expect(agent.triggers).toHaveLength(3);
    for (const jobId of jobs) {
      const run = h.run(jobId, '2026-11-30T08:30')!;
      expect(run.status).toBe('pending');
      expect(h.core.jobs.getRun(run.id).checks.find((c) => c.name === 'execution')!.reason).toMatch(/^the daily spend cap of role ops is reached/);
    }
  });
});

describe('the day of an attempt (the daily ceiling counts every dispatch on it)', () => {
  it('is kept per zone while instants fall in it, and computed afresh past either end (midnight, a step back, a DST day)', () => {
    const at = (iso: string) => Date.parse(iso);
    expect(localDay(at('2026-11-30T23:59:59.999Z'), 'UTC')).toEqual({ day: '2026-11-30', nextDayAt: at('2026-12-01T00:00:00.000Z') });
    expect(localDay(at('2026-12-01T00:00:00.000Z'), 'UTC')).toEqual({ day: '2026-12-01', nextDayAt: at('2026-12-02T00:00:00.000Z') });
    // The clock stepped back over midnight: yesterday again, not the day kept.
    expect(localDay(at('2026-11-30T23:00:00.000Z'), 'UTC').day).toBe('2026-11-30');
    // Another zone has its own day at the same instant.
    expect(localDay(at('2026-11-30T23:00:00.000Z'), 'Asia/Tokyo')).toEqual({ day: '2026-12-01', nextDayAt: at('2026-12-01T15:00:00.000Z') });
    // A 23-hour day (Berlin, spring forward): it ends at the next local midnight.
    expect(localDay(at('2026-03-29T12:00:00.000Z'), 'Europe/Berlin')).toEqual({ day: '2026-03-29', nextDayAt: at('2026-03-29T22:00:00.000Z') });
    expect(localDay(at('2026-03-29T21:59:59.999Z'), 'Europe/Berlin').day).toBe('2026-03-29');
    expect(localDay(at('2026-03-29T22:00:00.000Z'), 'Europe/Berlin').day).toBe('2026-03-30');
    expect(localDay(at('2026-03-28T22:59:59.999Z'), 'Europe/Berlin').day).toBe('2026-03-28');
  });
});

describe('a run that succeeds', () => {
  it('opens no transaction for inbox items it has none of; one it has is still resolved', async () => {
    const h = await startJobsHarness({ start: '2026-11-30T08:00:30.000Z' });
    const agent = await h.agent('ops', fail('retryable', 'the report is broken'));
    const jobId = h.createJob({ name: 'report', role: 'ops', schedule: EVERY_15_MIN, retry: { maxAttempts: 1 } });
    await h.advanceTo('2026-11-30T08:15:30.000Z');
    await until(() => h.core.inbox.list({ kind: 'run_failed' }).items.length === 1, 'the failure raised');

    // Every outermost transaction opened while a success settles its job's items, and what it resolved.
    const opened: string[][] = [];
    const resolveAny = h.core.inbox.resolveAny.bind(h.core.inbox);
    const write = h.core.store.write.bind(h.core.store);
    let resolving = false;
    vi.spyOn(h.core.inbox, 'resolveAny').mockImplementation((...args) => {
      resolving = true;
      try {
        return resolveAny(...args);
      } finally {
        resolving = false;
      }
    });
    vi.spyOn(h.core.store, 'write').mockImplementation((fn) => {
      if (!resolving || h.core.db.inTransaction) return write(fn);
      const out = write(fn);
      opened.push((out as Array<{ kind: string }>).map((i) => i.kind));
      return out;
    });
    agent.behavior = succeed();
    await h.advanceTo('2026-11-30T08:30:30.000Z');
    await until(() => h.run(jobId, '2026-11-30T08:30')?.status === 'success', 'the next run succeeded');
    await until(() => h.core.inbox.list({ kind: 'run_failed' }).items.length === 0, 'the failure resolved');
    // Of the four kinds a success settles (run_failed, repeated_failures, missed, dead_man), only the
    // live one wrote: one transaction, opened once it was found.
    expect(opened).toEqual([['run_failed']]);
  });
});
