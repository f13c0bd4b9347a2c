import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConsoleEvent } from '../../common/console-api';
import type { Job, Run } from '../../common/job-schema';
import { makeTestCore, onlineInstance, type TestCore } from '../../core/tests/test-core';
import { coalesce, ConsoleEventHub, mapCoreEvent, type EventTimers } from './events';

/** Timers driven by hand. */
function manualTimers() {
  const pending = new Map<number, () => void>();
  let seq = 0;
  const timers: EventTimers = {
    setTimeout: (fn) => {
      pending.set(++seq, fn);
      return seq;
    },
    clearTimeout: (h) => void pending.delete(h as number),
  };
  return {
    timers,
    get armed() {
      return pending.size;
    },
    fire() {
      const fns = [...pending.values()];
      pending.clear();
      for (const fn of fns) fn();
    },
  };
}

let core: TestCore;
beforeEach(() => {
  core = makeTestCore();
});
afterEach(() => core.close());

describe('mapCoreEvent', () => {
  it('maps task, instance, lock and audit events; alerts for expired locks', () => {
    const inst = onlineInstance(core, 'dev', 'alice');
    const seen: ConsoleEvent[] = [];
    const d = core.events.onAny((e) => seen.push(...mapCoreEvent(e)));
    const task = core.tasks.create({ title: 't', role: 'dev' }, { actor: 'x' }).task;
    core.locks.claim({ instanceId: inst });
    core.instances.goOffline(inst, 'heartbeat_timeout');
    d.dispose();
    const types = seen.map((e) => e.type);
    expect(types).toContain('task.changed');
    expect(types).toContain('audit.appended');
    expect(seen).toContainEqual({ type: 'lock.expired', taskId: task.id, instanceId: inst });
    expect(seen).toContainEqual({ type: 'instance.changed', instanceId: inst, status: 'offline' });
    const alert = seen.find((e) => e.type === 'alert');
    expect(alert).toMatchObject({ level: 'warning', title: 'Lock expired' });
    expect(seen.filter((e) => e.type === 'task.changed').at(-1)).toEqual({ type: 'task.changed', taskId: task.id, role: 'dev', status: 'backlog' });
    // The loss itself adds nothing (lock.expired says it); the holder's "lost its lock" list refreshes its row.
    expect(mapCoreEvent({ type: 'lock.lost', taskId: task.id, instanceId: inst, fence: 1, reason: 'expired' })).toEqual([]);
    expect(mapCoreEvent({ type: 'session.lost_locks', sessionId: 'ses_1', instanceId: inst, taskIds: [task.id] })).toEqual([{ type: 'instance.changed', instanceId: inst, status: 'online' }]);
  });

  it('kill switch changes become settings.changed; jobs events map to run/job changes and alerts', () => {
    const base = { id: 1, at: '2026-01-01T00:00:00.000Z', actor: 'a', traceId: null, prevHash: '0', hash: '1' };
    expect(mapCoreEvent({ type: 'audit.appended', event: { ...base, type: 'operator.kill_switch', subject: 'settings:killSwitch', detail: {} } })).toContainEqual({
      type: 'settings.changed',
    });
    const run = { id: 'run_1', jobId: 'job_1', job: 'daily report', slot: '2026-11-30', status: 'failed' } as unknown as Run;
    expect(mapCoreEvent({ type: 'run.needs_human', run, message: 'payment approval' })).toEqual([
      expect.objectContaining({ type: 'alert', level: 'critical', title: 'Needs a human' }),
    ]);
    expect(mapCoreEvent({ type: 'run.alert', run, kind: 'needs_human', message: 'x' })).toEqual([]);
    expect(mapCoreEvent({ type: 'run.alert', run, kind: 'missed', message: 'machine was off' })).toEqual([
      { type: 'alert', level: 'info', title: 'Slot missed', body: 'daily report 2026-11-30: machine was off' },
    ]);
    expect(mapCoreEvent({ type: 'run.finished', run })).toEqual([{ type: 'run.changed', runId: 'run_1', jobId: 'job_1', status: 'failed' }]);
    expect(mapCoreEvent({ type: 'job.changed', job: { id: 'job_1' } as unknown as Job, action: 'pause', actor: 'x' })).toEqual([{ type: 'job.changed', jobId: 'job_1' }]);
    expect(mapCoreEvent({ type: 'jobs.settings', settings: { killSwitch: { on: true, reason: 'r', by: 'x', at: null }, globalConcurrency: null, loopBreaker: { sameErrorTimes: 3 } }, actor: 'x' })).toEqual([
      { type: 'settings.changed' },
    ]);
    expect(mapCoreEvent({ type: 'clock.jumped', from: 0, to: 3_600_000, gapMs: 3_600_000 })).toEqual([
      expect.objectContaining({ type: 'alert', level: 'info', title: 'Woke up after a pause' }),
    ]);
    expect(mapCoreEvent({ type: 'clock.jumped', from: 0, to: 110_000, gapMs: 110_000, kind: 'stall', loopGapMs: 110_000 })).toEqual([
      {
        type: 'alert',
        level: 'info',
        title: 'Gaffer was paused',
        body: 'Gaffer itself was paused for 2 min; lock windows, heartbeats and run deadlines were shifted instead of expiring.',
      },
    ]);
    expect(mapCoreEvent({ type: 'task.renewed', taskId: 1, instanceId: 'i', fence: 1, expiresAt: 0 })).toEqual([]);
  });
});

describe('coalesce', () => {
  it('keeps the last change per subject, samples audit rows, merges alerts', () => {
    const audit = (id: number): ConsoleEvent => ({
      type: 'audit.appended',
      event: { id, at: '', type: 'lock.claim', actor: 'a', subject: 's', detail: {}, traceId: null, prevHash: '', hash: '' },
    });
    const alert = (n: number): ConsoleEvent => ({ type: 'alert', level: 'warning', title: 'Lock expired', body: `Task ${n}.` });
    const out = coalesce(
      [
        { type: 'task.changed', taskId: 1, role: 'dev', status: 'backlog' },
        { type: 'task.changed', taskId: 2, role: 'dev', status: 'backlog' },
        { type: 'task.changed', taskId: 1, role: 'dev', status: 'in_progress' },
        ...Array.from({ length: 10 }, (_, i) => audit(i + 1)),
        alert(1),
        alert(2),
        alert(3),
        alert(4),
        { type: 'settings.changed' },
        { type: 'settings.changed' },
      ],
      3,
    );
    expect(out.filter((e) => e.type === 'task.changed')).toEqual([
      { type: 'task.changed', taskId: 2, role: 'dev', status: 'backlog' },
      { type: 'task.changed', taskId: 1, role: 'dev', status: 'in_progress' },
    ]);
    expect(out.filter((e) => e.type === 'audit.appended').map((e) => (e.type === 'audit.appended' ? e.event.id : 0))).toEqual([8, 9, 10]);
    expect(out.filter((e) => e.type === 'settings.changed')).toHaveLength(1);
    const alerts = out.filter((e) => e.type === 'alert');
    expect(alerts).toEqual([{ type: 'alert', level: 'warning', title: 'Lock expired (×4)', body: 'Task 1. Task 2. Task 3. …and 1 more.' }]);
  });
});

describe('ConsoleEventHub', () => {
  it('batches a burst into one delivery and listens to the core only while subscribed', () => {
    const t = manualTimers();
    const hub = new ConsoleEventHub(core.events, { timers: t.timers, maxAuditPerBatch: 50 });
    const batches: ConsoleEvent[][] = [];
    core.tasks.create({ title: 'before', role: 'dev' }, { actor: 'x' }); // nobody listening: dropped
    const sub = hub.subscribe((b) => batches.push(b));
    for (let i = 0; i < 500; i++) core.tasks.create({ title: `t${i}`, role: 'dev' }, { actor: 'x' });
    expect(batches).toHaveLength(0);
    expect(t.armed).toBe(1);
    t.fire();
    expect(batches).toHaveLength(1);
    const batch = batches[0]!;
    expect(batch.filter((e) => e.type === 'task.changed')).toHaveLength(500);
    expect(batch.filter((e) => e.type === 'audit.appended')).toHaveLength(50);
    sub.dispose();
    expect(t.armed).toBe(0);
    core.tasks.create({ title: 'after', role: 'dev' }, { actor: 'x' });
    expect(t.armed).toBe(0);
    hub.dispose();
  });

  it('an agent dying with many locks raises one merged alert', () => {
    const t = manualTimers();
    const hub = new ConsoleEventHub(core.events, { timers: t.timers });
    const inst = onlineInstance(core);
    for (let i = 0; i < 5; i++) {
      core.tasks.create({ title: `t${i}`, role: 'dev' }, { actor: 'x' });
      core.locks.claim({ instanceId: inst });
    }
    const batches: ConsoleEvent[][] = [];
    hub.subscribe((b) => batches.push(b));
    core.instances.goOffline(inst, 'heartbeat_timeout');
    t.fire();
    const b = batches[0]!;
    expect(b.filter((e) => e.type === 'lock.expired')).toHaveLength(5);
    expect(b.filter((e) => e.type === 'alert')).toEqual([expect.objectContaining({ title: 'Lock expired (×5)' })]);
    hub.dispose();
  });

  it('a throwing listener does not stop the others', () => {
    const t = manualTimers();
    const errors: string[] = [];
    const hub = new ConsoleEventHub(core.events, { timers: t.timers, logger: { info() {}, warn() {}, error: (m) => errors.push(m) } });
    const got: number[] = [];
    hub.subscribe(() => {
      throw new Error('boom');
    });
    hub.subscribe((b) => got.push(b.length));
    core.tasks.create({ title: 'x', role: 'dev' }, { actor: 'x' });
    t.fire();
    expect(got).toHaveLength(1);
    expect(errors).toEqual(['console event listener failed']);
    hub.dispose();
  });

  it('uses real timers by default: a batch arrives within ~100 ms', async () => {
    const hub = new ConsoleEventHub(core.events);
    const got = new Promise<ConsoleEvent[]>((resolve) => hub.subscribe(resolve));
    const t0 = Date.now();
    core.tasks.create({ title: 'x', role: 'dev' }, { actor: 'x' });
    const batch = await got;
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(batch.some((e) => e.type === 'task.changed')).toBe(true);
    hub.dispose();
  });
});
