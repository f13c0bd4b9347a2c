/**
 * Spend while it happens (PROTOCOL §14), through real agent frames on a manual clock: the price
 * table, usage priced from tokens, the final report replacing the estimate exactly once, and a
 * per-attempt cap stopping the work on the estimate.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_PRICES, priceFor } from '../../common/prices';
import { UsageLedger } from '../logs/usage-store';
import { normaliseError } from './loop-breaker';
import { hang, OPERATOR as op, startJobsHarness, until } from '../tests/jobs.testkit';
import { TestAgent } from '../tests/ws-agent.testkit';

async function devAgent(h: Awaited<ReturnType<typeof startJobsHarness>>): Promise<TestAgent> {
  const token = h.core.tokens.create({ name: 'dev', role: 'dev', actor: 'test' }).token;
  return TestAgent.hello(h.url, token, 'dev', 'dev-1');
}

describe('the price table', () => {
  it('ships dated defaults; an exact id wins over the longest prefix; edits replace the table, audited; bad input changes nothing; reset', async () => {
    const h = await startJobsHarness({ start: '2026-11-30T08:00:00.000Z' });
    const v = h.core.prices.view();
    expect(v).toMatchObject({ source: 'defaults', defaultsTakenOn: expect.stringMatching(/^\d{4}-\d\d-\d\d$/) });
    expect(priceFor(DEFAULT_PRICES, 'claude-opus-4-5-20251101')).toEqual(DEFAULT_PRICES['claude-opus-4-5*']);
    expect(priceFor(DEFAULT_PRICES, 'claude-opus-4-1-20250805')).toEqual(DEFAULT_PRICES['claude-opus-4*']);
    expect(priceFor(DEFAULT_PRICES, 'gpt-5-mini-2025-08-07')).toEqual(DEFAULT_PRICES['gpt-5-mini*']);
    expect(priceFor(DEFAULT_PRICES, 'llama-3')).toBeUndefined();
    for (const bad of [{}, { models: { 'bad id!': { inputPerMTok: 1, outputPerMTok: 1 } } }, { models: { m: { inputPerMTok: -1, outputPerMTok: 1 } } }, { models: {}, reset: true }]) {
      expect(() => h.core.prices.put({ ...bad, ...op })).toThrow(expect.objectContaining({ code: 'bad_request' }));
    }
    expect(h.audit('prices.update')).toEqual([]);
    const edited = h.core.prices.put({ models: { 'my-model': { inputPerMTok: 2, outputPerMTok: 4 }, 'my-*': { inputPerMTok: 100, outputPerMTok: 100 } }, reason: 'negotiated', ...op });
    expect(edited).toMatchObject({ source: 'edited', updatedAt: '2026-11-30T08:00:00.000Z' });
    expect(h.core.prices.price('my-model', { inputTokens: 1_000_000, outputTokens: 500_000 })).toBe(4);
    expect(h.core.prices.price('my-other', { inputTokens: 1000 })).toBe(0.1);
    expect(h.core.prices.price('claude-sonnet-4-5', { inputTokens: 1 })).toBeUndefined();
    expect(h.core.prices.put({ reset: true, ...op }).source).toBe('defaults');
    expect(h.audit('prices.update').map((e) => [e.detail.reason ?? null, e.detail.to === 'defaults'])).toEqual([['negotiated', false], [null, true]]);
  });
});

describe('usage priced by Gaffer', () => {
  it('tokens and a model without a cost are priced from the table (cache reads and writes at their rates); a cost given is kept', async () => {
    const h = await startJobsHarness({ start: '2026-11-30T08:00:00.000Z' });
    const a = await devAgent(h);
    const task = h.core.tasks.create({ title: 'priced', role: 'dev' }, { actor: 'test' }).task;
    const { result: c } = await a.request('claim', {});
    const at = { taskId: task.id, fence: c.lock.fence };
    // claude-sonnet-4*: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million.
    const r = await a.request('usage', { ...at, model: 'claude-sonnet-4-5-20250929', inputTokens: 1_000_000, cacheReadTokens: 500_000, cacheWriteTokens: 100_000, outputTokens: 10_000, estimated: true });
    expect(r.result.usage.costUsd).toBeCloseTo(0.4 * 3 + 0.5 * 0.3 + 0.1 * 3.75 + 0.01 * 15, 9);
    const own = await a.request('usage', { ...at, model: 'claude-sonnet-4-5', inputTokens: 10, costUsd: 1 });
    expect(own.result.usage.costUsd).toBeCloseTo(2.875, 9);
    const unknown = await a.request('usage', { ...at, model: 'home-made-llm', inputTokens: 10 });
    expect(unknown.result.usage).toMatchObject({ inputTokens: 1_000_020, costUsd: expect.closeTo(2.875, 9) });
    a.close();
  });

  it('the final report replaces the running estimate, exactly once; the daily cap counts the final figure', async () => {
    const h = await startJobsHarness({ start: '2026-11-30T08:00:00.000Z' });
    h.core.budgets.put({ perRoleDailyUsd: { dev: 100 }, timezone: 'UTC', ...op });
    const a = await devAgent(h);
    const task = h.core.tasks.create({ title: 'final', role: 'dev' }, { actor: 'test' }).task;
    const { result: c } = await a.request('claim', {});
    const at = { taskId: task.id, fence: c.lock.fence };
    await a.request('usage', { ...at, model: 'claude-sonnet-4-5', inputTokens: 100_000, outputTokens: 1000, estimated: true });
    await a.request('usage', { ...at, model: 'claude-sonnet-4-5', inputTokens: 100_000, outputTokens: 1000, estimated: true });
    expect(h.core.logs.usageOf(`task:${task.id}`)).toEqual({ inputTokens: 200_000, outputTokens: 2000, costUsd: expect.closeTo(0.63, 9) });
    const fin = { ...at, model: 'claude-sonnet-4-5', inputTokens: 190_000, outputTokens: 2100, costUsd: 0.5, final: true };
    expect((await a.request('usage', fin)).result.usage).toEqual({ inputTokens: 190_000, outputTokens: 2100, costUsd: 0.5 });
    expect((await a.request('usage', fin)).result.usage).toEqual({ inputTokens: 190_000, outputTokens: 2100, costUsd: 0.5 }); // sent again: nothing added
    expect(h.core.budgets.view().caps).toEqual([expect.objectContaining({ role: 'dev', spentUsd: 0.5 })]);
    expect(h.core.logs.usageSummary('role', Date.parse('2026-11-30T00:00:00Z'), Date.parse('2026-12-01T00:00:00Z'))).toEqual([expect.objectContaining({ key: 'dev', costUsd: 0.5, inputTokens: 190_000 })]);
    a.close();
  });

  it('a per-attempt cap stops the task on the priced estimate, before any final cost', async () => {
    const h = await startJobsHarness({ start: '2026-11-30T08:00:00.000Z' });
    const a = await devAgent(h);
    const task = h.core.tasks.create({ title: 'capped', role: 'dev', budget: { maxCostUsdPerRun: 0.5 } }, { actor: 'test' }).task;
    const { result: c } = await a.request('claim', {});
    const at = { taskId: task.id, fence: c.lock.fence };
    await a.request('usage', { ...at, model: 'claude-sonnet-4-5', inputTokens: 100_000, outputTokens: 1000, estimated: true }); // $0.315
    expect(a.pushes.filter((p) => p.type === 'lock_lost')).toEqual([]);
    await a.request('usage', { ...at, model: 'claude-sonnet-4-5', inputTokens: 100_000, outputTokens: 1000, estimated: true }); // $0.63
    expect(await a.nextPush('lock_lost')).toEqual({ type: 'lock_lost', taskId: task.id, fence: c.lock.fence, reason: 'budget' });
    expect(h.core.tasks.get(task.id)).toMatchObject({ status: 'blocked', note: expect.stringContaining('$0.63 spent, over its cap of $0.50') });
    a.close();
  });
});

describe('approve or unblock with a new cap', () => {
  it('a run held for its cap, approved with a higher one, runs under the new cap, not the job’s; bad caps change nothing', async () => {
    const h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    const agent = await h.agent('ops', hang);
    const jobId = h.createJob({ name: 'agentic', role: 'ops', schedule: { everyS: 900, timezone: 'UTC' }, budget: { maxCostUsdPerRun: 0.02 } });
    await h.advanceTo('2026-11-30T00:15:10.000Z');
    const run = await until(() => h.runs(jobId).find((r) => r.status === 'running'), 'running');
    await agent.a.request('usage', { runId: run.id, costUsd: 0.1 });
    expect(await agent.a.nextPush('run_cancelled')).toMatchObject({ runId: run.id, reason: 'budget' });
    for (const bad of [{ maxCostUsdPerRun: -1 }, { maxTokensPerRun: 1.5 }, { other: 1 }]) {
      expect(() => h.core.jobs.approvals.approve(run.id, { note: 'more', budget: bad, ...op })).toThrow(expect.objectContaining({ code: 'bad_request' }));
    }
    expect(h.core.jobs.getRun(run.id).run.held).toBe(true); // nothing changed
    h.core.jobs.approvals.approve(run.id, { note: 'worth a dollar', budget: { maxCostUsdPerRun: 1 }, ...op });
    await until(() => agent.triggers.length === 2, 'dispatched again');
    await h.settle();
    await agent.a.request('usage', { runId: run.id, costUsd: 0.5 }); // over the job's $0.02, within the new $1
    await h.settle();
    expect(agent.a.pushes.filter((p) => p.type === 'run_cancelled')).toHaveLength(1);
    await agent.a.request('usage', { runId: run.id, costUsd: 0.6 });
    await until(() => agent.a.pushes.filter((p) => p.type === 'run_cancelled').length === 2, 'stopped at the new cap');
    expect(h.audit('run.budget')).toEqual([expect.objectContaining({ subject: `run:${run.id}`, detail: expect.objectContaining({ budget: { maxCostUsdPerRun: 1 } }) })]);
  });

  it('a task blocked by its cap, unblocked with a new cap, is measured against the new one', async () => {
    const h = await startJobsHarness({ start: '2026-11-30T08:00:00.000Z' });
    const a = await devAgent(h);
    const task = h.core.tasks.create({ title: 'capped', role: 'dev', budget: { maxCostUsdPerRun: 0.02 } }, { actor: 'test' }).task;
    let c = (await a.request('claim', {})).result;
    await a.request('usage', { taskId: task.id, fence: c.lock.fence, costUsd: 0.1 });
    await a.nextPush('lock_lost');
    expect(() => h.core.tasks.unblock({ taskId: task.id, reason: 'more', budget: { maxCostUsdPerRun: 0 }, ...op })).toThrow(expect.objectContaining({ code: 'bad_request' }));
    h.core.tasks.unblock({ taskId: task.id, reason: 'worth a dollar', budget: { maxCostUsdPerRun: 1 }, ...op });
    c = (await a.request('claim', {})).result;
    expect(c.task).toMatchObject({ id: task.id, attempt: 2 });
    await a.request('usage', { taskId: task.id, fence: c.lock.fence, costUsd: 0.5 });
    expect((await a.request('report', { taskId: task.id, fence: c.lock.fence, status: 'done' })).ok).toBe(true);
    expect(h.audit('task.budget')).toEqual([expect.objectContaining({ subject: `task:${task.id}` })]);
    a.close();
  });
});

describe('spend windows', () => {
  it('a 5-hour token window for a role: reached, explained with the time it frees, no claim and no dispatch; freed as time passes; one quota item, resolved', async () => {
    const h = await startJobsHarness({ start: '2026-11-30T09:00:00.000Z' });
    for (const bad of [{ windows: [{ scope: 'role', hours: 5, maxTokens: 1 }] }, { windows: [{ scope: 'global', hours: 5 }] }, { windows: [{ scope: 'global', hours: 0, maxTokens: 1 }] }]) {
      expect(() => h.core.budgets.put({ ...bad, ...op })).toThrow(expect.objectContaining({ code: 'bad_request' }));
    }
    h.core.budgets.put({ timezone: 'UTC', windows: [{ scope: 'role', role: 'dev', hours: 5, maxTokens: 2_000_000 }, { scope: 'global', hours: 168, maxCostUsd: 1000 }], ...op });
    const a = await devAgent(h);
    const first = h.core.tasks.create({ title: 'one', role: 'dev' }, { actor: 'test' }).task;
    h.core.tasks.create({ title: 'two', role: 'dev' }, { actor: 'test' });
    const c = (await a.request('claim', {})).result;
    expect(c.task.id).toBe(first.id);
    const at = { taskId: first.id, fence: c.lock.fence };
    await a.request('usage', { ...at, inputTokens: 1_000_000 });
    await h.advance(3600_000); // 10:00
    await a.request('usage', { ...at, inputTokens: 900_000 });
    expect(h.core.budgets.roleBlocked('dev')).toBe(false);
    await h.advance(1800_000); // 10:30
    await a.request('usage', { ...at, inputTokens: 200_000 });
    expect((await a.request('report', { ...at, status: 'done' })).ok).toBe(true);
    expect((await a.request('claim', {})).result).toEqual({ task: null });
    const v = h.core.budgets.verdict('dev', h.clock.now());
    expect(v).toMatchObject({ ok: false, reason: 'the 5-hour window for role dev is used up: 2.1M of 2M tokens; frees at 14:00' });
    expect(h.core.budgets.verdict('ops', h.clock.now()).ok).toBe(true);
    expect(h.core.budgets.view().windows).toEqual([
      expect.objectContaining({ role: 'dev', tokens: 2_100_000, reached: true, freesAt: '2026-11-30T14:00:00.000Z' }),
      expect.objectContaining({ scope: 'global', reached: false, freesAt: null }),
    ]);
    await h.settle();
    expect(h.core.inbox.list({ kind: 'quota' }).items).toEqual([expect.objectContaining({ subject: 'window:role:dev:5h', title: 'The 5-hour window for role dev is used up', state: 'open' })]);

    await h.advance(3.5 * 3600_000 - 1000); // 13:59:59: still used up
    expect(h.core.budgets.roleBlocked('dev')).toBe(true);
    await h.advance(2000); // 14:00:01: the 09:00 spend left the window
    expect(h.core.budgets.roleBlocked('dev')).toBe(false);
    expect((await a.request('claim', {})).result.task).toMatchObject({ title: 'two' });
    h.core.budgets.raiseReached(); // the inbox sweep
    expect(h.core.inbox.list({ kind: 'quota', state: 'all' }).items).toEqual([expect.objectContaining({ state: 'resolved' })]);
    a.close();
  });
});

describe('the loop breaker', () => {
  it('masks digits, ids and times when comparing errors', () => {
    expect(normaliseError('Rate limit: retry in 31 s (request req_8f3a9c2d1e, 2026-11-30T09:00:01Z)')).toBe(normaliseError('rate limit:  retry in 12 s (request req_77aa01bc9f, 2026-12-01T10:11:12.345Z)'));
    expect(normaliseError('Rate limit')).not.toBe(normaliseError('Out of disk'));
  });

  it('a task: the same error three attempts in a row is blocked with a loop_breaker item; three different errors keep retrying', async () => {
    const h = await startJobsHarness({ start: '2026-11-30T08:00:00.000Z' });
    const a = await devAgent(h);
    const same = h.core.tasks.create({ title: 'flaky', role: 'dev', priority: 2 }, { actor: 'test' }).task;
    const varied = h.core.tasks.create({ title: 'varied', role: 'dev', priority: 1 }, { actor: 'test' }).task;
    const attempt = async (id: number, note: string) => {
      const c = (await a.request('claim', {})).result;
      expect(c.task.id).toBe(id);
      return (await a.request('report', { taskId: id, fence: c.lock.fence, status: 'backlog', note })).result.task;
    };
    expect((await attempt(same.id, 'API Error: 429 rate limited, retry in 31 s')).status).toBe('backlog');
    expect((await attempt(same.id, 'API Error: 429 rate limited, retry in 7 s')).status).toBe('backlog');
    const third = await attempt(same.id, 'API Error: 429 rate limited, retry in 55 s');
    expect(third).toMatchObject({ status: 'blocked', note: expect.stringMatching(/^loop breaker: .*retry in 55 s$/) });
    for (const note of ['out of disk', 'git push rejected', 'tests failed: 3']) expect((await attempt(varied.id, note)).status).toBe('backlog');
    expect(h.core.inbox.list({ kind: 'loop_breaker' }).items).toEqual([expect.objectContaining({ subject: `task:${same.id}`, title: 'Task flaky failed 3 times in a row with the same error' })]);
    a.close();
  });
});

describe('the forecast', () => {
  it('a weekday job with a holiday calendar: p50/p90 of its recent runs times the runs of the next 24 h and 30 days', async () => {
    const h = await startJobsHarness({ start: '2026-11-30T12:00:00.000Z' }); // a Monday
    h.core.jobs.createCalendar({ id: 'work', name: 'Work', timezone: 'UTC', workdays: [1, 2, 3, 4, 5], holidays: ['2026-12-24', '2026-12-25', '2026-12-31'], extraWorkdays: [] }, { actor: 'test' });
    const jobId = h.createJob({ name: 'report', role: 'dev', schedule: { cron: '0 9 * * *', timezone: 'UTC' }, calendar: 'work', calendarPolicy: 'skip' });
    const ledger = new UsageLedger(h.core.db);
    h.core.store.write(() => {
      for (let i = 1; i <= 10; i++) ledger.add({ subject: `run:r${i}`, attempt: 1, role: 'dev', jobId, instanceId: 'inst', costUsd: i / 10, at: h.clock.now() - (20 - i) * 3600_000 });
    });
    // Dec 1–30: 22 weekdays, less Christmas Eve and Christmas Day; the next 24 h: Dec 1 09:00.
    expect(h.core.forecasts.job(jobId)).toMatchObject({ perRun: { runs: 10, p50CostUsd: 0.5, p90CostUsd: 0.9 }, next24h: { runs: 1, costUsd: 0.5 }, next30d: { runs: 20, costUsd: 10 }, extrapolated: false });
    h.createJob({ name: 'never-ran', role: 'dev', schedule: { everyS: 3600, timezone: 'UTC' } });
    expect(h.core.forecasts.usage('role').items).toEqual([{ key: 'dev', next24h: { runs: 25, costUsd: 0.5 }, next30d: { runs: 740, costUsd: 10 } }]);
  });
});
