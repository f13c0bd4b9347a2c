/** The panes' read of an attempt against its cap: the same cap and sum the budgets module stops the attempt by. */
import { afterEach, describe, expect, it } from 'vitest';
import { EVERY_15_MIN, hang, OPERATOR as op, startJobsHarness, until, type JobsHarness } from '../tests/jobs.testkit';

let h: JobsHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('attempt spend (core.reads.attemptSpend)', () => {
  it('a run: its job’s cap and this attempt’s spend; approved with a cap of its own, that one, from a fresh attempt', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    const agent = await h.agent('ops', hang);
    const jobId = h.createJob({ name: 'agentic', role: 'ops', schedule: EVERY_15_MIN, budget: { maxCostUsdPerRun: 2 } });
    await h.advanceTo('2026-11-30T00:15:10.000Z');
    const run = await until(() => h!.runs(jobId).find((r) => r.status === 'running'), 'running');
    await agent.a.request('usage', { runId: run.id, inputTokens: 1000, outputTokens: 500, costUsd: 0.75 });
    expect(h.core.reads.attemptSpend.of(`run:${run.id}`)).toEqual({ subject: `run:${run.id}`, attempt: 1, cap: { maxCostUsdPerRun: 2 }, capFrom: 'job', spent: { costUsd: 0.75, tokens: 1500 } });
    await agent.a.request('usage', { runId: run.id, costUsd: 1.5 });
    await until(() => h!.core.jobs.getRun(run.id).run.held, 'held by its cap');
    h.core.jobs.approvals.approve(run.id, { note: 'worth five', budget: { maxCostUsdPerRun: 5 }, ...op });
    const after = h.core.reads.attemptSpend.of(`run:${run.id}`)!;
    expect(after).toMatchObject({ cap: { maxCostUsdPerRun: 5 }, capFrom: 'run' });
    // The approved re-run is a new attempt: its spend starts at nothing, under the new cap.
    expect(after).toMatchObject({ attempt: 2, spent: { costUsd: 0, tokens: 0 } });
    expect(h.core.reads.attemptSpend.of('run:nope')).toBeNull();
  });
});
