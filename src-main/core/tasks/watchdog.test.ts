/** Time-travel tests: hours pass in milliseconds on a manual clock. */
import { afterEach, describe, expect, it } from 'vitest';
import { recoveryBoundS } from '../../common/config';
import { makeTestCore, onlineInstance, type TestCore } from '../tests/test-core';
import { GrantLog } from './watchdog';

let core: TestCore;
afterEach(() => core?.close());

const taskStatus = (id: number) => core.tasks.get(id).status;

describe('watchdog (time travel)', () => {
  it('renewing every 30 minutes keeps a 2-hour lock alive through a 6-hour task', () => {
    core = makeTestCore(); // defaults: 7200 s window, 60 s sweep, 120 s heartbeat timeout
    core.start();
    const t = core.tasks.create({ title: 'long', role: 'dev' }, { actor: 't' }).task;
    const inst = onlineInstance(core);
    const c = core.locks.claim({ instanceId: inst });
    for (let minute = 0; minute < 6 * 60; minute += 1) {
      core.clock.advance(60_000);
      core.instances.heartbeat(inst);
      if (minute % 30 === 29) core.locks.renew({ instanceId: inst, taskId: t.id, fence: c.lock!.fence });
    }
    expect(taskStatus(t.id)).toBe('in_progress');
    expect(core.tasks.get(t.id).lock!.instanceId).toBe(inst);
    expect(core.db.prepare(`SELECT count(*) AS n FROM audit WHERE type = 'lock.expire'`).get()).toEqual({ n: 0 });
  });

  it('an unrenewed lock expires at the first sweep after its window: back to backlog, marked previously expired', () => {
    core = makeTestCore({ lockWindowS: 600, heartbeatTimeoutS: 100_000, sweepIntervalS: 60 });
    core.start();
    const t = core.tasks.create({ title: 't', role: 'dev' }, { actor: 't' }).task;
    const inst = onlineInstance(core);
    core.locks.claim({ instanceId: inst });
    core.clock.advance(599_000);
    expect(taskStatus(t.id)).toBe('in_progress');
    core.clock.advance(60_000);
    const task = core.tasks.get(t.id);
    expect(task.status).toBe('backlog');
    expect(task.previouslyExpired).toBe(true);
    expect(task.lock).toBeNull();
    const exp = core.db.prepare(`SELECT instance_id, reason, reclaimed_by FROM lock_expiries`).all();
    expect(exp).toEqual([{ instance_id: inst, reason: 'lock_window', reclaimed_by: null }]);
    // the expired-lock card learns who re-claimed it
    const other = onlineInstance(core, 'dev', 'other');
    core.instances.heartbeat(inst);
    core.locks.claim({ instanceId: other });
    expect(core.db.prepare(`SELECT reclaimed_by FROM lock_expiries`).get()).toEqual({ reclaimed_by: other });
  });

  it('a silent instance goes offline after the heartbeat timeout and its locks expire', () => {
    core = makeTestCore({ heartbeatTimeoutS: 120, sweepIntervalS: 60 });
    core.start();
    const t = core.tasks.create({ title: 't', role: 'dev' }, { actor: 't' }).task;
    const quiet = onlineInstance(core, 'dev', 'quiet');
    const chatty = onlineInstance(core, 'dev', 'chatty');
    core.locks.claim({ instanceId: quiet });
    for (let s = 0; s < 180; s += 20) {
      core.clock.advance(20_000);
      core.instances.heartbeat(chatty);
    }
    expect(core.instances.get(quiet).status).toBe('offline');
    expect(core.instances.get(chatty).status).toBe('online');
    expect(taskStatus(t.id)).toBe('backlog');
    const ev = core.db.prepare(`SELECT detail FROM audit WHERE type = 'lock.expire'`).get() as { detail: string };
    expect(JSON.parse(ev.detail)).toMatchObject({ holder: quiet, reason: 'heartbeat_timeout' });
  });

  it('the recovery bound min(lock window, heartbeat timeout) + sweep holds for an abandoned task', () => {
    for (const cfg of [
      { lockWindowS: 7200, heartbeatTimeoutS: 120, sweepIntervalS: 60 },
      { lockWindowS: 90, heartbeatTimeoutS: 120, sweepIntervalS: 60 },
      { lockWindowS: 30, heartbeatTimeoutS: 20, sweepIntervalS: 15 },
    ]) {
      core = makeTestCore(cfg);
      core.start();
      const t = core.tasks.create({ title: 't', role: 'dev' }, { actor: 't' }).task;
      const inst = onlineInstance(core);
      const claimedAt = core.clock.now();
      core.locks.claim({ instanceId: inst });
      // the agent dies silently right after claiming: step one second at a time until recovery
      let recoveredAfter = -1;
      for (let s = 1; s <= 3 * 3600; s++) {
        core.clock.advance(1000);
        if (taskStatus(t.id) === 'backlog') {
          recoveredAfter = (core.clock.now() - claimedAt) / 1000;
          break;
        }
      }
      expect(recoveredAfter).toBeGreaterThan(0);
      expect(recoveredAfter).toBeLessThanOrEqual(recoveryBoundS(cfg));
      // and not absurdly early: never before the shorter of the two limits
      expect(recoveredAfter).toBeGreaterThanOrEqual(Math.min(cfg.lockWindowS, cfg.heartbeatTimeoutS));
      core.close();
    }
  });

  it('a disconnected instance keeps its locks for the reconnect grace, then they expire', () => {
    core = makeTestCore({ reconnectGraceS: 10 });
    core.start();
    const t = core.tasks.create({ title: 't', role: 'dev' }, { actor: 't' }).task;
    const inst = onlineInstance(core);
    core.locks.claim({ instanceId: inst });
    core.instances.disconnect(inst, 'socket closed');
    core.clock.advance(5_000);
    expect(taskStatus(t.id)).toBe('in_progress');
    // resuming inside the grace keeps the lock
    const resumed = core.instances.register({ role: 'dev', name: 'agent', resume: inst });
    expect(resumed.id).toBe(inst);
    expect(resumed.heldTaskIds).toEqual([t.id]);
    core.instances.disconnect(inst, 'socket closed again');
    core.clock.advance(10_000);
    core.watchdog.sweep();
    expect(taskStatus(t.id)).toBe('backlog');
    expect(core.instances.get(inst).status).toBe('offline');
  });

  it('a sleep of 5 hours is a clock jump, not mass expiry: agents and locks get their remaining time', () => {
    core = makeTestCore({ lockWindowS: 7200, heartbeatTimeoutS: 120, sweepIntervalS: 60 });
    core.start();
    const t = core.tasks.create({ title: 't', role: 'dev' }, { actor: 't' }).task;
    const inst = onlineInstance(core);
    const c = core.locks.claim({ instanceId: inst });
    core.clock.advance(30_000);
    core.clock.jump(5 * 3600_000); // the machine sleeps: wall time moves, timers do not
    core.clock.advance(60_000); // it wakes; the next watchdog tick sees the gap
    expect(core.instances.get(inst).status).toBe('online');
    expect(taskStatus(t.id)).toBe('in_progress');
    const jump = core.db.prepare(`SELECT detail FROM audit WHERE type = 'clock.jump'`).get() as { detail: string };
    expect(JSON.parse(jump.detail).gapMs).toBeGreaterThan(4 * 3600_000);
    // the lock kept (about) the time it had left before the sleep
    const lock = core.tasks.get(t.id).lock!;
    const left = Date.parse(lock.expiresAt) - core.clock.now();
    expect(left).toBeGreaterThan(7000_000);
    expect(left).toBeLessThanOrEqual(7200_000);
    // if the agent does not come back after waking, the heartbeat timeout applies from the wake-up
    core.clock.advance(200_000);
    expect(core.instances.get(inst).status).toBe('offline');
    expect(core.locks.claim({ instanceId: onlineInstance(core, 'dev', 'b') }).task!.id).toBe(t.id);
    expect(c.lock!.fence).toBe(1);
  });

  it('a backward clock step keeps lock windows and heartbeat timeouts honest', () => {
    core = makeTestCore({ lockWindowS: 600, heartbeatTimeoutS: 120, sweepIntervalS: 60 });
    core.start();
    const t = core.tasks.create({ title: 't', role: 'dev' }, { actor: 't' }).task;
    const inst = onlineInstance(core);
    const claimedAt = core.clock.now();
    core.locks.claim({ instanceId: inst });
    core.clock.advance(50_000);
    core.clock.jump(-3600_000); // one hour back
    core.clock.advance(20_000); // the gap detector's next pulse sees time went backwards
    // 70 s of real time since the claim: 530 s left, on the new wall clock.
    const lock = core.tasks.get(t.id).lock!;
    expect(Date.parse(lock.expiresAt) - core.clock.now()).toBe(600_000 - 70_000);
    expect(Date.parse(lock.expiresAt)).toBe(claimedAt - 3600_000 + 600_000);
    // A silent agent goes offline at the first sweep after 120 s of real silence, not an hour later.
    core.clock.advance(40_000); // 110 s of silence
    expect(core.instances.get(inst).status).toBe('online');
    core.clock.advance(70_000); // 180 s: the sweep at 120 s took it
    expect(core.instances.get(inst).status).toBe('offline');
    expect(taskStatus(t.id)).toBe('backlog');
  });
});

describe('the grant log (what a gap moves)', () => {
  it('names each task once, in the order of its first grant, judged by its latest grant; clear forgets all', () => {
    const log = new GrantLog();
    for (let i = 0; i < 3000; i++) log.add(i % 7, 1000 + i, i); // grows past its first arrays
    log.add(5, 9_000, 9_000);
    log.add(2, 9_001, 9_001);
    expect(log.size).toBe(3002);
    // Latest grant after mono 8 000: tasks 5 and 2 only, in first-grant order (2 before 5).
    expect(log.latestWhere((at) => at.mono >= 8_000)).toEqual([2, 5]);
    expect(log.latestWhere((at) => at.wall - at.mono === 1000)).toEqual([0, 1, 3, 4, 6]);
    log.clear();
    expect(log.latestWhere(() => true)).toEqual([]);
    log.add(42, 1, 1);
    expect(log.latestWhere(() => true)).toEqual([42]);
  });
});
