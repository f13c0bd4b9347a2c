/**
 * PROTOCOL §4 for runs: a result after the attempt was taken away is refused with `not_holder` and
 * audited, never acknowledged as a replay.
 */
import { describe, expect, it } from 'vitest';
import { hang, startJobsHarness, type JobsHarness } from '../tests/jobs.testkit';

let h: JobsHarness | undefined;

describe('a result after the attempt was taken away', () => {
  it('is not_holder and audited once the run failed at its deadline (no result of its own)', async () => {
    h = await startJobsHarness();
    const agent = await h.agent('reporter', hang);
    const jobId = h.createJob({ name: 'r', window: { start: '09:00', end: '12:00', recheckEveryS: 300 }, runTimeoutS: 600, retry: { maxAttempts: 1, firstDelayS: 60, backoff: 'fixed' } });
    await h.advanceTo('2026-11-30T01:10:00.000Z');
    await h.settle();
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'failed', errorClass: 'lost' });
    const t = agent.triggers[0]!;
    // `failed` is the status the run now has: this used to be taken for a harmless repeat.
    expect(await agent.result(t, 'failed', 'retryable', 'late')).toMatchObject({ ok: false, error: { code: 'not_holder', status: 409 } });
    expect(await agent.result(t, 'success')).toMatchObject({ ok: false, error: { code: 'not_holder', status: 409 } });
    await h.settle();
    const rejects = h.audit('run.reject');
    expect(rejects.map((r) => [r.subject, r.actor, r.detail.op, r.detail.code])).toEqual([
      [`run:${t.runId}`, agent.instanceId, 'run_result', 'not_holder'],
      [`run:${t.runId}`, agent.instanceId, 'run_result', 'not_holder'],
    ]);
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'failed', errorClass: 'lost', lastError: expect.stringContaining('no result before the deadline') });
  });

  it('a result that took effect is still a harmless repeat', async () => {
    h = await startJobsHarness();
    const agent = await h.agent('reporter', hang);
    const jobId = h.createJob({ name: 'r', window: { start: '09:00', end: '12:00', recheckEveryS: 300 }, retry: { maxAttempts: 1, firstDelayS: 60, backoff: 'fixed' } });
    await h.advanceTo('2026-11-30T01:01:00.000Z');
    await h.settle();
    const t = agent.triggers[0]!;
    const first = await agent.result(t, 'failed', 'fatal', 'bad input');
    expect(first).toMatchObject({ ok: true, result: { run: { status: 'failed' }, replayed: false } });
    expect(await agent.result(t, 'failed', 'fatal', 'bad input')).toMatchObject({ ok: true, result: { replayed: true } });
    // Another class is another result, not a repeat.
    expect(await agent.result(t, 'failed', 'retryable')).toMatchObject({ ok: false, error: { code: 'invalid_transition' } });
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'failed', errorClass: 'fatal' });
    // run_started again after the run finished: the attempt is over, do not run it again.
    expect(await agent.started(t)).toMatchObject({ ok: false, error: { code: 'not_holder' } });
  });

  it('a failed result without an errorClass counts as retryable', async () => {
    h = await startJobsHarness();
    const agent = await h.agent('reporter', hang);
    const jobId = h.createJob({ name: 'r', window: { start: '09:00', end: '12:00', recheckEveryS: 300 } });
    await h.advanceTo('2026-11-30T01:01:00.000Z');
    await h.settle();
    const t = agent.triggers[0]!;
    // While the attempt runs, a repeated run_started is the same start.
    expect(await agent.started(t)).toMatchObject({ ok: true, result: {} });
    expect(await agent.result(t, 'failed')).toMatchObject({ ok: true, result: { replayed: false } });
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'running', errorClass: 'retryable', retryCount: 1, lastError: 'the agent reported retryable failure' });
  });
});
