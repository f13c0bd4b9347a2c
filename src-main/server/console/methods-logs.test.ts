/** The console's logs.* and usage.* methods over a real core (log worker included). */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { onlineInstance, type TestCore } from '../../core/tests/test-core';
import type { ConsoleMethods } from './methods';
import { consoleUnderTest } from '../tests/methods.testkit';

let core: TestCore;
let m: ConsoleMethods;

beforeEach(() => ({ core, m } = consoleUnderTest({ actor: 'operator:test' })));
afterEach(async () => {
  core.close();
  await core.logs.close();
});

async function loggedTask() {
  const { task } = core.tasks.create({ title: 'deploy the site', role: 'dev' }, { actor: 'test' });
  const inst = onlineInstance(core);
  const { lock } = core.locks.claim({ instanceId: inst, role: 'dev' });
  core.clock.advance(1000);
  await core.logs.log(inst, { id: 1, type: 'log', taskId: task.id, lines: [{ text: 'building' }, { text: 'upload failed: timeout', stream: 'stderr', level: 'error' }] });
  await core.logs.usage(inst, { id: 2, type: 'usage', taskId: task.id, inputTokens: 100, outputTokens: 10, costUsd: 0.5 });
  core.clock.advance(1000);
  core.locks.report({ instanceId: inst, taskId: task.id, fence: lock!.fence, status: 'failed', note: 'upload failed' });
  return task.id;
}

describe('console logs and usage methods', () => {
  it('attempts, pages, text and the timeline of a task', async () => {
    const id = await loggedTask();
    const subject = `task:${id}`;
    const a = await m.call('logs.attempts', { subject });
    expect(a.attempts).toEqual([expect.objectContaining({ attempt: 1, lines: 2, firstSeq: 1, lastSeq: 2, usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.5 } })]);
    expect(a.usage).toEqual({ inputTokens: 100, outputTokens: 10, costUsd: 0.5 });
    expect((await m.call('logs.page', { subject, stream: 'stderr' })).items.map((l) => l.text)).toEqual(['upload failed: timeout']);
    const text = await m.call('logs.text', { subject, attempt: 1 });
    expect(text).toMatchObject({ filename: `gaffer-task-${id}-attempt-1.log`, complete: true });
    expect(text.text.split('\n').filter(Boolean)).toHaveLength(2);
    const tl = await m.call('logs.timeline', { subject });
    expect(tl.map((e) => e.kind)).toEqual(['created', 'claim', 'log', 'log', 'release']);
    expect(tl.find((e) => e.title === 'Last log line')?.detail).toContain('2 lines · 100 tokens in, 10 out, $0.5000');
    await expect(m.call('logs.attempts', { subject: 'task:999' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(m.call('logs.timeline', { subject: 'run:nope' })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('usage and the latest attempt\'s span of list rows; a task with no log has no span', async () => {
    const id = await loggedTask();
    const { task: quiet } = core.tasks.create({ title: 'quiet', role: 'dev' }, { actor: 'test' });
    const r = await m.call('usage.ofSubjects', { subjects: [`task:${id}`, `task:${quiet.id}`] });
    expect(r).toEqual({
      [`task:${id}`]: { usage: { inputTokens: 100, outputTokens: 10, costUsd: 0.5 }, latestAttemptMs: 0 },
      [`task:${quiet.id}`]: { usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 }, latestAttemptMs: null },
    });
  });

  it('finds words across logs and says whose log each hit is', async () => {
    const id = await loggedTask();
    const r = await m.call('logs.search', { q: 'timeout' });
    expect(r.items).toEqual([expect.objectContaining({ subject: `task:${id}`, seq: 2, owner: { kind: 'task', taskId: id, role: 'dev', title: 'deploy the site' } })]);
  });

  it('sums usage by role and day, and changes the log settings with an audited reason', async () => {
    await loggedTask();
    expect(await m.call('usage.summary', { by: 'role' })).toEqual([{ key: 'dev', inputTokens: 100, outputTokens: 10, costUsd: 0.5 }]);
    expect(await m.call('usage.daily', {})).toEqual([expect.objectContaining({ role: 'dev', job: null, costUsd: 0.5 })]);
    expect(await m.call('usage.costliestRuns', {})).toEqual([]);
    const v = await m.call('logs.setSettings', { settings: { retentionDays: 3 }, reason: 'disk is small' });
    expect(v.settings.retentionDays).toBe(3);
    expect((await m.call('logs.settings', {})).settings.retentionDays).toBe(3);
    const row = core.db.prepare<[], { actor: string; detail: string }>("SELECT actor, detail FROM audit WHERE type = 'logs.settings'").get()!;
    expect(row.actor).toBe('operator:test');
    expect(JSON.parse(row.detail)).toMatchObject({ retentionDays: 3, reason: 'disk is small' });
    await expect(m.call('usage.summary', { by: 'day', from: '2026-12-02T00:00:00Z', to: '2026-12-01T00:00:00Z' })).rejects.toMatchObject({ code: 'bad_request' });
  });
});
