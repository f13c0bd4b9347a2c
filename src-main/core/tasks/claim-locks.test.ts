import { afterEach, describe, expect, it } from 'vitest';
import { errorOf, makeTestCore, onlineInstance, stateDigest, type TestCore } from '../tests/test-core';

let core: TestCore;
afterEach(() => core?.close());


describe('claim lock (P1–P5)', () => {
  it('claims the best candidate: highest priority first, then oldest', () => {
    core = makeTestCore();
    const a = core.tasks.create({ title: 'low', role: 'dev', priority: 1 }, { actor: 't' }).task;
    core.clock.advance(1000);
    const b = core.tasks.create({ title: 'high-old', role: 'dev', priority: 5 }, { actor: 't' }).task;
    core.clock.advance(1000);
    const c = core.tasks.create({ title: 'high-new', role: 'dev', priority: 5 }, { actor: 't' }).task;
    core.tasks.create({ title: 'other role', role: 'pm', priority: 100 }, { actor: 't' });
    const inst = onlineInstance(core);
    const order = [1, 2, 3].map(() => core.locks.claim({ instanceId: inst }).task!.id);
    expect(order).toEqual([b.id, c.id, a.id]);
    expect(core.locks.claim({ instanceId: inst })).toEqual({ task: null });
  });

  it('gives the holder a fence and an expiry one lock window away; attempt is 1 on first claim', () => {
    core = makeTestCore({ lockWindowS: 7200 });
    const t = core.tasks.create({ title: 't', role: 'dev' }, { actor: 't' }).task;
    const inst = onlineInstance(core);
    const r = core.locks.claim({ instanceId: inst });
    expect(r.task!.id).toBe(t.id);
    expect(r.task!.status).toBe('in_progress');
    expect(r.task!.attempt).toBe(1);
    expect(r.task!.previouslyExpired).toBe(false);
    expect(r.lock).toEqual({ fence: 1, expiresAt: core.clock.now() + 7200_000 });
    const row = core.db.prepare('SELECT * FROM locks WHERE task_id = ?').get(t.id) as { instance_id: string; fence: number };
    expect(row.instance_id).toBe(inst);
    expect(row.fence).toBe(1);
  });

  it('P2: a claim with nothing claimable returns no task and writes nothing', () => {
    core = makeTestCore();
    const inst = onlineInstance(core);
    const before = stateDigest(core);
    const audit = core.audit.count();
    expect(core.locks.claim({ instanceId: inst })).toEqual({ task: null });
    expect(stateDigest(core)).toBe(before);
    expect(core.audit.count()).toBe(audit);
  });

  it('P3: a task whose dependencies are not all done is invisible until they are', () => {
    core = makeTestCore();
    const dep1 = core.tasks.create({ title: 'dep1', role: 'pm' }, { actor: 't' }).task;
    const dep2 = core.tasks.create({ title: 'dep2', role: 'pm' }, { actor: 't' }).task;
    const child = core.tasks.create({ title: 'child', role: 'dev', dependsOn: [dep1.id, dep2.id] }, { actor: 't' }).task;
    expect(child.unmetDependencies).toBe(2);
    const dev = onlineInstance(core, 'dev');
    const pm = onlineInstance(core, 'pm');
    expect(core.locks.claim({ instanceId: dev }).task).toBeNull();
    for (let i = 0; i < 2; i++) {
      const c = core.locks.claim({ instanceId: pm });
      core.locks.report({ instanceId: pm, taskId: c.task!.id, fence: c.lock!.fence, status: i === 0 ? 'done' : 'failed' });
    }
    // one dependency failed: still gated
    expect(core.locks.claim({ instanceId: dev }).task).toBeNull();
    core.tasks.retry({ taskId: dep2.id, reason: 'flaky', actor: 'operator:test' });
    const again = core.locks.claim({ instanceId: pm });
    core.locks.report({ instanceId: pm, taskId: again.task!.id, fence: again.lock!.fence, status: 'done' });
    expect(core.locks.claim({ instanceId: dev }).task!.id).toBe(child.id);
  });

  it('P5: a report releases the lock in the same transaction that validates the transition', () => {
    core = makeTestCore();
    const t = core.tasks.create({ title: 't', role: 'dev' }, { actor: 't' }).task;
    const inst = onlineInstance(core);
    const { lock } = core.locks.claim({ instanceId: inst });
    const r = core.locks.report({ instanceId: inst, taskId: t.id, fence: lock!.fence, status: 'done', note: 'ok', output: { n: 1 } });
    expect(r.task.status).toBe('done');
    expect(r.task.lock).toBeNull();
    expect(r.task.output).toEqual({ n: 1 });
    expect(core.db.prepare('SELECT count(*) AS n FROM locks').get()).toEqual({ n: 0 });
  });

  it('P5: a non-holder or a stale fence gets not_holder (409), is audited, and changes nothing', () => {
    core = makeTestCore();
    const t = core.tasks.create({ title: 't', role: 'dev' }, { actor: 't' }).task;
    const holder = onlineInstance(core, 'dev', 'holder');
    const other = onlineInstance(core, 'dev', 'other');
    const { lock } = core.locks.claim({ instanceId: holder });
    const before = stateDigest(core);
    const auditBefore = core.audit.count();
    const e1 = errorOf(() => core.locks.report({ instanceId: other, taskId: t.id, fence: lock!.fence, status: 'done' }));
    expect([e1.code, e1.status]).toEqual(['not_holder', 409]);
    const e2 = errorOf(() => core.locks.renew({ instanceId: holder, taskId: t.id, fence: lock!.fence + 1 }));
    expect([e2.code, e2.status]).toEqual(['not_holder', 409]);
    expect(stateDigest(core)).toBe(before);
    const rejects = core.db.prepare(`SELECT actor, detail FROM audit WHERE type = 'lock.reject' ORDER BY id`).all() as Array<{ actor: string }>;
    expect(rejects.map((r) => r.actor)).toEqual([other, holder]);
    expect(core.audit.count()).toBe(auditBefore + 2);
  });

  it('the fence grows on every claim, so an earlier holder stays refused after a re-claim', () => {
    core = makeTestCore({ lockWindowS: 60 });
    const t = core.tasks.create({ title: 't', role: 'dev' }, { actor: 't' }).task;
    const first = onlineInstance(core, 'dev', 'first');
    const c1 = core.locks.claim({ instanceId: first });
    core.clock.advance(61_000);
    core.watchdog.sweep();
    const second = onlineInstance(core, 'dev', 'second');
    const c2 = core.locks.claim({ instanceId: second });
    expect(c2.lock!.fence).toBe(c1.lock!.fence + 1);
    expect(c2.task!.attempt).toBe(2);
    expect(c2.task!.previouslyExpired).toBe(true);
    expect(errorOf(() => core.locks.report({ instanceId: first, taskId: t.id, fence: c1.lock!.fence, status: 'done' })).code).toBe(
      'not_holder',
    );
    expect(core.locks.report({ instanceId: second, taskId: t.id, fence: c2.lock!.fence, status: 'done' }).task.status).toBe('done');
  });

  it('the holder wins when it reports after its window but before the watchdog swept', () => {
    core = makeTestCore({ lockWindowS: 60 });
    const t = core.tasks.create({ title: 't', role: 'dev' }, { actor: 't' }).task;
    const inst = onlineInstance(core);
    const c = core.locks.claim({ instanceId: inst });
    core.clock.advance(120_000);
    expect(core.locks.report({ instanceId: inst, taskId: t.id, fence: c.lock!.fence, status: 'done' }).task.status).toBe('done');
  });

  it('a repeated report of the same transition is harmless', () => {
    core = makeTestCore();
    const t = core.tasks.create({ title: 't', role: 'dev' }, { actor: 't' }).task;
    const inst = onlineInstance(core);
    const c = core.locks.claim({ instanceId: inst });
    const args = { instanceId: inst, taskId: t.id, fence: c.lock!.fence, status: 'done' as const };
    expect(core.locks.report(args).replayed).toBe(false);
    const before = stateDigest(core);
    const again = core.locks.report(args);
    expect(again.replayed).toBe(true);
    expect(again.task.status).toBe('done');
    expect(stateDigest(core)).toBe(before);
    // a *different* status is not a repeat: refused
    expect(errorOf(() => core.locks.report({ ...args, status: 'failed' })).code).toBe('not_holder');
    // a backlog report that took effect repeats harmlessly too (the task was claimed again meanwhile: fence 2)
    const c2 = core.tasks.create({ title: 'u', role: 'dev' }, { actor: 't' }).task;
    const back = { instanceId: inst, taskId: c2.id, fence: core.locks.claim({ instanceId: inst }).lock!.fence, status: 'backlog' as const };
    expect(core.locks.report(back).replayed).toBe(false);
    expect(core.locks.report(back).replayed).toBe(true);
  });

  it('a report, renew or backlog report after the lock was taken away is not_holder and audited, never a replay', () => {
    core = makeTestCore({ lockWindowS: 60 });
    const inst = onlineInstance(core);
    const lost: unknown[] = [];
    core.events.on('lock.lost', (e) => lost.push({ taskId: e.taskId, instanceId: e.instanceId, fence: e.fence, reason: e.reason }));
    const released = core.tasks.create({ title: 'released', role: 'dev' }, { actor: 't' }).task;
    const expired = core.tasks.create({ title: 'expired', role: 'dev' }, { actor: 't' }).task;
    const c1 = core.locks.claim({ instanceId: inst });
    const c2 = core.locks.claim({ instanceId: inst });
    core.tasks.forceRelease({ taskId: released.id, reason: 'stuck', actor: 'operator:ann' });
    core.clock.advance(61_000);
    core.watchdog.sweep();
    expect(lost).toEqual([
      { taskId: released.id, instanceId: inst, fence: c1.lock!.fence, reason: 'force_release' },
      { taskId: expired.id, instanceId: inst, fence: c2.lock!.fence, reason: 'expired' },
    ]);
    const before = stateDigest(core);
    const rejects = () => core.db.prepare(`SELECT count(*) AS n FROM audit WHERE type = 'lock.reject'`).get() as { n: number };
    const n0 = rejects().n;
    for (const [t, c] of [
      [released, c1],
      [expired, c2],
    ] as const) {
      // `backlog` is the status the task now has: it used to be taken for a harmless repeat.
      const late = { instanceId: inst, taskId: t.id, fence: c.lock!.fence };
      expect(errorOf(() => core.locks.report({ ...late, status: 'backlog', note: 'half done' })).code).toBe('not_holder');
      expect(errorOf(() => core.locks.report({ ...late, status: 'done' })).code).toBe('not_holder');
      expect(errorOf(() => core.locks.renew(late)).code).toBe('not_holder');
    }
    expect(rejects().n - n0).toBe(6);
    expect(stateDigest(core)).toBe(before);
    expect(core.tasks.get(released.id)).toMatchObject({ status: 'backlog', note: null });
  });

  it('renew extends the lock by one window from now', () => {
    core = makeTestCore({ lockWindowS: 100 });
    const t = core.tasks.create({ title: 't', role: 'dev' }, { actor: 't' }).task;
    const inst = onlineInstance(core);
    const c = core.locks.claim({ instanceId: inst });
    core.clock.advance(40_000);
    const r = core.locks.renew({ instanceId: inst, taskId: t.id, fence: c.lock!.fence });
    expect(r.expiresAt).toBe(core.clock.now() + 100_000);
  });

  it('an offline instance cannot claim', () => {
    core = makeTestCore();
    core.tasks.create({ title: 't', role: 'dev' }, { actor: 't' });
    const inst = onlineInstance(core);
    core.instances.goOffline(inst, 'heartbeat_timeout');
    expect(errorOf(() => core.locks.claim({ instanceId: inst })).code).toBe('forbidden');
    expect(errorOf(() => core.locks.claim({ instanceId: 'nobody' })).code).toBe('not_found');
  });
});

describe('claim reserve (migration 008)', () => {
  it('a new row reserves the room its first claim needs, so the claim does not grow it', () => {
    core = makeTestCore();
    const id = core.tasks.create({ title: 'x', role: 'dev', payload: { n: 1 } }, { actor: 't' }).task.id;
    const row = core.db.prepare<[number], { bytes: number; reserve: Buffer | null }>(
      `SELECT length(title) + length(role) + length(status) + length(payload) + length(depends_on) + length(trace_id)
         + coalesce(length(last_holder), 0) + coalesce(length(claim_reserve), 0) AS bytes, claim_reserve AS reserve
       FROM tasks WHERE id = ?`,
    );
    const before = row.get(id)!;
    expect(before.reserve?.length).toBe(24);
    const inst = onlineInstance(core);
    expect(core.locks.claim({ instanceId: inst }).task!.id).toBe(id);
    const after = row.get(id)!;
    expect(after.reserve).toBeNull();
    // status backlog → in_progress (+4) and last_holder NULL → the instance id: still no growth.
    expect(after.bytes).toBeLessThanOrEqual(before.bytes);
  });
});
