/**
 * The hub's hot path (claim, report, renew) does no avoidable work per call (issue 32): each test
 * here pins one cut that the hub profile (bench/hub-profile.ts) showed was a share of its CPU.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LoopBreaker } from '../budgets/loop-breaker';
import { UsageLedger } from '../logs/usage-store';
import { makeTestCore, onlineInstance, type TestCore } from '../tests/test-core';

let core: TestCore;
afterEach(() => {
  vi.restoreAllMocks();
  core?.close();
});

describe('claim hot path', () => {
  it('a claim and its report build no Intl.DateTimeFormat (the spend windows read the zone only to word a message)', () => {
    core = makeTestCore();
    for (let i = 0; i < 3; i++) core.tasks.create({ title: `t${i}`, role: 'dev' }, { actor: 't' });
    const inst = onlineInstance(core);
    const formats = vi.spyOn(Intl, 'DateTimeFormat');
    for (let i = 0; i < 3; i++) {
      const { task, lock } = core.locks.claim({ instanceId: inst });
      core.locks.report({ instanceId: inst, taskId: task!.id, fence: lock!.fence, status: 'done' });
    }
    expect(formats).not.toHaveBeenCalled();
  });
});

describe('report hot path', () => {
  it('a done report does not read the jobs settings (the loop breaker reads its count only for a retryable error)', () => {
    core = makeTestCore();
    core.tasks.create({ title: 't', role: 'dev' }, { actor: 't' });
    const inst = onlineInstance(core);
    const { task, lock } = core.locks.claim({ instanceId: inst });
    const settings = vi.spyOn(core.jobs, 'settings');
    core.locks.report({ instanceId: inst, taskId: task!.id, fence: lock!.fence, status: 'done' });
    expect(settings).not.toHaveBeenCalled();
  });
});

describe('claim gate: the budgets settings', () => {
  it('are read once per store epoch, however many claims; a put and a rollback read them afresh', () => {
    core = makeTestCore();
    for (let i = 0; i < 5; i++) core.tasks.create({ title: `t${i}`, role: 'dev' }, { actor: 't' });
    const inst = onlineInstance(core);
    const spent = new UsageLedger(core.db);
    core.store.write(() => spent.add({ subject: 'task:99', attempt: 1, role: 'dev', jobId: null, instanceId: inst, costUsd: 2, at: core.clock.now() }));
    const read = vi.spyOn((core.budgets as unknown as { row: { read(): unknown } }).row, 'read');
    const cycle = () => {
      const { task, lock } = core.locks.claim({ instanceId: inst });
      if (task) core.locks.report({ instanceId: inst, taskId: task.id, fence: lock!.fence, status: 'done' });
      return task;
    };
    expect(cycle()).not.toBeNull();
    expect(cycle()).not.toBeNull();
    expect(read).toHaveBeenCalledTimes(1);
    // The put drops what the claim path kept: dev's $1 cap, already spent, gates the next claim.
    core.budgets.put({ perRoleDailyUsd: { dev: 1 }, actor: 'op', reason: 'test' });
    expect(cycle()).toBeNull();
    const afterPut = read.mock.calls.length;
    expect(cycle()).toBeNull();
    expect(read).toHaveBeenCalledTimes(afterPut);
    // A rolled-back write may have changed the row: read afresh.
    expect(() => core.store.write(() => { throw new Error('rolled back'); })).toThrow('rolled back');
    expect(cycle()).toBeNull();
    expect(read).toHaveBeenCalledTimes(afterPut + 1);
  });
});

describe('report hot path: the loop breaker', () => {
  it('a success runs no DELETE while no error streak exists; a streak is still counted and cleared, and a rollback reads the count afresh', () => {
    core = makeTestCore();
    const breaker = new LoopBreaker({ db: core.db, clock: core.clock, store: core.store }, core.inbox);
    const clear = vi.spyOn((breaker as unknown as { q: { clear: { run(s: string): unknown } } }).q.clear, 'run');
    const note = (subject: string, error: string | null) => core.store.write(() => breaker.note(subject, error));
    note('task:1', null);
    expect(clear).not.toHaveBeenCalled();
    expect(note('task:2', 'boom')).toBe(1);
    expect(note('task:2', 'boom')).toBe(2);
    note('task:3', null); // a streak exists (another subject's): the DELETE runs
    expect(clear).toHaveBeenCalledTimes(1);
    note('task:2', null); // the streak's own success clears it
    expect(clear).toHaveBeenCalledTimes(2);
    expect(note('task:2', 'boom')).toBe(1);
    note('task:2', null);
    note('task:4', null); // none left: no DELETE
    expect(clear).toHaveBeenCalledTimes(3);
    // A streak written in a write that rolls back never existed.
    expect(() => core.store.write(() => { breaker.note('task:5', 'boom'); throw new Error('rolled back'); })).toThrow('rolled back');
    note('task:6', null);
    expect(clear).toHaveBeenCalledTimes(3);
    expect(note('task:5', 'boom')).toBe(1);
  });
});

describe('claim hot path: the claiming instance', () => {
  it('its row is read once per store epoch; a disconnect, going offline or a rollback is seen by the next claim', () => {
    core = makeTestCore();
    for (let i = 0; i < 6; i++) core.tasks.create({ title: `t${i}`, role: 'dev' }, { actor: 't' });
    const inst = onlineInstance(core);
    const read = vi.spyOn((core.locks as unknown as { instanceOf: { get(id: string): unknown } }).instanceOf, 'get');
    core.locks.claim({ instanceId: inst });
    core.locks.claim({ instanceId: inst });
    expect(read).toHaveBeenCalledTimes(1);
    // A rolled-back write may have changed the row: read afresh.
    expect(() => core.store.write(() => { throw new Error('rolled back'); })).toThrow('rolled back');
    core.locks.claim({ instanceId: inst });
    expect(read).toHaveBeenCalledTimes(2);
    // The socket closed (same epoch, no rollback): the claim is refused, not served from what was known.
    core.instances.disconnect(inst, 'test');
    expect(() => core.locks.claim({ instanceId: inst })).toThrow(/disconnected/);
    const back = core.instances.register({ role: 'dev', name: 'agent', resume: inst });
    expect(core.locks.claim({ instanceId: back.id }).task).not.toBeNull();
    core.instances.goOffline(inst, 'force_release', 'test');
    expect(() => core.locks.claim({ instanceId: inst })).toThrow(/offline/);
  });
});

describe('report hot path: dependents', () => {
  it('a done report probes no dependents while no task declares a dependency; one declared later (same epoch) is released', () => {
    core = makeTestCore();
    const inst = onlineInstance(core);
    const first = core.tasks.create({ title: 'first', role: 'dev', priority: 9 }, { actor: 't' }).task.id;
    const finish = () => {
      const { task, lock } = core.locks.claim({ instanceId: inst });
      core.locks.report({ instanceId: inst, taskId: task!.id, fence: lock!.fence, status: 'done' });
      return task!.id;
    };
    const repo = (core.locks as unknown as { repo: { releaseDependentsOf(id: number, e: number): void } }).repo;
    const release = vi.spyOn(repo, 'releaseDependentsOf');
    expect(finish()).toBe(first);
    expect(release).toHaveBeenCalledTimes(1);
    // Declared after the report above, in the same epoch: the next done report of `base` releases it.
    const base = core.tasks.create({ title: 'base', role: 'dev', priority: 5 }, { actor: 't' }).task.id;
    const waiting = core.tasks.create({ title: 'waiting', role: 'dev', priority: 1, dependsOn: [base] }, { actor: 't' }).task.id;
    expect(core.tasks.get(waiting).unmetDependencies).toBe(1);
    expect(finish()).toBe(base);
    expect(core.tasks.get(waiting).unmetDependencies).toBe(0);
    expect(finish()).toBe(waiting);
  });
});
