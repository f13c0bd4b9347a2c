/**
 * The running total per attempt (usage-ledger.ts invariant 5): a report's total and the cap check
 * behind it cost no sum over the attempt's rows, and stay equal to that sum when a write rolls back.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeTestCore, onlineInstance, type TestCore } from '../tests/test-core';
import { UsageLedger } from './usage-store';

let core: TestCore | undefined;
afterEach(() => {
  core?.close();
  core = undefined;
});

const report = (costUsd: number, outputTokens = 10) => ({ subject: 'task:1', attempt: 1, role: 'dev', jobId: null, instanceId: 'inst', inputTokens: 100, outputTokens, costUsd, at: 1 });
type Sums = { ofAttempt: { get: (...a: unknown[]) => unknown } };

describe('usage ledger: running total per attempt', () => {
  it('answers each report with the attempt’s total without summing its rows again (summed once, to start)', () => {
    core = makeTestCore();
    const ledger = new UsageLedger(core.db);
    const sums = vi.spyOn((ledger as unknown as { q: Sums }).q.ofAttempt, 'get');
    let last;
    for (let i = 0; i < 50; i++) last = core.store.write(() => ledger.record(report(0.01)));
    expect(sums).toHaveBeenCalledTimes(1);
    sums.mockRestore();
    expect(last!.totals).toEqual(ledger.ofAttempt('task:1', 1));
    expect(last!.totals).toMatchObject({ inputTokens: 5000, outputTokens: 500 });
    expect(last!.totals.costUsd).toBeCloseTo(0.5, 9);
  });

  it('a report whose write rolled back is not in the next total (the total is summed afresh)', () => {
    core = makeTestCore();
    const ledger = new UsageLedger(core.db);
    core.store.write(() => ledger.record(report(0.25)));
    expect(() =>
      core!.store.write(() => {
        ledger.record(report(5));
        throw new Error('the commit failed');
      }),
    ).toThrow('the commit failed');
    const next = core.store.write(() => ledger.record(report(0.25)));
    expect(next.totals).toEqual(ledger.ofAttempt('task:1', 1));
    expect(next.totals.costUsd).toBeCloseTo(0.5, 9);
  });

  it('the cap check uses the total the report brings: no sum of its own, and the cap still fires on it', () => {
    core = makeTestCore();
    const inst = onlineInstance(core);
    const task = core.tasks.create({ title: 'capped', role: 'dev', budget: { maxCostUsdPerRun: 1 } }, { actor: 'test' }).task;
    core.locks.claim({ instanceId: inst });
    // A first report, so that spend counts as measured.
    core.store.write(() => new UsageLedger(core!.db).record({ ...report(0.01), subject: `task:${task.id}` }));
    const spend = (core.budgets as unknown as { spend: { ofAttempt: (...a: unknown[]) => unknown } }).spend;
    const sums = vi.spyOn(spend, 'ofAttempt');
    const at = core.clock.now();
    core.store.write(() => core!.budgets.usageRecorded({ subject: `task:${task.id}`, role: 'dev', costNusd: 0, at, attempt: 1, attemptTotals: { inputTokens: 0, outputTokens: 0, costUsd: 0.5 } }));
    expect(core.tasks.get(task.id).status).toBe('in_progress');
    core.store.write(() => core!.budgets.usageRecorded({ subject: `task:${task.id}`, role: 'dev', costNusd: 0, at, attempt: 1, attemptTotals: { inputTokens: 0, outputTokens: 0, costUsd: 1.5 } }));
    expect(sums).not.toHaveBeenCalled();
    expect(core.tasks.get(task.id)).toMatchObject({ status: 'blocked', note: expect.stringContaining('$1.50 spent') });
  });
});
