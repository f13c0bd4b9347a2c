/**
 * The tasks slice: the Tasks view's list — a server-side search over every task (title, payload
 * text, id; role and status), newest first, paged — and bulk actions over a selection, with
 * their progress.
 *
 * 1. A filter change starts a new generation: pages and counts asked for an older filter are
 *    dropped, so a slow old answer never shows under a newer filter.
 * 2. A page that stopped at the server's scan budget (`partial`) is followed at once by the next,
 *    a few pages at most, so a sparse filter on a big board still fills the first screen.
 * 3. A bulk action runs chunk by chunk (at most `BULK_CHUNK` tasks per call, each one short server
 *    transaction), awaiting each before the next: the console stays responsive, agents keep
 *    claiming between chunks, and "stop" takes effect between two chunks. One runs at a time.
 * 4. Over a filter, the count taken when the action starts fixes `through` (the highest task id
 *    then): tasks created while it runs are not swept in, and the count is the progress bar's total.
 */
import type { BulkTaskAction, BulkTaskResult, Task, TaskCount } from '../../../src-main/common/model';
import { BULK_CHUNK, type TaskFilter } from '../../../src-main/common/schemas';
import { toUiError, type UiError } from '../../lib/errors';
import { taskLoader, type Slice, type SliceContext } from '../slice';

export const TASK_LIST_PAGE = 100;
/** Pages fetched at most in a row to fill a screen when the search stops at its scan budget. */
const MAX_PARTIAL_FOLLOW = 5;
/** Skipped tasks kept for the summary (the count goes on past it). */
const MAX_SKIPPED_KEPT = 200;

export interface TaskListState {
  filter: TaskFilter;
  items: Task[];
  /** Cursor (task id, exclusive, newest first) for the next page; null at the end. */
  next: string | null;
  /** The last page stopped at the scan budget: older matches may follow. */
  partial: boolean;
  loading: boolean;
  error: UiError | null;
  loadedAt: number | null;
  /** How many tasks the filter selects (bounded count), once known. */
  total: TaskCount | null;
  generation: number;
}

/** What a bulk action acts on: the tasks ticked, or every task the filter selects. */
export type BulkSelection = { kind: 'ids'; ids: number[] } | { kind: 'filter'; filter: TaskFilter };

export interface BulkRun {
  action: BulkTaskAction;
  reason: string;
  priority: number | null;
  selection: BulkSelection['kind'];
  /** Tasks the action will look at (ids given, or the filter's count when it began). */
  total: number;
  /** False when the filter's count stopped at its cap (at least `total`). */
  exact: boolean;
  changed: number;
  skippedCount: number;
  skipped: BulkTaskResult['skipped'];
  status: 'running' | 'done' | 'stopped' | 'failed';
  error: UiError | null;
  bulkId: string | null;
  chunks: number;
}

export interface TasksState {
  taskList: TaskListState;
  bulk: BulkRun | null;
}

export interface TasksActions {
  setTaskFilter(filter: TaskFilter): void;
  loadMoreTaskList(): Promise<void>;
  /** Runs a bulk action to the end (or until stopped); resolves with how it went. */
  runBulk(action: BulkTaskAction, selection: BulkSelection, reason: string, priority?: number): Promise<BulkRun>;
  /** Stops the running bulk action after the chunk in flight. */
  stopBulk(): void;
  /** Forgets the last bulk action's summary. */
  clearBulk(): void;
}

const emptyList = (filter: TaskFilter = {}, generation = 0): TaskListState => ({
  filter,
  items: [],
  next: null,
  partial: false,
  loading: false,
  error: null,
  loadedAt: null,
  total: null,
  generation,
});

export const initialTasksState = (): TasksState => ({ taskList: emptyList(), bulk: null });

/** Filters compare by their fields, not identity (an empty text is no text). */
export function sameTaskFilter(a: TaskFilter, b: TaskFilter): boolean {
  return (a.q ?? '') === (b.q ?? '') && (a.role ?? '') === (b.role ?? '') && (a.status ?? '') === (b.status ?? '');
}

/** The filter without empty fields (what the server is sent). */
export function cleanTaskFilter(f: TaskFilter): TaskFilter {
  const q = f.q?.trim();
  return { ...(q ? { q } : {}), ...(f.role ? { role: f.role } : {}), ...(f.status ? { status: f.status } : {}) };
}

export function createTasksSlice(ctx: SliceContext<TasksState>): Slice<TasksActions> {
  const { call } = ctx;
  const list = () => ctx.get().taskList;
  const setList = (patch: Partial<TaskListState>) => ctx.set({ taskList: { ...list(), ...patch } });
  const setBulk = (patch: Partial<BulkRun>) => {
    const b = ctx.get().bulk;
    if (b) ctx.set({ bulk: { ...b, ...patch } });
  };
  let stopAsked = false;

  /** Pages from `before` (exclusive; null: the newest) until `want` matches, the end, or the follow cap. */
  async function fetchPages(gen: number, before: string | null, want: number): Promise<{ items: Task[]; next: string | null; partial: boolean } | null> {
    const filter = list().filter;
    const items: Task[] = [];
    let cursor = before;
    for (let i = 0; ; i++) {
      const page = await call('tasks.list', { ...filter, order: 'desc', limit: Math.min(1000, want - items.length), ...(cursor !== null ? { before: Number(cursor) } : {}) });
      if (gen !== list().generation) return null;
      items.push(...page.items);
      cursor = page.next;
      if (cursor === null || items.length >= want || !page.partial || i + 1 >= MAX_PARTIAL_FOLLOW) return { items, next: cursor, partial: page.partial };
    }
  }

  async function reload(): Promise<void> {
    const gen = list().generation;
    const filter = list().filter;
    setList({ loading: true });
    try {
      const want = Math.min(1000, Math.max(TASK_LIST_PAGE, list().items.length));
      const [page, total] = await Promise.all([fetchPages(gen, null, want), call('tasks.count', { filter })]);
      if (!page || gen !== list().generation) return;
      setList({ items: page.items, next: page.next, partial: page.partial, total, loading: false, error: null, loadedAt: ctx.now() });
    } catch (e) {
      if (gen !== list().generation) return;
      setList({ loading: false, error: toUiError(e) });
    }
  }
  const loader = taskLoader(ctx, reload);

  /** After a bulk action: the list now; boards, counts and the dashboard when next due. */
  const touched = () => {
    void loader.refresh();
    ctx.invalidate('queue');
    ctx.invalidate('roles');
    ctx.invalidate('dashboard');
  };

  /** One call of a bulk action, folded into the run's progress. */
  const fold = (r: BulkTaskResult) => {
    const b = ctx.get().bulk!;
    const room = MAX_SKIPPED_KEPT - b.skipped.length;
    setBulk({
      bulkId: r.bulkId,
      changed: b.changed + r.changed.length,
      skippedCount: b.skippedCount + r.skipped.length,
      skipped: room > 0 ? [...b.skipped, ...r.skipped.slice(0, room)] : b.skipped,
      chunks: b.chunks + 1,
    });
  };

  const actions: TasksActions = {
    setTaskFilter(filter) {
      const f = cleanTaskFilter(filter);
      if (sameTaskFilter(f, list().filter) && list().loadedAt !== null) return;
      ctx.set({ taskList: emptyList(f, list().generation + 1) });
      void loader.refresh();
    },

    async loadMoreTaskList() {
      const l = list();
      if (l.next === null || l.loading) return;
      const gen = l.generation;
      setList({ loading: true });
      try {
        const page = await fetchPages(gen, l.next, TASK_LIST_PAGE);
        if (!page) return;
        const seen = new Set(list().items.map((t) => t.id));
        setList({ items: [...list().items, ...page.items.filter((t) => !seen.has(t.id))], next: page.next, partial: page.partial, loading: false, error: null });
      } catch (e) {
        if (gen !== list().generation) return;
        setList({ loading: false, error: toUiError(e) });
      }
    },

    async runBulk(action, selection, reason, priority) {
      if (ctx.get().bulk?.status === 'running') throw new Error('a bulk action is already running');
      stopAsked = false;
      const base = { action, reason, priority: priority ?? null, selection: selection.kind, changed: 0, skippedCount: 0, skipped: [], status: 'running' as const, error: null, bulkId: null, chunks: 0 };
      const extra = priority === undefined ? {} : { priority };
      try {
        if (selection.kind === 'ids') {
          const ids = [...new Set(selection.ids)];
          ctx.set({ bulk: { ...base, total: ids.length, exact: true } });
          for (let i = 0; i < ids.length && !stopAsked; i += BULK_CHUNK) {
            const bulkId = ctx.get().bulk!.bulkId;
            fold(await call('tasks.bulk', { action, reason, ...extra, ids: ids.slice(i, i + BULK_CHUNK), ...(bulkId ? { bulkId } : {}) }));
          }
        } else {
          const filter = cleanTaskFilter(selection.filter);
          ctx.set({ bulk: { ...base, total: 0, exact: true } });
          const count = await call('tasks.count', { filter, action });
          setBulk({ total: count.count, exact: count.exact });
          let after = 0;
          while (!stopAsked) {
            const bulkId = ctx.get().bulk!.bulkId;
            const r = await call('tasks.bulk', { action, reason, ...extra, filter, after, through: count.through, ...(bulkId ? { bulkId } : {}) });
            fold(r);
            if (r.next === null) break;
            after = r.next;
          }
        }
        setBulk({ status: stopAsked ? 'stopped' : 'done' });
        const b = ctx.get().bulk!;
        ctx.toast(b.status === 'done' ? 'success' : 'warning', `${b.status === 'done' ? 'Done' : 'Stopped'}: ${b.changed} task${b.changed === 1 ? '' : 's'} changed`, b.skippedCount ? `${b.skippedCount} left as they were` : `Reason: ${reason}`);
      } catch (e) {
        const err = toUiError(e);
        setBulk({ status: 'failed', error: err });
        ctx.toast('error', 'The bulk action stopped', err.message, err.code);
      } finally {
        touched();
      }
      return ctx.get().bulk!;
    },

    stopBulk() {
      if (ctx.get().bulk?.status === 'running') stopAsked = true;
    },

    clearBulk() {
      if (ctx.get().bulk?.status !== 'running') ctx.set({ bulk: null });
    },
  };

  return {
    actions,
    topics: { tasks: { refresh: () => loader.refresh(), invalidate: () => loader.invalidate() } },
    dispose() {
      loader.dispose();
    },
  };
}
