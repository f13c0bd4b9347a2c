import { describe, expect, it } from 'vitest';
import type { Task } from '../../common/model';
import { rowToTask, type TaskRow } from '../tasks/task-repo';
import { replyJson, taskJson } from './reply-json';

const at = Date.UTC(2026, 11, 6, 8, 0, 0, 7);

function row(over: Partial<TaskRow> = {}): TaskRow {
  return {
    id: 41,
    title: 'bench task 41',
    role: 'dev',
    status: 'in_progress',
    priority: 2,
    payload: '{"n":41,"deep":{"list":[1,"two",null]}}',
    depends_on: '[3,4]',
    trace_id: '0af7651916cd43dd8448eb211c80319c',
    unmet_deps: 0,
    attempt: 1,
    previously_expired: 0,
    fence: 9,
    last_holder: 'inst-1',
    note: null,
    output: null,
    answer: null,
    resume_session: null,
    created_at: at - 61_000,
    updated_at: at,
    verify: null,
    previous_error: null,
    prechecked_attempt: 0,
    disposition: null,
    attempt_started_at: at,
    l_instance: 'inst-1',
    l_fence: 9,
    l_claimed: at,
    l_expires: at + 60_000,
    ...over,
  };
}

/** Tasks as the database gives them: plain, with every optional column, and with strings JSON must escape. */
const tasks: Task[] = [
  rowToTask(row()),
  rowToTask(row({ l_instance: null, l_fence: null, l_claimed: null, l_expires: null, status: 'done', output: '{"ok":true}', note: 'fine' })),
  rowToTask(
    row({
      title: 'quote " backslash \\ newline \n tab \t é 😀 \u2028 lone \ud800 nul \u0000',
      note: '</script> and "quoted"',
      verify: '{"checks":[{"name":"tests","kind":"command","command":"npm test"}]}',
      previous_error: 'verification failed: tests: exited with 1',
      disposition: 'already_done',
      answer: 'yes, go ahead',
      resume_session: 'sess-1',
      previously_expired: 1,
      output: '"just a string"',
    }),
  ),
];

describe('replyJson (the ok reply, its tasks written by hand)', () => {
  it('is JSON.stringify({id, ok, result}) byte for byte for every reply that carries tasks from the database', () => {
    const [held, done, odd] = tasks as [Task, Task, Task];
    const results: unknown[] = [
      { task: held, lock: { fence: 9, expiresAt: '2026-12-06T08:01:00.007Z' } },
      { task: null },
      { task: done, replayed: false },
      { task: odd, replayed: true },
      { task: done, replayed: false, next: { task: held, lock: { fence: 9, expiresAt: '2026-12-06T08:01:00.007Z' } } },
      { task: odd, replayed: false, next: { task: null } },
      { serverTime: '2026-12-06T08:00:00.007Z' },
      {},
      { expiresAt: 'x', extra: [1, { task: held }] },
      { task: held, unknownMember: 1 },
    ];
    for (const id of ['r-1', 7, null, 'quote"d', '😀']) {
      for (const result of results) expect(replyJson(id, result)).toBe(JSON.stringify({ id, ok: true, result }));
    }
  });

  it('writes every key of a task (a new Task field must be added here, then to taskJson)', () => {
    // Required<Task>: a new field of Task fails to typecheck here until it is filled in.
    const full: Required<Task> = {
      ...(tasks[2] as Required<Task>),
      verification: { at: '2026-12-06T08:00:00.000Z', passed: false, attempt: 1, checks: [{ name: 'tests', kind: 'command', passed: false, detail: 'exited with 1', durationMs: 3 }] },
    };
    expect(JSON.parse(taskJson(full))).toEqual(full);
    expect(Object.keys(JSON.parse(taskJson(full))).sort()).toEqual(Object.keys(full).sort());
  });

  it('stays JSON whatever a task object holds', () => {
    const broken = { ...tasks[0], payload: undefined, priority: Number.NaN, title: undefined, output: () => 1 } as unknown as Task;
    const parsed = JSON.parse(replyJson('r', { task: broken, replayed: false }));
    expect(parsed.result.task).toMatchObject({ id: 41, payload: null, priority: null, title: null, output: null });
  });
});
