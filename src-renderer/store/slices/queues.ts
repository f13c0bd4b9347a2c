/**
 * The queues slice: the role summaries (tabs, dashboard health) and the board of the selected
 * role, one paged column per task status, plus task creation and the operator's task actions.
 *
 * 1. The board belongs to one role at a time: an answer for a role that is no longer selected is
 *    dropped (generation number), so switching roles quickly never shows another role's tasks.
 * 2. Live task changes refresh the board only when they touch the selected role.
 */
import type { RoleSummary } from '../../../src-main/common/console-api';
import { TASK_STATUSES, type Task, type TaskStatus } from '../../../src-main/common/model';
import type { PerAttemptBudget } from '../../../src-main/common/schemas';
import { guarded, toUiError, type UiError } from '../../lib/errors';
import { emptyResource, type Resource } from '../resource';
import { keyCell, resourceLoader, loaderTopic, taskLoader, type Slice, type SliceContext } from '../slice';
import { keepEqual } from '../../lib/keep-equal';

export interface ColumnState {
  items: Task[];
  /** Cursor for the next page (task id), or null when everything is loaded. */
  next: number | null;
  loading: boolean;
  error: UiError | null;
  loadedAt: number | null;
}

export interface QueueState {
  role: string | null;
  columns: Record<TaskStatus, ColumnState>;
}

export interface QueuesState {
  roles: Resource<RoleSummary[]>;
  queue: QueueState;
}

export type TaskActionKind = 'reprioritise' | 'cancel' | 'forceRelease' | 'retry' | 'unblock';

export interface CreateTaskInput {
  title: string;
  role: string;
  priority?: number;
  dependsOn?: number[];
  payload?: unknown;
}

export interface QueuesActions {
  selectRole(role: string | null): void;
  loadMoreTasks(status: TaskStatus): Promise<void>;
  getTask(taskId: number): Promise<Task>;
  createTask(input: CreateTaskInput): Promise<Task>;
  /** `budget`: unblocking or retrying with a new spend cap per attempt (PROTOCOL §14). */
  taskAction(kind: TaskActionKind, taskId: number, reason: string, priority?: number, budget?: PerAttemptBudget): Promise<Task>;
  /** A whole role: its jobs start nothing new and its tasks are not handed out, until resumed or `until`. */
  pauseRole(role: string, reason: string, until: string | null): Promise<void>;
  resumeRole(role: string, reason: string): Promise<void>;
  /** Replaces a task's payload; with `then`, retries (failed) or unblocks (blocked) it in the same step. */
  editTaskPayload(taskId: number, payload: unknown, reason: string, then: 'retry' | 'unblock' | null): Promise<Task>;
}

export const QUEUE_PAGE = 200;
const QUEUE_REFRESH_MAX = 1000;

const emptyColumn = (): ColumnState => ({ items: [], next: null, loading: false, error: null, loadedAt: null });
const emptyColumns = () => Object.fromEntries(TASK_STATUSES.map((s) => [s, emptyColumn()])) as Record<TaskStatus, ColumnState>;

export const initialQueuesState = (): QueuesState => ({ roles: emptyResource(), queue: { role: null, columns: emptyColumns() } });

const DONE_WORDS: Record<TaskActionKind, string> = { reprioritise: 'Reprioritised', cancel: 'Cancelled', forceRelease: 'Force-released', retry: 'Retrying', unblock: 'Unblocked' };

export function createQueuesSlice(ctx: SliceContext<QueuesState>): Slice<QueuesActions> {
  const { get, set, call } = ctx;
  const roles = resourceLoader(ctx, keyCell(ctx, 'roles'), () => call('roles.summary', {}));

  let gen = 0;
  const setColumn = (status: TaskStatus, patch: Partial<ColumnState>) => {
    const q = get().queue;
    set({ queue: { ...q, columns: { ...q.columns, [status]: { ...q.columns[status], ...patch } } } });
  };

  /**
   * Each column's reload in flight (kept here, not in state: a background reload renders nothing). A page
   * asked for meanwhile follows it: started now, the reload's answer would replace the page's rows.
   */
  const reloading = new Map<TaskStatus, Promise<void>>();

  async function loadColumn(status: TaskStatus, mode: 'reload' | 'more'): Promise<void> {
    const inFlight = mode === 'more' ? reloading.get(status) : undefined;
    if (inFlight) {
      await inFlight;
      return loadColumn(status, 'more'); // asked twice meanwhile: the second finds the first loading
    }
    const role = get().queue.role;
    if (!role) return;
    const mine = gen;
    const col = get().queue.columns[status];
    if (mode === 'more' && (col.next === null || col.loading)) return;
    let settled = () => {};
    const reload = new Promise<void>((resolve) => (settled = resolve));
    if (mode === 'reload') reloading.set(status, reload);
    // A loaded column refreshed in the background shows no spinner (every 15 s and on live events):
    // the flag alone re-rendered the board, and the open task pane with it, twice per column.
    const background = mode === 'reload' && col.loadedAt !== null && col.error === null;
    if (!background) setColumn(status, { loading: true });
    const limit = mode === 'reload' ? Math.min(QUEUE_REFRESH_MAX, Math.max(QUEUE_PAGE, col.items.length)) : QUEUE_PAGE;
    try {
      // Finished work is read newest first; live work oldest first (the order agents take it).
      const desc = status === 'done' || status === 'cancelled';
      const cursor = mode === 'more' && col.next !== null ? (desc ? { before: col.next } : { after: col.next }) : {};
      const page = await call('tasks.list', { role, status, limit, ...(desc ? { order: 'desc' as const } : {}), ...cursor });
      if (mine !== gen) return;
      const next = page.next === null ? null : Number(page.next);
      const held = get().queue.columns[status];
      const items = mode === 'more' ? [...held.items, ...page.items] : keepEqual(held.items, page.items);
      // Nothing changed: no new state, so nothing re-renders.
      if (items === held.items && next === held.next && !held.loading && held.error === null) return;
      setColumn(status, { items, next, loading: false, error: null, loadedAt: ctx.now() });
    } catch (e) {
      if (mine !== gen) return;
      setColumn(status, { loading: false, error: toUiError(e) });
    } finally {
      if (reloading.get(status) === reload) reloading.delete(status);
      settled();
    }
  }

  const board = taskLoader(ctx, async () => {
    await Promise.all(TASK_STATUSES.map((s) => loadColumn(s, 'reload')));
  });

  /** After a task changed by hand: its board now, the counts that include it when next due. */
  const touched = () => {
    roles.invalidate();
    ctx.invalidate('dashboard');
  };

  const actions: QueuesActions = {
    selectRole(role) {
      if (get().queue.role === role) return;
      gen++;
      set({ queue: { role, columns: emptyColumns() } });
      if (role) void board.refresh();
    },

    loadMoreTasks: (status) => loadColumn(status, 'more'),

    getTask: (taskId) => call('tasks.get', { taskId }),

    createTask(input) {
      return guarded(ctx.toast, 'create the task', async () => {
        const r = await call('tasks.create', input);
        ctx.toast('success', r.replayed ? `Task #${r.task.id} already existed` : `Created task #${r.task.id}`, r.task.title);
        if (get().queue.role === r.task.role) void board.refresh();
        touched();
        return r.task;
      });
    },

    pauseRole(role, reason, until) {
      return guarded(ctx.toast, `pause role ${role}`, async () => {
        await call('roles.pause', { role, reason, ...(until ? { until } : {}) });
        ctx.toast('warning', `Paused role ${role}`, `Reason: ${reason}`);
        void roles.refresh();
        ctx.invalidate('jobs');
      });
    },
    resumeRole(role, reason) {
      return guarded(ctx.toast, `resume role ${role}`, async () => {
        await call('roles.resume', { role, reason });
        ctx.toast('success', `Resumed role ${role}`, `Reason: ${reason}`);
        void roles.refresh();
        ctx.invalidate('jobs');
      });
    },
    taskAction(kind, taskId, reason, priority, budget) {
      return guarded(ctx.toast, `${kind === 'forceRelease' ? 'force-release' : kind} task #${taskId}`, async () => {
        let task: Task;
        switch (kind) {
          case 'reprioritise':
            task = await call('tasks.reprioritise', { taskId, priority: priority ?? 0, reason });
            break;
          case 'cancel':
            task = await call('tasks.cancel', { taskId, reason });
            break;
          case 'forceRelease':
            task = await call('tasks.forceRelease', { taskId, reason });
            break;
          case 'retry':
            task = await call('tasks.retry', { taskId, reason, ...(budget ? { budget } : {}) });
            break;
          case 'unblock':
            task = await call('tasks.unblock', { taskId, reason, ...(budget ? { budget } : {}) });
            break;
        }
        ctx.toast('success', `${DONE_WORDS[kind]} task #${taskId}`, `Reason: ${reason}`);
        void board.refresh();
        touched();
        if (kind === 'forceRelease') ctx.invalidate('expiredLocks');
        return task;
      });
    },

    editTaskPayload(taskId, payload, reason, then) {
      return guarded(ctx.toast, then ? `${then} task #${taskId} with the new payload` : `change the payload of task #${taskId}`, async () => {
        const task =
          then === 'retry'
            ? await call('tasks.retry', { taskId, reason, payload })
            : then === 'unblock'
              ? await call('tasks.unblock', { taskId, reason, payload })
              : await call('tasks.editPayload', { taskId, payload, reason });
        ctx.toast('success', then === 'retry' ? `Retrying task #${taskId} with changes` : then === 'unblock' ? `Unblocked task #${taskId} with changes` : `Saved the payload of task #${taskId}`, `Reason: ${reason}`);
        void board.refresh();
        touched();
        return task;
      });
    },
  };

  return {
    actions,
    topics: {
      roles: loaderTopic(roles),
      queue: {
        refresh: () => board.refresh(),
        invalidate(inv) {
          const role = get().queue.role;
          if (inv && (!role || !inv.roles.has(role))) return;
          board.invalidate();
        },
      },
    },
    dispose() {
      roles.dispose();
      board.dispose();
    },
  };
}
