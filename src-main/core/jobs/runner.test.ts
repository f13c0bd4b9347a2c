/**
 * Runner policies end to end (real agents over the socket, manual clock): exactly-once delivery with
 * many instances, sleep/wake without a storm, overlap, pause and kill switch, quotas, maintenance.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../common/clock';
import { silentLogger } from '../../common/logger';
import { createCore } from '../create-core';
import { tempDir } from '../tests/test-core';
import { pulseMs } from '../time/gap-detector';
import { assertInvariants, BASE_CONFIG, hang, ignore, startJobsHarness, succeed, until, type JobsHarness, type Trigger } from '../tests/jobs.testkit';

let h: JobsHarness | undefined;

const EVERY_5_MIN = { everyS: 300, timezone: 'UTC' };

describe('exactly one instance per slot', () => {
  it('ten agents of one role online: each slot triggers exactly one of them', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    const fleet = [];
    for (let i = 0; i < 10; i++) fleet.push(await h.agent('ops', succeed(), `ops-${i}`));
    const jobId = h.createJob({ name: 'cache-warm', role: 'ops', schedule: EVERY_5_MIN });
    await h.advanceTo('2026-11-30T01:00:00.000Z');
    await until(() => h!.runs(jobId).filter((r) => r.status === 'success').length === 12, '12 slots');
    const all: Trigger[] = fleet.flatMap((a) => a.triggers);
    expect(all).toHaveLength(12);
    const bySlot = new Map<string, number>();
    for (const t of all) bySlot.set(t.slot, (bySlot.get(t.slot) ?? 0) + 1);
    expect([...bySlot.values()].every((n) => n === 1)).toBe(true);
    expect(new Set(all.map((t) => t.runId)).size).toBe(12);
    // Least loaded: the work is spread over the fleet, not piled on one instance.
    expect(fleet.filter((a) => a.triggers.length > 0).length).toBeGreaterThanOrEqual(10);
    assertInvariants(h.core);
  });
});

describe('sleep / wake: an 8-hour gap with a job every 5 minutes', () => {
  async function sleepAndWake(spec: Record<string, unknown>) {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    const agent = await h.agent('ops', succeed());
    const jobId = h.createJob({ name: 'warm', role: 'ops', schedule: EVERY_5_MIN, ...spec });
    await h.advanceTo('2026-11-30T00:30:00.000Z');
    await until(() => h!.run(jobId, '2026-11-30T00:30')?.status === 'success', 'before the sleep');
    const before = agent.triggers.length;
    // The laptop sleeps: the wall clock jumps 8 hours, no timer runs meanwhile.
    h.clock.jump(8 * 3600_000);
    const wokeAt = h.clock.now();
    await h.advance(60_000);
    await h.settle();
    const burst = agent.triggers.slice(before).filter((t) => t.receivedAt <= wokeAt + 60_000);
    const runs = h.runs(jobId);
    const gap = runs.filter((r) => r.slot > '2026-11-30T00:30' && r.slot <= '2026-11-30T08:30');
    return { jobId, agent, burst, gap, runs, wokeAt };
  }

  it('skip_and_alert: one decision per missed slot (skipped + alert), only the current slot runs', async () => {
    const alerts: string[] = [];
    const { jobId, burst, gap } = await sleepAndWake({ missedWindow: 'skip_and_alert', retry: { maxAttempts: 1 } });
    h!.core.events.on('run.alert', (e) => alerts.push(e.run.slot));
    expect(gap).toHaveLength(96); // 00:35 … 08:30: every slot has exactly one row
    const missed = gap.filter((r) => r.disposition === 'missed');
    expect(missed).toHaveLength(95);
    expect(missed.every((r) => r.status === 'skipped')).toBe(true);
    expect(h!.run(jobId, '2026-11-30T08:30')).toMatchObject({ status: 'success' });
    expect(burst.map((t) => t.slot)).toEqual(['2026-11-30T08:30']);
    expect(h!.audit('run.alert').filter((e) => e.detail.kind === 'missed')).toHaveLength(95);
    expect(h!.core.jobs.listBackfills({ job: jobId }).items).toHaveLength(0);
    // One decision per slot: exactly one claim per slot in the audit.
    const claims = h!.audit('run.claim').map((e) => e.detail.slot as string);
    expect(new Set(claims).size).toBe(claims.length);
    assertInvariants(h!.core);
    void alerts;
  });

  it('fold_into_next: the missed slots are folded into the next run, which covers them oldest first', async () => {
    const { jobId, burst, gap } = await sleepAndWake({ missedWindow: 'fold_into_next' });
    expect(burst).toHaveLength(1);
    const t = burst[0]!;
    expect(t.slot).toBe('2026-11-30T08:30');
    expect(t.covers).toHaveLength(95);
    expect(t.covers![0]).toBe('2026-11-30T00:35');
    expect(t.covers![94]).toBe('2026-11-30T08:25');
    await until(() => h!.run(jobId, '2026-11-30T08:30')?.status === 'success', 'covering run');
    const folded = h!.runs(jobId).filter((r) => r.slot > '2026-11-30T00:30' && r.slot < '2026-11-30T08:30');
    expect(folded).toHaveLength(95);
    expect(folded.every((r) => r.status === 'skipped' && r.disposition === 'backfilled' && r.coveredBy === h!.run(jobId, '2026-11-30T08:30')!.id)).toBe(true);
    expect(gap).toHaveLength(96);
    assertInvariants(h!.core);
  });

  it('run_now: the slot within tolerance runs now, the rest go to the backfill queue and drain at most 3 per tick', async () => {
    const { jobId, burst, agent, wokeAt } = await sleepAndWake({ missedWindow: 'run_now', toleranceS: 300 });
    // At wake: the late slot (within tolerance) + at most the cap of backfills + today's slot.
    expect(burst.length).toBeLessThanOrEqual(3 + 2);
    expect(burst.filter((t) => t.trigger === 'backfill').map((t) => t.slot)).toEqual(['2026-11-30T00:35', '2026-11-30T00:40', '2026-11-30T00:45']);
    expect(burst.filter((t) => t.trigger !== 'backfill').map((t) => t.slot)).toEqual(['2026-11-30T08:25', '2026-11-30T08:30']);
    const queued = () => h!.core.jobs.listBackfills({ job: jobId, status: 'queued', limit: 1000 }).items.length;
    expect(queued()).toBe(94 - 3);
    // The next tick (a new slot opening) dispatches the next three, oldest first — no storm.
    const n = agent.triggers.length;
    await h!.advanceTo(wokeAt + 5 * 60_000);
    const next = agent.triggers.slice(n);
    expect(next.filter((t) => t.trigger === 'backfill').map((t) => t.slot)).toEqual(['2026-11-30T00:50', '2026-11-30T00:55', '2026-11-30T01:00']);
    expect(queued()).toBe(94 - 6);
    // Per tick at most cap + 1 dispatches from here on.
    const perTick = new Map<number, number>();
    const m = agent.triggers.length;
    await h!.advanceTo(wokeAt + 60 * 60_000);
    for (const t of agent.triggers.slice(m)) perTick.set(t.receivedAt, (perTick.get(t.receivedAt) ?? 0) + 1);
    expect(Math.max(...perTick.values())).toBeLessThanOrEqual(4);
    // No slot ever ran twice.
    const slots = agent.triggers.map((t) => t.slot);
    expect(new Set(slots).size).toBe(slots.length);
    assertInvariants(h!.core);
  });

  it('the downtime simulation predicts the same decisions', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    const jobId = h.createJob({ name: 'warm', role: 'ops', schedule: EVERY_5_MIN, missedWindow: 'run_now', toleranceS: 300 });
    const sim = h.core.jobs.simulateDowntime(jobId, '2026-11-30T00:30:01.000Z', '2026-11-30T08:31:00.000Z');
    const by = (d: string) => sim.items.filter((i) => i.decision === d);
    expect(by('runs_late').map((i) => i.slot)).toEqual(['2026-11-30T08:25', '2026-11-30T08:30']);
    expect(by('backfill_queued')).toHaveLength(94);
    expect(by('backfill_queued').slice(0, 4).map((i) => i.backfillAt)).toEqual(['2026-11-30T08:31:00.000Z', '2026-11-30T08:31:00.000Z', '2026-11-30T08:31:00.000Z', '2026-11-30T08:35:00.000Z']);
    expect(sim.summary.dispatchesAtRestart).toBe(5);
    const fold = h.core.jobs.simulateDowntime(h.createJob({ name: 'warm2', role: 'ops', schedule: EVERY_5_MIN, missedWindow: 'fold_into_next' }), '2026-11-30T00:30:01.000Z', '2026-11-30T08:31:00.000Z');
    expect(fold.items.filter((i) => i.decision === 'folded').every((i) => i.coveredBy === '2026-11-30T08:30')).toBe(true);
    expect(fold.summary.text).toMatch(/95 folded into 2026-11-30T08:30/);
  });
});

describe('clock steps', () => {
  it('a run in flight while the machine sleeps is not lost for the time nobody lived; its late result counts', async () => {
    h = await startJobsHarness();
    const agent = await h.agent('reporter', hang);
    const jobId = h.createJob({ name: 'r', window: { start: '09:00', end: '10:00', recheckEveryS: 300 }, runTimeoutS: 1800 });
    await h.advanceTo('2026-11-30T01:10:00.000Z');
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'running', deadline: '2026-11-30T01:30:00.000Z' });
    h.clock.jump(8 * 3600_000);
    await h.advance(120_000);
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'running', retryCount: 0, deadline: '2026-11-30T09:30:00.000Z' });
    // One gap, one record, carrying what the runner shifted.
    expect(h.audit('clock.jump').map((e) => [e.detail.gapMs, e.detail.shifted['runner.runs']])).toEqual([[8 * 3600_000, 1]]);
    await agent.result(agent.triggers[0]!, 'success');
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'success', 'late success');
    assertInvariants(h.core);
  });

  it('a backward step never runs a slot twice', async () => {
    h = await startJobsHarness();
    const agent = await h.agent('reporter', succeed());
    const jobId = h.createJob({ name: 'r' });
    await h.advanceTo('2026-11-30T01:00:00.000Z');
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'success', 'ran');
    h.clock.jump(-2 * 3600_000); // back to 23:00Z the day before
    await h.advance(3 * 3600_000);
    expect(agent.triggers.map((t) => t.slot)).toEqual(['2026-11-30']);
    assertInvariants(h.core);
  });
});

describe('after the wall clock steps back an hour', () => {
  it('scheduling follows the new wall time within one sweep: slots without a run come due, none runs twice', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    const agent = await h.agent('ops', succeed());
    const old = h.createJob({ name: 'old', role: 'ops', schedule: EVERY_5_MIN });
    await h.advanceTo('2026-11-30T01:00:30.000Z');
    // Created while the clock was an hour fast: none of its slots has a run yet.
    const fresh = h.createJob({ name: 'fresh', role: 'ops', schedule: EVERY_5_MIN });
    const before = agent.triggers.length;
    h.clock.jump(-3600_000); // back to 00:01:30
    // One pulse of the gap detector: the step is applied and the runner re-arms on the new clock
    // (the harness stops at the runner's wake-ups only once it knows them).
    await h.advance(pulseMs(h.core.config));
    await h.advance(15 * 60_000); // to 00:16:31
    const after = agent.triggers.slice(before).map((t) => [t.job, t.slot]);
    // The fresh job's slots on the new wall clock run; the old job's slots of the repeated hour
    // already ran and are not run again (one run per slot).
    expect(after).toEqual([
      ['fresh', '2026-11-30T00:05'],
      ['fresh', '2026-11-30T00:10'],
      ['fresh', '2026-11-30T00:15'],
    ]);
    expect(agent.triggers.find((t) => t.job === 'fresh')!.receivedAt).toBe(Date.parse('2026-11-30T00:05:00.000Z'));
    expect(h.runs(old).map((r) => r.slot)).toHaveLength(new Set(h.runs(old).map((r) => r.slot)).size);
    expect(h.audit('clock.jump').map((e) => [e.detail.gapMs, e.detail.shifted['runner.jobs']])).toEqual([[-3600_000, 2]]);
    void fresh;
    assertInvariants(h.core);
  });

  it('a run in flight keeps the real time it had left: its deadline moves back with the clock, however old the run', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:59:30.000Z', config: { heartbeatTimeoutS: 10_000_000 } });
    await h.agent('ops', hang);
    const jobId = h.createJob({ name: 'long', role: 'ops', schedule: { cron: '0 * * * *', timezone: 'UTC' }, runTimeoutS: 7200 });
    await h.advanceTo('2026-11-30T01:00:00.000Z');
    expect(h.run(jobId, '2026-11-30T01:00')).toMatchObject({ status: 'running', deadline: '2026-11-30T03:00:00.000Z' });
    await h.advanceTo('2026-11-30T02:30:00.000Z'); // 30 min left
    h.clock.jump(-3600_000);
    await h.advance(pulseMs(h.core.config)); // one pulse of the gap detector
    expect(h.run(jobId, '2026-11-30T01:00')).toMatchObject({ status: 'running', deadline: '2026-11-30T02:00:00.000Z' });
    await h.advance(30 * 60_000 + 60_000);
    expect(h.run(jobId, '2026-11-30T01:00')).toMatchObject({ lastError: expect.stringMatching(/no result before the deadline 2026-11-30T02:00:00.000Z/) });
    assertInvariants(h.core);
  });

  it('a retry scheduled before the step comes due after its own delay, not an hour later', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:59:30.000Z' });
    let failures = 0;
    const agent = await h.agent('ops', async (t, a) => {
      await a.started(t);
      if (failures++ === 0) await a.result(t, 'failed', 'retryable', 'downstream timeout');
      else await a.result(t, 'success');
    });
    const jobId = h.createJob({ name: 'hourly', role: 'ops', schedule: { cron: '0 * * * *', timezone: 'UTC' }, retry: { maxAttempts: 3, firstDelayS: 120 } });
    await h.advanceTo('2026-11-30T01:00:30.000Z');
    expect(h.run(jobId, '2026-11-30T01:00')).toMatchObject({ disposition: 'retry_scheduled', retryCount: 1, nextAttemptAt: '2026-11-30T01:02:00.000Z' });
    h.clock.jump(-3600_000); // 00:00:30: the retry is 90 s away, on the new clock too
    await h.advance(pulseMs(h.core.config)); // one pulse of the gap detector
    expect(h.run(jobId, '2026-11-30T01:00')).toMatchObject({ disposition: 'retry_scheduled', nextAttemptAt: '2026-11-30T00:02:00.000Z' });
    await h.advance(59_000 - pulseMs(h.core.config) + 1000);
    await h.advance(60_000);
    expect(h.run(jobId, '2026-11-30T01:00')?.status).toBe('success');
    expect(agent.triggers.map((t) => new Date(t.receivedAt).toISOString())).toEqual(['2026-11-30T01:00:00.000Z', '2026-11-30T00:02:00.000Z']);
    assertInvariants(h.core);
  });
});

describe('overlap', () => {
  async function twoSlots(overlap: 'skip' | 'queue_one' | 'allow') {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    const agent = await h.agent('ops', hang);
    const jobId = h.createJob({ name: `long-${overlap}`, role: 'ops', schedule: EVERY_5_MIN, overlap, runTimeoutS: 3600, ...(overlap === 'queue_one' ? {} : {}) });
    await h.advanceTo('2026-11-30T00:15:00.000Z');
    return { jobId, agent };
  }

  it("skip (default): a slot opening while the previous run is still running is skipped and recorded", async () => {
    const { jobId, agent } = await twoSlots('skip');
    expect(agent.triggers.map((t) => t.slot)).toEqual(['2026-11-30T00:05']);
    expect(h!.runs(jobId).map((r) => [r.slot, r.status, r.disposition])).toEqual([
      ['2026-11-30T00:05', 'running', 'running'],
      ['2026-11-30T00:10', 'skipped', 'skipped_overlap'],
      ['2026-11-30T00:15', 'skipped', 'skipped_overlap'],
    ]);
    expect(h!.core.jobs.explain(jobId, '2026-11-30T00:10:00.000Z').outcome).toMatch(/previous run was still in progress/);
    assertInvariants(h!.core);
  });

  it('queue_one: one slot waits for the running one (past its own window), later ones are skipped', async () => {
    const { jobId, agent } = await twoSlots('queue_one');
    expect(h!.runs(jobId).map((r) => [r.slot, r.status, r.disposition])).toEqual([
      ['2026-11-30T00:05', 'running', 'running'],
      ['2026-11-30T00:10', 'pending', 'waiting'],
      ['2026-11-30T00:15', 'skipped', 'skipped_overlap'],
    ]);
    agent.behavior = succeed();
    await agent.result(agent.triggers[0]!, 'success');
    await until(() => h!.run(jobId, '2026-11-30T00:10')?.status === 'success', 'queued one runs');
    expect(agent.triggers.map((t) => t.slot)).toEqual(['2026-11-30T00:05', '2026-11-30T00:10']);
    assertInvariants(h!.core);
  });

  it('allow: runs overlap', async () => {
    const { jobId, agent } = await twoSlots('allow');
    expect(agent.triggers.map((t) => t.slot)).toEqual(['2026-11-30T00:05', '2026-11-30T00:10', '2026-11-30T00:15']);
    expect(h!.runs(jobId).every((r) => r.status === 'running')).toBe(true);
  });
});

describe('pause and kill switch', () => {
  const DAILY = { schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' }, window: { start: '09:00', end: '10:00', recheckEveryS: 300 } };

  it('a paused job skips its slot (recorded, explained with who/why/when) and can still be run by hand', async () => {
    h = await startJobsHarness();
    const agent = await h.agent('reporter', succeed());
    const jobId = h.createJob({ name: 'report', ...DAILY });
    h.core.jobs.pause(jobId, { reason: 'upstream migration', actor: 'alice' });
    const forecast = h.core.jobs.explain(jobId, '2026-11-30T01:00:00.000Z');
    expect(forecast.tense).toBe('future');
    expect(forecast.outcome).toMatch(/will be skipped unless the job is resumed .* \(paused by alice: upstream migration\)/);
    expect(forecast.layers.execution.items.find((i) => i.name === 'pause')).toMatchObject({ verdict: 'not_ready' });
    await h.advanceTo('2026-11-30T02:00:00.000Z');
    expect(agent.triggers).toHaveLength(0);
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'skipped', disposition: 'skipped_paused' });
    const e = h.core.jobs.explain(jobId, '2026-11-30T01:00:00.000Z');
    expect(e.outcome).toMatch(/the job was paused/);
    expect(e.layers.execution.reason).toMatch(/paused \(by alice at 2026-11-30T00:00:00.000Z: upstream migration\)/);
    expect(e.jobState.paused).toEqual({ by: 'alice', at: '2026-11-30T00:00:00.000Z', reason: 'upstream migration', until: null, drain: false, role: false });
    // Run now by hand while paused: still one run per slot — today's is taken, so pick tomorrow's.
    const dup = h.core.jobs.triggerNow(jobId, { reason: 'again', actor: 'bob' });
    expect(dup).toMatchObject({ created: false, dispatched: false });
    const byHand = h.core.jobs.triggerNow(jobId, { reason: 'customer asked', actor: 'bob', slot: '2026-12-01' });
    expect(byHand).toMatchObject({ created: true, dispatched: true, run: { slot: '2026-12-01', trigger: 'manual' } });
    await until(() => h!.run(jobId, '2026-12-01')?.status === 'success', 'manual run');
    // Resume: the next day its own slot is already done (no double run); the day after runs.
    h.core.jobs.resume(jobId, { actor: 'alice', reason: 'migration over' });
    await h.advanceTo('2026-12-02T01:00:00.000Z');
    await until(() => h!.run(jobId, '2026-12-02')?.status === 'success', 'after resume');
    expect(agent.triggers.map((t) => t.slot)).toEqual(['2026-12-01', '2026-12-02']);
    const resume = h.audit('job.resume')[0]!;
    expect(resume).toMatchObject({ actor: 'alice', detail: { reason: 'migration over', pausedBy: 'alice', pausedReason: 'upstream migration' } });
    assertInvariants(h.core);
  });

  it('resuming within the window runs the slot at once', async () => {
    h = await startJobsHarness();
    const agent = await h.agent('reporter', succeed());
    const jobId = h.createJob({ name: 'report', ...DAILY });
    h.core.jobs.pause(jobId, { reason: 'check config', actor: 'alice' });
    await h.advanceTo('2026-11-30T01:12:00.000Z');
    expect(agent.triggers).toHaveLength(0);
    h.core.jobs.resume(jobId, { actor: 'alice' });
    await h.settle();
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'success', 'resumed');
    expect(agent.triggers[0]!.receivedAt).toBe(Date.parse('2026-11-30T01:12:00.000Z'));
  });

  it('the kill switch holds every dispatch (recorded as skipped_kill_switch), refuses run-now, and releases on off', async () => {
    h = await startJobsHarness();
    const agent = await h.agent('reporter', succeed());
    const jobId = h.createJob({ name: 'report', ...DAILY });
    h.core.jobs.setKillSwitch({ on: true, reason: 'incident 42', actor: 'alice' });
    expect(() => h!.core.jobs.triggerNow(jobId, { reason: 'try', actor: 'bob' })).toThrow(/kill switch is on/);
    await h.advanceTo('2026-11-30T02:00:00.000Z');
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'skipped', disposition: 'skipped_kill_switch' });
    expect(h.audit('operator.kill_switch')[0]).toMatchObject({ actor: 'alice', subject: 'settings:killSwitch', detail: { reason: 'incident 42', from: false, to: true } });
    await h.advanceTo('2026-12-01T01:20:00.000Z');
    expect(agent.triggers).toHaveLength(0);
    h.core.jobs.setKillSwitch({ on: false, reason: 'resolved', actor: 'alice' });
    await h.settle();
    await until(() => h!.run(jobId, '2026-12-01')?.status === 'success', 'released');
    expect(agent.triggers.map((t) => [t.slot, t.receivedAt])).toEqual([['2026-12-01', Date.parse('2026-12-01T01:20:00.000Z')]]);
    assertInvariants(h.core);
  });
});

describe('execution conditions', () => {
  it('per-role quota: the second job of the role waits until the first finishes', async () => {
    h = await startJobsHarness();
    const agent = await h.agent('reporter', hang);
    const cond = { executionConditions: { maxConcurrentPerRole: 1 }, window: { start: '09:00', end: '10:00', recheckEveryS: 60 } };
    const a = h.createJob({ name: 'a', ...cond });
    const b = h.createJob({ name: 'b', ...cond });
    await h.advanceTo('2026-11-30T01:03:00.000Z');
    expect(agent.triggers.map((t) => t.job)).toEqual(['a']);
    expect(h.core.jobs.explain(b, '2026-11-30T01:00:00.000Z').layers.execution.reason).toMatch(/1 of 1 runs of role reporter in flight/);
    await agent.result(agent.triggers[0]!, 'success');
    await h.advance(60_000);
    await until(() => agent.triggers.length === 2, 'b dispatched');
    expect(agent.triggers[1]).toMatchObject({ job: 'b', receivedAt: Date.parse('2026-11-30T01:04:00.000Z') });
    void a;
  });

  it('global quota setting limits runs in flight across jobs', async () => {
    h = await startJobsHarness();
    const agent = await h.agent('reporter', hang);
    h.core.jobs.setGlobalConcurrency({ limit: 1, reason: 'small machine', actor: 'alice' });
    h.createJob({ name: 'a' });
    h.createJob({ name: 'b' });
    await h.advanceTo('2026-11-30T01:30:00.000Z');
    expect(agent.triggers).toHaveLength(1);
    expect(h.audit('jobs.settings')[0]).toMatchObject({ actor: 'alice', detail: { reason: 'small machine', globalConcurrency: { from: null, to: 1 } } });
  });

  it('a maintenance window delays dispatch until it ends', async () => {
    h = await startJobsHarness();
    const agent = await h.agent('reporter', succeed());
    const jobId = h.createJob({
      name: 'm',
      window: { start: '09:00', end: '10:00', recheckEveryS: 300 },
      executionConditions: { maintenanceWindows: [{ start: '08:30', end: '09:30' }] },
    });
    await h.advanceTo('2026-11-30T01:40:00.000Z');
    expect(agent.triggers.map((t) => t.receivedAt)).toEqual([Date.parse('2026-11-30T01:30:00.000Z')]);
    expect(h.run(jobId, '2026-11-30')!.status).toBe('success');
  });

  it('no instance online: the slot waits, and runs as soon as an agent of the role says hello', async () => {
    h = await startJobsHarness();
    const jobId = h.createJob({ name: 'r', window: { start: '09:00', end: '10:00', recheckEveryS: 300 } });
    await h.advanceTo('2026-11-30T01:07:00.000Z');
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'pending', disposition: 'waiting' });
    expect(h.core.jobs.explain(jobId, '2026-11-30T01:00:00.000Z').layers.execution.reason).toMatch(/no online instance of role reporter/);
    const agent = await h.agent('reporter', succeed());
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'success', 'ran on hello');
    expect(agent.triggers[0]!.receivedAt).toBe(Date.parse('2026-11-30T01:07:00.000Z'));
  });

  it('an acknowledged run whose agent never answers is lost at its deadline and retried', async () => {
    h = await startJobsHarness();
    const agent = await h.agent('reporter', hang);
    const jobId = h.createJob({ name: 'r', window: { start: '09:00', end: '12:00', recheckEveryS: 300 }, runTimeoutS: 600 });
    await h.advanceTo('2026-11-30T01:10:00.000Z');
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'running', retryCount: 1, errorClass: 'lost' });
    agent.behavior = succeed();
    await h.advanceTo('2026-11-30T01:15:00.000Z');
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'success', 'retry');
    expect(agent.triggers.map((t) => t.attempt)).toEqual([1, 2]);
    // The first attempt's late answer is refused: it no longer holds the run.
    const late = await agent.result(agent.triggers[0]!, 'failed', 'retryable', 'late');
    expect(late).toMatchObject({ ok: false, error: { code: 'invalid_transition', status: 422 } });
    // A repeated success report is harmless.
    expect(await agent.result(agent.triggers[1]!, 'success')).toMatchObject({ ok: true, result: { replayed: true } });
  });

  it('a stale instance is refused with not_holder', async () => {
    h = await startJobsHarness();
    const a1 = await h.agent('reporter', hang, 'a1');
    const jobId = h.createJob({ name: 'r', window: { start: '09:00', end: '12:00', recheckEveryS: 300 }, runTimeoutS: 600 });
    await h.advanceTo('2026-11-30T01:00:00.000Z');
    await h.settle();
    const t = a1.triggers[0]!;
    const a2 = await h.agent('reporter', ignore, 'a2');
    const r = await a2.result(t, 'success');
    expect(r).toMatchObject({ ok: false, error: { code: 'not_holder', status: 409 } });
    const s = await a2.step(t, 'send');
    expect(s).toMatchObject({ ok: false, error: { code: 'not_holder' } });
    expect(h.run(jobId, '2026-11-30')!.status).toBe('running');
  });
});

describe('a pass that keeps failing', () => {
  it('is tried again every few seconds, not in a loop (a row it cannot read, a full disk)', () => {
    const errors: string[] = [];
    const logger = { ...silentLogger, error: (msg: string) => void errors.push(msg) };
    const clock = new ManualClock('2026-11-30T00:00:30.000Z');
    const core = createCore({ clock, dataDir: tempDir('gaffer-failing-pass-'), config: BASE_CONFIG, logger });
    try {
      core.start();
      const id = core.jobs.create({ name: 'unreadable', role: 'ops', schedule: { everyS: 300, timezone: 'UTC' } }, { actor: 'test' }).job.id;
      core.db.prepare(`UPDATE jobs SET spec = '{' WHERE id = ?`).run(id);
      clock.advanceTo(Date.parse('2026-11-30T00:06:00.000Z'));
      const failed = errors.filter((m) => m.startsWith('jobs: pass failed'));
      // Due at 00:05: then once every 5 s for the minute after.
      expect(failed.length).toBeGreaterThan(0);
      expect(failed.length).toBeLessThanOrEqual(13);
    } finally {
      core.close();
    }
  });
});
