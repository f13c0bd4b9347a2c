/**
 * Taking work away (PROTOCOL §4): `lock_lost` to the holder at once, whatever removed the lock.
 * (`run_cancelled` is the jobs engine's: core/jobs/offers.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HubFixture, until } from '../tests/hub.testkit';
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
