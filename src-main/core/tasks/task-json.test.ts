/** A Task's reply text with its stored JSON spliced in is byte for byte what JSON.stringify gives (task-json.ts). */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Task } from '../../common/model';
import { okReply } from '../hub/wire';
import { makeTestCore, onlineInstance, type TestCore } from '../tests/test-core';
import { replyJson, taskJson } from './task-json';
import { rowToTask, type TaskRow } from './task-repo';

let core: TestCore | undefined;
afterEach(() => core?.close());

const PAYLOADS: unknown[] = [
  {},
  { n: 1 },
  // Integer-like keys come first whatever the order given; escapes, -0, big and small numbers.
  { b: 1, 10: 'x', 2: [1, 'two', null, true], a: { '': 0, 'quote"': 'back\\slash\nline\u2028', emoji: '🙂' } },
  { nums: [-0, 1e21, 1.5e-7, 0.1 + 0.2, -1234567890123, Number.MAX_SAFE_INTEGER] },
  { __proto__key: 1, deep: { a: [{ b: [{ c: {} }] }] } },
];

const row = (over: Partial<TaskRow>): TaskRow => ({
  id: 7, title: 'a "title" ✓\u0001', role: 'dev', status: 'backlog', priority: -3, payload: '{"n":1}', depends_on: '[]', trace_id: null,
  unmet_deps: 0, attempt: 0, previously_expired: 0, fence: 0, last_holder: null, note: null, output: null, answer: null,
  resume_session: null, created_at: 1_700_000_000_000, updated_at: 1_700_000_000_123, verify: null, previous_error: null,
  prechecked_attempt: 0, disposition: null, attempt_started_at: null, l_instance: null, l_fence: null, l_claimed: null, l_expires: null,
  ...over,
});

describe('taskJson', () => {
  it('is JSON.stringify of the Task for every optional field and lock, and for the payloads the board stores', () => {
    const variants: TaskRow[] = [
      row({}),
      row({ status: 'in_progress', fence: 3, attempt: 2, previously_expired: 1, trace_id: 'tr-1', l_instance: 'inst_x', l_fence: 3, l_claimed: 1_700_000_000_500, l_expires: 1_700_007_200_500 }),
      row({ status: 'done', note: 'ok\t"fine"', output: JSON.stringify({ files: ['a.ts'], n: 2 }), depends_on: '[1,2,3]', unmet_deps: 2 }),
      row({ verify: JSON.stringify({ commands: [{ run: 'npm test', timeoutS: 60 }], before: true }), previous_error: 'boom\n', disposition: 'already_done' }),
      row({ answer: 'yes, go ahead', resume_session: 'sess-1' }),
      row({ answer: 'yes', resume_session: null }),
      row({ answer: null, resume_session: 'ignored without an answer' }),
    ];
    for (const r of variants) {
      const t = rowToTask(r);
      expect(taskJson(t)).toBe(JSON.stringify(t));
    }
    core = makeTestCore();
    for (const payload of PAYLOADS) {
      const id = core.tasks.create({ title: 'p', role: 'dev', payload: payload as Record<string, unknown> }, { actor: 't' }).task.id;
      const t = core.tasks.get(id);
      expect(taskJson(t)).toBe(JSON.stringify(t));
    }
  });

  it('is undefined for a Task not built from its row (a copy), which then goes to JSON.stringify whole', () => {
    const t = rowToTask(row({}));
    const copy: Task = { ...t, title: 'changed' };
    expect(taskJson(copy)).toBeUndefined();
    expect(replyJson({ task: copy })).toBe(JSON.stringify({ task: copy }));
  });

  it('a claim and a report+claimNext reply are the bytes JSON.stringify gives', () => {
    core = makeTestCore();
    for (const payload of PAYLOADS) core.tasks.create({ title: 'p', role: 'dev', payload: payload as Record<string, unknown> }, { actor: 't' });
    const inst = onlineInstance(core);
    let held = core.locks.claim({ instanceId: inst });
    const claimResult = { task: held.task, lock: { fence: held.lock!.fence, expiresAt: new Date(held.lock!.expiresAt).toISOString() } };
    expect(okReply(1, claimResult)).toBe(JSON.stringify({ id: 1, ok: true, result: claimResult }));
    // The Task's values are not walked again: no object goes through JSON.stringify.
    const walked = vi.spyOn(JSON, 'stringify');
    okReply(1, claimResult);
    expect(walked.mock.calls.filter(([v]) => typeof v === 'object' && v !== null)).toEqual([]);
    walked.mockRestore();
    for (let i = 1; i < PAYLOADS.length; i++) {
      const reported = core.locks.report({ instanceId: inst, taskId: held.task!.id, fence: held.lock!.fence, status: 'done', output: { i, s: 'ö' } });
      held = core.locks.claim({ instanceId: inst });
      const result = { ...reported, next: { task: held.task, lock: { fence: held.lock!.fence, expiresAt: 'x' } }, skipped: undefined };
      expect(okReply(`req-${i}`, result)).toBe(JSON.stringify({ id: `req-${i}`, ok: true, result }));
    }
    expect(okReply(null, { task: null })).toBe(JSON.stringify({ id: null, ok: true, result: { task: null } }));
    expect(okReply(2, { serverTime: new Date(0) })).toBe(JSON.stringify({ id: 2, ok: true, result: { serverTime: new Date(0) } }));
  });
});
