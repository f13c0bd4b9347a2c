/**
 * The engine owns a trigger's offer (engine/offers.ts): one instance at a time, each at most once,
 * the ack timeout a due instant on the run's row, the next instance on a timeout or a lost session,
 * waiting for an instance when nobody is online, restart-safe; and attempts taken away are told
 * (`run_cancelled`) and refused afterwards. Real agents over the socket, manual clock.
 */
import { describe, expect, it } from 'vitest';
import type { Core } from '../create-core';
import { assertInvariants, hang, ignore, startJobsHarness, succeed, until, type JobAgent, type JobsHarness } from '../tests/jobs.testkit';

let h: JobsHarness | undefined;

// 2026-11-30 09:00 in Asia/Shanghai is 01:00Z.
const JOB = { name: 'r', window: { start: '09:00', end: '12:00', recheckEveryS: 300 }, runTimeoutS: 600 };
const DUE = '2026-11-30T01:00:00.000Z';

const cancels = (a: JobAgent) => a.a.pushes.filter((p) => p.type === 'run_cancelled');
const offersOf = (hx: JobsHarness, runId: string) => hx.audit('trigger.offer').filter((e) => e.subject === `run:${runId}`);

/** Every outermost transaction from now on, as the audit types it wrote. */
function commitsOf(core: Core): string[][] {
  const commits: string[][] = [];
  const write = core.store.write.bind(core.store);
  const last = core.db.prepare<[], { id: number | null }>('SELECT max(id) AS id FROM audit');
  const since = core.db.prepare<[number], { type: string }>('SELECT type FROM audit WHERE id > ? ORDER BY id');
  core.store.write = (<T>(fn: () => T): T => {
    if (core.db.inTransaction) return write(fn);
    const before = last.get()!.id ?? 0;
    const v = write(fn);
    const types = since.all(before).map((r) => r.type);
    if (types.length) commits.push(types);
    return v;
  }) as typeof core.store.write;
  return commits;
}

describe('one owner of an offer', () => {
  it('goes to exactly one of ten instances; unacknowledged, to another after 30 s (same run, same attempt); only the current one may start it', async () => {
    h = await startJobsHarness();
    const fleet: JobAgent[] = [];
    for (let i = 0; i < 10; i++) fleet.push(await h.agent('reporter', ignore, `r${i}`));
    const jobId = h.createJob(JOB);
    await h.advanceTo(DUE);
    const got = () => fleet.filter((a) => a.triggers.length > 0);
    expect(got()).toHaveLength(1);
    const first = got()[0]!;
    const runId = first.triggers[0]!.runId;
    expect(h.core.jobs.getRun(runId).run).toMatchObject({ status: 'pending', disposition: 'dispatched', attempt: 1, nextAttemptAt: '2026-11-30T01:00:30.000Z' });
    await h.advanceTo('2026-11-30T01:00:29.999Z');
    expect(got()).toHaveLength(1);
    await h.advanceTo('2026-11-30T01:00:30.000Z');
    expect(got()).toHaveLength(2);
    const second = got().find((a) => a !== first)!;
    expect(second.triggers[0]).toMatchObject({ runId, attempt: 1 });
    // The lapsed instance must not start it; the current one may.
    expect(await first.started(first.triggers[0]!)).toMatchObject({ ok: false, error: { code: 'not_holder', status: 409, message: expect.stringMatching(/lapsed/) } });
    expect(await second.started(second.triggers[0]!)).toMatchObject({ ok: true });
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'running', instanceId: second.instanceId, attempt: 1, retryCount: 0 });
    // Acknowledged: no further offers, and the first one is still refused.
    await h.advance(120_000);
    expect(got()).toHaveLength(2);
    expect(await first.started(first.triggers[0]!)).toMatchObject({ ok: false, error: { code: 'not_holder' } });
    expect(offersOf(h, runId).map((e) => [e.detail.instanceId, e.detail.offer])).toEqual([
      [first.instanceId, 1],
      [second.instanceId, 2],
    ]);
    expect(h.audit('trigger.timeout').map((e) => e.detail)).toEqual([{ instanceId: first.instanceId, ackTimeoutMs: 30_000 }]);
    await until(() => h!.audit('run.reject').length === 2, 'both refusals audited');
    expect(h.audit('run.reject').map((e) => [e.actor, e.detail.op, e.detail.code])).toEqual([
      [first.instanceId, 'run_started', 'not_holder'],
      [first.instanceId, 'run_started', 'not_holder'],
    ]);
    assertInvariants(h.core);
  });

  it('a slot claimed, dispatched and offered is one transaction; the acknowledgement is one more', async () => {
    h = await startJobsHarness();
    await h.agent('reporter', succeed());
    h.createJob(JOB);
    await h.advanceTo('2026-11-30T00:59:00.000Z');
    const commits = commitsOf(h.core);
    await h.advanceTo(DUE);
    await until(() => h!.audit('run.succeed').length === 1, 'the run to succeed');
    const runRows = commits.filter((c) => c.some((t) => t.startsWith('run.') || t.startsWith('trigger.')));
    expect(runRows).toEqual([['run.claim', 'run.dispatch', 'trigger.offer'], ['run.start'], ['run.succeed']]);
  });

  it('many slots due at once are claimed, dispatched and offered in one transaction, spread over the instances by load', async () => {
    h = await startJobsHarness();
    const fleet = [await h.agent('reporter', hang, 'a'), await h.agent('reporter', hang, 'b'), await h.agent('reporter', hang, 'c')];
    for (let i = 0; i < 6; i++) h.createJob({ ...JOB, name: `r${i}` });
    await h.advanceTo('2026-11-30T00:59:00.000Z');
    const commits = commitsOf(h.core);
    await h.advanceTo(DUE);
    await until(() => fleet.every((a) => a.triggers.length === 2), 'two triggers each');
    const burst = commits.filter((c) => c.includes('run.claim'));
    expect(burst).toHaveLength(1);
    for (const type of ['run.claim', 'run.dispatch', 'trigger.offer']) expect(burst[0]!.filter((t) => t === type)).toHaveLength(6);
  });

  it('a lost session moves the offer on at once; with nobody left online it waits, and a hello gets it at once (no retry spent)', async () => {
    h = await startJobsHarness();
    const a = await h.agent('reporter', ignore, 'a');
    const b = await h.agent('reporter', ignore, 'b');
    const jobId = h.createJob(JOB);
    await h.advanceTo(DUE);
    const [holder, other] = a.triggers.length ? [a, b] : [b, a];
    holder.a.kill();
    await until(() => other.triggers.length === 1, 'the offer to move on');
    expect(h.audit('trigger.lost').map((e) => e.detail)).toEqual([{ instanceId: holder.instanceId, why: 'session closed' }]);
    other.a.kill();
    await until(() => h!.run(jobId, '2026-11-30')?.nextAttemptAt === '2026-11-30T01:10:00.000Z', 'the offer to wait for an instance');
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'pending', disposition: 'dispatched', attempt: 1, retryCount: 0 });
    await h.advance(60_000);
    // A new agent process of the role (a managed agent restarting, say) gets the waiting offer at once.
    const c = await h.agent('reporter', succeed(), 'c');
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'success', 'the run on the new instance');
    expect(c.triggers.map((t) => [t.attempt, t.receivedAt])).toEqual([[1, Date.parse('2026-11-30T01:01:00.000Z')]]);
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ retryCount: 0, instanceId: c.instanceId });
    assertInvariants(h.core);
  });

  it('when every instance online already had it, the trigger is undeliverable: a retryable failure of the attempt', async () => {
    h = await startJobsHarness();
    const a = await h.agent('reporter', ignore, 'a');
    const jobId = h.createJob({ ...JOB, retry: { maxAttempts: 2, firstDelayS: 60 } });
    await h.advanceTo(DUE);
    await h.advanceTo('2026-11-30T01:00:30.000Z');
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'pending', retryCount: 1, errorClass: 'undeliverable', disposition: 'retry_scheduled' });
    expect(h.audit('trigger.undeliverable').map((e) => e.detail)).toEqual([{ reason: 'not_acknowledged', offeredTo: [a.instanceId], role: 'reporter' }]);
    // The retry is a new attempt: the same instance may have it again.
    a.behavior = succeed();
    await h.advanceTo('2026-11-30T01:01:30.000Z');
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'success', 'the retry');
    expect(a.triggers.map((t) => t.attempt)).toEqual([1, 2]);
  });

  it('the ack timeout counts only time the server lived: a stall does not make the offer lapse', async () => {
    h = await startJobsHarness({ config: { heartbeatIntervalMs: 2000 } });
    const a = await h.agent('reporter', ignore, 'a');
    await h.agent('reporter', ignore, 'b');
    const jobId = h.createJob(JOB);
    await h.advanceTo(DUE);
    const holder = a.triggers.length ? a : h.agents[1]!;
    await h.advance(20_000);
    await h.clock.stall(60_000);
    await h.settle();
    expect(h.run(jobId, '2026-11-30')!.nextAttemptAt).toBe('2026-11-30T01:01:30.000Z');
    expect(await holder.started(holder.triggers[0]!)).toMatchObject({ ok: true });
  });

  it('an instance whose hello said takesRuns: false is never offered a run; one of the role that takes runs gets it at the first offer', async () => {
    h = await startJobsHarness();
    // Connected first: without the flag, the earliest connection wins the pick's tie.
    const taskOnly = await h.agent('reporter', ignore, 'mcp-without-jobs', { takesRuns: false });
    const worker = await h.agent('reporter', succeed(), 'worker');
    const jobId = h.createJob(JOB);
    await h.advanceTo(DUE);
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'success', 'the run on the worker');
    const runId = h.run(jobId, '2026-11-30')!.id;
    expect(taskOnly.triggers).toEqual([]);
    expect(offersOf(h, runId).map((e) => [e.detail.instanceId, e.detail.offer])).toEqual([[worker.instanceId, 1]]);
    expect(worker.triggers.map((t) => [t.attempt, t.receivedAt])).toEqual([[1, Date.parse(DUE)]]);
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ instanceId: worker.instanceId, retryCount: 0 });
    assertInvariants(h.core);
  });

  it('with only instances that take no runs online, a run waits unoffered (no retry spent), explain says why, and a hello that takes runs gets it at once', async () => {
    h = await startJobsHarness();
    const taskOnly = await h.agent('reporter', ignore, 'mcp-without-jobs', { takesRuns: false });
    const jobId = h.createJob(JOB);
    const byHandId = h.createJob({ ...JOB, name: 'by-hand', schedule: { everyS: 86400, timezone: 'UTC' } });
    await h.advanceTo(DUE);
    const byHand = h.core.jobs.triggerNow(byHandId, { reason: 'now', actor: 'operator:test' });
    expect(byHand).toMatchObject({ dispatched: false, message: expect.stringMatching(/no online instance of role reporter takes job runs/) });
    await h.advance(5 * 60_000);
    expect(taskOnly.triggers).toEqual([]);
    expect(h.audit('trigger.offer')).toEqual([]);
    expect(h.audit('trigger.undeliverable')).toEqual([]);
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'pending', disposition: 'waiting', attempt: 0, retryCount: 0 });
    const why = h.core.jobs.explain(jobId, DUE).layers.execution;
    expect(why.reason).toMatch(/no online instance of role reporter takes job runs: 1 online said takesRuns: false/);
    expect(why.items.find((i) => i.name === 'instance')).toMatchObject({ verdict: 'not_ready', evidence: { online: 0, onlineNoRuns: 1 } });
    expect(h.core.jobs.explain(byHandId, byHand.run.slotAt).layers.execution.reason).toMatch(/takes job runs/);
    // Another instance that takes no runs changes nothing; one that takes runs gets both at once.
    await h.agent('reporter', ignore, 'another-without-jobs', { takesRuns: false });
    expect(h.audit('trigger.offer')).toEqual([]);
    const worker = await h.agent('reporter', succeed(), 'worker');
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'success' && h!.runs(byHandId)[0]?.status === 'success', 'both runs on the worker');
    expect(worker.triggers.map((t) => t.receivedAt)).toEqual([Date.parse(DUE) + 5 * 60_000, Date.parse(DUE) + 5 * 60_000]);
    assertInvariants(h.core);
  });

  it('a restart mid-offer resumes from the rows: offered again, same attempt, and a late run_started of the old offer is refused', async () => {
    h = await startJobsHarness();
    const a = await h.agent('reporter', ignore, 'a');
    const jobId = h.createJob(JOB);
    await h.advanceTo(DUE);
    const t = a.triggers[0]!;
    const { clock, dir } = h;
    await h.stop();
    const h2 = await startJobsHarness({ clock, dir });
    const b = await h2.agent('reporter', ignore, 'b');
    await until(() => b.triggers.length === 1, 'the offer after the restart');
    expect(b.triggers[0]).toMatchObject({ runId: t.runId, attempt: 1 });
    expect(h2.audit('trigger.lost').map((e) => e.detail)).toEqual([{ instanceId: a.instanceId, why: 'Gaffer restarted' }]);
    const late = await h2.agent('reporter', ignore, 'a again');
    expect(await late.started(t)).toMatchObject({ ok: false, error: { code: 'not_holder' } });
    expect(await b.started(b.triggers[0]!)).toMatchObject({ ok: true });
    expect(h2.run(jobId, '2026-11-30')).toMatchObject({ status: 'running', instanceId: b.instanceId, attempt: 1 });
    assertInvariants(h2.core);
  });
});

describe('run_cancelled: an acknowledged attempt taken away is told at once and refused afterwards', () => {
  it('deadline: pushed to the holder; its later run_step and run_result are not_holder and audited with the trace id', async () => {
    h = await startJobsHarness();
    const a = await h.agent('reporter', hang);
    const jobId = h.createJob(JOB);
    await h.advanceTo(DUE);
    const t = a.triggers[0]!;
    await h.advanceTo('2026-11-30T01:10:00.000Z');
    await until(() => cancels(a).length === 1, 'run_cancelled');
    expect(cancels(a)).toEqual([{ type: 'run_cancelled', runId: t.runId, reason: 'deadline' }]);
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'running', retryCount: 1, errorClass: 'lost' });
    expect((await a.step(t, 'send')).error).toMatchObject({ code: 'not_holder', status: 409 });
    expect((await a.result(t, 'success')).error).toMatchObject({ code: 'not_holder', status: 409 });
    expect(h.core.jobs.getRun(t.runId).steps).toEqual([]);
    await until(() => h!.audit('run.reject').length === 2, 'refusals audited');
    const rows = h.core.db.prepare(`SELECT actor, trace_id, detail FROM audit WHERE type = 'run.reject' ORDER BY id`).all() as Array<{ actor: string; trace_id: string; detail: string }>;
    expect(rows.map((r) => [r.actor, r.trace_id, JSON.parse(r.detail).op])).toEqual([
      [a.instanceId, t.traceId, 'run_step'],
      [a.instanceId, t.traceId, 'run_result'],
    ]);
    expect(h.audit('trigger.cancel').map((e) => e.detail)).toEqual([{ instanceId: a.instanceId, reason: 'deadline', attempt: 1 }]);
  });

  it('kill switch: every attempt out is taken away (the acknowledged one told), retried by its policy once the switch is off', async () => {
    h = await startJobsHarness();
    const a = await h.agent('reporter', hang, 'a');
    const jobId = h.createJob({ ...JOB, retry: { maxAttempts: 3, firstDelayS: 60 } });
    await h.advanceTo(DUE);
    const t = a.triggers[0]!;
    h.core.jobs.setKillSwitch({ on: true, reason: 'incident 7', actor: 'alice' });
    await until(() => cancels(a).length === 1, 'run_cancelled');
    expect(cancels(a)).toEqual([{ type: 'run_cancelled', runId: t.runId, reason: 'kill_switch' }]);
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'running', retryCount: 1, errorClass: 'lost', lastError: 'taken away: the kill switch was turned on by alice: incident 7' });
    expect((await a.result(t, 'success')).error).toMatchObject({ code: 'not_holder' });
    // Nothing is dispatched while it is on; turned off, the retry goes out (to the same instance: a new attempt).
    await h.advanceTo('2026-11-30T01:05:00.000Z');
    expect(a.triggers).toHaveLength(1);
    a.behavior = succeed();
    h.core.jobs.setKillSwitch({ on: false, reason: 'resolved', actor: 'alice' });
    await h.advance(1000);
    await until(() => h!.run(jobId, '2026-11-30')?.status === 'success', 'the retry after the switch');
    expect(a.triggers.map((x) => x.attempt)).toEqual([1, 2]);
    assertInvariants(h.core);
  });

  it('operator: disabling the job ends its attempt out; cancelling a run ends it; a run by hand goes on when its job is disabled', async () => {
    h = await startJobsHarness();
    const a = await h.agent('reporter', hang, 'a');
    const jobId = h.createJob(JOB);
    const other = h.createJob({ ...JOB, name: 'other' });
    await h.advanceTo(DUE);
    expect(a.triggers).toHaveLength(2);
    const [tJob, tOther] = [a.triggers.find((t) => t.jobId === jobId)!, a.triggers.find((t) => t.jobId === other)!];
    h.core.jobs.setEnabled(jobId, false, { reason: 'season over', actor: 'bob' });
    await until(() => cancels(a).length === 1, 'run_cancelled (disabled)');
    expect(h.run(jobId, '2026-11-30')).toMatchObject({ status: 'failed', disposition: 'failed', errorClass: 'lost', lastError: 'cancelled: the job was disabled by bob: season over' });
    const run = h.core.jobs.cancelRun(tOther.runId, { reason: 'wrong data', actor: 'bob' });
    expect(run).toMatchObject({ status: 'failed', lastError: 'cancelled by bob: wrong data' });
    await until(() => cancels(a).length === 2, 'run_cancelled (cancel)');
    expect(cancels(a).map((c) => [c.runId, c.reason])).toEqual([
      [tJob.runId, 'operator'],
      [tOther.runId, 'operator'],
    ]);
    expect((await a.result(tOther, 'success')).error).toMatchObject({ code: 'not_holder' });
    expect(() => h!.core.jobs.cancelRun(tOther.runId, { reason: 'again', actor: 'bob' })).toThrow(expect.objectContaining({ code: 'invalid_transition' }));
    expect(() => h!.core.jobs.cancelRun(tOther.runId, { actor: 'bob' })).toThrow(expect.objectContaining({ code: 'bad_request' }));
    // A run by hand of a job disabled afterwards goes on (like its waiting slots would).
    h.core.jobs.setEnabled(jobId, true, { reason: 'back', actor: 'bob' });
    const byHand = h.core.jobs.triggerNow(jobId, { reason: 'once more', actor: 'bob', slot: '2026-12-01' });
    await until(() => a.triggers.some((t) => t.runId === byHand.run.id) && h!.core.jobs.getRun(byHand.run.id).run.status === 'running', 'the run by hand to start');
    h.core.jobs.setEnabled(jobId, false, { reason: 'again', actor: 'bob' });
    await h.settle();
    expect(h.core.jobs.getRun(byHand.run.id).run.status).toBe('running');
    expect(cancels(a)).toHaveLength(2);
    assertInvariants(h.core);
  });
});
