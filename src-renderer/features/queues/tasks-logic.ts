/**
 * Pure logic of the Tasks view: the filter as the address bar carries it, what each bulk action
 * says and does, the progress of a running one, and the summary of what it left alone.
 */
import { BULK_APPLIES_TO, TASK_STATUSES, type BulkTaskAction, type TaskStatus } from '../../../src-main/common/model';
import type { TaskFilter } from '../../../src-main/common/schemas';
import { TASK_STATUS_LABEL } from '../../lib/status';
import type { BulkRun } from '../../store/slices/tasks';

/** `#/tasks?q=billing&role=dev&status=failed` → the filter (unknown statuses and empty fields dropped). */
export function filterFromRoute(query: Record<string, string>): TaskFilter {
  const q = query.q?.trim();
  const status = (TASK_STATUSES as readonly string[]).includes(query.status ?? '') ? (query.status as TaskStatus) : undefined;
  return { ...(q ? { q } : {}), ...(query.role ? { role: query.role } : {}), ...(status ? { status } : {}) };
}

/** The filter as route query (the inverse of `filterFromRoute`). */
export function routeFromFilter(f: TaskFilter): Record<string, string> {
  return { ...(f.q ? { q: f.q } : {}), ...(f.role ? { role: f.role } : {}), ...(f.status ? { status: f.status } : {}) };
}

export const BULK_ACTIONS: BulkTaskAction[] = ['cancel', 'reprioritise', 'backlog', 'unblock'];

export const BULK_META: Record<BulkTaskAction, { label: string; verb: string; doing: string; done: string; danger: boolean; explain: string }> = {
  cancel: {
    label: 'Cancel…',
    verb: 'Cancel tasks',
    doing: 'Cancelling',
    done: 'cancelled',
    danger: true,
    explain: 'Cancelled tasks leave the board for good. A task an agent holds is taken from it: the agent is told to stop, and its later report is refused.',
  },
  reprioritise: { label: 'Reprioritise…', verb: 'Set priority', doing: 'Reprioritising', done: 'reprioritised', danger: false, explain: 'Higher priority is claimed first; equal priorities go oldest first.' },
  backlog: {
    label: 'Back to backlog…',
    verb: 'Move back',
    doing: 'Moving back',
    done: 'moved back to the backlog',
    danger: false,
    explain: 'Failed tasks are retried and blocked ones unblocked: both go back to the backlog, where the next claim is a new attempt.',
  },
  unblock: { label: 'Unblock…', verb: 'Unblock tasks', doing: 'Unblocking', done: 'unblocked', danger: false, explain: 'Blocked tasks go back to the backlog so they can be claimed again.' },
};

/** "backlog, in progress, blocked or failed": the statuses an action changes, in words. */
export function appliesToWords(action: BulkTaskAction): string {
  const words = BULK_APPLIES_TO[action].map((s) => TASK_STATUS_LABEL[s].toLowerCase());
  return words.length === 1 ? words[0]! : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
}

/** How far a bulk action is, as a fraction (null while the total is not known yet). */
export function bulkFraction(b: Pick<BulkRun, 'status' | 'total' | 'changed' | 'skippedCount' | 'chunks'>): number | null {
  if (b.status === 'done') return 1;
  if (b.total <= 0) return b.chunks === 0 ? null : 1;
  return Math.min(1, (b.changed + b.skippedCount) / b.total);
}

/** What the skipped tasks had in common: counts by reason, most frequent first. */
export function skippedReasons(skipped: BulkRun['skipped'], total: number): Array<{ why: string; count: number; ids: number[] }> {
  const by = new Map<string, { why: string; count: number; ids: number[] }>();
  for (const s of skipped) {
    // "task 12 is done: cancel applies to …" → "is done: cancel applies to …", shared by every task in that state.
    const why = s.code === 'not_found' ? 'no such task' : s.message.replace(/^task \d+ /, '');
    const g = by.get(why) ?? { why, count: 0, ids: [] };
    g.count++;
    if (g.ids.length < 10) g.ids.push(s.taskId);
    by.set(why, g);
  }
  const groups = [...by.values()].sort((a, b) => b.count - a.count);
  const shown = groups.reduce((n, g) => n + g.count, 0);
  if (total > shown) groups.push({ why: 'more, not listed', count: total - shown, ids: [] });
  return groups;
}
