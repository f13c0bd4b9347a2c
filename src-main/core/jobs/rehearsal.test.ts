/**
 * The five rehearsal scenarios of the source (SPEC §8), end to end: a real core on a manual clock,
 * the real agent socket on 127.0.0.1, and agents speaking the protocol over `ws`.
 *   1. normal trigger   2. data delay   3. downstream timeout   4. process restart   5. cross-day backfill
 */
import { describe, expect, it } from 'vitest';
import { assertInvariants, fail, startJobsHarness, succeed, until, type JobsHarness, type Trigger } from '../tests/jobs.testkit';

let h: JobsHarness | undefined;

// 2026-11-30 is a Monday. Asia/Shanghai is UTC+8 all year: 09:00 local = 01:00Z.
const REPORT = {
  name: 'daily-sales-report',
  role: 'reporter',
  schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' },
  window: { start: '09:00', end: '10:00', recheckEveryS: 300 },
  payload: { channel: 'sales' },
};

describe('rehearsal 1: normal trigger', () => {
  it('fires at 09:00 local, pushes one job_trigger with the contracted fields, records the run', async () => {
    h = await startJobsHarness();
    const agent = await h.agent('reporter', succeed(['fetch', 'summarize', 'send']));
    const jobId = h.createJob(REPORT);
    await h.advanceTo('2026-11-30T00:59:59.000Z');
    expect(agent.triggers).toHaveLength(0);
    await h.advanceTo('2026-11-30T01:00:00.000Z');
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'success', 'run success');
    expect(agent.triggers).toHaveLength(1);
    const t = agent.triggers[0]!;
    expect(t).toMatchObject({
      type: 'job_trigger',
      jobId,
      job: 'daily-sales-report',
      slot: '2026-11-30',
      attempt: 1,
      payload: { channel: 'sales' },
      idempotencyKey: 'daily-sales-report:2026-11-30',
      deadline: '2026-11-30T02:00:00.000Z',
      completedSteps: [],
      version: 1,
    });
    expect(t.receivedAt).toBe(Date.parse('2026-11-30T01:00:00.000Z'));
    expect(t.traceId).toMatch(/^[0-9a-f]{16}$/);
    const run = h.run(jobId, '2026-11-30')!;
    expect(run).toMatchObject({ status: 'success', disposition: 'ran', attempt: 1, retryCount: 0, instanceId: agent.instanceId, version: 1, traceId: t.traceId });
    expect(run.triggeredAt).toBe('2026-11-30T01:00:00.000Z');
    expect(h.core.jobs.getRun(run.id).steps.map((s) => s.step)).toEqual(['fetch', 'summarize', 'send']);
    const types = h.audit().filter((e) => e.subject === `run:${run.id}`).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['run.claim', 'run.dispatch', 'trigger.offer', 'run.start', 'run.step', 'run.succeed']));
    // The same static record fires again the next day.
    await h.advanceTo('2026-12-01T01:00:00.000Z');
    await until(() => h!.run(jobId, '2026-12-01')?.status === 'success', 'second day');
    expect(agent.triggers.map((x) => x.slot)).toEqual(['2026-11-30', '2026-12-01']);
    assertInvariants(h.core);
  });
});

describe('rehearsal 2: data delay', () => {
  it('not ready at 09:00, re-checked every 5 minutes, runs at 09:25 when the signal arrives; the evidence shows the checks', async () => {
    h = await startJobsHarness();
    const agent = await h.agent('reporter', succeed());
    const jobId = h.createJob({ ...REPORT, preconditions: [{ kind: 'signal', name: 'data-ready', key: '{yesterday}' }] });
    await h.advanceTo('2026-11-30T01:24:30.000Z');
    expect(agent.triggers).toHaveLength(0);
    const waiting = h.run(jobId, '2026-11-30')!;
    expect(waiting).toMatchObject({ status: 'pending', disposition: 'waiting' });
    const before = h.core.jobs.explain(jobId, '2026-11-30T01:20:00.000Z');
    expect(before.layers.preconditions.verdict).toBe('not_ready');
    expect(before.layers.preconditions.items[0]).toMatchObject({ name: 'signal:data-ready', verdict: 'not_ready', count: 5, firstAt: '2026-11-30T01:00:00.000Z' });
    expect(before.layers.preconditions.items[0]!.evidence).toMatchObject({ signal: 'data-ready', key: '2026-11-29', keyTemplate: '{yesterday}', businessDate: '2026-11-30' });
    // Upstream finishes: the signal for yesterday's data is set at 09:24:30.
    h.core.signals.set({ name: 'data-ready', key: '2026-11-29', actor: 'warehouse' });
    await h.advanceTo('2026-11-30T01:25:00.000Z');
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'success', 'run');
    expect(agent.triggers).toHaveLength(1);
    expect(agent.triggers[0]!.receivedAt).toBe(Date.parse('2026-11-30T01:25:00.000Z'));
    const e = h.core.jobs.explain(jobId, '2026-11-30T01:00:00.000Z');
    expect(e.tense).toBe('past');
    expect(e.run!.triggeredAt).toBe('2026-11-30T01:25:00.000Z');
    expect(e.layers.preconditions.items[0]).toMatchObject({
      verdict: 'ready',
      count: 6,
      firstAt: '2026-11-30T01:00:00.000Z',
      changedAt: '2026-11-30T01:25:00.000Z',
    });
    // The audit keeps the decision history: not ready at 09:00, ready at 09:25 (unchanged re-checks are counted, not logged).
    const verdicts = h.audit('check.verdict').filter((x) => x.detail.name === 'signal:data-ready').map((x) => [new Date(x.at).toISOString(), x.detail.verdict]);
    expect(verdicts).toEqual([
      ['2026-11-30T01:00:00.000Z', 'not_ready'],
      ['2026-11-30T01:25:00.000Z', 'ready'],
    ]);
    expect(e.summary).toMatch(/not_ready|ready/);
    assertInvariants(h.core);
  });
});

describe('rehearsal 3: downstream timeout', () => {
  it('retryable failures retry 5 minutes apart with the attempt counted and completed steps carried, then succeed', async () => {
    h = await startJobsHarness();
    const steps = ['fetch', 'summarize', 'send'];
    let calls = 0;
    const agent = await h.agent('reporter', async (t, a) => {
      calls++;
      await a.started(t);
      // Attempt 1 fetches then times out; attempt 2 summarises then times out; attempt 3 sends.
      const todo = steps.filter((s) => !t.completedSteps.includes(s));
      await a.step(t, todo[0]!);
      if (t.attempt < 3) await a.result(t, 'failed', 'retryable', `LLM API timeout (attempt ${t.attempt})`);
      else {
        for (const s of todo.slice(1)) await a.step(t, s);
        await a.result(t, 'success');
      }
    });
    const jobId = h.createJob(REPORT);
    await h.advanceTo('2026-11-30T01:00:00.000Z');
    await until(() => h!.run(jobId, '2026-11-30')?.retryCount === 1, 'first retry scheduled');
    const r1 = h.run(jobId, '2026-11-30')!;
    expect(r1).toMatchObject({ status: 'running', disposition: 'retry_scheduled', nextAttemptAt: '2026-11-30T01:05:00.000Z', errorClass: 'retryable', lastError: 'LLM API timeout (attempt 1)' });
    await h.advanceTo('2026-11-30T01:10:00.000Z');
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'success', 'success');
    expect(calls).toBe(3);
    expect(agent.triggers.map((t) => [t.attempt, t.receivedAt, t.completedSteps])).toEqual([
      [1, Date.parse('2026-11-30T01:00:00.000Z'), []],
      [2, Date.parse('2026-11-30T01:05:00.000Z'), ['fetch']],
      [3, Date.parse('2026-11-30T01:10:00.000Z'), ['fetch', 'summarize']],
    ]);
    // One run, one idempotency key across attempts.
    expect(new Set(agent.triggers.map((t) => t.runId)).size).toBe(1);
    expect(new Set(agent.triggers.map((t) => t.idempotencyKey))).toEqual(new Set(['daily-sales-report:2026-11-30']));
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'success', attempt: 3, retryCount: 2, maxRetry: 2 });
    // Retries were status-neutral: run.retry events, never a status flip back.
    const run = h.run(jobId, '2026-11-30')!;
    const edges = h.audit().filter((e) => e.subject === `run:${run.id}` && e.detail.to !== undefined).map((e) => `${e.detail.from}->${e.detail.to}`);
    expect(edges).toEqual(['null->pending', 'pending->running', 'running->success']);
    expect(h.audit('run.retry')).toHaveLength(2);
    assertInvariants(h.core);
  });

  it('exhausted retries end failed (not a status flip) and alert; a fatal error is held without retry; needs_human notifies at once', async () => {
    h = await startJobsHarness();
    const agent = await h.agent('reporter', fail('retryable'));
    const alerts: string[] = [];
    const humans: string[] = [];
    h.core.events.on('run.alert', (e) => alerts.push(`${e.run.slot}:${e.kind}`));
    h.core.events.on('run.needs_human', (e) => humans.push(`${e.run.job}:${e.run.slot}`));
    const a = h.createJob({ ...REPORT, name: 'a', retry: { maxAttempts: 2, firstDelayS: 300 } });
    await h.advanceTo('2026-11-30T01:05:00.000Z');
    await until(() => h!.run(a, '2026-11-30')?.status === 'failed', 'failed');
    expect(h.run(a, '2026-11-30')).toMatchObject({ status: 'failed', disposition: 'failed', attempt: 2, retryCount: 1, errorClass: 'retryable' });
    expect(alerts).toContain('2026-11-30:failed');

    agent.behavior = fail('fatal', 'validation failed: totals do not add up');
    const b = h.createJob({ ...REPORT, name: 'b' });
    await h.advanceTo('2026-12-01T01:00:00.000Z');
    await until(() => h!.run(b, '2026-12-01')?.status === 'failed', 'fatal');
    expect(h.run(b, '2026-12-01')).toMatchObject({ disposition: 'held', held: true, errorClass: 'fatal', attempt: 1 });
    expect(h.core.jobs.listBackfills({ job: b }).items).toMatchObject([{ status: 'held', reason: 'fatal', slot: '2026-12-01' }]);

    agent.behavior = fail('needs_human', 'refund above limit');
    await h.advanceTo('2026-12-02T01:00:00.000Z');
    await until(() => humans.length > 0, 'needs_human');
    expect(humans).toEqual(expect.arrayContaining(['b:2026-12-02']));
    expect(h.run(b, '2026-12-02')).toMatchObject({ status: 'failed', disposition: 'held', errorClass: 'needs_human' });
    await h.advance(3600_000);
    // Never retried automatically.
    expect(agent.triggers.filter((t) => t.jobId === b).map((t) => t.slot)).toEqual(['2026-12-01', '2026-12-02']);
    assertInvariants(h.core);
  });
});

describe('rehearsal 4: process restart mid-run', () => {
  it('the core restarts on the same database; the run is lost, retried with its completed steps, and completes once', async () => {
    h = await startJobsHarness();
    const first = await h.agent('reporter', async (t, a) => {
      await a.started(t);
      await a.step(t, 'fetch');
      // …and then Gaffer goes away before the result.
    });
    const jobId = h.createJob(REPORT);
    await h.advanceTo('2026-11-30T01:00:00.000Z');
    await until(() => h!.core.jobs.getRun(h!.run(jobId, '2026-11-30')!.id).steps.length === 1, 'step recorded');
    const runId = h.run(jobId, '2026-11-30')!.id;
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'running', instanceId: first.instanceId });
    const { clock, dir } = h;
    await h.stop();
    clock.advance(120_000); // two minutes of downtime

    const h2 = await startJobsHarness({ clock, dir });
    const triggers: Trigger[] = [];
    const second = await h2.agent('reporter', async (t, a) => {
      triggers.push(t);
      await a.started(t);
      for (const s of ['fetch', 'summarize', 'send']) if (!t.completedSteps.includes(s)) await a.step(t, s);
      await a.result(t, 'success');
    });
    // The old instance had the reconnect grace to come back; it did not: the attempt is lost.
    await h2.advance(11_000);
    await until(() => h2.run(jobId, '2026-11-30')?.retryCount === 1, 'lost → retry');
    expect(h2.run(jobId, '2026-11-30')).toMatchObject({ status: 'running', errorClass: 'lost', disposition: 'retry_scheduled' });
    await h2.advanceTo(Date.parse(h2.run(jobId, '2026-11-30')!.nextAttemptAt!));
    await until(() => h2.run(jobId, '2026-11-30')?.status === 'success', 'success after restart');
    expect(triggers).toHaveLength(1);
    expect(triggers[0]).toMatchObject({ runId, attempt: 2, completedSteps: ['fetch'], idempotencyKey: 'daily-sales-report:2026-11-30' });
    expect(h2.core.jobs.getRun(runId).steps.map((s) => [s.step, s.attempt])).toEqual([
      ['fetch', 1],
      ['summarize', 2],
      ['send', 2],
    ]);
    expect(h2.runs(jobId).filter((r) => r.slot === '2026-11-30')).toHaveLength(1);
    expect(second.triggers).toHaveLength(1);
    assertInvariants(h2.core);
  });

  it('a trigger that was out (not acknowledged) when the process died is offered again after restart, same attempt', async () => {
    h = await startJobsHarness();
    await h.agent('reporter', () => {}); // never acknowledges
    const jobId = h.createJob(REPORT);
    await h.advanceTo('2026-11-30T01:00:00.000Z');
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'pending', disposition: 'dispatched', attempt: 1 });
    const { clock, dir } = h;
    await h.stop();
    const h2 = await startJobsHarness({ clock, dir });
    const agent = await h2.agent('reporter', succeed());
    await h2.advance(1000);
    await until(() => h2.run(jobId, '2026-11-30')?.status === 'success', 'redelivered');
    expect(agent.triggers.map((t) => t.attempt)).toEqual([1]);
    assertInvariants(h2.core);
  });
});

describe('rehearsal 5: cross-day backfill', () => {
  it('yesterday failed; at today\'s window yesterday runs first (same slot, key and steps), then today', async () => {
    h = await startJobsHarness();
    const order: string[] = [];
    const agent = await h.agent('reporter', async (t, a) => {
      order.push(`${t.slot}#${t.attempt}${t.trigger === 'backfill' ? ' backfill' : ''}`);
      await a.started(t);
      if (t.slot === '2026-11-30' && t.trigger !== 'backfill') {
        if (!t.completedSteps.includes('fetch')) await a.step(t, 'fetch');
        await a.result(t, 'failed', 'retryable', 'warehouse API timeout');
        return;
      }
      for (const s of ['fetch', 'summarize', 'send']) if (!t.completedSteps.includes(s)) await a.step(t, s);
      await a.result(t, 'success');
    });
    const jobId = h.createJob({
      ...REPORT,
      missedWindow: 'run_now',
      toleranceS: 1800,
      retry: { maxAttempts: 3, firstDelayS: 300 },
      preconditions: [{ kind: 'signal', name: 'data-ready', key: '{yesterday}' }],
    });
    h.core.signals.set({ name: 'data-ready', key: '2026-11-29', actor: 'warehouse' });
    await h.advanceTo('2026-11-30T01:10:00.000Z');
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'failed', 'yesterday failed');
    const y = h.run(jobId, '2026-11-30')!;
    expect(y).toMatchObject({ status: 'failed', disposition: 'failed', attempt: 3 });
    expect(h.core.jobs.listBackfills({ job: jobId }).items).toMatchObject([{ slot: '2026-11-30', status: 'queued', reason: 'failed' }]);

    h.core.signals.set({ name: 'data-ready', key: '2026-11-30', actor: 'warehouse' });
    await h.advanceTo('2026-12-01T01:00:00.000Z');
    await until(() => h!.run(jobId, '2026-12-01')?.status === 'success', 'today after yesterday');
    expect(order).toEqual(['2026-11-30#1', '2026-11-30#2', '2026-11-30#3', '2026-11-30#4 backfill', '2026-12-01#1']);
    const bf = agent.triggers.find((t) => t.trigger === 'backfill')!;
    expect(bf).toMatchObject({ runId: y.id, slot: '2026-11-30', idempotencyKey: 'daily-sales-report:2026-11-30', completedSteps: ['fetch'], attempt: 4 });
    // The state machine stayed pure: the original run is still failed, its disposition says backfilled.
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'failed', disposition: 'backfilled' });
    expect(h.core.jobs.listBackfills({ job: jobId }).items).toMatchObject([{ status: 'done', attempts: 1 }]);
    const ledger = h.core.jobs.ledger(jobId, { from: '2026-11-30T00:00:00.000Z', to: '2026-12-02T00:00:00.000Z' });
    expect(ledger.items.map((e) => [e.slot, e.status, e.disposition])).toEqual([
      ['2026-11-30', 'failed', 'backfilled'],
      ['2026-12-01', 'success', 'ran'],
    ]);
    assertInvariants(h.core);
  });
});

