import { describe, expect, it } from 'vitest';
import type { RoleSummary } from '../../../src-main/common/console-api';
import type { Task } from '../../../src-main/common/model';
import { validatePriority } from '../../lib/priority';
import { actionsFor, blockersOf, columnOf, columnTotals, groupIntoColumns, stuckRole, validateCreateTask, TASK_ACTION_KEYS } from './logic';
import { LIST_KEYMAPS } from '../../lib/list-keys';

let seq = 0;
function task(p: Partial<Task>): Task {
  const id = p.id ?? ++seq;
  return {
    id,
    title: `t${id}`,
    role: 'dev',
    status: 'backlog',
    priority: 0,
    payload: null,
    dependsOn: [],
    attempt: 0,
    previouslyExpired: false,
    fence: 0,
    unmetDependencies: 0,
    note: null,
    output: null,
    createdAt: '2026-11-30T10:00:00.000Z',
    updatedAt: '2026-11-30T10:00:00.000Z',
    lock: null,
    traceId: null,
    ...p,
  };
}

describe('grouping tasks into columns', () => {
  it('splits the backlog into Ready and waiting (P3) and folds failed/cancelled', () => {
    expect(columnOf(task({ status: 'backlog' }))).toBe('ready');
    expect(columnOf(task({ status: 'backlog', unmetDependencies: 2 }))).toBe('backlog');
    expect(columnOf(task({ status: 'in_progress' }))).toBe('in_progress');
    expect(columnOf(task({ status: 'failed' }))).toBe('blocked');
    expect(columnOf(task({ status: 'blocked' }))).toBe('blocked');
    expect(columnOf(task({ status: 'cancelled' }))).toBe('done');
  });

  it('orders Ready by claim order, In progress by lock expiry, Done newest first', () => {
    const a = task({ id: 1, priority: 0 });
    const b = task({ id: 2, priority: 5 });
    const c = task({ id: 3, priority: 5 });
    const p1 = task({ id: 4, status: 'in_progress', lock: { instanceId: 'i', fence: 1, claimedAt: '', expiresAt: '2026-11-30T12:00:00Z' } });
    const p2 = task({ id: 5, status: 'in_progress', lock: { instanceId: 'i', fence: 1, claimedAt: '', expiresAt: '2026-11-30T11:00:00Z' } });
    const d1 = task({ id: 6, status: 'done', updatedAt: '2026-11-30T10:00:00Z' });
    const d2 = task({ id: 7, status: 'done', updatedAt: '2026-11-30T11:00:00Z' });
    const g = groupIntoColumns([a, b, c, p1, p2, d1, d2, a]);
    expect(g.ready.map((t) => t.id)).toEqual([2, 3, 1]);
    expect(g.in_progress.map((t) => t.id)).toEqual([5, 4]);
    expect(g.done.map((t) => t.id)).toEqual([7, 6]);
  });

  it('lists dependency blockers, resolving known tasks', () => {
    const dep1 = task({ id: 10, status: 'done' });
    const dep2 = task({ id: 11, status: 'in_progress' });
    const t = task({ id: 12, dependsOn: [10, 11, 99], unmetDependencies: 2 });
    const known = new Map([dep1, dep2, t].map((x) => [x.id, x]));
    expect(blockersOf(t, known)).toEqual([
      { id: 11, status: 'in_progress', title: 't11' },
      { id: 99, status: null, title: null },
    ]);
    expect(blockersOf(task({ dependsOn: [10], unmetDependencies: 0 }), known)).toEqual([]);
  });

  it('totals come from the role summary', () => {
    const s: RoleSummary = { role: 'dev', ready: 3, waiting: 2, inProgress: 1, blocked: 1, failed: 4, done: 9, onlineInstances: 1, oldestReadyAgeMs: 10 };
    expect(columnTotals(s)).toEqual({ backlog: 2, ready: 3, in_progress: 1, blocked: 5, done: 9 });
    expect(columnTotals(undefined).ready).toBeNull();
  });
});

describe('operator actions', () => {
  it('offers only the edges that apply', () => {
    expect(actionsFor({ status: 'in_progress', lock: null })).toContain('forceRelease');
    expect(actionsFor({ status: 'failed', lock: null })).toEqual(['retry', 'retryWithChanges', 'cancel']);
    expect(actionsFor({ status: 'blocked', lock: null })).toContain('editPayload');
    expect(actionsFor({ status: 'in_progress', lock: null })).not.toContain('editPayload');
    expect(actionsFor({ status: 'blocked', lock: null })).toContain('unblock');
    expect(actionsFor({ status: 'done', lock: null })).toEqual([]);
    expect(actionsFor({ status: 'backlog', lock: null })).not.toContain('forceRelease');
  });

  it('finds the stuck role by oldest ready age', () => {
    const r = (role: string, age: number | null): RoleSummary => ({ role, ready: 1, waiting: 0, inProgress: 0, blocked: 0, failed: 0, done: 0, onlineInstances: 1, oldestReadyAgeMs: age });
    expect(stuckRole([r('a', 10), r('b', 120_000), r('c', 90_000)])?.role).toBe('b');
    expect(stuckRole([r('a', 10)])).toBeNull();
  });
});

describe('task form validation at the field', () => {
  const base = { title: 'Write docs', role: 'dev', priority: '', dependsOn: '', payload: '' };
  it('accepts a minimal task and parses optional fields', () => {
    expect(validateCreateTask(base)).toEqual({ ok: true, value: { title: 'Write docs', role: 'dev' } });
    expect(validateCreateTask({ ...base, priority: '5', dependsOn: '#1, 2 2', payload: '{"a":1}' })).toEqual({
      ok: true,
      value: { title: 'Write docs', role: 'dev', priority: 5, dependsOn: [1, 2], payload: { a: 1 } },
    });
  });
  it('reports each bad field', () => {
    const r = validateCreateTask({ title: ' ', role: 'bad role', priority: '1.5', dependsOn: 'x, 3', payload: '{' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(Object.keys(r.errors).sort()).toEqual(['dependsOn', 'payload', 'priority', 'role', 'title']);
    expect(r.errors.dependsOn).toContain('x');
  });
  it('validates a priority', () => {
    expect(validatePriority('3')).toBeNull();
    expect(validatePriority('-1000001')).toMatch(/Between/);
    expect(validatePriority('')).toMatch(/whole number/);
  });
});

describe('the task letters', () => {
  it('are the ones the Tasks and Role queues lists take and the `?` list names, each for an action the pane offers', () => {
    for (const list of ['tasks', 'queues'] as const) expect(Object.values(TASK_ACTION_KEYS).sort()).toEqual(Object.keys(LIST_KEYMAPS[list]).sort());
    expect(actionsFor({ status: 'failed', lock: null })).toEqual(expect.arrayContaining(['retry', 'cancel']));
    expect(actionsFor({ status: 'blocked', lock: null })).toContain('unblock');
  });
});
