/**
 * Job runs under the rules that tasks have (PROTOCOL §13, §14), on a manual clock through real
 * agent frames: the loop breaker, the per-job ceiling of attempts a day, "is it already done?"
 * before a retry, and a backfill's attempt verified like any other.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertInvariants, hang, OPERATOR as op, startJobsHarness, until, type Behavior } from '../tests/jobs.testkit';
import { tempDir } from '../tests/test-core';

const DAILY_9 = { cron: '0 9 * * *', timezone: 'UTC' };
const SLOT = '2026-11-30';

/** Fails every attempt with the next of `errors` (the last one again when they run out). */
function failWith(errors: string[]): Behavior {
  let i = 0;
  return async (t, a) => {
    await a.started(t);
    await a.result(t, 'failed', 'retryable', errors[Math.min(i++, errors.length - 1)]);
  };
}

describe('the loop breaker, for job runs', () => {
  it('the same error three attempts in a row holds the run with a loop_breaker item; three different errors keep retrying', async () => {
    const h = await startJobsHarness({ start: '2026-11-30T08:59:00.000Z' });
    const same = await h.agent('same', failWith(['API Error: 429 rate limited, retry in 31 s', 'API Error: 429 rate limited, retry in 7 s', 'api error: 429 rate limited, retry in 55 s']));
    const varied = await h.agent('varied', failWith(['out of disk', 'git push rejected', 'tests failed: 3', 'lint failed', 'no network']));
    const retry = { maxAttempts: 10, firstDelayS: 60 };
    const sameJob = h.createJob({ name: 'flaky', role: 'same', schedule: DAILY_9, retry });
    const variedJob = h.createJob({ name: 'varied', role: 'varied', schedule: DAILY_9, retry });
    await h.advanceTo('2026-11-30T09:03:30.000Z');
    expect(same.triggers).toHaveLength(3);
    expect(h.run(sameJob, SLOT)).toMatchObject({ status: 'failed', disposition: 'held', lastError: expect.stringMatching(/^loop breaker: the same error came 3 times in a row, retries stopped: .*retry in 55 s$/) });
    // Different errors: still retrying (the fourth attempt went out).
    expect(varied.triggers.length).toBeGreaterThanOrEqual(4);
    const items = h.core.inbox.list({}).items.filter((i) => i.subject === `run:${h.run(sameJob, SLOT)!.id}`);
    // One item, the loop breaker's (not a second "held" one).
    expect(items).toEqual([expect.objectContaining({ kind: 'loop_breaker', title: `Job flaky (${SLOT}) failed 3 times in a row with the same error` })]);
    expect(h.core.inbox.list({ kind: 'loop_breaker' }).items.some((i) => i.subject === `run:${h.run(variedJob, SLOT)!.id}`)).toBe(false);
    assertInvariants(h.core);
  });

  it('N is one setting for tasks and job runs (audited); a job may set its own (0: off)', async () => {
    const h = await startJobsHarness({ start: '2026-11-30T08:59:00.000Z' });
    expect(h.core.jobs.settings().loopBreaker).toEqual({ sameErrorTimes: 3 });
    expect(() => h.core.jobs.setLoopBreaker({ sameErrorTimes: -1, reason: 'x', ...op })).toThrow(expect.objectContaining({ code: 'bad_request' }));
    expect(h.core.jobs.setLoopBreaker({ sameErrorTimes: 2, reason: 'expensive agents', ...op }).loopBreaker).toEqual({ sameErrorTimes: 2 });
    expect(h.audit('jobs.settings').at(-1)!.detail).toMatchObject({ reason: 'expensive agents', sameErrorTimes: { from: 3, to: 2 } });
    const a = await h.agent('dev', failWith(['boom']));
    const b = await h.agent('ops', failWith(['boom']));
    const retry = { maxAttempts: 10, firstDelayS: 60 };
    const two = h.createJob({ name: 'two', role: 'dev', schedule: DAILY_9, retry });
    const off = h.createJob({ name: 'off', role: 'ops', schedule: DAILY_9, retry, loopBreaker: { sameErrorTimes: 0 } });
    await h.advanceTo('2026-11-30T09:02:30.000Z');
    expect(a.triggers).toHaveLength(2);
    expect(h.run(two, SLOT)).toMatchObject({ disposition: 'held' });
    expect(b.triggers.length).toBeGreaterThanOrEqual(3);
    expect(h.run(off, SLOT)).toMatchObject({ disposition: 'retry_scheduled' });
    // Tasks read the same setting: two identical errors block a task.
    const dev = h.agents[0]!.a;
    const task = h.core.tasks.create({ title: 't', role: 'dev' }, { actor: 'test' }).task;
    for (let i = 0; i < 2; i++) {
      const c = (await dev.request('claim', {})).result;
      const r = (await dev.request('report', { taskId: task.id, fence: c.lock.fence, status: 'backlog', note: 'boom' })).result.task;
      expect(r.status).toBe(i === 0 ? 'backlog' : 'blocked');
    }
  });
});

describe('the per-job ceiling of attempts a day', () => {
  it('when reached, no further attempt that day: said in words, with an inbox item; the next day it goes on', async () => {
    const h = await startJobsHarness({ start: '2026-11-30T23:54:00.000Z' });
    const a = await h.agent('dev', failWith(['one', 'two', 'three', 'four']));
    const jobId = h.createJob({ name: 'capped', role: 'dev', schedule: { cron: '55 23 * * *', timezone: 'UTC' }, retry: { maxAttempts: 10, firstDelayS: 60 }, maxAttemptsPerDay: 2 });
    await h.advanceTo('2026-11-30T23:59:00.000Z');
    expect(a.triggers).toHaveLength(2);
    const run = h.run(jobId, '2026-11-30')!;
    expect(run).toMatchObject({ status: 'running', disposition: 'retry_scheduled' });
    const exec = h.core.jobs.getRun(run.id).checks.find((c) => c.name === 'execution')!;
    expect(exec).toMatchObject({ verdict: 'not_ready', reason: "the job's ceiling of 2 attempts a day is reached (2 on 2026-11-30, UTC); no further attempt until 2026-12-01T00:00:00.000Z" });
    expect(h.core.inbox.list({ kind: 'quota' }).items).toEqual([expect.objectContaining({ subject: `job:${jobId}`, title: 'Job capped used up its attempts for the day' })]);
    await h.advanceTo('2026-12-01T00:00:30.000Z');
    expect(a.triggers).toHaveLength(3);
    assertInvariants(h.core);
  });
});

describe('"is it already done?" for job runs (before: true)', () => {
  it('the agent did the side effect and then died: the retry finds the work done (already_done), nothing is dispatched again', async () => {
    const ws = tempDir('gaffer-ws-');
    const report = path.join(ws, 'report.md');
    const h = await startJobsHarness({ start: '2026-11-30T08:59:00.000Z' });
    // Acknowledges, writes its report, and never says so (killed between the side effect and the report).
    const agent = await h.agent('dev', async (t, ag) => {
      await hang(t, ag);
      fs.writeFileSync(report, 'done');
    });
    const jobId = h.createJob({
      name: 'report',
      role: 'dev',
      schedule: DAILY_9,
      runTimeoutS: 300,
      retry: { maxAttempts: 3, firstDelayS: 60 },
      verify: { checks: [{ kind: 'file', name: 'report', path: report, nonEmpty: true }], before: true },
    });
    await h.advanceTo('2026-11-30T09:10:00.000Z');
    await until(() => h.run(jobId, SLOT)?.status === 'success', 'found done');
    const run = h.run(jobId, SLOT)!;
    expect(run).toMatchObject({ status: 'success', disposition: 'already_done', attempt: 1 });
    expect(agent.triggers).toHaveLength(1);
    expect(h.core.verify.latest(`run:${run.id}`)).toMatchObject({ passed: true, before: true, attempt: 1 });
    expect(h.audit('verify.pass').map((e) => e.detail)).toEqual([expect.objectContaining({ check: 'report', before: true })]);
    expect(h.audit('run.succeed').at(-1)!.detail).toMatchObject({ disposition: 'already_done' });
    assertInvariants(h.core);
  });

  it('not done: the retry goes out once the checks failed (not counted as one more failure), and is not checked twice', async () => {
    const ws = tempDir('gaffer-ws-');
    const h = await startJobsHarness({ start: '2026-11-30T08:59:00.000Z' });
    const agent = await h.agent('dev', hang);
    const jobId = h.createJob({
      name: 'report',
      role: 'dev',
      schedule: DAILY_9,
      runTimeoutS: 300,
      retry: { maxAttempts: 3, firstDelayS: 60 },
      verify: { checks: [{ kind: 'file', name: 'report', path: path.join(ws, 'missing.md') }], before: true },
    });
    await h.advanceTo('2026-11-30T09:06:30.000Z');
    await until(() => agent.triggers.length === 2, 'the retry');
    const run = h.run(jobId, SLOT)!;
    expect(run).toMatchObject({ attempt: 2, retryCount: 1 });
    expect(h.audit('verify.fail')).toHaveLength(1);
    assertInvariants(h.core);
  });
});

describe('backfills are verified', () => {
  it("a backfill's success is checked: failing, the slot is not backfilled; passing, it is, with the evidence", async () => {
    const ws = tempDir('gaffer-ws-');
    const report = path.join(ws, 'report.md');
    const h = await startJobsHarness({ start: '2026-11-30T08:59:00.000Z' });
    let first = true;
    const agent = await h.agent('dev', async (t, a) => {
      await a.started(t);
      if (first) {
        first = false;
        await a.result(t, 'failed', 'retryable', 'upstream down');
      } else await a.result(t, 'success');
    });
    const jobId = h.createJob({ name: 'report', role: 'dev', schedule: DAILY_9, retry: { maxAttempts: 1, firstDelayS: 60 }, verify: { checks: [{ kind: 'file', name: 'report', path: report }] } });
    await h.advanceTo('2026-11-30T09:01:00.000Z');
    const runId = h.run(jobId, SLOT)!.id;
    expect(h.run(jobId, SLOT)).toMatchObject({ status: 'failed', disposition: 'failed' });
    // Retried by hand: the agent says success, the report is missing.
    h.core.jobs.retryRun(runId, { reason: 'try again', ...op });
    await until(() => agent.triggers.length === 2, 'the backfill');
    await until(() => h.core.verify.latest(`run:${runId}`) !== undefined, 'checked');
    await h.settle();
    expect(h.core.verify.latest(`run:${runId}`)).toMatchObject({ passed: false, attempt: 2 });
    expect(h.run(jobId, SLOT)).toMatchObject({ status: 'failed', disposition: 'failed' });
    expect(h.core.jobs.getRun(runId).backfills.at(-1)).toMatchObject({ status: 'failed', lastError: expect.stringContaining('verification failed: report') });
    // The report is there now: the next backfill passes its checks, and the slot is backfilled.
    fs.writeFileSync(report, 'ok');
    h.core.jobs.retryRun(runId, { reason: 'again', ...op });
    await until(() => h.run(jobId, SLOT)?.disposition === 'backfilled', 'backfilled');
    expect(h.core.verify.latest(`run:${runId}`)).toMatchObject({ passed: true, attempt: 3 });
    assertInvariants(h.core);
  });
});

describe('answering a held run', () => {
  it("the approved attempt's trigger carries the session the held attempt stored (a restarted agent can resume it)", async () => {
    const h = await startJobsHarness({ start: '2026-11-30T08:59:00.000Z' });
    const agent = await h.agent('dev', async (t, a) => {
      await a.started(t);
      if (t.approval) return void (await a.result(t, 'success'));
      await a.a.request('artifact', { runId: t.runId, kind: 'session', name: 'claude', data: { cli: 'claude', sessionId: 'sess-42' } });
      await a.result(t, 'failed', 'needs_human', 'refund 40 EUR?');
    });
    const jobId = h.createJob({ name: 'refunds', role: 'dev', schedule: DAILY_9 });
    await h.advanceTo('2026-11-30T09:00:30.000Z');
    const run = h.run(jobId, SLOT)!;
    expect(run).toMatchObject({ disposition: 'held' });
    h.core.jobs.approvals.approve(run.id, { note: 'Yes', ...op });
    await until(() => agent.triggers.length === 2, 'the approved attempt');
    expect(agent.triggers[1]!.approval).toMatchObject({ note: 'Yes', session: 'sess-42' });
  });
});
