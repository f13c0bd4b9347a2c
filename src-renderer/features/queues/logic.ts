/** Pure logic of the role queues: which column a task sits in, in which order, and what blocks it. */
import type { RoleSummary } from '../../../src-main/common/console-api';
import type { Task, TaskStatus } from '../../../src-main/common/model';
import { parseJsonText } from '../../lib/json-text';
import { validatePriority } from '../../lib/priority';
import { roleProblem } from '../../lib/roles';
import type { TaskActionKind } from '../../store/slices/queues';
import { boardStatus, type BoardStatus } from '../../lib/status';

export type ColumnId = 'backlog' | 'ready' | 'in_progress' | 'blocked' | 'done';

export interface ColumnDef {
  id: ColumnId;
  label: string;
  /** Server statuses loaded for this column. */
  statuses: TaskStatus[];
  hint: string;
}

/** Five columns, as the operator reads a board. Failed sits with Blocked (both need a decision), cancelled with Done. */
export const COLUMNS: ColumnDef[] = [
  { id: 'backlog', label: 'Backlog', statuses: ['backlog'], hint: 'Waiting on dependencies — invisible to claimers until every prerequisite is done.' },
  { id: 'ready', label: 'Ready', statuses: ['backlog'], hint: 'Claimable now, by priority then age; an agent works only what it has claimed.' },
  { id: 'in_progress', label: 'In progress', statuses: ['in_progress', 'verifying'], hint: 'Held under a claim lock; released only by the holder’s status report, or when the lock window runs out. A task whose agent said done sits here while Gaffer checks it.' },
  { id: 'blocked', label: 'Blocked · Failed', statuses: ['blocked', 'failed'], hint: 'Needs a decision: unblock, retry or cancel.' },
  { id: 'done', label: 'Done · Cancelled', statuses: ['done', 'cancelled'], hint: 'Finished or cancelled.' },
];

export function columnOf(t: Pick<Task, 'status' | 'unmetDependencies'>): ColumnId {
  const b = boardStatus(t);
  switch (b) {
    case 'backlog':
      return 'backlog';
    case 'ready':
      return 'ready';
    case 'in_progress':
    case 'verifying':
      return 'in_progress';
    case 'blocked':
    case 'failed':
      return 'blocked';
    case 'done':
    case 'cancelled':
      return 'done';
  }
}

/** Claim order (SPEC §2.1): priority first (higher first), then age (older first). */
export function byClaimOrder(a: Task, b: Task): number {
  return b.priority - a.priority || a.id - b.id;
}

/** Locks closest to expiry first: what the operator should watch. */
export function byLockExpiry(a: Task, b: Task): number {
  const ea = a.lock ? Date.parse(a.lock.expiresAt) : Infinity;
  const eb = b.lock ? Date.parse(b.lock.expiresAt) : Infinity;
  return ea - eb || a.id - b.id;
}

const newestFirst = (a: Task, b: Task) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt) || b.id - a.id;

/** Groups loaded tasks into the five columns, each in its reading order. */
export function groupIntoColumns(tasks: Iterable<Task>): Record<ColumnId, Task[]> {
  const out: Record<ColumnId, Task[]> = { backlog: [], ready: [], in_progress: [], blocked: [], done: [] };
  const seen = new Set<number>();
  for (const t of tasks) {
    if (seen.has(t.id)) continue;
    seen.add(t.id);
    out[columnOf(t)].push(t);
  }
  out.backlog.sort(byClaimOrder);
  out.ready.sort(byClaimOrder);
  out.in_progress.sort(byLockExpiry);
  out.blocked.sort(newestFirst);
  out.done.sort(newestFirst);
  return out;
}

/** The totals the server knows for each column (loaded pages may hold fewer). */
export function columnTotals(s: RoleSummary | undefined): Record<ColumnId, number | null> {
  if (!s) return { backlog: null, ready: null, in_progress: null, blocked: null, done: null };
  return { backlog: s.waiting, ready: s.ready, in_progress: s.inProgress, blocked: s.blocked + s.failed, done: s.done };
}

export interface Blocker {
  id: number;
  status: BoardStatus | null;
  title: string | null;
}

/**
 * The dependencies still holding a task back (P3). Known tasks are resolved from `known`;
 * unknown ones are listed by id (their status is fetched on demand in the detail pane).
 */
export function blockersOf(t: Task, known: ReadonlyMap<number, Task>): Blocker[] {
  if (t.dependsOn.length === 0) return [];
  const out: Blocker[] = [];
  for (const id of t.dependsOn) {
    const d = known.get(id);
    if (d && d.status === 'done') continue;
    out.push({ id, status: d ? boardStatus(d) : null, title: d?.title ?? null });
  }
  // If we know only some of them, trust the server's count of unmet dependencies.
  if (t.unmetDependencies === 0) return [];
  return out;
}

/** What the task pane offers: the reason-only edges, and the payload editor (alone, or to retry with changes). */
export type TaskPaneAction = TaskActionKind | 'editPayload' | 'retryWithChanges';

/** Which operator actions apply to a task in its current state (the server re-checks). */
export function actionsFor(t: Pick<Task, 'status' | 'lock'>): TaskPaneAction[] {
  switch (t.status) {
    case 'backlog':
      return ['reprioritise', 'editPayload', 'cancel'];
    case 'in_progress':
      return ['forceRelease', 'reprioritise', 'cancel'];
    case 'verifying':
      return ['cancel'];
    case 'blocked':
      return ['unblock', 'editPayload', 'reprioritise', 'cancel'];
    case 'failed':
      return ['retry', 'retryWithChanges', 'cancel'];
    case 'done':
    case 'cancelled':
      return [];
  }
}

/** The letters that act on the task under the keyboard cursor (lib/list-keys' tasks and queues lists). */
export const TASK_ACTION_KEYS: Partial<Record<TaskPaneAction, string>> = { unblock: 'a', retry: 'r', cancel: 'c' };

export function isPayloadAction(k: TaskPaneAction): k is 'editPayload' | 'retryWithChanges' {
  return k === 'editPayload' || k === 'retryWithChanges';
}

export const ACTION_META: Record<TaskPaneAction, { label: string; verb: string; danger: boolean; explain: string }> = {
  reprioritise: { label: 'Reprioritise', verb: 'Set priority', danger: false, explain: 'Higher priority is claimed first; equal priorities go oldest first.' },
  cancel: { label: 'Cancel', verb: 'Cancel task', danger: true, explain: 'The task leaves the board for good; a holder’s later report is refused.' },
  forceRelease: {
    label: 'Force-release',
    verb: 'Force-release lock',
    danger: true,
    explain: 'Takes the lock from its holder: the task returns to the backlog marked previously expired, and the old holder’s reports are refused.',
  },
  retry: { label: 'Retry', verb: 'Retry task', danger: false, explain: 'Puts the failed task back in the backlog; the next claim is a new attempt.' },
  unblock: { label: 'Unblock', verb: 'Unblock task', danger: false, explain: 'Puts the blocked task back in the backlog so it can be claimed again.' },
  editPayload: { label: 'Edit payload', verb: 'Save payload', danger: false, explain: 'The next agent to claim the task receives the new payload. Only a task nobody holds can be changed.' },
  retryWithChanges: { label: 'Retry with changes', verb: 'Retry with this payload', danger: false, explain: 'Replaces the payload and puts the failed task back in the backlog, in one step: the next claim is a new attempt with the new payload.' },
};

/** The payload editor's text: pretty JSON, or empty for no payload. */
export function payloadText(payload: unknown): string {
  return payload === null || payload === undefined ? '' : JSON.stringify(payload, null, 2);
}

/** The edited text as a payload (empty text: no payload), or the JSON error in words. */
export function parsePayloadText(text: string): { ok: true; payload: unknown } | { ok: false; error: string } {
  const r = parseJsonText(text);
  return r.ok ? { ok: true, payload: r.value === undefined ? null : r.value } : r;
}

/** The role whose queue looks stuck: the oldest claimable task, if it has waited over `thresholdMs`. */
export function stuckRole(roles: RoleSummary[], thresholdMs = 60_000): RoleSummary | null {
  let worst: RoleSummary | null = null;
  for (const r of roles) {
    if (r.oldestReadyAgeMs === null || r.oldestReadyAgeMs < thresholdMs) continue;
    if (!worst || r.oldestReadyAgeMs > (worst.oldestReadyAgeMs ?? 0)) worst = r;
  }
  return worst;
}

/** Parses the task-creation form at the field (messages shown next to each field). */
export interface CreateTaskForm {
  title: string;
  role: string;
  priority: string;
  dependsOn: string;
  payload: string;
}

export type CreateTaskErrors = Partial<Record<keyof CreateTaskForm, string>>;

export function validateCreateTask(f: CreateTaskForm):
  | { ok: true; value: { title: string; role: string; priority?: number; dependsOn?: number[]; payload?: unknown } }
  | { ok: false; errors: CreateTaskErrors } {
  const errors: CreateTaskErrors = {};
  const title = f.title.trim();
  if (!title) errors.title = 'A title is required.';
  else if (title.length > 500) errors.title = `At most 500 characters (now ${title.length}).`;
  const role = f.role.trim();
  if (!role) errors.role = 'A role is required.';
  else if (roleProblem(role)) errors.role = roleProblem(role)!;
  let priority: number | undefined;
  if (f.priority.trim()) {
    const problem = validatePriority(f.priority);
    if (problem) errors.priority = problem;
    else priority = Number(f.priority.trim());
  }
  let dependsOn: number[] | undefined;
  if (f.dependsOn.trim()) {
    const parts = f.dependsOn.split(/[\s,]+/).filter(Boolean);
    const ids = parts.map((p) => Number(p.replace(/^#/, '')));
    const bad = parts.filter((_, i) => !Number.isInteger(ids[i]) || ids[i]! <= 0);
    if (bad.length) errors.dependsOn = `Not a task id: ${bad.slice(0, 3).join(', ')}.`;
    else if (ids.length > 100) errors.dependsOn = 'At most 100 dependencies.';
    else dependsOn = [...new Set(ids)];
  }
  const parsed = parseJsonText(f.payload);
  const payload = parsed.ok ? parsed.value : undefined;
  if (!parsed.ok) errors.payload = parsed.error;
  if (Object.keys(errors).length) return { ok: false, errors };
  return {
    ok: true,
    value: {
      title,
      role,
      ...(priority === undefined ? {} : { priority }),
      ...(dependsOn === undefined ? {} : { dependsOn }),
      ...(payload === undefined ? {} : { payload }),
    },
  };
}
