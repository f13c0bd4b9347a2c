import { afterEach, describe, expect, it } from 'vitest';
import { errorCodeOf, makeTestCore, onlineInstance, stateDigest, type TestCore } from '../tests/test-core';

let core: TestCore;
afterEach(() => core?.close());

const who = { actor: 'operator:test' };
const codeOf = errorCodeOf;

describe('task board', () => {
  it('creates a task with defaults and audits it', () => {
    core = makeTestCore();
    const { task, replayed } = core.tasks.create({ title: 'Write spec', role: 'pm' }, who);
    expect(replayed).toBe(false);
    expect(task).toMatchObject({ title: 'Write spec', role: 'pm', status: 'backlog', priority: 0, payload: null, dependsOn: [], attempt: 0 });
    const ev = core.db.prepare(`SELECT type, actor, subject FROM audit`).all();
    expect(ev).toEqual([{ type: 'task.create', actor: 'operator:test', subject: `task:${task.id}` }]);
  });

  it('idempotency: a repeat inside the window returns the first task, never a second one', () => {
    core = makeTestCore({ idempotencyWindowS: 300 });
    const body = { title: 'once', role: 'dev', payload: { a: 1, b: [1, 2] }, idempotencyKey: 'k-1' };
    const first = core.tasks.create(body, who);
    core.clock.advance(299_000);
    const again = core.tasks.create({ ...body, payload: { b: [1, 2], a: 1 } }, who); // same body, keys reordered
    expect(again.replayed).toBe(true);
    expect(again.task.id).toBe(first.task.id);
    expect(core.tasks.list({}).items).toHaveLength(1);
  });

  it('idempotency: the same key with a different body is a conflict and changes nothing', () => {
    core = makeTestCore();
    core.tasks.create({ title: 'once', role: 'dev', idempotencyKey: 'k-1' }, who);
    const before = stateDigest(core);
    expect(codeOf(() => core.tasks.create({ title: 'other', role: 'dev', idempotencyKey: 'k-1' }, who))).toBe('conflict');
    expect(stateDigest(core)).toBe(before);
  });

  it('idempotency: after the window the key creates a new task', () => {
    core = makeTestCore({ idempotencyWindowS: 300 });
    const body = { title: 'daily', role: 'dev', idempotencyKey: 'k-2' };
    const first = core.tasks.create(body, who);
    core.clock.advance(300_001);
    const later = core.tasks.create(body, who);
    expect(later.replayed).toBe(false);
    expect(later.task.id).not.toBe(first.task.id);
  });

  it('refuses unknown dependencies', () => {
    core = makeTestCore();
    const before = stateDigest(core);
    expect(codeOf(() => core.tasks.create({ title: 'x', role: 'dev', dependsOn: [999] }, who))).toBe('not_found');
    expect(stateDigest(core)).toBe(before);
  });

  it('operator edges: cancel, retry, unblock, reprioritise — each needs a reason and is audited with its actor', () => {
    core = makeTestCore();
    const inst = onlineInstance(core);
    const t = core.tasks.create({ title: 't', role: 'dev' }, who).task;
    const c = core.locks.claim({ instanceId: inst });
    core.locks.report({ instanceId: inst, taskId: t.id, fence: c.lock!.fence, status: 'blocked', note: 'need creds' });
    expect(core.tasks.unblock({ taskId: t.id, reason: 'creds added', actor: 'operator:ann' }).status).toBe('backlog');
    const c2 = core.locks.claim({ instanceId: inst });
    core.locks.report({ instanceId: inst, taskId: t.id, fence: c2.lock!.fence, status: 'failed' });
    expect(core.tasks.retry({ taskId: t.id, reason: 'try again', actor: 'operator:ann' }).status).toBe('backlog');
    expect(core.tasks.reprioritise({ taskId: t.id, priority: 9, reason: 'urgent', actor: 'operator:ann' }).priority).toBe(9);
    expect(core.tasks.cancel({ taskId: t.id, reason: 'not needed', actor: 'operator:bob' }).status).toBe('cancelled');
    const ops = core.db.prepare(`SELECT type, actor, json_extract(detail, '$.reason') AS reason FROM audit WHERE type LIKE 'operator.%' ORDER BY id`).all();
    expect(ops).toEqual([
      { type: 'operator.unblock', actor: 'operator:ann', reason: 'creds added' },
      { type: 'operator.retry', actor: 'operator:ann', reason: 'try again' },
      { type: 'operator.reprioritise', actor: 'operator:ann', reason: 'urgent' },
      { type: 'operator.cancel', actor: 'operator:bob', reason: 'not needed' },
    ]);
  });

  it('refuses invalid edges with invalid_transition and changes nothing', () => {
    core = makeTestCore();
    const t = core.tasks.create({ title: 't', role: 'dev' }, who).task;
    const before = stateDigest(core);
    expect(codeOf(() => core.tasks.retry({ taskId: t.id, reason: 'r', actor: 'op' }))).toBe('invalid_transition');
    expect(codeOf(() => core.tasks.unblock({ taskId: t.id, reason: 'r', actor: 'op' }))).toBe('invalid_transition');
    expect(codeOf(() => core.tasks.forceRelease({ taskId: t.id, reason: 'r', actor: 'op' }))).toBe('invalid_transition');
    core.tasks.cancel({ taskId: t.id, reason: 'r', actor: 'op' });
    const afterCancel = stateDigest(core);
    expect(codeOf(() => core.tasks.cancel({ taskId: t.id, reason: 'r', actor: 'op' }))).toBe('invalid_transition');
    expect(codeOf(() => core.tasks.retry({ taskId: t.id, reason: 'r', actor: 'op' }))).toBe('invalid_transition');
    expect(stateDigest(core)).toBe(afterCancel);
    expect(afterCancel).not.toBe(before);
  });

  it('force-release takes the lock from its holder: back to backlog, previously expired, holder refused', () => {
    core = makeTestCore();
    const inst = onlineInstance(core);
    const t = core.tasks.create({ title: 't', role: 'dev' }, who).task;
    const c = core.locks.claim({ instanceId: inst });
    const released = core.tasks.forceRelease({ taskId: t.id, reason: 'agent stuck', actor: 'operator:ann' });
    expect(released).toMatchObject({ status: 'backlog', previouslyExpired: true, lock: null });
    expect(codeOf(() => core.locks.report({ instanceId: inst, taskId: t.id, fence: c.lock!.fence, status: 'done' }))).toBe('not_holder');
    const card = core.db.prepare('SELECT instance_id, reason FROM lock_expiries').get();
    expect(card).toEqual({ instance_id: inst, reason: 'force_release' });
  });

  it('cancelling an in-progress task revokes its lock', () => {
    core = makeTestCore();
    const inst = onlineInstance(core);
    const t = core.tasks.create({ title: 't', role: 'dev' }, who).task;
    const c = core.locks.claim({ instanceId: inst });
    expect(core.tasks.cancel({ taskId: t.id, reason: 'obsolete', actor: 'op' }).lock).toBeNull();
    expect(codeOf(() => core.locks.renew({ instanceId: inst, taskId: t.id, fence: c.lock!.fence }))).toBe('not_holder');
  });

  it('lists with a cursor and filters', () => {
    core = makeTestCore();
    for (let i = 0; i < 5; i++) core.tasks.create({ title: `t${i}`, role: i % 2 ? 'pm' : 'dev' }, who);
    const p1 = core.tasks.list({ limit: 2 });
    expect(p1.items.map((t) => t.title)).toEqual(['t0', 't1']);
    const p2 = core.tasks.list({ limit: 2, after: Number(p1.next) });
    expect(p2.items.map((t) => t.title)).toEqual(['t2', 't3']);
    expect(core.tasks.list({ role: 'pm' }).items.map((t) => t.title)).toEqual(['t1', 't3']);
    expect(core.tasks.list({ limit: 10, after: Number(p2.next) }).next).toBeNull();
    const d1 = core.tasks.list({ order: 'desc', limit: 2 });
    expect(d1.items.map((t) => t.title)).toEqual(['t4', 't3']);
    expect(core.tasks.list({ order: 'desc', limit: 2, before: Number(d1.next) }).items.map((t) => t.title)).toEqual(['t2', 't1']);
  });
});

describe('trace ids', () => {
  it('every audit event about a task carries the task’s trace id', () => {
    core = makeTestCore({ lockWindowS: 60 });
    const inst = onlineInstance(core);
    const t = core.tasks.create({ title: 't', role: 'dev' }, who).task;
    expect(t.traceId).toMatch(/^[0-9a-f]{16}$/);
    const c = core.locks.claim({ instanceId: inst });
    core.locks.renew({ instanceId: inst, taskId: t.id, fence: c.lock!.fence });
    expect(() => core.locks.report({ instanceId: inst, taskId: t.id, fence: 99, status: 'done' })).toThrow();
    core.clock.advance(61_000);
    core.watchdog.sweep();
    core.tasks.cancel({ taskId: t.id, reason: 'done with it', actor: 'operator:ann' });
    const rows = core.db.prepare(`SELECT type, trace_id FROM audit WHERE subject = ? ORDER BY id`).all(`task:${t.id}`) as Array<{ type: string; trace_id: string }>;
    expect(rows.map((r) => r.type)).toEqual(['task.create', 'lock.claim', 'lock.renew', 'lock.reject', 'lock.expire', 'operator.cancel']);
    expect(new Set(rows.map((r) => r.trace_id))).toEqual(new Set([t.traceId]));
  });
});

describe('payload edits and retry with changes', () => {
  const failedTask = (payload: unknown) => {
    const inst = onlineInstance(core);
    const t = core.tasks.create({ title: 't', role: 'dev', payload }, who).task;
    const c = core.locks.claim({ instanceId: inst });
    core.locks.report({ instanceId: inst, taskId: t.id, fence: c.lock!.fence, status: 'failed', note: 'wrong branch' });
    return { id: t.id, inst };
  };
  const payloadAudit = () =>
    core.db.prepare(`SELECT type, actor, json_extract(detail, '$.reason') AS reason, json_extract(detail, '$.before') AS b, json_extract(detail, '$.after') AS a FROM audit WHERE type LIKE 'operator.%' ORDER BY id`).all();

  it('edits the payload of a task nobody holds, audited with the payload before and after', () => {
    core = makeTestCore();
    const t = core.tasks.create({ title: 't', role: 'dev', payload: { branch: 'main' } }, who).task;
    const edited = core.tasks.editPayload({ taskId: t.id, payload: { branch: 'release' }, reason: 'release build', actor: 'operator:ann' });
    expect(edited.payload).toEqual({ branch: 'release' });
    expect(edited.status).toBe('backlog');
    expect(payloadAudit()).toEqual([{ type: 'operator.edit_payload', actor: 'operator:ann', reason: 'release build', b: '{"branch":"main"}', a: '{"branch":"release"}' }]);
  });

  it('refuses to edit a held or finished task, and changes nothing', () => {
    core = makeTestCore();
    const inst = onlineInstance(core);
    const t = core.tasks.create({ title: 't', role: 'dev', payload: 1 }, who).task;
    const c = core.locks.claim({ instanceId: inst });
    let before = stateDigest(core);
    expect(codeOf(() => core.tasks.editPayload({ taskId: t.id, payload: 2, reason: 'r', actor: 'op' }))).toBe('conflict');
    expect(stateDigest(core)).toBe(before);
    core.locks.report({ instanceId: inst, taskId: t.id, fence: c.lock!.fence, status: 'done' });
    before = stateDigest(core);
    expect(codeOf(() => core.tasks.editPayload({ taskId: t.id, payload: 2, reason: 'r', actor: 'op' }))).toBe('conflict');
    expect(codeOf(() => core.tasks.editPayload({ taskId: t.id, reason: 'r', actor: 'op' }))).toBe('bad_request');
    expect(stateDigest(core)).toBe(before);
    expect(payloadAudit()).toEqual([]);
  });

  it('retry with changes: the failed task goes back with the new payload, in one step, two audit rows', () => {
    core = makeTestCore();
    const { id, inst } = failedTask({ branch: 'main' });
    const t = core.tasks.retry({ taskId: id, reason: 'build the release branch', actor: 'operator:ann', payload: { branch: 'release' } });
    expect(t).toMatchObject({ status: 'backlog', payload: { branch: 'release' } });
    expect((payloadAudit() as Array<{ type: string }>).map((r) => r.type)).toEqual(['operator.edit_payload', 'operator.retry']);
    // The next holder receives the new payload.
    expect(core.locks.claim({ instanceId: inst }).task!.payload).toEqual({ branch: 'release' });
  });

  it('retry with changes on a task that is not failed changes neither status nor payload', () => {
    core = makeTestCore();
    const t = core.tasks.create({ title: 't', role: 'dev', payload: { a: 1 } }, who).task;
    const before = stateDigest(core);
    expect(codeOf(() => core.tasks.retry({ taskId: t.id, reason: 'r', actor: 'op', payload: { a: 2 } }))).toBe('invalid_transition');
    expect(codeOf(() => core.tasks.unblock({ taskId: t.id, reason: 'r', actor: 'op', payload: { a: 2 } }))).toBe('invalid_transition');
    expect(stateDigest(core)).toBe(before);
  });
});
