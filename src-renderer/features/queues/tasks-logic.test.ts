import { describe, expect, it } from 'vitest';
import { appliesToWords, bulkFraction, filterFromRoute, routeFromFilter, skippedReasons } from './tasks-logic';

describe('tasks view logic', () => {
  it('reads the filter from the address bar and writes it back, dropping what the server would refuse', () => {
    expect(filterFromRoute({ q: ' billing ', role: 'dev', status: 'failed' })).toEqual({ q: 'billing', role: 'dev', status: 'failed' });
    expect(filterFromRoute({ q: '  ', status: 'sideways' })).toEqual({});
    expect(routeFromFilter({ q: 'x', status: 'done' })).toEqual({ q: 'x', status: 'done' });
  });

  it('names the statuses an action changes', () => {
    expect(appliesToWords('unblock')).toBe('blocked');
    expect(appliesToWords('backlog')).toBe('blocked or failed');
    expect(appliesToWords('cancel')).toBe('backlog, in progress, checking, blocked or failed');
  });

  it('progress: unknown before the count, a fraction while running, whole when done', () => {
    expect(bulkFraction({ status: 'running', total: 0, changed: 0, skippedCount: 0, chunks: 0 })).toBeNull();
    expect(bulkFraction({ status: 'running', total: 400, changed: 150, skippedCount: 50, chunks: 1 })).toBe(0.5);
    expect(bulkFraction({ status: 'done', total: 400, changed: 390, skippedCount: 0, chunks: 2 })).toBe(1);
  });

  it('groups skipped tasks by why, most frequent first, and counts what was not kept', () => {
    const groups = skippedReasons(
      [
        { taskId: 3, code: 'invalid_transition', message: 'task 3 is done: cancel applies to backlog tasks' },
        { taskId: 4, code: 'not_found', message: 'unknown task 4' },
        { taskId: 5, code: 'invalid_transition', message: 'task 5 is done: cancel applies to backlog tasks' },
      ],
      10,
    );
    expect(groups).toEqual([
      { why: 'is done: cancel applies to backlog tasks', count: 2, ids: [3, 5] },
      { why: 'no such task', count: 1, ids: [4] },
      { why: 'more, not listed', count: 7, ids: [] },
    ]);
  });
});
