import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { VerifySpec } from '../../common/verify';
import { checkInvariants } from '../tests/invariants';
import { makeTestCore, onlineInstance, tempDir, type TestCore } from '../tests/test-core';

let core: TestCore;
let ws: string;
afterEach(() => core?.close());

/** `verify` is made after the workspace, so its checks can name it. */
function setup(verify: () => VerifySpec, config = {}) {
  ws = tempDir('gaffer-ws-');
  core = makeTestCore(config);
  const inst = onlineInstance(core);
  const task = core.tasks.create({ title: 'write the report', role: 'dev', verify: verify() }, { actor: 'operator:t' }).task;
  return { inst, task };
}

const fileCheck = (name = 'report') => ({ kind: 'file' as const, name, path: path.join(ws, 'report.md'), nonEmpty: true });

function claimAndReportDone(inst: string, output?: unknown) {
  const c = core.locks.claim({ instanceId: inst });
  return { claimed: c.task!, reported: core.locks.report({ instanceId: inst, taskId: c.task!.id, fence: c.lock!.fence, status: 'done', ...(output !== undefined ? { output } : {}) }).task };
}

function auditTypes(subject: string): string[] {
  return (core.db.prepare('SELECT type FROM audit WHERE subject = ? ORDER BY id').all(subject) as Array<{ type: string }>).map((r) => r.type);
}

describe('a task that declares checks', () => {
  it('is verifying after its agent reports done (lock released), then done with the evidence when the checks pass', async () => {
    const { inst, task } = setup(() => ({ checks: [{ kind: 'output', name: 'has url', schema: { type: 'object', required: ['url'] } }] }));
    const { reported } = claimAndReportDone(inst, { url: 'x' });
    expect(reported.status).toBe('verifying');
    expect(reported.lock).toBeNull();
    await core.verify.runner.idle();
    const t = core.tasks.get(task.id);
    expect(t.status).toBe('done');
    expect(t.previousError).toBeUndefined();
    expect(core.verify.latest(`task:${task.id}`)).toMatchObject({ passed: true, attempt: 1, checks: [{ name: 'has url', kind: 'output', passed: true }] });
    expect(auditTypes(`task:${task.id}`)).toEqual(['task.create', 'lock.claim', 'lock.release', 'verify.pass', 'task.verified']);
    expect(checkInvariants(core.db)).toEqual([]);
  });

  it('onFail retry (the default): back to the backlog, and the next claim carries previousError', async () => {
    const { inst, task } = setup(() => ({ checks: [fileCheck()] }));
    claimAndReportDone(inst);
    await core.verify.runner.idle();
    expect(core.tasks.get(task.id)).toMatchObject({ status: 'backlog', previousError: expect.stringMatching(/^verification failed: report: .*report\.md does not exist$/) });
    const again = core.locks.claim({ instanceId: inst });
    expect(again.task).toMatchObject({ id: task.id, attempt: 2, previousError: expect.stringContaining('verification failed: report') });
    expect(auditTypes(`task:${task.id}`)).toContain('verify.fail');
    // The second attempt does the work: done, and the error is gone.
    fs.writeFileSync(path.join(ws, 'report.md'), 'ok');
    core.locks.report({ instanceId: inst, taskId: task.id, fence: again.lock!.fence, status: 'done' });
    await core.verify.runner.idle();
    const t = core.tasks.get(task.id);
    expect(t.status).toBe('done');
    expect(t.previousError).toBeUndefined();
    expect(core.verify.store.history(`task:${task.id}`).map((v) => v.passed)).toEqual([false, true]);
    expect(checkInvariants(core.db)).toEqual([]);
  });

  it('onFail needs_human: blocked, with a verify_failed inbox item (and no second needs_human item)', async () => {
    const { inst, task } = setup(() => ({ checks: [fileCheck()], onFail: 'needs_human' }));
    claimAndReportDone(inst);
    await core.verify.runner.idle();
    expect(core.tasks.get(task.id)).toMatchObject({ status: 'blocked', note: expect.stringContaining('verification failed: report') });
    const items = core.inbox.list({}).items.filter((i) => i.subject === `task:${task.id}`);
    expect(items.map((i) => i.kind)).toEqual(['verify_failed']);
    expect(items[0]!.title).toContain('said done, but its checks failed');
    expect(checkInvariants(core.db)).toEqual([]);
  });

  it('onFail fail: failed', async () => {
    const { inst, task } = setup(() => ({ checks: [fileCheck()], onFail: 'fail' }));
    claimAndReportDone(inst);
    await core.verify.runner.idle();
    expect(core.tasks.get(task.id)).toMatchObject({ status: 'failed', note: expect.stringContaining('verification failed') });
    expect(checkInvariants(core.db)).toEqual([]);
  });

  it('dependents wait until the checks pass', async () => {
    const { inst, task } = setup(() => ({ checks: [fileCheck()] }));
    fs.writeFileSync(path.join(ws, 'report.md'), 'ok');
    const next = core.tasks.create({ title: 'then', role: 'other', dependsOn: [task.id] }, { actor: 'operator:t' }).task;
    claimAndReportDone(inst);
    expect(core.tasks.get(next.id).unmetDependencies).toBe(1);
    await core.verify.runner.idle();
    expect(core.tasks.get(next.id).unmetDependencies).toBe(0);
  });

  it('a cancel while verifying keeps the evidence and moves nothing', async () => {
    const { inst, task } = setup(() => ({ checks: [fileCheck()] }));
    claimAndReportDone(inst);
    core.tasks.cancel({ taskId: task.id, reason: 'not needed', actor: 'operator:t' });
    await core.verify.runner.idle();
    expect(core.tasks.get(task.id).status).toBe('cancelled');
    expect(core.verify.latest(`task:${task.id}`)?.passed).toBe(false);
    expect(checkInvariants(core.db)).toEqual([]);
  });

  it('a repeated done report while verifying is a replay', () => {
    const { inst } = setup(() => ({ checks: [fileCheck()] }));
    const c = core.locks.claim({ instanceId: inst });
    const args = { instanceId: inst, taskId: c.task!.id, fence: c.lock!.fence, status: 'done' as const };
    core.locks.report(args);
    expect(core.locks.report(args).replayed).toBe(true);
  });

  it('a bad output schema is refused at creation, and nothing is created', () => {
    core = makeTestCore();
    expect(() => core.tasks.create({ title: 't', role: 'dev', verify: { checks: [{ kind: 'output', name: 'o', schema: { type: 'nonsense' } }] } }, { actor: 'operator:t' })).toThrow(/schema is not a JSON Schema/);
    expect(core.tasks.list().items).toHaveLength(0);
  });
});

describe('before: true — is it already done?', () => {
  it('after an expiry, the checks run before the work is handed out again: passing, the task is done (already_done) and nobody gets it', async () => {
    const { inst, task } = setup(() => ({ checks: [fileCheck()], before: true }), { lockWindowS: 60 });
    core.locks.claim({ instanceId: inst });
    // The agent did the work, then died before reporting it.
    fs.writeFileSync(path.join(ws, 'report.md'), 'ok');
    core.clock.advance(61_000);
    core.watchdog.sweep();
    expect(core.tasks.get(task.id)).toMatchObject({ status: 'backlog', previouslyExpired: true });
    expect(core.locks.claim({ instanceId: inst })).toEqual({ task: null });
    expect(core.tasks.get(task.id).status).toBe('verifying');
    await core.verify.runner.idle();
    expect(core.tasks.get(task.id)).toMatchObject({ status: 'done', disposition: 'already_done', attempt: 1 });
    expect(core.verify.latest(`task:${task.id}`)).toMatchObject({ passed: true, before: true });
    expect(checkInvariants(core.db)).toEqual([]);
  });

  it('failing, the next attempt is handed out (without checking again)', async () => {
    const { inst, task } = setup(() => ({ checks: [fileCheck()], before: true }), { lockWindowS: 60 });
    core.locks.claim({ instanceId: inst });
    core.clock.advance(61_000);
    core.watchdog.sweep();
    expect(core.locks.claim({ instanceId: inst }).task).toBeNull();
    await core.verify.runner.idle();
    expect(core.tasks.get(task.id).status).toBe('backlog');
    expect(core.locks.claim({ instanceId: inst }).task).toMatchObject({ id: task.id, attempt: 2 });
    expect(checkInvariants(core.db)).toEqual([]);
  });

  it('without before, a reclaimed task is handed out at once', () => {
    const { inst, task } = setup(() => ({ checks: [fileCheck()] }), { lockWindowS: 60 });
    core.locks.claim({ instanceId: inst });
    core.clock.advance(61_000);
    core.watchdog.sweep();
    expect(core.locks.claim({ instanceId: inst }).task).toMatchObject({ id: task.id, attempt: 2 });
  });
});

describe('at start', () => {
  it('a task left verifying by a stop is verified again', async () => {
    const dir = tempDir();
    ws = tempDir('gaffer-ws-');
    core = makeTestCore({}, dir);
    const inst = onlineInstance(core);
    const task = core.tasks.create({ title: 't', role: 'dev', verify: { checks: [fileCheck()] } }, { actor: 'operator:t' }).task;
    core.verify.runner.stop(); // as if Gaffer stopped mid-check
    claimAndReportDone(inst);
    core.close();
    fs.writeFileSync(path.join(ws, 'report.md'), 'ok');
    core = makeTestCore({}, dir);
    core.start();
    await core.verify.runner.idle();
    expect(core.tasks.get(task.id).status).toBe('done');
  });
});
