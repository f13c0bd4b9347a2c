/** Pauses people ask for, end to end (real agents, manual clock): until a time, drain, a whole role. */
import { describe, expect, it } from 'vitest';
import { assertInvariants, EVERY_15_MIN, fail, OPERATOR as op, startJobsHarness, succeed, until, type Behavior, type JobsHarness } from '../tests/jobs.testkit';
import { pulseMs } from '../time/gap-detector';
import { TestAgent } from '../tests/ws-agent.testkit';

let h: JobsHarness | undefined;

describe('pause until a time', () => {
  it('a slot whose window passes is skipped as paused; at its time the job resumes by itself (audited) and a slot still in its window runs', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    const agent = await h.agent('ops', succeed());
    const jobId = h.createJob({ name: 'sync', role: 'ops', schedule: EVERY_15_MIN });
    const job = h.core.jobs.pause(jobId, { reason: 'vendor maintenance', until: '2026-11-30T00:40:00.000Z', ...op });
    expect(job.paused).toMatchObject({ by: 'operator:test', reason: 'vendor maintenance', until: '2026-11-30T00:40:00.000Z', drain: false, role: false });
    expect(h.core.jobs.explain(jobId, '2026-11-30T00:15:00.000Z').layers.execution.items.find((i) => i.name === 'pause')!.reason).toContain('resumes by itself at 2026-11-30T00:40:00.000Z');
    await h.advanceTo('2026-11-30T00:39:59.000Z');
    expect(h.core.jobs.get(jobId).paused).not.toBeNull();
    await h.advanceTo('2026-11-30T00:40:01.000Z');
    expect(h.core.jobs.get(jobId).paused).toBeNull();
    const resumed = h.audit('job.resume');
    expect(resumed).toHaveLength(1);
    expect(resumed[0]).toMatchObject({ actor: 'scheduler', detail: { reason: 'the pause ended at 2026-11-30T00:40:00.000Z', pausedBy: 'operator:test' } });
    await h.advanceTo('2026-11-30T00:45:30.000Z');
    const runs = h.runs(jobId).map((r) => [r.slot, r.disposition]);
    expect(runs).toEqual([
      ['2026-11-30T00:15', 'skipped_paused'], // its window closed at 00:30, still paused
      ['2026-11-30T00:30', 'ran'], // its window is open until 00:45: it runs when the pause ends
      ['2026-11-30T00:45', 'ran'],
    ]);
    expect(agent.triggers.map((t) => [t.slot, new Date(t.receivedAt).toISOString()])).toEqual([
      ['2026-11-30T00:30', '2026-11-30T00:40:00.000Z'],
      ['2026-11-30T00:45', '2026-11-30T00:45:00.000Z'],
    ]);
    assertInvariants(h.core);
  });

  it('a sleep past the end of the pause resumes the job at wake', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    const jobId = h.createJob({ name: 'sync', role: 'ops', schedule: EVERY_15_MIN });
    h.core.jobs.pause(jobId, { reason: 'r', until: '2026-11-30T01:00:00.000Z', ...op });
    h.clock.jump(3 * 3600_000);
    await h.advance(pulseMs(h.core.config) + 1000); // the gap detector's pulse notices the sleep
    expect(h.core.jobs.get(jobId).paused).toBeNull();
  });
});

describe('drain: finish running work, then pause', () => {
  const flaky = (): Behavior => {
    let n = 0;
    return async (t, a) => {
      await a.started(t);
      if (n++ === 0) await a.result(t, 'failed', 'retryable', 'upstream 502');
      else await a.result(t, 'success');
    };
  };

  it('with drain the run already started retries and finishes; new slots wait', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    await h.agent('ops', flaky());
    const jobId = h.createJob({ name: 'sync', role: 'ops', schedule: EVERY_15_MIN, retry: { maxAttempts: 2, firstDelayS: 60 } });
    await h.advanceTo('2026-11-30T00:15:10.000Z');
    await until(() => h!.run(jobId, '2026-11-30T00:15')?.disposition === 'retry_scheduled', 'first attempt failed');
    h.core.jobs.pause(jobId, { reason: 'deploying', drain: true, ...op });
    await h.advanceTo('2026-11-30T00:31:00.000Z');
    expect(h.run(jobId, '2026-11-30T00:15')).toMatchObject({ status: 'success', attempt: 2 });
    expect(h.run(jobId, '2026-11-30T00:30')).toMatchObject({ status: 'pending' });
  });

  it('without drain the retry waits for the resume too (and the window closes on it)', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    await h.agent('ops', flaky());
    const jobId = h.createJob({ name: 'sync', role: 'ops', schedule: EVERY_15_MIN, retry: { maxAttempts: 2, firstDelayS: 60 } });
    await h.advanceTo('2026-11-30T00:15:10.000Z');
    await until(() => h!.run(jobId, '2026-11-30T00:15')?.disposition === 'retry_scheduled', 'first attempt failed');
    h.core.jobs.pause(jobId, { reason: 'stop now', ...op });
    await h.advanceTo('2026-11-30T00:31:00.000Z');
    expect(h.run(jobId, '2026-11-30T00:15')).toMatchObject({ status: 'failed', attempt: 1 });
  });
});

describe('pausing a whole role', () => {
  it('its jobs start nothing, its tasks are not handed out; resuming restores each job as it was', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    await h.agent('ops', succeed());
    const a = h.createJob({ name: 'a', role: 'ops', schedule: EVERY_15_MIN });
    const b = h.createJob({ name: 'b', role: 'ops', schedule: EVERY_15_MIN });
    h.core.jobs.pause(b, { reason: 'b has its own reason', ...op });
    const token = h.core.tokens.create({ name: 'w', role: 'ops', actor: 'test' }).token;
    const worker = await TestAgent.hello(h.url, token, 'ops', 'w');
    h.core.tasks.create({ title: 'rotate keys', role: 'ops' }, { actor: 'test' });

    const pause = h.core.jobs.pauses.pauseRole('ops', { reason: 'incident 42', until: null, ...op });
    expect(pause).toMatchObject({ role: 'ops', by: 'operator:test', reason: 'incident 42', until: null });
    expect((await worker.request('claim', {})).result).toEqual({ task: null }); // P2: no task
    expect(h.core.jobs.get(a).paused).toMatchObject({ role: true, reason: 'incident 42' });
    expect(h.core.jobs.get(b).paused).toMatchObject({ role: false, reason: 'b has its own reason' });
    // A job created in the paused role is paused with it.
    const c = h.createJob({ name: 'c', role: 'ops', schedule: EVERY_15_MIN });
    expect(h.core.jobs.get(c).paused).toMatchObject({ role: true });
    expect(() => h!.core.jobs.resume(a, { ...op })).toThrow(/resume the role/);

    await h.advanceTo('2026-11-30T00:30:30.000Z');
    expect(h.run(a, '2026-11-30T00:15')?.disposition).toBe('skipped_paused');

    h.core.jobs.pauses.resumeRole('ops', { reason: 'incident over', ...op });
    expect(h.core.jobs.get(a).paused).toBeNull();
    expect(h.core.jobs.get(c).paused).toBeNull();
    expect(h.core.jobs.get(b).paused).toMatchObject({ reason: 'b has its own reason' });
    expect((await worker.request('claim', {})).result.task).toMatchObject({ title: 'rotate keys' });
    expect(h.audit('role.pause').map((e) => e.detail.jobs)).toEqual([['a']]);
    expect(h.audit('role.resume').map((e) => e.detail.jobs)).toEqual([['a', 'c']]);
    worker.close();
  });

  it('a job paused on its own while its role is paused keeps its own pause after the role resumes', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    const a = h.createJob({ name: 'a', role: 'ops', schedule: EVERY_15_MIN });
    h.core.jobs.pauses.pauseRole('ops', { reason: 'role', ...op });
    h.core.jobs.pause(a, { reason: 'mine', ...op });
    h.core.jobs.pauses.resumeRole('ops', op);
    expect(h.core.jobs.get(a).paused).toMatchObject({ reason: 'mine', role: false });
    h.core.jobs.resume(a, op);
    expect(h.core.jobs.get(a).paused).toBeNull();
  });

  it('refuses what cannot be, with typed errors, and changes nothing', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    const a = h.createJob({ name: 'a', role: 'ops', schedule: EVERY_15_MIN });
    const state = () => JSON.stringify([h!.core.db.prepare('SELECT * FROM jobs').all(), h!.core.db.prepare('SELECT * FROM role_pauses').all()]);
    const before = state();
    expect(() => h!.core.jobs.pause(a, { reason: 'r', until: '2026-11-29T00:00:00.000Z', ...op })).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/"until"/) }));
    expect(() => h!.core.jobs.pause(a, { reason: 'r', until: 'noon', ...op })).toThrow(expect.objectContaining({ code: 'bad_request' }));
    expect(() => h!.core.jobs.pauses.pauseRole('ops', { reason: 'r', drain: true, ...op })).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/"drain"/) }));
    expect(() => h!.core.jobs.pauses.pauseRole('bad role!', { reason: 'r', ...op })).toThrow(expect.objectContaining({ code: 'bad_request' }));
    expect(() => h!.core.jobs.pauses.resumeRole('ops', op)).toThrow(expect.objectContaining({ code: 'invalid_transition' }));
    expect(state()).toBe(before);
  });
});

describe('a held run stays visible while paused', () => {
  it('the pause does not touch held runs (they wait for a decision)', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    await h.agent('ops', fail('needs_human', 'which account?'));
    const a = h.createJob({ name: 'a', role: 'ops', schedule: EVERY_15_MIN, retry: { maxAttempts: 1 } });
    await h.advanceTo('2026-11-30T00:15:30.000Z');
    await until(() => h!.run(a, '2026-11-30T00:15')?.disposition === 'held', 'held');
    h.core.jobs.pause(a, { reason: 'r', ...op });
    expect(h.run(a, '2026-11-30T00:15')?.disposition).toBe('held');
    expect(h.core.inbox.counts().open).toBe(1);
  });
});
