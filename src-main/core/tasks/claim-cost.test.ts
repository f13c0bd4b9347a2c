/**
 * The hub's hot path (claim, report, renew) does no avoidable work per call (issue 32): each test
 * here pins one cut that the hub profile (bench/hub-profile.ts) showed was a share of its CPU.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
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
