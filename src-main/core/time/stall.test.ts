/**
 * A stall of the server right after it handed out work (issue 25, item 3), on a manual clock with
 * agents on the hub's port. `clock.stall(ms, io)` wakes as Node does: the late timers first (the
 * gap detector's pulse among them), then `io` — the frames the agents sent during the stall, handed
 * to the hub as the socket would, their group commit a real immediate — and the decisions the
 * timers deferred with `afterIo` only after that commit.
 *
 * The rule under test (gap-detector.ts): everything recorded before the wake is old — a run
 * dispatched or a task claimed within the last pulse before the stall keeps the time it had left —
 * and decisions wait for pending input.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SchedulerConfig } from '../../common/config';
import { HubFixture, until, type FakeSocket } from '../tests/hub.testkit';
import { pulseMs } from './gap-detector';

const SEC = 1000;
/** A pulse every 1.25 s (gaps over 5 s); nothing else expires by itself within these tests. */
const CONFIG: Partial<SchedulerConfig> = { heartbeatIntervalMs: 5000, heartbeatTimeoutS: 3600, sweepIntervalS: 60, lockWindowS: 60, reconnectGraceS: 30 };

let fx: HubFixture | undefined;
afterEach(() => {
  fx?.close();
  fx = undefined;
});

/** Sends a frame as the socket would deliver it (no waiting for the reply). */
function deliver(sock: FakeSocket, id: string, type: string, fields: Record<string, unknown>): void {
  sock.conn.receive(JSON.stringify({ id, type, ...fields }));
}

const reply = (sock: FakeSocket, id: string) => until(() => sock.replies(id)[0], `the reply to ${id}`);

function auditCount(f: HubFixture, type: string): number {
  return f.core.db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM audit WHERE type = ?').get(type)!.n;
}

function gapsRecorded(f: HubFixture): number[] {
  return f.core.db
    .prepare<[], { detail: string }>(`SELECT detail FROM audit WHERE type = 'clock.jump' ORDER BY id`)
    .all()
    .map((r) => (JSON.parse(r.detail) as { gapMs: number }).gapMs);
}

describe('a stall within the last pulse after a dispatch and a claim', () => {
  it('the run and the lock move by the gap; the success and the report sent during the stall count, once; nothing is dispatched again', async () => {
    fx = new HubFixture({}, CONFIG);
    const { core, clock } = fx;
    core.start();
    const rep = await fx.agent('reporter', 'rep');
    const dev = await fx.agent('dev', 'dev');
    const jobId = core.jobs.create({ name: 'once', role: 'reporter', schedule: { cron: '0 3 1 1 *', timezone: 'UTC' }, runTimeoutS: 30 }, { actor: 't' }).job.id;
    const taskId = core.tasks.create({ title: 'held through the stall', role: 'dev' }, { actor: 't' }).task.id;

    // The pulse reads the clocks at 1.25 s, 2.5 s, …: the work below is handed out 100 ms before
    // the next one, and the server stops before that pulse runs.
    const pulse = pulseMs(core.config);
    clock.advance(2 * pulse - 100);
    const { run } = core.jobs.triggerNow(jobId, { reason: 'stall test', actor: 't' });
    const trigger = await until(() => rep.sock.pushes('job_trigger')[0], 'the trigger');
    expect(trigger.runId).toBe(run.id);
    expect((await fx.call(rep.sock, 'run_started', { runId: run.id })).ok).toBe(true);
    const claim = await fx.call(dev.sock, 'claim');
    expect(claim.result.task.id).toBe(taskId);
    const deadlineBefore = Date.parse(core.jobs.getRun(run.id).run.deadline!);
    const lockBefore = Date.parse(core.tasks.get(taskId).lock!.expiresAt);

    // Two minutes away: past the run's 30 s deadline and the lock's 60 s window. The agents'
    // success and report were sent meanwhile; they wait in the socket.
    clock.stall(120 * SEC, () => {
      deliver(rep.sock, 'result', 'run_result', { runId: run.id, outcome: 'success' });
      deliver(dev.sock, 'report', 'report', { taskId, fence: claim.result.lock.fence, status: 'done' });
    });
    const [gapMs] = gapsRecorded(fx);
    expect(gapMs).toBeGreaterThanOrEqual(120 * SEC);
    // Handed out before the wake: old, so they keep the time they had left.
    expect(Date.parse(core.jobs.getRun(run.id).run.deadline!)).toBe(deadlineBefore + gapMs!);
    expect(Date.parse(core.tasks.get(taskId).lock!.expiresAt)).toBe(lockBefore + gapMs!);

    expect(await reply(rep.sock, 'result')).toMatchObject({ ok: true, result: { run: { status: 'success' } } });
    expect(await reply(dev.sock, 'report')).toMatchObject({ ok: true });
    await core.jobs.settled();
    clock.advance(2 * 60 * SEC); // sweeps of the watchdog and of the runner
    await core.jobs.settled();

    expect(core.jobs.getRun(run.id).run).toMatchObject({ status: 'success', attempt: 1, retryCount: 0 });
    expect(core.tasks.get(taskId)).toMatchObject({ status: 'done' });
    expect(rep.sock.pushes('job_trigger')).toHaveLength(1);
    expect(auditCount(fx, 'run.reject') + auditCount(fx, 'lock.expire') + auditCount(fx, 'lock.reject')).toBe(0);
    expect(gapsRecorded(fx)).toHaveLength(1);
  });

  it("a holder whose socket dropped within the last pulse keeps its reconnect grace: it resumes after the wake and its report counts", async () => {
    // The watchdog sweeps every 10 s: one sweep falls due during the stall and runs at the wake.
    fx = new HubFixture({}, { ...CONFIG, sweepIntervalS: 10 });
    const { core, clock } = fx;
    core.start();
    const tok = fx.token('dev');
    const dev = await fx.agent('dev', 'dev', tok);
    const taskId = core.tasks.create({ title: 'held across a reconnect', role: 'dev' }, { actor: 't' }).task.id;
    const claim = await fx.call(dev.sock, 'claim');
    const pulse = pulseMs(core.config);
    clock.advance(2 * pulse - 100);
    dev.sock.conn.closed(1006, '');
    await until(() => core.instances.get(dev.id).status === 'disconnected', 'disconnected');

    // 40 s away: past the 30 s grace by the wall clock, but the server lived only 100 ms of it.
    await clock.stall(40 * SEC);
    expect(auditCount(fx, 'instance.offline') + auditCount(fx, 'lock.expire')).toBe(0);
    expect(core.instances.get(dev.id).status).toBe('disconnected');

    const back = fx.open(tok);
    expect(await fx.call(back, 'hello', { role: 'dev', name: 'dev', instanceId: dev.id })).toMatchObject({ ok: true, result: { instanceId: dev.id } });
    expect(await fx.call(back, 'report', { taskId, fence: claim.result.lock.fence, status: 'done' })).toMatchObject({ ok: true });
    expect(core.tasks.get(taskId)).toMatchObject({ status: 'done' });
  });
});

describe('at the wake, decisions wait for the frames queued during the stall', () => {
  it("a predecessor's success queued in the socket is applied before the overlap decision: the next slot runs, not skipped_overlap", async () => {
    fx = new HubFixture({}, CONFIG);
    const { core, clock } = fx;
    clock.advance(30 * SEC);
    core.start();
    const ops = await fx.agent('ops', 'ops');
    const jobId = core.jobs.create({ name: 'every-5', role: 'ops', schedule: { everyS: 300, timezone: 'UTC' }, overlap: 'skip', runTimeoutS: 3600 }, { actor: 't' }).job.id;
    clock.advanceTo(Date.parse('2026-11-30T08:05:00.000Z'));
    const first = await until(() => ops.sock.pushes('job_trigger')[0], 'the 08:05 trigger');
    expect(first.slot).toBe('2026-11-30T08:05');
    expect((await fx.call(ops.sock, 'run_started', { runId: first.runId })).ok).toBe(true);
    clock.advanceTo(Date.parse('2026-11-30T08:09:50.000Z'));

    // The 08:05 run finishes at 08:09:55, during a stall that lasts past 08:10, when the next slot opens.
    clock.stall(20 * SEC, () => deliver(ops.sock, 'result', 'run_result', { runId: first.runId, outcome: 'success' }));
    expect(await reply(ops.sock, 'result')).toMatchObject({ ok: true });
    await core.jobs.settled();

    const runs = core.jobs.listRuns({ job: jobId, limit: 10 }).items.reverse();
    expect(runs.map((r) => [r.slot, r.status, r.disposition])).toEqual([
      ['2026-11-30T08:05', 'success', 'ran'],
      ['2026-11-30T08:10', 'pending', 'dispatched'],
    ]);
    expect(ops.sock.pushes('job_trigger').map((t) => t.slot)).toEqual(['2026-11-30T08:05', '2026-11-30T08:10']);
  });

  it('a gap that cannot be recorded yet holds the pass: no run is judged by time nobody lived', async () => {
    fx = new HubFixture({}, CONFIG);
    const { core, clock } = fx;
    core.start();
    const rep = await fx.agent('reporter', 'rep');
    const other = await fx.agent('dev', 'other');
    const jobId = core.jobs.create({ name: 'once', role: 'reporter', schedule: { cron: '0 3 1 1 *', timezone: 'UTC' }, runTimeoutS: 30 }, { actor: 't' }).job.id;
    const { run } = core.jobs.triggerNow(jobId, { reason: 'test', actor: 't' });
    await until(() => rep.sock.pushes('job_trigger')[0], 'the trigger');
    expect((await fx.call(rep.sock, 'run_started', { runId: run.id })).ok).toBe(true);
    const deadline = Date.parse(core.jobs.getRun(run.id).run.deadline!);
    let refuse = true;
    core.gaps.onGap('flaky', () => {
      if (refuse) throw new Error('disk says no');
      return {};
    });

    clock.jump(3600 * SEC); // the machine slept an hour; no timer has run yet
    other.sock.conn.closed(1006, ''); // a session ends: a pass is asked for before any timer read the clocks
    await until(() => core.instances.get(other.id).status === 'disconnected', 'the disconnect');
    await core.jobs.settled();
    expect(core.jobs.getRun(run.id).run).toMatchObject({ status: 'running', retryCount: 0 });

    refuse = false;
    clock.advance(pulseMs(core.config)); // the next reading records the gap
    await core.jobs.settled();
    expect(core.jobs.getRun(run.id).run).toMatchObject({ status: 'running', retryCount: 0, deadline: new Date(deadline + 3600 * SEC).toISOString() });
    expect(rep.sock.pushes('job_trigger')).toHaveLength(1);
  });
});
