/**
 * Spend caps end to end (real agents over the socket, manual clock). Daily spend is written with the
 * usage ledger itself (core/logs/usage-ledger.ts, as the agents' `usage` frames do); the per-run
 * caps are driven by real `usage` frames of the agent holding the run.
 */
import { describe, expect, it } from 'vitest';
import { UsageLedger } from '../logs/usage-store';
import { assertInvariants, EVERY_15_MIN, hang, OPERATOR as op, startJobsHarness, until, type JobAgent, type JobsHarness } from '../tests/jobs.testkit';
import { makeTestCore } from '../tests/test-core';
import { TestAgent } from '../tests/ws-agent.testkit';

let h: JobsHarness | undefined;

/** Reports spend as a `usage` frame of some attempt would (the ledger's own write). */
function ledger(core: JobsHarness['core']): (u: { subject: string; role: string; costUsd?: number }) => void {
  const l = new UsageLedger(core.db);
  return (u) => void core.store.write(() => l.add({ subject: u.subject, attempt: 1, role: u.role, jobId: null, instanceId: 'inst', costUsd: u.costUsd ?? 0, at: core.clock.now() }));
}

describe('settings', () => {
  it('caps merge per role, null removes one; the day is counted in the operator’s zone; bad input changes nothing', async () => {
    h = await startJobsHarness({ start: '2026-11-30T08:00:00.000Z' });
    const v = h.core.budgets.put({ globalDailyUsd: 50, perRoleDailyUsd: { dev: 10, ops: 5 }, timezone: 'Asia/Tokyo', reason: 'month end', ...op });
    expect(v).toMatchObject({ zone: 'Asia/Tokyo', day: '2026-11-30', resetsAt: '2026-11-30T15:00:00.000Z', measured: false });
    ledger(h.core)({ subject: 'task:1', role: 'dev', costUsd: 1.25 });
    expect(h.core.budgets.view()).toMatchObject({ measured: true, caps: [{ spentUsd: 1.25 }, { role: 'dev', spentUsd: 1.25 }, { role: 'ops', spentUsd: 0 }] });
    expect(v.caps.map((c) => [c.scope, c.role, c.capUsd, c.spentUsd, c.reached])).toEqual([
      ['global', null, 50, 0, false],
      ['role', 'dev', 10, 0, false],
      ['role', 'ops', 5, 0, false],
    ]);
    const w = h.core.budgets.put({ perRoleDailyUsd: { ops: null, qa: 2 }, ...op });
    expect(w.settings).toEqual({ globalDailyUsd: 50, perRoleDailyUsd: { dev: 10, qa: 2 }, timezone: 'Asia/Tokyo', windows: [] });
    const before = JSON.stringify(h.core.budgets.settings());
    for (const bad of [{ globalDailyUsd: 0 }, { perRoleDailyUsd: { 'no good': 1 } }, { timezone: 'Nowhere/Else' }, { globalDailyUsd: '5' }, { extra: true }]) {
      expect(() => h!.core.budgets.put({ ...bad, ...op })).toThrow(expect.objectContaining({ code: 'bad_request' }));
    }
    expect(JSON.stringify(h.core.budgets.settings())).toBe(before);
    expect(h.audit('budgets.update').map((e) => e.detail.reason ?? null)).toEqual(['month end', null]);
  });
});

describe('daily caps', () => {
  it('a reached global cap stops dispatch (explained: the cap, the spend, the reset) and claim answers no task; the next day it resumes', async () => {
    h = await startJobsHarness({ start: '2026-11-30T20:00:30.000Z' });
    const agent = await h.agent('ops', hang);
    const add = ledger(h.core);
    const jobId = h.createJob({ name: 'summarise', role: 'ops', schedule: EVERY_15_MIN });
    h.core.budgets.put({ globalDailyUsd: 20, timezone: 'UTC', ...op });
    add({ subject: 'task:1', role: 'dev', costUsd: 20.5 });
    const token = h.core.tokens.create({ name: 'dev', role: 'dev', actor: 'test' }).token;
    const dev = await TestAgent.hello(h.url, token, 'dev', 'dev-1');
    h.core.tasks.create({ title: 'write tests', role: 'dev' }, { actor: 'test' });
    expect((await dev.request('claim', {})).result).toEqual({ task: null }); // P2: no task

    await h.advanceTo('2026-11-30T20:15:30.000Z');
    expect(agent.triggers).toEqual([]);
    const run = h.run(jobId, '2026-11-30T20:15')!;
    expect(run.status).toBe('pending');
    const exec = h.core.jobs.getRun(run.id).checks.find((c) => c.name === 'execution')!;
    expect(exec.reason).toBe('the global daily spend cap is reached: $20.50 spent of $20.00 on 2026-11-30 (UTC); it resets at midnight, 2026-12-01T00:00:00.000Z');
    expect(h.core.jobs.explain(jobId, '2026-11-30T20:15:30.000Z').layers.execution.items.find((i) => i.name === 'budget')).toMatchObject({ verdict: 'not_ready' });

    // One inbox item for the cap today, however often it is looked at.
    await h.advance(5 * 60_000);
    const items = h.core.inbox.list({ kind: 'budget' }).items;
    expect(items).toEqual([expect.objectContaining({ subject: 'budget:global', count: 1, title: 'Global daily spend cap reached: $20.50 of $20.00' })]);
    expect(h.core.budgets.view().caps[0]).toMatchObject({ spentUsd: 20.5, reached: true });

    await h.advanceTo('2026-12-01T00:00:31.000Z');
    await until(() => agent.triggers.length > 0, 'dispatched after midnight');
    expect(agent.triggers[0]!.slot).toBe('2026-12-01T00:00');
    expect((await dev.request('claim', {})).result.task).toMatchObject({ title: 'write tests' });
    dev.close();
    assertInvariants(h.core);
  });

  it('a role cap stops only that role', async () => {
    h = await startJobsHarness({ start: '2026-11-30T08:00:00.000Z' });
    const add = ledger(h.core);
    h.core.budgets.put({ perRoleDailyUsd: { dev: 3 }, timezone: 'UTC', ...op });
    add({ subject: 'task:1', role: 'dev', costUsd: 3 });
    add({ subject: 'task:2', role: 'ops', costUsd: 100 });
    expect(h.core.budgets.roleBlocked('dev')).toBe(true);
    expect(h.core.budgets.roleBlocked('ops')).toBe(false);
    expect(h.core.budgets.verdict('ops', h.clock.now())).toMatchObject({ ok: true, reason: 'no daily spend cap covers this role' });
    // Spend of yesterday does not count.
    h.clock.advance(16 * 3600_000);
    expect(h.core.budgets.roleBlocked('dev')).toBe(false);
  });
});

describe('a per-run cap', () => {
  async function runningJob(): Promise<{ agent: JobAgent; jobId: string; runId: string; cancelled: unknown[]; usage: (f: Record<string, unknown>) => Promise<unknown> }> {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    const agent = await h.agent('ops', hang);
    const cancelled: unknown[] = [];
    agent.a.ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      if (m.type === 'run_cancelled') cancelled.push(m);
    });
    const jobId = h.createJob({ name: 'agentic', role: 'ops', schedule: EVERY_15_MIN, budget: { maxCostUsdPerRun: 2, maxTokensPerRun: 100_000 } });
    await h.advanceTo('2026-11-30T00:15:10.000Z');
    const run = await until(() => h!.runs(jobId).find((r) => r.status === 'running'), 'running');
    const usage = (f: Record<string, unknown>) => agent.a.request('usage', { runId: run.id, ...f });
    return { agent, jobId, runId: run.id, cancelled, usage };
  }

  it('a usage frame passing it cancels the attempt at once (run_cancelled: budget), holds the run, raises a budget item; the late result is refused', async () => {
    const { agent, runId, cancelled, usage } = await runningJob();
    expect(await usage({ costUsd: 1.5, model: 'm' })).toMatchObject({ ok: true });
    expect(cancelled).toEqual([]); // within the cap
    await usage({ costUsd: 0.75 });
    await until(() => cancelled.length === 1, 'run_cancelled');
    expect(cancelled[0]).toEqual({ type: 'run_cancelled', runId, reason: 'budget' });
    const run = h!.core.jobs.getRun(runId).run;
    expect(run).toMatchObject({ status: 'failed', disposition: 'held', held: true, errorClass: 'budget' });
    expect(run.lastError).toBe('spend cap passed: $2.25 spent, over its cap of $2.00 per run; the attempt was stopped and the run is held for you');
    const items = h!.core.inbox.list().items;
    expect(items).toEqual([expect.objectContaining({ kind: 'budget', severity: 'critical', subject: `run:${runId}`, title: 'agentic 2026-11-30T00:15 stopped: cost cap per run passed' })]);
    const late = await agent.result(agent.triggers[0]!, 'success');
    expect(late).toMatchObject({ ok: false, error: { code: 'not_holder' } });
    expect(h!.core.budgets.enforceRunCaps()).toBe(0); // nothing in flight any more
    assertInvariants(h!.core);
  });

  it('tokens count too; an approval runs it again with a fresh cap', async () => {
    const { agent, runId, usage } = await runningJob();
    await usage({ inputTokens: 60_000, outputTokens: 40_001 });
    await until(() => h!.core.jobs.getRun(runId).run.disposition === 'held', 'held');
    h!.core.jobs.approvals.approve(runId, { note: 'worth it', ...op });
    await until(() => agent.triggers.length === 2, 'dispatched again');
    expect(agent.triggers[1]).toMatchObject({ runId, approval: { decision: 'approved', note: 'worth it' } });
    expect(h!.core.inbox.counts().open).toBe(0);
    expect(h!.core.budgets.enforceRunCaps()).toBe(0); // the new attempt has spent nothing yet
  });
});

describe('a task’s cap per attempt', () => {
  it('a usage frame passing it takes the lock away at once (lock_lost: budget), blocks the task, raises one budget item (no needs-human one); unblocked, the next attempt has a fresh cap', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    const token = h.core.tokens.create({ name: 'dev', role: 'dev', actor: 'test' }).token;
    const a = await TestAgent.hello(h.url, token, 'dev', 'dev-1');
    // Created over the wire, as an agent splitting work would.
    const created = await a.request('create_task', { title: 'refactor billing', role: 'dev', budget: { maxCostUsdPerRun: 1 } });
    expect(created.ok).toBe(true);
    const task = created.result.task as { id: number };
    const uncapped = h.core.tasks.create({ title: 'write docs', role: 'dev' }, { actor: 'test' }).task;
    const claim = await a.request('claim', {});
    expect(claim.result.task.id).toBe(task.id);
    const fence = claim.result.lock.fence;
    expect((await a.request('usage', { taskId: task.id, fence, costUsd: 0.6 })).ok).toBe(true);
    expect(a.pushes.filter((p) => p.type === 'lock_lost')).toEqual([]); // within the cap
    await a.request('usage', { taskId: task.id, fence, costUsd: 0.5 });
    expect(await a.nextPush('lock_lost')).toEqual({ type: 'lock_lost', taskId: task.id, fence, reason: 'budget' });
    const blocked = h.core.tasks.get(task.id);
    expect(blocked).toMatchObject({ status: 'blocked', lock: null, note: 'spend cap passed: $1.10 spent, over its cap of $1.00 per run; the lock was taken away and the task is blocked for you' });
    const late = await a.request('report', { taskId: task.id, fence, status: 'done' });
    expect(late).toMatchObject({ ok: false, error: { code: 'not_holder' } });
    await h.settle();
    expect(h.core.inbox.list().items).toEqual([expect.objectContaining({ kind: 'budget', subject: `task:${task.id}`, title: 'Task refactor billing stopped: cost cap per attempt passed', count: 1 })]);
    // Once per attempt: the sweep and a restart's reconcile find nothing more to take or raise.
    expect(h.core.budgets.enforceTaskCaps()).toBe(0);
    h.core.attention.sources.reconcile();
    expect(h.core.inbox.counts().open).toBe(1);

    // A task without a budget is never taken, however much it spends.
    const other = await a.request('claim', {});
    expect(other.result.task.id).toBe(uncapped.id);
    await a.request('usage', { taskId: uncapped.id, fence: other.result.lock.fence, costUsd: 500 });
    expect((await a.request('report', { taskId: uncapped.id, fence: other.result.lock.fence, status: 'done' })).ok).toBe(true);

    // Unblocking is the operator's decision: the item is acknowledged, and the next attempt starts at zero.
    h.core.tasks.unblock({ taskId: task.id, reason: 'worth it', actor: 'operator:test' });
    expect(h.core.inbox.counts().open).toBe(0);
    const again = await a.request('claim', {});
    expect(again.result.task).toMatchObject({ id: task.id, attempt: 2 });
    await a.request('usage', { taskId: task.id, fence: again.result.lock.fence, costUsd: 0.9 });
    expect((await a.request('report', { taskId: task.id, fence: again.result.lock.fence, status: 'done' })).ok).toBe(true);
    expect(h.core.auditQuery.query({ subject: `task:${task.id}`, type: 'lock.budget' }).items).toHaveLength(1);
    a.close();
    assertInvariants(h!.core);
  });

  it('a budget on a task is validated: a bad cap is refused naming the field, and nothing is created', () => {
    const core = makeTestCore();
    try {
      expect(() => core.tasks.create({ title: 'x', role: 'dev', budget: { maxCostUsdPerRun: -1 } }, { actor: 'test' })).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringContaining('budget.maxCostUsdPerRun') }));
      expect(core.tasks.list().items).toEqual([]);
    } finally {
      core.close();
    }
  });
});

/**
 * Issue 25, item 9: usage and the final report written together. The usage frame comes first, so
 * it takes effect first (as it would a round trip earlier): a cap it passes takes the work away
 * before the report is read, and the report is refused like any late one (PROTOCOL §8: past the
 * cap the work is stopped and held for the operator, never counted as done).
 */
describe('usage pipelined with the final report', () => {
  it('a task: the usage passing its cap blocks it, raises the item and counts today; the report behind it is not_holder', async () => {
    h = await startJobsHarness({ start: '2026-11-30T08:00:00.000Z' });
    h.core.budgets.put({ perRoleDailyUsd: { dev: 100 }, timezone: 'UTC', ...op });
    const token = h.core.tokens.create({ name: 'dev', role: 'dev', actor: 'test' }).token;
    const a = await TestAgent.hello(h.url, token, 'dev', 'dev-1');
    const task = h.core.tasks.create({ title: 'refactor billing', role: 'dev', budget: { maxCostUsdPerRun: 1 } }, { actor: 'test' }).task;
    const claim = await a.request('claim', {});
    const fence = claim.result.lock.fence;
    const [usage, report] = await a.together([
      ['usage', { taskId: task.id, fence, costUsd: 5 }],
      ['report', { taskId: task.id, fence, status: 'done', note: 'all green' }],
    ]);
    expect(usage).toMatchObject({ ok: true, result: { usage: { costUsd: 5 } } });
    expect(report).toMatchObject({ ok: false, error: { code: 'not_holder' } });
    expect(await a.nextPush('lock_lost')).toEqual({ type: 'lock_lost', taskId: task.id, fence, reason: 'budget' });
    expect(h.core.tasks.get(task.id)).toMatchObject({ status: 'blocked', lock: null, note: expect.stringContaining('$5.00 spent, over its cap of $1.00') });
    await h.settle();
    expect(h.core.inbox.list({ kind: 'budget' }).items).toEqual([expect.objectContaining({ subject: `task:${task.id}`, count: 1 })]);
    expect(h.core.budgets.enforceTaskCaps()).toBe(0); // the attempt is marked stopped
    expect(h.core.budgets.view().caps).toEqual([expect.objectContaining({ role: 'dev', spentUsd: 5 })]);
    a.close();
    assertInvariants(h.core);
  });

  it('a job run: the usage passing its cap holds it (run_cancelled: budget) and raises the item; the success behind it is not_holder', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    const agent = await h.agent('ops', hang);
    const jobId = h.createJob({ name: 'agentic', role: 'ops', schedule: EVERY_15_MIN, budget: { maxCostUsdPerRun: 1 } });
    await h.advanceTo('2026-11-30T00:15:10.000Z');
    const run = await until(() => h!.runs(jobId).find((r) => r.status === 'running'), 'running');
    const [usage, result] = await agent.a.together([
      ['usage', { runId: run.id, costUsd: 5 }],
      ['run_result', { runId: run.id, outcome: 'success' }],
    ]);
    expect(usage).toMatchObject({ ok: true });
    expect(result).toMatchObject({ ok: false, error: { code: 'not_holder' } });
    expect(await agent.a.nextPush('run_cancelled')).toEqual({ type: 'run_cancelled', runId: run.id, reason: 'budget' });
    expect(h.core.jobs.getRun(run.id).run).toMatchObject({ status: 'failed', disposition: 'held', errorClass: 'budget' });
    await h.settle();
    expect(h.core.inbox.list({ kind: 'budget' }).items).toEqual([expect.objectContaining({ subject: `run:${run.id}`, count: 1 })]);
    expect(h.core.logs.usageSummary('role', Date.parse('2026-11-30T00:00:00Z'), Date.parse('2026-12-01T00:00:00Z'))).toEqual([expect.objectContaining({ key: 'ops', costUsd: 5 })]);
    assertInvariants(h.core);
  });
});

/**
 * Issue 25, item 10: the usage that reaches a daily cap gates the very next claim and dispatch
 * (the cached verdict is brought up to date in the usage's own transaction). The manual clock
 * does not move between the frames here, so the cache is as fresh as it can be.
 */
describe('the usage that reaches a daily cap', () => {
  async function devAtCap(): Promise<{ a: TestAgent; first: number; fence: number }> {
    h = await startJobsHarness({ start: '2026-11-30T08:14:59.500Z' });
    h.core.budgets.put({ perRoleDailyUsd: { dev: 1 }, timezone: 'UTC', ...op });
    const token = h.core.tokens.create({ name: 'dev', role: 'dev', actor: 'test' }).token;
    const a = await TestAgent.hello(h.url, token, 'dev', 'dev-1');
    const first = h.core.tasks.create({ title: 'one', role: 'dev' }, { actor: 'test' }).task.id;
    h.core.tasks.create({ title: 'two', role: 'dev' }, { actor: 'test' });
    const claim = await a.request('claim', {}); // the verdict "within the cap" is cached now
    expect(claim.result.task.id).toBe(first);
    return { a, first, fence: claim.result.lock.fence };
  }

  it('answers report + claimNext right after it with no task, and a plain claim too', async () => {
    const { a, first, fence } = await devAtCap();
    expect((await a.request('usage', { taskId: first, fence, costUsd: 0.4 })).ok).toBe(true);
    expect((await a.request('usage', { taskId: first, fence, costUsd: 0.6 })).ok).toBe(true); // $1.00 of $1.00: reached
    const report = await a.request('report', { taskId: first, fence, status: 'done', claimNext: true });
    expect(report).toMatchObject({ ok: true, result: { task: { status: 'done' }, next: { task: null } } });
    expect((await a.request('claim', {})).result).toEqual({ task: null });
    await h!.settle();
    expect(h!.core.inbox.list({ kind: 'budget' }).items).toEqual([expect.objectContaining({ subject: 'budget:role:dev' })]);
    a.close();
  });

  it('in the same write as report + claimNext: no task either', async () => {
    const { a, first, fence } = await devAtCap();
    const [, report] = await a.together([
      ['usage', { taskId: first, fence, costUsd: 1 }],
      ['report', { taskId: first, fence, status: 'done', claimNext: true }],
    ]);
    expect(report).toMatchObject({ ok: true, result: { next: { task: null } } });
    a.close();
  });

  it('keeps the role’s job from being dispatched at its next slot', async () => {
    const { a, first, fence } = await devAtCap();
    const agent = await h!.agent('dev', hang);
    const jobId = h!.createJob({ name: 'nightly', role: 'dev', schedule: EVERY_15_MIN });
    expect((await a.request('usage', { taskId: first, fence, costUsd: 1 })).ok).toBe(true);
    await h!.advanceTo('2026-11-30T08:15:00.000Z'); // half a second later: the slot is due
    expect(agent.triggers).toEqual([]);
    const exec = h!.core.jobs.getRun(h!.run(jobId, '2026-11-30T08:15')!.id).checks.find((c) => c.name === 'execution')!;
    expect(exec.reason).toMatch(/^the daily spend cap of role dev is reached: \$1\.00 spent of \$1\.00/);
    a.close();
  });
});
