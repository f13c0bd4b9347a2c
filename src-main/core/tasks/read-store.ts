/**
 * Read models over the task board's tables (`tasks`, `locks`, `lock_expiries`) for the console
 * and `GET /status`: counts, role summaries, throughput buckets, expired-lock cards, held locks.
 * Statements are prepared once per core. Read-only; "today" and the day bounds are computed by the
 * caller and bound as epoch-ms parameters (SQL never calls a clock).
 */
import type { TaskStatus } from '../../common/model';
import type { Db } from '../db/open';

export interface RoleCountsRow {
  role: string;
  ready: number;
  waiting: number;
  in_progress: number;
  blocked: number;
  failed: number;
  done: number;
  oldest_ready: number | null;
}

export interface ExpiryRow {
  id: number;
  task_id: number;
  title: string;
  role: string;
  instance_id: string;
  holder_name: string | null;
  fence: number;
  reason: string;
  expired_at: number;
  reclaimed_by: string | null;
  reclaimed_name: string | null;
  reclaimed_at: number | null;
}

/** How many local days the throughput buckets cover (params `b0`…`b{DAYS-1}` and `end`). */
export const THROUGHPUT_DAYS = 7;

export type TaskReads = ReturnType<typeof prepareTaskReads>;

export function prepareTaskReads(db: Db) {
  const q = {
    byStatus: db.prepare<[], { status: TaskStatus; n: number }>('SELECT status, count(*) AS n FROM tasks GROUP BY status'),
    locks: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM locks'),
    expiredSince: db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM lock_expiries WHERE expired_at >= ?'),
    roles: db.prepare<[], RoleCountsRow>(
      `SELECT role,
         sum(status = 'backlog' AND unmet_deps = 0) AS ready,
         sum(status = 'backlog' AND unmet_deps > 0) AS waiting,
         sum(status = 'in_progress') AS in_progress,
         sum(status = 'blocked') AS blocked,
         sum(status = 'failed') AS failed,
         sum(status = 'done') AS done,
         min(CASE WHEN status = 'backlog' AND unmet_deps = 0 THEN created_at END) AS oldest_ready
       FROM tasks GROUP BY role`,
    ),
    // One pass over the finished tasks of the window, bucketed by local day (bounds bound as params).
    finishedByDay: db.prepare<Record<string, number>, { status: 'done' | 'failed'; b: number; n: number }>(
      `SELECT status, CASE ${Array.from({ length: THROUGHPUT_DAYS - 1 }, (_, i) => `WHEN updated_at < @b${i + 1} THEN ${i}`).join(' ')}
         ELSE ${THROUGHPUT_DAYS - 1} END AS b, count(*) AS n
       FROM tasks WHERE status IN ('done', 'failed') AND updated_at >= @b0 AND updated_at < @end
       GROUP BY status, b`,
    ),
    expiredByDay: db.prepare<Record<string, number>, { b: number; n: number }>(
      `SELECT CASE ${Array.from({ length: THROUGHPUT_DAYS - 1 }, (_, i) => `WHEN expired_at < @b${i + 1} THEN ${i}`).join(' ')}
         ELSE ${THROUGHPUT_DAYS - 1} END AS b, count(*) AS n
       FROM lock_expiries WHERE expired_at >= @b0 AND expired_at < @end GROUP BY b`,
    ),
    expiredCards: db.prepare<[number, number], ExpiryRow>(
      `SELECT e.id, e.task_id, t.title, t.role, e.instance_id, i.name AS holder_name, e.fence, e.reason, e.expired_at,
              e.reclaimed_by, r.name AS reclaimed_name, e.reclaimed_at
       FROM lock_expiries AS e
       JOIN tasks AS t ON t.id = e.task_id
       LEFT JOIN instances AS i ON i.id = e.instance_id
       LEFT JOIN instances AS r ON r.id = e.reclaimed_by
       WHERE e.expired_at >= ? ORDER BY e.expired_at DESC, e.id DESC LIMIT ?`,
    ),
    held: db.prepare<[], { task_id: number; instance_id: string; expires_at: number; title: string }>(
      `SELECT l.task_id, l.instance_id, l.expires_at, t.title FROM locks AS l JOIN tasks AS t ON t.id = l.task_id ORDER BY l.task_id`,
    ),
    owner: db.prepare<[number], { role: string; title: string }>('SELECT role, title FROM tasks WHERE id = ?'),
  };
  return {
    countsByStatus: () => q.byStatus.all(),
    liveLocks: (): number => q.locks.get()!.n,
    expiredSince: (ms: number): number => q.expiredSince.get(ms)!.n,
    roleCounts: () => q.roles.all(),
    /** `params`: `b0`…`b{THROUGHPUT_DAYS-1}` (each day's start) and `end`. */
    finishedByDay: (params: Record<string, number>) => q.finishedByDay.all(params),
    expiredByDay: (params: Record<string, number>) => q.expiredByDay.all(params),
    expiredCards: (since: number, limit: number) => q.expiredCards.all(since, limit),
    heldLocks: () => q.held.all(),
    /** A task's role and title (who may read its log lines), or undefined. */
    owner: (taskId: number) => q.owner.get(taskId),
  };
}
