/**
 * Bulk actions: one operator action (cancel, reprioritise, back to the backlog, unblock) with one
 * reason over many tasks — a list of ids, or every task a filter selects.
 *
 * Invariants:
 * 1. One call changes at most `BULK_CHUNK` tasks in one short transaction; the caller pages a
 *    filter with `after`/`through`. Thousands of tasks are many small transactions, never one
 *    that holds the write lock while agents wait to claim.
 * 2. Each task is changed by the board's own edge in its own savepoint and audited on its own
 *    row (actor, reason, and `bulk`: the id naming every call of this action). A task that
 *    cannot take the action (another status by now, unknown) is skipped with why; it never
 *    fails the chunk.
 * 3. A filter selects only tasks the action applies to (`BULK_APPLIES_TO`) with ids up to
 *    `through` — the board as it was when the operator asked — so newer tasks are never swept in.
 */
import { GafferError } from '../../common/errors';
import { BULK_APPLIES_TO, type BulkTaskResult, type Task, type TaskCount } from '../../common/model';
import { BULK_CHUNK, bulkTaskInput, countTasksInput, type BulkTaskInput } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { CoreContext } from '../context';
import { newId } from '../ids';
import type { Board } from './board';
import type { TaskSearch } from './search-store';

export class BulkTasks {
  constructor(
    private readonly ctx: CoreContext,
    private readonly board: Board,
    private readonly search: TaskSearch,
  ) {}

  /** How many tasks a filter selects now, for the progress bar (and `through` for the calls that follow). */
  count(input: unknown): TaskCount {
    const { filter, action } = parseOrThrow(countTasksInput, input, 'task count');
    const through = this.search.maxId();
    return { ...this.search.count(filter, action ? BULK_APPLIES_TO[action] : undefined, through), through };
  }

  /** One chunk of a bulk action (invariant 1). */
  apply(input: unknown): BulkTaskResult {
    const a = parseOrThrow(bulkTaskInput, input, 'bulk action');
    const bulk = a.bulkId ?? newId('bulk');
    return this.ctx.store.write(() => {
      let ids: number[];
      let next: number | null = null;
      let through: number | null = null;
      if (a.ids) ids = [...new Set(a.ids)];
      else {
        through = a.through ?? this.search.maxId();
        const page = this.search.scan({ filter: a.filter!, statuses: BULK_APPLIES_TO[a.action], order: 'asc', from: a.after ?? 0, through, limit: BULK_CHUNK });
        ids = page.rows.map((r) => r.id);
        next = page.next;
      }
      const changed: number[] = [];
      const skipped: BulkTaskResult['skipped'] = [];
      for (const taskId of ids) {
        try {
          this.ctx.store.write(() => this.one(a, taskId, bulk));
          changed.push(taskId);
        } catch (e) {
          // A storage failure fails the chunk (nothing of it is acknowledged); anything else skips one task.
          if (!(e instanceof GafferError) || e.code === 'unavailable') throw e;
          skipped.push({ taskId, code: e.code, message: e.message });
        }
      }
      return { bulkId: bulk, changed, skipped, next, through };
    });
  }

  private one(a: BulkTaskInput, taskId: number, bulk: string): Task {
    const task = this.board.get(taskId);
    const applies = BULK_APPLIES_TO[a.action];
    if (!applies.includes(task.status)) {
      throw new GafferError('invalid_transition', `task ${taskId} is ${task.status}: ${a.action === 'backlog' ? 'back to the backlog' : a.action} applies to ${applies.join(', ')} tasks`);
    }
    const edge = { taskId, reason: a.reason, actor: a.actor };
    switch (a.action) {
      case 'cancel':
        return this.board.cancel(edge, { bulk });
      case 'reprioritise':
        return this.board.reprioritise({ ...edge, priority: a.priority! }, { bulk });
      case 'backlog':
        return task.status === 'failed' ? this.board.retry(edge, { bulk }) : this.board.unblock(edge, { bulk });
      case 'unblock':
        return this.board.unblock(edge, { bulk });
    }
  }
}
