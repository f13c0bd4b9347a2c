/**
 * Taking work away (PROTOCOL §4): `lock_lost` to the holder at once, whatever removed the lock;
 * `run_cancelled` and the refusal of the attempt's later run requests.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HubFixture, TestSink, trigger, until } from './hub.testkit';
import type { HubOptions } from './ports';

let h: HubFixture | undefined;
afterEach(() => {
  h?.close();
  h = undefined;
});

function setup(hub: HubOptions = {}, config: Record<string, number> = {}): HubFixture {
  h = new HubFixture(hub, config);
  return h;
}

/** An agent holding one claimed task. */
async function holder(f: HubFixture, name = 'a') {
  const task = f.core.tasks.create({ title: `t-${name}`, role: 'dev' }, { actor: 'op' }).task;
  const a = await f.agent('dev', name);
  const claim = await f.call(a.sock, 'claim');
  expect(claim.result.task.id).toBe(task.id);
  return { ...a, taskId: task.id as number, fence: claim.result.lock.fence as number };
}

describe('lock_lost', () => {
  it('is pushed at once on force-release, cancel and lock-window expiry; the old holder is listed as having lost it', async () => {
    const f = setup({}, { lockWindowS: 60 });
    const released = await holder(f, 'a');
    const cancelled = await holder(f, 'b');
    const expired = await holder(f, 'c');
    f.core.tasks.forceRelease({ taskId: released.taskId, reason: 'stuck', actor: 'operator:ann' });
    f.core.tasks.cancel({ taskId: cancelled.taskId, reason: 'obsolete', actor: 'operator:ann' });
    expect(released.sock.pushes('lock_lost')).toEqual([{ type: 'lock_lost', taskId: released.taskId, fence: released.fence, reason: 'force_release' }]);
    expect(cancelled.sock.pushes('lock_lost')).toEqual([{ type: 'lock_lost', taskId: cancelled.taskId, fence: cancelled.fence, reason: 'cancelled' }]);
    expect(expired.sock.pushes('lock_lost')).toEqual([]);
    // c renews nothing; its window passes and the watchdog sweeps (a and b still heartbeat).
    f.clock.advance(61_000);
    for (const x of [released, cancelled, expired]) await f.call(x.sock, 'heartbeat');
    f.core.watchdog.sweep();
    expect(expired.sock.pushes('lock_lost')).toEqual([{ type: 'lock_lost', taskId: expired.taskId, fence: expired.fence, reason: 'expired' }]);
    expect(f.core.hub.lostLocksOf(released.id)).toEqual([{ taskId: released.taskId, fence: released.fence, reason: 'force_release', at: expect.any(Number) }]);
    expect(f.core.hub.lostLocksOf(expired.id).map((l) => l.reason)).toEqual(['expired']);
    // Nobody else was told anything.
    expect([released, cancelled].flatMap((x) => x.sock.pushes('lock_lost'))).toHaveLength(2);
  });

  it('goes to the holder before its socket is closed when the watchdog takes the instance offline', async () => {
    const f = setup({}, { heartbeatTimeoutS: 120 });
    const a = await holder(f);
    f.clock.advance(121_000);
    f.core.watchdog.sweep();
    await until(() => a.sock.closedWith);
    expect(a.sock.closedWith!.code).toBe(4410);
    expect(a.sock.pushes('lock_lost')).toEqual([{ type: 'lock_lost', taskId: a.taskId, fence: a.fence, reason: 'expired' }]);
  });

  it('is not sent for the holder’s own report, nor to an instance without a live session', async () => {
    const f = setup();
    const a = await holder(f, 'a');
    await f.call(a.sock, 'report', { taskId: a.taskId, fence: a.fence, status: 'done' });
    const b = await holder(f, 'b');
    b.sock.conn.closed(1006, '');
    await until(() => f.core.instances.get(b.id).status === 'disconnected');
    f.core.tasks.forceRelease({ taskId: b.taskId, reason: 'stuck', actor: 'operator:ann' });
    expect(a.sock.pushes('lock_lost')).toEqual([]);
    expect(b.sock.pushes('lock_lost')).toEqual([]);
    expect(f.core.hub.lostLocksOf(b.id)).toEqual([]);
  });

  it('"lost its lock" lasts until the instance reports that task (refused, audited) or disconnects', async () => {
    const f = setup();
    const changes: number[][] = [];
    f.core.events.on('session.lost_locks', (e) => changes.push(e.taskIds));
    const a = await holder(f, 'a');
    const second = f.core.tasks.create({ title: 'two', role: 'dev' }, { actor: 'op' }).task;
    const claim2 = await f.call(a.sock, 'claim');
    f.core.tasks.forceRelease({ taskId: a.taskId, reason: 'stuck', actor: 'operator:ann' });
    f.core.tasks.forceRelease({ taskId: second.id, reason: 'stuck', actor: 'operator:ann' });
    expect(f.core.hub.lostLocksOf(a.id).map((l) => l.taskId)).toEqual([a.taskId, second.id]);
    const late = await f.call(a.sock, 'report', { taskId: a.taskId, fence: a.fence, status: 'backlog', note: 'late' });
    expect(late.error).toMatchObject({ code: 'not_holder', status: 409 });
    expect(f.core.hub.lostLocksOf(a.id).map((l) => l.taskId)).toEqual([second.id]);
    await until(() => f.audits('lock.reject').length === 1);
    expect(JSON.parse(f.audits('lock.reject')[0]!.detail)).toMatchObject({ op: 'report', code: 'not_holder', fence: a.fence });
    expect(f.core.tasks.get(a.taskId).note).toBeNull();
    a.sock.conn.closed(1000, '');
    expect(f.core.hub.lostLocksOf(a.id)).toEqual([]);
    expect(changes).toEqual([[a.taskId], [a.taskId, second.id], [second.id]]);
    expect(claim2.result.lock.fence).toBe(1);
  });
});

describe('run_cancelled', () => {
  it('is pushed to the acknowledged instance; its later run_step / run_result are not_holder and audited', async () => {
    const f = setup();
    const sink = new TestSink();
    f.core.hub.setRunSink(sink);
    const a = await f.agent('ops', 'a');
    const outcome = f.core.hub.pushJobTrigger('ops', trigger('run_7'));
    expect((await f.call(a.sock, 'run_started', { runId: 'run_7' })).ok).toBe(true);
    expect(await outcome).toMatchObject({ status: 'acknowledged', instanceId: a.id });
    expect(f.core.hub.cancelRun('run_7', a.id, 'operator')).toBe(true);
    expect(a.sock.pushes('run_cancelled')).toEqual([{ type: 'run_cancelled', runId: 'run_7', reason: 'operator' }]);
    const step = await f.call(a.sock, 'run_step', { runId: 'run_7', step: 'send' });
    const result = await f.call(a.sock, 'run_result', { runId: 'run_7', outcome: 'success' });
    for (const r of [step, result]) expect(r.error).toMatchObject({ code: 'not_holder', status: 409, message: expect.stringContaining('cancelled (operator)') });
    expect(sink.steps).toEqual([]);
    await until(() => f.audits('run.reject').length === 2);
    const rows = f.audits('run.reject');
    expect(rows.map((r) => [r.subject, r.actor, r.trace_id, JSON.parse(r.detail).op])).toEqual([
      ['run:run_7', a.id, 'trace-1', 'run_step'],
      ['run:run_7', a.id, 'trace-1', 'run_result'],
    ]);
    await until(() => f.audits('trigger.cancel').length === 1);
    expect(JSON.parse(f.audits('trigger.cancel')[0]!.detail)).toEqual({ instanceId: a.id, reason: 'operator', delivered: true });
  });

  it('a new offer of the run lifts the refusal; an instance without a session is not pushed to', async () => {
    const f = setup();
    const sink = new TestSink();
    f.core.hub.setRunSink(sink);
    const a = await f.agent('ops', 'a');
    expect(f.core.hub.cancelRun('run_8', 'inst_gone', 'deadline')).toBe(false);
    f.core.hub.cancelRun('run_8', a.id, 'deadline');
    expect((await f.call(a.sock, 'run_step', { runId: 'run_8', step: 's' })).error).toMatchObject({ code: 'not_holder' });
    void f.core.hub.pushJobTrigger('ops', { ...trigger('run_8'), attempt: 2 });
    expect((await f.call(a.sock, 'run_started', { runId: 'run_8' })).ok).toBe(true);
    expect((await f.call(a.sock, 'run_step', { runId: 'run_8', step: 's' })).ok).toBe(true);
    expect(sink.steps).toEqual([[a.id, 's']]);
  });

  it('a run_started refused because the run is offered elsewhere is audited too', async () => {
    const f = setup();
    f.core.hub.setRunSink(new TestSink());
    const a = await f.agent('ops', 'a');
    const b = await f.agent('ops', 'b');
    void f.core.hub.pushJobTrigger('ops', trigger('run_9'));
    const offered = a.sock.pushes('job_trigger').length === 1 ? a : b;
    const other = offered === a ? b : a;
    expect((await f.call(other.sock, 'run_started', { runId: 'run_9' })).error).toMatchObject({ code: 'not_holder' });
    await until(() => f.audits('run.reject').length === 1);
    expect(f.audits('run.reject')[0]).toMatchObject({ subject: 'run:run_9', actor: other.id });
  });
});
